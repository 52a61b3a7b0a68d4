"""``repomemory:///dir``: memories in repo-memory (PyPI ``repo-memory-mcp`` 0.2.1, import ``repo_memory``).

repo-memory keeps a repository's facts in ``.ai-memory/facts.jsonl`` inside the repository,
committed with it ("git is the database"): each line a claim with its evidence (one ``file``
and its ``lines``), tags and who added it; nothing is ever changed or removed, and nothing
expires. How an agent deploys it: one ``.ai-memory/`` per repository, written through
``repo_memory.store.add_fact`` (what its MCP server's ``add_fact`` tool and its CLI call). This
adapter does the same, one repository folder per ``owner/name`` under ``dir``, and maps:

- the fact onto repo-memory's ``claim``; the first citation onto its ``evidence``
  (``{"file", "lines": "first-last"}``): repo-memory keeps one file per fact, so a memory with
  more citations comes back with its first (the audit counts the rest as altered);
- the author onto ``added_by``; everything repo-memory has no field for (subject, reason, kind,
  surface, dates, status, each citation's recorded text) onto the bookkeeping record in its
  ``tags`` (`memstore.backends.foreign`).

Around it, what repo-memory does not do at all is emulated, by rewriting ``facts.jsonl``: a
version's status (superseded, retired, refreshed), and deletion. It has no users (every memory
is everyone's, preferences included), no expiry (a memory is shown forever), and no search
beyond filters by tag and file: the harness hands it by recency and measures the rest.
"""

from __future__ import annotations

import json
import urllib.parse
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
from memstore.model import Memory

__all__ = ["RepoMemoryStore", "open_repo_memory"]


def _engine() -> Any:
    try:
        import repo_memory.store  # an optional dependency: pip install 'agent-memstore[repo-memory]'
    except ImportError as exc:
        raise ConfigurationError(
            "repomemory: is repo-memory's store: pip install 'agent-memstore[repo-memory]'"
        ) from exc
    return repo_memory.store


class RepoMemoryStore(ForeignStore):
    """A `MemoryStore` over repo-memory's ``.ai-memory/`` folders, one per repository."""

    capabilities: frozenset[str] = frozenset({"delete", "history", "retire", "supersede"})
    native: ClassVar[dict[str, str]] = {
        "citations": "evidence: one file and its line range per fact",
        "scoping": "one .ai-memory/ folder per repository, committed with it",
        "writes": "add_fact(): an appended line of facts.jsonl",
    }
    emulated: ClassVar[dict[str, str]] = {
        "status": "superseded, retired, refreshed: the version's facts.jsonl line rewritten (repo-memory changes none)",
        "delete": "the facts.jsonl line removed (repo-memory never removes one)",
        "supersede": "a new fact, the old one's status in the bookkeeping record",
    }

    def __init__(self, folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        self._rm = _engine()
        self._where: dict[str, tuple[str, str]] = {}  # memory id -> (repo, repo-memory's fact id)

    def __repr__(self) -> str:
        return f"RepoMemoryStore({str(self.folder)!r})"

    def _root(self, repo: str) -> Path:
        return self.folder / urllib.parse.quote(repo, safe="")

    def _facts(self, repo: str) -> Path:
        return self._root(repo) / str(self._rm.MEMORY_DIR) / str(self._rm.FACTS_FILE)

    def _read(self, repo: str, fact: Any) -> Memory | None:
        tag = next((t for t in fact.tags if isinstance(t, str) and t.startswith(BOOKKEEPING)), None)
        if tag is None:
            return None  # a fact repo-memory holds that memstore did not write
        evidence = fact.evidence or {}
        cited = []
        if evidence.get("file"):
            first, _, last = str(evidence.get("lines") or "1").partition("-")
            try:
                cited = [(str(evidence["file"]), int(first), int(last) if last and last != first else None)]
            except ValueError:
                cited = [(str(evidence["file"]), 1, None)]
        memory = from_bookkeeping(tag, fact.claim, cited)
        if memory is not None and memory.repo == repo:
            self._where[memory.id] = (repo, fact.id)
            return memory
        return None

    # -- the engine ---------------------------------------------------------------------

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        evidence = {}
        if memory.citations:
            first = memory.citations[0]
            evidence = {"file": first.path, "lines": f"{first.line}-{first.end_line or first.line}"}
        root = self._root(memory.repo)
        root.mkdir(parents=True, exist_ok=True)
        try:
            self._rm.init(root, update_claude_md=False)
            fact = self._rm.add_fact(
                root, memory.fact, evidence=evidence, tags=[bookkeeping(memory)], added_by=memory.author
            )
        except (OSError, ValueError, TypeError) as exc:
            raise StorageError(f"repo-memory refused the memory: {exc}") from exc
        kept = self._read(memory.repo, fact)
        return kept if kept is not None else memory

    def _rewrite(self, repo: str, change: Any) -> None:
        """facts.jsonl again, each line as ``change(line's record)`` gives it (None: dropped)."""
        path = self._facts(repo)
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            changed = change(record)
            if changed is not None:
                lines.append(json.dumps(changed, ensure_ascii=False))
        temporary = path.with_suffix(".jsonl.tmp")
        temporary.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        temporary.replace(path)

    def _save(self, memory: Memory) -> None:
        repo, fact_id = self._where[memory.id]

        def retagged(record: dict[str, Any]) -> dict[str, Any]:
            if record.get("id") == fact_id:
                others = [t for t in record.get("tags") or [] if not str(t).startswith(BOOKKEEPING)]
                record["tags"] = [*others, bookkeeping(memory)]
            return record

        self._rewrite(repo, retagged)

    def _fetch(self, memory_id: str) -> Memory | None:
        where = self._locate(self._where, memory_id)
        if where is None:
            return None
        for fact in self._rm.list_facts(self._root(where[0])):
            if fact.id == where[1]:
                return self._read(where[0], fact)
        return None

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        found = [self._read(repo, fact) for fact in self._rm.list_facts(self._root(repo))]
        return [m for m in found if m is not None]

    def _drop(self, memory_ids: list[str]) -> None:
        by_repo: dict[str, set[str]] = {}
        for memory_id in memory_ids:
            where = self._where.pop(memory_id, None)
            if where is not None:
                by_repo.setdefault(where[0], set()).add(where[1])
        for repo, fact_ids in by_repo.items():
            self._rewrite(repo, lambda record, gone=fact_ids: None if record.get("id") in gone else record)

    def _repos(self) -> list[str]:
        return repositories(self.folder)


@per_trial(
    folder_per_trial("repomemory", "repo-memory", shared=True),
    hint="use 'repomemory:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_repo_memory(uri: str, options: StoreOptions) -> RepoMemoryStore:
    """Factory for ``repomemory:///dir`` (a folder of repositories' ``.ai-memory/`` folders)."""
    folder = store_folder(uri)
    _engine()
    return RepoMemoryStore(folder, options)
