"""`CommandAgent`: evaluate any real agent by running it as a command in the task's working copy.

For each session the harness writes the task and the memories it was handed to a JSON file,
runs the command in the working copy (on the task branch, for a coding task) with
``MEMSTORE_TASK`` and ``MEMSTORE_RESULT`` naming the two files, and reads the result back.
A coding agent edits the files in place; the harness commits what changed and runs the
scenario's merge check.

The task file::

    {"version": 1,
     "task": {"key": "...", "surface": "coding_agent|code_review|cli", "prompt": "...",
              "question": "...", "pull_request": {"branch": "...", "base": "...",
              "changed_files": ["..."]} | null},
     "repo": "owner/name", "user": "...", "workdir": "/path/to/working/copy",
     "memories": [Memory.to_dict(), ...]}

The result file (every key optional)::

    {"answer": "...",                                   # CLI tasks
     "findings": [{"path": "...", "note": "..."}],      # review tasks
     "memory_ops": [
        {"op": "use", "id": "mem_..."},                 # relied on it
        {"op": "refuse", "id": "mem_...", "reason": "..."},
        {"op": "refresh", "id": "mem_..."},
        {"op": "retire", "id": "mem_...", "reason": "..."},
        {"op": "store", "subject": "...", "fact": "...", "citations": ["path:line"],
         "reason": "...", "supersedes": "mem_..." | null}]}

A command that fails, times out or writes no readable result leaves the session with no
answer or findings (and an unmerged change); the failure is recorded as an event.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from memstore.harness.session import Session
from memstore.model import Memory

__all__ = ["CommandAgent"]


class CommandAgent:
    """Runs ``command`` (a shell-style string) once per session.

    Args:
        command: the command line, e.g. ``"python my_agent.py --model x"``.
        timeout: seconds before the command is stopped.
    """

    uses_memory = True

    def __init__(self, command: str, *, timeout: float = 600.0) -> None:
        self.command = shlex.split(command)
        self.timeout = timeout
        self.name = f"command:{command}"

    def _task_document(self, session: Session) -> dict[str, Any]:
        task = session.task
        pull_request = None
        if task.pull_request is not None:
            branch, base = task.pull_request
            pull_request = {"branch": branch, "base": base, "changed_files": session.tools.changed_files()}
        return {
            "version": 1,
            "task": {
                "key": task.key,
                "surface": task.surface.value,
                "prompt": task.prompt,
                "question": task.question,
                "pull_request": pull_request,
            },
            "repo": session.repo,
            "user": task.user,
            "workdir": str(session.workspace.path),
            "memories": [m.to_dict() for m in session.memories],
        }

    def work(self, session: Session) -> None:
        with tempfile.TemporaryDirectory(prefix="memstore-agent-") as tmp:
            task_file, result_file = Path(tmp) / "task.json", Path(tmp) / "result.json"
            task_file.write_text(json.dumps(self._task_document(session), indent=2))
            env = {**os.environ, "MEMSTORE_TASK": str(task_file), "MEMSTORE_RESULT": str(result_file)}
            try:
                done = subprocess.run(
                    self.command,
                    cwd=session.workspace.path,
                    env=env,
                    capture_output=True,
                    timeout=self.timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                session.record("agent_error", "", f"timed out after {self.timeout:.0f} s")
                return
            except OSError as exc:
                session.record("agent_error", "", f"cannot run {self.command[0]}: {exc}")
                return
            if done.returncode != 0:
                session.record("agent_error", "", f"exit status {done.returncode}: {done.stderr.decode()[-300:]}")
            try:
                result = json.loads(result_file.read_text())
            except (OSError, ValueError) as exc:
                session.record("agent_error", "", f"no readable result: {exc}")
                return
        self._apply(session, result if isinstance(result, dict) else {})

    def _apply(self, session: Session, result: dict[str, Any]) -> None:
        tools = session.tools
        handed: dict[str, Memory] = {m.id: m for m in session.memories}
        for op in result.get("memory_ops", []):
            kind, memory = op.get("op"), handed.get(str(op.get("id", "")))
            if kind == "store":
                tools.store_memory(
                    str(op.get("subject", "")),
                    str(op.get("fact", "")),
                    list(op.get("citations", [])),
                    str(op.get("reason", "")),
                    supersedes=op.get("supersedes"),
                )
            elif memory is None:
                session.record("agent_error", str(op.get("id", "")), f"{kind}: not a memory it was given")
            elif kind == "use":
                tools.use(memory)
            elif kind == "refuse":
                tools.refuse(memory, str(op.get("reason", "")))
            elif kind == "refresh":
                tools.refresh(memory)
            elif kind == "retire":
                tools.retire(memory, str(op.get("reason", "")))
            else:
                session.record("agent_error", memory.id, f"unknown memory op {kind!r}")
        for finding in result.get("findings", []):
            if isinstance(finding, dict) and "path" in finding:
                tools.flag(str(finding["path"]), str(finding.get("note", "")))
        if "answer" in result:
            tools.give_answer(str(result["answer"]))
