"""``agentmem:///base/dir``: memories kept as agent-mem keeps them, in plain Markdown.

The layout of the agent-mem plugin (modelled on Claude Code's auto memory): a base
directory (``AGENT_MEM_DIR``, default ``~/.agent-mem``) holds one directory per repository,
keyed by the repository root's absolute path with ``/`` replaced by ``-``
(`encode_key`); worktrees of one clone share a key; outside a repository the working
directory is encoded the same way; ``AGENT_MEM_KEY`` overrides the key (`resolve_memdir`).
In it, ``MEMORY.md`` is the concise index and ``<topic>.md`` files hold the detail.
`render_index` builds the context injected at session start, with the seed's caps.
Resolving and reading never create a directory; the first write does.

As a `MemoryStore`, a repository ``owner/name`` is keyed as the path ``/owner/name``
(``-owner-name``). Each memory is a topic file a person can read and edit::

    # API version synchronization

    API version must match between client SDK, server routes, and documentation.

    Why: If the version drifts, the integration fails.

    Citations:
    - src/client/sdk/constants.ts:12
    - server/routes/api.go:8

    <!-- memstore {"id": "mem_...", "kind": "fact", "author": "ana", ...} -->

The trailing comment holds what a person need not see (ids, dates, status, each citation's
recorded text and commit); comments are stripped from what is injected. What the format
cannot express, it does not pretend to: there are no users in a directory of Markdown, so
no permissions between users and no private preferences (anyone who can read the files
sees every memory); agent-mem keeps a memory until someone edits it, so there is no expiry.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from memstore.access import Actor
from memstore.backends import StoreOptions, folder_per_trial, per_trial
from memstore.backends.agentmem_files import (
    INDEX,
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    PREVIEW_MAX_CHARS,
    TOPIC_MAX_ENTRIES,
    encode_key,
    parse_topic,
    render_index,
    render_topic,
    repo_key,
    resolve_memdir,
    slug,
    strip_comments,
    visible_text,
)
from memstore.backends.base import check_actor, check_correction, check_limit, check_store_arguments
from memstore.clock import Clock
from memstore.errors import Conflict, NotFound
from memstore.ids import IdFactory
from memstore.model import (
    MAX_REASON_CHARS,
    Memory,
    MemoryDraft,
    Status,
    Surface,
    check_text,
)
from memstore.uri import StoreURI

__all__ = [
    "INDEX_MAX_BYTES",
    "INDEX_MAX_LINES",
    "PREVIEW_MAX_CHARS",
    "TOPIC_MAX_ENTRIES",
    "AgentMemStore",
    "encode_key",
    "open_agentmem",
    "render_index",
    "repo_key",
    "resolve_memdir",
    "strip_comments",
]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)  # the first write creates the directory, nothing before
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)  # readers never see half a file
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)  # a failed write leaves nothing behind
        raise


class AgentMemStore:
    """A `MemoryStore` in agent-mem's layout (see the module docstring for what it cannot express)."""

    capabilities: frozenset[str] = frozenset({"delete", "history", "retire", "supersede"})

    def __init__(self, base: Path, options: StoreOptions) -> None:
        self.base = base
        self.clock: Clock = options.clock
        self.ids: IdFactory = options.ids
        self._lock = threading.Lock()
        # Parsed topic files, re-read only when a file's size or modification time changes (hand edits count).
        self._parsed: dict[Path, tuple[tuple[int, int], Memory | None]] = {}
        self._where: dict[str, Path] = {}  # memory id -> its topic file
        self.unreadable: dict[Path, str] = {}  # memstore files a hand edit left unreadable, and why

    def __repr__(self) -> str:
        return f"AgentMemStore({str(self.base)!r})"

    def _read(self, topic: Path, repo: str) -> Memory | None:
        stat = topic.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._parsed.get(topic)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            memory = parse_topic(topic.read_text(encoding="utf-8"), repo)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # One file a person broke by hand must not take every memory of the repository with it:
            # it is set aside (and listed in ``unreadable``), never rewritten.
            self.unreadable[topic] = f"{type(exc).__name__}: {exc}"
            memory = None
        else:
            self.unreadable.pop(topic, None)
        self._parsed[topic] = (stamp, memory)
        if memory is not None:
            self._where[memory.id] = topic
        return memory

    def memdir(self, repo: str) -> Path:
        """The directory of ``repo``'s memories (see `repo_key`)."""
        return self.base / repo_key(repo)

    def _all(self, repo: str) -> dict[str, tuple[Path, Memory]]:
        memdir = self.memdir(repo)
        found: dict[str, tuple[Path, Memory]] = {}
        if not memdir.is_dir():
            return found
        for topic in sorted(memdir.glob("*.md")):
            if topic.name == INDEX:
                continue
            memory = self._read(topic, repo)
            if memory is not None and memory.repo == repo:  # a directory holds one repository's memories
                found[memory.id] = (topic, memory)
        return found

    def _reindex(self, repo: str) -> None:
        found = [(p, m) for p, m in self._all(repo).values() if m.status is Status.ACTIVE]
        found.sort(key=lambda pm: (pm[1].refreshed_at, pm[1].created_at, pm[1].id), reverse=True)
        lines = [f"# Memory for {repo}", "", "<!-- Written by memstore: one line per memory, newest first. -->", ""]
        for path, m in found:
            summary = visible_text(" ".join(m.fact.split()))
            lines.append(f"- [{visible_text(' '.join(m.subject.split()))}]({path.name}): {summary[:150]}")
        _write(self.memdir(repo) / INDEX, "\n".join(lines) + "\n")

    def _find(self, memory_id: str) -> tuple[str, Path, Memory]:
        if not isinstance(memory_id, str) or not memory_id or not memory_id.isascii() or len(memory_id) > 200:
            raise NotFound(str(memory_id)[:200])
        known = self._where.get(memory_id)
        if known is not None and known.is_file():
            memory = self._read(known, "")
            if memory is not None and memory.id == memory_id:
                return memory.repo, known, memory
        if self.base.is_dir():  # not seen yet (written by another process, or by hand)
            for memdir in sorted(p for p in self.base.iterdir() if p.is_dir()):
                for topic in memdir.glob("*.md"):
                    if topic.name != INDEX and memory_id in topic.read_text(encoding="utf-8", errors="replace"):
                        memory = self._read(topic, "")
                        if memory is not None and memory.id == memory_id:
                            return memory.repo, topic, memory
        raise NotFound(memory_id)

    # -- the protocol -------------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        draft, actor, surface = check_store_arguments(draft, actor, surface)
        with self._lock:
            now = self.clock.now()
            memory = Memory.from_draft(
                draft, memory_id=self.ids(now), author=actor.user, surface=surface, now=now, supersedes=supersedes
            )
            if supersedes is not None:
                _, path, old = self._find(supersedes)
                check_correction(old, memory)
                _write(path, render_topic(_with(old, status=Status.SUPERSEDED)))
            _write(self.memdir(draft.repo) / f"{slug(draft.subject)}-{memory.id.lower()}.md", render_topic(memory))
            self._reindex(draft.repo)
        return memory

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        check_limit(limit)
        check_actor(actor)
        with self._lock:
            active = [m for _, m in self._all(repo).values() if m.status is Status.ACTIVE]
        active.sort(key=lambda m: (m.refreshed_at, m.created_at, m.id), reverse=True)
        return active[:limit]

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            return self._find(memory_id)[2]

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._lock:
            repo, path, memory = self._find(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot refresh memory {memory_id!r}: it is {memory.status.value}")
            memory = _with(memory, refreshed_at=max(self.clock.now(), memory.refreshed_at))
            _write(path, render_topic(memory))
            self._reindex(repo)
        return memory

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        check_text(reason, "reason", MAX_REASON_CHARS, required=False)
        with self._lock:
            repo, path, memory = self._find(memory_id)
            if memory.status is not Status.ACTIVE:
                raise Conflict(f"cannot retire memory {memory_id!r}: it is {memory.status.value}")
            _write(path, render_topic(_with(memory, status=Status.RETIRED, retired_reason=reason)))
            self._reindex(repo)

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        with self._lock:
            repo, _, _ = self._find(memory_id)
            chain = {m.id for m in self._chain(repo, memory_id)}
            for path, memory in self._all(repo).values():
                if memory.id in chain:
                    path.unlink()
            self._reindex(repo)

    def _chain(self, repo: str, memory_id: str) -> list[Memory]:
        memories = {m.id: m for _, m in self._all(repo).values()}
        root = memory_id
        while memories[root].supersedes in memories:
            root = memories[root].supersedes  # type: ignore[assignment]
        chain, current = [memories[root]], root
        while True:
            nxt = next((m for m in memories.values() if m.supersedes == current), None)
            if nxt is None:
                return chain
            chain.append(nxt)
            current = nxt.id

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        with self._lock:
            repo, _, _ = self._find(memory_id)
            return self._chain(repo, memory_id)

    def sweep(self) -> int:
        return 0  # agent-mem keeps a memory until someone edits it: there is no expiry to sweep


def _with(memory: Memory, **changes: Any) -> Memory:
    return Memory(**{**memory.__dict__, **changes})


@per_trial(
    folder_per_trial("agentmem", "agent-mem", shared=True),
    hint="use 'agentmem:' (a private folder per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path",
)
def open_agentmem(uri: str, options: StoreOptions) -> AgentMemStore:
    """Factory for ``agentmem:///base/dir`` (``agentmem://`` alone: ``AGENT_MEM_DIR`` or ``~/.agent-mem``)."""
    path = StoreURI.parse(uri).path or os.environ.get("AGENT_MEM_DIR") or str(Path.home() / ".agent-mem")
    return AgentMemStore(Path(path), options)
