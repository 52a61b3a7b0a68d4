"""``mcp:memstore``: memstore's own MCP server as a store, a round trip through ``memstore mcp``.

Every call of the store protocol is a tool call to a ``memstore mcp`` server over stdio, with
the official MCP client, so what is measured is the server as an agent meets it: its tools,
its rules, its errors. A server acts for one user, on one repository, from one surface, fixed
when it starts and never taken from a tool's arguments; so this store keeps a server for each
(user, surface, repository) it is asked to act for, started when first needed, all serving one
store: what a deployment that gives each agent session a server of its own does too. Each is
started with

- ``--store``: the store they all serve (``?store=URI``; ``sqlite:`` by default, its file in
  this store's folder; a bare scheme gets its file there, as a trial's store does);
- ``--access``: this store's access policy, as the TOML file ``--access`` reads (written again,
  and the servers started again, when the policy changes);
- ``--clock-file``: this store's clock, written to a file before every call where it moved,
  so a harness's simulated month passes through the servers;
- ``--ids-seed``: a seed drawn from this store's id factory, one per server in the order they
  start, so a seed gives the same ids.

What no tool offers is done beside the servers, as the operator of a deployment does it, on the
same store opened in this process under the same rules: ``delete`` (an administrator's act, not
an agent's) and ``sweep`` (a maintenance job). ``get`` and ``history`` are the tools
``get_memory`` and ``memory_history``; the protocol's calls that name no surface (``get``,
``refresh``, ``retire``, ``history``) act from the command line's surface.

Servers are forks of a preloaded fork server (`memstore.mcp.forkserver`), tens of milliseconds
each instead of a second; ``?command=memstore mcp`` (any command line that ends in ``mcp``)
starts each as a process of its own instead.
"""

from __future__ import annotations

import shlex
import threading
import weakref
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from memstore.access import Actor
from memstore.backends import StoreOptions, per_trial_of, wrapped_of
from memstore.backends.base import check_actor, check_limit, check_memory_id, check_store_arguments, check_surface
from memstore.backends.mcp_client import McpConnection
from memstore.clock import write_clock_file
from memstore.errors import (
    ConfigurationError,
    Conflict,
    MemstoreError,
    NotFound,
    PermissionDenied,
    StorageError,
    ValidationError,
)
from memstore.mcp import ForkServer
from memstore.model import Citation, Memory, MemoryDraft, Surface
from memstore.store import open_store
from memstore.uri import StoreURI
from memstore.validation import validate_repo

__all__ = ["MAX_LISTED", "MemstoreServerStore", "inner_store_in"]

MAX_LISTED = 200  # memories one recent_memories or search_memories call hands at most
_SURFACES = {Surface.CODING_AGENT: "coding-agent", Surface.CODE_REVIEW: "code-review", Surface.CLI: "cli"}
_ERRORS: dict[str, type[MemstoreError]] = {
    "permission_denied": PermissionDenied,
    "conflict": Conflict,
}


def inner_store_in(uri: str, folder: Path) -> str:
    """The URI every server opens for ``uri``: a bare scheme's store made in ``folder`` (a
    wrapper's inner store too, ``mutant:NAME:sqlite:``), any other as given.

    Raises:
        ConfigurationError: for a store that lives in one process (the servers could not share it).
    """
    wrapped = wrapped_of(uri)
    if wrapped is not None:
        head, inner = wrapped
        return head + inner_store_in(inner, folder)
    declared = per_trial_of(uri)
    if declared is not None and declared.server:
        return uri
    made = declared.make(uri, folder) if declared is not None else None
    one_process = made is not None and not made.shared
    if one_process or (made is None and StoreURI.parse(uri).scheme == "memory"):
        raise ConfigurationError(
            f"mcp:memstore?store={uri}: the servers are processes of their own and cannot share a store that "
            "lives in one process; use a store on disk (sqlite:, ranked:) or a server (postgresql://)"
        )
    return made.uri if made is not None else uri


def _refusal(result: Any, memory_id: str | None) -> MemstoreError:
    """The memstore error a tool's refusal stands for (its structured content names the kind)."""
    data = result.structured_content or {}
    text = str(data.get("message") or " ".join(getattr(part, "text", "") for part in result.content))
    kind = data.get("error")
    if kind == "not_found":
        return NotFound(memory_id or text)
    if kind == "invalid":
        field, _, message = text.partition(": ")
        return ValidationError(field, message) if message else ValidationError("arguments", text)
    return _ERRORS.get(str(kind), StorageError)(text)


_PRELOAD = ("memstore.backends.sqlite",)  # the servers' store by default: imported once, in the fork server


class MemstoreServerStore:
    """A `MemoryStore` reached through ``memstore mcp`` servers (see the module docstring)."""

    native: ClassVar[dict[str, str]] = {
        "everything": "memstore's own store behind its own MCP server: permissions, surfaces, expiry, supersede",
        "get, history": "the tools get_memory and memory_history",
    }
    emulated: ClassVar[dict[str, str]] = {
        "identity": "a server per user, surface and repository (a server fixes who acts when it starts)",
        "clock": "the store's clock handed to the servers through --clock-file",
        "delete, sweep": "beside the servers, on the same store, as its operator would (no tool offers them)",
    }

    def __init__(self, folder: Path, inner: str, command: list[str] | None, options: StoreOptions) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.inner = inner_store_in(inner, folder)
        self.command = command
        self.clock = options.clock
        self.access = options.access
        self.expiry = options.expiry
        self._beside = open_store(
            self.inner, access=options.access, clock=options.clock, expiry=options.expiry, ids=options.ids
        )
        self.capabilities: frozenset[str] = frozenset(getattr(self._beside, "capabilities", frozenset()))
        self._seed = options.ids(self.clock.now())  # each server's seed of ids is made from this one draw
        self._started = 0
        self._servers: dict[tuple[str, Surface, str], McpConnection] = {}
        self._grants: list[Any] | None = None
        self._told: datetime | None = None
        self._repo_of: dict[str, str] = {}  # memory id -> its repository (which servers may read it)
        self._lock = threading.RLock()
        self._finalizer = weakref.finalize(self, _close_all, self._servers)

    def __repr__(self) -> str:
        return f"MemstoreServerStore({self.inner!r})"

    def close(self) -> None:
        with self._lock:
            _close_all(self._servers)
            close = getattr(self._beside, "close", None)
            if callable(close):
                close()

    # -- the servers --------------------------------------------------------------------

    def _server(self, user: str, surface: Surface, repo: str) -> McpConnection:
        grants = self.access.grants()
        if grants != self._grants:  # the servers read the policy when they start: start them again
            _close_all(self._servers)
            (self.folder / "access.toml").write_text(self.access.to_toml(), encoding="utf-8")
            self._grants = grants
        key = (user, surface, repo)
        server = self._servers.get(key)
        if server is None:
            self._started += 1
            args = [
                "mcp", "--store", self.inner, "--as", user, "--name", repo, "--surface", _SURFACES[surface],
                "--access", str(self.folder / "access.toml"), "--clock-file", str(self.folder / "clock"),
                "--ids-seed", f"{self._seed}/{self._started}", "--expiry-days", repr(self.expiry / timedelta(days=1)),
            ]  # fmt: skip
            argv = (
                [*self.command, *args] if self.command is not None else ForkServer.shared(preload=_PRELOAD).argv(args)
            )
            server = self._servers[key] = McpConnection(argv, {}, self.folder / "server.log")
        return server

    def _tick(self) -> None:
        """Hand the servers this store's time, where it moved since they were last told."""
        now = self.clock.now()
        if now != self._told:
            write_clock_file(self.folder / "clock", now)
            self._told = now

    def _call(self, who: tuple[str, Surface, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._tick()  # before a server starts too: it reads the clock file when it starts
            result = self._server(*who).result(tool, arguments)
        if result.is_error:
            raise _refusal(result, arguments.get("memory_id") or arguments.get("supersedes"))
        return dict(result.structured_content or {})

    def _by_id(self, memory_id: str, actor: Actor, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``tool`` on ``memory_id`` as ``actor`` from the command line, on the repository the memory
        is of (a server sees one repository)."""
        check_actor(actor)
        repo = self._repo_of.get(check_memory_id(memory_id))
        if repo is None:  # written by another client of the same store: its repository, as the actor may see it
            with self._lock:
                self._tick()
                repo = self._repo_of.setdefault(memory_id, self._beside.get(memory_id, actor=actor).repo)
        return self._call((actor.user, Surface.CLI, repo), tool, {"memory_id": memory_id, **arguments})

    def _listed(self, who: tuple[str, Surface, str], tool: str, arguments: dict[str, Any]) -> list[Memory]:
        """What the server hands an agent (every field of each memory: ``whole``)."""
        found = [Memory.from_dict(m) for m in self._call(who, tool, {**arguments, "whole": True}).get("memories", [])]
        self._repo_of.update((m.id, m.repo) for m in found)
        return found

    # -- the protocol -------------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        draft, actor, surface = check_store_arguments(draft, actor, surface)
        who = (actor.user, surface, draft.repo)
        arguments: dict[str, Any] = {
            "subject": draft.subject,
            "fact": draft.fact,
            "citations": [(Citation.parse(c) if isinstance(c, str) else c).to_dict() for c in draft.citations],
            "reason": draft.reason,
            "kind": draft.kind.value,
        }
        if supersedes is not None:
            arguments["supersedes"] = check_memory_id(supersedes)
        made = Memory.from_dict(self._call(who, "store_memory", {**arguments, "whole": True}))
        self._repo_of[made.id] = made.repo
        return made

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        who = (check_actor(actor).user, check_surface(surface), validate_repo(repo))
        return self._listed(who, "recent_memories", {"limit": self._limit(limit)})

    def search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        if "search" not in self.capabilities:
            raise ConfigurationError(f"{self.inner} does not search")
        who = (check_actor(actor).user, check_surface(surface), validate_repo(repo))
        return self._listed(who, "search_memories", {"query": query, "limit": self._limit(limit)})

    @staticmethod
    def _limit(limit: int) -> int:
        if check_limit(limit) > MAX_LISTED:
            raise ValidationError("limit", f"memstore mcp hands at most {MAX_LISTED} memories a call, got {limit}")
        return limit

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        return Memory.from_dict(self._by_id(memory_id, actor, "get_memory", {}))

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        self._by_id(memory_id, actor, "refresh_memory", {})
        return self.get(memory_id, actor=actor)

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        self._by_id(memory_id, actor, "retire_memory", {"reason": reason})

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        versions = self._by_id(memory_id, actor, "memory_history", {}).get("versions", [])
        return [Memory.from_dict(v) for v in versions]

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        with self._lock:
            self._tick()
            self._beside.delete(memory_id, actor=actor)

    def sweep(self) -> int:
        with self._lock:
            self._tick()
            return self._beside.sweep()


def _close_all(servers: dict[tuple[str, Surface, str], McpConnection]) -> None:
    for server in list(servers.values()):
        server.close()
    servers.clear()


def open_memstore_server(uri: str, params: dict[str, str], options: StoreOptions) -> MemstoreServerStore:
    """The store of ``mcp:memstore?folder=DIR[&store=URI][&command=CMD]`` (see the module docstring)."""
    folder = params.get("folder")
    if not folder:
        raise ConfigurationError(f"store URI {uri!r}: name the servers' folder with ?folder=DIR")
    command = shlex.split(params["command"]) if params.get("command") else None
    if command is not None and command[-1:] != ["mcp"]:
        raise ConfigurationError(f"store URI {uri!r}: ?command= must run memstore's mcp command (end in 'mcp')")
    inner = params.get("store") or "sqlite:"
    return MemstoreServerStore(Path(folder), inner, command[:-1] if command else None, options)
