"""Git's own line mapping: the hunks of a ``git diff -M -U0`` (or of each pair a ``git diff-tree
--stdin`` compared), and where an old line went."""

from __future__ import annotations

import re

__all__ = ["Hunk", "map_line", "parse_hunks", "parse_sections"]

Hunk = tuple[int, int, int, int]  # old start, old length, new start, new length, as ``git diff -U0`` prints them
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def map_line(hunks: list[Hunk], line: int, *, rewritten: bool = False) -> int | None:
    """Where old ``line`` is after ``hunks`` (git's own mapping); None if a hunk rewrote it,
    unless ``rewritten``: then a line of a hunk that replaced n lines by n maps to its counterpart."""
    shift = 0
    for o_start, o_len, n_start, n_len in hunks:
        if o_len == 0:  # a pure insertion after old line o_start
            if line <= o_start:
                break
            shift = n_start + n_len - 1 - o_start
            continue
        if line < o_start:
            break
        if line < o_start + o_len:
            return n_start + (line - o_start) if rewritten and o_len == n_len else None
        new_start = n_start + 1 if n_len == 0 else n_start  # a pure deletion names the line before it
        shift = new_start + n_len - (o_start + o_len)
    return line + shift


def parse_hunks(out: bytes) -> dict[str, tuple[str, list[Hunk]]]:
    """For each old path a ``git diff -M -U0`` output touches: (its new path, "" if deleted; hunks)."""
    result: dict[str, tuple[str, list[Hunk]]] = {}
    hunks: list[Hunk] | None = None
    old_path: str | None = None
    for line in out.split(b"\n"):
        if line.startswith(b"diff --git"):
            old_path, hunks = None, None
        elif line.startswith(b"rename from "):
            old_path = line[len(b"rename from ") :].decode("utf-8", "surrogateescape")
        elif line.startswith(b"rename to ") and old_path is not None:
            hunks = []
            result[old_path] = (line[len(b"rename to ") :].decode("utf-8", "surrogateescape"), hunks)
        elif line.startswith(b"--- "):
            old_path = None if line[4:] == b"/dev/null" else line[6:].decode("utf-8", "surrogateescape")
        elif line.startswith(b"+++ ") and old_path is not None:
            hunks = []
            new_path = "" if line[4:] == b"/dev/null" else line[6:].decode("utf-8", "surrogateescape")
            result[old_path] = (new_path, hunks)
        elif (match := _HUNK.match(line)) and hunks is not None:
            hunks.append((int(match[1]), int(match[2] or 1), int(match[3]), int(match[4] or 1)))
    return result


def parse_sections(out: bytes, heads: list[str]) -> list[dict[str, tuple[str, list[Hunk]]]]:
    """`parse_hunks` for each section of a ``git diff-tree --stdin --always -p`` output: one per
    line it read, in order, each opening with a line that is its commit's id (``heads``), which no
    line of a patch can be (every one starts with a marker: ``+``, ``-``, ``@@``, ``diff``...).

    Raises:
        ValueError: when the output does not hold one section per head, in order."""
    lines = out.split(b"\n")
    found = []
    at = 0
    for i, head in enumerate(heads):
        if at >= len(lines) or lines[at] != head.encode():
            raise ValueError(f"no diff for {head} where one was due")
        end = at + 1
        following = heads[i + 1].encode() if i + 1 < len(heads) else None
        while end < len(lines) and lines[end] != following:
            end += 1
        found.append(parse_hunks(b"\n".join(lines[at + 1 : end])))
        at = end
    return found
