"""CommandAgent: a real process gets the task and memories as JSON, edits files, reports back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memstore.harness.runner import Arm
from tests.harness.conftest import run_arms

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
    assert session["merged"] is True  # its edits were committed, checked and merged
    kinds = [(e["kind"], e["detail"]) for e in output.events if e["kind"] != "retrieve"]
    assert ("use", "") in kinds
    assert any(kind == "store" for kind, _ in kinds)
    assert ("agent_error", "retire: not a memory it was given") in kinds


def test_a_failing_command_is_recorded(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit(3)\n")
    output = run_arms(["api-version-moved"], [Arm(f"command:{sys.executable} {script}", "memory://")])
    details = [e["detail"] for e in output.events if e["kind"] == "agent_error"]
    assert details[0].startswith("exit status 3")
    assert details[1].startswith("no readable result")
    assert output.sessions[0]["merged"] is False


def test_the_task_file_is_documented_json(tmp_path: Path) -> None:
    script = tmp_path / "spy.py"
    copy = tmp_path / "task.json"
    script.write_text(f"import os, shutil; shutil.copy(os.environ['MEMSTORE_TASK'], {str(copy)!r})\n")
    run_arms(["api-version-review"], [Arm(f"command:{sys.executable} {script}", "memory://")])
    task = json.loads(copy.read_text())
    assert task["version"] == 1
    assert task["task"]["surface"] == "code_review"
    assert task["task"]["pull_request"] == {
        "branch": "pr-12",
        "base": "main",
        "changed_files": ["src/client/sdk/constants.ts"],
    }
    assert task["repo"] == "acme/api"
    assert [m["subject"] for m in task["memories"]] == ["API version synchronization"]
