"""``search()`` and ``vote()`` on every reference backend (memory, SQLite, PostgreSQL).

Search ranks what ``recent()`` would list by relevance to the query, recency, verification and
the users' votes (`memstore.backends.ranking`); it never lists what the user may not see. A vote
is a write: it needs write access, is kept with its author, reason and time, counts once per
user (the latest), and goes with its memory's chain.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, UlidIds, open_store
from memstore.backends.ranking import net_votes
from memstore.errors import Conflict, NotFound, PermissionDenied, ValidationError
from memstore.model import Vote
from tests.backends.postgres import URL, fresh_uri

BACKENDS = ["memory://", "sqlite:", pytest.param("postgresql", marks=pytest.mark.skipif(not URL, reason="no server"))]
ANA, RAE, SAM = Actor("ana"), Actor("rae"), Actor("sam")


def _open(backend: str, folder: Path, clock: FakeClock):  # type: ignore[no-untyped-def]
    uri = {"sqlite:": f"sqlite:///{folder / 'm.db'}", "postgresql": fresh_uri("search") if URL else ""}.get(
        backend, backend
    )
    policy = (
        AccessPolicy()
        .grant("ana", "acme/api", Access.ADMIN)
        .grant("sam", "acme/api", Access.WRITE)
        .grant("rae", "acme/api", Access.READ)
        .grant("ana", "acme/web", Access.WRITE)
    )
    return open_store(uri, access=policy, clock=clock, ids=UlidIds(3), expiry=timedelta(days=28))


def _fact(store, subject: str, fact: str, repo: str = "acme/api", path: str = "src/a.py") -> str:  # type: ignore[no-untyped-def]
    draft = MemoryDraft(repo, Kind.FACT, subject, fact, [f"{path}:1"], "it matters")
    return str(store.store(draft, actor=ANA, surface=Surface.CLI).id)


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_puts_the_memory_the_task_needs_first_though_it_is_oldest(backend: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store = _open(backend, tmp_path, clock)
    needed = _fact(store, "Retry limit", "RETRY_LIMIT is 7 in src/retry.py; the client reads it.", path="src/retry.py")
    for n in range(12):
        clock.advance(timedelta(minutes=1))
        _fact(store, f"Logging {n}", f"The logger {n} writes JSON lines to stderr.", path=f"src/log{n}.py")
    _fact(store, "Web colours", "The web client's palette is in theme.ts.", repo="acme/web")
    recent = [m.id for m in store.recent("acme/api", actor=ANA, surface=Surface.CLI, limit=5)]
    found = [m.id for m in store.search("acme/api", "raise the retry limit", actor=ANA, surface=Surface.CLI, limit=5)]
    assert needed not in recent  # by recency it is the oldest of thirteen
    assert found[0] == needed
    assert len(found) == 5
    assert {m.repo for m in store.search("acme/api", "palette theme", actor=ANA, surface=Surface.CLI)} == {"acme/api"}
    # an empty query is recent()'s order
    assert [m.id for m in store.search("acme/api", "", actor=ANA, surface=Surface.CLI, limit=5)] == recent


@pytest.mark.parametrize("backend", BACKENDS)
def test_votes_sink_a_memory_users_found_wrong_below_an_equal_match(backend: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store = _open(backend, tmp_path, clock)
    older = _fact(store, "Pool size", "The database pool holds 10 connections.")
    clock.advance(timedelta(minutes=1))
    newer = _fact(store, "Pool size", "The database pool holds 20 connections.")

    def order() -> list[str]:
        return [m.id for m in store.search("acme/api", "database pool size", actor=ANA, surface=Surface.CLI)]

    assert order() == [newer, older]  # an equal match: the newer first
    store.vote(newer, actor=ANA, up=False, reason="the pool holds 10 now: config/db.py:4")
    store.vote(newer, actor=SAM, up=False, reason="misled my change")
    assert order() == [older, newer]
    store.vote(newer, actor=ANA, up=True, reason="it was right after all")  # ana's latest vote replaces hers
    store.vote(newer, actor=SAM, up=True, reason="checked again")
    assert order() == [newer, older]
    kept = store.votes(newer, actor=RAE)
    assert [(v.author, v.up) for v in kept] == [("ana", False), ("sam", False), ("ana", True), ("sam", True)]
    assert kept[0].reason == "the pool holds 10 now: config/db.py:4"
    assert kept[0].at == clock.now()
    assert net_votes(kept) == {newer: 2}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_verified_memory_ranks_above_an_unverified_equal_match(backend: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store = _open(backend, tmp_path, clock)
    checked = _fact(store, "Timeout", "The request timeout is 30 seconds.")
    clock.advance(timedelta(minutes=1))
    unchecked = _fact(store, "Timeout", "The request timeout is 30 seconds.")
    clock.advance(timedelta(minutes=1))
    store.refresh(checked, actor=ANA)  # a verifier found it true and refreshed it
    found = [m.id for m in store.search("acme/api", "request timeout", actor=ANA, surface=Surface.CLI)]
    assert found == [checked, unchecked]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_vote_is_a_write_on_a_live_active_memory(backend: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store = _open(backend, tmp_path, clock)
    memory = _fact(store, "Port", "The server listens on 8080.")
    with pytest.raises(PermissionDenied):
        store.vote(memory, actor=RAE, up=False, reason="read access only")
    with pytest.raises(NotFound):
        store.vote(memory, actor=Actor("mallory"), up=True, reason="cannot see it")
    with pytest.raises(ValidationError):
        store.vote(memory, actor=ANA, up=True, reason="   ")
    with pytest.raises(ValidationError):
        store.vote(memory, actor=ANA, up="yes", reason="not a bool")  # type: ignore[arg-type]
    assert store.votes(memory, actor=ANA) == []
    store.retire(memory, actor=ANA, reason="moved")
    with pytest.raises(Conflict):
        store.vote(memory, actor=ANA, up=True, reason="retired")
    with pytest.raises(NotFound):
        store.votes(memory, actor=Actor("mallory"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_votes_go_with_their_chain_deleted_or_expired(backend: str, tmp_path: Path) -> None:
    clock = FakeClock()
    store = _open(backend, tmp_path, clock)
    deleted = _fact(store, "A", "Deleted soon.")
    kept = _fact(store, "B", "Kept alive.")
    store.vote(deleted, actor=ANA, up=True, reason="fine")
    store.vote(kept, actor=ANA, up=True, reason="fine")
    store.delete(deleted, actor=ANA)
    clock.advance(timedelta(days=20))
    store.refresh(kept, actor=ANA)
    expiring = _fact(store, "C", "Expires.")
    store.vote(expiring, actor=SAM, up=False, reason="stale")
    assert len(store._votes([deleted, kept, expiring])) == 2  # type: ignore[attr-defined]
    clock.advance(timedelta(days=27))
    store.refresh(kept, actor=ANA)  # 27 days after its last refresh: still alive
    clock.advance(timedelta(days=2))  # C is 29 days unused: expired
    assert store.sweep() == 1
    assert [v.memory_id for v in store._votes([deleted, kept, expiring])] == [kept]  # type: ignore[attr-defined]


@given(
    st.lists(
        st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.sampled_from(["ana", "sam", "rae"]), st.booleans()),
        max_size=30,
    )
)
@settings(max_examples=200, deadline=None)
def test_net_votes_count_each_users_latest_vote_once(cast: list[tuple[str, str, bool]]) -> None:
    clock = FakeClock()
    votes = []
    for memory_id, author, up in cast:
        clock.advance(timedelta(seconds=1))
        votes.append(Vote(memory_id, author, up, "r", clock.now()))
    latest: dict[tuple[str, str], bool] = {}
    for memory_id, author, up in cast:
        latest[(memory_id, author)] = up
    expected: dict[str, int] = {}
    for (memory_id, _), up in latest.items():
        expected[memory_id] = expected.get(memory_id, 0) + (1 if up else -1)
    assert net_votes(votes) == expected
    assert net_votes(reversed(votes)) == expected  # by time, not by the order given
