"""``mem0:///dir``: memories in Mem0 OSS (PyPI ``mem0ai``), offline.

Mem0 keeps memories as texts with metadata in a vector store, scoped by ``user_id``,
``agent_id`` and ``run_id``; ``add(..., infer=False)`` stores a text as given (no LLM decides
what to keep), ``search()`` ranks by embedding similarity, ``update()`` keeps a history. This
adapter runs it with nothing that can reach a network:

- telemetry off (``MEM0_TELEMETRY=False``, set before mem0 is imported, and mem0's own switch
  checked after) and mem0's home folder (``MEM0_DIR``) under this user's cache, not ``~/.mem0``;
- the vector store is mem0's local Qdrant (qdrant-client's embedded mode) in ``dir``, and the
  history database mem0's SQLite in ``dir``;
- the embedder is `HashedWords`, a stand-in for a model (a hashed bag of words, 256
  dimensions: deterministic, no download). mem0 is configured with its OpenAI providers
  pointed at a closed local port with a dummy key, then the embedder is replaced; with
  ``infer=False`` the LLM is never asked, and were it asked, nothing would leave the machine.

How a coding agent's deployment would scope it, and so this adapter: a repository's facts under
``agent_id=owner/name``; a preference also under its author's ``user_id``, and a user's
preferences are read by ``user_id`` (mem0's own scoping keeps one user's from another; it knows
nothing of surfaces). Subject, reason, author, citations and the rest travel in mem0's
``metadata`` (`memstore.backends.foreign`); ranking ties (equal similarity) are broken by
memory id so the same seed gives the same order. mem0 has no permissions (anyone may write a
repository's facts) and its ``expiration_date`` is a calendar date on the wall clock, while an
eval's clock is simulated: expiry is judged here on the store's clock, from the last refresh, as
a deployment that moves ``expiration_date`` on with ``update()`` would have it. The rankings
of this store come from the stand-in embedder: mem0 with a real embedding model would rank
otherwise.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, ClassVar

from memstore.backends import StoreOptions, folder_per_trial, per_trial
from memstore.backends.foreign import ForeignStore, bookkeeping, from_bookkeeping
from memstore.errors import ConfigurationError
from memstore.model import Kind, Memory
from memstore.uri import StoreURI

__all__ = ["DIMENSIONS", "HashedWords", "Mem0Store", "open_mem0"]

DIMENSIONS = 256
_WORD = re.compile(r"[A-Za-z0-9_]+")
_CLOSED = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, nothing leaves the machine
_META = "memstore"  # the metadata key of the bookkeeping record


class HashedWords:
    """A stand-in embedder (not a model): each lower-cased word (and each part of a snake_case or
    camelCase name) hashed to one of `DIMENSIONS` signed axes, the vector normalised. Texts that
    share words are near; nothing is learned, nothing downloaded."""

    config = None

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        vector = [0.0] * DIMENSIONS
        for word in _words(text):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            axis = int.from_bytes(digest[:4], "big") % DIMENSIONS
            vector[axis] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]


def _words(text: str) -> list[str]:
    found = []
    for word in _WORD.findall(text):
        found.append(word.lower())
        parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", word)]
        if len(parts) > 1:
            found += parts
    return found


def _mem0() -> Any:
    os.environ["MEM0_TELEMETRY"] = "False"
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memstore" / "mem0"
    os.environ.setdefault("MEM0_DIR", str(home))
    try:
        import mem0  # an optional dependency: pip install 'agent-memstore[mem0]'
        import mem0.memory.main
        import mem0.memory.telemetry
    except ImportError as exc:
        raise ConfigurationError("mem0: is Mem0's store: pip install 'agent-memstore[mem0]'") from exc
    # mem0 reads its switch once at import; imported before this (telemetry on), it is switched off here.
    mem0.memory.telemetry.MEM0_TELEMETRY = False
    mem0.memory.main.MEM0_TELEMETRY = False
    for name in ("mem0", "qdrant_client", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return mem0


class Mem0Store(ForeignStore):
    """A `MemoryStore` over one Mem0 instance in a folder (see the module docstring)."""

    capabilities: frozenset[str] = frozenset(
        {"delete", "expiry", "history", "preferences", "retire", "search", "supersede", "sweep"}
    )
    native: ClassVar[dict[str, str]] = {
        "search": "search(): embedding similarity (here the HashedWords stand-in)",
        "scoping": "agent_id per repository, user_id per user's preferences",
        "preferences": "a user's preferences read by user_id",
    }
    emulated: ClassVar[dict[str, str]] = {
        "citations": "kept in metadata (mem0 has no evidence field)",
        "supersede": "a new memory, the old one's status superseded in metadata (mem0's update() overwrites)",
        "status": "retired and superseded versions kept as such in metadata",
        "expiry": "mem0's expiration_date (set at add, moved on by refresh) judged on the store's clock",
        "sweep": "expired memories deleted, on the store's clock",
    }
    users = True
    expires_from_creation = False  # a deployment moves expiration_date on when a memory is used (update())

    def __init__(self, folder: Path, options: StoreOptions) -> None:
        super().__init__(options)
        self.folder = folder
        self._engine: Any = None
        self._where: dict[str, str] = {}  # memory id -> mem0 id
        _mem0()

    def __repr__(self) -> str:
        return f"Mem0Store({str(self.folder)!r})"

    def _mem(self) -> Any:
        if self._engine is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            offline = {"api_key": "unused-offline", "openai_base_url": _CLOSED}
            config = {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "memstore",
                        "path": str(self.folder / "qdrant"),
                        "on_disk": True,
                        "embedding_model_dims": DIMENSIONS,
                    },
                },
                "embedder": {"provider": "openai", "config": {**offline, "embedding_dims": DIMENSIONS}},
                "llm": {"provider": "openai", "config": offline},
                "history_db_path": str(self.folder / "history.db"),
            }
            engine = _mem0().Memory.from_config(config)
            engine.embedding_model = HashedWords()
            self._engine = engine
        return self._engine

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                client = getattr(self._engine.vector_store, "client", None)
                if client is not None:
                    client.close()
                self._engine = None

    def _read(self, item: dict[str, Any]) -> Memory | None:
        record = (item.get("metadata") or {}).get(_META)
        memory = from_bookkeeping(record, item.get("memory", "")) if isinstance(record, str) else None
        if memory is not None:
            self._where[memory.id] = item["id"]
        return memory

    def _scope(self, memory: Memory) -> dict[str, str]:
        scope = {"agent_id": memory.repo}
        if memory.kind is Kind.PREFERENCE:
            scope["user_id"] = memory.author
        return scope

    def _listed(self, filters: dict[str, str]) -> list[Memory]:
        found = self._mem().get_all(filters=filters, top_k=10_000, show_expired=True)["results"]
        return [m for m in (self._read(i) for i in found) if m is not None]

    # -- the engine ---------------------------------------------------------------------

    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        added = self._mem().add(memory.fact, **self._scope(memory), metadata={_META: bookkeeping(memory)}, infer=False)[
            "results"
        ]
        for item in added:
            self._where[memory.id] = item["id"]
        return self._fetch(memory.id) or memory

    def _save(self, memory: Memory) -> None:
        self._mem().update(self._where[memory.id], metadata={_META: bookkeeping(memory)})

    def _fetch(self, memory_id: str) -> Memory | None:
        where = self._where.get(memory_id) or self._index().get(memory_id)
        if where is None:
            return None
        item = self._mem().get(where)
        return None if item is None else self._read(item)

    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        found = [m for m in self._listed({"agent_id": repo}) if m.kind is Kind.FACT or user is None]
        if user is not None:
            found += [m for m in self._listed({"user_id": user}) if m.kind is Kind.PREFERENCE]
        return found

    def _drop(self, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            where = self._where.pop(memory_id, None)
            if where is not None:
                self._mem().delete(where)

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        hits: list[tuple[float, Memory]] = []
        scopes = [{"agent_id": repo}] + ([{"user_id": user}] if user is not None else [])
        for filters in scopes:
            for item in self._mem().search(query, filters=filters, top_k=max(limit * 2, 20), threshold=0.0)["results"]:
                memory = self._read(item)
                if memory is not None and (memory.kind is Kind.FACT) == ("user_id" not in filters):
                    hits.append((round(float(item.get("score") or 0.0), 6), memory))
        hits.sort(key=lambda hit: (-hit[0], hit[1].id))
        return [m for _, m in hits]

    def _repos(self) -> list[str]:
        return sorted({m.repo for m in (self._fetch(i) for i in list(self._index())) if m is not None})

    def _index(self) -> dict[str, str]:
        """Every memory's mem0 id, from the vector store's own list (written by another process,
        or before this store was opened)."""
        points, _ = self._mem().vector_store.list(top_k=1_000_000)
        for point in points:
            payload = point.payload or {}
            memory = from_bookkeeping(str(payload.get(_META, "")), str(payload.get("data", "")))
            if memory is not None:
                self._where[memory.id] = str(point.id)
        return self._where


@per_trial(
    folder_per_trial("mem0", "mem0", shared=False),  # mem0's embedded Qdrant admits one process at a time
    hint="use 'mem0:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_mem0(uri: str, options: StoreOptions) -> Mem0Store:
    """Factory for ``mem0:///dir`` (a folder for Mem0's embedded Qdrant and history database)."""
    path = StoreURI.parse(uri).path
    if not path:
        raise ConfigurationError("mem0: needs a folder: mem0:///path/to/dir")
    return Mem0Store(Path(path), options)
