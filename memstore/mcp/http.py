"""The streamable HTTP transport of ``memstore mcp``: loopback by default, a token beyond it.

Anyone who reaches the port acts as the server's ``--as`` user, so a bind beyond loopback
(``--host 0.0.0.0``) is refused unless a bearer token is set (``MEMSTORE_MCP_TOKEN``, or
``--token-file``); every request must then carry ``Authorization: Bearer <token>`` (compared
in constant time; 401 otherwise). The SDK's DNS-rebinding checks stay on for every bind: the
``Host`` header must name this server (loopback names, or this machine's names and the
address bound, or the ``--allow-host`` values) and a browser's ``Origin`` likewise.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import sys
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

__all__ = ["TOKEN_ENV", "allowed_hosts", "is_loopback", "serve_http"]

TOKEN_ENV = "MEMSTORE_MCP_TOKEN"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The ``Host`` values a request may carry (any port): loopback names, and beyond loopback
    this machine's names and the address bound, then ``extra``."""
    names = list(_LOOPBACK_NAMES)
    if not is_loopback(host):
        names += [socket.gethostname(), socket.getfqdn()]
        if host not in {"0.0.0.0", "::", ""}:
            names.append(f"[{host}]" if ":" in host else host)
    found = [form for name in names for form in (name, f"{name}:*")]
    return list(dict.fromkeys([*found, *extra]))  # an --allow-host value is taken as written


class _BearerGate:
    """An ASGI wrapper refusing every HTTP request without the token (401).

    The scheme is read in any case, as RFC 7235 (2.1) has it (``bearer``, ``BEARER``), then one
    or more spaces; the token itself is compared exactly, in constant time."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def _allowed(self, header: bytes) -> bool:
        scheme, _, given = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.lstrip(b" "), self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
            if not self._allowed(given):
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="memstore"')]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_http(server: MCPServer, *, host: str, port: int, token: str | None, allow_hosts: Sequence[str] = ()) -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/mcp`` (see the module docstring).

    Raises:
        ValueError: a bind beyond loopback without a token.
    """
    import uvicorn

    if not is_loopback(host) and not token:
        raise ValueError(
            f"--host {host} serves beyond this machine, and anyone who reaches the port would act as this user: "
            f"set a token ({TOKEN_ENV}, or --token-file) that every client sends as Authorization: Bearer <token>"
        )
    hosts = allowed_hosts(host, allow_hosts)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app: Any = server.streamable_http_app(host=host, transport_security=security)
    if token:
        app = _BearerGate(app, token)
    if not is_loopback(host):
        print(
            f"memstore mcp: serving beyond this machine on http://{host}:{port}/mcp; every request needs "
            f"Authorization: Bearer <token>; Host must be one of {', '.join(hosts)} (--allow-host adds one)",
            file=sys.stderr,
        )
    uvicorn.run(app, host=host, port=port, log_level="warning")
