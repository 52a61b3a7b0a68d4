"""`CommandAgent`: evaluate any real agent by running it as a command in the task's working copy.

For each session the harness writes the task and the memories it was handed to a JSON file,
runs the command in the working copy (on the task branch, for a coding task) with
``MEMSTORE_TASK`` and ``MEMSTORE_RESULT`` naming the two files, and reads the result back.
A coding agent edits the files in place; the harness commits what changed and runs the
scenario's merge check.

The task file::

    {"version": 1,
     "task": {"key": "...", "surface": "coding_agent|code_review|cli", "prompt": "...",
              "intent": {"action": "set|add|use|ask", "subject": "...", "value": "...",
                         "target": "...", "text": "..."} | null,
              "question": "...",
              "pull_request": {"title": "...", "description": "...", "branch": "...",
                               "base": "...", "changed_files": ["..."], "diff": "..."} | null},
     "repo": "owner/name", "user": "...", "workdir": "/path/to/working/copy",
     "memories": [Memory.to_dict(), ...],
     "mcp": {"mcpServers": {"memstore": {"command": "...", "args": [...], "env": {}}}} | null}

``mcp`` configures a ``memstore mcp`` server bound to this session (its store, user,
repository, surface, clock): pass it to an MCP client as it is, the ``mcpServers`` form
Claude Code, Codex CLI and others read. What the agent does through it is recorded like
the operations of its result; it is null when the store lives in the harness's memory.

The result file is checked against the published JSON Schema
(``memstore/harness/schemas/agent-result.schema.json``; every key optional)::

    {"answer": "...",                                   # CLI tasks
     "findings": [{"path": "...", "note": "..."}],      # review tasks
     "memory_ops": [
        {"op": "use", "id": "mem_..."},                 # relied on it
        {"op": "refuse", "id": "mem_...", "reason": "..."},
        {"op": "refresh", "id": "mem_..."},
        {"op": "retire", "id": "mem_...", "reason": "..."},
        {"op": "store", "subject": "...", "fact": "...", "citations": ["path:line"],
         "reason": "...", "supersedes": "mem_..." | null}]}

The command runs under `memstore.harness.run.process.run_bounded`: its process group is killed at
the timeout and when it exits, its output is capped, and the result is read only if it is a
regular file of bounded size. A command that fails, times out, or writes a result that does
not match the schema fails its own session (an ``agent_error`` event, with the reason) and
nothing of the result is applied; the run goes on.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from memstore.errors import ConfigurationError
from memstore.harness.run.boundary import AgentSession
from memstore.harness.run.events import EventKind
from memstore.harness.run.process import read_bounded, run_bounded
from memstore.harness.run.scratch import scratch
from memstore.model import Kind, Memory

__all__ = ["DEFAULT_TIMEOUT", "CommandAgent", "result_schema", "validate_result"]

DEFAULT_TIMEOUT = 600.0


@cache
def result_schema() -> dict[str, Any]:
    """The published JSON Schema of ``result.json``."""
    path = Path(__file__).parent.parent / "schemas" / "agent-result.schema.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(result_schema())


def validate_result(data: object) -> str | None:
    """Why ``data`` is not a valid result (the first problem, located), or None when it is."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "the result"
    return f"{where.lstrip('.')}: {error.message[:300]}"


def _resolve(argv: list[str], base: Path) -> list[str]:
    """The command with its program found on PATH and relative paths made absolute against
    ``base`` (where `memstore eval` was started), not against the task's working copy."""
    program, *args = argv
    if "/" in program:
        found = str((base / program).resolve()) if not os.path.isabs(program) else program
        if not os.access(found, os.X_OK):
            raise ConfigurationError(f"the agent's program {program!r} is not an executable file (looked at {found})")
    else:
        located = shutil.which(program)
        if located is None:
            raise ConfigurationError(f"the agent's program {program!r} is not on PATH")
        found = located
    return [found, *(str((base / a).resolve()) if not a.startswith("-") and (base / a).exists() else a for a in args)]


class CommandAgent:
    """Runs ``command`` (a shell-style string) once per session.

    Args:
        command: the command line, e.g. ``"python my_agent.py --model x"``.
        timeout: seconds before the command's process group is killed.
        base_dir: what relative paths in the command are relative to (the current
            directory by default).

    Raises:
        ConfigurationError: for an empty command, unbalanced quotes, or a program that
            cannot be found.
    """

    uses_memory = True

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT, base_dir: Path | None = None) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigurationError(f"cannot read the agent command {command!r}: {exc}") from exc
        if not argv:
            raise ConfigurationError("'command:' needs a command line, such as 'command:python3 my_agent.py'")
        if not timeout > 0:
            raise ConfigurationError(f"the agent timeout must be a positive number of seconds, got {timeout}")
        self.argv = _resolve(argv, base_dir or Path.cwd())
        self.timeout = timeout
        self.name = f"command:{command}"

    def _task_document(self, session: AgentSession) -> dict[str, Any]:
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
            "version": 1,
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
            "workdir": task.workdir,
            "memories": [m.to_dict() for m in session.memories],
        }

    def work(self, session: AgentSession) -> None:
        with tempfile.TemporaryDirectory(dir=scratch("run"), prefix="agent-") as tmp:  # goes with the run
            task_file, result_file = Path(tmp) / "task.json", Path(tmp) / "result.json"
            tools = session.tools
            events = Path(tmp) / "mcp-events.jsonl"
            mcp = tools.mcp_config(events)
            document = {**self._task_document(session), "mcp": mcp}
            task_file.write_text(json.dumps(document, indent=2), encoding="utf-8")
            env = {**os.environ, "MEMSTORE_TASK": str(task_file), "MEMSTORE_RESULT": str(result_file)}
            try:
                with tools.guarded(events if mcp is not None else None):
                    finished = run_bounded(self.argv, cwd=session.task.workdir, env=env, timeout=self.timeout)
            except OSError as exc:
                tools.record(EventKind.AGENT_ERROR, "", f"cannot run {self.argv[0]}: {exc}")
                return
            finally:
                if mcp is not None:
                    tools.replay(events)  # what it did through the server, done already: recorded now
            if finished.timed_out:
                tools.record(EventKind.AGENT_ERROR, "", f"timed out after {self.timeout:g} s")
                return
            if finished.returncode != 0:
                tools.record(EventKind.AGENT_ERROR, "", f"exit status {finished.returncode}: {finished.stderr_tail()}")
            result = self._read(session, result_file)
        if result is not None:
            self._apply(session, result)

    @staticmethod
    def _read(session: AgentSession, path: Path) -> dict[str, Any] | None:
        """The validated result, or None (with the reason recorded) when there is none to apply."""
        try:
            data = json.loads(read_bounded(path))
        except (OSError, ValueError, RecursionError) as exc:
            session.tools.record(EventKind.AGENT_ERROR, "", f"no readable result: {str(exc)[:300]}")
            return None
        problem = validate_result(data)
        if problem is not None:
            session.tools.record(EventKind.AGENT_ERROR, "", f"result.json does not match the schema: {problem}")
            return None
        return data  # type: ignore[no-any-return]

    def _apply(self, session: AgentSession, result: dict[str, Any]) -> None:
        tools = session.tools
        handed: dict[str, Memory] = {m.id: m for m in session.memories}
        for op in result.get("memory_ops", []):
            kind = op["op"]
            if kind == "store":
                tools.store_memory(
                    op["subject"],
                    op["fact"],
                    list(op.get("citations", [])),
                    op.get("reason", ""),
                    kind=Kind(op.get("kind", "fact")),
                    supersedes=op.get("supersedes"),
                )
                continue
            memory = handed.get(op["id"])
            if memory is None:
                tools.record(EventKind.AGENT_ERROR, op["id"][:200], f"{kind}: not a memory it was given")
            elif kind == "use":
                tools.use(memory)
            elif kind == "refuse":
                tools.refuse(memory, op.get("reason", ""))
            elif kind == "refresh":
                tools.refresh(memory)
            else:
                tools.retire(memory, op.get("reason", ""))
        for finding in result.get("findings", []):
            tools.flag(finding["path"], finding.get("note", ""))
        if result.get("answer") is not None:
            tools.give_answer(result["answer"])
