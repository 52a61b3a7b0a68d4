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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstore.backends import StoreOptions, TrialStore, per_trial, sql
from memstore.backends.rows import Row
from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.uri import redact

__all__ = ["PostgresStore", "open_postgresql", "parse_postgresql_uri"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def parse_postgresql_uri(uri: str) -> tuple[str, str, str]:
    """The connection string (the URI without memstore's options), the schema, and the URI as
    it may be shown (no password).

    Raises:
        ConfigurationError: for a URI that is not a PostgreSQL URL, or a bad schema name.
    """
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme not in {"postgresql", "postgres"} or (not parts.hostname and not parts.path.strip("/")):
        raise ConfigurationError(f"not a PostgreSQL URL: {redact(uri)!r}; use postgresql://user@host:port/database")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise ConfigurationError(f"bad port in {redact(uri)!r}: {exc}") from exc
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "memstore").lower()
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ConfigurationError(f"schema {schema!r}: letters, digits and underscores, 63 at most, not a digit first")
    # The query as written, less memstore's own option; the authority kept even when empty
    # (``postgresql:///db?host=/run/postgresql``: a socket folder), as libpq reads it.
    rest = "&".join(p for p in parts.query.split("&") if p and urllib.parse.unquote(p.partition("=")[0]) != "schema")
    conninfo = f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")
    return conninfo, schema, redact(uri)


class PostgresStore(sql.SqlRecordStore):
    """A `MemoryStore` in one schema of a PostgreSQL database (see the module docstring); its
    queries are `memstore.backends.sql`'s, in the PostgreSQL dialect."""

    def __init__(
        self, conninfo: str, schema: str, options: StoreOptions, *, shown: str = "", timeout: int = 10
    ) -> None:
        super().__init__(options)
        import psycopg
        from psycopg.rows import namedtuple_row

        self._psycopg = psycopg
        self.schema = schema
        self.dialect = sql.POSTGRESQL.in_schema(schema)
        self.shown = shown or redact(conninfo)
        self.read_only = options.read_only
        self._lock = threading.RLock()
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=timeout, row_factory=namedtuple_row)
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {self.shown}: {_first_line(exc)}") from exc
        try:
            self._open(create=options.create)
        except BaseException:
            self._conn.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({self.shown!r}, schema={self.schema!r})"

    # -- opening and migrating ------------------------------------------------------

    def _version(self) -> int | None:
        """The stamped schema version; None when the schema holds nothing of anyone."""
        found: list[Row] = self._conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (self.schema,)
        ).fetchall()
        tables = {row.table_name for row in found}
        if not tables:
            return None
        if "memstore_meta" not in tables:
            raise IncompatibleStore(
                f"schema {self.schema!r} of {self.shown} holds tables of something else ({len(tables)}, no memstore "
                "stamp); refusing to touch it (name another with ?schema=)"
            )
        stamp: list[Row] = self._conn.execute(f'SELECT key, value FROM "{self.schema}".memstore_meta').fetchall()
        rows = {row.key: row.value for row in stamp}
        if rows.get("application") != "memstore":
            raise IncompatibleStore(f"schema {self.schema!r} of {self.shown} is stamped by another application")
        version = int(rows.get("schema_version", "0"))
        if version > sql.SCHEMA_VERSION:
            raise IncompatibleStore(
                f"schema {self.schema!r} of {self.shown} was written by a newer memstore (schema version {version}; "
                f"this one reads up to {sql.SCHEMA_VERSION}); upgrade memstore to open it"
            )
        return version

    def _open(self, *, create: bool) -> None:
        try:
            version = self._version()
            if version == sql.SCHEMA_VERSION:
                return
            if self.read_only:
                raise StorageError(f"{self.shown} (schema {self.schema!r}) is read-only and not at schema version "
                                   f"{sql.SCHEMA_VERSION}")  # fmt: skip
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
                for statement in self.dialect.migrations(version, sql.SCHEMA_VERSION):
                    self._conn.execute(statement)
                self._conn.execute(
                    f'INSERT INTO "{self.schema}".memstore_meta (key, value) VALUES '
                    "('application', 'memstore'), ('schema_version', %(version)s) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    {"version": str(sql.SCHEMA_VERSION)},
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

    def _rows(self, query: str, params: Mapping[str, Any]) -> list[Row]:
        with self._lock:
            try:
                rows: list[Row] = self._conn.execute(query, params).fetchall()
                return rows
            except self._psycopg.Error as exc:
                raise StorageError(f"reading {self.shown} failed: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact(text[0]) if text else type(exc).__name__


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
        raise ConfigurationError(
            "postgresql:// stores need psycopg 3: pip install 'agent-memstore[postgresql]'"
        ) from exc
    conninfo, schema, shown = parse_postgresql_uri(uri)
    return PostgresStore(conninfo, schema, options, shown=shown)
