"""What an agent's tools reach, and nothing more: the gateway between an agent and its trial.

The `Gateway` holds the working copy, the store (for the acting user, repository and
surface), where memories are verified, the event log and the session's counts; the
`memstore.harness.run.boundary.session.Tools` an agent is handed hold only a gateway.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from memstore.access import Actor
from memstore.errors import ValidationError
from memstore.harness.records import EventKind
from memstore.harness.run.boundary.mcp_bridge import McpLaunch
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.model import Citation, Memory, MemoryDraft, Surface
from memstore.store import MemoryStore
from memstore.verify import Codebase, GitCodebase, Verdict, Verifier, WorkingTree, Workspace

__all__ = ["Event", "Gateway", "Recall", "Usage", "citation", "compile_pattern", "tree"]


@dataclass(frozen=True)
class Event:
    """Something that happened in a session (recorded by the tools, read by the harness)."""

    kind: EventKind
    memory_id: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Recall:
    """What one recall through MCP returned, and where it fell among the session's events.

    ``at`` counts the events recorded before it: the audit checks a recall against the store as
    the session had left it then, its own earlier writes included.
    """

    at: int
    memories: tuple[Memory, ...]


@dataclass(frozen=True)
class Usage:
    """What a session spent on a model, as the agent reports it (summed per arm in the results)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_tokens + other.cache_tokens,
            self.cost_usd + other.cost_usd,
            self.model if self.model == other.model or not other.model else (self.model or other.model),
        )


@dataclass
class Gateway:
    """Everything the tools reach, and nothing more: the working copy, the code memories are
    verified on, the store (for the acting user, repository and surface), the event log."""

    workspace: Workspace
    store: MemoryStore
    actor: Actor
    surface: Surface
    repo: str
    verifier: Verifier | None
    guard: StoreGuard
    events: list[Event] = field(default_factory=list)
    searches: int = 0  # what the session looked up (`memstore.harness.records.Lookups`)
    reads: int = 0
    verify_reads: int = 0
    findings: list[tuple[str, str]] = field(default_factory=list)
    answer: str | None = None
    mcp: McpLaunch | None = None  # how to start this session's MCP server (file stores only)
    users: tuple[str, ...] = ()  # the trial's users (whose views of the store the guard compares)
    recalled: list[Recall] = field(default_factory=list)  # each recall an agent made through MCP
    usage: Usage | None = None  # what the session spent on a model, as the agent reported it
    transcript: Path | None = None  # where the session's transcript files go (None: not kept)
    kept: list[str] = field(default_factory=list)  # transcript files written, relative to the run folder
    written: dict[str, MemoryDraft] = field(default_factory=dict)  # memory id -> the draft it was stored from
    # The trial's verdicts of the reference verifier by (memory, commit of main): a commit's code
    # never changes and a trial's repository only gains commits, so a verdict holds while both do.
    verdicts: dict[tuple[Memory, str], Verdict] | None = None
    _codebase: GitCodebase | None = None
    _read: set[str] = field(default_factory=set)
    _texts: dict[str, str | None] = field(default_factory=dict)  # the session's reads, until the tools write
    _tree: list[str] | None = None
    _working: WorkingTree | None = None

    def text(self, path: str) -> str | None:
        """A file of the working copy as the session's tools last saw it (read once; every write
        through the tools forgets what it changed: nothing else writes during a tools session)."""
        if path not in self._texts:
            self._texts[path] = self.workspace.read(path)
        return self._texts[path]

    def files(self) -> list[str]:
        """`tree` of the working copy, listed once until the tools write."""
        if self._tree is None:
            self._tree = tree(self.workspace.path)
        return self._tree

    def wrote(self, path: str) -> None:
        """The tools wrote ``path``: what was read of it, and the listing, are out of date."""
        self._texts.pop(path, None)
        self._tree = None
        self._working = None

    def record(self, kind: EventKind, memory_id: str = "", detail: str = "") -> None:
        self.events.append(Event(EventKind(kind), memory_id, detail))

    def codebase(self) -> GitCodebase:
        """``main`` as it is now: memories are verified on the base, never on unmerged work."""
        if self._codebase is None:
            self._codebase = GitCodebase(self.workspace.repo, self.workspace.head("main"))
        return self._codebase

    def working_tree(self) -> Codebase:
        """The working copy as the agent left it (what a memory stored now cites): one until the
        tools write, as `text` is (whether it is clean is a ``git status`` when it is made)."""
        if self._working is None:
            self._working = WorkingTree(self.workspace.path, history=self.codebase())
        return self._working


def citation(value: str | Citation, index: int) -> Citation:
    """A citation the agent gave, parsed; a bad one named by its place in the list."""
    if isinstance(value, Citation):
        return value
    try:
        return Citation.parse(value)
    except ValidationError as exc:
        raise ValidationError(f"citations[{index}]", str(exc)) from exc


def compile_pattern(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern[:1000], re.IGNORECASE)
    except re.error:
        return re.compile(re.escape(pattern[:1000]), re.IGNORECASE)


def tree(root: Path) -> list[str]:
    """Every regular file of a working copy by repository-relative path, sorted as paths (by
    their parts), ``.git`` aside and never entered; links are neither listed nor followed."""
    found: list[str] = []
    folders = [(str(root), "")]
    while folders:  # each entry's type from the folder's listing (d_type): no stat per file
        folder, prefix = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not prefix and entry.name == ".git":
                continue
            try:
                if entry.is_file(follow_symlinks=False):
                    found.append(prefix + entry.name)
                elif entry.is_dir(follow_symlinks=False):
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
            except OSError:
                continue
    return sorted(found, key=lambda p: p.split("/"))
