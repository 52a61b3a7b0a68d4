"""A stdio server that cannot start tells its client why: the MCP SDK's own client, starting
``memstore mcp`` without a repository (or with a store it cannot open), gets the reason as the
error of its ``initialize``, not "Connection closed"; the command still exits 2 with the reason."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent


async def _connect(args: list[str], log: Path) -> str:
    params = StdioServerParameters(command=str(BIN / "memstore"), args=args)
    with log.open("w") as errlog:
        try:
            async with Client(stdio_client(params, errlog=errlog)):
                return "connected"
        except Exception as exc:  # the SDK's error for the refused initialize, in its task group's
            return " | ".join(_messages(exc))


def _messages(exc: BaseException) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in _messages(inner)]
    return [f"{type(exc).__name__}: {exc}"]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--as", "ana"], "name the repository: --repo PATH (its clone) or --name OWNER/NAME"),
        (["--as", "ana", "--name", "acme/api", "--store", "nosuch://x"], "unknown store URI 'nosuch://x'"),
    ],
    ids=["no-repository", "bad-store"],
)
def test_the_client_is_told_why_the_server_cannot_start(tmp_path: Path, args: list[str], why: str) -> None:
    store = ["--store", f"sqlite:///{tmp_path / 'm.db'}"] if "--store" not in args else []
    said = asyncio.run(_connect(["mcp", *store, *args], tmp_path / "err.log"))
    assert "memstore mcp cannot start: " in said, said
    assert why in said
    assert why in (tmp_path / "err.log").read_text()  # and on its standard error, as the command says it
