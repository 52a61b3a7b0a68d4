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

The command runs under `memstore.harness.run.isolation.process.run_bounded`: every process it started is
killed at the timeout and when it exits, its output is capped, no file it writes may pass the
session's write budget (`memstore.harness.run.isolation.writes`), and the result is read only if it is a
regular file of bounded size. A command that fails, times out, or writes a result that does
not match the schema fails its own session (an ``agent_error`` event, with the reason) and
nothing of the result is applied; the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from memstore.errors import ConfigurationError
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.session import AgentSession, Usage
from memstore.harness.run.boundary.task_contract import relay_config, task_document, validate_result
from memstore.harness.run.isolation.process import Finished, read_bounded, run_bounded
from memstore.harness.run.isolation.sandbox import (
    DEFAULT_TIMEOUT,
    INSIDE_RELAY,
    INSIDE_REPO,
    INSIDE_SESSION,
    AgentRuntime,
    Relay,
    agent_environment,
    hidden_folder,
    resolve_mode,
    wrap,
)
from memstore.harness.run.isolation.scratch import scratch
from memstore.harness.run.isolation.writes import MAX_FILE_BYTES
from memstore.model import Kind, Memory

__all__ = ["DEFAULT_TIMEOUT", "CommandAgent", "validate_result"]


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


def _check_visible(command: str, program: str) -> None:
    """Refuse, before the run, a program the sandbox would hide what it runs on: a script (a
    pyenv or asdf shim, say) or a Python interpreter that lies in a home folder, whose helpers
    or library are not there to read inside (every session would fail, exit status 127)."""
    hidden = hidden_folder(Path(program))
    if hidden is None:
        return
    try:
        with open(program, "rb") as handle:
            script = handle.read(2) == b"#!"
    except OSError:
        script = False
    if not (script or Path(program).name.startswith("python") or Path(program).resolve().name.startswith("python")):
        return  # a program of its own is exposed to the sandbox, file by file
    raise ConfigurationError(
        f"the agent {command!r} runs {program}, in {hidden}, which the sandbox hides (home folders are not "
        f"there to read), so what it runs is missing inside: use an interpreter outside it (such as "
        f"{_outside_python()}), a virtual environment's python made from one, this run's own Python "
        f"({sys.executable}), or --agent-sandbox off"
    )


def _outside_python() -> str:
    """A Python on PATH that the sandbox does not hide, to suggest."""
    for name in ("python3", "python"):
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            found = Path(folder) / name
            if folder and found.is_file() and os.access(found, os.X_OK) and hidden_folder(found) is None:
                return str(found)
    return "/usr/bin/python3"


class CommandAgent:
    """Runs ``command`` (a shell-style string) once per session.

    Args:
        command: the command line, e.g. ``"python my_agent.py --model x"``.
        runtime: how it is run: timeout, sandbox, network, environment, transcripts.

    Raises:
        ConfigurationError: for an empty command, unbalanced quotes, a program that cannot be
            found, or a sandbox asked for that this machine cannot give.
    """

    uses_memory = True

    def __init__(self, command: str, runtime: AgentRuntime | None = None) -> None:
        self.runtime = runtime or AgentRuntime()
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigurationError(f"cannot read the agent command {command!r}: {exc}") from exc
        if not argv:
            raise ConfigurationError("'command:' needs a command line, such as 'command:python3 my_agent.py'")
        if not self.runtime.timeout > 0:
            raise ConfigurationError(f"the agent timeout must be positive seconds, got {self.runtime.timeout}")
        self.argv = _resolve(argv, self.runtime.base_dir)
        self.sandboxed, self.how = resolve_mode(self.runtime.sandbox)
        if self.sandboxed:
            _check_visible(command, self.argv[0])
        self.name = f"command:{command}"

    def work(self, session: AgentSession) -> None:
        tools = session.tools
        with contextlib.ExitStack() as stack:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=scratch("run"), prefix="agent-")))
            workdir = Path(session.task.workdir)
            # The server's log is the harness's record of what the agent did: never in a folder the
            # agent can write (a symlink there would aim the server's appends at any file; a line
            # written there would be replayed as the agent's own operation). Hidden in the sandbox.
            private = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=scratch("run"), prefix="mcp-log-")))
            events = private / "events.jsonl"
            events.touch(mode=0o600)
            launch = tools.mcp_command(events)
            relay = None if launch is None else stack.enter_context(Relay(launch).running())
            env = self._prepare(session, folder, relay)
            argv = self.argv
            if self.sandboxed:
                relay_dir = relay.path.parent if relay is not None else None
                argv = wrap(
                    argv, workdir=workdir, session_dir=folder, relay_dir=relay_dir, runtime=self.runtime, env=env
                )
            try:
                with tools.guarded(events if launch is not None else None):
                    finished = run_bounded(
                        argv, cwd=workdir, env=env, timeout=self.runtime.timeout, max_file_bytes=MAX_FILE_BYTES
                    )
            except OSError as exc:
                tools.infrastructure_error(f"cannot run {self.argv[0]}: {exc}")
                return
            finally:
                if relay is not None:
                    relay.close()  # its servers end with their input, having logged what they did
                    tools.replay(events)  # what the agent did through the server: recorded now
            result = self._conclude(session, folder, workdir, finished)
        if result is not None:
            self._apply(session, result)

    def _prepare(self, session: AgentSession, folder: Path, relay: Relay | None) -> dict[str, str]:
        """Write the task file into the session folder; the agent's environment."""
        inside = Path(INSIDE_SESSION) if self.sandboxed else folder
        workdir = INSIDE_REPO if self.sandboxed else session.task.workdir
        mcp = None
        if relay is not None:
            mcp = relay_config(Path(INSIDE_RELAY) / relay.path.name if self.sandboxed else relay.path)
        document = {**task_document(session, workdir), "mcp": mcp}
        (folder / "task.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        (folder / "home").mkdir()
        return agent_environment(
            self.runtime.env,
            {
                "MEMSTORE_TASK": str(inside / "task.json"),
                "MEMSTORE_RESULT": str(inside / "result.json"),
                "MEMSTORE_SESSION_DIR": str(inside),
                "MEMSTORE_WORKDIR": workdir,
                "HOME": "/memstore/home" if self.sandboxed else str(folder / "home"),
                "TMPDIR": "/memstore/tmp" if self.sandboxed else str(folder / "home"),
            },
        )

    def _conclude(
        self, session: AgentSession, folder: Path, workdir: Path, finished: Finished
    ) -> dict[str, Any] | None:
        """Keep the transcript; record how the session ended; the result to apply, if any."""
        tools = session.tools
        tools.keep("stdout.txt", finished.stdout)
        tools.keep("stderr.txt", finished.stderr)
        result = None
        if finished.timed_out:
            tools.infrastructure_error(f"timed out after {self.runtime.timeout:g} s")
        else:
            failed = finished.returncode != 0
            if failed:
                tools.record(EventKind.AGENT_ERROR, "", f"exit status {finished.returncode}: {finished.stderr_tail()}")
            if not failed or (folder / "result.json").exists():  # a failed exit is the cause, once
                result = self._read(session, folder / "result.json")
        trajectory = None
        if result is not None:
            if "usage" in result:
                tools.report_usage(Usage(**result["usage"]))
            if result.get("trajectory"):
                trajectory = self._keep_trajectory(session, result["trajectory"], folder, workdir)
            error = result.get("error")
            if error is not None and error["kind"] == "infrastructure":
                tools.infrastructure_error(f"the agent reports: {error.get('message', '')}")
            elif error is not None:
                tools.record(EventKind.AGENT_ERROR, "", f"the agent reports: {error.get('message', '')[:300]}")
        tools.keep(
            "session.json",
            json.dumps(
                {
                    "command": self.argv,
                    "sandbox": self.how,
                    "exit_status": finished.returncode,
                    "timed_out": finished.timed_out,
                    "seconds": round(finished.seconds, 3),
                    "stdout_bytes": finished.stdout_bytes,
                    "stderr_bytes": finished.stderr_bytes,
                    "trajectory": trajectory,
                    "usage": result.get("usage") if result else None,
                },
                indent=2,
            ),
        )
        return result

    def _keep_trajectory(self, session: AgentSession, given: str, folder: Path, workdir: Path) -> str | None:
        """Copy the agent's own log into the transcript: a file of its session folder or its
        working copy, named as the agent saw it (absolute, or relative to the working copy)."""
        seen = {
            Path(INSIDE_SESSION) if self.sandboxed else folder: folder,
            Path(INSIDE_REPO) if self.sandboxed else workdir: workdir,
        }
        path, real = Path(given), None
        if not path.is_absolute():
            real = workdir / path
        for seen_as, root in seen.items():
            if path.is_absolute() and path.is_relative_to(seen_as):
                real = root / path.relative_to(seen_as)
        if real is None or not any(real.resolve().is_relative_to(r.resolve()) for r in seen.values()):
            session.tools.record(EventKind.AGENT_ERROR, "", f"trajectory {given[:200]!r}: not in its folders")
            return None
        try:
            data = read_bounded(real.resolve())
        except OSError as exc:
            session.tools.record(EventKind.AGENT_ERROR, "", f"trajectory {given[:200]!r}: {exc}")
            return None
        # trajectory.json is the session's ATIF document (`memstore.harness.run.play.atif`): a JSON log goes beside it
        name = "agent-trajectory.json" if real.suffix == ".json" else f"trajectory{real.suffix or '.log'}"
        session.tools.keep(name, data)
        return name

    @staticmethod
    def _read(session: AgentSession, path: Path) -> dict[str, Any] | None:
        """The validated result, or None (with the reason recorded) when there is none to apply."""
        try:
            data = json.loads(read_bounded(path))
        except FileNotFoundError:
            session.tools.record(EventKind.AGENT_ERROR, "", "no result: the agent wrote no MEMSTORE_RESULT file")
            return None
        except OSError as exc:  # the reason, not the session's own path: one line per cause in the summary
            session.tools.record(EventKind.AGENT_ERROR, "", f"no readable result: {exc.strerror or exc}")
            return None
        except (ValueError, RecursionError) as exc:
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


def command_agent(command: str, runtime: AgentRuntime | None) -> CommandAgent:
    """The ``command:`` agent scheme's factory (`memstore.harness.run.boundary.agents.AGENT_SCHEMES`)."""
    return CommandAgent(command, runtime)
