"""The store protocol every memory store implements, and `open_store` to get one by URI.

Backends are found through `BACKENDS` (the plug-in table's store registry, `memstore.plugins`:
memstore's own backends are entry points of its distribution); `memstore.backends` holds the
functions to register and resolve them and the built-in backends themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol, runtime_checkable

from memstore import plugins
from memstore.access import AccessPolicy, Actor
from memstore.clock import Clock, SystemClock
from memstore.errors import ConfigurationError
from memstore.ids import IdFactory, UlidIds
from memstore.model import Memory, MemoryDraft, Surface
from memstore.registry import REFERENCE, Registry, import_reference
from memstore.uri import StoreURI

__all__ = [
    "BACKENDS",
    "DEFAULT_EXPIRY",
    "MAX_RECENT_LIMIT",
    "BackendFactory",
    "BatchStore",
    "Listing",
    "MemoryStore",
    "PagedStore",
    "StoreOptions",
    "list_every",
    "open_store",
]

DEFAULT_EXPIRY = timedelta(days=28)
MAX_RECENT_LIMIT = 10_000  # the most memories one recent() call hands


@dataclass(frozen=True)
class StoreOptions:
    """What every backend is opened with.

    ``read_only``: the caller will only read (a backend that can open its target read-only
    does, and refuses writes with `StorageError`); ``create``: whether a store that does not
    exist yet may be created (``False``: opening one that is not there is a
    `ConfigurationError`, so a mistyped path is never silently a new, empty store).
    """

    access: AccessPolicy
    clock: Clock
    expiry: timedelta
    ids: IdFactory
    read_only: bool = False
    create: bool = True


@runtime_checkable
class MemoryStore(Protocol):
    """A repository-scoped memory store (see docs/store.md, "The rules" and "Plugging in your own store").

    ``capabilities`` lists the optional parts a store supports, such as ``"search"``,
    ``"history"``, ``"permissions"``, ``"expiry"``; the conformance suite marks the
    tests of a missing capability as not applicable.
    """

    capabilities: frozenset[str]

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        """Validate and store ``draft``; with ``supersedes``, as a correction of that memory."""
        ...

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        """Active memories for ``repo`` that ``actor`` may see on ``surface``, newest first."""
        ...

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        """One memory by id, or `NotFound`."""
        ...

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        """Mark a memory validated and used: its expiry window starts again now."""
        ...

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        """Take a memory out of use without a replacement."""
        ...

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        """Delete a memory with every version of it."""
        ...

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        """Every version of the memory's chain, oldest first."""
        ...

    def sweep(self) -> int:
        """Delete expired memories; return how many records were deleted."""
        ...


@runtime_checkable
class PagedStore(MemoryStore, Protocol):
    """A store that lists past one `recent()` call: page after page, in `recent()`'s order."""

    def recent_after(
        self, repo: str, after: Memory, *, actor: Actor, surface: Surface, limit: int = 50
    ) -> list[Memory]:
        """What `recent()` would list after ``after`` (by ``refreshed_at``, ``created_at``, ``id``)."""
        ...


@runtime_checkable
class BatchStore(MemoryStore, Protocol):
    """A store that checks a write without making it, and stores many drafts as one."""

    def check_store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface) -> MemoryDraft:
        """Raise what `store()` would raise for ``draft`` (validation, permission); store nothing."""
        ...

    def store_all(self, drafts: Sequence[MemoryDraft], *, actor: Actor, surface: Surface) -> list[Memory]:
        """Store every draft as a new memory, or none of them."""
        ...


@dataclass(frozen=True)
class Listing:
    """Every live memory of a repository that one actor may see on a surface, newest first.

    ``stopped_at`` is the last memory listed when the store may hold more than it can list (it
    hands `MAX_RECENT_LIMIT` at most and cannot page); None when the listing is whole.
    """

    memories: tuple[Memory, ...]
    stopped_at: Memory | None = None

    def where_stopped(self) -> str | None:
        """Where an incomplete listing stopped, as a sentence for the user; None when it is whole."""
        if self.stopped_at is None:
            return None
        at = self.stopped_at
        return (
            f"stopped after {len(self.memories):,} memories, at {at.id} (refreshed {at.refreshed_at.isoformat()}): "
            "this store lists no more at once and cannot page past them, so older ones were left out"
        )


def list_every(store: MemoryStore, repo: str, *, actor: Actor, surface: Surface) -> Listing:
    """Every memory `recent()` would list without a limit: a `PagedStore` page after page, any
    other store as far as one `recent()` call goes (then `Listing.stopped_at` says where).

    A memory refreshed while the pages are read moves ahead of them and may be missed."""
    found = store.recent(repo, actor=actor, surface=surface, limit=MAX_RECENT_LIMIT)
    if len(found) < MAX_RECENT_LIMIT:
        return Listing(tuple(found))
    if not isinstance(store, PagedStore):
        return Listing(tuple(found), stopped_at=found[-1])
    page = found
    while len(page) == MAX_RECENT_LIMIT:
        page = store.recent_after(repo, page[-1], actor=actor, surface=surface, limit=MAX_RECENT_LIMIT)
        found += page
    return Listing(tuple(found))


def open_store(
    uri: str,
    *,
    access: AccessPolicy,
    clock: Clock | None = None,
    expiry: timedelta | None = None,
    ids: IdFactory | None = None,
    read_only: bool = False,
    create: bool = True,
) -> MemoryStore:
    """Open the store that ``uri`` names.

    Args:
        uri: ``memory://``, ``sqlite:///path/to.db``, a scheme registered by a plug-in,
            or ``package.module:factory``.
        access: the access policy the store enforces.
        clock: where the store reads the time; the system clock by default.
        expiry: the sliding expiry window; 28 days by default.
        ids: the id factory; seed one (``UlidIds(seed)``) for reproducible ids.
        read_only: open only to read (backends that can, open their target read-only).
        create: whether a store that does not exist yet may be created.

    Raises:
        ConfigurationError: for an unknown scheme or an unusable option.
        IncompatibleStore: when the target exists but is not a store this version can open.
    """
    if not isinstance(access, AccessPolicy):
        raise ConfigurationError("open_store() needs an AccessPolicy as access=")
    window = DEFAULT_EXPIRY if expiry is None else expiry
    if not isinstance(window, timedelta) or window <= timedelta(0):
        raise ConfigurationError(f"expiry must be a positive timedelta, got {expiry!r}")
    options = StoreOptions(
        access=access,
        clock=clock if clock is not None else SystemClock(),
        expiry=window,
        ids=ids if ids is not None else UlidIds(),
        read_only=read_only,
        create=create and not read_only,
    )
    return resolve_backend(uri)(uri, options)


BackendFactory = Callable[[str, StoreOptions], MemoryStore]
BACKENDS: Registry[BackendFactory] = plugins.STORES  # the built-ins: memstore's ``memstore.backends`` entry points


def resolve_backend(uri: str) -> BackendFactory:
    """The factory for ``uri``: its scheme's, or the ``package.module:factory`` it names.

    Raises:
        ConfigurationError: for text that is no store URI (`StoreURI.parse`), or naming the known
            schemes, when none fits.
    """
    parsed = StoreURI.parse(uri)
    if parsed.scheme and BACKENDS.knows(parsed.scheme):
        return BACKENDS.find(parsed.scheme)  # type: ignore[return-value]
    if "://" not in uri and REFERENCE.match(uri):  # a reference, or a scheme nobody registered in its form
        return import_reference(uri, BACKENDS.kind)  # type: ignore[no-any-return]
    known = ", ".join(f"{s}://" for s in BACKENDS.names() if s != "mutant")
    raise ConfigurationError(
        f"unknown store URI {parsed.redacted!r}: known schemes are {known}, "
        "or name a factory as 'package.module:function'"
    )
