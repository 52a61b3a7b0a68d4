"""Reading a fact written in free words (`memstore.verify.reading`): the names and values it
states, where each stands, what a negation governs, and what it says of them."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from memstore.verify.mentions import MentionKind
from memstore.verify.reading import Cue, read_fact
from memstore.verify.words import negated_spans

K = MentionKind


def said(fact: str) -> list[tuple[MentionKind, str, str]]:
    return [(m.kind, m.text, m.value) for m in read_fact(fact).mentions]


def test_names_and_values_in_plain_words() -> None:
    assert said("`find_dotenv` starts from the working directory (usecwd=True) and gives up after 30 s.") == [
        (K.NAME, "`find_dotenv`", "find_dotenv"),
        (K.NAME, "usecwd", "usecwd"),
        (K.FLAG, "True", "True"),
        (K.NUMBER, "30 s", "30"),
    ]
    assert said('Unless you pass --quote, `dotenv set` quotes values in "auto" mode; see https://x.org/a.') == [
        (K.NAME, "--quote", "--quote"),
        (K.CODE, "`dotenv set`", "dotenv set"),
        (K.STRING, '"auto"', "auto"),
        (K.URL, "https://x.org/a", "https://x.org/a"),
    ]


def test_versions_pins_and_numbers_in_words() -> None:
    assert said("It needs Python >=3.8 and ships 1.0.1; the lint env runs mypy six times.") == [
        (K.PIN, ">=3.8", ">=3.8"),
        (K.VERSION, "1.0.1", "1.0.1"),
        (K.NUMBER, "six", "6"),
    ]
    assert [m.value for m in read_fact("The port is eight thousand, the limit forty-two.").mentions] == ["8000", "42"]
    assert read_fact("one of them and two").mentions == ()  # small number words of prose are no values


def test_a_value_inside_a_code_span_carries_the_name_it_is_given_to() -> None:
    inner = [m for m in read_fact("The option is `click.option('--quote', default='always')`.").mentions if m.key]
    assert [(m.kind, m.value, m.key) for m in inner] == [(K.STRING, "always", "default")]


def test_what_a_negation_governs() -> None:
    fact = "Any truthy uid triggers os.setuid; it is never compared with os.getuid()."
    assert [fact[a:b] for a, b in negated_spans(fact)] == ["never compared with os.getuid("]
    assert [m.value for m in read_fact(fact).mentions if m.negated] == ["os.getuid"]
    # a condition is no negation: "when no callback is set" does not deny a callback
    assert negated_spans("When no callback is set, the default is used.") == []
    # a word inside quotes or code is a value, not a negation
    assert negated_spans('It prints "No command given." and exits.') == []


def test_cues_say_what_the_fact_says_of_its_values() -> None:
    assert read_fact("The timeout defaults to 30 s unless TIMEOUT is set in the environment.").cues == {
        Cue.DEFAULT,
        Cue.ENVIRONMENT,
    }
    assert Cue.COUNT in read_fact("tox runs mypy six times.").cues
    assert Cue.COMPLETE in read_fact("Only SIGTERM and SIGINT are forwarded.").cues
    # a cue word inside a name of code is no cue: raise_if_missing raises nothing by its name
    assert Cue.RAISES not in read_fact("`raise_if_missing` is a flag of find().").cues


@given(st.text(max_size=300))
def test_any_text_reads_and_every_mention_is_the_text_at_its_place(fact: str) -> None:
    reading = read_fact(fact)
    for mention in reading.mentions:
        assert fact[mention.start : mention.end] == mention.text
    spans = sorted((m.start, m.end) for m in reading.mentions if not m.key and m.kind is not K.CODE)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
