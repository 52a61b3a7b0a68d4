"""Grading one trial: where the labels meet what each session did.

The trial loop (`memstore.harness.run.play.loop`) plays the sessions and never reads grading data;
it hands this class what it saw, as it happened: each event, each coding change before it
merges, each session once it ended (`Played`), the trial once it ended. This class alone reads
the labels (truth, origin, claim), the checks, the expected findings and answers, and writes the
run's rows as records (`memstore.harness.records`).

A memory's truth label lapses once the trial's own merges change a file it depends on (git's
own diff of ``main``).
"""

from __future__ import annotations

from collections.abc import Mapping

from memstore.harness.grading import scoring
from memstore.harness.grading.actions import Actions, parse_diff
from memstore.harness.grading.merge_checks import check_change
from memstore.harness.records import (
    RECALL_KS,
    EventKind,
    EventRecord,
    FindingRecord,
    Label,
    Outcome,
    Recall,
    SessionRecord,
    TrialRecord,
)
from memstore.harness.run import AgentRuntime, Played, RunOutput, Unit
from memstore.harness.scenarios import SeedMemory, Task, read_value
from memstore.harness.world import Template, World
from memstore.model import Memory, Surface
from memstore.verify import GitCodebase, Workspace

__all__ = ["TrialGrading"]


def _chars(memory: Memory) -> int:
    """A memory's size as text, as it reaches the agent."""
    return len(memory.subject) + len(memory.fact) + len(memory.reason) + sum(len(str(c)) for c in memory.citations)


class TrialGrading:
    """The grading of one trial (see the module docstring); its rows go to ``out``."""

    def __init__(self, unit: Unit, template: Template, world: World, workspace: Workspace, out: RunOutput) -> None:
        self.unit, self.world, self.workspace, self.out = unit, world, workspace, out
        self.labels = world.truth()  # memory id -> seeded memory (truth, origin, claim)
        self.key_of = {m.id: k for k, ms in world.seeded.items() for m in ms}
        # what pairs a seeded memory across arms: its key, not the id its store gave it (KEY#N for copies)
        self.seed_of = {
            m.id: k if len(ms) == 1 else f"{k}#{n}" for k, ms in world.seeded.items() for n, m in enumerate(ms)
        }
        self.chains: dict[str, str] = dict(self.key_of)  # memory id -> seeded key; corrections inherit theirs
        self.learned: dict[str, set[str]] = {}  # task key -> memories stored in its session
        self.true_lines = template.true_lines()  # seeded key -> where git puts each citation now
        self.moved_to = {i: self.true_lines.get(k, []) for i, k in self.key_of.items()}
        self.lapsed: set[str] = set()  # files the trial's merges changed: labels that depend on them lapse
        self.in_force: dict[str, SeedMemory] = dict(self.labels)  # the labels in force this session
        self.healing: list[str] | None = None  # the initial pool's bad memories healed so far
        self.evaluate_at = template.evaluate_at

    # -- the labels, as they stand now ---------------------------------------------------------

    def begin(self) -> None:
        """A session begins: the labels in force are those whose files the trial's merges left alone."""

        def depends_on(spec: SeedMemory) -> set[str]:
            paths = {c.rsplit(":", 1)[0] for c in spec.citations}
            return paths | ({spec.claim.at.path} if spec.claim.at is not None else set())

        self.in_force = {i: spec for i, spec in self.labels.items() if not depends_on(spec) & self.lapsed}

    def event(self, key: Mapping[str, str], kind: EventKind, memory_id: str, detail: str) -> None:
        """An event row, with the memory's origin and its label in force when the session began
        (``lapsed`` once the trial's own merges changed what the memory cites). A correction
        inherits the seeded key of the memory it corrects; a stored memory is what its task learned."""
        if kind == EventKind.CORRECT and detail in self.chains:
            self.chains[memory_id] = self.chains[detail]
        if kind == EventKind.STORE and key.get("task"):
            self.learned.setdefault(key["task"], set()).add(memory_id)
        spec = self.labels.get(memory_id)
        truth = None if spec is None else Label.of(spec.truth) if memory_id in self.in_force else Label.LAPSED
        where = {"task": "", "surface": "", "user": "", **key}
        record = EventRecord(
            **self.unit.key(),
            task=where["task"],
            surface=Surface(where["surface"]) if where["surface"] else None,
            user=where["user"],
            seq=len(self.out.events),
            kind=EventKind(kind),
            memory_id=memory_id,
            detail=detail,
            origin=spec.origin if spec else None,
            truth=truth,
            seed=self.seed_of.get(memory_id, ""),
        )
        self.out.events.append(record)

    # -- a coding change, before it merges ----------------------------------------------------

    def passes(self, task: Task, diff: str, runtime: AgentRuntime) -> bool:
        """Whether the committed change (``diff``) passes the task's check (grading data)."""
        touched, _, _ = parse_diff(diff)
        return check_change(self.workspace, task, touched, runtime)

    def merged(self, files: set[str]) -> None:
        """The change merged: the labels that depend on ``files`` lapse from the next session on."""
        self.lapsed |= files

    # -- a session, once it ended --------------------------------------------------------------

    def session(self, played: Played) -> None:
        """Score the session and keep its rows."""
        task, key, handed = played.task, played.key, list(played.handed)
        touched, added, removed = parse_diff(played.diff) if played.diff else (frozenset(), (), ())
        actions = Actions(touched, added, removed, findings=played.findings, answer=played.answer)
        healing = self.healing
        if healing is None or any(kind in {EventKind.RETIRE, EventKind.CORRECT} for kind, _, _ in played.events):
            healing = self.healing = self.healed_now()  # only a retirement or a correction can change it
        misled = scoring.stale_uses(task, actions, handed, self.in_force, self.moved_to)
        for memory_id in misled:
            self.event(key, EventKind.MISLED, memory_id, "an action repeated this memory's error")
        self._planted(key, handed)
        moved_given, moved_right = scoring.reanchored(
            played.events, handed, self.in_force, self.true_lines, self.key_of
        )
        handed_ids = [m.id for m in handed]
        infra = any(kind == EventKind.INFRA_ERROR for kind, _, _ in played.events)
        record = SessionRecord(
            **self.unit.key(),
            role=played.role,
            task=key["task"],
            surface=task.surface,
            user=key["user"],
            scenario_kind=self.world.scenario.kind,
            stratum=task.stratum,
            index=played.index,
            handed=len(handed),
            injected_chars=sum(_chars(m) for m in handed),
            lookups=played.lookups,
            leaks=played.contract.leaks,
            expiry_violations=played.contract.expiry_violations,
            contract=played.contract,
            contract_chances=played.chances,
            agent_error=any(kind == EventKind.AGENT_ERROR for kind, _, _ in played.events),
            infra_error=infra,
            tampered=sum(kind == EventKind.TAMPERED for kind, _, _ in played.events),
            origins=tuple(sorted({self.labels[i].origin for i in handed_ids if i in self.labels})),
            outcome=self._outcome(task, actions, played.merged, infra),
            recall=self._recall(task, handed_ids),
            moved_given=moved_given,
            moved_reanchored=moved_right,
            stale_use=bool(misled),
            misled_origins=tuple(sorted({self.labels[i].origin for i in misled})),
            healed=len(healing),
            spent=played.spent,
        )
        self.out.sessions.append(record)
        expected = {f.path for f in task.findings}
        for path, note in actions.findings:
            finding = FindingRecord(
                **self.unit.key(),
                task=key["task"],
                surface=task.surface,
                user=key["user"],
                path=path,
                correct=path in expected,
                note=note,
            )
            self.out.findings.append(finding)

    def _planted(self, key: Mapping[str, str], handed: list[Memory]) -> None:
        """An event for each memory handed that carries instructions planted for the agent: the label
        the verifier's flags are counted against (`memory_pairs`: ``planted``)."""
        for memory in handed:
            spec = self.labels.get(memory.id)
            if spec is not None and spec.claim.instructs:
                self.event(key, EventKind.PLANTED, memory.id, "; ".join(spec.claim.instructs))

    def _outcome(self, task: Task, actions: Actions, merged: bool | None, infra: bool) -> Outcome:
        """The task's outcome on its surface; none at all when the session failed for an
        infrastructure reason (a timeout, a model endpoint down): it did not run, it did not fail."""
        return Outcome() if infra else scoring.outcome(task, actions, merged, self.expected_answer(task))

    def _recall(self, task: Task, handed_ids: list[str]) -> Recall:
        """Whether the memories ``task`` needs were among the first K handed, for each K counted."""
        if not task.needs:
            return Recall()
        needed = [self._needed(need) for need in task.needs]
        return Recall(*(all(any(i in chain for i in handed_ids[:k]) for chain in needed) for k in RECALL_KS))

    def expected_answer(self, task: Task) -> str | None:
        """The answer read off ``main`` now, for a task that says where it is."""
        if task.answer_at is None:
            return None
        return read_value(GitCodebase(self.workspace.repo, self.workspace.head("main")), task.answer_at)

    def _needed(self, need: str) -> set[str]:
        if need.startswith("learned:"):
            stored = self.learned.get(need.removeprefix("learned:"), set())
            return stored | {i for i, k in self.chains.items() if k in stored}
        return {i for i, k in self.chains.items() if k == need}

    # -- the trial, once it ended --------------------------------------------------------------

    def bad_initial(self) -> dict[str, SeedMemory]:
        """The initial pool's bad memories of the scenario's repository, by id."""
        repo = self.world.scenario.repo
        return {i: spec for i, spec in self.labels.items() if not spec.truth.usable and spec.repo == repo}

    def healed_now(self) -> list[str]:
        """The initial pool's bad memories healed now (`scoring.healed`)."""
        bad = self.bad_initial()
        at_start = GitCodebase(self.workspace.repo, self.evaluate_at)
        at_end = GitCodebase(self.workspace.repo, self.workspace.head("main"))  # now: a name resolves once per repo
        readers = [lambda where: read_value(at_start, where), lambda where: read_value(at_end, where)]
        return scoring.healed(self.world.store, bad, readers)

    def finish(self) -> None:
        """The trial's row."""
        healing = self.healed_now() if self.healing is None else self.healing
        bad = sorted(self.bad_initial())
        record = TrialRecord(
            **self.unit.key(),
            trial_id=f"{self.world.scenario.name}#{self.unit.trial}",
            sessions=len(self.world.scenario.tasks),
            seeded=sum(len(ms) for ms in self.world.seeded.values()),
            refused_seeds=len(self.world.refused),
            bad_initial=len(bad),
            healed=len(healing),
            bad_ids=tuple(bad),
            healed_ids=tuple(healing),
            bad_seeds=tuple(self.seed_of[i] for i in bad),
            healed_seeds=tuple(self.seed_of[i] for i in healing),
        )
        self.out.trials.append(record)
