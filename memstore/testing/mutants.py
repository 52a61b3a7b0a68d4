"""Store mutants: wrappers around any `MemoryStore` that each break exactly one promise of the
store contract, so that an evaluation can be tested by the mutants it kills.

A mutant is named by a URI that wraps another store's URI, ``mutant:NAME:INNER``::

    memstore eval scenarios/ --store mutant:ignores-retire:sqlite: --agent jit-verify

opens ``sqlite:`` (a fresh file per trial, as usual) and hands the run a store whose
``retire()`` does nothing. ``mutant:identity:INNER`` changes nothing: it shows that wrapping
alone fails no gate. `STORE_MUTANTS` lists every mutant with the promise it breaks and the
contract metric (and so the gate) of the harness that must catch it; the default library
fails each of them through that gate (`tests/testing/test_mutants.py`, and the kill table in
docs/store.md). A store author runs the same set against their own store::

    memstore eval --store mutant:forgets-some:mypackage.mystore:open_store ...

The mutants are deliberately broken test doubles: never use one as a store.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from memstore.access import Access, AccessPolicy, Actor
from memstore.backends import StoreOptions, resolve_backend, wraps
from memstore.errors import ConfigurationError, NotFound, PermissionDenied
from memstore.harness.records import PROMISE
from memstore.model import Citation, Kind, Memory, MemoryDraft, Status, Surface
from memstore.store import MemoryStore
from memstore.uri import StoreURI

__all__ = ["STORE_MUTANTS", "StoreMutant", "mutant_uri", "open_mutant", "split_mutant_uri"]

_MANY = 10_000  # what a mutant asks its inner store for when it needs everything


class _Wrapper:
    """Passes every call to the inner store unchanged (the identity mutant); mutants override one part."""

    def __init__(self, inner: MemoryStore, options: StoreOptions) -> None:
        self.inner, self.options = inner, options
        self.capabilities: frozenset[str] = frozenset(getattr(inner, "capabilities", frozenset()))
        self._seen: dict[str, Memory] = {}  # every memory this wrapper handed back from store(), by id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        made = self.inner.store(draft, actor=actor, surface=surface, supersedes=supersedes)
        self._seen[made.id] = made
        return made

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        return [self.shown(m) for m in self.inner.recent(repo, actor=actor, surface=surface, limit=limit)]

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        found = self.inner.search(repo, query, actor=actor, surface=surface, limit=limit)  # type: ignore[attr-defined]
        return [self.shown(m) for m in found]

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        return self.shown(self.inner.get(memory_id, actor=actor))

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        return self.shown(self.inner.refresh(memory_id, actor=actor))

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        self.inner.retire(memory_id, actor=actor, reason=reason)

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        self.inner.delete(memory_id, actor=actor)

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        return [self.shown(m) for m in self.inner.history(memory_id, actor=actor)]

    def sweep(self) -> int:
        return self.inner.sweep()

    def shown(self, memory: Memory) -> Memory:
        """A memory as this store hands it out (unchanged here)."""
        return memory

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


class _ForgetsAll(_Wrapper):
    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        return []

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        return []


class _ForgetsSome(_Wrapper):
    """Returns every other memory (a store that loses part of what it holds on the way out)."""

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        return super().recent(repo, actor=actor, surface=surface, limit=limit)[::2]

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        return super().search(repo, query, actor=actor, surface=surface, limit=limit)[::2]


class _UnkeptWrites(_Wrapper):
    """Acknowledges every third write with a memory it never keeps."""

    def __init__(self, inner: MemoryStore, options: StoreOptions) -> None:
        super().__init__(inner, options)
        self._writes = itertools.count(1)

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        if next(self._writes) % 3:
            return super().store(draft, actor=actor, surface=surface, supersedes=supersedes)
        now = self.options.clock.now()
        return Memory.from_draft(
            draft.validated(),
            memory_id=self.options.ids(now),
            author=actor.user,
            surface=surface,
            now=now,
            supersedes=supersedes,
        )


class _DropsSupersede(_Wrapper):
    """Stores a correction as a new memory: the wrong version stays active beside it."""

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        return super().store(draft, actor=actor, surface=surface, supersedes=None)


class _IgnoresRetire(_Wrapper):
    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        self.inner.get(memory_id, actor=actor)  # still says "not found" for what it cannot see


class _IgnoresRefresh(_Wrapper):
    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        return self.get(memory_id, actor=actor)


class _OldestFirst(_Wrapper):
    """Returns the oldest memories first, so ``limit`` keeps the oldest instead of the newest."""

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        everything = super().recent(repo, actor=actor, surface=surface, limit=_MANY)
        return everything[::-1][:limit]


class _Promiscuous(_Wrapper):
    """Adds to ``recent()`` memories it should not show, read from the inner store as their authors."""

    def extra(self, repo: str, actor: Actor, surface: Surface) -> list[Memory]:
        raise NotImplementedError

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        mine = super().recent(repo, actor=actor, surface=surface, limit=limit)
        ids = {m.id for m in mine}
        return (mine + [m for m in self.extra(repo, actor, surface) if m.id not in ids])[:limit]

    def _as_author(self, memory: Memory) -> Memory | None:
        try:
            return self.inner.get(memory.id, actor=Actor(memory.author))
        except (NotFound, PermissionDenied):
            return None

    def _live(self, keep: Callable[[Memory], bool]) -> list[Memory]:
        found = [m for m in self._seen.values() if keep(m)]
        live = [got for m in found if (got := self._as_author(m)) is not None and got.status is Status.ACTIVE]
        return sorted(live, key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)


class _OtherRepositories(_Promiscuous):
    def extra(self, repo: str, actor: Actor, surface: Surface) -> list[Memory]:
        return self._live(lambda m: m.kind is Kind.FACT and m.repo != repo)


class _OtherUsersPreferences(_Promiscuous):
    def extra(self, repo: str, actor: Actor, surface: Surface) -> list[Memory]:
        return self._live(lambda m: m.kind is Kind.PREFERENCE and m.author != actor.user)


class _PreferencesOnReview(_Wrapper):
    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        shown = Surface.CODING_AGENT if surface is Surface.CODE_REVIEW else surface
        return super().recent(repo, actor=actor, surface=shown, limit=limit)


class _Elevated(AccessPolicy):
    """READ counts as WRITE (the inner store of `read-can-write` enforces this policy)."""

    def __init__(self, policy: AccessPolicy) -> None:
        super().__init__()
        self.policy = policy

    def level(self, user: str, repo: str) -> Access:
        found = self.policy.level(user, repo)
        return Access.WRITE if found is Access.READ else found

    def grants(self) -> list[tuple[str, str, Access]]:
        return self.policy.grants()


def _shift(citation: Citation) -> Citation:
    end = citation.end_line + 1 if citation.end_line is not None else None
    return Citation.trusted(citation.path, citation.line + 1, end, citation.snippet, citation.commit)


def _move(citation: Citation) -> Citation:
    head, _, name = citation.path.rpartition("/")
    path = f"{head}/old_{name}" if head else f"old_{name}"
    return Citation.trusted(path, citation.line, citation.end_line, citation.snippet, citation.commit)


class _ShiftsLines(_Wrapper):
    def shown(self, memory: Memory) -> Memory:
        return replace(memory, citations=tuple(_shift(c) for c in memory.citations))


class _ChangesPaths(_Wrapper):
    def shown(self, memory: Memory) -> Memory:
        return replace(memory, citations=tuple(_move(c) for c in memory.citations))


class _TruncatesFacts(_Wrapper):
    def shown(self, memory: Memory) -> Memory:
        return replace(memory, fact=memory.fact[: max(1, len(memory.fact) // 2)])


class _ReturnsSuperseded(_Wrapper):
    """Hands out the older versions of every corrected memory beside its head."""

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        heads = super().recent(repo, actor=actor, surface=surface, limit=limit)
        found: list[Memory] = []
        for head in heads:
            found.append(head)
            if head.supersedes is not None:
                older = self.history(head.id, actor=actor)
                found += [m for m in older if m.id != head.id]
        return found[:limit]


class _GetIgnoresPermissions(_Wrapper):
    """``get()`` hands any memory it has stored to anyone who asks for it by id."""

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        try:
            return super().get(memory_id, actor=actor)
        except (NotFound, PermissionDenied):
            made = self._seen.get(memory_id)
            if made is None:
                raise
            return super().get(memory_id, actor=Actor(made.author))


@dataclass(frozen=True)
class StoreMutant:
    """A store that breaks one promise.

    Attributes:
        name: as in ``mutant:NAME:INNER``.
        breaks: the promise it breaks, in words.
        caught_by: the harness's contract metric whose gate must fail on it (None: the identity,
            which must fail no gate).
        wrap: builds the mutant around the inner store.
        options: how it changes the options the inner store is opened with (None: unchanged).
    """

    name: str
    breaks: str
    caught_by: str | None
    wrap: Callable[[MemoryStore, StoreOptions], MemoryStore]
    options: Callable[[StoreOptions], StoreOptions] | None = None


def _never_expires(options: StoreOptions) -> StoreOptions:
    return replace(options, expiry=timedelta(days=365_000))


def _read_can_write(options: StoreOptions) -> StoreOptions:
    return replace(options, access=_Elevated(options.access))


STORE_MUTANTS: dict[str, StoreMutant] = {
    m.name: m
    for m in (
        StoreMutant("identity", "nothing: every call goes to the inner store unchanged", None, _Wrapper),
        StoreMutant("forgets-all", "recent() returns nothing", PROMISE.forgotten, _ForgetsAll),
        StoreMutant("forgets-some", "recent() returns every other memory", PROMISE.forgotten, _ForgetsSome),
        StoreMutant(
            "unkept-writes", "every third write is acknowledged but never kept", PROMISE.unkept_writes, _UnkeptWrites
        ),
        StoreMutant(
            "drops-supersede",
            "a correction is stored as a new memory; the wrong version stays active",
            PROMISE.unsuperseded,
            _DropsSupersede,
        ),
        StoreMutant("ignores-retire", "retire() does nothing", PROMISE.retired_returned, _IgnoresRetire),
        StoreMutant(
            "ignores-refresh", "refresh() does not restart the expiry window", PROMISE.refresh_ignored, _IgnoresRefresh
        ),
        StoreMutant("never-expires", "memories never expire", PROMISE.expired_returned, _Wrapper, _never_expires),
        StoreMutant(
            "oldest-first", "recent() is oldest first, so limit cuts the newest", PROMISE.order_breaches, _OldestFirst
        ),
        StoreMutant(
            "other-repositories", "recent() adds other repositories' facts", PROMISE.scope_leaks, _OtherRepositories
        ),
        StoreMutant(
            "other-users-preferences",
            "recent() adds other users' preferences",
            PROMISE.preference_leaks,
            _OtherUsersPreferences,
        ),
        StoreMutant(
            "preferences-on-review",
            "the code-review surface gets what the coding agent gets, preferences included",
            PROMISE.surface_leaks,
            _PreferencesOnReview,
        ),
        StoreMutant(
            "read-can-write",
            "a user with READ access may write",
            PROMISE.permission_breaches,
            _Wrapper,
            _read_can_write,
        ),
        StoreMutant(
            "shifts-lines", "citations come back one line further down", PROMISE.altered_memories, _ShiftsLines
        ),
        StoreMutant(
            "changes-paths", "citations come back naming another file", PROMISE.altered_memories, _ChangesPaths
        ),
        StoreMutant("truncates-facts", "facts come back cut in half", PROMISE.altered_memories, _TruncatesFacts),
        StoreMutant(
            "returns-superseded",
            "superseded versions are returned beside their heads",
            PROMISE.superseded_returned,
            _ReturnsSuperseded,
        ),
        StoreMutant(
            "get-ignores-permissions",
            "get() returns any memory to anyone who names its id",
            PROMISE.get_leaks,
            _GetIgnoresPermissions,
        ),
    )
}


def split_mutant_uri(uri: str) -> tuple[StoreMutant, str]:
    """``mutant:NAME:INNER`` as the mutant and the inner store's URI.

    Raises:
        ConfigurationError: naming the known mutants, for a URI that names none.
    """
    parsed = StoreURI.parse(uri)
    if parsed.scheme != "mutant" or parsed.wrapper not in STORE_MUTANTS or parsed.inner is None:
        known = ", ".join(STORE_MUTANTS)
        raise ConfigurationError(f"store URI {parsed.redacted!r}: give mutant:NAME:INNER_URI with NAME one of {known}")
    return STORE_MUTANTS[parsed.wrapper], parsed.inner.text


def mutant_uri(name: str, inner: str) -> str:
    """The URI of mutant ``name`` around the store ``inner`` names."""
    return f"mutant:{name}:{inner}"


def _head_and_inner(uri: str) -> tuple[str, str]:
    """``mutant:NAME:INNER`` as (``mutant:NAME:``, ``INNER``), for `memstore.backends.wraps`."""
    _, inner = split_mutant_uri(uri)
    return StoreURI.parse(uri).head, inner


@wraps(_head_and_inner)
def open_mutant(uri: str, options: StoreOptions) -> MemoryStore:
    """The backend factory of ``mutant:`` URIs."""
    mutant, inner_uri = split_mutant_uri(uri)
    inner_options = mutant.options(options) if mutant.options is not None else options
    inner = resolve_backend(inner_uri)(inner_uri, inner_options)
    return mutant.wrap(inner, options)
