"""The gateway keeps the working tree a session's memories are anchored on until the tools write."""

from __future__ import annotations

from pathlib import Path

from memstore import Access, AccessPolicy, Actor, FakeClock, Surface, open_store
from memstore.harness.run.boundary.gateway import Gateway
from memstore.harness.run.boundary.session import Tools
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.verify.history import HistoryBuilder
from memstore.verify.workspace import Workspace


def _gateway(tmp_path: Path) -> Gateway:
    builder = HistoryBuilder().write("app.py", b"LIMIT = 3\n")
    builder.commit("app")
    repo = builder.build(tmp_path / "api").path
    store = open_store("memory://", access=AccessPolicy().grant("ana", "acme/api", Access.WRITE), clock=FakeClock())
    return Gateway(Workspace(repo), store, Actor("ana"), Surface.CODING_AGENT, "acme/api", None, StoreGuard())


def test_a_clean_tree_is_its_commit_until_the_tools_write(tmp_path: Path) -> None:
    gateway = _gateway(tmp_path)
    first = gateway.working_tree()
    assert first.commit == gateway.workspace.head("main")
    assert gateway.working_tree() is first  # one git status, not one per stored memory
    assert Tools(gateway).write("app.py", "LIMIT = 4\n")
    after = gateway.working_tree()
    assert after is not first
    assert after.commit is None  # changed: no commit holds this text
    assert after.read("app.py").lines == ("LIMIT = 4",)


def test_a_stored_memory_cites_the_commit_only_while_the_tree_is_clean(tmp_path: Path) -> None:
    gateway = _gateway(tmp_path)
    tools = Tools(gateway)
    before = tools.store_memory("limit", "LIMIT is 3", ["app.py:1"])
    assert tools.write("app.py", "LIMIT = 4\n")
    after = tools.store_memory("limit", "LIMIT is 4", ["app.py:1"])
    assert before is not None
    assert after is not None
    assert before.citations[0].commit == gateway.workspace.head("main")
    assert after.citations[0].commit is None
