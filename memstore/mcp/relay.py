"""The inside end of the MCP relay: ``python -m memstore.mcp.relay SOCKET``.

A sandboxed agent starts this as its MCP server (its task file's ``mcp`` configuration says
so). It copies its standard input to the Unix socket and the socket to its standard output;
the harness, outside the sandbox, answers each connection with a ``memstore mcp`` server
process beside the store, which the agent cannot read. Bytes are passed as they are: the
relay knows nothing of MCP.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

_CHUNK = 64 * 1024


def _pump_in(connection: socket.socket) -> None:
    """Standard input to the socket; at its end, half-close the socket so the server sees it."""
    with contextlib.suppress(OSError):
        while chunk := os.read(sys.stdin.fileno(), _CHUNK):
            connection.sendall(chunk)
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_WR)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m memstore.mcp.relay SOCKET", file=sys.stderr)
        return 2
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(args[0])
    except OSError as exc:
        print(f"memstore relay: cannot reach the memory server at {args[0]}: {exc}", file=sys.stderr)
        return 1
    threading.Thread(target=_pump_in, args=(connection,), daemon=True).start()
    with contextlib.suppress(OSError):
        while chunk := connection.recv(_CHUNK):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
