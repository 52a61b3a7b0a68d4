"""What the SQLite backend adds to the conformance suite: files, schema, processes."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memstore import (
    Access,
    AccessPolicy,
    Actor,
    ConfigurationError,
    Conflict,
    FakeClock,
    IncompatibleStore,
    Kind,
    MemoryDraft,
    Surface,
    open_store,
)
from memstore.backends import sql
from memstore.backends import sqlite as backend
from memstore.backends.sqlite import parse_sqlite_uri

WES = Actor("wes")


def _policy() -> AccessPolicy:
    return AccessPolicy().grant("wes", "*", Access.ADMIN)


def _draft(n: int = 0) -> MemoryDraft:
    return MemoryDraft("acme/api", Kind.FACT, f"subject {n}", f"fact {n}", [f"src/a.py:{n + 1}"], "why")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("sqlite:///tmp/m.db", "/tmp/m.db"),
        ("sqlite:////tmp/m.db", "/tmp/m.db"),
        ("sqlite:rel/m.db", "rel/m.db"),
        ("sqlite://rel.db", "rel.db"),
        ("sqlite://:memory:", ":memory:"),
    ],
)
def test_uri_forms(uri: str, path: str) -> None:
    assert parse_sqlite_uri(uri) == (path, {})


def test_uri_options() -> None:
    assert parse_sqlite_uri("sqlite:///m.db?busy_timeout=2") == ("/m.db", {"busy_timeout": "2"})
    with pytest.raises(ConfigurationError, match="unknown sqlite option"):
        parse_sqlite_uri("sqlite:///m.db?mode=ro")


@pytest.mark.parametrize("uri", ["sqlite:", "sqlite://", "sqlite:///", "sqlite:///?busy_timeout=2"])
def test_a_uri_that_names_no_file_is_refused_as_such(uri: str) -> None:
    with pytest.raises(ConfigurationError, match=r"names no file; use sqlite:///path/to/memories\.db"):
        parse_sqlite_uri(uri)


def test_memories_persist_across_opens(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    clock = FakeClock()
    memory = open_store(uri, access=_policy(), clock=clock).store(_draft(), actor=WES, surface=Surface.CLI)
    again = open_store(uri, access=_policy(), clock=clock)
    assert again.get(memory.id, actor=WES) == memory


def test_new_store_uses_wal_and_is_stamped(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    open_store(f"sqlite:///{path}", access=_policy())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == backend.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == sql.SCHEMA_VERSION


def test_recent_and_sweep_use_their_indices(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    open_store(f"sqlite:///{path}", access=_policy())
    conn = sqlite3.connect(path)
    plans = {
        "memories_recent_facts": "SELECT id FROM memories WHERE repo = 'a/b' AND status = 'active' "
        "AND kind = 'fact' AND refreshed_at > 0 ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT 50",
        "memories_recent_preferences": "SELECT id FROM memories WHERE author = 'x' AND status = 'active' "
        "AND kind = 'preference' AND refreshed_at > 0 ORDER BY refreshed_at DESC, created_at DESC, id DESC",
        "memories_expiry": "DELETE FROM memories WHERE id IN (SELECT id FROM memories WHERE chain_refreshed_at <= 5 "
        "LIMIT 1000)",
    }
    for index, query in plans.items():
        plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}"))
        assert index in plan, plan
        assert "TEMP B-TREE" not in plan, plan


def test_text_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n")
    before = _digest(path)
    with pytest.raises(IncompatibleStore, match="not a SQLite database"):
        open_store(f"sqlite:///{path}", access=_policy())
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ana')")
    conn.commit()
    conn.close()
    before = _digest(path)
    with pytest.raises(IncompatibleStore, match="SQLite database of something else"):
        open_store(f"sqlite:///{path}", access=_policy())
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]


def test_other_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.close()
    with pytest.raises(IncompatibleStore, match="another application"):
        open_store(f"sqlite:///{path}", access=_policy())


def test_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = open_store(f"sqlite:///{path}", access=_policy())
    store.store(_draft(), actor=WES, surface=Surface.CLI)
    store.close()  # type: ignore[attr-defined]
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {sql.SCHEMA_VERSION + 1}")
    conn.close()
    before = _digest(path)
    with pytest.raises(IncompatibleStore, match="newer memstore") as caught:
        open_store(f"sqlite:///{path}", access=_policy())
    assert f"schema version {sql.SCHEMA_VERSION + 1}" in str(caught.value)
    assert _digest(path) == before


def test_older_schema_is_migrated_keeping_its_memories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    store = open_store(f"sqlite:///{path}", access=_policy())
    memory = store.store(_draft(), actor=WES, surface=Surface.CLI)
    store.close()  # type: ignore[attr-defined]
    migrations = [*sql.MIGRATIONS, "CREATE TABLE probe_v2 (x INTEGER)"]
    monkeypatch.setattr(sql, "MIGRATIONS", migrations)
    monkeypatch.setattr(sql, "SCHEMA_VERSION", len(migrations))
    upgraded = open_store(f"sqlite:///{path}", access=_policy())
    assert upgraded.get(memory.id, actor=WES).fact == memory.fact
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations)
    assert conn.execute("SELECT count(*) FROM probe_v2").fetchone()[0] == 0


def test_failed_migration_leaves_the_old_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    open_store(f"sqlite:///{path}", access=_policy()).close()  # type: ignore[attr-defined]
    migrations = [*sql.MIGRATIONS, "CREATE TABLE half (x INTEGER); THIS IS NOT SQL"]
    monkeypatch.setattr(sql, "MIGRATIONS", migrations)
    monkeypatch.setattr(sql, "SCHEMA_VERSION", len(migrations))
    with pytest.raises(IncompatibleStore):
        open_store(f"sqlite:///{path}", access=_policy())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations) - 1
    assert conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'half'").fetchone()[0] == 0


def test_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    path.touch()
    store = open_store(f"sqlite:///{path}", access=_policy())
    assert store.recent("acme/api", actor=WES, surface=Surface.CLI) == []


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        open_store(f"sqlite:///{tmp_path / 'nope' / 'm.db'}", access=_policy())
    assert not (tmp_path / "nope").exists()


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IncompatibleStore, match="not a file"):
        open_store(f"sqlite:///{tmp_path}", access=_policy())


_WRITER = textwrap.dedent(
    """
    import sys
    from memstore import Access, AccessPolicy, Actor, Conflict, Kind, MemoryDraft, Surface, open_store
    uri, worker, count, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    store = open_store(uri, access=AccessPolicy().grant("wes", "*", Access.ADMIN))
    actor = Actor("wes")
    def draft(n):
        return MemoryDraft("acme/api", Kind.FACT, f"w{worker}", f"fact {n}", [f"a.py:{n % 50 + 1}"], "r")
    if mode == "store":
        for n in range(count):
            store.store(draft(n), actor=actor, surface=Surface.CLI)
    elif mode == "correct":
        target, won = sys.argv[5], 0
        try:
            store.store(draft(0), actor=actor, surface=Surface.CLI, supersedes=target)
            won = 1
        except Conflict:
            pass
        print(won)
    elif mode == "forever":
        head = store.store(draft(0), actor=actor, surface=Surface.CLI).id
        print("ready", flush=True)
        n = 0
        while True:
            n += 1
            head = store.store(draft(n), actor=actor, surface=Surface.CLI, supersedes=head).id
            if n % 7 == 0:
                store.retire(head, actor=actor, reason="r")
                head = store.store(draft(n), actor=actor, surface=Surface.CLI).id
    """
)


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_concurrent_writers_in_several_processes_lose_nothing(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    workers = [_spawn(uri, str(w), "150", "store") for w in range(4)]
    for proc in workers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    store = open_store(uri, access=_policy())
    found = store.recent("acme/api", actor=WES, surface=Surface.CLI, limit=10_000)
    assert len(found) == 600
    assert len({m.id for m in found}) == 600
    assert sorted({m.subject for m in found}) == ["w0", "w1", "w2", "w3"]


@pytest.mark.slow
def test_concurrent_corrections_of_one_memory_have_one_winner(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    target = open_store(uri, access=_policy()).store(_draft(), actor=WES, surface=Surface.CLI)
    workers = [_spawn(uri, str(w), "1", "correct", target.id) for w in range(4)]
    wins = []
    for proc in workers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        wins.append(int(out))
    assert sum(wins) == 1
    store = open_store(uri, access=_policy())
    chain = store.history(target.id, actor=WES)
    assert len(chain) == 2
    assert len(store.recent("acme/api", actor=WES, surface=Surface.CLI)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.7, 1.1])
def test_writer_killed_midway_leaves_a_consistent_store(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "m.db"
    proc = _spawn(f"sqlite:///{path}", "0", "0", "forever")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = conn.execute("SELECT id, root, supersedes, status FROM memories").fetchall()
    assert len(rows) > 1
    by_root: dict[str, list[tuple[str, str | None, str]]] = {}
    for memory_id, root, supersedes, status in rows:
        by_root.setdefault(root, []).append((memory_id, supersedes, status))
    for versions in by_root.values():
        heads = [v for v in versions if v[2] != "superseded"]
        assert len(heads) == 1, versions  # every chain ends in exactly one live or retired version
        successors = {v[1] for v in versions if v[1] is not None}
        assert successors == {v[0] for v in versions if v[2] == "superseded"}, versions
    store = open_store(f"sqlite:///{path}", access=_policy())
    active = store.recent("acme/api", actor=WES, surface=Surface.CLI, limit=10_000)
    assert len(active) <= 1  # 0 when killed between retiring a head and storing the next
    for memory in active:
        assert memory.id == store.history(memory.id, actor=WES)[-1].id


def test_conflict_is_reported_not_forked(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    first, second = open_store(uri, access=_policy()), open_store(uri, access=_policy())
    memory = first.store(_draft(), actor=WES, surface=Surface.CLI)
    first.store(_draft(1), actor=WES, surface=Surface.CLI, supersedes=memory.id)
    with pytest.raises(Conflict):
        second.store(_draft(2), actor=WES, surface=Surface.CLI, supersedes=memory.id)


def test_a_store_of_schema_one_gains_votes_keeping_its_memories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written before votes (schema 1) opens at schema 2: its memories kept, votes kept from then on."""
    path = tmp_path / "m.db"
    with monkeypatch.context() as before:
        before.setattr(sql, "MIGRATIONS", sql.MIGRATIONS[:1])
        before.setattr(sql, "SCHEMA_VERSION", 1)
        old = open_store(f"sqlite:///{path}", access=_policy())
        memory = old.store(_draft(), actor=WES, surface=Surface.CLI)
        old.close()  # type: ignore[attr-defined]
    assert sqlite3.connect(path).execute("SELECT count(*) FROM sqlite_schema WHERE name = 'votes'").fetchone()[0] == 0
    store = open_store(f"sqlite:///{path}", access=_policy())
    store.vote(memory.id, actor=WES, up=True, reason="still true")  # type: ignore[attr-defined]
    assert [v.reason for v in store.votes(memory.id, actor=WES)] == ["still true"]  # type: ignore[attr-defined]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
