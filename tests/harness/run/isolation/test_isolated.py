"""A check command in bubblewrap: bounded as an agent is, with no supervisor process of its own.

bubblewrap's pid namespace does the supervisor's work (its processes cannot leave it and die
with its first one), and ``prlimit`` sets the file size limit the supervisor would have.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from memstore.harness.run.isolation import process
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode, resolve_mode, run_isolated
from memstore.harness.run.isolation.writes import MAX_FILE_BYTES

pytestmark = pytest.mark.skipif(not resolve_mode(SandboxMode.AUTO)[0], reason="bubblewrap cannot run here")

ESCAPER = """
import os, subprocess, sys, time
subprocess.Popen(["setsid", "sleep", sys.argv[2]])  # a session of its own
if os.fork() == 0:  # a daemon: forked twice, its parent gone
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", sys.argv[2]])
    os._exit(0)
time.sleep(0.2)
if sys.argv[1] == "hang":
    time.sleep(300)
"""


def _sleepers(seconds: str) -> set[int]:
    """The pids of this machine's ``sleep SECONDS`` processes (the escaper's, by a length no other test sleeps)."""
    found = set()
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and Path(f"/proc/{name}/cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                found.add(int(name))
        except OSError:
            continue
    return found


def test_a_check_in_bubblewrap_starts_no_supervisor() -> None:
    argv = ["/usr/bin/bwrap", "--", "true"]
    assert process._supervised(argv, 100, pid_namespace=True)[-3:] == argv
    assert process._REAPER[-1] not in process._supervised(argv, 100, pid_namespace=True)
    assert process._REAPER[-1] in process._supervised(argv, 100, pid_namespace=False)


@pytest.mark.parametrize("ending", ["exits", "hang"])
def test_what_a_check_left_running_dies_with_it(tmp_path: Path, ending: str) -> None:
    (tmp_path / "escape.py").write_text(ESCAPER)
    before = _sleepers("313")
    runtime = AgentRuntime(sandbox=SandboxMode.BWRAP)
    started = time.monotonic()
    finished = run_isolated([sys.executable, "escape.py", ending, "313"], workdir=tmp_path, runtime=runtime, timeout=3)
    assert finished.timed_out is (ending == "hang")
    assert time.monotonic() - started < 15
    time.sleep(0.3)
    assert _sleepers("313") - before == set()


def test_the_same_escaper_outside_a_namespace_leaves_them_running(tmp_path: Path) -> None:
    """The control: told (wrongly) that a plain program has a namespace, nothing kills what it left."""
    (tmp_path / "escape.py").write_text(ESCAPER)
    before = _sleepers("317")
    argv = [sys.executable, "escape.py", "exits", "317"]
    process.run_bounded(argv, cwd=tmp_path, env={}, timeout=10, pid_namespace=True)
    time.sleep(0.3)
    left = _sleepers("317") - before
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert len(left) == 2


def test_a_check_cannot_write_a_file_past_the_limit(tmp_path: Path) -> None:
    code = "import os\nfd = os.open('big', os.O_WRONLY | os.O_CREAT)\nwhile True:\n    os.write(fd, b'x' * 65536)"
    runtime = AgentRuntime(sandbox=SandboxMode.BWRAP)
    finished = run_isolated([sys.executable, "-c", code], workdir=tmp_path, runtime=runtime, timeout=30)
    assert (finished.returncode, finished.timed_out) == (1, False)
    assert (tmp_path / "big").stat().st_size <= MAX_FILE_BYTES
