"""``repositories(actor=...)`` on every reference backend: the repositories whose facts the user may
read (active, retired or superseded while alive), sorted; not another user's unreadable one, not
one whose memories all expired. ``memstore verify`` lists them for a name the store holds nothing of."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, UlidIds, open_store
from tests.backends.postgres import URL, fresh_uri

BACKENDS = ["memory://", "sqlite:", pytest.param("postgresql", marks=pytest.mark.skipif(not URL, reason="no server"))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_repositories_a_user_may_read(backend: str, tmp_path: Path) -> None:
    uri = {"sqlite:": f"sqlite:///{tmp_path / 'm.db'}", "postgresql": fresh_uri("repos") if URL else ""}.get(
        backend, backend
    )
    policy = AccessPolicy().grant("ana", "*", Access.ADMIN).grant("rae", "acme/api", Access.READ)
    clock = FakeClock()
    store = open_store(uri, access=policy, clock=clock, ids=UlidIds(5), expiry=timedelta(days=28))
    ana = Actor("ana")

    def fact(repo: str) -> str:
        draft = MemoryDraft(repo, Kind.FACT, "s", f"A fact of {repo}.", ["src/a.py:1"], "r")
        return store.store(draft, actor=ana, surface=Surface.CLI).id

    fact("acme/gone")
    clock.advance(timedelta(days=20))
    store.retire(fact("acme/web"), actor=ana, reason="done")  # retired: still held while it is alive
    fact("acme/api")
    fact("acme/old")
    clock.advance(timedelta(days=10))  # acme/gone is 30 days old: expired
    assert store.repositories(actor=ana) == ["acme/api", "acme/old", "acme/web"]
    assert store.repositories(actor=Actor("rae")) == ["acme/api"]
    assert store.repositories(actor=Actor("nobody")) == []
