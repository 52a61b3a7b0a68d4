"""Grading a CLI answer against the expected one, the way a person would.

The default matcher compares values, not strings (`memstore.harness.scenarios.values`). An
answer that gives the expected value and another of the same kind beside it ("20, it was 10")
is wrong: it does not say which. ``exact``, ``contains`` and ``regex`` are there for a
scenario that wants them.
"""

from __future__ import annotations

import re

import regex

from memstore.harness.scenarios import AnswerMatch, normalise, values_in

__all__ = ["REGEX_TIMEOUT", "answer_is_right"]

REGEX_TIMEOUT = 1.0


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
