"""What a client can make ``memstore mcp`` hold: a request of at most 4 MiB, and at most 4 MiB of
requests read and not yet answered (issue 43, item 4).

A sandboxed agent reaches its servers through the harness's relay (`Relay`), a server process
outside the sandbox for each of up to eight connections. Each server's peak resident memory is
read from ``/proc/PID/status`` (``VmHWM``, reset through ``clear_refs`` once the server is up).
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstore import Kind, MemoryDraft, open_store
from memstore.access import Actor
from memstore.harness.run.isolation.sandbox import Relay
from memstore.model import Citation, Surface
from tests.mcpserver.test_hostile_clients import INIT
from tests.mcpserver.test_server import _policy

MIB = 1024 * 1024
BOUND = 4 * MIB  # the largest request a server reads
TOO_LARGE = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32600,
        "message": "the request is longer than 4,194,304 bytes (one JSON-RPC message per line): "
        "it was read to its end and dropped",
    },
}


def _kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split(f"{field}:", 1)[1].split()[0])


class Connection:
    """One connection to the relay, spoken to line by line."""

    def __init__(self, path: Path) -> None:
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(str(path))
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        self.socket.sendall(json.dumps(message).encode() + b"\n")

    def reply(self, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no reply"
            self.socket.settimeout(left)
            try:
                chunk = self.socket.recv(65536)
            except TimeoutError:
                continue
            assert chunk, "the server hung up"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]


@pytest.fixture
def relay(tmp_path: Path, repo: Path) -> Iterator[Relay]:
    argv = [sys.executable, "-m", "memstore", "mcp", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "ana",
            "--repo", str(repo), "--name", "acme/api"]  # fmt: skip
    with Relay(argv).running() as running:
        yield running


def _connect(relay: Relay, count: int) -> tuple[list[Connection], list[int]]:
    """``count`` initialised connections, and their servers' process ids (peaks reset)."""
    connections = [Connection(relay.path) for _ in range(count)]
    for connection in connections:
        connection.send(INIT)
        assert connection.reply()["result"]["serverInfo"]["name"] == "memstore"
        connection.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    pids = [server.pid for server in relay._servers]
    assert len(pids) == count
    for pid in pids:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    return connections, pids


def test_a_request_past_the_bound_is_an_error_and_the_server_holds_no_more_of_it(relay: Relay) -> None:
    """Two connections each send 2 x (the bound + 1 MiB), three times over, with no newline: each
    is answered with a JSON-RPC error as soon as the bound is passed, each server's peak memory
    grows by less than 12 MiB for 30 MiB sent (it grew by all of it, a server per connection, and
    never answered), and a request after the line's end is served."""
    connections, pids = _connect(relay, 2)
    base = {pid: _kib(pid, "VmRSS") for pid in pids}
    head = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "'
    for connection in connections:
        connection.socket.sendall(head)
        for _ in range(3):
            connection.socket.sendall(b"x" * 2 * (BOUND + MIB))
    for connection in connections:
        assert connection.reply() == TOO_LARGE
    grown = {pid: _kib(pid, "VmHWM") - base[pid] for pid in pids}
    assert all(kib < 12 * 1024 for kib in grown.values()), grown
    for connection in connections:
        connection.socket.sendall(b'"}}\n')  # the end of the dropped line
        connection.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert connection.reply() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_request_of_exactly_the_bound_is_served(relay: Relay) -> None:
    """The bound leaves the largest legitimate request room: a store_memory call of exactly 4 MiB,
    padded in its reason, is read whole and answered by the tool (which refuses the
    reason's length), not by the transport."""
    (connection,), _ = _connect(relay, 1)
    arguments = {"subject": "s", "fact": "f", "citations": ["README.md:1"], "reason": ""}
    call = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "store_memory", "arguments": arguments},
    }
    arguments["reason"] = "r" * (BOUND - len(json.dumps(call)))  # the request exactly the bound, then its newline
    connection.send(call)
    answer = connection.reply()
    assert answer["id"] == 4
    assert answer["result"]["isError"] is True
    assert "reason" in answer["result"]["content"][0]["text"]


@pytest.mark.slow
def _until_stuck(sent: list[int], sender: threading.Thread, *, still: float = 1.5, limit: float = 10.0) -> None:
    """Wait until the sender has sent nothing more for ``still`` seconds (it is blocked on a full
    socket), or has finished, or ``limit`` seconds passed."""
    seen, since = -1, time.monotonic()
    deadline = since + limit
    while sender.is_alive() and time.monotonic() < deadline:
        if sent[0] != seen:
            seen, since = sent[0], time.monotonic()
        elif time.monotonic() - since >= still:
            return
        time.sleep(0.05)


def test_a_client_that_never_reads_its_answers_cannot_pile_requests_up_in_the_server(
    tmp_path: Path, relay: Relay
) -> None:
    """One call whose answer (100 whole memories, about 1.7 MB) fills the socket, then 60 pings of
    3 MiB each, never reading: the server stops reading once 4 MiB of requests wait for their
    answers, and its peak memory grows by less than 48 MiB for 180 MiB sent (it held every
    request: about 200 MiB); it answers them all once the client reads."""
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}", access=_policy())
    for n in range(100):
        draft = MemoryDraft("acme/api", Kind.FACT, f"s{n}", "f" * 4000, [Citation.parse("README.md:1")], "r" * 4000)
        store.store(draft, actor=Actor("ana"), surface=Surface.CLI)
    (connection,), (pid,) = _connect(relay, 1)
    base = _kib(pid, "VmRSS")
    params = {"name": "recent_memories", "arguments": {"limit": 100, "whole": True}}
    connection.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    pad = "x" * (3 * MIB)

    sent = [0]

    def flood() -> None:
        for n in range(60):
            with contextlib.suppress(OSError):  # the server may be gone when the test fails
                connection.send({"jsonrpc": "2.0", "id": 100 + n, "method": "ping", "params": {"pad": pad}})
            sent[0] += 1

    sender = threading.Thread(target=flood, daemon=True)
    sender.start()
    _until_stuck(sent, sender)
    assert sender.is_alive(), sent  # the server stopped reading: the client waits, not the server's memory
    assert sent[0] < 60, sent
    grown = _kib(pid, "VmHWM") - base
    assert grown < 48 * 1024, grown
    answers = {connection.reply()["id"] for _ in range(61)}
    sender.join(timeout=30)
    assert answers == {1, *range(100, 160)}
