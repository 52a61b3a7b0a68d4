"""The trial loop: one scenario, one trial, one arm; its tasks run in order as sessions.

Each session: the clock moves, the harness's audit of the store (`audit.py`) checks expiry, the store
hands the agent its memories (``search`` with the task's own words where the store can,
``recent`` otherwise), the agent works behind the boundary (`memstore.harness.run.boundary.session`)
within its write budget (`memstore.harness.run.boundary.working`), and then a coding change is
committed, diffed with git, checked and merged.

The loop never reads grading data: what it sees goes, as it happens, to the trial's grading
(`memstore.harness.run.play.handoff.Grading`), which decides whether a change passes its check and
writes the rows. Which grading that is, the caller hands down (the composition root chooses it):
this stage names none.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from memstore.access import Actor
from memstore.harness.records import EventKind, FailureRecord, Lookups, Spent
from memstore.harness.run.boundary.agents import arm_role, make_agent
from memstore.harness.run.boundary.mcp_bridge import McpLaunch
from memstore.harness.run.boundary.session import AgentSession, Gateway, Limits, PullRequest, TaskView, Tools, Usage
from memstore.harness.run.boundary.working import work
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.harness.run.isolation.scratch import scratch
from memstore.harness.run.isolation.writes import DIFF_CAP
from memstore.harness.run.output import RunOutput, Unit
from memstore.harness.run.play.atif import keep_trajectory
from memstore.harness.run.play.audit import Breach, StoreAudit, breach_counts
from memstore.harness.run.play.handoff import Grading, GradingFactory, Played
from memstore.harness.run.play.stores import trial_store
from memstore.harness.scenarios import Scenario, Task
from memstore.harness.trees import remove_tree
from memstore.harness.world import Template, World, build_template
from memstore.model import Memory, Surface
from memstore.store import MemoryStore
from memstore.verify import Verdict, Workspace

__all__ = ["forget_templates", "kept_world", "retrieve", "run_unit", "searches", "transcript_slug"]

_TEMPLATES: dict[str, Template] = {}


def run_unit(unit: Unit, grading: GradingFactory) -> RunOutput:
    """One trial of one scenario in one arm, graded by what ``grading`` makes; a unit that cannot
    run is a failure row, never a crash."""
    try:
        return _run_unit(unit, grading)
    except Exception as exc:  # a broken store, scenario or harness costs this unit, not the run
        out = RunOutput()
        failure = FailureRecord(
            **unit.key(),
            error=f"{type(exc).__name__}: {str(exc)[:500]}",
            where="".join(traceback.format_exception(exc)[-3:])[-1500:],
        )
        out.failures.append(failure)
        return out


def _template(scenario: Scenario) -> tuple[Template, bool]:
    """Each process builds each scenario's template once, and builds it again if a trial changed
    it behind the harness's back; the template, and whether it had to be rebuilt for that."""
    found = _TEMPLATES.get(scenario.name)
    if found is not None and found.scenario != scenario:  # another scenario of that name: not ours
        remove_tree(_TEMPLATES.pop(scenario.name).path)
        found = None
    if found is not None and found.intact():
        return found, False
    if found is not None:
        remove_tree(found.path)
    path = Path(tempfile.mkdtemp(dir=scratch("run"), prefix="template-")) / scenario.name
    built = _TEMPLATES[scenario.name] = build_template(scenario, path)
    built.seal()
    return built, found is not None


def forget_templates() -> None:
    """Drop this process's templates (their folders go with its scratch space)."""
    _TEMPLATES.clear()


def _run_unit(unit: Unit, grading: GradingFactory) -> RunOutput:
    with kept_world(unit, grading) as out:
        return out


@contextlib.contextmanager
def kept_world(unit: Unit, grading: GradingFactory) -> Iterator[RunOutput]:
    """One trial of one scenario in one arm played as `run_unit` plays it (a failure raises here),
    its repository, working copy and store kept until the block ends: a grading the trial loop
    hands its world to (`GradingFactory`) may read it after the last session, before it goes
    (an inspect scorer does: `memstore.inspect`)."""
    out = RunOutput()
    started = time.perf_counter()
    template, rebuilt = _template(unit.scenario)
    where = Path(tempfile.mkdtemp(dir=scratch("run"), prefix="trial-"))
    trial: _Trial | None = None
    store_dir = Path(tempfile.mkdtemp(dir=scratch("stores"), prefix="store-"))  # no relative path leads here
    try:
        factory, guard, shared = trial_store(
            unit.arm.store,
            scenario=unit.scenario.name,
            trial=unit.trial,
            arm=unit.arm.name,
            seed=unit.seed,
            expiry=unit.expiry,
            where=store_dir,
        )
        world = template.instantiate(where / "repo", factory)
        trial = _Trial(unit, template, world, guard, out, grading)
        if shared is not None:
            trial.share(shared, store_dir)
        if rebuilt:
            trial.event(
                {}, EventKind.TAMPERED, "", "the scenario's template was changed by an earlier trial; it was rebuilt"
            )
        for index, task in enumerate(unit.scenario.tasks):
            trial.session(index, task)
        trial.grading.finish()
        spent = time.perf_counter() - started
        out.timings.append({**unit.key(), "task": "", "store_s": trial.store_seconds, "trial_s": spent})
        yield out
    finally:
        template.repo.close()  # its reader restarts when the next trial reads it; its caches stay
        if trial is not None:
            trial.workspace.close()
            _close(trial.world.store)
        remove_tree(where)
        remove_tree(store_dir)


def _close(store: object) -> None:
    """A trial's store is closed with the trial: its connections, and the server processes of a
    store over a server (an MCP server's), end with it, not when the worker does."""
    close = getattr(store, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # a store that fails to close fails nothing of the trial's
            close()


def transcript_slug(name: str) -> str:
    """A file name for ``name`` (an arm, a scenario, a task key)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._")[:80] or "_"


def searches(store: MemoryStore) -> bool:
    """Whether ``store`` ranks memories by a query (``search``) rather than only by recency."""
    return "search" in getattr(store, "capabilities", frozenset()) and hasattr(store, "search")


def retrieve(store: MemoryStore, view: TaskView, limit: int) -> list[Memory]:
    """The memories a session is handed: ``search`` with the task's own words (and the files a pull
    request changes) where the store can search, ``recent()`` otherwise."""
    actor = Actor(view.user)
    if searches(store):
        changed = view.pull_request.changed_files if view.pull_request is not None else ()
        query = " ".join([view.words(), *changed]).strip()
        found: list[Memory] = store.search(  # type: ignore[attr-defined]
            view.repo, query, actor=actor, surface=view.surface, limit=limit
        )
        return found
    return store.recent(view.repo, actor=actor, surface=view.surface, limit=limit)


class _Trial:
    """One trial's world, its agent, and what the loop keeps about it between sessions."""

    def __init__(
        self, unit: Unit, template: Template, world: World, guard: StoreGuard, out: RunOutput, grading: GradingFactory
    ) -> None:
        self.unit, self.world, self.guard, self.out = unit, world, guard, out
        self.workspace = Workspace(world.path, copied_from=template.repo)
        self.agent = make_agent(unit.arm.agent, runtime=unit.runtime)
        self.role = arm_role(self.agent, unit.arm)
        self.grading: Grading = grading(unit, template, world, self.workspace, out)
        self.audit = StoreAudit(world, unit.expiry)
        self.verdicts: dict[tuple[Memory, str], Verdict] = {}  # the sessions' verdicts (`Gateway.verdicts`)
        self.store_seconds = 0.0
        self.shared: tuple[str, Path] | None = None  # the store's URI for an MCP server, and its access file

    def share(self, uri: str, folder: Path) -> None:
        """Let each session's MCP server open the trial's store (``uri``), with its users' access."""
        access = folder / "access.toml"
        access.write_text(self.world.access.to_toml(), encoding="utf-8")
        self.shared = (uri, access)

    def event(self, key: dict[str, str], kind: EventKind, memory_id: str, detail: str) -> None:
        self.grading.event(key, kind, memory_id, detail)

    def transcript_folder(self, task: Task) -> Path | None:
        """Where this session's transcript goes: ``transcripts/ARM/SCENARIO/TRIAL/TASK`` in the run folder."""
        root = self.unit.runtime.transcripts
        if root is None:
            return None
        return root.joinpath(*(transcript_slug(p) for p in self._place(task)))

    def _place(self, task: Task) -> tuple[str, str, str, str]:
        """A session's place in the run: its arm, scenario, trial and task."""
        return (self.unit.arm.name, self.world.scenario.name, f"trial-{self.unit.trial}", task.key)

    def _launch(self, task: Task) -> McpLaunch:
        assert self.shared is not None
        uri, access = self.shared
        return McpLaunch(
            store_uri=uri,
            access_file=access,
            user=task.user,
            repo=self.world.scenario.repo,
            surface=task.surface,
            workdir=str(self.workspace.path),
            ref="main",  # resolved by the server when it starts: main as the session found it
            now=self.world.clock.now().isoformat(),
            ids_seed=f"{self.unit.seed}|{self.world.scenario.name}|{self.unit.trial}|{task.key}|mcp",
            expiry_days=self.unit.expiry.total_seconds() / 86_400,
        )

    def view(self, task: Task) -> TaskView:
        """The task as the agent sees it."""
        pull_request = None
        if task.pull_request is not None:
            spec = task.pull_request
            pull_request = PullRequest(
                title=spec.title or task.prompt,
                description=spec.description,
                branch=spec.branch,
                base=spec.base,
                changed_files=tuple(self.workspace.changed(spec.base, spec.branch)),
                diff=self.workspace.pull_request_diff(spec.base, spec.branch),
            )
        return TaskView(
            key=task.key,
            surface=task.surface,
            repo=self.world.scenario.repo,
            user=task.user,
            prompt=task.prompt,
            intent=task.intent,
            question=task.question,
            pull_request=pull_request,
            workdir=str(self.workspace.path),
        )

    def _gateway(self, task: Task) -> Gateway:
        return Gateway(
            workspace=self.workspace,
            store=self.world.store,
            actor=Actor(task.user),
            surface=task.surface,
            repo=self.world.scenario.repo,
            verifier=None,
            verdicts=self.verdicts,
            guard=self.guard,
            mcp=self._launch(task) if self.shared is not None else None,
            users=tuple(self.world.scenario.users),
            transcript=self.transcript_folder(task),
        )

    def _handed(self, task: Task, view: TaskView, key: dict[str, str]) -> tuple[list[Memory], list[Breach]]:
        """What the store hands the agent, and what the audit finds wrong with it."""
        breaches = self.audit.begin()
        for memory_id in self.audit.expired_now():
            self.event(key, EventKind.EXPIRED, memory_id, "")
        t0 = time.perf_counter()
        handed = retrieve(self.world.store, view, self.unit.limit) if self.agent.uses_memory else []
        self.store_seconds += time.perf_counter() - t0
        if self.agent.uses_memory and not searches(self.world.store):
            breaches += self.audit.handed(handed, task.user, task.surface, limit=self.unit.limit)
        else:  # what the agent got says nothing of recent(): the audit asks for itself
            breaches += self.audit.handed(handed, task.user, task.surface)
            breaches += self.audit.probe(task.user, task.surface, self.unit.limit)
        for position, memory in enumerate(handed):
            self.event(key, EventKind.RETRIEVE, memory.id, str(position))
        return handed, breaches

    def session(self, index: int, task: Task) -> None:
        self.world.clock.advance(task.after)
        key = {"task": task.key, "surface": task.surface.value, "user": task.user}
        self.grading.begin()
        view = self.view(task)
        handed, breaches = self._handed(task, view, key)
        gateway = self._gateway(task)
        seed = f"{self.unit.seed}|{self.world.scenario.name}|{self.unit.trial}|{task.key}"
        session = AgentSession(view, tuple(handed), Tools(gateway), Limits(self.unit.runtime.timeout), seed)
        if task.surface is Surface.CODING_AGENT:
            self.workspace.start(f"task/{task.key}")
        started, t0 = self.world.clock.now(), time.perf_counter()
        work(self.agent, session, self.workspace)  # past its write budget: an agent error, discarded
        agent_seconds = time.perf_counter() - t0
        diff, merged = self.conclude(task, gateway)
        events = self._follow(task, key, gateway, breaches)
        where = "/".join(self._place(task))
        keep_trajectory(gateway, view, handed, agent=self.agent.name, session_id=where, started=started)
        played = Played(
            index=index,
            task=task,
            key=key,
            role=self.role,
            handed=tuple(handed),
            events=tuple(events),
            findings=tuple(gateway.findings),
            answer=gateway.answer,
            diff=diff,
            merged=merged,
            contract=breach_counts(breaches),
            chances=self.audit.take_chances(),
            lookups=Lookups(gateway.verify_reads, gateway.searches, gateway.reads),
            spent=self._spent(gateway),
        )
        self.grading.session(played)
        self.out.timings.append({**self.unit.key(), **key, "agent_s": agent_seconds})

    def conclude(self, task: Task, gateway: Gateway) -> tuple[str, bool | None]:
        """A coding change committed, and merged when its check passes: its diff, and whether it merged."""
        if task.surface is not Surface.CODING_AGENT:
            self.secure(gateway)  # nothing is committed, but the next session's git reads this tree
            return "", None
        base = self.workspace.head("main")
        self.secure(gateway)
        commit = self.workspace.commit(f"{task.prompt}\n\nTask {task.key}", when=self.world.clock.now(), who=task.user)
        if commit is None:
            self.workspace.abandon()
            return "", False
        diff = self.workspace.diff(base, commit, cap=DIFF_CAP)
        passed = self.grading.passes(task, diff, self.unit.runtime)
        self.secure(gateway)  # the check ran the agent's code too
        if passed:
            self.workspace.merge(f"task/{task.key}")
            self.grading.merged(set(self.workspace.touched(base, self.workspace.head("main"))))
            gateway.record(EventKind.MERGE, "", commit)
        else:
            self.workspace.abandon()
        return diff, passed

    def secure(self, gateway: Gateway) -> None:
        """Undo what an agent planted for the harness's own git to run; each is tampering."""
        for undone in self.workspace.secure():
            gateway.record(EventKind.TAMPERED, "", undone)

    def _spent(self, gateway: Gateway) -> Spent:
        """What the session spent, as its agent reported it, and where its transcript is."""
        usage = gateway.usage or Usage()
        root, folder = self.unit.runtime.transcripts, gateway.transcript
        return Spent(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_tokens=usage.cache_tokens,
            cost_usd=round(usage.cost_usd, 6),
            model=usage.model,
            transcript=folder.relative_to(root.parent).as_posix() if folder and root and gateway.kept else "",
        )

    def _follow(
        self, task: Task, key: dict[str, str], gateway: Gateway, breaches: list[Breach]
    ) -> list[tuple[EventKind, str, str]]:
        """Keep the session's events; the audit follows (and checks) every store operation, and
        each recall over MCP where it happened among them; its breaches join ``breaches``. Every
        breach is an event too."""
        events = [(e.kind, e.memory_id, e.detail) for e in gateway.events]
        recalls = list(gateway.recalled)
        self.audit.list_chances(task.user, task.surface)  # its recalls over MCP: one list's chances, as ever
        for at, (kind, memory_id, detail) in enumerate(events):
            while recalls and recalls[0].at <= at:  # what it recalled, after the writes made before it
                breaches += self.audit.handed(list(recalls.pop(0).memories), task.user, task.surface, counted=False)
            self.event(key, kind, memory_id, detail)
            breaches += self.audit.follow(kind, memory_id, detail, Actor(task.user), gateway.written.get(memory_id))
        for recall in recalls:  # a recall that returned nothing, after the last event
            breaches += self.audit.handed(list(recall.memories), task.user, task.surface, counted=False)
        for breach in breaches:
            self.event(key, *breach.event())
        return events
