"""Killing a run: its workers and agents die with it, and its scratch space does not outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstore.harness.run.isolation.scratch import clean_stale

LIBRARY = Path(__file__).resolve().parents[4] / "scenarios"
pytestmark = pytest.mark.slow


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc), found while they are alive."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][0] != "Z"


def _start(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    private = tmp_path / "tmp"
    private.mkdir()
    env = {**os.environ, "TMPDIR": str(private), "MEMSTORE_SCRATCH": str(private)}
    code = "from memstore.cli import main; main()"
    run = subprocess.Popen(
        [sys.executable, "-c", code, "eval", str(LIBRARY / "api-version-moved.yaml"),
         str(LIBRARY / "api-version-control.yaml"), "--agent", "command:sleep 60", "--workers", "2",
         "--out", str(tmp_path / "run")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until both workers run an agent
        below = _descendants(run.pid)
        if sum(_program(p).endswith(b"/sleep") for p in below) >= 2:
            return run, private
        time.sleep(0.2)
    run.kill()
    pytest.fail("the run never started its agents")


def _program(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return {p for p in pids if _alive(p)}


def test_sigkill_of_the_run_takes_its_workers_and_agents_and_the_next_run_cleans_up(tmp_path: Path) -> None:
    run, private = _start(tmp_path)
    below = _descendants(run.pid)
    assert len(below) >= 4  # two workers, two agents (and multiprocessing's resource tracker)
    run.kill()
    run.wait()
    assert _gone_within(below, 10) == set()
    left = sorted(p.name.split("-")[1] for p in private.iterdir() if p.name.startswith("memstore-"))
    assert left  # the killed processes could not clean up after themselves...
    removed = clean_stale(private)  # ... and the next run does
    assert len(removed) == len(left)
    assert [p for p in private.iterdir() if p.name.startswith("memstore-")] == []


def test_sigterm_stops_the_run_cleanly(tmp_path: Path) -> None:
    run, private = _start(tmp_path)
    below = _descendants(run.pid)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=30) == 130
    assert _gone_within(below, 10) == set()
    assert [p for p in private.iterdir() if p.name.startswith("memstore-")] == []
    assert not (tmp_path / "run" / "results.json").exists()
