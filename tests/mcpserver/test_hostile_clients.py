"""The MCP server against clients that misbehave: bad text, hang-ups, ids from another surface,
remote callers, and a verdict an agent tries to ignore.

Over stdio the client here is a raw one (a process writing JSON-RPC lines), because an SDK
client cannot send what a hostile one sends (a lone surrogate); what it checks is what an SDK
client would see: every request answered, the next ones too.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memstore import Kind, MemoryDraft, Surface, open_store
from memstore.access import Actor
from memstore.mcp.http import allowed_hosts, is_loopback
from memstore.mcp.server import build_server
from memstore.model import Citation
from tests.mcpserver.test_server import _call, _git, _policy, _run, _service, free_port, wait_for_port

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


class RawClient:
    """``memstore mcp`` over stdio, spoken to line by line."""

    def __init__(self, db: str, repo: Path, *extra: str) -> None:
        argv = [sys.executable, "-m", "memstore", "mcp", "--store", db, "--as", "ana", "--repo", str(repo),
                "--name", "acme/api", *extra]  # fmt: skip
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""
        self.received: dict[object, dict[str, Any]] = {}
        self.send_text(json.dumps(INIT))
        assert self.answer(1)["result"]["serverInfo"]["name"] == "memstore"
        self.send_text(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_text(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        params = {"name": tool, "arguments": arguments}
        self.send_text(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}))

    def answer(self, request_id: int, timeout: float = 20) -> dict[str, Any]:
        """The response to ``request_id`` (responses may come in any order: the server handles
        requests concurrently; those read meanwhile are kept); fails after ``timeout``."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                self.received[message.get("id")] = message
            if request_id in self.received:
                return self.received.pop(request_id)
            left = deadline - time.monotonic()
            assert left > 0, f"request {request_id} was never answered"
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                assert chunk, f"the server closed before answering {request_id}"
                self.buffer += chunk

    def close(self) -> tuple[int, str]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=30)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode(errors="replace")


def test_a_request_with_a_lone_surrogate_is_answered_and_so_are_the_next(tmp_path: Path, repo: Path) -> None:
    client = RawClient(f"sqlite:///{tmp_path / 'm.db'}", repo)
    client.send_text(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"store_memory",'
        '"arguments":{"subject":"\\ud800 api","fact":"f","citations":["README.md:1"]}}}'
    )
    client.send_text('{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"\\udfff"}}')
    client.call(4, "store_memory", {"subject": "API", "fact": "f", "citations": ["README.md:1"]})
    bad = client.answer(2)
    assert bad["result"]["isError"] is True
    assert "lone surrogate" in bad["result"]["content"][0]["text"]
    assert client.answer(3)["error"]["code"] == -32602
    assert client.answer(4)["result"]["isError"] is False
    client.call(5, "recent_memories", {})  # after the store's answer: requests run concurrently
    recent = client.answer(5)["result"]["structuredContent"]["memories"]
    assert [m["subject"] for m in recent] == ["API"]  # the bad one stored nothing
    assert client.close() == (0, "")


def test_a_client_that_hangs_up_mid_session_ends_the_server_quietly(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    client = RawClient(db, repo)
    client.call(2, "store_memory", {"subject": "kept", "fact": "f", "citations": ["README.md:1"]})
    client.answer(2)
    for i in range(3, 40):  # then requests it never reads the answers to, and it is gone
        client.call(i, "recent_memories", {"limit": 200})
    assert client.process.stdout is not None
    client.process.stdout.close()
    code, stderr = client.close()
    assert code == 0
    assert "Traceback" not in stderr
    assert "BrokenPipe" not in stderr
    store = open_store(db, access=_policy())
    assert [m.subject for m in store.recent("acme/api", actor=Actor("ana"), surface=Surface.CLI)] == ["kept"]


def test_code_review_reaches_no_preference_by_id(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    store = open_store(db, access=_policy())
    draft = MemoryDraft("acme/api", Kind.PREFERENCE, "Style", "ana likes tabs", [Citation.parse("README.md:1")], "r")
    preference = store.store(draft, actor=Actor("ana"), surface=Surface.CODING_AGENT)

    async def body() -> None:
        async with Client(build_server(_service(db, repo, surface=Surface.CODE_REVIEW))) as review:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("verify_memory", {"memory_id": preference.id}),
                ("refresh_memory", {"memory_id": preference.id}),
                ("retire_memory", {"memory_id": preference.id, "reason": "r"}),
                ("store_memory", {"subject": "s", "fact": "f", "citations": ["README.md:1"],
                                  "supersedes": preference.id}),
            ]  # fmt: skip
            for tool, arguments in calls:
                error, text = await _call(review, tool, **arguments)
                assert error, tool
                assert "not found" in text, (tool, text)
                assert "tabs" not in text, (tool, text)
        async with Client(build_server(_service(db, repo, surface=Surface.CODING_AGENT))) as coding:
            error, _ = await _call(coding, "verify_memory", memory_id=preference.id)
            assert not error  # its author, from a surface that applies preferences, reaches it

    _run(body)
    assert store.get(preference.id, actor=Actor("ana")).status.value == "active"


def test_a_memory_judged_contradicted_is_not_refreshed(tmp_path: Path, repo: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"

    async def body() -> None:
        async with Client(build_server(_service(db, repo))) as client:
            _, made = await _call(
                client, "store_memory", subject="API version", fact="v2.1.4", citations=["src/constants.ts:3"]
            )
        (repo / "src" / "constants.ts").write_text('// API constants\n\nexport const API_VERSION = "v3.0.0";\n')
        _git(repo, "commit", "-qam", "v3")
        async with Client(build_server(_service(db, repo))) as client:
            _, verdict = await _call(client, "verify_memory", memory_id=made["id"])
            assert verdict["verdict"] == "contradicted"
            error, text = await _call(client, "refresh_memory", memory_id=made["id"])
            assert error
            assert "judged contradicted" in text
            assert "supersedes" in text
            corrected = verdict["corrected"]
            if corrected is not None:  # the advice works: the correction is stored
                error, _ = await _call(client, "store_memory", **corrected, supersedes=made["id"])
                assert not error

    _run(body)


@pytest.fixture
def http_server(tmp_path: Path, repo: Path) -> Iterator[tuple[int, str]]:
    """``memstore mcp`` over HTTP on every address, with a token from a file."""
    port, token = free_port(), "tok-" + os.urandom(8).hex()
    (tmp_path / "token").write_text(token + "\n")
    argv = [sys.executable, "-m", "memstore", "mcp", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "ana",
            "--repo", str(repo), "--name", "acme/api", "--transport", "http", "--host", "0.0.0.0",
            "--port", str(port), "--token-file", str(tmp_path / "token")]  # fmt: skip
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_port(port)
    yield port, token
    server.terminate()
    server.wait(timeout=30)
    assert server.stderr is not None
    assert "every request needs Authorization: Bearer <token>" in server.stderr.read().decode()


def test_beyond_loopback_a_token_is_required_to_start(tmp_path: Path, repo: Path) -> None:
    argv = [sys.executable, "-m", "memstore", "mcp", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "ana",
            "--repo", str(repo), "--name", "acme/api", "--transport", "http", "--host", "0.0.0.0"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_MCP_TOKEN"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "anyone who reaches the port would act as this user" in done.stderr
    assert "MEMSTORE_MCP_TOKEN" in done.stderr


def _post(port: int, headers: dict[str, str]) -> int:
    body = {**INIT, "params": {**INIT["params"]}}  # type: ignore[dict-item]
    with httpx2.Client() as http:
        response = http.post(
            f"http://127.0.0.1:{port}/mcp",
            json=body,
            headers={"Accept": "application/json, text/event-stream", **headers},
        )
    return response.status_code


def test_beyond_loopback_every_request_needs_the_token_and_a_known_host(http_server: tuple[int, str]) -> None:
    port, token = http_server
    assert _post(port, {}) == 401
    assert _post(port, {"Authorization": "Bearer wrong"}) == 401
    assert _post(port, {"Authorization": f"Bearer {token}", "Host": "evil.example:80"}) in {400, 403, 421}
    assert _post(port, {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}) in {400, 403}
    assert _post(port, {"Authorization": f"Bearer {token}"}) == 200

    async def body() -> None:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client)) as mcp:
            error, made = await _call(mcp, "store_memory", subject="s", fact="f", citations=["README.md:1"])
            assert not error
            assert made["id"].startswith("mem_")

    anyio.run(body)


def test_the_bearer_scheme_is_read_in_any_case_and_the_token_exactly(http_server: tuple[int, str]) -> None:
    """An authentication scheme is case-insensitive (RFC 7235, 2.1) and may be followed by more
    than one space; the token is compared exactly."""
    port, token = http_server
    for given in (f"bearer {token}", f"BEARER {token}", f"bEaReR   {token}"):
        assert _post(port, {"Authorization": given}) == 200, given
    for given in (f"bearer {token.upper()}", f"Basic {token}", f"bearer{token}", f"bearer {token} x", "bearer"):
        assert _post(port, {"Authorization": given}) == 401, given


def test_which_binds_stay_on_this_machine() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.0.0.5", "example.com")] == [
        True, True, True, False, False, False,
    ]  # fmt: skip
    assert "evil.example:*" not in allowed_hosts("0.0.0.0")
    assert "127.0.0.1:*" in allowed_hosts("127.0.0.1")
    assert "10.0.0.5:*" in allowed_hosts("10.0.0.5")
    assert allowed_hosts("0.0.0.0", ["mem.internal:8765"])[-1] == "mem.internal:8765"
