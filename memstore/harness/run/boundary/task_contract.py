"""The adapter contract of out-of-process agents, version 1: ``task.json`` in, ``result.json`` out.

Both are published as JSON Schemas in the package (``memstore/harness/schemas/``) and
described field by field in ``docs/agents.md``. The harness writes a task that matches its
schema (tested) and reads back only a result that matches its own; a result naming a
``schema_version`` this harness does not read is refused with a sentence saying so.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from memstore.harness.run.boundary.session import AgentSession

__all__ = [
    "SCHEMA_VERSION",
    "relay_config",
    "result_schema",
    "task_document",
    "task_schema",
    "validate_result",
    "validate_task",
]

SCHEMA_VERSION = 1
_SCHEMAS = Path(__file__).parents[2] / "schemas"  # memstore/harness/schemas


@cache
def result_schema() -> dict[str, Any]:
    """The published JSON Schema of ``result.json``."""
    return json.loads((_SCHEMAS / "agent-result.schema.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def task_schema() -> dict[str, Any]:
    """The published JSON Schema of ``task.json``."""
    return json.loads((_SCHEMAS / "agent-task.schema.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def _validator(which: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(result_schema() if which == "result" else task_schema())


def _problem(which: str, data: object) -> str | None:
    error = jsonschema.exceptions.best_match(_validator(which).iter_errors(data))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or f"the {which}"
    return f"{where.lstrip('.')}: {error.message[:300]}"


def validate_result(data: object) -> str | None:
    """Why ``data`` is not a valid result (the first problem, located), or None when it is."""
    if isinstance(data, dict) and "schema_version" in data and data["schema_version"] != SCHEMA_VERSION:
        version = str(data["schema_version"])[:20]
        return f"schema_version {version} is not one this harness reads (it reads {SCHEMA_VERSION})"
    return _problem("result", data)


def validate_task(data: object) -> str | None:
    """Why ``data`` is not a valid task document, or None when it is."""
    return _problem("task", data)


def relay_config(socket_path: Path) -> dict[str, Any]:
    """The ``mcpServers`` entry a sandboxed agent is handed: the relay to the session's server."""
    args = ["-m", "memstore.mcp.relay", str(socket_path)]
    return {"mcpServers": {"memstore": {"command": sys.executable, "args": args, "env": {}}}}


def task_document(session: AgentSession, workdir: str) -> dict[str, Any]:
    """The task file of a session (without its ``mcp`` entry), the working copy seen at ``workdir``."""
    task = session.task
    pull_request = None
    if task.pull_request is not None:
        pr = task.pull_request
        pull_request = {
            "title": pr.title,
            "description": pr.description,
            "branch": pr.branch,
            "base": pr.base,
            "changed_files": list(pr.changed_files),
            "diff": pr.diff,
        }
    intent = None
    if task.intent is not None:
        intent = {
            "action": task.intent.action.value,
            "subject": task.intent.subject,
            "value": task.intent.value,
            "target": task.intent.target,
            "text": task.intent.describe(),
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "task": {
            "key": task.key,
            "surface": task.surface.value,
            "prompt": task.prompt,
            "intent": intent,
            "question": task.question,
            "pull_request": pull_request,
        },
        "repo": task.repo,
        "user": task.user,
        "workdir": workdir,
        "timeout_seconds": session.limits.seconds,
        "memories": [m.to_dict() for m in session.memories],
    }
