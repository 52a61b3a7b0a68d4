"""Conformance: the sliding expiry window and `sweep()` (docs/store.md, "The rules": expiry)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstore.access import AccessPolicy
from memstore.clock import FakeClock
from memstore.errors import NotFound
from memstore.model import Surface
from memstore.store import MemoryStore
from memstore.testing._world import ADMIN, API, READER, WRITER, ConformanceBase, StoreFactory, draft

_DAY = timedelta(days=1)
_TICK = timedelta(microseconds=1)


class ExpiryTests(ConformanceBase):
    """Expired once ``now >= refreshed_at + expiry``; refreshing and correcting restart the window."""

    def test_memory_lives_until_the_window_ends(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "expiry")
        memory = self.fact(store)
        clock.advance(28 * _DAY - _TICK)
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [memory.id]
        clock.advance(_TICK)
        assert store.recent(API, actor=READER, surface=Surface.CLI) == []
        with pytest.raises(NotFound):
            store.get(memory.id, actor=READER)

    def test_expired_memory_cannot_be_refreshed(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "expiry")
        memory = self.fact(store)
        clock.advance(28 * _DAY)
        with pytest.raises(NotFound):
            store.refresh(memory.id, actor=READER)

    def test_refresh_restarts_the_window(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "expiry")
        memory = self.fact(store)
        clock.advance(20 * _DAY)
        refreshed = store.refresh(memory.id, actor=READER)
        assert refreshed.refreshed_at == clock.now()
        assert refreshed.created_at == memory.created_at
        clock.advance(28 * _DAY - _TICK)
        assert store.get(memory.id, actor=READER).refreshed_at == refreshed.refreshed_at
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [memory.id]  # still in use
        clock.advance(_TICK)
        assert store.recent(API, actor=READER, surface=Surface.CLI) == []

    def test_correction_starts_a_new_window(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "expiry")
        self.need(store, "supersede")
        old = self.fact(store)
        clock.advance(20 * _DAY)
        new = store.store(draft(fact="v2"), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        clock.advance(27 * _DAY)
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [new.id]
        if "history" in store.capabilities:
            assert self.ids(store.history(new.id, actor=READER)) == [old.id, new.id]
        clock.advance(_DAY)
        assert store.recent(API, actor=READER, surface=Surface.CLI) == []

    def test_sweep_deletes_expired_memories_and_counts_them(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "sweep")
        doomed = [self.fact(store, fact=f"old {i}") for i in range(3)]
        clock.advance(10 * _DAY)
        kept = self.fact(store, fact="young")
        clock.advance(18 * _DAY)
        assert store.sweep() == 3
        assert store.sweep() == 0
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [kept.id]
        with pytest.raises(NotFound):
            store.get(doomed[0].id, actor=ADMIN)

    def test_sweep_keeps_live_memories(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "sweep")
        memory = self.fact(store)
        clock.advance(27 * _DAY)
        assert store.sweep() == 0
        assert store.get(memory.id, actor=READER) == memory

    def test_expiry_window_is_configurable(
        self, store_factory: StoreFactory, access: AccessPolicy, clock: FakeClock
    ) -> None:
        store = store_factory(access, clock, timedelta(days=7))
        self.need(store, "expiry")
        memory = self.fact(store)
        clock.advance(7 * _DAY - _TICK)
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [memory.id]
        clock.advance(_TICK)
        assert store.recent(API, actor=READER, surface=Surface.CLI) == []
