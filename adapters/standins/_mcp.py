"""What the stand-ins share: a bare MCP client over stdio (JSON-RPC, newline-delimited), standard
library only, and the edit a real agent would make for the scripted task."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path


class Server:
    def __init__(self, command: str, args: list[str]) -> None:
        self.process = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "stand-in", "version": "0"}})  # fmt: skip
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        )
        self.process.stdin.flush()
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                return message

    def call(self, tool: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def work(prompt: str, workdir: Path, server: Server) -> str:
    """Verify and refresh the memory the prompt names, bump the version in its three places."""
    memory = re.search(r"mem_[0-9A-Z]{26}", prompt)
    verdict = server.call("verify_memory", {"memory_id": memory.group(0)}) if memory else None
    if memory:
        server.call("refresh_memory", {"memory_id": memory.group(0)})
    for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
        file = workdir / path
        file.write_text(file.read_text().replace("v2.1.4", "v2.2.0"))
    return f"Bumped the API version (memory verdict: {(verdict or {}).get('structuredContent', {}).get('verdict')})."
