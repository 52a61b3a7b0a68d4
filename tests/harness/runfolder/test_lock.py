"""One process at a time in a run folder: a second eval, a resume or a merge beside a running
eval is refused at once, in one line, exit status 2; the running eval finishes as if alone.
Every process here is a real ``memstore`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
SCENARIO = str(ROOT / "scenarios" / "api-version-control.yaml")
# A command agent that waits until the test lets it go (a minute at most): the eval that runs it
# holds its folder until then.
SLOW = """
import json, os, pathlib, sys, time
for _ in range(600):
    if pathlib.Path(sys.argv[1]).exists():
        break
    time.sleep(0.1)
json.dump({"memory_ops": []}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def _memstore(*args: str) -> list[str]:
    return [sys.executable, "-m", "memstore", *args]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_memstore(*args), capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.slow
def test_a_running_eval_holds_its_folder_against_a_second_eval_a_resume_and_a_merge(tmp_path: Path) -> None:
    agent = tmp_path / "slow.py"
    agent.write_text(SLOW)
    out = tmp_path / "run"
    go = tmp_path / "go"
    spec = f"command:{sys.executable} {agent} {go}"
    first = subprocess.Popen(
        _memstore("eval", SCENARIO, "--agent", spec, "--agent-sandbox", "off", "--out", str(out), "--no-fail"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / "manifest.json").exists():  # the run has started its first session
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        refused = {
            "eval": _run("eval", SCENARIO, "--agent", spec, "--agent-sandbox", "off", "--out", str(out)),
            "resume": _run("eval", "--resume", str(out)),
            "merge": _run("merge", str(out), "--out", str(tmp_path / "merged")),
        }
        assert first.poll() is None  # each was refused while the first still ran
    finally:
        go.touch()
        stdout, stderr = first.communicate(timeout=120)
    said = f"Error: the run folder {out} is in use by another memstore process (pid {first.pid}): wait for it to end"
    for what, done in refused.items():
        assert (what, done.returncode, done.stderr.splitlines()) == (what, 2, [f"{said}, or use another folder"])
    assert not (tmp_path / "merged").exists()
    assert first.returncode == 0, stdout + stderr
    assert json.loads((out / "results.json").read_text())["run"]["scenarios"] == ["api-version-control"]
    assert _run("eval", "--resume", str(out), "--no-fail").returncode == 0  # and then the folder is free


def test_a_folder_left_by_a_killed_eval_is_not_locked(tmp_path: Path) -> None:
    """The lock goes with its process: a run killed mid-way leaves the file, unlocked."""
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from memstore.harness.runfolder.lock import hold; "
         "held = hold(Path(sys.argv[1])); held.__enter__(); print('held', flush=True); time.sleep(60)", str(out)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    busy = _run("eval", SCENARIO, "--agent", "no-memory", "--out", str(out))
    assert (busy.returncode, "is in use by another memstore process" in busy.stderr) == (2, True), busy.stderr
    holder.kill()
    holder.wait()
    assert sorted(os.listdir(out)) == [".memstore.lock"]
    done = _run("eval", SCENARIO, "--agent", "no-memory", "--out", str(out), "--no-fail")
    assert done.returncode == 0, done.stderr
    assert (out / "results.json").is_file()
