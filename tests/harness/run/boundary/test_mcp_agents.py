"""Agents that reach memory over MCP are measured exactly like agents that use the task file."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from mcp import Client

from memstore.access import Actor
from memstore.agents.stubs import NoMemoryAgent
from memstore.harness.evaluate import evaluate
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.boundary import agents
from memstore.harness.run.boundary.session import AgentSession
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, run
from memstore.model import Memory, Surface
from memstore.testing.mutants import STORE_MUTANTS, StoreMutant, _Wrapper
from tests.harness.conftest import scenario

SCRIPT = '''
"""Keeps memories whose cited files exist and retires the others: through MCP, or the task file."""
import asyncio, json, os, pathlib, sys

task = json.load(open(os.environ["MEMSTORE_TASK"]))
root = pathlib.Path(task["workdir"])


def keep(citations):
    return all((root / c.rsplit(":", 1)[0]).is_file() for c in citations)


async def over_mcp():
    from mcp import Client, StdioServerParameters

    spec = task["mcp"]["mcpServers"]["memstore"]
    async with Client(StdioServerParameters(command=spec["command"], args=spec["args"])) as client:
        found = (await client.call_tool("recent_memories", {"limit": 50})).structured_content["memories"]
        for memory in found:
            if keep(memory["citations"]):
                await client.call_tool("refresh_memory", {"memory_id": memory["id"]})
            else:
                await client.call_tool("retire_memory", {"memory_id": memory["id"], "reason": "a cited file is gone"})
    return []


def from_file():
    ops = []
    for memory in task["memories"]:
        citations = [f"{c['path']}:{c['line']}" for c in memory["citations"]]
        if keep(citations):
            ops.append({"op": "refresh", "id": memory["id"]})
        else:
            ops.append({"op": "retire", "id": memory["id"], "reason": "a cited file is gone"})
    return ops


ops = asyncio.run(over_mcp()) if sys.argv[1] == "mcp" else from_file()
if sys.argv[1:] == ["mcp", "tamper"]:
    import glob, sqlite3, tempfile  # the store is not named anywhere it was given: look for it
    # (its own run's only, made by the process that made its working copy: other tests run beside it)
    maker = next(p for p in os.getcwd().split("/") if p.startswith("memstore-run-")).split("-")[2]
    base = os.getcwd().split("/memstore-run-")[0]  # the scratch base its working copy is in
    for path in glob.glob(f"{base}/memstore-stores-{maker}-*/*/*.db"):
        db = sqlite3.connect(path)
        db.execute("UPDATE memories SET fact = 'rewritten behind the server'")
        db.commit()
json.dump({"memory_ops": ops}, open(os.environ["MEMSTORE_RESULT"], "w"))
'''

UNBOXED = AgentRuntime(sandbox=SandboxMode.OFF)
NAMES = ["api-docs-deleted", "adversarial-memories", "expiry-and-refresh", "other-repo-no-leak"]
COMPARED = ("detection_recall", "false_invalidation_rate", "self_heal_rate", "refresh_rate", "leaks",
            "expiry_violations", "task_success_rate", "stale_use_rate", "agent_error_rate")  # fmt: skip


@pytest.fixture(scope="module")
def agent_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agent") / "agent.py"
    path.write_text(SCRIPT)
    return path


@pytest.mark.ci  # two runs of command agents, one over MCP: .ci/run's `pytest -m ci` step
def test_memory_work_through_mcp_measures_the_same_as_through_the_task_file(agent_script: Path, tmp_path: Path) -> None:
    over_mcp, from_file = (f"command:{sys.executable} {agent_script} {how}" for how in ("mcp", "file"))
    config = RunConfig(
        scenarios=tuple(scenario(n) for n in NAMES),
        arms=(Arm(over_mcp, "sqlite:"), Arm(from_file, "sqlite:")),
        workers=2,
    )
    found = evaluate(config, tmp_path / "run")
    mcp_arm, file_arm = (found.results.arms[Arm(spec, "sqlite:").name] for spec in (over_mcp, from_file))
    assert {m: mcp_arm.overall.get(m) for m in COMPARED} == {m: file_arm.overall.get(m) for m in COMPARED}
    assert mcp_arm.rate("detection_recall") is not None  # the comparison compared something
    events = found.tables["events"]
    mine = events[events.arm == Arm(over_mcp, "sqlite:").name]
    assert (mine.detail == "mcp recent").sum() > 0  # its recalls over MCP were recorded as handed
    assert set(mine.kind) >= {"retrieve", "refresh", "retire"}
    assert "tampered" not in set(mine.kind)  # writes through the server are not tampering


def test_writing_the_store_behind_the_server_is_still_tampering(agent_script: Path) -> None:
    """Without the sandbox (where the store cannot be seen at all), the guard still catches it."""
    spec = f"command:{sys.executable} {agent_script} mcp tamper"
    config = RunConfig(scenarios=(scenario("api-docs-deleted"),), arms=(Arm(spec, "sqlite:"),), runtime=UNBOXED)
    output = run(config, grading=TrialGrading)
    tampered = [e.detail for e in output.events if e.kind == "tampered"]
    assert tampered
    assert tampered[0].startswith("memories changed outside the MCP server: mem_")


def test_a_store_in_memory_offers_no_server(agent_script: Path, tmp_path: Path) -> None:
    spy = tmp_path / "spy.py"
    seen = tmp_path / "mcp.json"
    spy.write_text(
        f"import json, os; json.dump(json.load(open(os.environ['MEMSTORE_TASK']))['mcp'], open({str(seen)!r}, 'w'))\n"
    )
    run(
        RunConfig(
            scenarios=(scenario("api-version-control"),),
            arms=(Arm(f"command:{sys.executable} {spy}", "memory://"),),
            runtime=UNBOXED,  # so the spy can write where the test reads
        ),
        grading=TrialGrading,
    )
    assert seen.read_text() == "null"


class OverMcp(NoMemoryAgent):
    """An in-process agent that does its memory work through the session's MCP server."""

    name = "over-mcp"
    uses_memory = True

    def work(self, session: AgentSession) -> None:
        async def body() -> None:
            async with Client(session.tools.mcp_server()) as client:
                found = (await client.call_tool("recent_memories", {})).structured_content
                assert found is not None
                for memory in found["memories"]:
                    verdict = (await client.call_tool("verify_memory", {"memory_id": memory["id"]})).structured_content
                    assert verdict is not None
                    if verdict["usable"]:
                        await client.call_tool("refresh_memory", {"memory_id": memory["id"]})
                    else:
                        await client.call_tool(
                            "retire_memory", {"memory_id": memory["id"], "reason": verdict["reason"]}
                        )

        anyio.run(body)


def test_an_in_process_agent_uses_the_same_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(agents.AGENTS.registered, "over-mcp", OverMcp)
    output = run(
        RunConfig(scenarios=(scenario("adversarial-memories"),), arms=(Arm("over-mcp", "memory://"),)),
        grading=TrialGrading,
    )
    kinds: dict[str, list[str]] = {}
    for e in output.events:
        kinds.setdefault(e.kind, []).append(e.truth)
    recalled = [e.memory_id for e in output.events if e.kind == "retrieve" and e.detail == "mcp recent"]
    verified = [e.memory_id for e in output.events if e.kind == "verdict"]
    assert verified == recalled  # one verdict per memory it recalled over MCP, recorded as the tools record it
    assert set(kinds["retire"]) == {"contradicted", "unsupported", "missing"}  # it retired what verify refused
    assert set(kinds["refresh"]) == {"valid"}


def test_an_honest_agent_storing_over_a_thousand_memories_is_not_tampering(tmp_path: Path) -> None:
    """The snapshot the guard compares sees every memory, not the newest thousand: the seeded ones
    buried under 1,001 new ones are still there, unchanged."""
    from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, open_store
    from memstore.harness.run.boundary.mcp_bridge import Logged, snapshot, unexplained
    from memstore.model import Citation

    store = open_store(f"sqlite:///{tmp_path / 's.db'}", access=AccessPolicy().grant("ana", "o/r", Access.ADMIN),
                       clock=FakeClock())  # fmt: skip
    ana = Actor("ana")

    def draft(i: int) -> MemoryDraft:
        return MemoryDraft("o/r", Kind.FACT, f"subject {i}", f"fact {i}", [Citation.parse("README.md:1")], "r")

    seeded = [store.store(draft(i), actor=ana, surface=Surface.CODING_AGENT).id for i in range(3)]
    before = snapshot(store, "o/r", ["ana"])
    store.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    made = [store.store(draft(100 + i), actor=ana, surface=Surface.CODING_AGENT).id for i in range(1001)]
    logged = [Logged("store", memory_id, "", ()) for memory_id in made]
    after = snapshot(store, "o/r", ["ana"], before.keys() | set(made))
    assert set(seeded) <= after.keys()
    assert len(after) == 1004
    assert unexplained(before, after, logged) == []
    store.retire(seeded[0], actor=ana, reason="behind the server's back")  # and a real change is still seen
    after = snapshot(store, "o/r", ["ana"], before.keys() | set(made))
    assert unexplained(before, after, logged) == [seeded[0]]


class StoresThenRecalls(NoMemoryAgent):
    """An honest agent: it stores three memories over MCP, then lists what the store has."""

    name = "stores-then-recalls"
    uses_memory = True

    def work(self, session: AgentSession) -> None:
        async def body() -> None:
            async with Client(session.tools.mcp_server()) as client:
                for i in range(3):
                    made = await client.call_tool(
                        "store_memory",
                        {
                            "subject": f"Client SDK constant {i}",
                            "fact": f"The client SDK keeps its API version in constants.ts ({i}).",
                            "citations": ["src/client/sdk/constants.ts:12"],
                        },
                    )
                    assert not made.is_error, made
                await client.call_tool("recent_memories", {"limit": 50})

        anyio.run(body)


class _Ghosts(_Wrapper):
    """After a write, recent() also returns a memory it never stored (a copy under a new id)."""

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        found = super().recent(repo, actor=actor, surface=surface, limit=limit)
        last = list(self._seen.values())[-1:]
        return found + [replace(m, id="mem_never_stored_ghost") for m in last]


def _recalled_breaches(spec: str, store: str) -> tuple[list[tuple[str, str]], list[str]]:
    output = run(
        RunConfig(scenarios=(scenario("adversarial-memories"),), arms=(Arm(spec, store),)), grading=TrialGrading
    )
    breaches = [(e.memory_id, e.detail) for e in output.events if e.kind == "breach"]
    recalled = [e.memory_id for e in output.events if e.kind == "retrieve" and e.detail == "mcp recent"]
    stored = [e.memory_id for e in output.events if e.kind == "store"]
    assert len(stored) == 3 * len(output.sessions)
    assert set(stored) <= set(recalled)  # what it stored came back in its own session's recall
    return breaches, [s.contract.altered_memories for s in output.sessions]


def test_an_honest_agent_recalling_what_it_just_stored_breaks_no_promise(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's recall is audited where it happened among its writes, not before them."""
    monkeypatch.setitem(agents.AGENTS.registered, StoresThenRecalls.name, StoresThenRecalls)
    breaches, altered = _recalled_breaches(StoresThenRecalls.name, "sqlite:")
    assert breaches == []
    assert set(altered) == {0}


def test_a_recalled_memory_that_was_never_stored_is_still_altered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(agents.AGENTS.registered, StoresThenRecalls.name, StoresThenRecalls)
    monkeypatch.setitem(STORE_MUTANTS, "ghosts", StoreMutant("ghosts", "invents a memory", "altered_memories", _Ghosts))
    breaches, altered = _recalled_breaches(StoresThenRecalls.name, "mutant:ghosts:sqlite:")
    assert breaches == [("mem_never_stored_ghost", "altered_memories: a memory that was never stored")]
    assert altered[0] == 1  # in the first session, where only its own recall could have seen it
    assert sum(altered) == 1  # once per memory in a trial
