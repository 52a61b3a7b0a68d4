#!/usr/bin/env python3
"""memstore adapter for Claude Code (``npm install -g @anthropic-ai/claude-code``).

    memstore eval --agent "command:python3 adapters/claude_code.py" \
        --agent-network host --agent-env ANTHROPIC_API_KEY [--agent-env CLAUDE_MODEL]

Claude Code runs headless (``claude -p``) in the working copy with the session's memory server
as its only MCP server (``--mcp-config``, ``--strict-mcp-config``), edits allowed, and its JSON
result read back: the final text (answer or findings), tokens, cache reads and cost. Its own
log is kept as the session's trajectory. Set $CLAUDE_BIN to use another ``claude`` executable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_task, outcome, prompt, session_dir, write_result

TOOLS = "mcp__memstore__*,Read,Glob,Grep,Edit,MultiEdit,Write,Bash(git diff:*),Bash(git status:*)"


def main() -> int:
    task = load_task()
    folder = session_dir()
    argv = [os.environ.get("CLAUDE_BIN", "claude"), "-p", "--output-format", "json", "--allowedTools", TOOLS]
    argv += ["--permission-mode", "acceptEdits"]
    if os.environ.get("CLAUDE_MODEL"):
        argv += ["--model", os.environ["CLAUDE_MODEL"]]
    tools = ""
    if task["mcp"]:
        config = folder / "mcp.json"
        config.write_text(json.dumps(task["mcp"]), encoding="utf-8")
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
        tools = "Memory tools (MCP server 'memstore'): recent_memories, search_memories, verify_memory, " \
                "refresh_memory, retire_memory, store_memory."  # fmt: skip
    done = subprocess.run(
        [*argv, prompt(task, memory_tools=tools)], cwd=task["workdir"], capture_output=True, text=True
    )
    log = folder / "claude-output.json"
    log.write_text(done.stdout, encoding="utf-8")
    sys.stderr.write(done.stderr[-100_000:])
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        write_result({"error": {"kind": "agent", "message": f"claude exited {done.returncode} without a JSON result"}})
        return 0
    usage = reply.get("usage") or {}
    result = {
        **outcome(task, str(reply.get("result") or "")),
        "usage": {
            "input_tokens": int(usage.get("input_tokens") or 0) + int(usage.get("cache_read_input_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cache_tokens": int(usage.get("cache_read_input_tokens") or 0),
            "cost_usd": float(reply.get("total_cost_usd") or 0.0),
            "model": os.environ.get("CLAUDE_MODEL", "claude-code default"),
        },
        "trajectory": str(log),
    }
    if reply.get("is_error"):
        api = "API" in str(reply.get("result", "")) or reply.get("subtype") == "error_during_execution"
        result["error"] = {"kind": "infrastructure" if api else "agent", "message": str(reply.get("result"))[:3000]}
    write_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
