"""CommandAgent: a real process gets the task and memories as JSON, edits files, reports back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memstore.harness.run.runner.pool import Arm
from tests.harness.conftest import UNBOXED, run_arms

SCRIPT = """
import json, os, pathlib
task = json.load(open(os.environ["MEMSTORE_TASK"]))
ops, answer = [], None
for memory in task["memories"]:
    ops.append({"op": "use", "id": memory["id"]})
    for cited in memory["citations"]:   # bump the version in every file a memory cites
        path = pathlib.Path(task["workdir"], cited["path"])
        if path.exists():
            path.write_text(path.read_text().replace("v2.1.4", "v2.2.0"))
ops.append({"op": "store", "subject": "Where the version lives", "fact": "The SDK constant API_VERSION holds it.",
            "citations": ["src/client/sdk/constants.ts:14"], "reason": "seen while bumping"})
ops.append({"op": "retire", "id": "mem_not_given", "reason": "x"})
json.dump({"memory_ops": ops, "answer": "done"}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def test_a_scripted_agent_runs_end_to_end(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    output = run_arms(["api-version-moved"], [Arm(f"command:{sys.executable} {script}", "memory://")])
    (session,) = output.sessions
    assert session.outcome.merged is True  # its edits were committed, checked and merged
    kinds = [(e.kind, e.detail) for e in output.events if e.kind != "retrieve"]
    assert ("use", "") in kinds
    assert any(kind == "store" for kind, _ in kinds)
    assert ("agent_error", "retire: not a memory it was given") in kinds


def test_a_failing_command_is_recorded(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit(3)\n")
    output = run_arms(["api-version-moved"], [Arm(f"command:{sys.executable} {script}", "memory://")])
    details = [e.detail for e in output.events if e.kind == "agent_error"]
    assert len(details) == 1  # the failed exit is the cause; the missing result is not a second one
    assert details[0].startswith("exit status 3")
    assert output.sessions[0].outcome.merged is False


def test_the_task_file_is_documented_json(tmp_path: Path) -> None:
    script = tmp_path / "spy.py"
    copy = tmp_path / "task.json"
    script.write_text(f"import os, shutil; shutil.copy(os.environ['MEMSTORE_TASK'], {str(copy)!r})\n")
    run_arms(["api-version-review"], [Arm(f"command:{sys.executable} {script}", "memory://")], runtime=UNBOXED)
    task = json.loads(copy.read_text())
    assert task["schema_version"] == 1
    assert task["task"]["surface"] == "code_review"
    pull_request = task["task"]["pull_request"]
    assert {k: pull_request[k] for k in ("branch", "base", "changed_files")} == {
        "branch": "pr-12",
        "base": "main",
        "changed_files": ["src/client/sdk/constants.ts"],
    }
    assert pull_request["title"] == "Bump the SDK to v2.2.0"
    assert pull_request["diff"].startswith("diff --git a/src/client/sdk/constants.ts b/src/client/sdk/constants.ts")
    assert task["repo"] == "acme/api"
    assert [m["subject"] for m in task["memories"]] == ["API version synchronization"]
    # what a real ticket carries, and nothing of the grading data
    assert set(task["task"]) == {"key", "surface", "prompt", "intent", "question", "pull_request"}
    assert set(task) == {"schema_version", "task", "repo", "user", "workdir", "timeout_seconds", "memories", "mcp"}
    assert task["mcp"] is None  # a store in memory cannot be shared with a server process
    text = copy.read_text()
    for graded in ("findings", "expected", "check", "truth", "origin", "answer"):
        assert f'"{graded}' not in text


EDITS_DIRECTLY = """
import json, os, pathlib, re
task = json.load(open(os.environ["MEMSTORE_TASK"]))
root = pathlib.Path(task["workdir"])
intent = task["task"]["intent"] or {}
ops = [{"op": "refresh", "id": memory["id"]} for memory in task["memories"]]
if intent.get("action") == "set":  # bump every place the version is kept, editing the files directly
    old = re.search(r'API_VERSION = "(v[0-9.]+)"', (root / "src/client/sdk/constants.ts").read_text()).group(1)
    for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
        file = root / path
        file.write_text(file.read_text().replace(old, intent["value"]))
json.dump({"memory_ops": ops}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def test_labels_lapse_from_the_merged_commits_for_a_command_agent_too(tmp_path: Path) -> None:
    """expiry-and-refresh: the first task's merge changes what the memory cites, so its label
    lapses and the second session's refusal is no false invalidation, whoever made the change."""
    script = tmp_path / "direct.py"
    script.write_text(EDITS_DIRECTLY)
    output = run_arms(
        ["expiry-and-refresh"], [Arm(f"command:{sys.executable} {script}", "memory://"), Arm("jit-verify", "memory://")]
    )
    merged = {(s.agent[:7], s.task): s.outcome.merged for s in output.sessions}
    assert merged == {
        ("command", "bump-patch"): True,
        ("command", "bump-minor"): True,
        ("jit-ver", "bump-patch"): True,
        ("jit-ver", "bump-minor"): True,
    }
    handed_later = {(e.agent[:7], e.truth) for e in output.events if e.kind == "retrieve" and e.task == "bump-minor"}
    assert handed_later == {("command", "lapsed"), ("jit-ver", "lapsed")}
