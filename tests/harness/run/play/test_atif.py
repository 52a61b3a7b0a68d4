"""ATIF trajectories: beside every session transcript a run keeps, ``trajectory.json`` (ATIF v1.7),
its memory tool calls with their arguments and results, valid by the Trajectory model the
``harbor`` package ships (in Harbor's own environment: tests/harbor_env.py); none where no
transcript is kept; the same bytes for the same seed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstore import AccessPolicy, UlidIds, open_store
from memstore.access import Access, Actor
from memstore.clock import FakeClock
from memstore.harness.evaluate import evaluate
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.gateway import Event, Recall, Usage
from memstore.harness.run.boundary.session import TaskView
from memstore.harness.run.output import Arm
from memstore.harness.run.play.atif import trajectory
from memstore.harness.run.runner.pool import RunConfig
from memstore.model import Citation, Kind, Memory, MemoryDraft, Surface
from memstore.testing.scripted_model import ScriptedModel, serve
from tests.harbor_env import run_harbor
from tests.harness.conftest import scenario

ROOT = Path(__file__).parents[4]
VALIDATE = """
import json, sys
from harbor.models.trajectories import Trajectory

found = {}
for path in sys.argv[1:]:
    document = Trajectory.model_validate(json.load(open(path)))
    found[path] = {
        "version": document.schema_version,
        "calls": [c.function_name for s in document.steps for c in (s.tool_calls or [])],
        "sources": [s.source for s in document.steps],
    }
print(json.dumps(found))
"""

# A command agent that uses the memory it is handed, stores one, and makes the change.
AGENT = r"""
import json, os, pathlib
task = json.load(open(os.environ["MEMSTORE_TASK"]))
root = pathlib.Path(task["workdir"])
ops = [{"op": "use", "id": m["id"]} for m in task["memories"]]
ops.append({"op": "store", "subject": "Where the version is kept", "fact": "The SDK keeps the API version.",
            "citations": ["src/client/sdk/constants.ts:1"], "reason": "bumped it"})
for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
    (root / path).write_text((root / path).read_text().replace("v2.1.4", "v2.2.0"))
json.dump({"schema_version": 1, "memory_ops": ops}, open(os.environ["MEMSTORE_RESULT"], "w"))
print("done")
"""


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModel]:
    model = ScriptedModel.from_file(ROOT / "tests" / "agents" / "scripts" / "bump-version.json")
    with serve(model) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "scripted")
        yield model


def _run(out: Path, agent: Path) -> list[Path]:
    arms = (Arm("llm:scripted"), Arm(f"command:{sys.executable} {agent}"), Arm("trusting"))
    config = RunConfig(scenarios=(scenario("api-version-moved"),), arms=arms)
    evaluate(config, out)
    return sorted((out / "transcripts").rglob("trajectory.json"))


def test_every_kept_transcript_gets_a_valid_atif_trajectory_with_its_memory_calls(
    endpoint: ScriptedModel, tmp_path: Path
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    found = _run(tmp_path / "run", agent)
    assert len(found) == 2  # the llm agent's session and the command agent's
    kept = {p.parent for p in (tmp_path / "run" / "transcripts").rglob("session.json")}
    assert {p.parent for p in found} == kept  # one beside every kept transcript; the stub keeps none
    checked = run_harbor(VALIDATE, *map(str, found))
    assert {c["version"] for c in checked.values()} == {"ATIF-v1.7"}
    documents = {p: json.loads(p.read_text()) for p in found}
    llm = next(p for p, d in documents.items() if d["extra"]["memstore"]["source"] == "conversation")
    command = next(p for p, d in documents.items() if d["extra"]["memstore"]["source"] == "events")
    assert {"recent_memories", "verify_memory", "store_memory", "refresh_memory"} <= set(checked[str(llm)]["calls"])
    assert checked[str(command)]["calls"] == ["use_memory", "store_memory"]
    assert checked[str(command)]["sources"] == ["system", "user", "agent", "agent", "system"]  # handed ... merged
    store = documents[command]["steps"][3]
    assert store["tool_calls"][0]["arguments"] == {
        "subject": "Where the version is kept",
        "fact": "The SDK keeps the API version.",
        "citations": ["src/client/sdk/constants.ts:1"],
        "reason": "bumped it",
        "kind": "fact",
    }
    assert store["observation"]["results"][0]["content"].startswith("stored mem_")
    handed = documents[command]["steps"][0]["observation"]["results"]
    assert [json.loads(r["content"])["subject"] for r in handed] == ["API version synchronization"]
    assert documents[llm]["final_metrics"]["total_prompt_tokens"] > 0
    assert documents[llm]["agent"]["model_name"] == "scripted"
    assert set(json.loads(handed[0]["content"])) == set(Memory.to_dict(_memories(1)[0]))  # a memory, no label
    graded = {EventKind.MISLED.value, EventKind.PLANTED.value, EventKind.BREACH.value}
    said = [s["message"].split(":")[0] for d in documents.values() for s in d["steps"] if s["source"] == "system"]
    assert graded.isdisjoint(said)  # what the grading adds is never the session's own


def test_the_same_seed_gives_the_same_trajectories(endpoint: ScriptedModel, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    one, other = _run(tmp_path / "one", agent), _run(tmp_path / "other", agent)
    assert [p.relative_to(tmp_path / "one") for p in one] == [p.relative_to(tmp_path / "other") for p in other]
    assert [p.read_bytes() for p in one] == [p.read_bytes() for p in other]


def _memories(count: int) -> list[Memory]:
    access = AccessPolicy().grant("ana", "acme/api", Access.ADMIN)
    store = open_store("memory:", access=access, clock=FakeClock(datetime(2026, 2, 2, tzinfo=UTC)), ids=UlidIds(1))
    draft = MemoryDraft("acme/api", Kind.FACT, "API version", "v2.1.4 everywhere", [Citation.parse("a.py:1")], "why")
    return [store.store(draft, actor=Actor("ana"), surface=Surface.CODING_AGENT) for _ in range(count)]


def test_events_become_tool_calls_and_a_recall_is_one_call_whatever_it_returned() -> None:
    first, second, third = _memories(3)
    view = TaskView("ask", Surface.CLI, "acme/api", "ana", "Which version?", None, "Which version?", None, "/repo")
    events = [
        Event(EventKind.RETRIEVE, second.id, "mcp search"),
        Event(EventKind.RETRIEVE, third.id, "mcp search"),
        Event(EventKind.VERDICT, second.id, "contradicted"),
        Event(EventKind.VOTE, second.id, "down: it misled"),
        Event(EventKind.DENIED, third.id, "retire: ana may not"),
        Event(EventKind.ANSWER, "", "v2.2.0"),
        Event(EventKind.MERGE, "", "abc123"),
    ]
    recalls = [Recall(0, (second, third)), Recall(6, ())]
    made = trajectory(
        view, [first], events, recalls=recalls, usage=Usage(10, 5, 0, 0.5, "m"), agent="mine",
        session_id="arm/s/trial-0/ask", started=datetime(2026, 2, 2, 9, tzinfo=UTC),
    )  # fmt: skip
    steps = made["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, 10))
    calls = [(s["tool_calls"][0]["function_name"], s["tool_calls"][0]["arguments"]) for s in steps if "tool_calls" in s]
    assert calls == [
        ("search_memories", {}),
        ("verify_memory", {"memory_id": second.id}),
        ("vote_memory", {"memory_id": second.id, "up": False, "reason": "it misled"}),
        ("retire_memory", {"memory_id": third.id}),
        ("answer", {"text": "v2.2.0"}),
        ("recall_memories", {}),
    ]
    recalled = steps[2]["observation"]["results"]
    assert [r["extra"]["memory_id"] for r in recalled] == [second.id, third.id]
    assert steps[5]["observation"]["results"][0]["content"] == "denied: ana may not"
    assert steps[7]["observation"]["results"][0]["content"] == "(nothing)"  # the empty recall, after the answer
    assert steps[-1] == {"source": "system", "message": "merge: abc123", "step_id": 9}  # the harness's, last
    assert made["final_metrics"]["total_steps"] == 9
    checked = run_harbor(VALIDATE.replace("json.load(open(path))", "json.loads(path)"), json.dumps(made))
    assert next(iter(checked.values()))["version"] == "ATIF-v1.7"
