"""Values as scenarios state them: read off a file where a `Location` points, and compared the
way a person would.

Values are compared, not strings: ``30 days`` is ``30d``, ``v2.1.4`` is
``2.1.4``, ``"20"`` and ``20 connections`` are ``20``, ``` `vitest run` ``` is ``vitest run``.
A `Location`'s value is group 1 of its pattern in its file, under a time limit (the `regex`
package's ``timeout``).
"""

from __future__ import annotations

import re

import regex

from memstore.harness.scenarios.scenario import Location
from memstore.verify import GitCodebase

__all__ = ["PATTERN_TIMEOUT", "normalise", "pattern_group", "read_value", "same_value", "values_in"]

PATTERN_TIMEOUT = 2.0  # seconds a scenario's pattern may take on one file

_UNITS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "w": "w", "wk": "w", "week": "w", "weeks": "w",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
}  # fmt: skip
_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([a-z]+)?(?![\w.])")
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3}(?:-[0-9a-z.]+)?)(?![\w])")
_QUOTES = str.maketrans("", "", "\"'`")


def normalise(text: str) -> str:
    """Case folded, quotes and backticks gone, whitespace collapsed, a trailing full stop dropped."""
    return " ".join(text.translate(_QUOTES).casefold().split()).rstrip(".").strip()


def values_in(text: str) -> list[str]:
    """The values a text gives, each in one canonical spelling: versions (``2.1.4``), quantities
    with their unit (``30d``), plain numbers (``20``)."""
    text = normalise(text)
    found = [f"v{m.group(1)}" for m in _VERSION.finditer(text)]
    rest = _VERSION.sub(" ", text)
    for match in _QUANTITY.finditer(rest):
        number, unit = match.group(1), match.group(2) or ""
        number = number.rstrip("0").rstrip(".") if "." in number else number
        found.append(f"{number}{_UNITS.get(unit, '')}")
    return found


def same_value(a: str, b: str) -> bool:
    """Whether two texts state the same value (``30 days`` and ``30d``; ``v2.1.4`` and ``2.1.4``)."""
    if normalise(a) == normalise(b):
        return True
    left, right = values_in(a), values_in(b)
    return bool(left) and left == right


def pattern_group(pattern: str, text: str | None) -> str | None:
    if text is None:
        return None
    try:
        found = regex.search(pattern, text, timeout=PATTERN_TIMEOUT)
    except (TimeoutError, regex.error):
        return None
    return found.group(1) if found is not None else None


def read_value(codebase: GitCodebase, where: Location) -> str | None:
    """The value ``where`` points at (group 1 of its pattern in its file) in ``codebase``."""
    found = codebase.read(where.path)
    return pattern_group(where.pattern, "\n".join(found.lines)) if found.ok else None
