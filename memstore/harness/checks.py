"""What the harness checks on its own account: merge checks, and who may see a memory.

Both are written from the scenario and DESIGN.md alone, apart from the store's own rules,
so that a store that breaks its rules is caught rather than trusted.
"""

from __future__ import annotations

import re

from memstore.access import Access, AccessPolicy
from memstore.harness.scenario import Task
from memstore.model import Kind, Memory, Surface
from memstore.verify.workspace import Workspace

__all__ = ["check_change", "entitled"]


def check_change(workspace: Workspace, task: Task) -> bool:
    """Whether the work tree passes ``task``'s merge check."""
    check = task.check
    values = []
    for location in check.equal:
        text = workspace.read(location.path)
        match = re.search(location.pattern, text) if text is not None else None
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
    return not (check.command and workspace.run(list(check.command)) != 0)


def entitled(access: AccessPolicy, memory: Memory, user: str, repo: str, surface: Surface) -> bool:
    """Whether ``user`` working on ``repo`` through ``surface`` may be shown ``memory``."""
    if memory.kind is Kind.PREFERENCE:
        return memory.author == user and surface is not Surface.CODE_REVIEW
    return memory.repo == repo and access.level(user, repo) >= Access.READ
