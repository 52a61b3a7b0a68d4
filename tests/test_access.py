"""Access levels and the policy that holds them."""

from __future__ import annotations

import pytest

from memstore import Access, AccessPolicy, Actor, ValidationError


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
