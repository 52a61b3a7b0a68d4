"""Running an agent's process: every resource bounded, nothing left behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from memstore.harness.run.isolation.process import read_bounded, run_bounded

ENV = dict(os.environ)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_the_whole_group_is_killed_at_the_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $! > {pids}; sleep 300"
    started = time.monotonic()
    finished = run_bounded(["sh", "-c", script], cwd=tmp_path, env=ENV, timeout=1)
    assert finished.timed_out
    assert finished.returncode == -9
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert not _alive(int(pids.read_text()))  # the background child went with it


def test_a_background_child_holding_the_pipes_does_not_keep_the_session_waiting(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    finished = run_bounded(["sh", "-c", f"sleep 300 & echo $! > {pids}; echo done"], cwd=tmp_path, env=ENV, timeout=60)
    assert (finished.returncode, finished.timed_out, finished.stdout) == (0, False, b"done\n")
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert not _alive(int(pids.read_text()))  # not left orphaned either


def test_a_child_that_leaves_the_group_costs_a_grace_second_not_the_timeout(tmp_path: Path) -> None:
    code = "import os, sys, time\nif os.fork() == 0:\n    os.setsid(); time.sleep(20); sys.exit()\nprint('out')"
    started = time.monotonic()
    finished = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=ENV, timeout=60)
    assert finished.stdout == b"out\n"
    assert time.monotonic() - started < 5


def test_output_is_capped_and_keeps_the_tail(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(40):\n    sys.stdout.write('x' * 1_000_000)\nsys.stdout.write('THE END')"
    finished = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=ENV, timeout=60, output_cap=4096)
    assert finished.stdout_bytes == 40_000_007
    assert len(finished.stdout) == 4096
    assert finished.stdout.endswith(b"THE END")


def test_non_utf8_stderr_reads_as_text(tmp_path: Path) -> None:
    code = "import sys\nsys.stderr.buffer.write(b'bad \\xff\\xfe bytes')\nsys.exit(3)"
    finished = run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=ENV, timeout=60)
    assert finished.returncode == 3
    assert finished.stderr_tail() == "bad \ufffd\ufffd bytes"


def test_a_fifo_result_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_bounded(fifo)


def test_a_symlinked_or_oversized_result_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.json").write_bytes(b"[" * 2000)
    with pytest.raises(OSError, match="more than the 1,000 allowed"):
        read_bounded(tmp_path / "big.json", cap=1000)
    (tmp_path / "link.json").symlink_to("/dev/zero")
    with pytest.raises(OSError, match="Too many levels of symbolic links"):  # O_NOFOLLOW
        read_bounded(tmp_path / "link.json")
    assert read_bounded(tmp_path / "big.json", cap=5000) == b"[" * 2000
