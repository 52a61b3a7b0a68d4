"""A jit-verify session over memories that cite input nested too deeply to parse: the session goes
on, the memories it cannot check are refused and retired with the reason, the others are judged
as ever (issue 43, item 6). The repository: `tests.deep_code`."""

from __future__ import annotations

from pathlib import Path

from memstore import Access, AccessPolicy, Actor, FakeClock, Surface, open_store
from memstore.agents.stubs import JitVerifyAgent
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.gateway import Gateway
from memstore.harness.run.boundary.session import AgentSession, Limits, TaskView, Tools
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.model import Citation, Kind, MemoryDraft
from memstore.verify import GitCodebase, anchor
from memstore.verify.workspace import Workspace
from tests.deep_code import GOOD, HOSTILE, deep_repository

TOO_DEEP = "too deeply nested to parse (more than 200 levels of syntax)"


def test_jit_verify_keeps_its_session_over_deep_input(tmp_path: Path) -> None:
    store = open_store("memory://", access=AccessPolicy().grant("ana", "acme/api", Access.WRITE), clock=FakeClock())
    with deep_repository(tmp_path / "api") as built:
        head = GitCodebase(built.path)
        memories = {
            shape: store.store(
                MemoryDraft("acme/api", Kind.FACT, subject, fact, [anchor(head, Citation.parse(cite))], "r"),
                actor=Actor("ana"),
                surface=Surface.CLI,
            )
            for shape, (subject, fact, cite) in {"good": GOOD, **HOSTILE}.items()
        }
        gateway = Gateway(Workspace(built.path), store, Actor("ana"), Surface.CLI, "acme/api", None, StoreGuard())
        view = TaskView("timeout", Surface.CLI, "acme/api", "ana", "How long is the timeout?", None,
                        "What is TIMEOUT?", None, str(built.path))  # fmt: skip
        session = AgentSession(view, tuple(memories.values()), Tools(gateway), Limits(60.0), "seed")

        JitVerifyAgent().work(session)  # raised RecursionError: the session was lost

    ids = {memory.id: shape for shape, memory in memories.items()}
    events = [(e.kind, ids.get(e.memory_id, ""), e.detail) for e in gateway.events]
    assert [e for e in events if e[0] == EventKind.VERDICT] == [
        (EventKind.VERDICT, "good", "valid"),
        (EventKind.VERDICT, "expression", "missing"),
        (EventKind.VERDICT, "elif", "missing"),
        (EventKind.VERDICT, "folders", "valid"),
    ]
    assert [e for e in events if e[0] == EventKind.REFUSE] == [
        (EventKind.REFUSE, "expression", f"missing: not checked: expr.py: {TOO_DEEP}"),
        (EventKind.REFUSE, "elif", f"missing: not checked: elif.py: {TOO_DEEP}"),
    ]
    assert [(kind, shape) for kind, shape, _ in events if kind == EventKind.RETIRE] == [
        (EventKind.RETIRE, "expression"),
        (EventKind.RETIRE, "elif"),
    ]
