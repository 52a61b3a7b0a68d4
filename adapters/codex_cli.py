#!/usr/bin/env python3
"""memstore adapter for OpenAI's Codex CLI (``npm install -g @openai/codex``).

    memstore eval --agent "command:python3 adapters/codex_cli.py" \
        --agent-network host --agent-env OPENAI_API_KEY [--agent-env CODEX_MODEL]

Codex runs non-interactively (``codex exec --json``) in the working copy, its own sandbox set to
``workspace-write`` (memstore's sandbox is around it), the session's memory server added as the
MCP server ``memstore`` with ``-c mcp_servers.memstore...`` overrides. Its JSON-lines events are
read back: the last agent message (answer or findings) and the token counts of each turn. The
event log is kept as the session's trajectory. Set $CODEX_BIN to use another ``codex``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_task, outcome, prompt, session_dir, write_result


def main() -> int:
    task = load_task()
    folder = session_dir()
    argv = [os.environ.get("CODEX_BIN", "codex"), "exec", "--json", "--skip-git-repo-check"]
    argv += ["--sandbox", "workspace-write", "-C", task["workdir"]]
    if os.environ.get("CODEX_MODEL"):
        argv += ["-m", os.environ["CODEX_MODEL"]]
    tools = ""
    if task["mcp"]:
        server = task["mcp"]["mcpServers"]["memstore"]
        argv += ["-c", f"mcp_servers.memstore.command={json.dumps(server['command'])}"]
        argv += ["-c", f"mcp_servers.memstore.args={json.dumps(server['args'])}"]
        tools = "Memory tools (MCP server 'memstore'): recent_memories, search_memories, verify_memory, " \
                "refresh_memory, retire_memory, store_memory."  # fmt: skip
    done = subprocess.run([*argv, prompt(task, memory_tools=tools)], capture_output=True, text=True)
    log = folder / "codex-events.jsonl"
    log.write_text(done.stdout, encoding="utf-8")
    sys.stderr.write(done.stderr[-100_000:])
    spent = {"input_tokens": 0, "output_tokens": 0, "cache_tokens": 0}
    last_message, failure = "", None
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type")
        if kind == "turn.completed":
            usage = event.get("usage") or {}
            spent["input_tokens"] += int(usage.get("input_tokens") or 0)
            spent["output_tokens"] += int(usage.get("output_tokens") or 0)
            spent["cache_tokens"] += int(usage.get("cached_input_tokens") or 0)
        elif kind == "item.completed" and (event.get("item") or {}).get("type") == "agent_message":
            last_message = str(event["item"].get("text") or "")
        elif kind in {"turn.failed", "error"}:
            failure = str((event.get("error") or {}).get("message") or event.get("message") or kind)
    result = {
        **outcome(task, last_message),
        "usage": {**spent, "model": os.environ.get("CODEX_MODEL", "codex default")},
        "trajectory": str(log),
    }
    if failure is not None:
        result["error"] = {"kind": "infrastructure", "message": failure[:3000]}
    elif done.returncode != 0:
        result["error"] = {"kind": "agent", "message": f"codex exited {done.returncode}"}
    write_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
