"""Other projects' stores as `MemoryStore`s: the store protocol over a foreign engine.

An adapter (``memcite:``, ``mem0:``, ``mcp:``) hands each memory to the other project's store
the way a deployment of that store would (its text, its evidence or metadata, its namespaces)
and reads back what that store kept. What the engine has no place for (a memory's subject,
reason, author, dates, status, each citation's recorded text and commit) travels beside the
text as a bookkeeping record in the engine's own metadata, so nothing is lost in the round trip
that the engine itself did not drop: a memory read back is the engine's text and the engine's
citations, with the rest from the bookkeeping.

Around the engine, `ForeignStore` applies only what a deployment would put there itself, and
each adapter says which (`ForeignStore.emulated`): the protocol's checks of its arguments, the
status of a version (superseded, retired) where the engine keeps none, expiry judged on the
store's clock where the engine reads the wall clock. It does not add what the engine does not
have: an engine with no users shows every memory to everyone, one with no expiry returns old
memories, one that merges duplicates returns the first. The harness measures exactly that
(leaks, expiry violations, unkept writes), and `memstore.testing` skips as not applicable what a
store does not claim in ``capabilities``.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from memstore.access import Actor
from memstore.backends import StoreOptions
from memstore.backends.base import (
    chain_order,
    check_actor,
    check_correction,
    check_limit,
    check_memory_id,
    check_store_arguments,
    check_surface,
)
from memstore.clock import Clock
from memstore.errors import ConfigurationError, Conflict, NotFound
from memstore.ids import IdFactory
from memstore.model import Citation, Memory, MemoryDraft, Status, Surface
from memstore.uri import StoreURI
from memstore.validation import MAX_REASON_CHARS, check_text, validate_repo

__all__ = ["BOOKKEEPING", "ForeignStore", "bookkeeping", "from_bookkeeping", "repositories", "store_folder"]

T = TypeVar("T")

BOOKKEEPING = "memstore:"  # the prefix of the bookkeeping record where an engine keeps tags or text


def bookkeeping(memory: Memory) -> str:
    """What travels beside a memory's text in the engine: every field but the fact, as JSON."""
    record = memory.to_dict()
    del record["fact"]
    return BOOKKEEPING + json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def from_bookkeeping(text: str, fact: str, cited: list[tuple[str, int, int | None]] | None = None) -> Memory | None:
    """The memory of a bookkeeping record, with the engine's ``fact`` and (where the engine keeps
    citations itself) the engine's ``cited`` places; None for text that is not one of ours."""
    if not text.startswith(BOOKKEEPING):
        return None
    try:
        record: dict[str, Any] = json.loads(text[len(BOOKKEEPING) :])
        memory = Memory.from_dict({**record, "fact": fact})
    except (ValueError, KeyError, TypeError):
        return None
    if cited is None:
        return memory
    recorded = {(c.path, c.line, c.end_line or c.line): c for c in memory.citations}
    citations = tuple(
        recorded.get((path, line, end or line)) or Citation(path, line, end if end != line else None)
        for path, line, end in cited
    )
    return replace(memory, citations=citations)


def store_folder(uri: str) -> Path:
    """The folder a ``scheme:///dir`` URI names (a `ConfigurationError` where it names none)."""
    parsed = StoreURI.parse(uri)
    if not parsed.path:
        raise ConfigurationError(f"{parsed.scheme}: needs a folder: {parsed.scheme}:///path/to/dir")
    return Path(parsed.path)


def repositories(folder: Path, suffix: str = "") -> list[str]:
    """The repositories an engine keeps a file or folder each for in ``folder``
    (``owner%2Fname`` and ``suffix``), sorted."""
    if not folder.is_dir():
        return []
    names = (p.name[: len(p.name) - len(suffix)] for p in folder.iterdir() if p.name.endswith(suffix))
    return sorted(urllib.parse.unquote(name) for name in names if "%2F" in name)


class ForeignStore(ABC):
    """The store protocol over an engine's five operations (see the module docstring).

    A subclass implements `_put`, `_save`, `_fetch`, `_namespace` and `_drop` (and `_find`
    for an engine that searches), and says what it is: ``capabilities`` (what the store does,
    natively or around the engine), ``native`` (what the engine itself does, capability ->
    how) and ``emulated`` (what memstore does around it, capability -> how).
    """

    capabilities: frozenset[str] = frozenset()
    native: ClassVar[Mapping[str, str]] = {}
    emulated: ClassVar[Mapping[str, str]] = {}
    expires_from_creation: ClassVar[bool] = True  # the engine's time-to-live runs from creation, use renews nothing
    users: ClassVar[bool] = False  # the engine keeps a user's preferences apart from everyone else's

    def __init__(self, options: StoreOptions) -> None:
        self.clock: Clock = options.clock
        self.ids: IdFactory = options.ids
        self.expiry: timedelta = options.expiry
        self._lock = threading.RLock()

    # -- the engine ---------------------------------------------------------------------

    @abstractmethod
    def _put(self, memory: Memory, replacing: Memory | None) -> Memory:
        """Hand a new memory (a correction of ``replacing``) to the engine; what it kept."""

    @abstractmethod
    def _save(self, memory: Memory) -> None:
        """Write a changed bookkeeping record (status, refreshed_at) of a memory the engine has."""

    @abstractmethod
    def _fetch(self, memory_id: str) -> Memory | None:
        """The memory ``memory_id`` as the engine gives it by id, or None."""

    @abstractmethod
    def _namespace(self, repo: str, user: str | None) -> list[Memory]:
        """Every memory of ``repo`` the engine lists (only ``user``'s preferences, where it has users
        and ``user`` is given), every status."""

    @abstractmethod
    def _drop(self, memory_ids: list[str]) -> None:
        """Delete memories from the engine."""

    def _find(self, repo: str, query: str, user: str | None, limit: int) -> list[Memory]:
        """The engine's own search, best first (an engine that searches overrides this)."""
        raise NotImplementedError

    # -- around it ----------------------------------------------------------------------

    def expired(self, memory: Memory, now: datetime) -> bool:
        """Whether the engine's expiry rule, on this store's clock, has put ``memory`` out of use."""
        if "expiry" not in self.native and "expiry" not in self.emulated:
            return False
        start = memory.created_at if self.expires_from_creation else memory.refreshed_at
        return now >= start + self.expiry

    def _live(self, memories: list[Memory]) -> list[Memory]:
        now = self.clock.now()
        return [m for m in memories if m.status is Status.ACTIVE and not self.expired(m, now)]

    def _known(self, memory_id: str) -> Memory:
        found = self._fetch(check_memory_id(memory_id))
        if found is None:
            raise NotFound(memory_id)
        return found

    def _locate(self, where: Mapping[str, T], memory_id: str) -> T | None:
        """Where the engine keeps ``memory_id`` (``where`` is the adapter's map of what it has read),
        reading every repository once for a memory another process wrote; None: nowhere."""
        found = where.get(memory_id)
        if found is None:
            for repo in self._repos():
                self._namespace(repo, None)
            found = where.get(memory_id)
        return found

    def _user_of(self, actor: Actor) -> str | None:
        return actor.user if self.users else None

    # -- the protocol -------------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        draft, actor, surface = check_store_arguments(draft, actor, surface)
        with self._lock:
            now = self.clock.now()
            memory = Memory.from_draft(
                draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
            )
            old = None if supersedes is None else self._known(supersedes)
            if old is not None:
                check_correction(old, memory)
            kept = self._put(memory, old)
            if old is not None and kept.id == memory.id:
                self._save(replace(old, status=Status.SUPERSEDED))
            return kept

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        actor, surface = check_actor(actor), check_surface(surface)
        validate_repo(repo)
        check_limit(limit)
        with self._lock:
            found = self._live(self._namespace(repo, self._user_of(actor)))
        found.sort(key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)
        return found[:limit]

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        actor, surface = check_actor(actor), check_surface(surface)
        validate_repo(repo)
        check_limit(limit)
        query = check_text(query, "query", MAX_REASON_CHARS, required=True)
        with self._lock:
            found = self._find(repo, query, self._user_of(actor), limit)
        return self._live([m for m in found if m.repo == repo])[:limit]

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        check_actor(actor)
        with self._lock:
            return self._known(memory_id)

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        check_actor(actor)
        with self._lock:
            memory = self._known(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot refresh memory {memory_id!r}: it is {memory.status.value}")
            memory = replace(memory, refreshed_at=max(self.clock.now(), memory.refreshed_at))
            self._save(memory)
            return memory

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        check_actor(actor)
        reason = check_text(reason, "reason", MAX_REASON_CHARS, required=False)
        with self._lock:
            memory = self._known(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot retire memory {memory_id!r}: it is {memory.status.value}")
            self._save(replace(memory, status=Status.RETIRED, retired_reason=reason))

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        check_actor(actor)
        with self._lock:
            self._drop([m.id for m in self._chain(self._known(memory_id))])

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        check_actor(actor)
        with self._lock:
            return self._chain(self._known(memory_id))

    def _chain(self, memory: Memory) -> list[Memory]:
        versions = {m.id: m for m in self._namespace(memory.repo, None)}
        versions[memory.id] = memory
        chain = {memory.id}
        while True:  # every version linked to the chain by a correction, either way
            corrected = {versions[i].supersedes for i in chain}
            more = {m.id for m in versions.values() if m.supersedes in chain or m.id in corrected} - chain
            if not more:
                return chain_order([versions[i] for i in chain])
            chain |= more

    def sweep(self) -> int:
        with self._lock:
            now = self.clock.now()
            gone = [m.id for repo in self._repos() for m in self._namespace(repo, None) if self.expired(m, now)]
            if gone:
                self._drop(gone)
            return len(gone)

    def _repos(self) -> list[str]:
        """The repositories the engine holds memories of (for `sweep`)."""
        return []
