"""The runner's pool: workers forked by one fork server, each with the run's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from memstore.harness.run.runner import pool


def _probe(name: str) -> tuple[str | None, int, str]:
    """What a worker sees: a variable, its parent process, its folder."""
    return os.environ.get(name), os.getppid(), os.getcwd()


def _workers(environ: dict[str, str]) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        1,
        mp_context=pool._context(),
        initializer=pool._start_worker,
        initargs=(os.getpid(), ({}, {}), [], None, environ),
    )


def test_workers_are_forked_by_one_server_and_see_the_runs_environment_of_now(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert pool._context().get_start_method() == "forkserver"  # (this test process has a short $TMPDIR)
    with _workers(dict(os.environ)) as first:
        _, server, _ = first.submit(_probe, "MEMSTORE_POOL_PROBE").result()
    assert server != os.getpid()  # a child of the fork server, not of this process
    monkeypatch.setenv("MEMSTORE_POOL_PROBE", "set after the server started")
    monkeypatch.chdir(tmp_path)
    with _workers(dict(os.environ)) as second:
        seen, again, where = second.submit(_probe, "MEMSTORE_POOL_PROBE").result()
    assert (seen, again, where) == ("set after the server started", server, str(tmp_path))


def test_a_variable_the_run_does_not_have_is_gone_in_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_POOL_GONE", "1")
    with _workers(dict(os.environ)) as warm:
        assert warm.submit(_probe, "MEMSTORE_POOL_GONE").result()[0] == "1"
    monkeypatch.delenv("MEMSTORE_POOL_GONE")
    with _workers(dict(os.environ)) as cold:
        assert cold.submit(_probe, "MEMSTORE_POOL_GONE").result()[0] is None


def test_a_deep_temporary_folder_still_gives_the_fork_server_a_socket(tmp_path: Path) -> None:
    """A socket's path has 108 bytes: under a deep $TMPDIR the server's goes to /tmp, and a run
    with two workers runs (it failed with "AF_UNIX path too long" before)."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    code = (
        "import tempfile; from memstore.harness.run.runner import pool;"
        "ctx = pool._context(); from multiprocessing import util;"
        "print(ctx.get_start_method(), util.get_temp_dir().startswith(tempfile.gettempdir()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(deep)}, capture_output=True, check=True
    )
    assert done.stdout.decode().split() == ["forkserver", "False"]
