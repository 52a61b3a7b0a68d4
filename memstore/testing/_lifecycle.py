"""Conformance: correction (supersede), retirement, deletion, history and ordering."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstore.clock import FakeClock
from memstore.errors import Conflict, NotFound, ValidationError
from memstore.model import Kind, Status, Surface
from memstore.store import MemoryStore
from memstore.testing._world import ADMIN, API, READER, STRANGER, WEB, WRITER, ConformanceBase, draft, preference


class LifecycleTests(ConformanceBase):
    """A memory is corrected by a new version, retired, or deleted with its history."""

    def test_correction_supersedes_the_old_version(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "supersede")
        old = self.fact(store)
        clock.advance(timedelta(hours=1))
        new = store.store(
            draft(fact="API version is v2.2.0 everywhere."), actor=ADMIN, surface=Surface.CODE_REVIEW, supersedes=old.id
        )
        assert new.supersedes == old.id
        assert new.status is Status.ACTIVE
        assert new.author == "ana"
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [new.id]
        assert store.get(old.id, actor=READER).status is Status.SUPERSEDED

    def test_history_lists_every_version_oldest_first(self, store: MemoryStore, clock: FakeClock) -> None:
        self.need(store, "history")
        first = self.fact(store)
        clock.advance(timedelta(minutes=5))
        second = store.store(draft(fact="v2"), actor=WRITER, surface=Surface.CLI, supersedes=first.id)
        clock.advance(timedelta(minutes=5))
        third = store.store(draft(fact="v3"), actor=WRITER, surface=Surface.CLI, supersedes=second.id)
        for member in (first, second, third):
            chain = store.history(member.id, actor=READER)
            assert self.ids(chain) == [first.id, second.id, third.id]
            assert [m.status for m in chain] == [Status.SUPERSEDED, Status.SUPERSEDED, Status.ACTIVE]

    def test_history_of_an_uncorrected_memory_is_itself(self, store: MemoryStore) -> None:
        self.need(store, "history")
        memory = self.fact(store)
        assert store.history(memory.id, actor=READER) == [memory]

    def test_a_superseded_version_cannot_be_corrected_again(self, store: MemoryStore) -> None:
        self.need(store, "supersede")
        old = self.fact(store)
        store.store(draft(fact="first correction"), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        with pytest.raises(Conflict):
            store.store(draft(fact="second correction"), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        assert len(store.recent(API, actor=WRITER, surface=Surface.CLI)) == 1

    def test_correction_stays_in_its_repository(self, store: MemoryStore) -> None:
        self.need(store, "supersede")
        old = self.fact(store)
        with pytest.raises(ValidationError) as caught:
            store.store(draft(repo=WEB), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        assert caught.value.field == "repo"
        assert store.get(old.id, actor=WRITER).status is Status.ACTIVE
        assert store.recent(WEB, actor=WRITER, surface=Surface.CLI) == []

    def test_correction_keeps_the_kind(self, store: MemoryStore) -> None:
        self.need(store, "supersede")
        old = self.fact(store)
        with pytest.raises(ValidationError) as caught:
            store.store(preference(), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        assert caught.value.field == "kind"

    def test_correcting_an_unknown_id_is_not_found(self, store: MemoryStore) -> None:
        self.need(store, "supersede")
        with pytest.raises(NotFound):
            store.store(draft(), actor=WRITER, surface=Surface.CLI, supersedes="mem_nope")
        assert store.recent(API, actor=WRITER, surface=Surface.CLI) == []

    def test_author_corrects_own_preference(self, store: MemoryStore) -> None:
        self.need(store, "supersede")
        self.need(store, "preferences")
        old = store.store(preference(), actor=STRANGER, surface=Surface.CLI)
        new = store.store(
            preference(fact="Prefers squash merges."), actor=STRANGER, surface=Surface.CODING_AGENT, supersedes=old.id
        )
        assert self.ids(store.recent(WEB, actor=STRANGER, surface=Surface.CLI)) == [new.id]
        assert new.kind is Kind.PREFERENCE

    def test_retired_memory_leaves_use_but_keeps_its_history(self, store: MemoryStore) -> None:
        self.need(store, "retire")
        memory = self.fact(store)
        store.retire(memory.id, actor=WRITER, reason="citations point at deleted code")
        assert store.recent(API, actor=WRITER, surface=Surface.CLI) == []
        retired = store.get(memory.id, actor=READER)
        assert retired.status is Status.RETIRED
        if "history" in store.capabilities:
            assert [m.status for m in store.history(memory.id, actor=READER)] == [Status.RETIRED]

    def test_retired_memory_cannot_be_refreshed_or_corrected(self, store: MemoryStore) -> None:
        self.need(store, "retire")
        memory = self.fact(store)
        store.retire(memory.id, actor=WRITER, reason="wrong")
        with pytest.raises(Conflict):
            store.refresh(memory.id, actor=WRITER)
        with pytest.raises(Conflict):
            store.retire(memory.id, actor=WRITER, reason="again")
        if "supersede" in store.capabilities:
            with pytest.raises(Conflict):
                store.store(draft(), actor=WRITER, surface=Surface.CLI, supersedes=memory.id)

    def test_delete_removes_every_version(self, store: MemoryStore) -> None:
        self.need(store, "delete")
        old = self.fact(store)
        new = store.store(draft(fact="v2"), actor=WRITER, surface=Surface.CLI, supersedes=old.id)
        store.delete(old.id, actor=ADMIN)
        for memory_id in (old.id, new.id):
            with pytest.raises(NotFound):
                store.get(memory_id, actor=ADMIN)
        assert store.recent(API, actor=ADMIN, surface=Surface.CLI) == []

    def test_delete_of_unknown_id_is_not_found(self, store: MemoryStore) -> None:
        self.need(store, "delete")
        with pytest.raises(NotFound):
            store.delete("mem_nope", actor=ADMIN)

    def test_recent_is_newest_refreshed_first(self, store: MemoryStore, clock: FakeClock) -> None:
        first = self.fact(store, fact="first")
        clock.advance(timedelta(minutes=1))
        second = self.fact(store, fact="second")
        clock.advance(timedelta(minutes=1))
        third = self.fact(store, fact="third")
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [third.id, second.id, first.id]
        clock.advance(timedelta(minutes=1))
        store.refresh(first.id, actor=READER)
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [first.id, third.id, second.id]

    def test_recent_ties_are_broken_by_created_at_then_id(self, store: MemoryStore, clock: FakeClock) -> None:
        older = self.fact(store, fact="older")
        clock.advance(timedelta(minutes=1))
        newer = self.fact(store, fact="newer")
        store.refresh(older.id, actor=READER)  # both refreshed now; created_at decides
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CLI)) == [newer.id, older.id]
        same = [self.fact(store, fact=f"same {i}") for i in range(3)]  # same instant: id decides
        top = self.ids(store.recent(API, actor=READER, surface=Surface.CLI, limit=3))
        assert top == sorted((m.id for m in same), reverse=True)

    def test_recent_honours_the_limit(self, store: MemoryStore, clock: FakeClock) -> None:
        made = []
        for i in range(7):
            made.append(self.fact(store, fact=f"fact {i}"))
            clock.advance(timedelta(seconds=1))
        got = store.recent(API, actor=READER, surface=Surface.CLI, limit=3)
        assert self.ids(got) == [m.id for m in reversed(made)][:3]
        assert len(store.recent(API, actor=READER, surface=Surface.CLI)) == 7
