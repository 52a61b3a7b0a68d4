"""``memcite:///dir``: memories in memcite (PyPI ``memcite``, import ``agentic_memory``).

memcite keeps repository-scoped memories in SQLite (FTS5 full-text search and a TF-IDF vector,
fused), each with required evidence (a file and line range whose hash it captures), its own
``validate()``, a time to live, supersede links and de-duplication of identical text. How a
coding agent deploys it: one memcite database per repository. This adapter does the same, one
database per ``owner/name`` under ``dir``, and maps each memory onto memcite's own fields:

- the fact is memcite's ``content``; each citation a ``FileRef(path, lines=(line, end))``
  (a preference, which cites nothing, gets a ``ManualRef``: memcite requires evidence);
- the kind is memcite's kind (``fact`` or ``preference``); the expiry window its
  ``ttl_seconds``, which memcite counts from creation (using a memory does not renew it), judged
  here on the store's clock, since memcite reads the wall clock and an eval's clock is simulated;
- searches are memcite's ``query()`` (its hybrid ranking), without its validation: a store is
  handed no checkout in an eval, so verification is the agent's job (jit-verify);
- a correction is memcite's ``supersede()``, with its de-duplication off (memcite's default
  would return the memory being corrected when the correction keeps its words, a re-anchored
  citation say, and then fail linking a memory to itself); a new memory keeps memcite's
  default: the same text stored again returns the memory memcite has (an unkept write).

What memcite has no field for (subject, reason, author, surface, dates, status, each
citation's recorded text and commit) is the bookkeeping record in its ``tags``
(`memstore.backends.foreign`). memcite has no users: every memory is shown to everyone
(preferences included) and anyone may write, as in a deployment; the harness counts the leaks.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from memstore.backends import StoreOptions, folder_per_trial, per_trial
from memstore.backends.foreign import (
    BOOKKEEPING,
    ForeignStore,
    bookkeeping,
    from_bookkeeping,
    repositories,
    store_folder,
)
from memstore.errors import ConfigurationError, StorageError
from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify import CitationCheck, Codebase, Verdict, VerdictStatus

__all__ = ["MemciteStore", "MemciteVerifier", "open_memcite"]


def _memcite() -> Any:
    try:
        import agentic_memory  # an optional dependency: pip install 'agent-memstore[memcite]'
        import agentic_memory.embedding
        import agentic_memory.evidence
    except ImportError as exc:
        raise ConfigurationError("memcite: is memcite's store: pip install 'agent-memstore[memcite]'") from exc
    return agentic_memory


class MemciteStore(ForeignStore):
    """A `MemoryStore` over memcite databases, one per repository (see the module docstring)."""

    capabilities: frozenset[str] = frozenset({"delete", "expiry", "history", "retire", "search", "supersede", "sweep"})
    native: ClassVar[dict[str, str]] = {
        "citations": "FileRef evidence (path and line range, content hash captured at add)",
        "verification": "validate(): evidence hashes and snippet relocation (not run in an eval: no checkout)",
        "search": "query(): FTS5 and TF-IDF fused",
        "supersede": "supersede(): a 'supersedes' edge and the old memory's superseded_by",
        "expiry": "ttl_seconds, from creation",
        "scoping": "one database per repository",
    }
    emulated: ClassVar[dict[str, str]] = {
        "status": "superseded and retired versions kept as such in the bookkeeping record (memcite deletes or links)",
        "expiry": "memcite's ttl judged on the store's clock instead of the wall clock",
        "sweep": "memcite's auto_expire, on the store's clock",
    }

    def __init__(self, folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        self._engines: dict[str, Any] = {}
        self._where: dict[str, tuple[str, str]] = {}  # memory id -> (repo, memcite id)
        self._am = _memcite()

    def __repr__(self) -> str:
        return f"MemciteStore({str(self.folder)!r})"

    def _engine(self, repo: str) -> Any:
        engine = self._engines.get(repo)
        if engine is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            key = urllib.parse.quote(repo, safe="")
            engine = self._engines[repo] = self._am.Memory(
                self.folder,
                db_name=str(self.folder / f"{key}.db"),
                embedding=self._am.embedding.TFIDFEmbedding(),
            )
        return engine

    def close(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.close()
            self._engines.clear()

    # -- between a memory and a memcite record ------------------------------------------

    def _evidence(self, memory: Memory) -> list[Any]:
        ev = self._am.evidence
        if not memory.citations:
            return [ev.ManualRef(note=f"{memory.kind.value} of {memory.author}")]
        return [ev.FileRef(c.path, lines=(c.line, c.end_line or c.line)) for c in memory.citations]

    def _read(self, repo: str, record: Any) -> Memory | None:
        tag = next((t for t in record.tags if isinstance(t, str) and t.startswith(BOOKKEEPING)), None)
        if tag is None:
            return None  # a memory memcite holds that memstore did not write
        cited = [
            (e.path, e.lines[0], e.lines[1]) if e.lines else (e.path, 1, None)
            for e in record.evidence_list
            if isinstance(e, self._am.evidence.FileRef)
        ]
        memory = from_bookkeeping(tag, record.content, cited)
        if memory is not None and memory.repo == repo:
            self._where[memory.id] = (repo, record.id)
            return memory
        return None

    # -- the engine ---------------------------------------------------------------------

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        engine = self._engine(memory.repo)
        options = {
            "tags": [bookkeeping(memory)],
            "kind": "preference" if memory.kind is Kind.PREFERENCE else "fact",
            "ttl_seconds": int(self.expiry.total_seconds()),
        }
        try:
            if replacing is not None:  # a correction is a version of its own, even in the same words
                old = self._where[replacing.id][1]
                record = engine.supersede(old, memory.fact, self._evidence(memory), deduplicate=False, **options)
            else:
                record = engine.add(memory.fact, evidence=self._evidence(memory), **options)
        except (ValueError, TypeError, sqlite3.Error) as exc:  # memcite's own refusals and failures
            raise StorageError(f"memcite refused the memory: {exc}") from exc
        kept = self._read(memory.repo, record)
        return kept if kept is not None else memory

    def _save(self, memory: Memory) -> None:
        repo, record_id = self._where[memory.id]
        engine = self._engine(repo)
        record = engine.get(record_id)
        if record is not None:
            record.tags = [bookkeeping(memory)]
            engine._store.save(record)  # memcite has no update(): its store's save() is what it uses itself

    def _fetch(self, memory_id: str) -> Memory | None:
        where = self._locate(self._where, memory_id)
        if where is None:
            return None
        record = self._engine(where[0]).get(where[1])
        return None if record is None else self._read(where[0], record)

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        found = [self._read(repo, r) for r in self._engine(repo).list_all(limit=None)]
        return [m for m in found if m is not None]

    def _drop(self, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            where = self._where.pop(memory_id, None)
            if where is not None:
                self._engine(where[0]).delete(where[1])

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        result = self._engine(repo).query(query, limit=limit, validate=False, include_stale=True)
        found = [self._read(repo, r) for r in result.memories]
        return [m for m in found if m is not None]

    def _repos(self) -> list[str]:
        return repositories(self.folder, ".db")


@per_trial(
    folder_per_trial("memcite", "memcite", shared=True),
    hint="use 'memcite:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_memcite(uri: str, options: StoreOptions) -> MemciteStore:
    """Factory for ``memcite:///dir`` (a folder of memcite databases, one per repository)."""
    folder = store_folder(uri)
    _memcite()
    return MemciteStore(folder, options)


class MemciteVerifier:
    """memcite's own evidence check, ``FileRef.validate``, as a `memstore.verify.Verifier`: so it
    is measured on the same benchmark as memstore's verifier (``evals/bench/eval_verdicts.py
    --verifier memstore.backends.memcite:MemciteVerifier``).

    Each citation becomes the ``FileRef`` memcite makes when a memory is added: the cited line
    range, with the hash and snapshot of the text it held then (the citation's recorded text).
    memcite validates against files on disk, so each cited file is written, as ``codebase``
    holds it now, into a scratch folder. What memcite says, as a verdict: every citation's text
    unchanged, or found again elsewhere in its file by its snapshot, is VALID (REANCHORED where
    it moved, the new lines in the correction); a citation whose text changed makes the memory
    stale, CONTRADICTED here (out of use; memcite gives no corrected value); a file gone is
    MISSING (memcite does not follow renames). memcite does not read the fact: a wrong fact
    behind lines that did not change is valid to it, as its documentation says.
    """

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        evidence = _memcite().evidence
        statuses, moved = [], []
        with tempfile.TemporaryDirectory(prefix="memstore-memcite-") as scratch:
            for check in checks:
                citation, text = check.citation, check.snippet
                read = codebase.read(citation.path)
                if read.ok:
                    target = Path(scratch, citation.path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text("".join(f"{line}\n" for line in read.lines), encoding="utf-8")
                snapshot = "" if text is None else text + "\n"
                ref = evidence.FileRef(
                    citation.path,
                    lines=(citation.line, citation.last_line),
                    content_hash=hashlib.sha256(snapshot.encode()).hexdigest()[:16] if text is not None else "",
                    content_snapshot=snapshot,
                )
                status, _ = ref.validate(scratch)
                statuses.append(str(getattr(status, "value", status)).lower())
                if statuses[-1] == "valid" and ref.lines != (citation.line, citation.last_line):
                    end = ref.lines[1] if ref.lines[1] != ref.lines[0] else None
                    moved.append(Citation(citation.path, ref.lines[0], end, snippet=text, commit=citation.commit))
                else:
                    moved.append(citation)
        if "invalid" in statuses:
            return Verdict(VerdictStatus.MISSING, tuple(checks), reason="memcite: a cited file is gone")
        if "stale" in statuses:
            return Verdict(VerdictStatus.CONTRADICTED, tuple(checks), reason="memcite: the cited content changed")
        if moved != list(memory.citations):
            corrected = MemoryDraft(memory.repo, memory.kind, memory.subject, memory.fact, tuple(moved), memory.reason)
            return Verdict(VerdictStatus.REANCHORED, tuple(checks), corrected, "memcite: the cited content moved")
        return Verdict(VerdictStatus.VALID, tuple(checks), reason="memcite: the cited content matches")
