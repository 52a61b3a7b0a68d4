"""One MCP client session to a stdio server, driven from synchronous code (the stores over MCP
servers: `memstore.backends.mcp`, `memstore.backends.mcp_memstore`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import shlex
import threading
from pathlib import Path
from typing import Any

from memstore.errors import StorageError

__all__ = ["CALL_TIMEOUT", "McpConnection"]

CALL_TIMEOUT = 60.0  # seconds a tool call may take


class McpConnection:
    """One MCP client session to a stdio server, driven from synchronous code: the session lives
    in an event loop on a thread of its own (the SDK's client is asynchronous), and `call` hands
    it one tool call at a time."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.argv = argv
        self.log = log
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="memstore-mcp-store", daemon=True)
        self._thread.start()
        self._requests: asyncio.Queue[Any] | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._done = asyncio.run_coroutine_threadsafe(self._serve(env), self._loop)
        try:
            self._ready.result(timeout=CALL_TIMEOUT)
        except Exception as exc:
            self.close()
            raise StorageError(f"the MCP server {shlex.join(argv)!r} did not start: {exc}") from exc

    async def _serve(self, env: dict[str, str]) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=env)
        self._requests = asyncio.Queue()
        try:
            with self.log.open("a", encoding="utf-8") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    self._ready.set_result(None)
                    while (request := await self._requests.get()) is not None:
                        tool, arguments, answer = request
                        try:
                            answer.set_result(await client.call_tool(tool, arguments))
                        except Exception as exc:  # the server's failure is the caller's to see
                            answer.set_exception(exc)
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def result(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The tool's `CallToolResult`, a refusal included; `StorageError` when the call fails."""
        if self._requests is None or self._done.done():
            raise StorageError(f"the MCP server {self.argv[0]!r} is not running")
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._requests.put_nowait, (tool, arguments, answer))
        try:
            return answer.result(timeout=CALL_TIMEOUT)
        except Exception as exc:
            raise StorageError(f"MCP tool {tool} failed: {exc}") from exc

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured result; `StorageError` when the server refuses or fails."""
        result = self.result(tool, arguments)
        if result.is_error:
            text = " ".join(getattr(part, "text", "") for part in result.content)
            raise StorageError(f"MCP tool {tool}: {text[:500]}")
        return dict(result.structured_content or {})

    def close(self) -> None:
        if self._requests is not None and not self._done.done():
            self._loop.call_soon_threadsafe(self._requests.put_nowait, None)
            with contextlib.suppress(Exception):  # a server that died on the way out is closed all the same
                self._done.result(timeout=CALL_TIMEOUT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=CALL_TIMEOUT)
