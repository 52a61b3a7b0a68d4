"""A check command's verdict is kept by every byte it ran on, and only when its run changed none
of them: the same files are not checked twice, other files are, and a run that wrote anything
(the agent's code planting something) runs, and is seen, again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memstore.harness.grading import merge_checks
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode
from memstore.verify.workspace import Workspace

UNBOXED = AgentRuntime(sandbox=SandboxMode.OFF)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "-C", str(root), "init", "-q", "--initial-branch=main"], check=True)
    (root / "app.py").write_text("LIMIT = 1\n")
    return Workspace(root)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every time a check command really runs, the work tree it ran in."""
    monkeypatch.setattr(merge_checks, "_VERDICTS", {})
    ran: list[Path] = []
    real = merge_checks._run_fails

    def counted(workspace: Workspace, argv: list[str], runtime: AgentRuntime) -> bool:
        ran.append(workspace.path)
        return real(workspace, argv, runtime)

    monkeypatch.setattr(merge_checks, "_run_fails", counted)
    return ran


PASSES = ("{python}", "-c", "import sys; sys.exit(open('app.py').read() != 'LIMIT = 1\\n')")


def test_the_same_files_get_the_verdict_they_got(workspace: Workspace, runs: list[Path]) -> None:
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is False
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is False
    assert len(runs) == 1
    (workspace.path / "app.py").write_text("LIMIT = 2\n")
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is True  # other bytes: run again
    (workspace.path / "app.py").write_text("LIMIT = 1\n")
    (workspace.path / "notes.txt").write_text("a file the check does not read\n")
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is False
    assert len(runs) == 3  # a file more is another tree
    (workspace.path / "app.py").chmod(0o755)
    merge_checks._command_fails(workspace, PASSES, UNBOXED)
    assert len(runs) == 4  # so is a mode


def test_another_command_or_isolation_is_another_verdict(workspace: Workspace, runs: list[Path]) -> None:
    merge_checks._command_fails(workspace, PASSES, UNBOXED)
    merge_checks._command_fails(workspace, ("{python}", "-c", "pass"), UNBOXED)
    merge_checks._command_fails(workspace, PASSES, AgentRuntime(sandbox=SandboxMode.AUTO))
    assert len(runs) == 3


def test_a_run_that_writes_is_never_kept(workspace: Workspace, runs: list[Path]) -> None:
    """The agent's code plants a file when the check imports it: every trial must see it happen."""
    plants = (sys.executable, "-c", "open('planted', 'w').write('x')")
    for _ in range(2):
        assert merge_checks._command_fails(workspace, plants, UNBOXED) is False
        assert (workspace.path / "planted").exists()
        (workspace.path / "planted").unlink()
    assert len(runs) == 2
    config = workspace.path / ".git" / "config"
    writes_config = (sys.executable, "-c", "open('.git/config', 'a').write('[core]\\n')")
    merge_checks._command_fails(workspace, writes_config, UNBOXED)
    merge_checks._command_fails(workspace, writes_config, UNBOXED)
    assert len(runs) == 4
    assert config.read_text().count("[core]") >= 3


def test_a_file_rewritten_behind_its_old_times_is_hashed_again(workspace: Workspace, runs: list[Path]) -> None:
    """A file's digest is kept by its status; a rewrite of the same size whose modification time
    is put back still moves its change time, so the next digest reads it again."""
    import os
    import time

    app = workspace.path / "app.py"
    past = time.time_ns() - 60 * 10**9
    os.utime(app, ns=(past, past))
    time.sleep(0.06)  # older than the racy window: its digest is kept
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is False
    before = app.stat()
    app.write_text("LIMIT = 9\n")  # the same size
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert merge_checks._command_fails(workspace, PASSES, UNBOXED) is True
    assert len(runs) == 2
