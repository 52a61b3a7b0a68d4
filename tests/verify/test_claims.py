"""Literal claims, assignments and substitutions."""

from __future__ import annotations

import pytest

from memstore.verify.claims import ClaimKind, FactClaim, assignments, claims_of, mentions, substitutions, terms

K = ClaimKind


def test_claims_of_the_seed_example() -> None:
    assert claims_of('The API version is "v2.1.4" in `API_VERSION`') == [
        FactClaim(K.CODE, "API_VERSION"),
        FactClaim(K.QUOTED, "v2.1.4"),
    ]


def test_a_fact_in_plain_words_makes_no_literal_claims() -> None:
    assert claims_of("API version must match between client SDK, server routes, and documentation.") == []


def test_versions_numbers_identifiers_and_files() -> None:
    found = claims_of("Pool size is 10 via createPool() in db/pool.py; Node v18.17.0; MAX_RETRIES, e.g. here")
    assert found == [
        FactClaim(K.VERSION, "v18.17.0"),
        FactClaim(K.NUMBER, "10"),
        FactClaim(K.IDENTIFIER, "createPool()"),
        FactClaim(K.IDENTIFIER, "db/pool.py"),
        FactClaim(K.IDENTIFIER, "MAX_RETRIES"),
    ]


@pytest.mark.parametrize(
    ("text", "literal", "expected"),
    [
        ("v2.1.4", "2.1.4", True),
        ('"2.1.4"', "v2.1.4", True),
        ("v2.1.45", "v2.1.4", False),
        ("x = 10", "1", False),
        ("node 18.17.0", "18", True),
        ("createPool(size)", "createPool", True),
        ("createPoolFor(x)", "createPool", False),
    ],
)
def test_mentions_is_whole_token(text: str, literal: str, expected: bool) -> None:
    assert mentions(text, literal) is expected


def test_assignments_in_several_languages() -> None:
    assert assignments('export const API_VERSION = "v2.1.4";') == [("API_VERSION", '"v2.1.4"')]
    assert assignments('const APIVersion = "v2.1.4"') == [("APIVersion", '"v2.1.4"')]
    assert assignments("Version: v2.1.4") == [("Version", "v2.1.4")]
    assert assignments("timeout := 30") == [("timeout", "30")]
    assert assignments("{ level: 'info', maxFiles: 14 }") == [("level", "'info'"), ("maxFiles", "14")]


def test_substitutions_pair_replaced_tokens() -> None:
    assert substitutions('API_VERSION = "v2.1.4";', 'API_VERSION = "v2.2.0";') == {"v2.1.4": "v2.2.0"}
    assert substitutions("pool = createPool(10)", "pool = makePool(10)") == {"createPool": "makePool"}


def test_terms_split_identifiers_and_drop_stopwords() -> None:
    assert terms("const APIVersion = getUserID()") == {"api", "version", "get", "user"}
