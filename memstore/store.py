"""The store protocol every memory store implements, and `open_store` to get one by URI."""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, runtime_checkable

from memstore.access import AccessPolicy, Actor
from memstore.backends import StoreOptions, resolve_backend
from memstore.clock import Clock, SystemClock
from memstore.errors import ConfigurationError
from memstore.ids import IdFactory, UlidIds
from memstore.model import Memory, MemoryDraft, Surface

__all__ = ["DEFAULT_EXPIRY", "MemoryStore", "open_store"]

DEFAULT_EXPIRY = timedelta(days=28)


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
