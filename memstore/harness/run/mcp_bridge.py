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

from memstore.access import Access, AccessPolicy, Actor
from memstore.errors import MemstoreError
from memstore.harness.run.events import EventKind
from memstore.model import Memory, Surface
from memstore.store import MemoryStore

__all__ = ["WRITES", "McpLaunch", "access_toml", "read_events", "snapshot", "unexplained"]

_SURFACES = {Surface.CODING_AGENT: "coding-agent", Surface.CODE_REVIEW: "code-review", Surface.CLI: "cli"}
WRITES = frozenset({"store", "correct", "refresh", "retire"})  # operations that change the store


def access_toml(policy: AccessPolicy) -> str:
    """An access policy as the TOML file ``--access`` reads."""
    by_user: dict[str, list[tuple[str, Access]]] = {}
    for user, repo, level in policy.grants():
        by_user.setdefault(user, []).append((repo, level))
    lines = []
    for user, grants in sorted(by_user.items()):
        lines.append(f"[users.{json.dumps(user)}]")
        lines += [f"{json.dumps(repo)} = {json.dumps(level.name.lower())}" for repo, level in grants]
        lines.append("")
    return "\n".join(lines)


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
            data = json.loads(line)
            memories = tuple(Memory.from_dict(m) for m in data.get("memories", []))
            found.append(Logged(str(data["kind"]), str(data["memory_id"]), str(data["detail"]), memories))
    return found


Snapshot = dict[str, tuple[str, str]]  # memory id -> (a digest of what never changes, refreshed_at)
_STATE = ("status", "refreshed_at", "retired_reason")  # what operations may change about a memory


def snapshot(store: MemoryStore, repo: str, users: Iterable[str]) -> Snapshot:
    """Every active memory of ``repo`` some user of the trial can see: a digest of its content
    and when it was last refreshed."""
    found: Snapshot = {}
    for user in sorted(set(users)):
        try:
            memories = store.recent(repo, actor=Actor(user), surface=Surface.CLI, limit=1000)
        except MemstoreError:
            continue
        for m in memories:
            content = {k: v for k, v in m.to_dict().items() if k not in _STATE}
            digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
            found[m.id] = (digest, m.refreshed_at.isoformat())
    return found


def unexplained(before: Snapshot, after: Snapshot, logged: Sequence[Logged]) -> list[str]:
    """The memories whose change no operation in the log accounts for: a memory's content never
    changes; a new one was stored or is a correction; one gone was retired or corrected; a new
    refresh time was a refresh."""
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
        elif now is None:
            ok = memory_id in gone
        else:
            ok = was[0] == now[0] and memory_id in refreshed
        if not ok:
            wrong.append(memory_id)
    return sorted(wrong)


def replay_kind(kind: str) -> EventKind | None:
    """The session event an operation from the log is recorded as (None: a recall, handled apart)."""
    return {
        "store": EventKind.STORE,
        "correct": EventKind.CORRECT,
        "refresh": EventKind.REFRESH,
        "retire": EventKind.RETIRE,
        "verdict": EventKind.VERDICT,
    }.get(kind)
