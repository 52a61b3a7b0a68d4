"""Memory tools as a command, for agents that only run shell commands (mini-swe-agent, aider):
``python -m memstore.mcp.call TOOL [JSON-ARGUMENTS]``.

It reads the session's task file (``$MEMSTORE_TASK``), starts the ``memstore mcp`` server its
``mcp`` entry names (in the sandbox: the relay to the server beside the store), calls one
tool with the official MCP client, and prints the tool's structured result as JSON (exit
status 0), or its error message (exit status 1). ``python -m memstore.mcp.call --list``
prints the tools with their descriptions.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


async def _call(spec: dict[str, Any], tool: str | None, arguments: dict[str, Any]) -> tuple[int, str]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec.get("env") or None)
    async with Client(params) as client:
        if tool is None:
            listed = (await client.list_tools()).tools
            return 0, "\n".join(f"{t.name}: {(t.description or '').splitlines()[0]}" for t in listed)
        result = await client.call_tool(tool, arguments)
        if result.is_error:
            return 1, " ".join(getattr(part, "text", "") for part in result.content)
        return 0, json.dumps(result.structured_content, indent=1)


def main(argv: list[str] | None = None) -> int:
    import anyio

    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(__doc__)
        return 0 if args else 2
    try:
        with open(os.environ["MEMSTORE_TASK"], encoding="utf-8") as handle:
            mcp = json.load(handle).get("mcp")
    except (KeyError, OSError, ValueError) as exc:
        print(f"memstore call: no task file to read ($MEMSTORE_TASK): {exc}", file=sys.stderr)
        return 2
    if not mcp:
        print("memstore call: this session's store offers no MCP server (a store in memory)", file=sys.stderr)
        return 2
    tool = None if args[0] == "--list" else args[0]
    try:
        arguments = json.loads(args[1]) if len(args) > 1 else {}
    except ValueError as exc:
        print(f"memstore call: the arguments are not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("memstore call: the arguments must be a JSON object", file=sys.stderr)
        return 2
    status, text = anyio.run(_call, mcp["mcpServers"]["memstore"], tool, arguments)
    print(text, file=sys.stdout if status == 0 else sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
