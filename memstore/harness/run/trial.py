"""The trial loop: one scenario, one trial, one arm; its tasks run in order as sessions.

Each session: the clock moves, the harness's audit of the store (`audit.py`) checks expiry, the store
hands the agent its memories (``search`` with the task's own words where the store can,
``recent`` otherwise), the agent works behind the boundary (`memstore.harness.run.boundary`),
and then, only then, the harness reads the grading data: a coding change is committed and
diffed with git, checked and merged; findings and answers are graded; actions are compared
with the memories handed (`memstore.harness.analysis.scoring`). A memory's truth label lapses
once the trial's own merges change a file it depends on (git's own diff of ``main``).
"""

from __future__ import annotations

import re
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from memstore.access import Actor
from memstore.harness.analysis import scoring
from memstore.harness.analysis.actions import Actions, parse_diff
from memstore.harness.analysis.checks import check_change, read_value
from memstore.harness.analysis.contract import EXPIRY_PROMISES, LEAK_PROMISES
from memstore.harness.run.agents import Agent, arm_role, make_agent
from memstore.harness.run.audit import Breach, StoreAudit, breach_counts
from memstore.harness.run.boundary import AgentSession, Gateway, Limits, PullRequest, TaskView, Tools, Usage
from memstore.harness.run.events import EventKind
from memstore.harness.run.guard import StoreGuard
from memstore.harness.run.mcp_bridge import McpLaunch, access_toml
from memstore.harness.run.output import RunOutput, Unit
from memstore.harness.run.scratch import scratch
from memstore.harness.run.stores import trial_store
from memstore.harness.scenarios.model import Scenario, SeedMemory, Task
from memstore.harness.world import Template, World, build_template, remove_tree
from memstore.model import Memory, Surface
from memstore.store import MemoryStore
from memstore.verify import GitCodebase
from memstore.verify.workspace import Workspace

__all__ = ["RECALL_KS", "run_unit"]

RECALL_KS = (5, 10, 20, 50)
_TEMPLATES: dict[str, Template] = {}


def run_unit(unit: Unit) -> RunOutput:
    """One trial of one scenario in one arm; a unit that cannot run is a failure row, never a crash."""
    try:
        return _run_unit(unit)
    except Exception as exc:  # a broken store, scenario or harness costs this unit, not the run
        out = RunOutput()
        out.failures.append(
            {
                **unit.key(),
                "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                "where": "".join(traceback.format_exception(exc)[-3:])[-1500:],
            }
        )
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


def _run_unit(unit: Unit) -> RunOutput:
    out = RunOutput()
    started = time.perf_counter()
    template, rebuilt = _template(unit.scenario)
    where = Path(tempfile.mkdtemp(dir=scratch("run"), prefix="trial-"))
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
        trial = _Trial(unit, template, world, guard, out)
        if shared is not None:
            trial.share(shared, store_dir)
        if rebuilt:
            trial.event(
                {}, EventKind.TAMPERED, "", "the scenario's template was changed by an earlier trial; it was rebuilt"
            )
        for index, task in enumerate(unit.scenario.tasks):
            trial.session(index, task)
        trial.finish(time.perf_counter() - started)
    finally:
        remove_tree(where)
        remove_tree(store_dir)
    return out


def transcript_slug(name: str) -> str:
    """A file name for ``name`` (an arm, a scenario, a task key)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._")[:80] or "_"


def _work(agent: Agent, session: AgentSession) -> None:
    """Let the agent work; an agent that raises fails its own session (an ``agent_error``)."""
    try:
        agent.work(session)
    except Exception as exc:
        session.tools.record(EventKind.AGENT_ERROR, "", f"the agent raised {type(exc).__name__}: {str(exc)[:300]}")


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
    """One trial's world, its agent, and what the harness keeps about it between sessions."""

    def __init__(self, unit: Unit, template: Template, world: World, guard: StoreGuard, out: RunOutput) -> None:
        self.unit, self.world, self.guard, self.out = unit, world, guard, out
        self.workspace = Workspace(world.path)
        self.agent = make_agent(unit.arm.agent, unit.agent_config, runtime=unit.runtime)
        self.role = arm_role(self.agent, world.store)
        self.labels = world.truth()  # grading data: memory id -> seeded memory (truth, origin, claim)
        self.key_of = {m.id: k for k, ms in world.seeded.items() for m in ms}
        self.chains: dict[str, str] = dict(self.key_of)  # memory id -> seeded key; corrections inherit theirs
        self.learned: dict[str, set[str]] = {}  # task key -> memories stored in its session
        self.true_lines = template.true_lines()  # seeded key -> where git puts each citation now
        self.moved_to = {i: self.true_lines.get(k, []) for i, k in self.key_of.items()}
        self.audit = StoreAudit(world, unit.expiry)
        self.lapsed: set[str] = set()  # files the trial's merges changed: labels that depend on them lapse
        self.in_force: dict[str, SeedMemory] = dict(self.labels)  # the labels in force this session
        self.store_seconds = 0.0
        self.healing: list[str] | None = None  # the initial pool's bad memories healed so far
        self.shared: tuple[str, Path] | None = None  # the store's URI for an MCP server, and its access file
        self.evaluate_at = template.evaluate_at

    def share(self, uri: str, folder: Path) -> None:
        """Let each session's MCP server open the trial's store (``uri``), with its users' access."""
        access = folder / "access.toml"
        access.write_text(access_toml(self.world.access), encoding="utf-8")
        self.shared = (uri, access)

    def transcript_folder(self, task: Task) -> Path | None:
        """Where this session's transcript goes: ``transcripts/ARM/SCENARIO/TRIAL/TASK`` in the run folder."""
        root = self.unit.runtime.transcripts
        if root is None:
            return None
        parts = (self.unit.arm.name, self.world.scenario.name, f"trial-{self.unit.trial}", task.key)
        return root.joinpath(*(transcript_slug(p) for p in parts))

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

    # -- grading data, as it stands now ------------------------------------------------------

    def truth_now(self) -> dict[str, SeedMemory]:
        """The labels still in force: those of memories whose files the trial's merges left alone."""

        def depends_on(spec: SeedMemory) -> set[str]:
            paths = {c.rsplit(":", 1)[0] for c in spec.citations}
            return paths | ({spec.claim.at.path} if spec.claim.at is not None else set())

        return {i: spec for i, spec in self.labels.items() if not depends_on(spec) & self.lapsed}

    def event(self, key: dict[str, Any], kind: str, memory_id: str, detail: str) -> None:
        """An event row, with the memory's origin and its label in force when the session began
        (``lapsed`` once the trial's own merges changed what the memory cites)."""
        spec = self.labels.get(memory_id)
        truth = "" if spec is None else spec.truth.value if memory_id in self.in_force else "lapsed"
        base = {**self.unit.key(), "task": "", "surface": "", "user": ""}
        self.out.events.append(
            {
                **base,
                **key,
                "seq": len(self.out.events),
                "kind": kind,
                "memory_id": memory_id,
                "detail": detail,
                "origin": spec.origin.value if spec else "",
                "truth": truth,
            }
        )

    # -- one session ------------------------------------------------------------------------

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

    def session(self, index: int, task: Task) -> None:
        self.world.clock.advance(task.after)
        key = {"task": task.key, "surface": task.surface.value, "user": task.user}
        truth = self.in_force = self.truth_now()
        breaches = self.audit.begin()
        for memory_id in self.audit.expired_now():
            self.event(key, EventKind.EXPIRED, memory_id, "")
        view = self.view(task)
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
        gateway = Gateway(
            workspace=self.workspace,
            store=self.world.store,
            actor=Actor(task.user),
            surface=task.surface,
            repo=self.world.scenario.repo,
            verifier=None,
            guard=self.guard,
            mcp=self._launch(task) if self.shared is not None else None,
            users=tuple(self.world.scenario.users),
            transcript=self.transcript_folder(task),
        )
        seed = f"{self.unit.seed}|{self.world.scenario.name}|{self.unit.trial}|{task.key}"
        session = AgentSession(view, tuple(handed), Tools(gateway), Limits(self.unit.runtime.timeout), seed)
        if task.surface is Surface.CODING_AGENT:
            self.workspace.start(f"task/{task.key}")
        t0 = time.perf_counter()
        _work(self.agent, session)
        agent_seconds = time.perf_counter() - t0
        breaches += self.audit.handed(gateway.recalled, task.user, task.surface)  # what it recalled over MCP
        actions, merged = self.conclude(task, gateway, key)
        self.record(index, task, key, gateway, handed, truth, actions, merged, breaches)
        self.out.timings.append({**self.unit.key(), **key, "agent_s": agent_seconds})

    def conclude(self, task: Task, gateway: Gateway, key: dict[str, Any]) -> tuple[Actions, bool | None]:
        """The session's actions, read off the repository; a coding change committed, checked and
        merged when the check passes (the labels its merge touches lapse)."""
        reported = {"findings": tuple(gateway.findings), "answer": gateway.answer}
        if task.surface is not Surface.CODING_AGENT:
            self.secure(gateway)  # nothing is committed, but the next session's git reads this tree
            return Actions(**reported), None  # type: ignore[arg-type]
        base = self.workspace.head("main")
        self.secure(gateway)
        commit = self.workspace.commit(f"{task.prompt}\n\nTask {task.key}", when=self.world.clock.now(), who=task.user)
        if commit is None:
            self.workspace.abandon()
            return Actions(**reported), False  # type: ignore[arg-type]
        touched, added, removed = parse_diff(self.workspace.diff(base, commit))
        actions = Actions(touched, added, removed, **reported)  # type: ignore[arg-type]
        passed = check_change(self.workspace, task, touched, self.unit.runtime)
        self.secure(gateway)  # the check ran the agent's code too
        if passed:
            self.workspace.merge(f"task/{task.key}")
            self.lapsed |= set(self.workspace.touched(base, self.workspace.head("main")))
            gateway.record(EventKind.MERGE, "", commit)
        else:
            self.workspace.abandon()
        return actions, passed

    def secure(self, gateway: Gateway) -> None:
        """Undo what an agent planted for the harness's own git to run; each is tampering."""
        for undone in self.workspace.secure():
            gateway.record(EventKind.TAMPERED, "", undone)

    def record(
        self,
        index: int,
        task: Task,
        key: dict[str, Any],
        gateway: Gateway,
        handed: list[Memory],
        truth: dict[str, SeedMemory],
        actions: Actions,
        merged: bool | None,
        breaches: list[Breach],
    ) -> None:
        """Score the session and keep its rows (grading data is read here, after the session)."""
        events = self._follow(task, key, gateway, breaches)
        contract = breach_counts(breaches)
        healing = self.healing
        if healing is None or any(kind in {EventKind.RETIRE, EventKind.CORRECT} for kind, _, _ in events):
            healing = self.healing = self.healed_now()  # only a retirement or a correction can change it
        misled = scoring.stale_uses(task, actions, handed, truth, self.moved_to)
        for memory_id in misled:
            self.event(key, EventKind.MISLED, memory_id, "an action repeated this memory's error")
        moved_given, moved_right = scoring.reanchored(events, handed, truth, self.true_lines, self.key_of)
        handed_ids = [m.id for m in handed]
        needed = [self._needed(need) for need in task.needs]
        row: dict[str, Any] = {
            **self.unit.key(),
            "role": self.role.value,
            **key,
            "scenario_kind": self.world.scenario.kind,
            "stratum": task.stratum,
            "index": index,
            "handed": len(handed),
            "injected_chars": sum(
                len(m.subject) + len(m.fact) + len(m.reason) + sum(len(str(c)) for c in m.citations) for m in handed
            ),
            "verify_reads": gateway.counts["verify_reads"],
            "searches": gateway.counts["searches"],
            "reads": gateway.counts["reads"],
            "leaks": sum(contract[p] for p in LEAK_PROMISES),
            "expiry_violations": sum(contract[p] for p in EXPIRY_PROMISES),
            **contract,
            "agent_error": any(kind == EventKind.AGENT_ERROR for kind, _, _ in events),
            "tampered": sum(kind == EventKind.TAMPERED for kind, _, _ in events),
            "origins": ";".join(sorted({self.labels[i].origin.value for i in handed_ids if i in self.labels})),
            "moved_given": moved_given,
            "moved_reanchored": moved_right,
            "stale_use": bool(misled),
            "healed": len(healing),
            "misled_origins": ";".join(sorted({self.labels[i].origin.value for i in misled})),
            **self._outcome(task, actions, merged, events),
            **self._usage(gateway),
        }
        for k in RECALL_KS:
            row[f"needed_at_{k}"] = all(any(i in chain for i in handed_ids[:k]) for chain in needed) if needed else None
        self.out.sessions.append(row)
        expected = {f.path for f in task.findings}
        for path, note in actions.findings:
            found = {**self.unit.key(), **key, "path": path, "correct": path in expected, "note": note}
            self.out.findings.append(found)

    def _outcome(
        self, task: Task, actions: Actions, merged: bool | None, events: list[tuple[str, str, str]]
    ) -> dict[str, Any]:
        """The task's outcome; none at all when the session failed for an infrastructure reason
        (a timeout, a model endpoint down): that session did not run, it did not fail."""
        found = scoring.outcome(task, actions, merged, self.expected_answer(task))
        infra = any(kind == EventKind.INFRA_ERROR for kind, _, _ in events)
        return {"infra_error": infra, **(dict.fromkeys(found) if infra else found)}

    def _usage(self, gateway: Gateway) -> dict[str, Any]:
        """What the session spent, as its agent reported it, and where its transcript is."""
        usage = gateway.usage or Usage()
        root, folder = self.unit.runtime.transcripts, gateway.transcript
        return {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_tokens": usage.cache_tokens,
            "cost_usd": round(usage.cost_usd, 6),
            "model": usage.model,
            "transcript": folder.relative_to(root.parent).as_posix() if folder and root and gateway.kept else "",
        }

    def _follow(
        self, task: Task, key: dict[str, Any], gateway: Gateway, breaches: list[Breach]
    ) -> list[tuple[str, str, str]]:
        """Keep the session's events, and what they change: corrections inherit their memory's
        seeded key, stores are what the task learned, the audit follows (and checks) every store
        operation; its breaches join ``breaches``. Every breach is an event too."""
        events = [(e.kind, e.memory_id, e.detail) for e in gateway.events]
        for kind, memory_id, detail in events:
            if kind == EventKind.CORRECT and detail in self.chains:
                self.chains[memory_id] = self.chains[detail]
            if kind == EventKind.STORE:
                self.learned.setdefault(task.key, set()).add(memory_id)
            self.event(key, kind, memory_id, detail)
            breaches += self.audit.follow(kind, memory_id, detail, Actor(task.user), gateway.written.get(memory_id))
        for breach in breaches:
            self.event(key, *breach.event())
        return events

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

    # -- the end of the trial -----------------------------------------------------------------

    def bad_initial(self) -> dict[str, SeedMemory]:
        """The initial pool's bad memories of the scenario's repository, by id (grading data)."""
        repo = self.world.scenario.repo
        return {i: spec for i, spec in self.labels.items() if not spec.truth.usable and spec.repo == repo}

    def healed_now(self) -> list[str]:
        """The initial pool's bad memories healed now (`scoring.healed`)."""
        bad = self.bad_initial()
        at_start = GitCodebase(self.workspace.repo, self.evaluate_at)
        at_end = GitCodebase(self.workspace.repo, self.workspace.head("main"))  # now: a name resolves once per repo
        readers = [lambda where: read_value(at_start, where), lambda where: read_value(at_end, where)]
        return scoring.healed(self.world.store, bad, readers)

    def finish(self, seconds: float) -> None:
        healing = self.healed_now() if self.healing is None else self.healing
        bad = sorted(self.bad_initial())
        self.out.trials.append(
            {
                **self.unit.key(),
                "trial_id": f"{self.world.scenario.name}#{self.unit.trial}",
                "sessions": len(self.world.scenario.tasks),
                "seeded": sum(len(ms) for ms in self.world.seeded.values()),
                "refused_seeds": len(self.world.refused),
                "bad_initial": len(bad),
                "healed": len(healing),
                "bad_ids": ";".join(bad),
                "healed_ids": ";".join(healing),
            }
        )
        self.out.timings.append({**self.unit.key(), "task": "", "store_s": self.store_seconds, "trial_s": seconds})
