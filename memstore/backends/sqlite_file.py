"""The SQLite store's file: its URI, refusing a file that is not a memstore store before
connecting, and SQLite's errors translated into memstore's (the only module besides
`memstore.backends.sqlite` that touches sqlite3). Its schema is `memstore.backends.sql`'s."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

from memstore.errors import ConfigurationError, IncompatibleStore, StorageError
from memstore.uri import StoreURI

__all__ = [
    "APPLICATION_ID",
    "parse_sqlite_uri",
    "refuse_foreign_file",
    "rollback",
    "translate",
    "with_retry",
    "writable",
]

APPLICATION_ID = 0x4D454D53  # "MEMS"
_HEADER = b"SQLite format 3\x00"


def parse_sqlite_uri(uri: str) -> tuple[str, dict[str, str]]:
    """Split ``sqlite:///abs/path.db?busy_timeout=5`` into the path and its options.

    ``sqlite:///abs.db`` and ``sqlite:////abs.db`` are absolute paths,
    ``sqlite:rel.db`` is relative to the working directory, ``sqlite://:memory:`` is a
    private in-memory database.
    """
    parsed = StoreURI.parse(uri)
    if not parsed.path:
        raise ConfigurationError(f"the sqlite URI {parsed.redacted!r} names no file; use sqlite:///path/to/memories.db")
    options = {key: values[-1] for key, values in parse_qs(parsed.query, strict_parsing=False).items()}
    unknown = set(options) - {"busy_timeout"}
    if unknown:
        raise ConfigurationError(f"unknown sqlite option(s) {sorted(unknown)}; known: busy_timeout (seconds)")
    return parsed.path, options


def refuse_foreign_file(path: Path, *, create: bool) -> bool:
    """Raise before connecting when ``path`` cannot be a store to open; whether it exists."""
    if not path.exists():
        if not create:
            raise ConfigurationError(f"there is no store at {path} (check the path; a command that stores creates one)")
        if not path.parent.is_dir():
            raise ConfigurationError(f"cannot create a store at {path}: the directory {path.parent} does not exist")
        return False
    if not path.is_file():
        raise IncompatibleStore(f"{path} is not a file; refusing to use it as a memstore store")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_HEADER))
    except OSError as exc:
        raise StorageError(f"cannot read the store {path}: {exc.strerror or exc}") from exc
    if header and header != _HEADER:
        raise IncompatibleStore(f"{path} is not a SQLite database; refusing to touch it")
    return True


def with_retry(step: Callable[[], object], seconds: float) -> None:
    """Run ``step`` again while SQLite says the database is locked, for up to ``seconds``.

    Switching a file to WAL needs an exclusive lock, and SQLite reports "database is locked" at
    once, without calling the busy handler, when another process opening the same new file holds
    a lock at that moment (seen about once in 300 openings by 8 racing processes)."""
    deadline = time.monotonic() + seconds
    delay = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def writable(path: Path) -> bool:
    """Whether this process may write the file and the folder it is in (WAL needs both)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open. SQLite ends some on its own (a full disk,
    say), and a second error from ROLLBACK must never hide the first."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


_ENVIRONMENT = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_BUSY")
_FOREIGN = ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def translate(exc: sqlite3.Error, doing: str, *, opening: bool = False) -> StorageError:
    """SQLite's error as memstore's, with its cause said plainly: the machine (a full disk, a
    read-only file, a lock held too long) is a `StorageError`; a file that is not a store this
    memstore can use is an `IncompatibleStore`."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    message = str(exc)
    if name.startswith("SQLITE_READONLY"):
        return StorageError(f"{doing}: the store is read-only here ({message})")
    if name.startswith(_ENVIRONMENT):
        return StorageError(f"{doing}: {message}")
    if name.startswith(_FOREIGN) or (opening and isinstance(exc, sqlite3.DatabaseError)):
        return IncompatibleStore(f"{doing}: {message}")
    return StorageError(f"{doing}: {message}")
