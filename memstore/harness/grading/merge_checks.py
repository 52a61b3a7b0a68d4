"""The merge check: whether a coding session's change may merge.

A task's check (grading data) is run by the harness after the agent's session, on the change
it committed: values that must be equal across files, texts that must (not) be there, files
that must not change, and a command that must pass (a real test suite, where the fixture's
toolchain runs here). The scenario's patterns run under a time limit (the `regex` package's
``timeout``). The command runs the agent's code (a test suite imports the modules it edited), so
it runs as the agent did (`memstore.harness.run.sandbox.run_isolated`: the sandbox, a scrubbed
environment, no network, bounded): one that reads what it should not sees nothing, and one that
backtracks or hangs without end fails its check, not the run.
"""

from __future__ import annotations

import sys
from collections.abc import Collection

from memstore.harness.run.sandbox import AgentRuntime, run_isolated
from memstore.harness.scenarios.model import Task
from memstore.harness.scenarios.values import pattern_group
from memstore.verify.workspace import Workspace

__all__ = ["CHECK_TIMEOUT", "check_change"]

CHECK_TIMEOUT = 300.0  # seconds a scenario's check command may run (a test suite, say)


def check_change(
    workspace: Workspace, task: Task, touched: Collection[str] = (), runtime: AgentRuntime | None = None
) -> bool:
    """Whether the work tree (the change committed on it touching ``touched``) passes ``task``'s
    check; its command runs under ``runtime``'s isolation (the agent's)."""
    check = task.check
    values = [pattern_group(location.pattern, workspace.read(location.path)) for location in check.equal]
    if any(v is None for v in values) or len(set(values)) > 1:
        return False
    for path, needle in check.contains:
        text = workspace.read(path)
        if text is None or needle not in text:
            return False
    for path, needle in check.absent:
        text = workspace.read(path)
        if text is not None and needle in text:
            return False
    if set(check.unchanged) & set(touched):
        return False
    return not (check.command and _command_fails(workspace, check.command, runtime or AgentRuntime()))


def _command_fails(workspace: Workspace, command: tuple[str, ...], runtime: AgentRuntime) -> bool:
    """Run the check command in the work tree as the agent ran; it fails on a non-zero exit, a
    timeout, or a program that cannot start."""
    argv = [sys.executable if part == "{python}" else part for part in command]
    env = {"PYTHONDONTWRITEBYTECODE": "1"}  # a check leaves nothing in the work tree
    try:
        finished = run_isolated(argv, workdir=workspace.path, runtime=runtime, timeout=CHECK_TIMEOUT, env=env)
    except OSError:
        return True
    return finished.timed_out or finished.returncode != 0
