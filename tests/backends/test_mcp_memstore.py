"""``mcp:memstore``: memstore's own MCP server as a store, through the conformance suite.

Every call is a tool call to a ``memstore mcp`` server over stdio, so the suite checks the server
as an agent meets it. One difference from the in-process store is pinned: a correction that
names a memory of another repository is refused as "not found", since a server sees only its
own repository (the in-process store, which sees both, says the correction must stay in its
repository).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from memstore import (
    Access,
    AccessPolicy,
    Actor,
    Citation,
    Clock,
    FakeClock,
    Kind,
    MemoryDraft,
    MemoryStore,
    Surface,
    UlidIds,
    open_store,
)
from memstore.backends.mcp_memstore import MemstoreServerStore
from memstore.errors import ConfigurationError, NotFound, PermissionDenied, ValidationError
from memstore.testing import StoreConformance

DIFFERENCES = {
    "test_correction_stays_in_its_repository": "a server sees one repository: the other's memory is not found there",
}


class TestMemstoreServer(StoreConformance):
    @pytest.fixture(autouse=True)
    def _differences(self, request: pytest.FixtureRequest) -> None:
        test = getattr(request.node, "originalname", request.node.name)
        if test in DIFFERENCES:
            request.applymarker(pytest.mark.xfail(strict=True, raises=NotFound, reason=DIFFERENCES[test]))

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Iterator[Callable[..., MemoryStore]]:
        counter = iter(range(1000))
        opened: list[MemstoreServerStore] = []

        def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
            where = tmp_path / f"s{next(counter)}"
            uri = f"mcp:memstore?folder={where}"
            store = open_store(uri, access=access, clock=clock, expiry=expiry, ids=UlidIds(9))
            assert isinstance(store, MemstoreServerStore)
            opened.append(store)
            return store

        yield make
        for store in opened:
            store.close()


def _draft(fact: str = "The API version is v2.1.4.") -> MemoryDraft:
    cited = [Citation("src/a.py", 3, snippet='API = "v2.1.4"', commit="ab" * 20)]
    return MemoryDraft("acme/api", Kind.FACT, "API version", fact, cited, "Clients send it.")


def test_a_round_trip_keeps_every_field_and_the_clock_and_ids_are_the_stores(tmp_path: Path) -> None:
    """What goes through the server comes back whole (the cited text and commit too); the servers
    tell the store's time, simulated months included; a seed gives the same ids."""
    made = []
    for run in ("one", "two"):
        policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE).grant("rae", "acme/api", Access.READ)
        clock = FakeClock()
        store = open_store(f"mcp:memstore?folder={tmp_path / run}", access=policy, clock=clock, ids=UlidIds(3))
        memory = store.store(_draft(), actor=Actor("ana"), surface=Surface.CODING_AGENT)
        assert memory.citations[0].snippet == 'API = "v2.1.4"'
        assert memory.citations[0].commit == "ab" * 20
        assert memory.created_at == clock.now()
        clock.advance(timedelta(days=20))
        assert store.refresh(memory.id, actor=Actor("rae")).refreshed_at == clock.now()
        clock.advance(timedelta(days=27))
        seen = store.recent("acme/api", actor=Actor("rae"), surface=Surface.CODE_REVIEW)
        assert seen == [store.get(memory.id, actor=Actor("ana"))]
        clock.advance(timedelta(days=2))  # 29 days since the refresh: expired
        assert store.recent("acme/api", actor=Actor("rae"), surface=Surface.CODE_REVIEW) == []
        with pytest.raises(NotFound):
            store.get(memory.id, actor=Actor("ana"))
        assert store.sweep() == 1
        made.append(memory)
        store.close()  # type: ignore[attr-defined]
    assert made[0] == made[1]


def test_the_servers_enforce_the_rules_and_learn_a_changed_policy(tmp_path: Path) -> None:
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE)
    store = open_store(f"mcp:memstore?folder={tmp_path}", access=policy, clock=FakeClock())
    with pytest.raises(PermissionDenied, match="needs write access"):
        store.store(_draft(), actor=Actor("rae"), surface=Surface.CLI)
    with pytest.raises(ValidationError) as caught:
        store.store(_draft(fact=" "), actor=Actor("ana"), surface=Surface.CLI)
    assert caught.value.field == "fact"
    policy.grant("rae", "acme/api", Access.WRITE)  # the servers read the policy when they start
    made = store.store(_draft(), actor=Actor("rae"), surface=Surface.CLI)
    assert made.author == "rae"
    with pytest.raises(ValidationError, match="at most 200"):
        store.recent("acme/api", actor=Actor("rae"), surface=Surface.CLI, limit=201)
    store.close()  # type: ignore[attr-defined]


def test_each_server_can_be_a_process_of_its_own(tmp_path: Path) -> None:
    """``?command=`` runs the servers as the command line says (here, as plain processes), with the
    same results as the forks of the fork server."""
    command = f"{sys.executable} -m memstore mcp"
    results = []
    for name, extra in (("forked", ""), ("plain", f"&command={command}")):
        policy = AccessPolicy().grant("ana", "acme/api", Access.ADMIN)
        store = open_store(f"mcp:memstore?folder={tmp_path / name}{extra}", access=policy, ids=UlidIds(5),
                           clock=FakeClock())  # fmt: skip
        memory = store.store(_draft(), actor=Actor("ana"), surface=Surface.CLI)
        store.retire(memory.id, actor=Actor("ana"), reason="wrong")
        results.append(store.history(memory.id, actor=Actor("ana")))
        store.close()  # type: ignore[attr-defined]
    assert results[0] == results[1]
    assert [m.status.value for m in results[0]] == ["retired"]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("mcp:memstore?folder=/tmp/x&store=memory:", "cannot share a store that lives in one process"),
        ("mcp:memstore?folder=/tmp/x&store=sqlite:///:memory:", "cannot share a store that lives in one process"),
        ("mcp:memstore?folder=/tmp/x&command=memstore serve", "must run memstore's mcp command"),
        ("mcp:memstore?folder=/tmp/x&colour=red", "unknown parameter(s) colour; known: command, folder, store"),
        ("mcp:nonesuch", "shipped: memstore, server-memory"),
    ],
)
def test_a_uri_it_cannot_use_is_refused_before_anything_starts(uri: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        open_store(uri, access=AccessPolicy())
    assert message in str(caught.value)


def test_a_store_behind_the_server_is_any_store_on_disk(tmp_path: Path) -> None:
    """``?store=ranked:`` puts the ranked store in the folder; the servers offer its search."""
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE)
    store = open_store(f"mcp:memstore?folder={tmp_path}&store=ranked:", access=policy, clock=FakeClock())
    assert "search" in store.capabilities
    store.store(_draft(), actor=Actor("ana"), surface=Surface.CLI)
    other = MemoryDraft("acme/api", Kind.FACT, "Retry policy", "Retries back off.", ["src/r.py:1"], "why")
    store.store(other, actor=Actor("ana"), surface=Surface.CLI)
    found = store.search("acme/api", "API version", actor=Actor("ana"), surface=Surface.CLI, limit=1)  # type: ignore[attr-defined]
    assert [m.subject for m in found] == ["API version"]
    assert store.inner == f"ranked:///{tmp_path / 'store.db'}"  # type: ignore[attr-defined]
    store.close()  # type: ignore[attr-defined]


def test_a_memory_another_client_wrote_is_found_by_its_repository(tmp_path: Path) -> None:
    """Two stores over the same servers' store: the second never saw the memory, and finds it."""
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE)
    one = open_store(f"mcp:memstore?folder={tmp_path / 'a'}&store=sqlite:///{tmp_path / 'shared.db'}",
                     access=policy, clock=FakeClock())  # fmt: skip
    made = one.store(_draft(), actor=Actor("ana"), surface=Surface.CLI)
    other = open_store(f"mcp:memstore?folder={tmp_path / 'b'}&store=sqlite:///{tmp_path / 'shared.db'}",
                       access=policy, clock=FakeClock())  # fmt: skip
    assert other.get(made.id, actor=Actor("ana")) == made
    with pytest.raises(NotFound):
        other.get(made.id, actor=Actor("nox"))
    one.close()  # type: ignore[attr-defined]
    other.close()  # type: ignore[attr-defined]


def test_users_named_with_emoji_quotes_and_backslashes_reach_their_servers(tmp_path: Path) -> None:
    """The servers read the policy from a TOML file the store writes: every name that is a valid
    user reaches its server and keeps its own access."""
    writer, reader = 'ana 😀 "the" \\ writer', "rae 🧑‍💻"
    policy = AccessPolicy().grant(writer, "acme/api", Access.WRITE).grant(reader, "acme/api", Access.READ)
    store = open_store(f"mcp:memstore?folder={tmp_path}", access=policy, clock=FakeClock())
    made = store.store(_draft(), actor=Actor(writer), surface=Surface.CLI)
    assert made.author == writer
    assert [m.id for m in store.recent("acme/api", actor=Actor(reader), surface=Surface.CLI)] == [made.id]
    with pytest.raises(PermissionDenied, match="needs write access"):
        store.store(_draft(), actor=Actor(reader), surface=Surface.CLI)
    store.close()  # type: ignore[attr-defined]
