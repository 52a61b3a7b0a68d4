"""The small world every conformance test runs in: users, repositories, a clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from memstore.access import Access, AccessPolicy, Actor
from memstore.clock import Clock, FakeClock
from memstore.model import Kind, Memory, MemoryDraft, Surface
from memstore.store import MemoryStore

__all__ = [
    "ADMIN",
    "API",
    "LIB",
    "OUTSIDER",
    "READER",
    "STRANGER",
    "WEB",
    "WRITER",
    "ConformanceBase",
    "StoreFactory",
    "draft",
    "preference",
]

StoreFactory = Callable[[AccessPolicy, Clock, timedelta], MemoryStore]
"""Builds a new, empty store with the given policy, clock and expiry window."""

API, WEB, LIB = "acme/api", "acme/web", "other/lib"

ADMIN = Actor("ana")  # ADMIN on acme/api, READ on acme/web
WRITER = Actor("wes")  # WRITE on acme/api and acme/web
READER = Actor("rae")  # READ on acme/api
STRANGER = Actor("nox")  # no access anywhere
OUTSIDER = Actor("oli")  # WRITE on other/lib only


def draft(
    repo: str = API,
    subject: str = "API version synchronization",
    fact: str = "API version must match between client SDK, server routes, and documentation.",
    citations: tuple[str, ...] = ("src/client/sdk/constants.ts:12", "server/routes/api.go:8"),
    reason: str = "If the version drifts, the integration fails.",
) -> MemoryDraft:
    """A valid repository fact, with any field replaced."""
    return MemoryDraft(repo=repo, kind=Kind.FACT, subject=subject, fact=fact, citations=citations, reason=reason)


def preference(repo: str = API, fact: str = "Prefers small commits with imperative messages.") -> MemoryDraft:
    """A valid user preference."""
    return MemoryDraft(repo=repo, kind=Kind.PREFERENCE, subject="Commit style", fact=fact, reason="Stated by the user.")


class ConformanceBase:
    """Fixtures shared by the conformance test classes.

    The one fixture a store author supplies is ``store_factory`` (see `StoreFactory`).
    """

    EXPIRY = timedelta(days=28)

    @pytest.fixture
    def access(self) -> AccessPolicy:
        policy = AccessPolicy()
        policy.grant(ADMIN.user, API, Access.ADMIN).grant(ADMIN.user, WEB, Access.READ)
        policy.grant(WRITER.user, API, Access.WRITE).grant(WRITER.user, WEB, Access.WRITE)
        policy.grant(READER.user, API, Access.READ)
        policy.grant(OUTSIDER.user, LIB, Access.WRITE)
        return policy

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def store(self, store_factory: StoreFactory, access: AccessPolicy, clock: FakeClock) -> MemoryStore:
        return store_factory(access, clock, self.EXPIRY)

    @staticmethod
    def need(store: MemoryStore, capability: str) -> None:
        """Skip as not applicable when ``store`` does not claim ``capability``."""
        if capability not in store.capabilities:
            pytest.skip(f"not applicable: the store does not support {capability!r}")

    @staticmethod
    def ids(memories: list[Memory]) -> list[str]:
        return [m.id for m in memories]

    @staticmethod
    def fact(store: MemoryStore, actor: Actor = WRITER, *, repo: str = API, fact: str | None = None) -> Memory:
        """Store a repository fact as ``actor`` from the coding agent."""
        made = draft(repo=repo) if fact is None else draft(repo=repo, fact=fact)
        return store.store(made, actor=actor, surface=Surface.CODING_AGENT)
