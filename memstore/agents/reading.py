"""What a stub agent reads off text: the names a line defines or uses, a value beside a name,
what a diff changed, where a memory says something is kept."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from memstore.agents import craft
from memstore.harness.run import Tools

if TYPE_CHECKING:
    pass

__all__ = [
    "changed_places",
    "entry_additions",
    "names_in",
    "names_path",
    "places_text",
    "renamed",
    "used_outside",
    "value_changes",
    "value_in",
]

DEFINES = re.compile(r"(?i)\bdefines?\s+`?(?P<name>[A-Za-z_][\w.]*)`?")


def names_in(text: str, subject: str, *, strict: bool) -> bool:
    found = craft.definition(text)
    if found is None:
        return False
    return craft.names_like(found.key, subject) if strict else craft.shares_a_word(found.key, subject)


def value_in(text: str, values: list[str]) -> bool:
    found = craft.definition(text)
    return found is not None and found.bare in values


def names_path(instruction: str, path: str) -> bool:
    """Whether an instruction's object ("the docs", "docs/") names ``path``."""
    named = [w for w in re.findall(r"[\w./-]+", instruction.lower()) if w not in {"the", "any", "a", "files", "file"}]
    parts = [p.lower() for p in PurePosixPath(path).parts]
    return any(w.strip("/") in parts or path.lower().startswith(w) for w in named)


def renamed(line: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", new, line) if old != new else line


def used_outside(lines: list[str], name: str, import_line: int) -> bool:
    return any(re.search(rf"(?<![\w.]){re.escape(name)}\b", line) for i, line in enumerate(lines) if i != import_line)


def entry_additions(diff: str) -> list[tuple[str, list[str]]]:
    """(entry, its siblings) for each entry a unified diff adds to a list whose other entries it shows."""
    added: list[str] = []
    kept: list[str] = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        name = craft.field_name(line[1:]) if line[:1] in {"+", " ", "-"} else None
        if name is None:
            continue
        (added if line.startswith("+") else kept).append(name)
    siblings = [name for name in dict.fromkeys(kept) if name not in added]
    return [(entry, siblings) for entry in dict.fromkeys(added) if entry not in kept and siblings]


def places_text(tools: Tools, places: list[tuple[str, int]]) -> list[tuple[str, int, str]]:
    """(path, line, text) of each place, as the working copy has it."""
    found = []
    for path, line in places:
        lines = tools.lines(path) or []
        if 1 <= line <= len(lines):
            found.append((path, line, lines[line - 1]))
    return found


def changed_places(diff: str) -> list[tuple[str, int]]:
    """(path, line on the base) of each definition a unified diff changes."""
    places: list[tuple[str, int]] = []
    path, line = "", 0
    for raw in diff.splitlines():
        if raw.startswith("--- "):
            path = raw[6:] if raw.startswith("--- a/") else ""
        elif (hunk := re.match(r"^@@ -(\d+)", raw)) is not None:
            line = int(hunk.group(1))
        elif raw.startswith("-") and not raw.startswith("---"):
            if path and craft.definition(raw[1:]) is not None:
                places.append((path, line))
            line += 1
        elif raw.startswith(" "):
            line += 1
    return places


def value_changes(diff: str) -> list[tuple[str, str]]:
    """(key, old value) for each key whose value a unified diff changes."""
    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-") and (found := craft.definition(line[1:])) is not None:
            removed.setdefault(found.key, found.bare)
        elif line.startswith("+") and (found := craft.definition(line[1:])) is not None:
            added.setdefault(found.key, found.bare)
    return [(key, old) for key, old in removed.items() if key in added and added[key] != old]
