"""``naive://``: a NEGATIVE CONTROL, not a store to use.

Append-only, in process: no expiry, no supersede (a correction is just another memory),
no retirement or deletion, and no permission checks beyond the repository: anyone asking
about a repository gets every memory stored for it, other users' preferences included,
on every surface. It exists so that a side-by-side run shows what the reference store's
safety rules buy; the harness's own leak and expiry checks flag it, as they should.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from memstore.access import Actor
from memstore.backends import StoreOptions
from memstore.backends.base import check_limit
from memstore.clock import Clock
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.ids import IdFactory
from memstore.model import Memory, MemoryDraft, Surface, validate_repo

__all__ = ["NaiveStore", "open_naive"]


class NaiveStore:
    """The negative control (see the module docstring)."""

    capabilities: frozenset[str] = frozenset({"negative-control"})

    def __init__(self, options: StoreOptions) -> None:
        self.clock: Clock = options.clock
        self.ids: IdFactory = options.ids
        self._lock = threading.Lock()
        self._memories: dict[str, Memory] = {}

    def __repr__(self) -> str:
        return f"NaiveStore({len(self._memories)} memories; negative control)"

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        if not isinstance(draft, MemoryDraft):
            raise ValidationError("draft", f"must be a MemoryDraft, got {type(draft).__name__}")
        draft = draft.validated()
        now = self.clock.now()
        memory = Memory.from_draft(
            draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
        )
        with self._lock:
            self._memories[memory.id] = memory
        return memory

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        validate_repo(repo)
        check_limit(limit)
        with self._lock:
            found = [m for m in self._memories.values() if m.repo == repo]
        found.sort(key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)
        return found[:limit]

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            found = self._memories.get(memory_id)
        if found is None:
            raise NotFound(memory_id)
        return found

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            found = self._memories.get(memory_id)
            if found is None:
                raise NotFound(memory_id)
            found = self._memories[memory_id] = replace(found, refreshed_at=self.clock.now())
        return found

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        self.get(memory_id, actor=actor)
        raise Conflict("the naive store is append-only: nothing is retired")

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        self.get(memory_id, actor=actor)
        raise Conflict("the naive store is append-only: nothing is deleted")

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        return [self.get(memory_id, actor=actor)]

    def sweep(self) -> int:
        return 0


def open_naive(uri: str, options: StoreOptions) -> NaiveStore:
    """Factory for ``naive://``."""
    return NaiveStore(options)
