"""The SQL layer both SQL backends share (`memstore.backends.sql`): the schema it makes in each
dialect is the one earlier releases made, a store they wrote opens and reads, and a sweep
deletes in batches on both."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, open_store
from memstore.backends import sql
from memstore.backends.sqlite_file import APPLICATION_ID
from tests.backends.postgres import URL, fresh_uri, needs_postgres

WES = Actor("wes")
POLICY = AccessPolicy().grant("wes", "*", Access.ADMIN)

# Schema version 1 as the SQLite backend wrote it before the layer was shared, word for word.
SQLITE_V1 = """
    CREATE TABLE memories (
        id                 TEXT PRIMARY KEY,
        root               TEXT NOT NULL,
        repo               TEXT NOT NULL,
        kind               TEXT NOT NULL CHECK (kind IN ('fact', 'preference')),
        subject            TEXT NOT NULL,
        fact               TEXT NOT NULL,
        citations          TEXT NOT NULL,
        reason             TEXT NOT NULL,
        author             TEXT NOT NULL,
        surface            TEXT NOT NULL,
        created_at         INTEGER NOT NULL,
        refreshed_at       INTEGER NOT NULL,
        chain_refreshed_at INTEGER NOT NULL,
        supersedes         TEXT,
        status             TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'retired')),
        retired_reason     TEXT
    );
    CREATE INDEX memories_recent_facts ON memories (repo, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'fact';
    CREATE INDEX memories_recent_preferences ON memories (author, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'preference';
    CREATE INDEX memories_root ON memories (root);
    CREATE INDEX memories_expiry ON memories (chain_refreshed_at);
    """
# And as the PostgreSQL backend wrote it, in the schema {s}.
POSTGRESQL_V1 = """
    CREATE TABLE {s}.memories (
        id                 TEXT PRIMARY KEY,
        root               TEXT NOT NULL,
        repo               TEXT NOT NULL,
        kind               TEXT NOT NULL CHECK (kind IN ('fact', 'preference')),
        subject            TEXT NOT NULL,
        fact               TEXT NOT NULL,
        citations          TEXT NOT NULL,
        reason             TEXT NOT NULL,
        author             TEXT NOT NULL,
        surface            TEXT NOT NULL,
        created_at         BIGINT NOT NULL,
        refreshed_at       BIGINT NOT NULL,
        chain_refreshed_at BIGINT NOT NULL,
        supersedes         TEXT,
        status             TEXT NOT NULL CHECK (status IN ('active', 'superseded', 'retired')),
        retired_reason     TEXT
    );
    CREATE INDEX memories_recent_facts ON {s}.memories (repo, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'fact';
    CREATE INDEX memories_recent_preferences ON {s}.memories (author, refreshed_at DESC, created_at DESC, id DESC)
        WHERE status = 'active' AND kind = 'preference';
    CREATE INDEX memories_root ON {s}.memories (root);
    CREATE INDEX memories_expiry ON {s}.memories (chain_refreshed_at)
    """

# One memory as a version-1 store holds it, columns in the order the old backends inserted them.
OLD_ROW = (
    "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "acme/api", "fact", "retries",
    "RETRY_LIMIT is 3", '[{"path": "src/retry.py", "line": 7}]', "read it", "wes", "cli",
    1_767_225_600_000_000, 1_767_225_600_000_000, 1_767_225_600_000_000, None, "active", None,
)  # fmt: skip
NOW = datetime(2026, 1, 2, tzinfo=UTC)


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def test_the_sqlite_schema_is_the_one_earlier_releases_made() -> None:
    assert [s.strip() for s in sql.SQLITE.migrations(0, 1)] == _statements(SQLITE_V1)


def test_the_postgresql_schema_is_the_one_earlier_releases_made() -> None:
    made = sql.POSTGRESQL.in_schema("team").migrations(0, 1)
    assert [s.strip() for s in made] == _statements(POSTGRESQL_V1.replace("{s}", '"team"'))


def test_a_query_is_written_once_and_said_in_each_dialect() -> None:
    template = "SELECT root FROM {table} WHERE id = :id AND refreshed_at > {greatest}(a, :now){lock}"
    assert sql.SQLITE.sql(template) == "SELECT root FROM memories WHERE id = :id AND refreshed_at > max(a, :now)"
    assert sql.POSTGRESQL.in_schema("team").sql(template) == (
        'SELECT root FROM "team".memories WHERE id = %(id)s AND refreshed_at > GREATEST(a, %(now)s) FOR UPDATE'
    )


def _check_the_old_memory(uri: str) -> None:
    store = open_store(uri, access=POLICY, clock=FakeClock(NOW))
    memory = store.get(OLD_ROW[0], actor=WES)
    assert (memory.subject, memory.fact, memory.author) == ("retries", "RETRY_LIMIT is 3", "wes")
    assert [(c.path, c.line) for c in memory.citations] == [("src/retry.py", 7)]
    assert memory.refreshed_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert [m.id for m in store.recent("acme/api", actor=WES, surface=Surface.CLI)] == [OLD_ROW[0]]
    assert store.refresh(memory.id, actor=WES).refreshed_at == NOW


def test_a_sqlite_store_an_earlier_release_wrote_opens_and_reads(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _statements(SQLITE_V1):
        conn.execute(statement)
    conn.execute(f"INSERT INTO memories VALUES ({', '.join('?' * len(OLD_ROW))})", OLD_ROW)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    _check_the_old_memory(f"sqlite:///{path}")


@needs_postgres
def test_a_postgresql_store_an_earlier_release_wrote_opens_and_reads() -> None:
    import psycopg

    uri = fresh_uri("old")
    schema = f'"{uri.rsplit("schema=", 1)[1]}"'
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.memstore_meta (key TEXT PRIMARY KEY, value TEXT)")
        for statement in _statements(POSTGRESQL_V1.replace("{s}", schema)):
            conn.execute(statement)
        conn.execute(f"INSERT INTO {schema}.memories VALUES ({', '.join(['%s'] * len(OLD_ROW))})", OLD_ROW)
        conn.execute(f"INSERT INTO {schema}.memstore_meta VALUES ('application', 'memstore'), ('schema_version', '1')")
    _check_the_old_memory(uri)


@pytest.mark.parametrize("dialect", ["sqlite", pytest.param("postgresql", marks=needs_postgres)])
def test_a_sweep_deletes_in_batches(dialect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}" if dialect == "sqlite" else fresh_uri()
    clock = FakeClock(NOW)
    store = open_store(uri, access=POLICY, clock=clock, expiry=timedelta(days=28))
    for n in range(25):
        draft = MemoryDraft("acme/api", Kind.FACT, f"subject {n}", f"fact {n}", [f"a.py:{n + 1}"], "why")
        store.store(draft, actor=WES, surface=Surface.CLI)
    statements: list[str] = []
    run = store._run  # type: ignore[attr-defined]

    def counted(conn: Any, template: str, params: dict[str, Any]) -> Any:
        statements.append(template)
        return run(conn, template, params)

    monkeypatch.setattr(store, "_run", counted)
    monkeypatch.setattr(sql, "SWEEP_BATCH", 10)
    clock.advance(timedelta(days=29))
    assert store.sweep() == 25
    sweeps = [s for s in statements if s.startswith("DELETE FROM {table}")]
    assert len(sweeps) == 3  # 10, 10, 5: each batch its own transaction
    assert statements[3:] == [sql._SWEEP_VOTES]  # then the votes of what went
