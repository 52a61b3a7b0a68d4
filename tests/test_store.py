"""`open_store` and the backend registry."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memstore.store as store_module
from memstore import (
    DEFAULT_EXPIRY,
    Access,
    AccessPolicy,
    Actor,
    ConfigurationError,
    FakeClock,
    Kind,
    Memory,
    MemoryDraft,
    MemoryStore,
    PermissionDenied,
    StorageError,
    Surface,
    UlidIds,
    open_store,
)
from memstore.backends import StoreOptions, known_schemes, register_backend
from memstore.backends.memory import InMemoryStore, open_memory
from memstore.backends.sqlite import SqliteStore
from memstore.store import BatchStore, PagedStore, list_every


def test_builtin_schemes(tmp_path: Path) -> None:
    assert isinstance(open_store("memory://", access=AccessPolicy()), InMemoryStore)
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}", access=AccessPolicy())
    assert isinstance(store, SqliteStore)
    assert store.path == str(tmp_path / "m.db")


def test_stores_satisfy_the_protocol() -> None:
    assert isinstance(open_store("memory://", access=AccessPolicy()), MemoryStore)
    assert isinstance(open_store("sqlite://:memory:", access=AccessPolicy()), MemoryStore)


def test_unknown_scheme_names_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store("mongodb://db/memories", access=AccessPolicy())
    message = str(caught.value)
    assert "'mongodb://db/memories'" in message
    assert "memory://" in message
    assert "sqlite://" in message
    assert "package.module:function" in message


def test_module_factory_uri() -> None:
    store = open_store("memstore.backends.memory:open_memory", access=AccessPolicy())
    assert isinstance(store, InMemoryStore)


def test_module_factory_uri_that_does_not_import() -> None:
    with pytest.raises(ConfigurationError, match="cannot import store module 'no_such_module'"):
        open_store("no_such_module:factory", access=AccessPolicy())


def test_registered_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = store_module.BACKENDS
    monkeypatch.setattr(registry, "registered", dict(registry.registered))  # registered for this test only
    seen: list[str] = []

    @register_backend("probe")
    def probe(uri: str, options: StoreOptions) -> MemoryStore:
        seen.append(uri)
        return open_memory("memory://", options)

    open_store("probe://anything", access=AccessPolicy())
    assert seen == ["probe://anything"]
    assert "probe" in known_schemes()


def test_entry_point_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "memstore_plugin_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memstore-plugin-probe\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memstore.backends]\nplugged = memstore.backends.memory:open_memory\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "plugged" in known_schemes()
    assert isinstance(open_store("plugged://x", access=AccessPolicy()), InMemoryStore)


@pytest.mark.parametrize("expiry", [timedelta(0), timedelta(days=-1), 28])
def test_expiry_must_be_a_positive_timedelta(expiry: object) -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://", access=AccessPolicy(), expiry=expiry)  # type: ignore[arg-type]


def test_access_policy_is_required() -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://", access={"ana": "admin"})  # type: ignore[arg-type]


def test_memory_uri_takes_no_path() -> None:
    with pytest.raises(ConfigurationError):
        open_store("memory://somewhere", access=AccessPolicy())


OPENERS: dict[str, Callable[[Path], str]] = {
    "memory": lambda folder: "memory://",
    "sqlite": lambda folder: f"sqlite:///{folder / 'm.db'}",
    "ranked": lambda folder: f"ranked:///{folder / 'm.db'}",
}
ANA = Actor("ana")
START = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _draft(n: int, repo: str = "acme/api", kind: Kind = Kind.FACT) -> MemoryDraft:
    return MemoryDraft(repo, kind, f"subject {n}", f"fact {n}", ["src/a.py:1"] if kind is Kind.FACT else [], "")


@pytest.mark.parametrize("scheme", sorted(OPENERS))
def test_pages_follow_recent_in_its_order(tmp_path: Path, scheme: str) -> None:
    clock = FakeClock(START)
    store = open_store(OPENERS[scheme](tmp_path), access=AccessPolicy().grant("ana", "*", Access.ADMIN), clock=clock)
    assert isinstance(store, PagedStore)
    stored = []
    for n in range(11):  # three at each instant: pages must break ties by created_at, then id
        if n % 3 == 0:
            clock.advance(timedelta(minutes=1))
        kind = Kind.PREFERENCE if n % 4 == 0 else Kind.FACT
        stored.append(store.store(_draft(n, kind=kind), actor=ANA, surface=Surface.CLI))
    store.store(_draft(99, repo="acme/web"), actor=ANA, surface=Surface.CLI)  # another repository's fact
    clock.advance(timedelta(minutes=1))
    store.refresh(stored[0].id, actor=ANA)
    whole = store.recent("acme/api", actor=ANA, surface=Surface.CLI, limit=50)
    pages = [store.recent("acme/api", actor=ANA, surface=Surface.CLI, limit=4)]
    while pages[-1]:
        pages.append(store.recent_after("acme/api", pages[-1][-1], actor=ANA, surface=Surface.CLI, limit=4))
    assert [len(p) for p in pages] == [4, 4, 3, 0]
    assert [m.id for p in pages for m in p] == [m.id for m in whole]
    assert [m.subject for m in whole][:2] == ["subject 0", "subject 10"]
    assert len(whole) == 11


def test_a_listing_pages_past_the_most_one_call_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "MAX_RECENT_LIMIT", 3)
    store = open_store("memory://", access=AccessPolicy().grant("ana", "*", Access.ADMIN), clock=FakeClock(START))
    made = [store.store(_draft(n), actor=ANA, surface=Surface.CLI).id for n in range(7)]
    listing = list_every(store, "acme/api", actor=ANA, surface=Surface.CLI)
    assert [m.id for m in listing.memories] == made[::-1]
    assert listing.stopped_at is None
    assert listing.where_stopped() is None


def test_a_listing_of_a_store_that_cannot_page_says_where_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "MAX_RECENT_LIMIT", 3)
    store = open_store(
        "mutant:identity:memory://", access=AccessPolicy().grant("ana", "*", Access.ADMIN), clock=FakeClock(START)
    )
    assert not isinstance(store, PagedStore)
    made = [store.store(_draft(n), actor=ANA, surface=Surface.CLI).id for n in range(7)]
    listing = list_every(store, "acme/api", actor=ANA, surface=Surface.CLI)
    assert [m.id for m in listing.memories] == made[:3:-1]
    assert listing.stopped_at is not None
    assert listing.stopped_at.id == made[4]
    assert listing.where_stopped() == (
        f"stopped after 3 memories, at {made[4]} (refreshed 2025-03-01T12:00:00+00:00): this store lists no more "
        "at once and cannot page past them, so older ones were left out"
    )


@pytest.mark.parametrize("scheme", sorted(OPENERS))
def test_store_all_checks_every_draft_before_it_writes_one(tmp_path: Path, scheme: str) -> None:
    access = AccessPolicy().grant("ana", "acme/api", Access.WRITE).grant("ana", "acme/web", Access.READ)
    store = open_store(OPENERS[scheme](tmp_path), access=access, clock=FakeClock(START))
    assert isinstance(store, BatchStore)
    drafts = [_draft(1), _draft(2), _draft(3, repo="acme/web")]
    with pytest.raises(PermissionDenied, match="'ana' needs write access to 'acme/web'"):
        store.check_store(drafts[2], actor=ANA, surface=Surface.CLI)
    assert store.check_store(drafts[0], actor=ANA, surface=Surface.CLI) == drafts[0].validated()
    with pytest.raises(PermissionDenied):
        store.store_all(drafts, actor=ANA, surface=Surface.CLI)
    assert store.recent("acme/api", actor=ANA, surface=Surface.CLI) == []
    made = store.store_all(drafts[:2], actor=ANA, surface=Surface.CLI)
    assert [m.subject for m in store.recent("acme/api", actor=ANA, surface=Surface.CLI)] == ["subject 2", "subject 1"]
    assert [m.author for m in made] == ["ana", "ana"]


class _RepeatingIds:
    """Ids that repeat the first on the third call: the third write of a batch fails in the store."""

    def __init__(self) -> None:
        self.inner = UlidIds(3)
        self.made: list[str] = []

    def __call__(self, now: datetime) -> str:
        self.made.append(self.made[0] if len(self.made) == 2 else self.inner(now))
        return self.made[-1]


def test_store_all_in_sqlite_is_one_transaction(tmp_path: Path) -> None:
    store = open_store(
        f"sqlite:///{tmp_path / 'm.db'}", access=AccessPolicy().grant("ana", "*", Access.ADMIN), ids=_RepeatingIds()
    )
    assert isinstance(store, BatchStore)
    with pytest.raises(StorageError):
        store.store_all([_draft(1), _draft(2), _draft(3)], actor=ANA, surface=Surface.CLI)
    assert store.recent("acme/api", actor=ANA, surface=Surface.CLI) == []


class _FailsThirdInsert(InMemoryStore):
    def __init__(self, options: StoreOptions) -> None:
        super().__init__(options)
        self.inserts = 0

    def _insert(self, memory: Memory) -> None:
        self.inserts += 1
        if self.inserts == 3:
            raise StorageError("the disk is full")
        super()._insert(memory)


def test_store_all_takes_back_what_it_wrote_when_a_write_fails() -> None:
    options = StoreOptions(AccessPolicy().grant("ana", "*", Access.ADMIN), FakeClock(START), DEFAULT_EXPIRY, UlidIds(1))
    store = _FailsThirdInsert(options)
    with pytest.raises(StorageError, match="the disk is full"):
        store.store_all([_draft(1), _draft(2), _draft(3)], actor=ANA, surface=Surface.CLI)
    assert store.recent("acme/api", actor=ANA, surface=Surface.CLI) == []
    assert store.inserts == 3
