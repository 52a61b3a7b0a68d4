"""``postgresql://user:password@host:port/database?schema=NAME``: the reference rules on PostgreSQL.

For a team's shared store, and for workers on several machines writing to one store. The
memories live in one schema of the database (``memstore`` by default; ``?schema=`` names
another, so one database can hold many stores). The schema is versioned: a ``memstore_meta``
table stamps it as memstore's and records the schema version; migrations run in one
transaction under an advisory lock, so processes opening a new store at once create it once.
A schema that holds tables but no stamp is someone else's, and is refused before anything is
written; so is one written by a newer memstore.

Every write is one transaction. A correction locks the version it replaces (``SELECT ... FOR
UPDATE``) and re-reads it: of two concurrent corrections of one memory, one wins and the other
finds it superseded (`Conflict`), as on SQLite. ``recent()`` reads through partial indexes on
(repo or author, refreshed_at); ``sweep()`` deletes expired chains in batches, each its own
transaction. This module is the only one that talks to psycopg; its errors become
`StorageError` (or `ConfigurationError` for a bad URL) with one line that never shows a password.
"""

from __future__ import annotations

import hashlib
import re
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore.backends import StoreOptions, TrialStore, per_trial, redact
from memstore.backends.base import PagedRecordStore, RecencyKey, Visibility, chain_order
from memstore.backends.rows import COLUMNS as _COLUMNS
from memstore.backends.rows import KINDS as _KINDS
from memstore.backends.rows import NOBODY as _NOBODY
from memstore.backends.rows import citations_json, key_row
from memstore.backends.rows import micros as _us
from memstore.backends.rows import moment as _moment
from memstore.backends.rows import row_to_memory as _row_to_memory
from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.model import Memory

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PostgresStore", "open_postgresql", "parse_postgresql_uri"]

_SWEEP_BATCH = 1_000
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# Version N is reached by running MIGRATIONS[N - 1] on a store at version N - 1. {s} is the schema.
MIGRATIONS: list[str] = [
    """
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
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


def parse_postgresql_uri(uri: str) -> tuple[str, str, str]:
    """The connection string (the URI without memstore's options), the schema, and the URI as
    it may be shown (no password).

    Raises:
        ConfigurationError: for a URI that is not a PostgreSQL URL, or a bad schema name.
    """
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme not in {"postgresql", "postgres"} or (not parts.hostname and not parts.path.strip("/")):
        raise ConfigurationError(f"not a PostgreSQL URL: {_shown(uri)!r}; use postgresql://user@host:port/database")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise ConfigurationError(f"bad port in {_shown(uri)!r}: {exc}") from exc
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "memstore").lower()
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ConfigurationError(f"schema {schema!r}: letters, digits and underscores, 63 at most, not a digit first")
    # The query as written, less memstore's own option; the authority kept even when empty
    # (``postgresql:///db?host=/run/postgresql``: a socket folder), as libpq reads it.
    rest = "&".join(p for p in parts.query.split("&") if p and urllib.parse.unquote(p.partition("=")[0]) != "schema")
    conninfo = f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")
    return conninfo, schema, _shown(uri)


def _shown(uri: str) -> str:
    """``uri`` with any password replaced by ``***``."""
    return redact(uri)


class PostgresStore(PagedRecordStore):
    """A `MemoryStore` in one schema of a PostgreSQL database (see the module docstring)."""

    def __init__(
        self, conninfo: str, schema: str, options: StoreOptions, *, shown: str = "", timeout: int = 10
    ) -> None:
        super().__init__(options)
        import psycopg

        self._psycopg = psycopg
        self.schema = schema
        self.shown = shown or _shown(conninfo)
        self.read_only = options.read_only
        self._lock = threading.RLock()
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=timeout)
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {self.shown}: {_first_line(exc)}") from exc
        try:
            self._open(create=options.create)
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self.shown!r}, schema={self.schema!r})"

    @property
    def _t(self) -> str:
        return f'"{self.schema}".memories'

    # -- opening and migrating ------------------------------------------------------

    def _version(self) -> int | None:
        """The stamped schema version; None when the schema holds nothing of anyone."""
        cur = self._conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (self.schema,)
        )
        tables = {row[0] for row in cur.fetchall()}
        if not tables:
            return None
        if "memstore_meta" not in tables:
            raise IncompatibleStore(
                f"schema {self.schema!r} of {self.shown} holds tables of something else ({len(tables)}, no memstore "
                "stamp); refusing to touch it (name another with ?schema=)"
            )
        rows: dict[str, str] = dict(
            self._conn.execute(f'SELECT key, value FROM "{self.schema}".memstore_meta').fetchall()
        )
        if rows.get("application") != "memstore":
            raise IncompatibleStore(f"schema {self.schema!r} of {self.shown} is stamped by another application")
        version = int(rows.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise IncompatibleStore(
                f"schema {self.schema!r} of {self.shown} was written by a newer memstore (schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION}); upgrade memstore to open it"
            )
        return version

    def _open(self, *, create: bool) -> None:
        try:
            version = self._version()
            if version == SCHEMA_VERSION:
                return
            if self.read_only:
                raise StorageError(f"{self.shown} (schema {self.schema!r}) is read-only and not at schema version "
                                   f"{SCHEMA_VERSION}")  # fmt: skip
            if version is None and not create:
                raise StorageError(f"no memstore store in schema {self.schema!r} of {self.shown}")
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"memstore:{self.schema}",))
                version = self._version() or 0  # again, under the lock: another process may have migrated
                self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                if version == 0:
                    self._conn.execute(
                        f'CREATE TABLE IF NOT EXISTS "{self.schema}".memstore_meta (key TEXT PRIMARY KEY, value TEXT)'
                    )
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[target - 1].split(";"):
                        if statement.strip():
                            self._conn.execute(statement.replace("{s}", f'"{self.schema}"'))
                self._conn.execute(
                    f'INSERT INTO "{self.schema}".memstore_meta (key, value) VALUES (%s, %s), (%s, %s) '
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    ("application", "memstore", "schema_version", str(SCHEMA_VERSION)),
                )
        except self._psycopg.Error as exc:
            raise StorageError(f"{self.shown} (schema {self.schema!r}) cannot be opened: {_first_line(exc)}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Any]:
        if self.read_only:
            raise StorageError(f"{self.shown} is open read-only; this command cannot change it")
        with self._lock:
            try:
                with self._conn.transaction():
                    yield self._conn
            except self._psycopg.Error as exc:
                raise StorageError(f"writing to {self.shown} failed: {_first_line(exc)}") from exc

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except self._psycopg.Error as exc:
                raise StorageError(f"reading {self.shown} failed: {_first_line(exc)}") from exc

    def _read(self, sql: str, params: Sequence[Any]) -> list[Memory]:
        return [_row_to_memory(row) for row in self._rows(sql, params)]

    def _insert_row(self, conn: Any, memory: Memory, root: str) -> None:
        conn.execute(
            f"INSERT INTO {self._t} (id, root, repo, kind, subject, fact, citations, reason, author, surface, "
            "created_at, refreshed_at, chain_refreshed_at, supersedes, status, retired_reason) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                memory.id, root, memory.repo, memory.kind.value, memory.subject, memory.fact,
                citations_json(memory), memory.reason,
                memory.author, memory.surface.value, _us(memory.created_at), _us(memory.refreshed_at),
                _us(memory.refreshed_at), memory.supersedes, memory.status.value, memory.retired_reason,
            ),
        )  # fmt: skip

    # -- record operations ----------------------------------------------------------

    def _insert(self, memory: Memory) -> None:
        with self._write() as conn:
            self._insert_row(conn, memory, memory.id)

    def _insert_all(self, memories: Sequence[Memory]) -> None:
        """New, unrelated memories in one transaction: every one, or none (imports and benchmarks)."""
        with self._write() as conn:
            for memory in memories:
                self._insert_row(conn, memory, memory.id)

    insert_many = _insert_all  # the name benchmarks bulk-load with

    def _supersede(self, old_id: str, new: Memory, cutoff: datetime) -> Memory | None:
        with self._write() as conn:
            found = conn.execute(
                f"SELECT root, refreshed_at, chain_refreshed_at FROM {self._t} "
                "WHERE id = %s AND status = 'active' AND chain_refreshed_at > %s FOR UPDATE",
                (old_id, _us(cutoff)),
            ).fetchone()
            if found is None:  # gone, expired, or another correction won (it held the lock first)
                return None
            root, old_refreshed, chain = found
            conn.execute(f"UPDATE {self._t} SET status = 'superseded' WHERE id = %s", (old_id,))
            new = replace(new, refreshed_at=_moment(max(_us(new.refreshed_at), old_refreshed)))
            self._insert_row(conn, new, root)
            chain = max(chain, _us(new.refreshed_at))
            conn.execute(f"UPDATE {self._t} SET chain_refreshed_at = %s WHERE root = %s", (chain, root))
            return new

    def _load(self, memory_id: str, cutoff: datetime) -> Memory | None:
        found = self._read(
            f"SELECT {_COLUMNS} FROM {self._t} WHERE id = %s AND chain_refreshed_at > %s", (memory_id, _us(cutoff))
        )
        return found[0] if found else None

    def _load_visible(self, memory_id: str, cutoff: datetime, visible: Visibility) -> Memory | None:
        # One indexed look-up, and the row judged on its repo, kind and author before anything
        # is built: a memory the actor may not see is never built (it costs about what a missing
        # one costs, so timing tells little).
        found = self._rows(
            f"SELECT {_COLUMNS} FROM {self._t} WHERE id = %s AND chain_refreshed_at > %s", (memory_id, _us(cutoff))
        )
        row = found[0] if found else None
        repo, kind, author = (row[1], row[2], row[7]) if row is not None else _NOBODY
        if not visible(repo, _KINDS[kind], author) or row is None:
            return None
        return _row_to_memory(row)

    def _recent(
        self,
        repo: str,
        *,
        facts: bool,
        preferences_of: str | None,
        cutoff: datetime,
        limit: int,
        after: RecencyKey | None = None,
    ) -> list[Memory]:
        order = "ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT %s"
        page, key = ("AND (refreshed_at, created_at, id) < (%s, %s, %s) ", key_row(after)) if after else ("", ())
        rows: list[Any] = []
        if facts:
            rows += self._rows(
                f"SELECT {_COLUMNS} FROM {self._t} WHERE repo = %s AND status = 'active' AND kind = 'fact' "
                f"AND refreshed_at > %s {page}{order}",
                (repo, _us(cutoff), *key, limit),
            )
        if preferences_of is not None:
            rows += self._rows(
                f"SELECT {_COLUMNS} FROM {self._t} WHERE author = %s AND status = 'active' "
                f"AND kind = 'preference' AND refreshed_at > %s {page}{order}",
                (preferences_of, _us(cutoff), *key, limit),
            )
        if facts and preferences_of is not None:
            rows.sort(key=lambda row: (row[10], row[9], row[0]), reverse=True)
        return [_row_to_memory(row) for row in rows[:limit]]

    def _refresh(self, memory_id: str, now: datetime, cutoff: datetime) -> bool:
        with self._write() as conn:
            found = conn.execute(
                f"UPDATE {self._t} SET refreshed_at = GREATEST(refreshed_at, %s) "
                "WHERE id = %s AND status = 'active' AND chain_refreshed_at > %s "
                "RETURNING root, GREATEST(chain_refreshed_at, refreshed_at)",
                (_us(now), memory_id, _us(cutoff)),
            ).fetchone()
            if found is None:
                return False
            root, chain = found
            conn.execute(f"UPDATE {self._t} SET chain_refreshed_at = %s WHERE root = %s", (chain, root))
            return True

    def _retire(self, memory_id: str, reason: str, cutoff: datetime) -> bool:
        with self._write() as conn:
            changed = conn.execute(
                f"UPDATE {self._t} SET status = 'retired', retired_reason = %s "
                "WHERE id = %s AND status = 'active' AND chain_refreshed_at > %s",
                (reason, memory_id, _us(cutoff)),
            ).rowcount
            return bool(changed == 1)

    def _delete_chain(self, memory_id: str) -> None:
        with self._write() as conn:
            conn.execute(f"DELETE FROM {self._t} WHERE root = (SELECT root FROM {self._t} WHERE id = %s)", (memory_id,))

    def _chain(self, memory_id: str, cutoff: datetime) -> list[Memory]:
        return chain_order(
            self._read(
                f"SELECT {_COLUMNS} FROM {self._t} WHERE root = (SELECT root FROM {self._t} WHERE id = %s) "
                "AND chain_refreshed_at > %s ORDER BY created_at, id",
                (memory_id, _us(cutoff)),
            )
        )

    def _sweep(self, cutoff: datetime) -> int:
        """Delete expired chains, a batch per transaction (a long sweep never holds locks long)."""
        deleted = 0
        while True:
            with self._write() as conn:
                batch: int = conn.execute(
                    f"DELETE FROM {self._t} WHERE id IN (SELECT id FROM {self._t} WHERE chain_refreshed_at <= %s "
                    "LIMIT %s)",
                    (_us(cutoff), _SWEEP_BATCH),
                ).rowcount
            deleted += batch
            if batch < _SWEEP_BATCH:
                return deleted


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return _shown(text[0]) if text else type(exc).__name__


def _trial_schema(uri: str, folder: Path) -> TrialStore:
    """A trial's own schema: the URI's ``schema`` (its placeholders filled in) made a PostgreSQL
    name: lower case, ``_`` for anything else, at most 63 characters (a digest keeps long names apart)."""
    head, found, schema = uri.partition("schema=")
    if not found:
        return TrialStore(uri, shared=True)
    schema, amp, tail = schema.partition("&")
    name = re.sub(r"[^a-z0-9_]", "_", schema.lower())
    if len(name) > 63:
        name = name[:50] + "_" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return TrialStore(f"{head}schema={name}{amp}{tail}", shared=True)


@per_trial(
    _trial_schema,
    hint="put {{scenario}}, {{trial}} and {{arm}} in its schema, such as ?schema=run_{{scenario}}_{{trial}}_{{arm}}",
    server=True,
)
def open_postgresql(uri: str, options: StoreOptions) -> PostgresStore:
    """Factory for ``postgresql://`` URIs (see `parse_postgresql_uri`)."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError("postgresql:// stores need psycopg 3: pip install 'memstore[postgresql]'") from exc
    conninfo, schema, shown = parse_postgresql_uri(uri)
    return PostgresStore(conninfo, schema, options, shown=shown)
