"""Conformance: who may see and change which memory (docs/store.md, "The rules": scope)."""

from __future__ import annotations

import pytest

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import NotFound, PermissionDenied
from memstore.model import Status, Surface
from memstore.store import MemoryStore
from memstore.testing._world import (
    ADMIN,
    API,
    LIB,
    OUTSIDER,
    READER,
    STRANGER,
    WEB,
    WRITER,
    ConformanceBase,
    draft,
    preference,
)


class ScopeTests(ConformanceBase):
    """Repository facts follow repository access; preferences follow their author."""

    @pytest.mark.parametrize("actor", [READER, STRANGER, OUTSIDER], ids=lambda a: a.user)
    def test_storing_a_fact_needs_write(self, store: MemoryStore, actor: Actor) -> None:
        self.need(store, "permissions")
        with pytest.raises(PermissionDenied):
            store.store(draft(), actor=actor, surface=Surface.CODING_AGENT)
        assert store.recent(API, actor=ADMIN, surface=Surface.CLI) == []

    @pytest.mark.parametrize("actor", [WRITER, ADMIN], ids=lambda a: a.user)
    def test_write_or_admin_may_store_a_fact(self, store: MemoryStore, actor: Actor) -> None:
        memory = self.fact(store, actor)
        assert self.ids(store.recent(API, actor=READER, surface=Surface.CODING_AGENT)) == [memory.id]

    def test_read_access_sees_facts_on_every_surface(self, store: MemoryStore) -> None:
        memory = self.fact(store)
        for surface in Surface:
            assert self.ids(store.recent(API, actor=READER, surface=surface)) == [memory.id]
        assert store.get(memory.id, actor=READER) == memory

    def test_no_access_sees_no_fact(self, store: MemoryStore) -> None:
        self.need(store, "permissions")
        memory = self.fact(store)
        assert store.recent(API, actor=STRANGER, surface=Surface.CODING_AGENT) == []
        with pytest.raises(NotFound):
            store.get(memory.id, actor=STRANGER)
        with pytest.raises(NotFound):
            store.history(memory.id, actor=OUTSIDER)

    def test_facts_never_cross_repositories(self, store: MemoryStore) -> None:
        api = self.fact(store, repo=API)
        web = self.fact(store, repo=WEB)
        assert self.ids(store.recent(API, actor=WRITER, surface=Surface.CLI)) == [api.id]
        assert self.ids(store.recent(WEB, actor=WRITER, surface=Surface.CLI)) == [web.id]

    def test_hidden_memory_is_not_found_like_a_missing_one(self, store: MemoryStore) -> None:
        self.need(store, "permissions")
        memory = self.fact(store)
        with pytest.raises(NotFound) as hidden:
            store.get(memory.id, actor=STRANGER)
        with pytest.raises(NotFound) as missing:
            store.get("mem_does_not_exist", actor=STRANGER)
        assert str(hidden.value) == str(missing.value).replace("mem_does_not_exist", memory.id)
        assert memory.fact not in str(hidden.value)
        for action in (
            lambda: store.refresh(memory.id, actor=STRANGER),
            lambda: store.retire(memory.id, actor=STRANGER, reason="x"),
            lambda: store.delete(memory.id, actor=STRANGER),
            lambda: store.store(preference(), actor=STRANGER, surface=Surface.CLI, supersedes=memory.id),
        ):
            with pytest.raises(NotFound):
                action()
        assert store.get(memory.id, actor=WRITER).status is Status.ACTIVE

    def test_revoked_access_hides_memories_at_once(self, store: MemoryStore, access: AccessPolicy) -> None:
        self.need(store, "permissions")
        memory = self.fact(store)
        access.grant(READER.user, API, Access.NONE)
        assert store.recent(API, actor=READER, surface=Surface.CLI) == []
        with pytest.raises(NotFound):
            store.get(memory.id, actor=READER)

    def test_preference_follows_its_author_across_repositories(self, store: MemoryStore) -> None:
        self.need(store, "preferences")
        pref = store.store(preference(repo=API), actor=STRANGER, surface=Surface.CLI)
        for repo in (API, WEB, LIB):
            for surface in (Surface.CODING_AGENT, Surface.CLI):
                assert self.ids(store.recent(repo, actor=STRANGER, surface=surface)) == [pref.id]
        assert store.get(pref.id, actor=STRANGER) == pref

    def test_preference_never_reaches_code_review(self, store: MemoryStore) -> None:
        self.need(store, "preferences")
        fact = self.fact(store)
        store.store(preference(), actor=WRITER, surface=Surface.CLI)
        assert self.ids(store.recent(API, actor=WRITER, surface=Surface.CODE_REVIEW)) == [fact.id]

    def test_code_review_cannot_store_a_preference(self, store: MemoryStore) -> None:
        self.need(store, "preferences")
        with pytest.raises(PermissionDenied):
            store.store(preference(), actor=WRITER, surface=Surface.CODE_REVIEW)
        assert store.recent(API, actor=WRITER, surface=Surface.CLI) == []

    @pytest.mark.parametrize("actor", [ADMIN, WRITER, READER], ids=lambda a: a.user)
    def test_nobody_else_sees_a_preference(self, store: MemoryStore, actor: Actor) -> None:
        self.need(store, "preferences")
        pref = store.store(preference(), actor=STRANGER, surface=Surface.CODING_AGENT)
        assert store.recent(API, actor=actor, surface=Surface.CLI) == []
        for action in (
            lambda: store.get(pref.id, actor=actor),
            lambda: store.refresh(pref.id, actor=actor),
            lambda: store.delete(pref.id, actor=actor),
            lambda: store.history(pref.id, actor=actor),
            lambda: store.retire(pref.id, actor=actor, reason="x"),
        ):
            with pytest.raises(NotFound):
                action()

    def test_recent_mixes_own_preferences_with_facts(self, store: MemoryStore, clock: object) -> None:
        self.need(store, "preferences")
        fact = self.fact(store)
        mine = store.store(preference(), actor=READER, surface=Surface.CLI)
        store.store(preference(), actor=WRITER, surface=Surface.CLI)
        assert set(self.ids(store.recent(API, actor=READER, surface=Surface.CLI))) == {fact.id, mine.id}

    def test_refresh_needs_read(self, store: MemoryStore) -> None:
        memory = self.fact(store)
        assert store.refresh(memory.id, actor=READER).id == memory.id

    @pytest.mark.parametrize("actor", [READER], ids=lambda a: a.user)
    def test_retire_and_correct_need_write(self, store: MemoryStore, actor: Actor) -> None:
        self.need(store, "permissions")
        memory = self.fact(store)
        with pytest.raises(PermissionDenied):
            store.retire(memory.id, actor=actor, reason="looks stale")
        with pytest.raises(PermissionDenied):
            store.store(draft(fact="corrected"), actor=actor, surface=Surface.CLI, supersedes=memory.id)
        assert self.ids(store.recent(API, actor=actor, surface=Surface.CLI)) == [memory.id]

    @pytest.mark.parametrize("actor", [WRITER, READER], ids=lambda a: a.user)
    def test_deleting_a_fact_needs_admin(self, store: MemoryStore, actor: Actor) -> None:
        self.need(store, "permissions")
        memory = self.fact(store)
        with pytest.raises(PermissionDenied):
            store.delete(memory.id, actor=actor)
        store.delete(memory.id, actor=ADMIN)
        with pytest.raises(NotFound):
            store.get(memory.id, actor=ADMIN)

    def test_author_may_delete_own_preference(self, store: MemoryStore) -> None:
        self.need(store, "preferences")
        pref = store.store(preference(), actor=STRANGER, surface=Surface.CLI)
        store.delete(pref.id, actor=STRANGER)
        assert store.recent(API, actor=STRANGER, surface=Surface.CLI) == []
