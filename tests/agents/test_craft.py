"""The stubs' rules over lines: where a setting is kept, how to write it, how code follows a
convention, which value or name answers a question."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstore.agents import craft
from tests.deadline import within


@pytest.mark.parametrize(
    ("line", "key", "bare"),
    [
        ('export const API_VERSION = "v2.1.4";', "API_VERSION", "v2.1.4"),
        ('const APIVersion = "v2.1.4"', "APIVersion", "v2.1.4"),
        ("Version: v2.1.4", "Version", "v2.1.4"),
        ("MAX_POOL_SIZE = 10", "MAX_POOL_SIZE", "10"),
        ('      maxFiles: "14d",', "maxFiles", "14d"),
        ("| Attempts allowed (service 3) | 42 |", "Attempts allowed (service 3)", "42"),
        ("Log files kept: 14d", "Log files kept", "14d"),
        ("  pool_size: 10", "pool_size", "10"),
    ],
)
def test_a_definition_is_found_in_any_of_the_usual_spellings(line: str, key: str, bare: str) -> None:
    found = craft.definition(line)
    assert found is not None
    assert (found.key, found.bare) == (key, bare)


def test_with_value_keeps_the_quoting_and_the_rest_of_the_line() -> None:
    assert craft.with_value('export const API_VERSION = "v2.1.4";', "v2.2.0") == 'export const API_VERSION = "v2.2.0";'
    assert craft.with_value("| RETRY_LIMIT_3 | 42 |", "142") == "| RETRY_LIMIT_3 | 142 |"
    assert craft.with_value("# no value here", "1") == "# no value here"


def test_a_name_pattern_finds_a_setting_in_its_spellings_but_not_its_neighbours() -> None:
    pattern = re.compile(craft.name_pattern("RETRY_LIMIT_3"), re.IGNORECASE)
    assert pattern.search("RETRY_LIMIT_3 = 4")
    assert pattern.search("export const retryLimit3 = 4;")
    assert not pattern.search("RETRY_LIMIT_30 = 4")
    phrase = re.compile(craft.name_pattern("connection pool size"), re.IGNORECASE)
    assert phrase.search("MAX_POOL_SIZE = 10")


def test_a_convention_is_copied_from_the_example_pointed_at_first() -> None:
    target = ["def list_invoices():", "    with driver.connect(DATABASE_URL) as connection:", "        return []"]
    examples = [
        "    connection = _pool.acquire(timeout=5)",  # binds the same name, but in another form
        "    with get_connection() as connection:",
    ]
    (change,) = craft.convention_pairs(target, examples)
    assert change == (1, "    with get_connection() as connection:", "driver", "get_connection")


def test_instructions_and_called_helpers_are_read_from_a_fact() -> None:
    assert craft.instruction_skips("Never edit docs/: the reference is generated.") == ["docs/"]
    assert craft.call_names("Handlers borrow with `get_connection()` from app/db/pool.py.") == ["get_connection"]


def test_answers_from_a_fact() -> None:
    assert craft.answer_from_fact("The pool holds at most 10 connections.", "How large is the pool?") == "10"
    assert craft.answer_from_fact("Run `npx vitest run` for the tests.", "Which command runs the tests?") == (
        "npx vitest run"
    )
    assert craft.answer_from_fact("API version must match everywhere.", "What is the version?") is None


def test_a_question_about_a_name_is_answered_with_a_name() -> None:
    assert craft.asked_name("Which header carries the API version?") == "header"
    assert craft.asked_name("What is the API version?") is None
    lines = [
        " * `X-Acme-Api-Version` header. The server rejects requests whose",
        '\t\tif r.Header.Get("X-Acme-Api-Version") != APIVersion {',
        'const APIVersion = "v2.1.4"  // the version header value',
        "Every request carries the `X-Acme-Api-Version` header.",
    ]
    assert craft.names_near(lines, "header", "API version header") == ["X-Acme-Api-Version"]


@given(st.from_regex(r"[A-Z][A-Z_]{2,12}", fullmatch=True), st.integers(0, 10**6), st.integers(0, 10**6))
def test_writing_a_value_then_reading_it_back(key: str, old: int, new: int) -> None:
    line = craft.with_value(f"{key} = {old}", str(new))
    found = craft.definition(line)
    assert found is not None
    assert (found.key, found.bare) == (key, str(new))


def test_the_names_a_line_gives_beside_a_subject_are_followed() -> None:
    row = "    (3, 'RETRY_LIMIT_3', 'maxAttempts3', 'Attempts allowed (service 3)'),"
    assert craft.linked_names(row, "RETRY_LIMIT_3") == ["maxAttempts3", "Attempts allowed (service 3)"]
    assert craft.linked_names("    (4, 'QUEUE_LIMIT_4', None, None),", "QUEUE_LIMIT_4") == []
    assert craft.linked_names("Also called `maxAttempts3` in the client.", "retryLimit3") == []  # not mentioned
    assert craft.linked_names("RETRY_LIMIT_3 is also called `maxAttempts3`.", "retryLimit3") == ["maxAttempts3"]
    assert craft.linked_names('RETRY_LIMIT_3 = "5"', "RETRY_LIMIT_3") == []  # a definition names no alias
    assert craft.same_name("max_attempts_3", "maxAttempts3")
    assert not craft.same_name("maxAttempts", "maxAttempts3")


def test_an_answer_from_a_fact_takes_the_value_not_the_line_it_gives() -> None:
    from memstore.agents.craft import answer_from_fact

    fact = "`BIG5_TYPICAL_DISTRIBUTION_RATIO` is set to `0.75` in `chardet/big5freq.py` (line 43)."
    assert answer_from_fact(fact, "What is BIG5_TYPICAL_DISTRIBUTION_RATIO set to?") == "0.75"
    assert answer_from_fact("The API version is v2.1.4 (see line 12).", "What is the API version?") == "v2.1.4"


def test_which_file_is_answered_by_a_path_and_never_by_the_name_asked_about() -> None:
    from memstore.agents.craft import answer_from_fact

    question = "Which file defines changelog?"
    assert answer_from_fact("`changelog` is defined in `scripts/release.py`.", question) == "scripts/release.py"
    assert answer_from_fact("`changelog` defaults `write_out` to `False`.", question) is None


def test_a_dunder_name_is_code_so_a_question_about_one_is_not_answered_by_another() -> None:
    """``__author__`` is a name, not the word "author": a memory of ``__version__`` that shares the
    words "set" and "init" with a question about ``__author__`` does not bear on it (a trace of
    jit-verify on memcite answering "24.1" for the author)."""
    asked = craft.identifiers("What is __author__ set to? What is __author__ set to in __init__.py?")
    assert asked == {"author"}  # __init__.py names a file, not code the question is about
    assert asked.isdisjoint(craft.identifiers('`__version__` is set to `"24.1"` in `src/packaging/__init__.py`.'))
    assert craft.identifiers("RETRY_LIMIT_3 and maxFiles, but not _private or plain words") == {
        "retrylimit3",
        "maxfiles",
    }


MEGABYTE_LINES = {  # one line of a megabyte, in the shapes that make a backtracking pattern try every split
    "spaces after an assignment": "LIMIT = a" + " " * 2**20 + "!",
    "spaces after a with": "with a" + " " * 2**20 + "!",
    "one word": "a" * 2**20,
    "a dotted word": "a." * 2**19,
    "quotes": '"' * 2**20,
    "a table row": "|" + " " * 2**20,
}


@pytest.mark.parametrize("shape", list(MEGABYTE_LINES))
def test_every_rule_over_lines_is_linear_in_a_megabyte_line(shape: str) -> None:
    line = MEGABYTE_LINES[shape]
    lines = ["def f():", line, "    return x"]

    def apply() -> list[object]:
        return [
            craft.definition(line),
            craft.with_value(line, "1") == line,
            craft.linked_names(line, "limit"),
            craft.field_name(line),
            craft.entry_names(lines),
            craft.with_entry(lines, ["a"], "b", json=False),
            craft.convention_pairs(lines, [line, "    with get() as a:"]),
            craft.import_of("a", lines),
            craft.names_near(lines, "function", "limit"),
            list(craft.called_names(line)),
            len(craft.identifiers(line)),
        ]

    found, took = within(20, apply)  # the statement pattern was cubic: hours on this line
    assert len(found) == 11
    assert took < 10
