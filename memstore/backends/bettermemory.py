"""``bettermemory:///dir``: memories in bettermemory (PyPI ``bettermemory`` 8.0.0).

bettermemory keeps a project's memories as markdown files with YAML front matter, one file a
memory, in a ``.claude-memory/`` folder of the project (a SQLite full-text index beside them is a
cache), and checks a memory before it is believed: every search hit carries a staleness verdict
(the paths its body cites still exist, the commits landed since it was last verified, declared
claims). How a coding agent deploys it: its MCP server, one store in each project. This adapter
does the same, one store per ``owner/name`` under ``dir`` (``dir/owner%2Fname/.claude-memory``),
driving bettermemory's own store (``bettermemory.store.Store``, what its MCP tools call) with the
folder as an argument: no configuration is read, so neither ``~/.claude-memory`` nor a
configuration file in the user's home is touched. It maps:

- the fact onto the memory's body, and the citations into the body as bettermemory's memories
  cite code (a last paragraph ```path:line`, ...``), which its path-drift and commit-drift legs
  read; the kind onto its category (``fact``, a preference ``user-inference``); the author onto
  its actor's ``principal``; the repository onto the store and a ``projects:`` scope;
- a write onto what ``memory_write`` runs before ``Store.write``: its content gates, with every
  refusal a caller lifts by acknowledging (transient wording, secret-shaped tokens, a scope
  mismatch) acknowledged as the agent is told to, so its de-duplication is what refuses: a write
  close to an active memory (``duplicate``) or to a removed one (``previously_removed``) is not
  stored (a `StorageError`). A correction is a write with bettermemory's declared ``supersedes``
  link and ``force`` (the correction is meant to differ); its automatic supersession detector is
  not run (the links it adds change nothing bettermemory returns);
- retiring onto ``memory_remove`` (``Store.tombstone``: the file moves to ``.tombstones/`` with
  its reason); searches onto its ranking (``bettermemory.search.search``, keyword and BM25 fused)
  over the active memories, as ``memory_search`` ranks them.

bettermemory's front matter is a fixed schema with no field for anything else, so the
bookkeeping record (subject, reason, dates, status, each citation's line and recorded text,
`memstore.backends.foreign`) is a JSON file beside the store, named by bettermemory's id.
Emulated around it: that a superseded version is out of use (bettermemory keeps returning it,
marked ``superseded_by``), refreshing, and deletion (bettermemory never deletes one memory: the
memory is tombstoned and its tombstone file removed). It has no users (every memory is
everyone's, preferences included), no surfaces, and no expiry (its calendar leg asks for a
check, it drops nothing).
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from memstore.backends import StoreOptions, folder_per_trial, per_trial
from memstore.backends.bettermemory_judge import BettermemoryVerifier, bettermemory, cited_body, cited_in
from memstore.backends.foreign import ForeignStore, bookkeeping, from_bookkeeping, repositories, store_folder
from memstore.errors import StorageError
from memstore.model import Kind, Memory, Status

__all__ = ["BettermemoryStore", "BettermemoryVerifier", "open_bettermemory"]

PROJECT = ".claude-memory"  # bettermemory's folder in a project (bettermemory.config.PROJECT_DIR_NAME)
KEPT = "memstore"  # the folder of bookkeeping records beside it
GONE = "memstore: deleted"  # the removal reason of a memory being deleted


def _scope(repo: str) -> str:
    """bettermemory's scope of a repository (lowercase letters, digits, hyphens, colons)."""
    return "projects:" + (re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-") or "repo")


class BettermemoryStore(ForeignStore):
    """A `MemoryStore` over bettermemory stores, one per repository (see the module docstring)."""

    capabilities: frozenset[str] = frozenset({"delete", "history", "retire", "search", "supersede"})
    native: ClassVar[dict[str, str]] = {
        "citations": "cited in the body as path:line, read by its path-drift and commit-drift legs",
        "search": "bettermemory.search.search: keyword and BM25 fused (memory_search's ranking)",
        "supersede": "a declared 'supersedes' link on the correction (memory_write's supersedes=)",
        "retire": "memory_remove: Store.tombstone, the file kept in .tombstones/ with its reason",
        "writes": "Store.write after memory_write's content gates: de-duplication refuses near copies",
        "scoping": "one .claude-memory/ store per repository, and its projects: scope",
    }
    emulated: ClassVar[dict[str, str]] = {
        "status": "a superseded version out of use, and refreshing: the bookkeeping record (bettermemory "
        "returns a superseded memory, marked superseded_by)",
        "delete": "the memory tombstoned and its tombstone file removed (bettermemory deletes none alone)",
    }

    def __init__(self, folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        self._bm = bettermemory()
        self._stores: dict[str, Any] = {}
        self._where: dict[str, tuple[str, str]] = {}  # memory id -> (repo, bettermemory's id)

    def __repr__(self) -> str:
        return f"BettermemoryStore({str(self.folder)!r})"

    def _root(self, repo: str) -> Path:
        return self.folder / urllib.parse.quote(repo, safe="")

    def _engine(self, repo: str) -> Any:
        engine = self._stores.get(repo)
        if engine is None:
            engine = self._stores[repo] = self._bm.store.Store(self._root(repo) / PROJECT)
        return engine

    def _kept(self, repo: str, record_id: str) -> Path:
        return self._root(repo) / KEPT / f"{record_id}.json"

    def _keep(self, repo: str, record_id: str, memory: Memory) -> None:
        path = self._kept(repo, record_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(bookkeeping(memory), encoding="utf-8")
        temporary.replace(path)

    def _read(self, repo: str, record: Any) -> Memory | None:
        try:
            kept = self._kept(repo, record.id).read_text(encoding="utf-8")
        except OSError:
            return None  # a memory bettermemory holds that memstore did not write
        fact, cited = cited_in(record.body)
        memory = from_bookkeeping(kept, fact, cited)
        if memory is None or memory.repo != repo:
            return None
        self._where[memory.id] = (repo, record.id)
        kind = Kind.PREFERENCE if record.category == self._bm.models.Category.USER_INFERENCE else Kind.FACT
        author = record.actor.principal if record.actor is not None and record.actor.principal else memory.author
        return replace(memory, kind=kind, author=author)

    # -- the engine ---------------------------------------------------------------------

    def _refusal(self, engine: Any, payload: dict[str, Any], force: bool) -> str | None:
        """What memory_write's content gates say of ``payload`` (every acknowledgement given)."""
        write = self._bm.write
        yes = dict.fromkeys(("transient", "scope_mismatch", "ungrounded", "credential", "user_claim"), True)
        context = write.GateContext(
            payload=payload,
            force=force,
            groundedness_check=False,
            source_transcript=None,
            **{f"acknowledge_{name}": value for name, value in yes.items()},
        )
        deps = write.GateBundle.for_store(engine, self._bm.config.Config())
        decision = write.apply_write_gates(deps, context, gates=write.CONTENT_GATES)
        if decision is None:
            return None
        response = getattr(decision, "response", {})
        ours = {record: memory_id for memory_id, (_, record) in self._where.items()}
        matched = [*response.get("matches", []), *response.get("removed_matches", [])]
        found = [ours.get(m.get("id"), m.get("id")) for m in matched]
        return f"{response.get('status', 'refused')} of {', '.join(map(str, found)) or 'a memory'}"

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        bm = self._bm
        engine = self._engine(memory.repo)
        category = {Kind.FACT: bm.models.Category.FACT, Kind.PREFERENCE: bm.models.Category.USER_INFERENCE}
        payload: dict[str, Any] = {
            "content": cited_body(memory.fact, memory.citations),
            "scopes": [_scope(memory.repo)],
            "confidence": bm.models.Confidence.MEDIUM,
            "source": bm.models.Source.EXPLICIT,
            "category": category[memory.kind],
            "actor": bm.identity.Actor(principal=memory.author),
        }
        links = []
        if replacing is not None:
            target = self._where[replacing.id][1]
            links = [{"type": "supersedes", "target_id": target, "note": "declared at write time"}]
        try:
            engine.ensure()
            refused = self._refusal(engine, payload, force=replacing is not None)
            if refused is not None:
                raise StorageError(f"bettermemory refused the memory: {refused}")
            record = engine.write(**payload, links=links)
            self._keep(memory.repo, record.id, memory)
        except (OSError, ValueError, TypeError) as exc:  # bettermemory's own refusals and failures
            raise StorageError(f"bettermemory refused the memory: {exc}") from exc
        kept = self._read(memory.repo, record)
        return kept if kept is not None else memory

    def _save(self, memory: Memory) -> None:
        repo, record_id = self._where[memory.id]
        self._keep(repo, record_id, memory)
        if memory.status is Status.RETIRED:
            engine = self._engine(repo)
            with contextlib.suppress(self._bm.store.TombstonedError):  # removed already
                engine.tombstone(record_id, memory.retired_reason or "retired")

    def _record(self, repo: str, record_id: str) -> Any:
        engine, store = self._engine(repo), self._bm.store
        try:
            return engine.load_one(record_id)
        except store.TombstonedError:
            return engine.load_tombstone(record_id)
        except store.MemoryNotFoundError:
            return None

    def _fetch(self, memory_id: str) -> Memory | None:
        where = self._locate(self._where, memory_id)
        if where is None:
            return None
        try:
            record = self._record(*where)
        except self._bm.store.MemoryNotFoundError:
            return None
        return None if record is None else self._read(where[0], record)

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        engine = self._engine(repo)
        found = [self._read(repo, r) for r in [*engine.load_all(), *engine.load_tombstones()]]
        return [m for m in found if m is not None]

    def _drop(self, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            where = self._where.pop(memory_id, None)
            if where is None:
                continue
            repo, record_id = where
            engine = self._engine(repo)
            try:
                engine.tombstone(record_id, GONE)
            except self._bm.store.TombstonedError:
                pass  # retired: tombstoned already
            except self._bm.store.MemoryNotFoundError:
                continue
            path = engine._find_tombstone_path_for_id(record_id)  # bettermemory's own lookup of a tombstone
            if path is not None:
                path.unlink(missing_ok=True)
            self._kept(repo, record_id).unlink(missing_ok=True)

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        active = {m.id: m for m in self._engine(repo).load_all()}
        hits = self._bm.search.search(list(active.values()), query, max_results=limit)
        found = [self._read(repo, active[h.id]) for h in hits if h.id in active]
        return [m for m in found if m is not None]

    def _repos(self) -> list[str]:
        return repositories(self.folder)


@per_trial(
    folder_per_trial("bettermemory", "bettermemory", shared=True),
    hint="use 'bettermemory:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_bettermemory(uri: str, options: StoreOptions) -> BettermemoryStore:
    """Factory for ``bettermemory:///dir`` (a folder of bettermemory stores, one per repository)."""
    folder = store_folder(uri)
    bettermemory()
    return BettermemoryStore(folder, options)
