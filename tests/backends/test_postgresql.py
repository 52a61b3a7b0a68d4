"""The postgresql:// backend: opening, refusing, migrating, and the same concurrency and kill tests
as SQLite, against a real server ($MEMSTORE_TEST_POSTGRES_URL). The conformance suite and the
stateful test run on it too (tests/conftest.py, tests/testing/test_stateful.py)."""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime, timedelta

import pytest

from memstore import Access, AccessPolicy, Actor, Kind, MemoryDraft, Surface, UlidIds, open_store
from memstore.backends import sql
from memstore.clock import FakeClock
from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.store import BatchStore, PagedStore
from tests.backends.postgres import URL, fresh_uri, needs_postgres
from tests.backends.test_sqlite import _spawn  # the same writer processes, pointed at PostgreSQL

WES = Actor("wes")


def _policy() -> AccessPolicy:
    return AccessPolicy().grant("wes", "*", Access.ADMIN)


def _draft(n: int = 0) -> MemoryDraft:
    return MemoryDraft("acme/api", Kind.FACT, "pool", f"fact {n}", [f"a.py:{n % 50 + 1}"], "r")


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("postgresql://", "not a PostgreSQL URL"),
        ("postgresql://u@h:99999/db", "bad port"),
        ("postgresql://u@h/db?schema=Robert');DROP", 'schema "robert\');drop": letters, digits'),
    ],
)
def test_bad_urls_are_one_line_configuration_errors(uri: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        open_store(uri, access=_policy())


def test_an_unreachable_server_is_a_one_line_error_without_the_password() -> None:
    with pytest.raises(StorageError) as caught:
        open_store("postgresql://me:s3cret@127.0.0.1:1/db", access=_policy())
    message = str(caught.value)
    assert message.startswith("cannot connect to postgresql://me:***@127.0.0.1:1/db: ")
    assert "s3cret" not in message
    assert "\n" not in message


@needs_postgres
def test_wrong_credentials_are_a_one_line_error() -> None:
    wrong = (
        URL.replace("://", "://nobody_here:wrong@", 1)
        if "@" not in URL
        else URL.split("://")[0] + "://nobody_here:wrong@" + URL.split("@", 1)[1]
    )
    with pytest.raises(StorageError, match=r"cannot connect to .*nobody_here:\*\*\*@") as caught:
        open_store(wrong, access=_policy())
    assert "wrong" not in str(caught.value).replace("wrong@", "")


@needs_postgres
def test_memories_persist_across_opens_and_the_schema_is_stamped() -> None:
    import psycopg

    uri = fresh_uri()
    stored = open_store(uri, access=_policy()).store(_draft(), actor=WES, surface=Surface.CLI)
    again = open_store(uri, access=_policy())
    assert again.get(stored.id, actor=WES) == stored
    schema = uri.rsplit("schema=", 1)[1]
    with psycopg.connect(URL) as conn:
        meta: dict[str, str] = dict(conn.execute(f'SELECT key, value FROM "{schema}".memstore_meta').fetchall())
    assert meta == {"application": "memstore", "schema_version": str(sql.SCHEMA_VERSION)}


@needs_postgres
def test_a_schema_of_something_else_is_refused_and_left_untouched() -> None:
    import psycopg

    uri = fresh_uri("foreign")
    schema = uri.rsplit("schema=", 1)[1]
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".invoices (id int)')
    with pytest.raises(IncompatibleStore, match="holds tables of something else"):
        open_store(uri, access=_policy())
    with psycopg.connect(URL) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                              (schema,)).fetchall()  # fmt: skip
    assert tables == [("invoices",)]


@needs_postgres
def test_a_newer_schema_is_refused() -> None:
    import psycopg

    uri = fresh_uri()
    open_store(uri, access=_policy())
    schema = uri.rsplit("schema=", 1)[1]
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{schema}\".memstore_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(IncompatibleStore, match=r"written by a newer memstore \(schema version 99"):
        open_store(uri, access=_policy())


@needs_postgres
def test_recent_uses_its_index_and_sweep_deletes_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from memstore.backends import sql

    clock = FakeClock()
    uri = fresh_uri()
    store = open_store(uri, access=_policy(), clock=clock, expiry=timedelta(days=28))
    for n in range(25):
        store.store(_draft(n), actor=WES, surface=Surface.CLI)
    schema = uri.rsplit("schema=", 1)[1]
    with psycopg.connect(URL) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT id FROM \"{schema}\".memories WHERE repo = 'acme/api' AND status = 'active' "
            "AND kind = 'fact' AND refreshed_at > 0 ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT 5"
        ).fetchall())  # fmt: skip
    assert "memories_recent_facts" in plan
    monkeypatch.setattr(sql, "SWEEP_BATCH", 10)
    clock.advance(timedelta(days=29))
    assert store.sweep() == 25  # three batches: 10, 10, 5


@needs_postgres
@pytest.mark.slow
def test_concurrent_writers_in_several_processes_lose_nothing() -> None:
    uri = fresh_uri()
    open_store(uri, access=_policy())  # created once, before the writers race
    workers = [_spawn(uri, str(w), "100", "store") for w in range(4)]
    for proc in workers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    found = open_store(uri, access=_policy()).recent("acme/api", actor=WES, surface=Surface.CLI, limit=10_000)
    assert len(found) == 400
    assert sorted({m.subject for m in found}) == ["w0", "w1", "w2", "w3"]


@needs_postgres
@pytest.mark.slow
def test_processes_creating_one_store_at_once_create_it_once() -> None:
    uri = fresh_uri()
    workers = [_spawn(uri, str(w), "5", "store") for w in range(4)]
    for proc in workers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert len(open_store(uri, access=_policy()).recent("acme/api", actor=WES, surface=Surface.CLI, limit=100)) == 20


@needs_postgres
@pytest.mark.slow
def test_concurrent_corrections_of_one_memory_have_one_winner() -> None:
    uri = fresh_uri()
    target = open_store(uri, access=_policy()).store(_draft(), actor=WES, surface=Surface.CLI)
    workers = [_spawn(uri, str(w), "1", "correct", target.id) for w in range(4)]
    wins = []
    for proc in workers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        wins.append(int(out))
    assert sum(wins) == 1
    store = open_store(uri, access=_policy())
    assert len(store.history(target.id, actor=WES)) == 2
    assert len(store.recent("acme/api", actor=WES, surface=Surface.CLI)) == 1


@needs_postgres
@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.9])
def test_writer_killed_midway_leaves_a_consistent_store(delay: float) -> None:
    import psycopg

    uri = fresh_uri()
    proc = _spawn(uri, "0", "0", "forever")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    schema = uri.rsplit("schema=", 1)[1]
    with psycopg.connect(URL) as conn:
        rows = conn.execute(f'SELECT id, root, supersedes, status FROM "{schema}".memories').fetchall()
    assert len(rows) > 1
    by_root: dict[str, list[tuple[str, str | None, str]]] = {}
    for memory_id, root, supersedes, status in rows:
        by_root.setdefault(root, []).append((memory_id, supersedes, status))
    for versions in by_root.values():
        heads = [v for v in versions if v[2] != "superseded"]
        assert len(heads) == 1, versions
        successors = {v[1] for v in versions if v[1] is not None}
        assert successors == {v[0] for v in versions if v[2] == "superseded"}, versions
    store = open_store(uri, access=_policy())
    active = store.recent("acme/api", actor=WES, surface=Surface.CLI, limit=10_000)
    assert len(active) <= 1


@needs_postgres
def test_pages_follow_recent_in_its_order() -> None:
    clock = FakeClock()
    store = open_store(fresh_uri(), access=_policy(), clock=clock)
    assert isinstance(store, PagedStore)
    for n in range(10):  # three at each instant: pages break ties by created_at, then id
        if n % 3 == 0:
            clock.advance(timedelta(minutes=1))
        store.store(_draft(n), actor=WES, surface=Surface.CLI)
    whole = store.recent("acme/api", actor=WES, surface=Surface.CLI, limit=50)
    pages = [store.recent("acme/api", actor=WES, surface=Surface.CLI, limit=4)]
    while pages[-1]:
        pages.append(store.recent_after("acme/api", pages[-1][-1], actor=WES, surface=Surface.CLI, limit=4))
    assert [len(p) for p in pages] == [4, 4, 2, 0]
    assert [m.id for p in pages for m in p] == [m.id for m in whole]
    assert [m.fact for m in whole] == [f"fact {n}" for n in range(9, -1, -1)]


@needs_postgres
def test_store_all_is_one_transaction() -> None:
    made: list[str] = []
    inner = UlidIds(3)

    def ids(now: datetime) -> str:  # the third id repeats the first: the third insert fails in the server
        made.append(made[0] if len(made) == 2 else inner(now))
        return made[-1]

    store = open_store(fresh_uri(), access=_policy(), ids=ids)
    assert isinstance(store, BatchStore)
    with pytest.raises(StorageError):
        store.store_all([_draft(1), _draft(2), _draft(3)], actor=WES, surface=Surface.CLI)
    assert store.recent("acme/api", actor=WES, surface=Surface.CLI) == []
    assert [m.fact for m in store.store_all([_draft(4), _draft(5)], actor=WES, surface=Surface.CLI)] == [
        "fact 4",
        "fact 5",
    ]
