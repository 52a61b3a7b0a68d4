"""Grading a CLI answer against the expected one, the way a person would.

The default matcher compares values, not strings: ``30 days`` is ``30d``, ``v2.1.4`` is
``2.1.4``, ``"20"`` and ``20 connections`` are ``20``, ``` `vitest run` ``` is ``vitest run``.
An answer that gives the expected value and another of the same kind beside it ("20, it was
10") is wrong: it does not say which. ``exact``, ``contains`` and ``regex`` are there for a
scenario that wants them.
"""

from __future__ import annotations

import re

import regex

from memstore.harness.scenarios.model import AnswerMatch

__all__ = ["answer_is_right", "normalise", "same_value", "values_in"]

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
REGEX_TIMEOUT = 1.0


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


def answer_is_right(answer: str | None, expected: str, match: AnswerMatch = AnswerMatch.VALUE) -> bool:
    """Whether ``answer`` answers with ``expected``, by ``match`` (see the module docstring)."""
    if answer is None or not answer.strip():
        return False
    if match is AnswerMatch.EXACT:
        return " ".join(answer.split()) == " ".join(expected.split())
    if match is AnswerMatch.CONTAINS:
        return normalise(expected) in normalise(answer)
    if match is AnswerMatch.REGEX:
        try:
            return regex.search(expected, answer, timeout=REGEX_TIMEOUT) is not None
        except (TimeoutError, regex.error):
            return False
    if normalise(answer) == normalise(expected):
        return True
    wanted, given = values_in(expected), values_in(answer)
    if wanted:
        return set(given) == set(wanted)  # the value, and nothing else of its kind beside it
    return re.search(rf"(?<![\w-]){re.escape(normalise(expected))}(?![\w-])", normalise(answer)) is not None
