"""The agent boundary: what an agent is handed for a session, in process or out.

An agent gets an `AgentSession`: the task as a real agent would see it (`TaskView`: its
surface, prompt, intent, question, pull request, repository, user and working copy), the
memories the store returned for it, its `Tools`, and its `Limits`. That is all. Nothing
reachable from an `AgentSession` leads to the world, the scenario, its template, the memories'
truth labels or any grading data (the expected change, findings, answer, merge check): those
stay with the harness, which reads them after the session. The tools reach the working copy,
the repository's code and the store through a gateway that holds only those.

Out-of-process agents get the same things as files (`memstore.harness.run.boundary.command`), and the
same tools through the MCP server.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memstore.errors import MemstoreError
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.gateway import Event, Gateway, Recall, Usage, citation, compile_pattern
from memstore.harness.run.boundary.mcp_bridge import WRITES, logged_ids, read_events, replay_kind, snapshot, unexplained
from memstore.harness.scenarios import Intent
from memstore.model import Citation, Kind, Memory, MemoryDraft, Surface
from memstore.verify import Verdict, anchor, text_lines, verify_memory

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["AgentSession", "Event", "Gateway", "Hit", "Limits", "PullRequest", "TaskView", "Tools", "Usage"]

TRANSCRIPT_CAP = 8 * 1024 * 1024  # bytes of one transcript file kept (the end)
MAX_HITS = 200  # search results returned at most, like a terminal's first screens of grep


@dataclass(frozen=True)
class PullRequest:
    """A pull request under review, as a reviewer sees it."""

    title: str
    description: str
    branch: str
    base: str
    changed_files: tuple[str, ...]
    diff: str  # unified diff of the branch against its merge base with ``base``


@dataclass(frozen=True)
class TaskView:
    """A task as an agent sees it: what a real agent on that surface is given, nothing more."""

    key: str
    surface: Surface
    repo: str
    user: str
    prompt: str
    intent: Intent | None
    question: str
    pull_request: PullRequest | None
    workdir: str

    def words(self) -> str:
        """The task's words: what an agent searches memory and code with."""
        parts = [self.prompt, self.question]
        if self.intent is not None:
            parts += [self.intent.describe()]
        if self.pull_request is not None:
            parts += [self.pull_request.title, self.pull_request.description]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Limits:
    """What the harness allows a session: seconds of wall time."""

    seconds: float


@dataclass(frozen=True)
class Hit:
    """A line of the working copy that a search matched (as ``grep -n`` prints it)."""

    path: str
    line: int
    text: str


class Tools:
    """What an agent may do in a session.

    Read and search the working copy; edit it (coding tasks); verify memories, store them
    (each citation's text and commit recorded, as the seeds' ``store_memory`` tool does),
    correct, refresh and retire them; and report the outcome: findings (review) or an answer
    (CLI). Refusals of the store (no write access, bad input) are ``denied`` events, not errors.
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    # -- the code ---------------------------------------------------------------------

    def files(self, pattern: str = "") -> list[str]:
        """Paths of the working copy (``.git`` aside), those matching ``pattern`` (a case-insensitive
        regular expression searched in the path) when one is given; a search, as ``git ls-files | grep``."""
        g = self._gateway
        if pattern:
            g.searches += 1
        compiled = compile_pattern(pattern) if pattern else None
        return [p for p in g.files() if compiled is None or compiled.search(p)]

    def search(self, pattern: str, *, literal: bool = False) -> list[Hit]:
        """Lines of the working copy that match ``pattern`` (a case-insensitive regular expression,
        or a plain string with ``literal=True``), at most `MAX_HITS` of them, in path order."""
        g = self._gateway
        g.searches += 1
        compiled = compile_pattern(re.escape(pattern) if literal else pattern)
        hits: list[Hit] = []
        for path in g.files():
            text = g.text(path)
            if text is None or "\x00" in text[:8000]:
                continue
            for number, line in enumerate(text_lines(text, path), 1):
                if compiled.search(line):
                    hits.append(Hit(path, number, line))
                    if len(hits) >= MAX_HITS:
                        return hits
        return hits

    def read(self, path: str) -> str | None:
        """A file of the working copy, or None."""
        g = self._gateway
        if path not in g._read:
            g._read.add(path)
            g.reads += 1
        return g.text(path)

    def lines(self, path: str) -> list[str] | None:
        """A file's lines (without line ends), counted as its language's tools count them
        (`memstore.verify.filetext`: the verifier's count), or None."""
        text = self.read(path)
        return None if text is None else list(text_lines(text, path))

    # -- edits (coding tasks) --------------------------------------------------------------

    def replace_line(self, path: str, line: int, text: str) -> bool:
        """Put ``text`` in place of line ``line`` (1-based) of ``path``; False if there is no such line."""
        lines = self.lines(path)
        if lines is None or not 1 <= line <= len(lines):
            self._gateway.record(EventKind.EDIT, "", f"{path}:{line} (no such line)")
            return False
        lines[line - 1] = text
        return self._write(path, lines, f"{path}:{line}")

    def insert_lines(self, path: str, before: int, texts: list[str]) -> bool:
        """Insert ``texts`` before line ``before`` (1-based; one past the end appends)."""
        lines = self.lines(path)
        if lines is None or not 1 <= before <= len(lines) + 1:
            self._gateway.record(EventKind.EDIT, "", f"{path}:{before} (no such place)")
            return False
        lines[before - 1 : before - 1] = texts
        return self._write(path, lines, f"{path}:{before}+{len(texts)}")

    def write(self, path: str, text: str) -> bool:
        """Write a whole file of the working copy (never outside it, never into ``.git``)."""
        g = self._gateway
        done = g.workspace.write(path, text)
        g.wrote(path)
        g.record(EventKind.EDIT, "", path if done else f"{path} (refused)")
        return done

    def _write(self, path: str, lines: list[str], where: str) -> bool:
        g = self._gateway
        original = g.text(path) or ""
        ending = "\n" if original.endswith("\n") or not original else ""
        done = g.workspace.write(path, "\n".join(lines) + ending)
        g.wrote(path)
        g.record(EventKind.EDIT, "", where if done else f"{where} (refused)")
        return done

    # -- memories ---------------------------------------------------------------------------

    def verify(self, memory: Memory) -> Verdict:
        """Check a memory against the code now (just-in-time verification, on ``main``)."""
        g = self._gateway
        codebase = g.codebase()
        kept = g.verdicts if g.verifier is None and codebase.commit is not None else None
        key = (memory, codebase.commit or "")
        verdict = kept.get(key) if kept is not None else None
        if verdict is None:
            verdict = verify_memory(memory, codebase, verifier=g.verifier)
            if kept is not None:
                kept[key] = verdict
        g.verify_reads += len(memory.citations)
        g.record(EventKind.VERDICT, memory.id, verdict.summary())  # "valid", or "valid flagged:override,..."
        return verdict

    def use(self, memory: Memory) -> None:
        """Say that the agent relies on ``memory`` (its own account; scoring reads actions)."""
        self._gateway.record(EventKind.USE, memory.id)

    def refuse(self, memory: Memory, why: str) -> None:
        """Say that the agent will not use ``memory``."""
        self._gateway.record(EventKind.REFUSE, memory.id, why)

    def store_memory(
        self,
        subject: str,
        fact: str,
        citations: list[str | Citation],
        reason: str = "",
        *,
        kind: Kind = Kind.FACT,
        supersedes: str | None = None,
        anchored: bool = False,
    ) -> Memory | None:
        """Store a memory (or a correction), recording each citation's text and commit now, from
        the working copy as it stands. None when the store refuses (the refusal is an event)."""
        g = self._gateway
        try:
            cited = [citation(c, i) for i, c in enumerate(citations)]
            if not anchored:
                codebase = g.working_tree()
                cited = [anchor(codebase, c) for c in cited]
            return self.store_draft(MemoryDraft(g.repo, kind, subject, fact, cited, reason), supersedes=supersedes)
        except MemstoreError as exc:
            g.record(EventKind.DENIED, supersedes or "", f"store: {exc}")
            return None

    def store_draft(self, draft: MemoryDraft, *, supersedes: str | None = None) -> Memory | None:
        """Store a prepared draft (a verifier's correction, say); None when the store refuses."""
        g = self._gateway
        try:
            made = g.store.store(draft, actor=g.actor, surface=g.surface, supersedes=supersedes)
        except MemstoreError as exc:
            g.record(EventKind.DENIED, supersedes or "", f"{'correct' if supersedes else 'store'}: {exc}")
            return None
        g.written[made.id] = draft
        g.record(EventKind.CORRECT if supersedes else EventKind.STORE, made.id, supersedes or "")
        return made

    def refresh(self, memory: Memory) -> None:
        """Mark ``memory`` validated and used: its expiry window starts again."""
        g = self._gateway
        try:
            g.store.refresh(memory.id, actor=g.actor)
            g.record(EventKind.REFRESH, memory.id)
        except MemstoreError as exc:
            g.record(EventKind.DENIED, memory.id, f"refresh: {exc}")

    def vote(self, memory: Memory, *, up: bool, reason: str) -> None:
        """Vote on ``memory`` (up: it held and helped; down: it misled) where the store keeps votes
        that count (it declares ``votes``: `memstore.backends.searching`); elsewhere nothing."""
        g = self._gateway
        if "votes" not in getattr(g.store, "capabilities", ()) or not callable(getattr(g.store, "vote", None)):
            return
        try:
            g.store.vote(memory.id, actor=g.actor, up=up, reason=reason)  # type: ignore[attr-defined]
            g.record(EventKind.VOTE, memory.id, f"{'up' if up else 'down'}: {reason}")
        except MemstoreError as exc:
            g.record(EventKind.DENIED, memory.id, f"vote: {exc}")

    def retire(self, memory: Memory, reason: str) -> None:
        """Take ``memory`` out of use."""
        g = self._gateway
        try:
            g.store.retire(memory.id, actor=g.actor, reason=reason)
            g.record(EventKind.RETIRE, memory.id, reason)
        except MemstoreError as exc:
            g.record(EventKind.DENIED, memory.id, f"retire: {exc}")

    # -- outcomes ---------------------------------------------------------------------------

    def flag(self, path: str, note: str = "") -> None:
        """Report a review finding at ``path`` (once per path)."""
        g = self._gateway
        if path not in {p for p, _ in g.findings}:
            g.findings.append((path, note))
            g.record(EventKind.FINDING, "", path)

    def give_answer(self, text: str) -> None:
        """Answer the CLI task's question (the last answer given counts)."""
        g = self._gateway
        g.answer = text
        g.record(EventKind.ANSWER, "", text[:300])

    # -- for adapters of out-of-process agents ------------------------------------------------

    def record(self, kind: EventKind, memory_id: str = "", detail: str = "") -> None:
        """Record an event the harness should know of (``agent_error``, say)."""
        self._gateway.record(kind, memory_id, detail)

    def report_usage(self, usage: Usage) -> None:
        """Add what the session spent on a model (tokens, cost); summed per arm in the results."""
        g = self._gateway
        g.usage = usage if g.usage is None else g.usage + usage

    def infrastructure_error(self, detail: str) -> None:
        """The session failed for a reason that is not the agent's work (a timeout, a model endpoint
        that failed): an ``infra_error`` event. The session counts as not run, not as a failed task."""
        self._gateway.record(EventKind.INFRA_ERROR, "", detail[:500])

    def keep(self, name: str, data: bytes | str) -> str | None:
        """Keep a file of this session's transcript (its output, the agent's own log) in the run
        folder, at most `TRANSCRIPT_CAP` bytes of it (the end); where it went, or None when the
        run keeps no transcripts."""
        g = self._gateway
        if g.transcript is None:
            return None
        raw = data.encode("utf-8", errors="replace") if isinstance(data, str) else data
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:100].lstrip(".") or "file"
        g.transcript.mkdir(parents=True, exist_ok=True)
        target = g.transcript / safe
        partial = target.with_name(f".{safe}.part")
        partial.write_bytes(raw[-TRANSCRIPT_CAP:])
        partial.replace(target)
        g.kept.append(safe)
        return str(target)

    @contextmanager
    def guarded(self, mcp_events: Path | None = None) -> Iterator[None]:
        """While an out-of-process agent runs: its store's files must not change; if they do,
        a ``tampered`` event says so. With ``mcp_events`` (the log of the MCP server it was
        handed), a change is allowed where the log accounts for it, memory by memory."""
        g = self._gateway
        mark = g.guard.mark()
        before = snapshot(g.store, g.repo, g.users) if mcp_events is not None else {}
        try:
            yield
        finally:
            logged = read_events(mcp_events) if mcp_events is not None else []
            if not any(e.kind in WRITES for e in logged):  # nothing written through a server: no file may change
                g.guard.check(mark, g)
            elif g.guard.mark() != mark:
                after = snapshot(g.store, g.repo, g.users, before.keys() | logged_ids(logged))
                changed = unexplained(before, after, logged)
                if changed:
                    g.record(
                        EventKind.TAMPERED, "", f"memories changed outside the MCP server: {', '.join(changed[:5])}"
                    )

    # -- memory over MCP ------------------------------------------------------------------------

    def mcp_command(self, events_file: Path) -> list[str] | None:
        """The command line of this session's ``memstore mcp`` server, logging its operations to
        ``events_file``; None when the trial's store cannot be shared with a server process (a
        store in memory)."""
        launch = self._gateway.mcp
        if launch is None:
            return None
        server = launch.config(events_file)["mcpServers"]["memstore"]
        return [server["command"], *server["args"]]

    def mcp_server(self) -> MCPServer:
        """This session's memory as an MCP server to connect to in process (``mcp.Client(server)``);
        what is done through it is recorded like what is done through these tools."""
        from memstore.mcp import MemoryService, build_server

        g = self._gateway
        service = MemoryService(g.store, g.actor, g.surface, g.repo, g.codebase(), g.working_tree(), self._logged)
        return build_server(service)

    def replay(self, events_file: Path) -> None:
        """Record what an agent did through its MCP server (the server's events file)."""
        for entry in read_events(events_file):
            self._logged(entry.kind, entry.memory_id, entry.detail, entry.memories)

    def _logged(self, kind: str, memory_id: str, detail: str, memories: Sequence[Memory]) -> None:
        g = self._gateway
        if kind == "recall":
            g.recalled.append(Recall(len(g.events), tuple(memories)))
            for memory in memories:
                g.record(EventKind.RETRIEVE, memory.id, f"mcp {detail}")
            return
        recorded = replay_kind(kind)
        if recorded is not None:
            g.record(recorded, memory_id, detail)


@dataclass(frozen=True)
class AgentSession:
    """What an agent is handed for one session (see the module docstring)."""

    task: TaskView
    memories: tuple[Memory, ...]
    tools: Tools
    limits: Limits
    seed: str

    def rng(self, purpose: str) -> random.Random:
        """A random stream for one purpose, the same in every arm (so the arms' outcomes pair up)."""
        return random.Random(f"{self.seed}|{purpose}")
