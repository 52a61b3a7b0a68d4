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
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from memstore.access import (
    Access,
    AccessPolicy,
    Actor,
    check_create,
    check_delete,
    check_write,
    may_see_record,
    sees_preferences,
)
from memstore.backends import StoreOptions
from memstore.backends.checks import (
    chain_order,
    check_actor,
    check_correction,
    check_limit,
    check_memory_id,
    check_store_arguments,
    check_surface,
)
from memstore.backends.ranking import Weights, net_votes, rank
from memstore.clock import Clock
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.ids import IdFactory
from memstore.model import (
    MAX_REASON_CHARS,
    Kind,
    Memory,
    MemoryDraft,
    Status,
    Surface,
    Vote,
    check_text,
    validate_repo,
)
from memstore.store import MAX_RECENT_LIMIT
from memstore.validation import shown

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_RECENT_LIMIT",
    "REFERENCE_CAPABILITIES",
    "PagedRecordStore",
    "RecencyKey",
    "RecordStore",
    "Visibility",
    "chain_order",
    "check_actor",
    "check_correction",
    "check_limit",
    "check_memory_id",
    "check_store_arguments",
    "check_surface",
]

Visibility = Callable[[str, Kind, str], bool]  # (repo, kind, author) -> may the actor see it
RecencyKey = tuple[datetime, datetime, str]  # recent()'s order: refreshed_at, created_at, id (all descending)

REFERENCE_CAPABILITIES = frozenset(
    {"delete", "expiry", "history", "permissions", "preferences", "retire", "supersede", "sweep"}
)
MAX_QUERY_CHARS = 100_000


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
        draft, actor, surface = check_store_arguments(draft, actor, surface)
        check_create(self.access, actor, Kind(draft.kind), draft.repo, surface)
        now = self.clock.now()
        memory = Memory.from_draft(
            draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
        )
        if supersedes is None:
            self._insert(memory)
            return memory
        old = self._visible(check_memory_id(supersedes), actor, now)
        if old.repo != memory.repo:
            raise ValidationError(
                "repo", f"a correction stays in the repository of the memory it corrects ({old.repo})"
            )
        if old.kind is not memory.kind:
            raise ValidationError("kind", f"a correction keeps the kind of the memory it corrects ({old.kind.value})")
        check_write(self.access, actor, old)
        self._require_active(old, "correct")
        stored = self._supersede(old.id, memory, self._cutoff(now))
        if stored is None:
            self._raise_changed(old.id, actor, "correct")
        assert stored is not None
        return stored

    def store_all(self, drafts: Sequence[MemoryDraft], *, actor: Actor, surface: Surface) -> list[Memory]:
        """Store every draft as a new memory, or (when one is refused or a write fails) none:
        every draft is checked before the first is written (`memstore.store.BatchStore`)."""
        checked = [self.check_store(draft, actor=actor, surface=surface) for draft in drafts]
        actor, surface = check_actor(actor), check_surface(surface)
        now = self.clock.now()
        memories = [
            Memory.from_draft(draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now)
            for draft in checked
        ]
        self._insert_all(memories)
        return memories

    def check_store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface) -> MemoryDraft:
        """Raise what `store` would raise for ``draft`` as a new memory (validation, permission);
        return it validated. Nothing is written."""
        draft, actor, surface = check_store_arguments(draft, actor, surface)
        check_create(self.access, actor, Kind(draft.kind), draft.repo, surface)
        return draft

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        scope = self._scope(repo, actor, surface, limit)
        if scope is None:
            return []
        facts, preferences_of, cutoff = scope
        return self._recent(repo, facts=facts, preferences_of=preferences_of, cutoff=cutoff, limit=limit)

    def _scope(self, repo: str, actor: Actor, surface: Surface, limit: int) -> tuple[bool, str | None, datetime] | None:
        """A listing's arguments checked, and what it holds: whether the repository's facts, whose
        preferences, and the cutoff of the living; None when the actor sees nothing there."""
        actor, surface = check_actor(actor), check_surface(surface)
        validate_repo(repo)
        check_limit(limit)
        facts = self.access.level(actor.user, repo) >= Access.READ
        preferences_of = actor.user if sees_preferences(surface) else None
        if not facts and preferences_of is None:
            return None
        return facts, preferences_of, self._cutoff(self.clock.now())

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        return self._visible(check_memory_id(memory_id), check_actor(actor), self.clock.now())

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        actor = check_actor(actor)
        now = self.clock.now()
        memory = self._visible(check_memory_id(memory_id), actor, now)
        self._require_active(memory, "refresh")
        if not self._refresh(memory.id, now, self._cutoff(now)):
            self._raise_changed(memory.id, actor, "refresh")
        return replace(memory, refreshed_at=max(now, memory.refreshed_at))

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        actor = check_actor(actor)
        check_text(reason, "reason", MAX_REASON_CHARS, required=False)
        now = self.clock.now()
        memory = self._visible(check_memory_id(memory_id), actor, now)
        check_write(self.access, actor, memory)
        self._require_active(memory, "retire")
        if not self._retire(memory.id, reason, self._cutoff(now)):
            self._raise_changed(memory.id, actor, "retire")

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        actor = check_actor(actor)
        memory = self._visible(check_memory_id(memory_id), actor, self.clock.now())
        check_delete(self.access, actor, memory)
        self._delete_chain(memory.id)

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        actor = check_actor(actor)
        now = self.clock.now()
        memory = self._visible(check_memory_id(memory_id), actor, now)
        return self._chain(memory.id, self._cutoff(now))

    def sweep(self) -> int:
        return self._sweep(self._cutoff(self.clock.now()))

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        """The ``limit`` memories ``recent()`` would list (up to `MAX_RECENT_LIMIT` of them) that
        best serve ``query``: relevance to it, recency, verification and the users' votes,
        weighted (`memstore.backends.ranking`). What a user may not see is never a candidate."""
        return self._search(repo, query, actor=actor, surface=surface, limit=limit, weights=Weights())

    def _search(
        self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int, weights: Weights
    ) -> list[Memory]:
        check_limit(limit)
        check_text(query, "query", MAX_QUERY_CHARS, required=False)
        candidates = self.recent(repo, actor=actor, surface=surface, limit=MAX_RECENT_LIMIT)
        if not candidates:
            return []
        votes = net_votes(self._votes([m.id for m in candidates])) if weights.votes else {}
        return rank(candidates, query, votes=votes, weights=weights)[:limit]

    def vote(self, memory_id: str, *, actor: Actor, up: bool, reason: str) -> Vote:
        """Vote on an active memory: up (it held, it helped) or down (it misled), with the reason.
        A write: it needs what a retirement needs (write access to the repository; one's own
        preference), and a user's later vote on the same version replaces the earlier in what
        counts. The vote, as kept."""
        actor = check_actor(actor)
        if not isinstance(up, bool):
            raise ValidationError("up", "must be true or false")
        check_text(reason, "reason", MAX_REASON_CHARS, required=True)
        now = self.clock.now()
        memory = self._visible(check_memory_id(memory_id), actor, now)
        check_write(self.access, actor, memory)
        self._require_active(memory, "vote on")
        made = Vote(memory.id, actor.user, up, reason.strip(), now)
        if not self._vote(made, self._cutoff(now)):
            self._raise_changed(memory.id, actor, "vote on")
        return made

    def votes(self, memory_id: str, *, actor: Actor) -> list[Vote]:
        """Every vote on a memory version the actor may see, oldest first."""
        actor = check_actor(actor)
        memory = self._visible(check_memory_id(memory_id), actor, self.clock.now())
        return self._votes([memory.id])

    def repositories(self, *, actor: Actor) -> list[str]:
        """The repositories holding facts (active, retired or superseded, not expired) that
        ``actor`` may read, sorted (what ``memstore verify`` lists when it is asked for a
        repository the store holds nothing of)."""
        actor = check_actor(actor)
        held = self._repositories(self._cutoff(self.clock.now()))
        return [repo for repo in held if self.access.level(actor.user, repo) >= Access.READ]

    def _repositories(self, cutoff: datetime) -> list[str]:
        """The repositories of the facts whose chain is alive, sorted."""
        raise NotImplementedError

    # -- shared helpers -------------------------------------------------------------

    def _cutoff(self, now: datetime) -> datetime:
        """A chain is alive while its head's ``refreshed_at`` is after this instant."""
        return now - self.expiry

    def _visible(self, memory_id: str, actor: Actor, now: datetime) -> Memory:
        """The memory, or `NotFound` alike whether it does not exist or the actor may not see it."""

        def visible(repo: str, kind: Kind, author: str) -> bool:
            return may_see_record(self.access, actor, repo, kind, author)

        memory = self._load_visible(memory_id, self._cutoff(now), visible)
        if memory is None:
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
    def _vote(self, vote: Vote, cutoff: datetime) -> bool:
        """Keep ``vote`` while its memory is active and alive; False (nothing kept) otherwise."""

    @abstractmethod
    def _votes(self, memory_ids: Sequence[str]) -> list[Vote]:
        """Every vote on these memory versions, oldest first (by time, then as kept)."""

    @abstractmethod
    def _insert(self, memory: Memory) -> None:
        """Store a new memory as the root of a new chain."""

    def _insert_all(self, memories: Sequence[Memory]) -> None:
        """Store new, unrelated memories, every one or none. This one inserts them one by one and
        deletes those already inserted when one fails; a backend with transactions overrides it
        with one."""
        inserted: list[Memory] = []
        try:
            for memory in memories:
                self._insert(memory)
                inserted.append(memory)
        except BaseException:
            for memory in reversed(inserted):
                self._delete_chain(memory.id)
            raise

    @abstractmethod
    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> Memory | None:
        """If ``old_id`` is active and alive, mark it superseded and add ``new`` to its chain;
        return ``new`` as stored (its ``refreshed_at`` never before the old version's, so the
        chain's expiry never moves back), or None when ``old_id`` was not active and alive."""

    @abstractmethod
    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        """The memory, if its chain is alive."""

    def _load_visible(self, memory_id: str, cutoff: datetime, visible: Visibility) -> Memory | None:
        """The memory, if its chain is alive and ``visible(repo, kind, author)`` says the actor may
        see it. Override to judge visibility before building the memory, so that a hidden memory
        costs what a missing one costs."""
        memory = self._load(memory_id, cutoff)
        return memory if memory is not None and visible(memory.repo, memory.kind, memory.author) else None

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


class PagedRecordStore(RecordStore):
    """A `RecordStore` whose `_recent` also takes ``after``, so that it lists page after page
    (`memstore.store.PagedStore`). The built-in backends are; a subclass of `RecordStore` that
    is not stays a store with every rule, listing at most `MAX_RECENT_LIMIT` memories at once."""

    def recent_after(
        self, repo: str, after: Memory, *, actor: Actor, surface: Surface, limit: int = 50
    ) -> list[Memory]:
        """What `recent` would list after ``after``, in the same order (the next page)."""
        if not isinstance(after, Memory):
            raise ValidationError("after", f"must be a Memory, got {shown(after)}")
        scope = self._scope(repo, actor, surface, limit)
        if scope is None:
            return []
        facts, preferences_of, cutoff = scope
        key = (after.refreshed_at, after.created_at, after.id)
        return self._recent(repo, facts=facts, preferences_of=preferences_of, cutoff=cutoff, limit=limit, after=key)

    @abstractmethod
    def _recent(
        self,
        repo: str,
        *,
        facts: bool,
        preferences_of: str | None,
        cutoff: datetime,
        limit: int,
        after: RecencyKey | None = None,
    ) -> list[Memory]:
        """As `RecordStore._recent`, only what sorts after ``after`` (strictly older by the key)."""
