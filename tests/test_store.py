"""`open_store` and the backend registry."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import memstore.store as store_module
from memstore import (
    Access,
    AccessPolicy,
    Actor,
    ConfigurationError,
    FakeClock,
    Kind,
    MemoryDraft,
    MemoryStore,
    Surface,
    open_store,
)
from memstore.backends import StoreOptions, known_schemes, register_backend
from memstore.backends.memory import InMemoryStore, open_memory
from memstore.backends.sqlite import SqliteStore
from memstore.store import PagedStore, list_every


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
