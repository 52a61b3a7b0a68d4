"""``facto:///dir``: memories in Facto (PyPI ``facto-memory`` 0.1.0, import ``facto``).

Facto keeps a project's *dated facts* in one SQLite database (``.facto/facto.db`` beside a
``facto.config.json``): each fact a row of ``fatti`` with its area (``progetto``), type
(``tipo``), text (``contenuto``), the date it became true (``valido_da``) and, once a newer fact
replaces it, the date it stopped being true (``valido_fino_a``: bi-temporal, a fact is closed,
never deleted), its source (``fonte``) and an FTS5 index of the text. How an agent deploys it: one
database per repository, written through ``facto.mem.add_fatto`` (what its MCP server's
``add_fact`` tool calls) and searched by FTS5 ``MATCH`` with a ``LIKE`` fallback (its ``search``
tool). This adapter does the same, one database per ``owner/name`` under ``dir``, and maps:

- the fact onto ``contenuto``; a preference onto the type ``preferenza`` and a fact onto
  ``pattern``; the area onto the first citation's top folder (Facto's areas are folders of the
  project), ``root`` for a file at the top or no citation; the creation date onto ``valido_da``;
- a correction onto Facto's own replacement (the old row closed: ``valido_fino_a`` and
  ``chiuso_il`` set, as its ``close_fact`` does), and a retirement onto the same closing;
- everything Facto has no field for (subject, reason, citations, author, surface, dates,
  status) onto the bookkeeping record in ``fonte``, the field where Facto records who or what a
  fact came from (`memstore.backends.foreign`).

What Facto does not do is emulated: deletion (a row removed; Facto closes, never deletes) and the
refresh of a memory's use (in the bookkeeping). It has no users (every memory is everyone's,
preferences included), no citations (they live in the bookkeeping only), and no expiry it
enforces (``scade_il`` is a column nothing reads): a memory is shown forever.

Facto's trust light judges an *area*, not a fact: a fact dated before the last commit that touched
its area's folder is "possibly outdated". `FactoVerifier` applies that rule to each memory with
its cited files as areas (the finest areas Facto's configuration allows), so it is scored on the
verdict benchmarks beside memstore's verifier (docs/verification.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sqlite3
import sys
import threading
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

from memstore.backends import StoreOptions, folder_per_trial, per_trial
from memstore.backends.foreign import ForeignStore, bookkeeping, from_bookkeeping, repositories, store_folder
from memstore.errors import ConfigurationError, StorageError
from memstore.model import Kind, Memory, Status
from memstore.verify import CitationCheck, Codebase, Verdict, VerdictStatus

__all__ = ["FactoStore", "FactoVerifier", "open_facto"]

_IMPORTING = threading.Lock()
_CONFIG = {"brand": "memstore", "db_path": "facto.db", "git": {"enabled": False}, "projects": {}}
_COLUMNS = "id, progetto, tipo, contenuto, valido_da, valido_fino_a, fonte"


def _engine(folder: Path) -> ModuleType:
    """``facto.mem``, imported once. It reads a configuration when it is imported (and exits the
    process without one): it is given a neutral one in ``folder``, not the user's or the cwd's."""
    with _IMPORTING:
        if "facto.mem" in sys.modules:
            return sys.modules["facto.mem"]
        if importlib.util.find_spec("facto") is None:  # an optional dependency
            raise ConfigurationError("facto: is Facto's store: pip install 'agent-memstore[facto]'")
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "facto.config.json"
        config.write_text(json.dumps(_CONFIG), encoding="utf-8")
        saved = os.environ.get("FACTO_CONFIG")
        os.environ["FACTO_CONFIG"] = str(config)
        try:
            return importlib.import_module("facto.mem")
        finally:
            if saved is None:
                os.environ.pop("FACTO_CONFIG", None)
            else:
                os.environ["FACTO_CONFIG"] = saved


def _area(memory: Memory) -> str:
    if not memory.citations or "/" not in memory.citations[0].path:
        return "root"
    return memory.citations[0].path.split("/", 1)[0]


class FactoStore(ForeignStore):
    """A `MemoryStore` over Facto databases, one per repository."""

    capabilities: frozenset[str] = frozenset({"delete", "history", "retire", "search", "supersede"})
    native: ClassVar[dict[str, str]] = {
        "writes": "add_fatto(): a dated fact (area, type, text, valid from, source)",
        "supersede": "the old fact closed (valido_fino_a), as Facto's close_fact and new facts do",
        "retire": "the fact closed (valido_fino_a): kept in the history, no longer true now",
        "search": "FTS5 MATCH over the text, ranked, with Facto's LIKE fallback",
        "scoping": "one database per repository",
    }
    emulated: ClassVar[dict[str, str]] = {
        "citations": "kept in the bookkeeping record only (Facto has no citations)",
        "status": "superseded or retired in the bookkeeping record, beside the closed row",
        "delete": "the row removed (Facto closes facts, never deletes one)",
    }

    def __init__(self, folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        self._mem = _engine(folder)
        self._where: dict[str, tuple[str, int]] = {}  # memory id -> (repo, Facto's row id)

    def __repr__(self) -> str:
        return f"FactoStore({str(self.folder)!r})"

    def _connect(self, repo: str) -> sqlite3.Connection:
        path = self.folder / f"{urllib.parse.quote(repo, safe='')}.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path, timeout=5.0)  # as facto.mem.db() opens its own, at this path
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA busy_timeout=5000")
        con.executescript(self._mem.SCHEMA)
        return con

    def _read(self, repo: str, row: Sequence[Any]) -> Memory | None:
        memory = from_bookkeeping(str(row[6] or ""), str(row[3]))
        if memory is None or memory.repo != repo:
            return None  # a fact Facto holds that memstore did not write
        self._where[memory.id] = (repo, int(row[0]))
        return memory

    def _close(self, con: sqlite3.Connection, row_id: int) -> None:
        con.execute(
            "UPDATE fatti SET valido_fino_a=?, chiuso_il=? WHERE id=? AND valido_fino_a IS NULL",
            (self._mem.today(), self._mem.now(), row_id),
        )

    # -- the engine ---------------------------------------------------------------------

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        kind = "preferenza" if memory.kind is Kind.PREFERENCE else "pattern"
        con = self._connect(memory.repo)
        try:
            if replacing is not None and replacing.id in self._where:
                self._close(con, self._where[replacing.id][1])
            self._mem.add_fatto(
                con, _area(memory), kind, memory.fact, memory.created_at.date().isoformat(), bookkeeping(memory)
            )
            row = con.execute(f"SELECT {_COLUMNS} FROM fatti WHERE id = last_insert_rowid()").fetchone()
        except sqlite3.Error as exc:
            raise StorageError(f"Facto refused the memory: {exc}") from exc
        finally:
            con.close()
        kept = self._read(memory.repo, row)
        return kept if kept is not None else memory

    def _save(self, memory: Memory) -> None:
        repo, row_id = self._where[memory.id]
        con = self._connect(repo)
        try:
            con.execute("UPDATE fatti SET fonte=? WHERE id=?", (bookkeeping(memory), row_id))
            if memory.status is not Status.ACTIVE:
                self._close(con, row_id)
            con.commit()
        finally:
            con.close()

    def _rows(self, repo: str, where: str = "", parameters: tuple[Any, ...] = ()) -> list[Memory]:
        con = self._connect(repo)
        try:
            rows = con.execute(f"SELECT {_COLUMNS} FROM fatti {where}", parameters).fetchall()
        finally:
            con.close()
        found = [self._read(repo, row) for row in rows]
        return [m for m in found if m is not None]

    def _fetch(self, memory_id: str) -> Memory | None:
        where = self._locate(self._where, memory_id)
        if where is None:
            return None
        found = self._rows(where[0], "WHERE id=?", (where[1],))
        return found[0] if found else None

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        return self._rows(repo, "ORDER BY id")

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        con = self._connect(repo)
        try:  # what Facto's search tool runs (dashboard_server.build_query)
            rows = con.execute(
                f"SELECT {', '.join('f.' + c.strip() for c in _COLUMNS.split(','))} FROM fatti_fts"
                " JOIN fatti f ON f.id=fatti_fts.rowid WHERE fatti_fts MATCH ? ORDER BY rank",
                (query,),
            ).fetchall()
        except sqlite3.OperationalError:
            rows = con.execute(f"SELECT {_COLUMNS} FROM fatti WHERE contenuto LIKE ?", (f"%{query}%",)).fetchall()
        finally:
            con.close()
        found = [self._read(repo, row) for row in rows]
        return [m for m in found if m is not None][:limit]

    def _drop(self, memory_ids: list[str]) -> None:
        by_repo: dict[str, list[int]] = {}
        for memory_id in memory_ids:
            where = self._where.pop(memory_id, None)
            if where is not None:
                by_repo.setdefault(where[0], []).append(where[1])
        for repo, row_ids in by_repo.items():
            con = self._connect(repo)
            try:
                con.executemany("DELETE FROM fatti WHERE id=?", [(i,) for i in row_ids])
                con.commit()
            finally:
                con.close()

    def _repos(self) -> list[str]:
        return repositories(self.folder, ".db")


@per_trial(
    folder_per_trial("facto", "facto", shared=True),
    hint="use 'facto:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_facto(uri: str, options: StoreOptions) -> FactoStore:
    """Factory for ``facto:///dir`` (a folder of Facto databases, one per repository)."""
    return FactoStore(store_folder(uri), options)


class FactoVerifier:
    """Facto's trust-light rule, per memory, as a `memstore.verify.Verifier`
    (``evals/bench/eval_verdicts.py --verifier memstore.backends.facto:FactoVerifier``).

    Facto flags a fact as "possibly outdated" when a commit touched its area's folder after the
    fact was dated (``semaforo_progetto``), and reads no fact. Here each cited file is an area
    (the finest Facto's configuration allows) and "a commit touched it since" is its text at the
    citation's recorded commit against its text now. What Facto says, as a verdict: no cited file
    touched, VALID; one touched or gone, CONTRADICTED (out of use: Facto has no other outcome, no
    correction and no new place for a moved line); a citation with no recorded commit, VALID
    (Facto's yellow "not anchored to git yet", which keeps a fact in use).
    """

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        touched = []
        for check in checks:
            citation = check.citation
            if citation.commit is None or not codebase.has_commit(citation.commit):
                continue
            then, now = codebase.read_at(citation.commit, citation.path), codebase.read(citation.path)
            if not now.ok or then.lines != now.lines:
                touched.append(citation.path)
        if touched:
            reason = f"facto: {', '.join(sorted(set(touched)))} touched by a commit since the fact was dated"
            return Verdict(VerdictStatus.CONTRADICTED, tuple(checks), reason=reason)
        return Verdict(VerdictStatus.VALID, tuple(checks), reason="facto: no commit touched the cited files since")
