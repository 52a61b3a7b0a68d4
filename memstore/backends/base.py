"""`RecordStore`: the rules of the store protocol on top of a backend's plain records.

A backend supplies a handful of atomic record operations (insert, supersede, refresh,
retire, delete a chain, sweep, and three reads); this class supplies validation,
permissions, expiry and the errors. Both built-in backends are written this way, and
a third-party store can be too: subclass, implement the ``_``-prefixed methods, and the
conformance suite's rules hold by construction.

Versions of one memory form a *chain* (the first version is its root). A chain lives
while its newest version does: it is expired once ``now >= head.refreshed_at + expiry``,
and then no version of it is returned, and `sweep` deletes them all.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from datetime import datetime, timedelta

from memstore.access import (
    Access,
    AccessPolicy,
    Actor,
    check_create,
    check_delete,
    check_write,
    may_see,
    sees_preferences,
)
from memstore.backends import StoreOptions
from memstore.clock import Clock
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.ids import IdFactory
from memstore.model import MAX_REASON_CHARS, Kind, Memory, MemoryDraft, Status, Surface, validate_repo

__all__ = ["MAX_RECENT_LIMIT", "REFERENCE_CAPABILITIES", "RecordStore"]

MAX_RECENT_LIMIT = 10_000
REFERENCE_CAPABILITIES = frozenset(
    {"delete", "expiry", "history", "permissions", "preferences", "retire", "supersede", "sweep"}
)


def _actor(actor: object) -> Actor:
    if not isinstance(actor, Actor):
        raise ValidationError("actor", f"must be an Actor, got {actor!r}")
    return actor


def _surface(surface: object) -> Surface:
    try:
        return Surface(str(surface))
    except ValueError as exc:
        raise ValidationError("surface", f"must be a Surface, got {surface!r}") from exc


def _memory_id(memory_id: object) -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise ValidationError("memory_id", f"must be a non-empty string, got {memory_id!r}")
    return memory_id


class RecordStore(ABC):
    """The reference semantics of `MemoryStore` over abstract, atomic record operations."""

    capabilities: frozenset[str] = REFERENCE_CAPABILITIES

    def __init__(self, options: StoreOptions) -> None:
        self.access: AccessPolicy = options.access
        self.clock: Clock = options.clock
        self.expiry: timedelta = options.expiry
        self.ids: IdFactory = options.ids

    # -- the protocol ---------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        if not isinstance(draft, MemoryDraft):
            raise ValidationError("draft", f"must be a MemoryDraft, got {type(draft).__name__}")
        actor, surface = _actor(actor), _surface(surface)
        draft = draft.validated()
        check_create(self.access, actor, Kind(draft.kind), draft.repo, surface)
        now = self.clock.now()
        memory = Memory.from_draft(
            draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
        )
        if supersedes is None:
            self._insert(memory)
            return memory
        old = self._visible(_memory_id(supersedes), actor, now)
        if old.repo != memory.repo:
            raise ValidationError(
                "repo", f"a correction stays in the repository of the memory it corrects ({old.repo})"
            )
        if old.kind is not memory.kind:
            raise ValidationError("kind", f"a correction keeps the kind of the memory it corrects ({old.kind.value})")
        check_write(self.access, actor, old)
        self._require_active(old, "correct")
        if not self._supersede(old.id, memory, self._cutoff(now)):
            self._raise_changed(old.id, actor, "correct")
        return memory

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        actor, surface = _actor(actor), _surface(surface)
        validate_repo(repo)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RECENT_LIMIT:
            raise ValidationError("limit", f"must be an integer from 1 to {MAX_RECENT_LIMIT}, got {limit!r}")
        facts = self.access.level(actor.user, repo) >= Access.READ
        preferences_of = actor.user if sees_preferences(surface) else None
        if not facts and preferences_of is None:
            return []
        now = self.clock.now()
        return self._recent(repo, facts=facts, preferences_of=preferences_of, cutoff=self._cutoff(now), limit=limit)

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        return self._visible(_memory_id(memory_id), _actor(actor), self.clock.now())

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        actor = _actor(actor)
        now = self.clock.now()
        memory = self._visible(_memory_id(memory_id), actor, now)
        self._require_active(memory, "refresh")
        if not self._refresh(memory.id, now, self._cutoff(now)):
            self._raise_changed(memory.id, actor, "refresh")
        return replace(memory, refreshed_at=max(now, memory.refreshed_at))

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        actor = _actor(actor)
        if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS:
            raise ValidationError("reason", f"must be a string of at most {MAX_REASON_CHARS} characters")
        now = self.clock.now()
        memory = self._visible(_memory_id(memory_id), actor, now)
        check_write(self.access, actor, memory)
        self._require_active(memory, "retire")
        if not self._retire(memory.id, reason, self._cutoff(now)):
            self._raise_changed(memory.id, actor, "retire")

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        actor = _actor(actor)
        memory = self._visible(_memory_id(memory_id), actor, self.clock.now())
        check_delete(self.access, actor, memory)
        self._delete_chain(memory.id)

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        actor = _actor(actor)
        now = self.clock.now()
        memory = self._visible(_memory_id(memory_id), actor, now)
        return self._chain(memory.id, self._cutoff(now))

    def sweep(self) -> int:
        return self._sweep(self._cutoff(self.clock.now()))

    # -- shared helpers -------------------------------------------------------------

    def _cutoff(self, now: datetime) -> datetime:
        """A chain is alive while its head's ``refreshed_at`` is after this instant."""
        return now - self.expiry

    def _visible(self, memory_id: str, actor: Actor, now: datetime) -> Memory:
        memory = self._load(memory_id, self._cutoff(now))
        if memory is None or not may_see(self.access, actor, memory):
            raise NotFound(memory_id)
        return memory

    @staticmethod
    def _require_active(memory: Memory, action: str) -> None:
        if memory.status is not Status.ACTIVE:
            raise Conflict(f"cannot {action} memory {memory.id!r}: it is {memory.status.value}")

    def _raise_changed(self, memory_id: str, actor: Actor, action: str) -> None:
        """Another writer changed the memory between our read and our write."""
        current = self._visible(memory_id, actor, self.clock.now())
        self._require_active(current, action)
        raise Conflict(f"memory {memory_id!r} changed while it was being updated; try again")

    # -- what a backend implements (each call atomic) --------------------------------

    @abstractmethod
    def _insert(self, memory: Memory) -> None:
        """Store a new memory as the root of a new chain."""

    @abstractmethod
    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> bool:
        """If ``old_id`` is active and alive, mark it superseded and add ``new`` to its chain."""

    @abstractmethod
    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        """The memory, if its chain is alive."""

    @abstractmethod
    def _recent(
        self, repo: str, *, facts: bool, preferences_of: str | None, cutoff: datetime, limit: int
    ) -> list[Memory]:
        """Active, alive facts of ``repo`` (if ``facts``) and preferences of ``preferences_of``
        (from any repository), ordered by ``refreshed_at``, ``created_at``, ``id``, all descending."""

    @abstractmethod
    def _refresh(self, memory_id: str, now: datetime, cutoff: datetime) -> bool:
        """If active and alive, set ``refreshed_at`` to ``now`` (never earlier)."""

    @abstractmethod
    def _retire(self, memory_id: str, reason: str, cutoff: datetime) -> bool:
        """If active and alive, mark retired with ``reason``."""

    @abstractmethod
    def _delete_chain(self, memory_id: str) -> None:
        """Delete every version of the memory's chain."""

    @abstractmethod
    def _chain(self, memory_id: str, cutoff: datetime) -> list[Memory]:
        """Every version of the memory's chain, oldest first (by ``created_at``, then ``id``)."""

    @abstractmethod
    def _sweep(self, cutoff: datetime) -> int:
        """Delete every version of every chain whose head was last refreshed at or before ``cutoff``."""
