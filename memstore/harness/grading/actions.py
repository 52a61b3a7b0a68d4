"""What an agent did, read off the repository rather than taken from its own account.

A coding session's change is git's own diff of its commit against ``main`` (``-U0``): the files
it touched, the lines it removed and the lines it added, whatever the agent is (a stub, a
command, an MCP client). Review findings and CLI answers are what the agent reported. Scoring
compares these actions with what each memory handed to the session would have led to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Actions", "parse_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Actions:
    """One session's actions.

    Attributes:
        touched: files the change modified, added or removed (both names of a rename).
        added: (path, new line number, text) of every line the change added.
        removed: (path, old line number, text) of every line the change removed.
        findings: (path, note) the agent reported (review).
        answer: what it answered (CLI), or None.
    """

    touched: frozenset[str] = frozenset()
    added: tuple[tuple[str, int, str], ...] = ()
    removed: tuple[tuple[str, int, str], ...] = ()
    findings: tuple[tuple[str, str], ...] = ()
    answer: str | None = None

    def texts(self) -> list[str]:
        """Everything the agent wrote or said: added lines, finding notes, its answer."""
        return [t for _, _, t in self.added] + [n for _, n in self.findings] + ([self.answer] if self.answer else [])


@dataclass
class _File:
    old: str = ""
    new: str = ""
    added: list[tuple[int, str]] = field(default_factory=list)
    removed: list[tuple[int, str]] = field(default_factory=list)


def parse_diff(diff: str) -> tuple[frozenset[str], tuple[tuple[str, int, str], ...], tuple[tuple[str, int, str], ...]]:
    """(touched paths, added lines, removed lines) of a ``git diff -U0`` (renames followed)."""
    files: list[_File] = []
    current: _File | None = None
    old_line = new_line = 0
    for raw in diff.splitlines():
        if raw.startswith("diff --git "):
            current = _File()
            files.append(current)
        elif current is None:
            continue
        elif raw.startswith("rename from "):
            current.old = raw.removeprefix("rename from ")
        elif raw.startswith("rename to "):
            current.new = raw.removeprefix("rename to ")
        elif raw.startswith("--- "):
            current.old = current.old or ("" if raw == "--- /dev/null" else raw[6:])
        elif raw.startswith("+++ "):
            current.new = current.new or ("" if raw == "+++ /dev/null" else raw[6:])
        elif (hunk := _HUNK.match(raw)) is not None:
            old_line, new_line = int(hunk[1]), int(hunk[3])
        elif raw.startswith("+"):
            current.added.append((new_line, raw[1:]))
            new_line += 1
        elif raw.startswith("-"):
            current.removed.append((old_line, raw[1:]))
            old_line += 1
    touched = frozenset(p for f in files for p in (f.old, f.new) if p)
    added = tuple((f.new or f.old, n, t) for f in files for n, t in f.added)
    removed = tuple((f.old or f.new, n, t) for f in files for n, t in f.removed)
    return touched, added, removed
