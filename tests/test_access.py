"""Access levels and the policy that holds them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memstore import Access, AccessPolicy, Actor, ValidationError
from memstore.commands._shared import load_access


def test_unknown_pairs_are_none() -> None:
    assert AccessPolicy().level("ana", "acme/api") is Access.NONE


def test_levels_are_ordered() -> None:
    assert Access.NONE < Access.READ < Access.WRITE < Access.ADMIN


def test_grant_is_per_user_and_repo() -> None:
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE)
    assert policy.level("ana", "acme/api") is Access.WRITE
    assert policy.level("ana", "acme/web") is Access.NONE
    assert policy.level("ben", "acme/api") is Access.NONE


def test_most_specific_grant_wins() -> None:
    policy = AccessPolicy().grant("ana", "*", Access.READ).grant("ana", "acme/*", Access.WRITE)
    policy.grant("ana", "acme/secret", Access.NONE)
    assert policy.level("ana", "other/lib") is Access.READ
    assert policy.level("ana", "acme/api") is Access.WRITE
    assert policy.level("ana", "acme/secret") is Access.NONE


def test_revoke_forgets_the_exact_grant() -> None:
    policy = AccessPolicy().grant("ana", "acme/api", Access.ADMIN).revoke("ana", "acme/api")
    assert policy.level("ana", "acme/api") is Access.NONE
    assert policy.grants() == []


@pytest.mark.parametrize("pattern", ["acme", "a*/x", "../x", ""])
def test_bad_patterns_are_rejected(pattern: str) -> None:
    with pytest.raises(ValidationError):
        AccessPolicy().grant("ana", pattern, Access.READ)


def test_actor_needs_a_name() -> None:
    with pytest.raises(ValidationError):
        Actor("  ")


HOSTILE_NAMES = ["ana 😀", "🧑‍💻", 'say "hi"', "back\\slash", "\\u0041", "[users.x]", "a.b", "line\u2028sep", "x = 1"]


def test_the_access_file_is_toml_that_reads_back_the_same_grants_for_any_name(tmp_path: Path) -> None:
    """``to_toml`` writes the file ``memstore mcp --access`` reads: names with emoji (outside the
    Basic Multilingual Plane), quotes, backslashes, brackets, dots and a line separator come back
    as they were."""
    policy = AccessPolicy()
    for n, name in enumerate(HOSTILE_NAMES):
        policy.grant(name, "acme/api", [Access.READ, Access.WRITE, Access.ADMIN][n % 3])
        policy.grant(name, "acme/*", Access.READ)
    text = policy.to_toml()
    assert sorted(tomllib.loads(text)["users"]) == sorted(HOSTILE_NAMES)
    path = tmp_path / "access.toml"
    path.write_text(text, encoding="utf-8")
    assert load_access(path, "nobody").grants() == policy.grants()


@pytest.mark.parametrize("name", ["new\nline", "carriage\rreturn", "nul\x00", "del\x7f"])
def test_a_name_with_a_control_character_is_refused_before_any_file_is_written(name: str) -> None:
    with pytest.raises(ValidationError, match="must not contain"):
        AccessPolicy().grant(name, "acme/api", Access.READ)
