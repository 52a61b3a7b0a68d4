"""The statements a stub agent copies from an example: ``with EXPR as NAME:`` and ``NAME = EXPR``.

Read by hand in one pass over the line. The pattern this replaces put a lazy expression before
``\\s*;?\\s*$`` and tried every split of every run of spaces after it: cubic, minutes on one line of
a few thousand spaces, in an agent that runs in process with no deadline. It gives the same
results as that pattern (checked on random lines).
"""

from __future__ import annotations

import re

__all__ = ["statement"]

_SPACES = re.compile(r"\s*+")
_WORD = re.compile(r"\w++")
_KEYWORD = re.compile(r"(?:const|let|var)\s++")


def statement(line: str) -> tuple[str, str, str] | None:
    """(indent, form and bound name, expression) of ``with EXPR as NAME:`` or ``NAME = EXPR`` (a
    trailing ``;`` aside), read in one pass over the line."""
    if "\n" in line:
        return None
    start = _skip(line, 0)
    found = _with(line, start)
    if found is not None:
        return line[:start], "with " + found[1], found[0]
    keyword = _KEYWORD.match(line, start)
    found = (_assignment(line, keyword.end()) if keyword else None) or _assignment(line, start)
    return None if found is None else (line[:start], "= " + found[0], found[1])


def _skip(line: str, at: int) -> int:
    """Where the run of spaces that starts at ``at`` ends."""
    found = _SPACES.match(line, at)
    return found.end() if found is not None else at


def _back(line: str, at: int) -> int:
    """Where the run of spaces that ends at ``at`` begins."""
    return len(line[:at].rstrip())


def _tail(line: str) -> int:
    """Where the line's trailing ``\\s*;?\\s*`` begins."""
    at = _back(line, len(line))
    return _back(line, at - 1) if line[at - 1 : at] == ";" else at


def _with(line: str, start: int) -> tuple[str, str] | None:
    """(expression, name) of ``with EXPR as NAME:`` from ``start``: the name and ``as`` read back
    from the end of the line, the expression the shortest that leaves them."""
    if not line.startswith("with", start):
        return None
    after = _skip(line, start + 4)
    colon = _tail(line)
    if after == start + 4 or line[colon - 1 : colon] != ":":
        return None
    name_end = _back(line, colon - 1)
    name = _WORD.match(line[name_end - 1 :: -1]) if name_end else None  # the name, read backwards
    name_start = name_end - (len(name.group()) if name is not None else 0)
    as_end = _back(line, name_start)
    if name_start == name_end or as_end == name_start or as_end < 2 or line[as_end - 2 : as_end] != "as":
        return None
    before = _back(line, as_end - 2)
    if before == as_end - 2:
        return None
    if after < before:
        return line[after:before], line[name_start:name_end]
    if before <= start + 4 and as_end - 2 - (start + 4) >= 3:  # ``with   as x:``: a space is the expression
        return line[as_end - 4], line[name_start:name_end]
    return None


def _assignment(line: str, start: int) -> tuple[str, str] | None:
    """(name, expression) of ``NAME = EXPR`` from ``start``, the expression not starting with ``=``."""
    name = _WORD.match(line, start)
    if name is None:
        return None
    sign = _skip(line, name.end())
    if line[sign : sign + 1] != "=":
        return None
    spaces = _skip(line, sign + 1)
    if spaces < len(line) and line[spaces] != "=":
        begin = spaces
    elif spaces > sign + 1:  # the expression starts with the last space before it
        begin = spaces - 1
    else:
        return None
    return name.group(), line[begin : max(begin + 1, _tail(line))]
