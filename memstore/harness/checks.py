"""What the harness checks on its own account: merge checks, and who may see a memory.

Both are written from the scenario and DESIGN.md alone, apart from the store's own rules,
so that a store that breaks its rules is caught rather than trusted.
"""

from __future__ import annotations

import os

import regex

from memstore.access import Access, AccessPolicy
from memstore.harness.process import run_bounded
from memstore.harness.scenario import Task
from memstore.model import Kind, Memory, Surface
from memstore.verify.workspace import Workspace

__all__ = ["check_change", "entitled"]


PATTERN_TIMEOUT = 2.0  # seconds a scenario's pattern may take on one file (a catastrophic one fails the check)


def check_change(workspace: Workspace, task: Task) -> bool:
    """Whether the work tree passes ``task``'s merge check.

    The scenario's patterns run under a time limit (the `regex` package's ``timeout``): a
    pattern that backtracks without end fails this check, not the run.
    """
    check = task.check
    values = []
    for location in check.equal:
        text = workspace.read(location.path)
        try:
            match = regex.search(location.pattern, text, timeout=PATTERN_TIMEOUT) if text is not None else None
        except TimeoutError:
            return False
        if match is None:
            return False
        values.append(match.group(1))
    if len(set(values)) > 1:
        return False
    for path, needle in check.contains:
        text = workspace.read(path)
        if text is None or needle not in text:
            return False
    for path, needle in check.absent:
        text = workspace.read(path)
        if text is not None and needle in text:
            return False
    return not (check.command and _command_fails(workspace, check.command))


CHECK_TIMEOUT = 300.0  # seconds a scenario's check command may run (a test suite, say)


def _command_fails(workspace: Workspace, command: tuple[str, ...]) -> bool:
    """Run the scenario's check command in the work tree, bounded like an agent (time, output,
    children); it fails on a non-zero exit, a timeout, or a program that cannot start."""
    try:
        finished = run_bounded(command, cwd=workspace.path, env=os.environ, timeout=CHECK_TIMEOUT)
    except OSError:
        return True
    return finished.timed_out or finished.returncode != 0


def entitled(access: AccessPolicy, memory: Memory, user: str, repo: str, surface: Surface) -> bool:
    """Whether ``user`` working on ``repo`` through ``surface`` may be shown ``memory``."""
    if memory.kind is Kind.PREFERENCE:
        return memory.author == user and surface is not Surface.CODE_REVIEW
    return memory.repo == repo and access.level(user, repo) >= Access.READ
