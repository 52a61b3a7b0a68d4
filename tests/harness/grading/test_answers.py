"""Grading CLI answers: values as a person reads them, and the matchers a scenario may ask for."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.harness.grading.answers import answer_is_right
from memstore.harness.scenarios.scenario import AnswerMatch
from memstore.harness.scenarios.values import normalise, same_value, values_in


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("30 days", "30d"),
        ("30d", "30 days"),
        ("Logs are kept for 30 days.", "30d"),
        ("v2.1.4", "2.1.4"),
        ("The API version is `v2.1.4`.", "v2.1.4"),
        ('"20"', "20"),
        ("20 connections", "20"),
        ("`vitest run`", "vitest run"),
        ("Run `npx vitest run`", "npx vitest run"),
        ("14 d", "14d"),
        ("2 weeks", "2w"),
    ],
)
def test_the_default_matcher_accepts_the_same_value_in_any_usual_spelling(answer: str, expected: str) -> None:
    assert answer_is_right(answer, expected)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("30 hours", "30d"),
        ("v2.1.5", "v2.1.4"),
        ("20, it was 10 before", "20"),  # two values: it does not say which
        ("10", "20"),
        ("", "20"),
        (None, "20"),
        ("jest", "vitest run"),
        ("vitest runner", "vitest run"),
        ("1.50", "1.5"),  # as versions, 1.50 and 1.5 differ
    ],
)
def test_the_default_matcher_refuses_another_value(answer: str | None, expected: str) -> None:
    assert not answer_is_right(answer, expected)


def test_exact_contains_and_regex_on_request() -> None:
    assert answer_is_right("30d", "30d", AnswerMatch.EXACT)
    assert not answer_is_right("30 days", "30d", AnswerMatch.EXACT)
    assert answer_is_right("Use  X-Acme-Api-Version ", "Use X-Acme-Api-Version", AnswerMatch.EXACT)
    assert answer_is_right("send the X-Acme-Api-Version header", "x-acme-api-version", AnswerMatch.CONTAINS)
    assert not answer_is_right("send a version header", "X-Acme-Api-Version", AnswerMatch.CONTAINS)
    assert answer_is_right("pool of 20", r"\b20\b", AnswerMatch.REGEX)
    assert not answer_is_right("pool of 200", r"\b20\b", AnswerMatch.REGEX)
    assert not answer_is_right("anything", "(unclosed", AnswerMatch.REGEX)  # a bad pattern grades wrong, never raises


def test_a_catastrophic_pattern_is_cut_off() -> None:
    assert not answer_is_right("a" * 40 + "!", r"^(a+)+$", AnswerMatch.REGEX)


def test_values_and_normal_forms() -> None:
    assert values_in("Keep 14 days of logs, rotate at 100 MB, API v2.1") == ["v2.1", "14d", "100"]
    assert normalise('  The "API"  version.  ') == "the api version"
    assert same_value("30 days", "30d")
    assert not same_value("30 days", "31d")


@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["d", " days", " day", "d."]))
def test_a_duration_matches_itself_in_any_spelling(number: int, unit: str) -> None:
    assert answer_is_right(f"{number}{unit}", f"{number}d")
    assert not answer_is_right(f"{number + 1}{unit}", f"{number}d")


@given(st.text(max_size=60))
def test_an_answer_always_matches_itself(text: str) -> None:
    if text.strip():
        assert answer_is_right(text, text)
