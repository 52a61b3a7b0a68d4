"""The stdio transport ``memstore mcp`` serves on: every request answered, a disconnect quiet.

The SDK's own stdio transport parses each line with pydantic, which refuses a JSON string
holding a lone surrogate (``"\\ud800"``, valid JSON, not valid Unicode): the line is dropped
unanswered and an SDK client waits for ever; a client that hangs up mid-session makes its
writer raise ``BrokenPipeError`` inside a task group and the server exit with a traceback.
Here each line is read the same way, but a request the SDK cannot take is answered where it
is read (a tool error for a tool call, a JSON-RPC error otherwise, with the request's id),
responses are written as UTF-8 that cannot fail to encode, and a closed pipe on either end
ends the server with status 0. Operations finished before the disconnect are kept: every
store write is committed and logged as it happens.

As the SDK does, the process's own descriptors 0 and 1 are pointed at ``/dev/null`` and
standard error while it serves, so stray output of a library cannot corrupt the wire.

What a client can make the server hold is bounded (the SDK reads a line of any length, and a
sandboxed agent's relay starts a server per connection): a request is at most
`MAX_REQUEST_BYTES`; a longer one is answered with a JSON-RPC error as soon as the bound is
passed and the rest of its line is read and dropped, a chunk at a time. Requests read and not
yet answered hold at most `MAX_PENDING_BYTES`; past that the server reads nothing more until
answers go out, so a client that sends without reading its answers waits instead of growing the
server. Answers already written are not the server's to hold: a full pipe stops its writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

__all__ = ["MAX_PENDING_BYTES", "MAX_REQUEST_BYTES", "serve_stdio"]

# The largest legitimate request is a store_memory call: 200 + 4,000 + 4,000 characters of subject,
# fact and reason and 20 citations of a 4,096-character path, about 90,000 characters; written as
# JSON with every character escaped as a surrogate pair (12 bytes) it is about 1.1 MB. The bound
# leaves that room three times over.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_PENDING_BYTES = MAX_REQUEST_BYTES  # requests read and not yet answered (one more waits to be let in)
_DROP_CHUNK = 64 * 1024  # what is read at a time of a line being dropped
_TOO_LARGE = (
    f"the request is longer than {MAX_REQUEST_BYTES:,} bytes (one JSON-RPC message per line): "
    "it was read to its end and dropped"
)

_BAD_TEXT = "the request holds text that is not valid Unicode (a lone surrogate); send UTF-8 text"


def _refusal(line: bytes) -> bytes | None:
    """The answer to a line the SDK cannot parse, or None when no answer is owed (a notification,
    or a line whose id cannot be read)."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return _dump({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error: not JSON"}})
    if not isinstance(request, dict) or "method" not in request or "id" not in request:
        return None
    request_id = request["id"]
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        request_id = None
    has_bad_text = "\\ud" in line.decode("utf-8", "replace").lower()
    message = _BAD_TEXT if has_bad_text else "invalid request: it does not match the protocol's schema"
    if request.get("method") == "tools/call" and request_id is not None:
        result = {"content": [{"type": "text", "text": message}], "isError": True}
        return _dump({"jsonrpc": "2.0", "id": request_id, "result": result})
    return _dump({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": message}})


class _Pending:
    """The bytes of requests read and not yet answered, by request id: a request is let through
    while they stay within the budget, or when none is pending (a request is never refused for
    its size here: `MAX_REQUEST_BYTES` has bounded it already)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self._sizes: dict[object, list[int]] = {}
        self._freed = anyio.Event()

    async def admit(self, message: types.JSONRPCMessage, size: int) -> None:
        """Wait until a request of ``size`` bytes fits; a cancellation frees its request's bytes."""
        if isinstance(message, types.JSONRPCRequest):
            while self.held and self.held + size > self.budget:
                await self._freed.wait()
            self._sizes.setdefault(message.id, []).append(size)
            self.held += size
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self.release((message.params or {}).get("requestId"))  # no answer will come

    def answered(self, message: types.JSONRPCMessage) -> None:
        """``message`` was written: if it answers a request, that request's bytes are free."""
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.release(message.id)

    def release(self, request_id: object) -> None:
        sizes = self._sizes.get(request_id)
        if not sizes:
            return
        self.held -= sizes.pop(0)
        if not sizes:
            del self._sizes[request_id]
        self._freed.set()
        self._freed = anyio.Event()


async def _next_line(wire_in: BinaryIO, send: Callable[[bytes], Awaitable[None]]) -> bytes:
    """The next line of at most `MAX_REQUEST_BYTES` (empty at the end of the input). A longer one
    is answered with an error as soon as the bound is passed, then read to its end and dropped."""

    async def read_line(limit: int) -> bytes:
        return await anyio.to_thread.run_sync(wire_in.readline, limit, abandon_on_cancel=True)

    while True:
        line = await read_line(MAX_REQUEST_BYTES + 1)
        if len(line) <= MAX_REQUEST_BYTES or line.endswith(b"\n"):
            return line
        del line
        await send(_dump({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": _TOO_LARGE}}))
        while (rest := await read_line(_DROP_CHUNK)) and not rest.endswith(b"\n"):
            pass
        if not rest:
            return b""


def _dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=True).encode() + b"\n"


def _claim(fd: int, replacement: int) -> BinaryIO:
    """The wire on a private duplicate of ``fd``; ``fd`` itself pointed at ``replacement``."""
    private = os.dup(fd)
    os.dup2(replacement, fd)
    os.close(replacement)
    return os.fdopen(private, "rb" if fd == 0 else "wb")


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on standard input and output until the client hangs up."""
    wire_in = _claim(0, os.open(os.devnull, os.O_RDONLY))
    wire_out = _claim(1, os.dup(2))
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        anyio.run(_serve, server, wire_in, wire_out)
    with contextlib.suppress(OSError):
        wire_out.close()
    sys.stdout.flush()


async def _serve(server: MCPServer, wire_in: BinaryIO, wire_out: BinaryIO) -> None:
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner uses it the same way
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    lock = anyio.Lock()
    closed = anyio.Event()
    pending = _Pending(MAX_PENDING_BYTES)

    def write(data: bytes) -> None:
        wire_out.write(data)
        wire_out.flush()

    async def send(data: bytes) -> None:
        async with lock:
            try:
                await anyio.to_thread.run_sync(write, data)
            except (BrokenPipeError, ConnectionResetError, OSError, ValueError):
                closed.set()

    async def reader() -> None:
        async with read_writer:
            while not closed.is_set():
                line = await _next_line(wire_in, send)
                if not line:
                    break
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception:  # whatever pydantic refuses is answered, not dropped
                    answer = _refusal(line)
                    if answer is not None:
                        await send(answer)
                    continue
                size = len(line)
                del line  # what was read is held as the message now, not twice while it waits
                await pending.admit(message, size)
                await read_writer.send(SessionMessage(message))

    async def writer() -> None:
        async with write_reader:
            async for outgoing in write_reader:
                text = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                await send(text.encode("utf-8", "replace") + b"\n")
                pending.answered(outgoing.message)  # written: the client has it, or its pipe
                if closed.is_set():
                    break

    async def watch(scope: anyio.CancelScope) -> None:
        await closed.wait()
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(watch, group.cancel_scope)  # a hung-up client ends everything at once
        async with anyio.create_task_group() as output:
            output.start_soon(writer)
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            await write_stream.aclose()  # the writer sends what is left, then ends
        group.cancel_scope.cancel()
