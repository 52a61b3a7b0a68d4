"""A trial played now and graded later: what an inspect solver plays, its scorer grades.

In ``memstore eval`` the trial loop hands each session to the grading as it ends, and a coding
change merges only when it passes its check. In an inspect eval no grading data (labels, checks,
expected findings and answers) is read before the scorer runs: the solver builds the world (the
repository, its history, the seeded store) and plays the scenario's sessions with a `Recorder` for
the loop's grading, which reads none of it, records what the loop tells it and lets every
committed change land on ``main`` (as a push to a branch nobody gates). The world stays
(`memstore.harness.run.kept_world`) until the scorer grades it with memstore's own grading
(`TrialGrading`), session by session: each change checked on the commit it made, each answer read
off ``main`` as that session found it.

So a change that fails its check fails its task as in ``memstore eval``, but it stays on ``main``
for the sessions after it; a scenario's sessions up to its first failed change are graded as
``memstore eval`` grades them. A session's ``healed`` count is the store's at the end of the trial.

memstore's trial loop is not thread-safe (a scenario's template, its git readers), so one trial is
played, graded or closed at a time in a process (`LOCK`); inspect's samples still overlap around it.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field, replace

from memstore.harness.grading import TrialGrading
from memstore.harness.records import EventKind
from memstore.harness.run import AGENT_SCHEMES, Agent, AgentRuntime, Played, RunOutput, Unit, kept_world
from memstore.harness.scenarios import Task, read_value
from memstore.harness.world import Template, World
from memstore.model import Surface
from memstore.verify import GitCodebase, Workspace

__all__ = ["LOCK", "SCHEME", "KeptTrial", "Recorder"]

LOCK = threading.RLock()
SCHEME = "inspect"  # the agent spec an inspect solver's agent is played under: ``inspect:MODEL``

EventCall = tuple[dict[str, str], EventKind, str, str]  # what the loop told the grading: key, kind, memory, detail


@dataclass
class _Seen:
    """One session as the loop played it."""

    main: str  # main's commit when the session began
    events: list[EventCall] = field(default_factory=list)
    commit: str | None = None  # the change it committed, if it did
    landed: frozenset[str] = frozenset()  # the files that change touched on main
    played: Played | None = None


class Recorder:
    """The trial loop's grading while an inspect solver plays (a `GradingFactory`): it reads no
    grading data, records what the loop tells it, and lets every committed change land."""

    def __init__(self, unit: Unit, template: Template, world: World, workspace: Workspace, out: RunOutput) -> None:
        self.unit, self.template, self.world, self.workspace = unit, template, world, workspace
        self.before: list[EventCall] = []  # events before the first session (a rebuilt template)
        self.seen: list[_Seen] = []

    def begin(self) -> None:
        self.seen.append(_Seen(self.workspace.head("main")))

    def event(self, key: dict[str, str], kind: EventKind, memory_id: str, detail: str) -> None:
        (self.seen[-1].events if self.seen else self.before).append((dict(key), kind, memory_id, detail))

    def passes(self, task: Task, diff: str, runtime: AgentRuntime) -> bool:
        self.seen[-1].commit = self.workspace.head(f"task/{task.key}")
        return True  # it lands; whether it passes its check is the scorer's to say

    def merged(self, files: set[str]) -> None:
        self.seen[-1].landed = frozenset(files)

    def session(self, played: Played) -> None:
        self.seen[-1].played = played

    def finish(self) -> None:
        """Nothing is graded yet: the scorer grades (`grade`) while the world is kept."""

    def grade(self) -> RunOutput:
        """The trial's rows, graded now from the world its sessions left (see the module docstring)."""
        out = RunOutput()
        grading = _Replayed(self.unit, self.template, self.world, self.workspace, out)
        for call in self.before:
            grading.event(*call)
        for seen in self.seen:
            if seen.played is not None:
                self._replay(grading, seen, seen.played)
        self.workspace.abandon()  # back on main, as the sessions left it
        grading.at = self.workspace.head("main")
        grading.finish()
        return out

    def _replay(self, grading: _Replayed, seen: _Seen, played: Played) -> None:
        """One session told to the grading as the loop would have told it, its change checked on its commit."""
        grading.at = seen.main
        grading.begin()
        merged = played.merged
        if seen.commit is not None:
            self.workspace.start(f"graded/{played.task.key}", seen.commit)
            self.workspace.discard()  # the commit's files exactly, whatever a check left before
            merged = grading.passes(played.task, played.diff, self.unit.runtime)
        events = list(seen.events)
        if seen.commit is not None:  # the check ran the agent's code: what it planted for git is undone
            events += [(dict(played.key), EventKind.TAMPERED, "", undone) for undone in self.workspace.secure()]
        for key, kind, memory_id, detail in events:
            if kind != EventKind.MERGE or merged:
                grading.event(key, kind, memory_id, detail)
        if seen.landed:
            grading.merged(set(seen.landed))  # on main all the same: the labels it touches lapse
        grading.session(replace(played, merged=merged if played.task.surface is Surface.CODING_AGENT else None))


class _Replayed(TrialGrading):
    """memstore's grading of a trial, told after the trial: a question's answer is read off
    ``main`` at the commit it was at when the session began (``at``), not at the end."""

    at = ""

    def expected_answer(self, task: Task) -> str | None:
        if task.answer_at is None:
            return None
        return read_value(GitCodebase(self.workspace.repo, self.at), task.answer_at)


class KeptTrial:
    """One trial of a scenario: played (its world kept), graded, then closed; each under `LOCK`."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self._world = contextlib.ExitStack()
        self._recorder: Recorder | None = None

    def play(self, agent: Agent | None = None) -> None:
        """Play every session (``agent``: the one an ``inspect:`` spec stands for), keeping the world.

        Raises:
            Exception: whatever stopped the trial (its world is gone then).
        """
        made: list[Recorder] = []

        def recorder(unit: Unit, template: Template, world: World, workspace: Workspace, out: RunOutput) -> Recorder:
            made.append(Recorder(unit, template, world, workspace, out))
            return made[-1]

        with LOCK, contextlib.ExitStack() as during:
            if agent is not None:
                during.enter_context(AGENT_SCHEMES.registration(SCHEME, lambda argument, runtime: agent))
            self._world.enter_context(kept_world(self.unit, recorder))
        self._recorder = made[0]

    def grade(self) -> RunOutput:
        """The trial's rows (once played), graded from its world."""
        if self._recorder is None:
            raise RuntimeError("the trial was not played")
        with LOCK:
            return self._recorder.grade()

    def close(self) -> None:
        """Remove the trial's world (its repository, working copy and store)."""
        with LOCK:
            self._world.close()
