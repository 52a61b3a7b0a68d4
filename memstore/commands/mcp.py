"""``memstore mcp``: serve a store's memories to any MCP-capable agent (stdio, or streamable HTTP)."""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO

import click

from memstore import mcp as server  # its names load the MCP SDK on first use, when a server starts
from memstore.access import Actor
from memstore.clock import Clock, FakeClock, FileClock, SystemClock
from memstore.commands._shared import CommandError, load_access, repository_name
from memstore.errors import MemstoreError
from memstore.ids import UlidIds
from memstore.model import Memory, Surface, validate_repo
from memstore.store import DEFAULT_EXPIRY, open_store
from memstore.verify import Codebase, GitCodebase, GitRepository, WorkingTree

__all__ = ["mcp_command"]

_SURFACES = {"coding-agent": Surface.CODING_AGENT, "code-review": Surface.CODE_REVIEW, "cli": Surface.CLI}


class _EventLog:
    """Every operation as a JSON line, flushed as it happens (the harness reads it after a session)."""

    def __init__(self, path: Path) -> None:
        try:  # appended to, never followed through a symlink, never anything but a regular file
            fd = os.open(
                path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600
            )
        except OSError as exc:
            raise CommandError(f"--events {path}: cannot open it as a regular file ({exc.strerror or exc})") from exc
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise CommandError(f"--events {path}: not a regular file")
        self._file: IO[str] = os.fdopen(fd, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def __call__(self, kind: str, memory_id: str, detail: str, memories: Sequence[Memory]) -> None:
        line = {"kind": kind, "memory_id": memory_id, "detail": detail, "memories": [m.to_dict() for m in memories]}
        with self._lock:
            self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._file.flush()


def _codebases(repo_path: Path | None, ref: str | None) -> tuple[Codebase | None, Codebase | None]:
    """(where memories are verified, where new citations are anchored)."""
    if repo_path is None:
        return None, None
    repo = GitRepository(repo_path)
    head = GitCodebase(repo, "HEAD")
    working = head if repo.is_bare() else WorkingTree(repo_path, history=head)
    return (GitCodebase(repo, ref) if ref else working), working


def _clock(now: str | None, clock_file: Path | None) -> Clock:
    """The server's clock: the wall clock, one fixed time (``--now``) or a file's (``--clock-file``)."""
    if now is not None and clock_file is not None:
        raise CommandError("give the clock as --now or as --clock-file, not both")
    if clock_file is not None:
        return FileClock(clock_file)
    if now is None:
        return SystemClock()
    try:
        return FakeClock(datetime.fromisoformat(now))
    except ValueError as exc:
        raise CommandError(f"--now {now!r} is not an ISO 8601 time with a timezone") from exc


_ANSWER_WITHIN = 10.0  # seconds a client may take over its requests to a server that cannot start
_ANSWERED_AT_MOST = 16  # requests answered so (a client tries "server/discover", then "initialize")


def _tell_client(why: str) -> None:
    """A stdio server that cannot start answers its client's requests (``server/discover``,
    ``initialize``) with the reason as a JSON-RPC error until the client hangs up, so the client
    shows why, not "Connection closed"; then the command fails as usual (the reason on standard
    error, exit status 2). Not from a terminal, and for a few seconds at most."""
    if sys.stdin.isatty():
        return
    error = {"code": -32603, "message": f"memstore mcp cannot start: {why}"}
    deadline = time.monotonic() + _ANSWER_WITHIN
    for _ in range(_ANSWERED_AT_MOST):
        try:
            ready, _, _ = select.select([sys.stdin.buffer], [], [], max(0.0, deadline - time.monotonic()))
            line = sys.stdin.buffer.readline(1 << 20) if ready else b""
            if not line:
                return  # the client hung up (or waited too long)
            request = json.loads(line)
            if isinstance(request, dict) and "id" in request:
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
                sys.stdout.flush()
        except (OSError, ValueError):
            return


@click.command(name="mcp")
@click.option("--store", "store_uri", envvar="MEMSTORE_STORE", required=True, help="Store URI (env MEMSTORE_STORE).")
@click.option("--as", "user", envvar="MEMSTORE_USER", required=True, help="The user every call acts for.")
@click.option(
    "--access",
    "access_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="TOML file of users' access levels. Default: the user is admin of every repository.",
)
@click.option(
    "--repo",
    "repo_path",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The repository's clone: citations are anchored and memories verified against it.",
)
@click.option("--name", default=None, help="The repository's owner/name in the store. Default: from --repo's origin.")
@click.option("--ref", default=None, help="Verify against this ref. Default: the work tree as it is.")
@click.option(
    "--surface",
    type=click.Choice(sorted(_SURFACES)),
    default="coding-agent",
    show_default=True,
    help="The surface the calls come from (code-review sees no preferences).",
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP: the address to listen on. Beyond loopback a token is required (MEMSTORE_MCP_TOKEN or --token-file).",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="HTTP: a file holding the bearer token every request must carry (or env MEMSTORE_MCP_TOKEN).",
)
@click.option("--allow-host", "allow_hosts", multiple=True, help="HTTP: another Host header value to accept.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP: the port.")
@click.option(
    "--events",
    "events_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append every operation to this file as a JSON line (an audit log; the harness reads it).",
)
@click.option("--now", default=None, help="Fix the clock at this ISO 8601 time (reproducible runs).")
@click.option(
    "--clock-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the time from this file at every call (an ISO 8601 time the operator rewrites; a harness's clock).",
)
@click.option("--ids-seed", default=None, help="Seed of new memories' ids (reproducible runs).")
@click.option(
    "--expiry-days",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_EXPIRY.days,
    show_default=True,
    help="Days a memory lives unused.",
)
def mcp_command(
    store_uri: str,
    user: str,
    access_file: Path | None,
    repo_path: Path | None,
    name: str | None,
    ref: str | None,
    surface: str,
    transport: str,
    host: str,
    token_file: Path | None,
    allow_hosts: tuple[str, ...],
    port: int,
    events_file: Path | None,
    now: str | None,
    clock_file: Path | None,
    ids_seed: str | None,
    expiry_days: float,
) -> None:
    """Serve the memories of one repository to an MCP client, as USER from one surface.

    The tools: store_memory, recent_memories, search_memories (stores that search),
    get_memory, memory_history, verify_memory, refresh_memory, retire_memory; the resource
    memstore://OWNER/NAME/memories.
    Who acts, on which repository and surface is fixed here, never taken from a tool call.
    """

    try:
        if repo_path is None and name is None:
            raise CommandError("name the repository: --repo PATH (its clone) or --name OWNER/NAME")
        repo = validate_repo(name) if name else repository_name(GitRepository(repo_path), None)  # type: ignore[arg-type]
        clock = _clock(now, clock_file)
        store = open_store(
            store_uri,
            access=load_access(access_file, user),
            clock=clock,
            expiry=timedelta(days=expiry_days),
            ids=UlidIds(ids_seed) if ids_seed is not None else None,
        )
        verify_on, anchor_on = _codebases(repo_path, ref)
    except (click.ClickException, MemstoreError, OSError) as exc:
        if transport == "stdio":
            _tell_client(exc.format_message() if isinstance(exc, click.ClickException) else str(exc))
        raise
    log = _EventLog(events_file) if events_file is not None else None
    service = server.MemoryService(store, Actor(user), _SURFACES[surface], repo, verify_on, anchor_on, log)
    built = server.build_server(service)
    if transport == "stdio":
        server.serve_stdio(built)
    else:
        token = os.environ.get("MEMSTORE_MCP_TOKEN") or None
        if token_file is not None:
            token = token_file.read_text(encoding="utf-8").strip() or None
            if token is None:
                raise CommandError(f"--token-file {token_file} is empty")
        try:
            server.serve_http(built, host=host, port=port, token=token, allow_hosts=allow_hosts)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
