"""The MCP memory server (`memstore mcp`): the memory service, the server over it, its stdio and
HTTP transports, and the fork server that starts servers in milliseconds.

The names load on first use: the server and its transports import the MCP SDK (about a second),
which a store or a fork server that never serves here does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstore.mcp.forkserver import ForkServer
    from memstore.mcp.http import serve_http
    from memstore.mcp.server import build_server
    from memstore.mcp.service import MemoryService
    from memstore.mcp.stdio import serve_stdio

__all__ = ["ForkServer", "MemoryService", "build_server", "serve_http", "serve_stdio"]

_HOME = {
    "ForkServer": "memstore.mcp.forkserver",
    "MemoryService": "memstore.mcp.service",
    "build_server": "memstore.mcp.server",
    "serve_http": "memstore.mcp.http",
    "serve_stdio": "memstore.mcp.stdio",
}


def __getattr__(name: str) -> Any:
    """A name of the face, imported from its module the first time it is asked for."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value
