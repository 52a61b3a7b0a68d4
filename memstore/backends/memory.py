"""``memory://``: an in-process store; the reference backend for tests and simulations.

Everything lives in dictionaries guarded by one lock, with an index of active memories
per repository (facts) and per author (preferences), so ``recent()`` looks only at the
memories it may return.
"""

from __future__ import annotations

import heapq
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memstore.backends import StoreOptions
from memstore.backends.base import PagedRecordStore, RecencyKey, chain_order
from memstore.errors import ConfigurationError
from memstore.model import Kind, Memory, Status, Vote

__all__ = ["InMemoryStore", "open_memory"]


@dataclass
class _Chain:
    ids: list[str]
    refreshed_at: datetime  # of the head: the chain's expiry clock


@dataclass
class _Tables:
    records: dict[str, Memory] = field(default_factory=dict)
    root_of: dict[str, str] = field(default_factory=dict)
    chains: dict[str, _Chain] = field(default_factory=dict)
    active_facts: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    active_preferences: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    votes: defaultdict[str, list[Vote]] = field(default_factory=lambda: defaultdict(list))  # by memory version


def _order(memory: Memory) -> RecencyKey:
    return (memory.refreshed_at, memory.created_at, memory.id)


class InMemoryStore(PagedRecordStore):
    """A complete `MemoryStore` held in process memory; gone when the process ends."""

    def __init__(self, options: StoreOptions) -> None:
        super().__init__(options)
        self._lock = threading.Lock()
        self._t = _Tables()

    def __repr__(self) -> str:
        return f"InMemoryStore({len(self._t.records)} records)"

    def _index(self, memory: Memory) -> set[str]:
        if memory.kind is Kind.FACT:
            return self._t.active_facts[memory.repo]
        return self._t.active_preferences[memory.author]

    def _alive(self, memory_id: str, cutoff: datetime) -> Memory | None:
        memory = self._t.records.get(memory_id)
        if memory is None or self._t.chains[self._t.root_of[memory_id]].refreshed_at <= cutoff:
            return None
        return memory

    def _insert(self, memory: Memory) -> None:
        with self._lock:
            self._t.records[memory.id] = memory
            self._t.root_of[memory.id] = memory.id
            self._t.chains[memory.id] = _Chain([memory.id], memory.refreshed_at)
            self._index(memory).add(memory.id)

    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> Memory | None:
        with self._lock:
            old = self._alive(old_id, cutoff)
            if old is None or old.status is not Status.ACTIVE:
                return None
            new = replace(new, refreshed_at=max(new.refreshed_at, old.refreshed_at))
            self._t.records[old_id] = replace(old, status=Status.SUPERSEDED)
            self._index(old).discard(old_id)
            root = self._t.root_of[old_id]
            self._t.records[new.id] = new
            self._t.root_of[new.id] = root
            chain = self._t.chains[root]
            chain.ids.append(new.id)
            chain.refreshed_at = max(chain.refreshed_at, new.refreshed_at)
            self._index(new).add(new.id)
            return new

    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        with self._lock:
            return self._alive(memory_id, cutoff)

    def _repositories(self, cutoff: datetime) -> list[str]:
        with self._lock:
            return sorted(
                {m.repo for m in self._t.records.values() if m.kind is Kind.FACT and self._alive(m.id, cutoff)}
            )

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
        with self._lock:
            ids: list[str] = []
            if facts:
                ids.extend(self._t.active_facts.get(repo, ()))
            if preferences_of is not None:
                ids.extend(self._t.active_preferences.get(preferences_of, ()))
            found = [m for m in (self._t.records[i] for i in ids) if m.refreshed_at > cutoff]
        if after is not None:
            found = [m for m in found if _order(m) < after]
        return heapq.nlargest(limit, found, key=_order)

    def _refresh(self, memory_id: str, now: datetime, cutoff: datetime) -> bool:
        with self._lock:
            memory = self._alive(memory_id, cutoff)
            if memory is None or memory.status is not Status.ACTIVE:
                return False
            refreshed = max(now, memory.refreshed_at)
            self._t.records[memory_id] = replace(memory, refreshed_at=refreshed)
            chain = self._t.chains[self._t.root_of[memory_id]]
            chain.refreshed_at = max(chain.refreshed_at, refreshed)
            return True

    def _retire(self, memory_id: str, reason: str, cutoff: datetime) -> bool:
        with self._lock:
            memory = self._alive(memory_id, cutoff)
            if memory is None or memory.status is not Status.ACTIVE:
                return False
            self._t.records[memory_id] = replace(memory, status=Status.RETIRED, retired_reason=reason)
            self._index(memory).discard(memory_id)
            return True

    def _vote(self, vote: Vote, cutoff: datetime) -> bool:
        with self._lock:
            memory = self._alive(vote.memory_id, cutoff)
            if memory is None or memory.status is not Status.ACTIVE:
                return False
            self._t.votes[vote.memory_id].append(vote)
            return True

    def _votes(self, memory_ids: Sequence[str]) -> list[Vote]:
        with self._lock:
            found = [(vote.at, n, vote) for i in memory_ids for n, vote in enumerate(self._t.votes.get(i, ()))]
        return [vote for _, _, vote in sorted(found, key=lambda kept: (kept[0], kept[1]))]

    def _drop_chain(self, root: str) -> int:
        chain = self._t.chains.pop(root)
        for memory_id in chain.ids:
            memory = self._t.records.pop(memory_id)
            del self._t.root_of[memory_id]
            self._t.votes.pop(memory_id, None)
            self._index(memory).discard(memory_id)
        return len(chain.ids)

    def _delete_chain(self, memory_id: str) -> None:
        with self._lock:
            root = self._t.root_of.get(memory_id)
            if root is not None:
                self._drop_chain(root)

    def _chain(self, memory_id: str, cutoff: datetime) -> list[Memory]:
        with self._lock:
            if self._alive(memory_id, cutoff) is None:
                return []
            chain = self._t.chains[self._t.root_of[memory_id]]
            versions = [self._t.records[i] for i in chain.ids]
        return chain_order(versions)

    def _sweep(self, cutoff: datetime) -> int:
        with self._lock:
            expired = [root for root, chain in self._t.chains.items() if chain.refreshed_at <= cutoff]
            return sum(self._drop_chain(root) for root in expired)


def open_memory(uri: str, options: StoreOptions) -> InMemoryStore:
    """Factory for ``memory://`` (nothing may follow the scheme)."""
    if uri.startswith("memory:") and uri.rstrip("/") not in {"memory:", "memory:/"}:
        raise ConfigurationError(f"'memory://' takes no path or options, got {uri!r}")
    return InMemoryStore(options)
