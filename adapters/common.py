"""What memstore's adapters share: the task file, the prompt, the result file (standard library only,
so an adapter runs under whatever Python its agent is installed with)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

SURFACE = {
    "coding_agent": "Make the change in the repository's files. Change nothing else; do not commit.",
    "code_review": "Review the pull request below; do not edit files. End your reply with one line per file the "
    "pull request gets wrong, as `FINDING: path: note`, or no such line when it is right.",
    "cli": "Answer the question; do not edit files. End your reply with the line `ANSWER: <the answer>`.",
}
MEMORY_RULES = (
    "Memories can be stale: lines move, values change, some were never true. Verify a memory before you rely on it "
    "(verify_memory), use the corrected version it returns, retire one with nothing behind it, refresh one you "
    "verified and used, and store what you learn with citations (path:line)."
)


def load_task() -> dict[str, Any]:
    with open(os.environ["MEMSTORE_TASK"], encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


def session_dir() -> Path:
    return Path(os.environ["MEMSTORE_SESSION_DIR"])


def memory_command(task: dict[str, Any]) -> str | None:
    """The shell command that calls the session's memory tools (for agents without MCP)."""
    if not task["mcp"]:
        return None
    python = task["mcp"]["mcpServers"]["memstore"]["command"]  # memstore's Python: it has the MCP client
    return f"{shlex.quote(python)} -m memstore.mcp.call"


def prompt(task: dict[str, Any], *, memory_tools: str) -> str:
    """The task in words: what the user asked, the surface's rules, the memories the store returned,
    and how to reach the memory tools (``memory_tools``: a sentence, or empty when there are none)."""
    t = task["task"]
    lines = [t["prompt"], "", SURFACE[t["surface"]]]
    if t["intent"]:
        lines.append(f"Ticket: {t['intent']['text']}")
    if t["question"]:
        lines.append(f"Question: {t['question']}")
    if t["pull_request"]:
        pr = t["pull_request"]
        lines += [f"Pull request: {pr['title']}", pr["description"], "Diff:", pr["diff"]]
    lines += ["", f"Memories the store returned ({len(task['memories'])}):"]
    for m in task["memories"]:
        cites = ", ".join(f"{c['path']}:{c['line']}" for c in m["citations"])
        lines.append(f"- {m['id']}: {m['subject']}: {m['fact']} [{cites}]")
    if memory_tools:
        lines += ["", MEMORY_RULES, memory_tools]
    return "\n".join(lines)


def outcome(task: dict[str, Any], text: str) -> dict[str, Any]:
    """The answer (CLI) or findings (review) the agent's final text reports."""
    surface = task["task"]["surface"]
    found: dict[str, Any] = {}
    lines = [line.strip() for line in text.splitlines()]
    if surface == "cli":
        answers = [line.removeprefix("ANSWER:").strip() for line in lines if line.startswith("ANSWER:")]
        if answers:
            found["answer"] = answers[-1]
    if surface == "code_review":
        findings = []
        for line in lines:
            if line.startswith("FINDING:"):
                path, _, note = line.removeprefix("FINDING:").strip().partition(":")
                if path.strip():
                    findings.append({"path": path.strip(), "note": note.strip()})
        found["findings"] = findings
    return found


def write_result(result: dict[str, Any]) -> None:
    with open(os.environ["MEMSTORE_RESULT"], "w", encoding="utf-8") as handle:
        json.dump({"schema_version": 1, **result}, handle)
