"""Who may do what with which memory.

Repository facts are scoped by the access a user has on the repository; preferences
belong to their author alone. The rules are the scope table of docs/store.md ("The
rules"); every backend enforces them through the functions here so that the
rules live in one place.

Visibility comes before permission: a memory the actor may not see is reported as
`NotFound`; `PermissionDenied` is raised only about a memory (or repository) the actor
may already see, so an error never reveals that a hidden memory exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum

import tomli_w

from memstore.errors import PermissionDenied, ValidationError
from memstore.model import Kind, Memory, Surface, check_text, validate_repo
from memstore.validation import shown

__all__ = [
    "Access",
    "AccessPolicy",
    "Actor",
    "Surface",
    "check_create",
    "check_delete",
    "check_write",
    "may_see",
    "may_see_record",
    "sees_preferences",
]


MAX_USER_CHARS = 200
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1 control characters


class Access(IntEnum):
    """A user's access level on one repository, ordered ``NONE < READ < WRITE < ADMIN``."""

    NONE = 0
    READ = 1
    WRITE = 2
    ADMIN = 3


@dataclass(frozen=True)
class Actor:
    """The user a call acts for."""

    user: str

    def __post_init__(self) -> None:
        if not isinstance(self.user, str) or not self.user.strip():
            raise ValidationError("actor", "the acting user must be a non-empty name")
        check_text(self.user, "actor", MAX_USER_CHARS, required=True)
        if _CONTROL.search(self.user):
            raise ValidationError("actor", f"the user name must not contain control characters: {shown(self.user)}")


def _check_pattern(pattern: str) -> str:
    if pattern == "*":
        return pattern
    owner, _, name = pattern.partition("/")
    if name == "*":
        validate_repo(f"{owner}/x", "repo")
        return pattern
    return validate_repo(pattern, "repo")


@dataclass
class AccessPolicy:
    """Access levels per (user, repository); pairs never granted are `Access.NONE`.

    A grant names a repository exactly (``"acme/api"``), every repository of an owner
    (``"acme/*"``) or every repository (``"*"``). The most specific grant wins, so an
    exact ``Access.NONE`` takes away what a wildcard gave. The policy is consulted on
    every call, so a revoked grant takes effect at once.
    """

    _grants: dict[tuple[str, str], Access] = field(default_factory=dict)

    def grant(self, user: str, repo: str, level: Access) -> AccessPolicy:
        """Set ``user``'s access on ``repo`` (or a wildcard pattern); returns the policy."""
        Actor(user)
        self._grants[(user, _check_pattern(repo))] = Access(level)
        return self

    def revoke(self, user: str, repo: str) -> AccessPolicy:
        """Forget the grant of ``user`` on exactly ``repo`` (a pattern is matched literally)."""
        self._grants.pop((user, repo), None)
        return self

    def level(self, user: str, repo: str) -> Access:
        """The access ``user`` has on ``repo``."""
        for key in (repo, f"{repo.partition('/')[0]}/*", "*"):
            found = self._grants.get((user, key))
            if found is not None:
                return found
        return Access.NONE

    def grants(self) -> list[tuple[str, str, Access]]:
        """Every grant as ``(user, repo pattern, level)``, sorted."""
        return sorted((u, r, lvl) for (u, r), lvl in self._grants.items())

    def to_toml(self) -> str:
        """The policy as the TOML access file ``memstore mcp --access`` reads (``[users.NAME]``
        tables mapping repository patterns to levels)."""
        users: dict[str, dict[str, str]] = {}
        for user, repo, level in self.grants():
            users.setdefault(user, {})[repo] = level.name.lower()
        # A TOML writer, not JSON's quoting: JSON escapes an emoji as a surrogate pair, which TOML
        # refuses ("not a Unicode scalar value"), and writes DEL as it is, which TOML forbids.
        return tomli_w.dumps({"users": users})


def sees_preferences(surface: Surface) -> bool:
    """Whether ``surface`` applies user preferences (code review uses repository facts only)."""
    return Surface(surface) is not Surface.CODE_REVIEW


def may_see(policy: AccessPolicy, actor: Actor, memory: Memory) -> bool:
    """Whether ``actor`` may see ``memory`` at all (any surface, its own repository)."""
    return may_see_record(policy, actor, memory.repo, memory.kind, memory.author)


def may_see_record(policy: AccessPolicy, actor: Actor, repo: str, kind: Kind, author: str) -> bool:
    """`may_see` on a stored record's columns, before a memory is built from it."""
    if kind is Kind.PREFERENCE:
        return author == actor.user
    return policy.level(actor.user, repo) >= Access.READ


def check_create(policy: AccessPolicy, actor: Actor, kind: Kind, repo: str, surface: Surface) -> None:
    """Raise `PermissionDenied` unless ``actor`` may store a memory of ``kind`` in ``repo``."""
    if kind is Kind.PREFERENCE:
        if not sees_preferences(surface):
            raise PermissionDenied("code review stores repository facts only, not preferences")
        return
    if policy.level(actor.user, repo) < Access.WRITE:
        raise PermissionDenied(f"{actor.user!r} needs write access to {repo!r} to store a repository fact")


def check_write(policy: AccessPolicy, actor: Actor, memory: Memory) -> None:
    """Raise unless ``actor`` (who may see ``memory``) may correct or retire it."""
    if memory.kind is Kind.PREFERENCE:
        return  # visible means authored by the actor
    if policy.level(actor.user, memory.repo) < Access.WRITE:
        raise PermissionDenied(f"{actor.user!r} needs write access to {memory.repo!r} to change a repository fact")


def check_delete(policy: AccessPolicy, actor: Actor, memory: Memory) -> None:
    """Raise unless ``actor`` (who may see ``memory``) may delete it: admin, or the author of a preference."""
    if memory.kind is Kind.PREFERENCE:
        return
    if policy.level(actor.user, memory.repo) < Access.ADMIN:
        raise PermissionDenied(f"{actor.user!r} needs admin access to {memory.repo!r} to delete a repository fact")
