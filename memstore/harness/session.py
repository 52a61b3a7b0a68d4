"""Sessions: one agent, one task, one surface; the tools it works with and the events it leaves.

A session hands the agent its task, the memories the store gives for its surface, and its
tools: read and search the code, verify a memory, store (with each citation's text and
commit recorded, as the seeds' ``store_memory`` tool does), refresh, retire, and the
outcome for its surface (an edit, a review finding, an answer). Every retrieval, verdict,
use, correction, refresh and expiry is an `Event`. Truth labels are not here: the metrics
read them, agents never do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from memstore.access import Actor
from memstore.errors import MemstoreError, PermissionDenied, ValidationError
from memstore.harness.guard import StoreGuard
from memstore.harness.scenario import Task
from memstore.harness.world import World
from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify import GitCodebase, Verdict, Verifier, anchor, verify_memory
from memstore.verify.workspace import Workspace

__all__ = ["Event", "Session", "Tools"]


@dataclass(frozen=True)
class Event:
    """Something that happened in a session.

    ``kind`` is one of: retrieve, verdict, use, refuse, reanchor, store, correct, refresh,
    retire, denied, edit, finding, answer, merge, agent_error, expired, leak, expiry_violation,
    tampered.
    """

    kind: str
    memory_id: str = ""
    detail: str = ""


@dataclass
class Session:
    """One agent's work on one task in one world."""

    world: World
    task: Task
    workspace: Workspace
    memories: list[Memory]
    seed: str
    verifier: Verifier | None = None
    events: list[Event] = field(default_factory=list)
    edits: list[tuple[str, str, str]] = field(default_factory=list)
    findings: list[tuple[str, str]] = field(default_factory=list)
    answer: str | None = None
    verify_reads: int = 0
    learned: dict[str, str] = field(default_factory=dict)  # id of each memory learned -> its scenario key
    guard: StoreGuard = field(default_factory=StoreGuard)  # notices the store's files changed behind its back
    _codebase: GitCodebase | None = None
    _changed: list[str] | None = None

    def rng(self, purpose: str) -> random.Random:
        """A random stream for one purpose, the same in every arm (common random numbers pair the arms)."""
        return random.Random(f"{self.seed}|{purpose}")

    @property
    def actor(self) -> Actor:
        return Actor(self.task.user)

    @property
    def repo(self) -> str:
        return self.world.scenario.repo

    def record(self, kind: str, memory_id: str = "", detail: str = "") -> None:
        self.events.append(Event(kind, memory_id, detail))

    def codebase(self) -> GitCodebase:
        """The code memories are verified against: ``main`` as it is now. A review verifies on the
        base, not the pull request: unmerged code must not rewrite what the repository remembers."""
        if self._codebase is None:
            self._codebase = GitCodebase(self.workspace.repo, self.workspace.head("main"))
        return self._codebase

    @property
    def tools(self) -> Tools:
        return Tools(self)


def _citation(value: str | Citation, index: int) -> Citation:
    """A citation the agent gave, parsed; a bad one named by its place in the list."""
    if isinstance(value, Citation):
        return value
    try:
        return Citation.parse(value)
    except ValidationError as exc:
        raise ValidationError(f"citations[{index}]", str(exc)) from exc


class Tools:
    """What an agent may do in a session."""

    def __init__(self, session: Session) -> None:
        self.s = session

    # -- the code -----------------------------------------------------------------

    def read(self, path: str) -> str | None:
        """A file of the code the session works on."""
        found = self.s.codebase().read(path)
        return "\n".join(found.lines) if found.ok else None

    def line(self, path: str, line: int) -> str | None:
        """One line of the code, or None."""
        found = self.s.codebase().read(path)
        return found.lines[line - 1] if found.ok and 1 <= line <= len(found.lines) else None

    def search(self, text: str) -> list[str]:
        """Paths whose content holds ``text``."""
        codebase = self.s.codebase()
        return [p for p in codebase.paths() if (r := codebase.read(p)).ok and any(text in x for x in r.lines)]

    def changed_files(self) -> list[str]:
        """The files the task's pull request changes (review tasks)."""
        if self.s.task.pull_request is None:
            return []
        if self.s._changed is None:  # one git diff per session, however many memories ask
            branch, base = self.s.task.pull_request
            self.s._changed = self.s.workspace.changed(base, branch)
        return list(self.s._changed)

    # -- memories -------------------------------------------------------------------

    def verify(self, memory: Memory) -> Verdict:
        """Check a memory against the code now (just-in-time verification)."""
        verdict = verify_memory(memory, self.s.codebase(), verifier=self.s.verifier)
        self.s.verify_reads += len(memory.citations)
        self.s.record("verdict", memory.id, verdict.status.value)
        return verdict

    def use(self, memory: Memory) -> None:
        """Record that the agent relies on ``memory`` for its work."""
        self.s.record("use", memory.id)

    def refuse(self, memory: Memory, why: str) -> None:
        """Record that the agent will not use ``memory``."""
        self.s.record("refuse", memory.id, why)

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
        """Store a memory (or a correction), recording each citation's text and commit now.

        Returns None when the store refuses (no write access, bad input); the refusal is an event.
        """
        try:
            cited = [_citation(c, i) for i, c in enumerate(citations)]
            if not anchored:
                cited = [anchor(self.s.codebase(), c) for c in cited]
            draft = MemoryDraft(self.s.repo, kind, subject, fact, cited, reason)
            return self.store_draft(draft, supersedes=supersedes)
        except MemstoreError as exc:
            self.s.record("denied", supersedes or "", f"store: {exc}")
            return None

    def store_draft(self, draft: MemoryDraft, *, supersedes: str | None = None) -> Memory | None:
        """Store a prepared draft (a verifier's correction, say); None when the store refuses."""
        surface = self.s.task.surface
        try:
            made = self.s.world.store.store(draft, actor=self.s.actor, surface=surface, supersedes=supersedes)
        except MemstoreError as exc:
            self.s.record("denied", supersedes or "", f"{'correct' if supersedes else 'store'}: {exc}")
            return None
        self.s.record("correct" if supersedes else "store", made.id, supersedes or "")
        return made

    def refresh(self, memory: Memory) -> None:
        """Mark ``memory`` validated and used: its expiry window starts again."""
        try:
            self.s.world.store.refresh(memory.id, actor=self.s.actor)
            self.s.record("refresh", memory.id)
        except MemstoreError as exc:
            self.s.record("denied", memory.id, f"refresh: {exc}")

    def retire(self, memory: Memory, reason: str) -> None:
        """Take ``memory`` out of use."""
        try:
            self.s.world.store.retire(memory.id, actor=self.s.actor, reason=reason)
            self.s.record("retire", memory.id, reason)
        except (PermissionDenied, MemstoreError) as exc:
            self.s.record("denied", memory.id, f"retire: {exc}")

    # -- outcomes -----------------------------------------------------------------------

    def edit(self, path: str, old: str, new: str) -> bool:
        """Replace ``old`` with ``new`` in ``path`` of the task branch (coding tasks)."""
        done = self.s.workspace.replace(path, old, new)
        self.s.edits.append((path, old, new))
        self.s.record("edit", "", f"{path}{'' if done else ' (no match)'}")
        return done

    def flag(self, path: str, note: str = "") -> None:
        """Report a review finding at ``path``."""
        if path not in {p for p, _ in self.s.findings}:
            self.s.findings.append((path, note))
            self.s.record("finding", "", path)

    def give_answer(self, text: str) -> None:
        """Answer the CLI task's question."""
        self.s.answer = text
        self.s.record("answer", "", text)
