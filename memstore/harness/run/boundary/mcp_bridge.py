"""Memory over MCP in a trial: the server an agent is handed, and what it did there.

An out-of-process agent gets, in its task file, the configuration of a ``memstore mcp`` server
(``command`` and ``args``, in the ``mcpServers`` form that Claude Code, Codex CLI and other
clients read) bound to its trial: the trial's store file, its users' access, the acting user,
repository and surface, the clock at the session's start, the session's id seed, and the
working copy. The server appends every operation to an events file; after the session the
harness replays it into the session's event log, so what an agent did through MCP is measured
exactly like what it does through the in-process tools. An in-process agent gets the same
tools as an `MCPServer` to connect to with the SDK's client.

The store's files legitimately change during a session that used the server, so the file
guard gives way to a content check: every difference between the store before and after the
session must be an operation in the server's log; anything else was written behind its back.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstore.access import Actor
from memstore.errors import MemstoreError
from memstore.harness.records import EventKind
from memstore.model import Memory, Surface
from memstore.store import MemoryStore

__all__ = ["WRITES", "McpLaunch", "logged_ids", "read_events", "snapshot", "unexplained"]

_SURFACES = {Surface.CODING_AGENT: "coding-agent", Surface.CODE_REVIEW: "code-review", Surface.CLI: "cli"}
WRITES = frozenset({"store", "correct", "refresh", "retire"})  # operations that change the store


@dataclass(frozen=True)
class McpLaunch:
    """What a trial's ``memstore mcp`` server is started with (harness data, no grading data)."""

    store_uri: str
    access_file: Path
    user: str
    repo: str
    surface: Surface
    workdir: str
    ref: str  # where memories are verified: main at the session's start
    now: str  # the clock, ISO 8601
    ids_seed: str
    expiry_days: float

    def config(self, events_file: Path) -> dict[str, Any]:
        """The ``mcpServers`` entry for this server, logging to ``events_file``."""
        args = [
            "-m", "memstore", "mcp",
            "--store", self.store_uri,
            "--as", self.user,
            "--access", str(self.access_file),
            "--repo", self.workdir,
            "--name", self.repo,
            "--ref", self.ref,
            "--surface", _SURFACES[self.surface],
            "--now", self.now,
            "--ids-seed", self.ids_seed,
            "--expiry-days", repr(self.expiry_days),
            "--events", str(events_file),
        ]  # fmt: skip
        return {"mcpServers": {"memstore": {"command": sys.executable, "args": args, "env": {}}}}


@dataclass(frozen=True)
class Logged:
    """One operation from the server's events file."""

    kind: str
    memory_id: str
    detail: str
    memories: tuple[Memory, ...]


def read_events(path: Path, *, cap: int = 64 * 1024 * 1024) -> list[Logged]:
    """The operations in a server's events file (written by the harness's own server process)."""
    if not path.is_file():
        return []
    found = []
    with path.open("r", encoding="utf-8") as lines:
        total = 0
        for line in lines:
            total += len(line)
            if total > cap:
                break
            try:  # the harness's own server wrote it; a line that does not read ends what is trusted
                data = json.loads(line)
                memories = tuple(Memory.from_dict(m) for m in data.get("memories", []))
                found.append(Logged(str(data["kind"]), str(data["memory_id"]), str(data["detail"]), memories))
            except (ValueError, KeyError, TypeError, AttributeError, MemstoreError):
                break
    return found


Snapshot = dict[str, tuple[str, str, str]]  # memory id -> (a digest of what never changes, refreshed_at, status)
_STATE = ("status", "refreshed_at", "retired_reason")  # what operations may change about a memory
_LISTED = 10_000  # memories asked for at once (the reference stores' largest ``limit``)


def _entry(memory: Memory) -> tuple[str, str, str]:
    content = {k: v for k, v in memory.to_dict().items() if k not in _STATE}
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
    return digest, memory.refreshed_at.isoformat(), str(memory.status)


def snapshot(store: MemoryStore, repo: str, users: Iterable[str], ids: Iterable[str] = ()) -> Snapshot:
    """Every active memory of ``repo`` some user of the trial can see (as many as the store lists
    at once), and every memory of ``ids`` (those of an earlier snapshot and of the server's log,
    however many there are): a digest of its content, when it was last refreshed, its status."""
    found: Snapshot = {}
    users = sorted(set(users))
    for user in users:
        for limit in (_LISTED, 1000):
            try:
                memories = store.recent(repo, actor=Actor(user), surface=Surface.CLI, limit=limit)
            except MemstoreError:
                continue
            found.update((m.id, _entry(m)) for m in memories)
            break
    for memory_id in sorted(set(ids) - found.keys()):
        for user in users:
            try:
                found[memory_id] = _entry(store.get(memory_id, actor=Actor(user)))
                break
            except MemstoreError:
                continue
    return found


def unexplained(before: Snapshot, after: Snapshot, logged: Sequence[Logged]) -> list[str]:
    """The memories whose change no operation in the log accounts for: a memory's content never
    changes; a new one was stored or is a correction; one gone (or no longer active) was retired
    or corrected; a new refresh time was a refresh."""
    stored = {e.memory_id for e in logged if e.kind in {"store", "correct"}}
    gone = {e.memory_id for e in logged if e.kind == "retire"} | {e.detail for e in logged if e.kind == "correct"}
    refreshed = {e.memory_id for e in logged if e.kind == "refresh"}
    wrong = []
    for memory_id in before.keys() | after.keys():
        was, now = before.get(memory_id), after.get(memory_id)
        if was == now:
            continue
        if was is None:
            ok = memory_id in stored
        elif now is None or now[2] != was[2]:
            ok = memory_id in gone
        else:
            ok = was[0] == now[0] and memory_id in refreshed
        if not ok:
            wrong.append(memory_id)
    return sorted(wrong)


def logged_ids(logged: Sequence[Logged]) -> set[str]:
    """Every memory id an operation of the log names (a correction names the one it replaced)."""
    return {e.memory_id for e in logged} | {e.detail for e in logged if e.kind == "correct"}


def replay_kind(kind: str) -> EventKind | None:
    """The session event an operation from the log is recorded as (None: a recall, handled apart)."""
    return {
        "store": EventKind.STORE,
        "correct": EventKind.CORRECT,
        "refresh": EventKind.REFRESH,
        "retire": EventKind.RETIRE,
        "vote": EventKind.VOTE,
        "verdict": EventKind.VERDICT,
    }.get(kind)
