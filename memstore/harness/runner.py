"""The runner: arms x scenarios x trials, paired by seed, on a pool of processes.

An arm is (agent, store). Every arm runs the same tasks with the same seeds: a trial's
seed is derived from the run seed and the trial's identity (scenario, trial number), and
the agents draw their chances from streams of that seed, so outcomes pair up task by
task. A trial is one world: its tasks run in order as sessions, with memory carried
between them and the clock moving. Units of work go to a local pool of processes; their
rows come back and are sorted, so the tables do not depend on the pool.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import re
import signal
import string
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memstore.access import AccessPolicy, Actor
from memstore.clock import Clock
from memstore.errors import ConfigurationError, MemstoreError, NotFound
from memstore.harness.agents import AgentConfig, make_agent
from memstore.harness.checks import check_change, entitled
from memstore.harness.command_agent import DEFAULT_TIMEOUT
from memstore.harness.guard import StoreGuard
from memstore.harness.scenario import Scenario, Task
from memstore.harness.scratch import clean_stale, release_all, scratch
from memstore.harness.session import Session
from memstore.harness.world import Template, World, build_template, remove_tree
from memstore.ids import UlidIds
from memstore.model import Memory, Status, Surface
from memstore.store import DEFAULT_EXPIRY, MemoryStore, open_store
from memstore.verify import GitCodebase, verify_citation
from memstore.verify.git import map_line
from memstore.verify.workspace import Workspace

__all__ = ["Arm", "RunConfig", "RunOutput", "run", "run_unit"]

RECALL_KS = (5, 10, 20, 50)
SESSION_COLUMNS = (
    "arm",
    "agent",
    "store",
    "scenario",
    "trial",
    "task",
    "surface",
    "user",
    "index",
    "handed",
    "injected_chars",
    "verify_reads",
    "leaks",
    "expiry_violations",
    "agent_error",
    "tampered",
    "merged",
    "findings",
    "correct_findings",
    "expected_findings",
    "answer_correct",
    *(f"needed_at_{k}" for k in RECALL_KS),
    "bad_given",
    "bad_refused",
    "usable_given",
    "usable_refused",
    "moved_given",
    "moved_reanchored",
    "stale_use",
)


@dataclass(frozen=True)
class Arm:
    """An agent paired with a store."""

    agent: str
    store: str = "sqlite:"

    @property
    def store_label(self) -> str:
        scheme = self.store.split(":", 1)[0]
        return scheme if "://" in self.store or self.store.endswith(":") else self.store

    @property
    def name(self) -> str:
        return f"{self.agent}/{self.store_label}"


@dataclass(frozen=True)
class RunConfig:
    """What to run."""

    scenarios: tuple[Scenario, ...]
    arms: tuple[Arm, ...]
    trials: int = 1
    seed: int = 0
    workers: int = 1
    limit: int = 50
    agent_config: AgentConfig = field(default_factory=AgentConfig)
    expiry: timedelta = DEFAULT_EXPIRY
    agent_timeout: float = DEFAULT_TIMEOUT  # seconds an out-of-process agent may take per session
    agent_timeouts: tuple[tuple[str, float], ...] = ()  # per agent: (agent as given, seconds)
    base_dir: Path = field(default_factory=Path.cwd)  # what relative paths in agent commands mean

    def timeout_for(self, agent: str) -> float:
        """The session timeout of ``agent``."""
        return dict(self.agent_timeouts).get(agent, self.agent_timeout)


@dataclass
class RunOutput:
    """Rows of every table, and what they cost."""

    trials: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # units that could not run, and why


@dataclass(frozen=True)
class _Unit:
    scenario: Scenario
    trial: int
    arm: Arm
    seed: int
    limit: int
    agent_config: AgentConfig
    expiry: timedelta
    agent_timeout: float = DEFAULT_TIMEOUT
    base_dir: Path = Path()


_TEMPLATES: dict[str, Template] = {}
_PLACEHOLDERS = ("scenario", "trial", "arm")
_PER_TRIAL_SCHEMES = ("sqlite", "ranked", "agentmem")  # file stores: eval opens a fresh one per trial


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


def check_store_uri(uri: str) -> None:
    """Refuse, before anything runs, a store URI that eval could not use as given.

    A file store named by a bare scheme (``sqlite:``, ``ranked:``, ``agentmem:``) gets a fresh
    file per trial in private scratch space; one naming a path must say with ``{scenario}``,
    ``{trial}`` and ``{arm}`` how each trial's file differs, and its folder must exist.

    Raises:
        ConfigurationError: saying what to write instead.
    """
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(uri) if name is not None]
    except ValueError as exc:
        raise ConfigurationError(f"store URI {uri!r}: {exc}; use {{scenario}}, {{trial}} and {{arm}}") from exc
    unknown = sorted({n for n in names if n not in _PLACEHOLDERS})
    if unknown:
        raise ConfigurationError(
            f"store URI {uri!r} has unknown placeholder(s) {', '.join(unknown)}; known: scenario, trial, arm"
        )
    scheme, _, rest = uri.partition(":")
    if scheme.lower() not in _PER_TRIAL_SCHEMES or not rest.strip("/") or rest.endswith(":memory:"):
        return
    if not names:
        raise ConfigurationError(
            f"store URI {uri!r} names one store for every trial, and eval needs a fresh one per trial: "
            f"use '{scheme}:' (a private file per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path"
        )
    sample = Path(_format(uri, {"scenario": "s", "trial": 0, "arm": "a"}).partition(":")[2].lstrip("/"))
    folder = Path("/" + str(sample)).parent if rest.startswith("//") else sample.parent
    if "{" not in str(Path(rest).parent) and not folder.is_dir():
        raise ConfigurationError(f"store URI {uri!r}: the folder {folder} does not exist")


def _format(uri: str, values: dict[str, object]) -> str:
    return uri.format(**{k: v for k, v in values.items() if k in _PLACEHOLDERS})


def _store_factory(unit: _Unit, where: Path) -> tuple[Callable[[AccessPolicy, Clock], MemoryStore], StoreGuard]:
    """How to open the trial's store, and the guard over its files. ``where`` is private to the
    store, apart from the trial's working copy."""
    uri = unit.arm.store
    scheme, _, rest = uri.partition(":")
    guard = StoreGuard()
    if "{" in uri:
        arm = re.sub(r"\W", "_", unit.arm.name)
        uri = _format(uri, {"scenario": unit.scenario.name, "trial": unit.trial, "arm": arm})
    elif scheme in {"sqlite", "ranked"} and not rest.strip("/"):
        uri = f"{scheme}:///{where / 'store.db'}"  # a fresh file per trial
        guard = StoreGuard([where / "store.db"])
    elif scheme == "agentmem" and not rest.strip("/"):
        uri = f"agentmem:///{where / 'agent-mem'}"  # a fresh base directory per trial
        guard = StoreGuard([where / "agent-mem"])
    ids = UlidIds(f"{unit.seed}|{unit.scenario.name}|{unit.trial}")

    def make(access: AccessPolicy, clock: Clock) -> MemoryStore:
        return open_store(uri, access=access, clock=clock, expiry=unit.expiry, ids=ids)

    return make, guard


class _Shadow:
    """What the harness expects the store to hold: live memories and when they were refreshed."""

    def __init__(self, world: World) -> None:
        self.live: dict[str, Memory] = {m.id: m for ms in world.seeded.values() for m in ms}
        self.refreshed: dict[str, datetime] = {i: m.refreshed_at for i, m in self.live.items()}
        self.expired_reported: set[str] = set()


def search_query(task: Task, workspace: Workspace) -> str:
    """What an agent searches memory with: the task's words and the files it is about to touch."""
    paths = [c.path for c in task.change[:1]]
    if task.pull_request is not None:
        paths += workspace.changed(task.pull_request[1], task.pull_request[0])
    return " ".join([task.prompt, task.question, *paths]).strip()


def _retrieve(store: MemoryStore, task: Task, repo: str, limit: int, workspace: Workspace) -> list[Memory]:
    """The memories a session is handed: ``search(task)`` where the store has it, else ``recent()``."""
    actor = Actor(task.user)
    if "search" in getattr(store, "capabilities", frozenset()) and hasattr(store, "search"):
        query = search_query(task, workspace)
        found: list[Memory] = store.search(repo, query, actor=actor, surface=task.surface, limit=limit)
        return found
    return store.recent(repo, actor=actor, surface=task.surface, limit=limit)


def _true_lines(template: Template) -> dict[str, list[tuple[str, int] | None]]:
    """Where git's own diff puts each seeded citation at the evaluation ref (for re-anchoring accuracy)."""
    repo = template.codebase().repo
    truth: dict[str, list[tuple[str, int] | None]] = {}
    for seed in template.seeds:
        lines: list[tuple[str, int] | None] = []
        for cited in seed.draft.citations:
            assert not isinstance(cited, str)
            if cited.commit is None:
                lines.append(None)
                continue
            moved = repo.diff_hunks(cited.commit, template.evaluate_at).get(cited.path)
            if moved is None:
                lines.append((cited.path, cited.line))
            else:
                new_path, hunks = moved
                new_line = map_line(hunks, cited.line, rewritten=True) if new_path else None
                lines.append((new_path, new_line) if new_line is not None else None)
        truth[seed.spec.key] = lines
    return truth


def run_unit(unit: _Unit) -> RunOutput:
    """One trial of one scenario in one arm; a unit that cannot run is a failure row, never a crash."""
    try:
        return _run_unit(unit)
    except Exception as exc:  # a broken store, scenario or harness costs this unit, not the run
        out = RunOutput()
        out.failures.append(
            {
                "arm": unit.arm.name,
                "agent": unit.arm.agent,
                "store": unit.arm.store_label,
                "scenario": unit.scenario.name,
                "trial": unit.trial,
                "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                "where": "".join(traceback.format_exception(exc)[-3:])[-1500:],
            }
        )
        return out


def _work(agent: Any, session: Session) -> None:
    """Let the agent work; an agent that raises fails its own session (an ``agent_error``)."""
    try:
        agent.work(session)
    except Exception as exc:
        session.record("agent_error", "", f"the agent raised {type(exc).__name__}: {str(exc)[:300]}")


def _run_unit(unit: _Unit) -> RunOutput:
    out = RunOutput()
    started = time.perf_counter()
    template, rebuilt = _template(unit.scenario)
    scenario = unit.scenario
    trial_id = f"{scenario.name}#{unit.trial}"
    key = {
        "arm": unit.arm.name,
        "agent": unit.arm.agent,
        "store": unit.arm.store_label,
        "scenario": scenario.name,
        "trial": unit.trial,
    }
    where = Path(tempfile.mkdtemp(dir=scratch("run"), prefix="trial-"))
    store_dir = Path(tempfile.mkdtemp(dir=scratch("stores"), prefix="store-"))  # no relative path leads here
    try:
        if rebuilt:
            out.events.append(
                {
                    **key,
                    "task": "",
                    "surface": "",
                    "user": "",
                    "seq": 0,
                    "kind": "tampered",
                    "memory_id": "",
                    "detail": "the scenario's template was changed by an earlier trial; it was rebuilt",
                    "origin": "",
                    "truth": "",
                }
            )
        factory, guard = _store_factory(unit, store_dir)
        world = template.instantiate(where / "repo", factory)
        workspace = Workspace(world.path)
        agent = make_agent(unit.arm.agent, unit.agent_config, timeout=unit.agent_timeout, base_dir=unit.base_dir)
        labels = world.truth()
        key_of = {m.id: k for k, ms in world.seeded.items() for m in ms}
        chains: dict[str, str] = {}  # memory id -> seeded key (corrections inherit their origin's key)
        chains.update(key_of)
        true_lines = _true_lines(template)
        shadow = _Shadow(world)
        touched: set[str] = set()  # files the trial's merged changes edited: labels of memories citing them lapse
        store_seconds = 0.0
        for index, task in enumerate(scenario.tasks):
            world.clock.advance(task.after)
            session_key = {**key, "task": task.key, "surface": task.surface.value, "user": task.user}
            truth = {
                i: spec for i, spec in labels.items() if not touched & {c.rsplit(":", 1)[0] for c in spec.citations}
            }
            violations = _check_expiry(world, shadow, unit.expiry, out, session_key)
            t0 = time.perf_counter()
            handed = _retrieve(world.store, task, scenario.repo, unit.limit, workspace) if agent.uses_memory else []
            store_seconds += time.perf_counter() - t0
            leaks = 0
            for position, memory in enumerate(handed):
                if not entitled(world.access, memory, task.user, scenario.repo, task.surface):
                    leaks += 1
                    _event(out, session_key, "leak", memory.id, "handed to someone not entitled", truth)
                if world.clock.now() >= memory.refreshed_at + unit.expiry:
                    violations += 1
                    _event(out, session_key, "expiry_violation", memory.id, "expired memory returned", truth)
                _event(out, session_key, "retrieve", memory.id, str(position), truth)
            session = Session(
                world,
                task,
                workspace,
                handed,
                seed=f"{unit.seed}|{scenario.name}|{unit.trial}|{task.key}",
                guard=guard,
            )
            if task.surface is Surface.CODING_AGENT:
                workspace.start(f"task/{task.key}")
            t0 = time.perf_counter()
            _work(agent, session)
            agent_seconds = time.perf_counter() - t0
            row = _outcome(session, task, workspace, world)
            if row.get("merged"):
                touched |= {path for path, _, _ in session.edits}
            chains.update(session.learned)
            for event in session.events:
                if event.kind == "correct" and event.detail in chains:
                    chains[event.memory_id] = chains[event.detail]
                _event(out, session_key, event.kind, event.memory_id, event.detail, truth)
                _follow(shadow, event, world, session.actor)
            needed = [{i for i, k in chains.items() if k == need} for need in task.needs]
            handed_ids = [m.id for m in handed]
            for k in RECALL_KS:
                row[f"needed_at_{k}"] = (
                    all(any(i in chain for i in handed_ids[:k]) for chain in needed) if needed else None
                )
            row.update(_memory_judgement(session, handed, truth, true_lines, key_of, world))
            chars = sum(
                len(m.subject) + len(m.fact) + len(m.reason) + sum(len(str(c)) for c in m.citations) for m in handed
            )
            out.sessions.append(
                {
                    **session_key,
                    "index": index,
                    "handed": len(handed),
                    "injected_chars": chars,
                    "verify_reads": session.verify_reads,
                    "leaks": leaks,
                    "expiry_violations": violations,
                    "agent_error": any(e.kind == "agent_error" for e in session.events),
                    "tampered": sum(e.kind == "tampered" for e in session.events),
                    **row,
                }
            )
            for path, note in session.findings:
                expected = {f.path for f in task.findings}
                out.findings.append({**session_key, "path": path, "correct": path in expected, "note": note})
            out.timings.append({**session_key, "agent_s": agent_seconds})
        out.trials.append(
            {
                **key,
                "trial_id": trial_id,
                "sessions": len(scenario.tasks),
                "seeded": sum(len(ms) for ms in world.seeded.values()),
                "refused_seeds": len(world.refused),
                **_healing(world, labels, workspace),
            }
        )
        out.timings.append({**key, "task": "", "store_s": store_seconds, "trial_s": time.perf_counter() - started})
    finally:
        remove_tree(where)
        remove_tree(store_dir)
    return out


def _event(out: RunOutput, key: dict[str, Any], kind: str, memory_id: str, detail: str, truth: dict[str, Any]) -> None:
    spec = truth.get(memory_id)
    out.events.append(
        {
            **key,
            "seq": len(out.events),
            "kind": kind,
            "memory_id": memory_id,
            "detail": detail,
            "origin": spec.origin.value if spec else "",
            "truth": spec.truth.value if spec else "",
        }
    )


def _follow(shadow: _Shadow, event: Any, world: World, actor: Actor) -> None:
    """Keep the harness's expectation of the store in step with what the session did."""
    if event.kind in {"store", "correct"}:
        if event.kind == "correct":
            shadow.live.pop(event.detail, None)
        try:
            made = world.store.get(event.memory_id, actor=actor)
        except MemstoreError:
            return
        shadow.live[made.id] = made
        shadow.refreshed[made.id] = made.refreshed_at
    elif event.kind == "retire":
        shadow.live.pop(event.memory_id, None)
    elif event.kind == "refresh" and event.memory_id in shadow.live:
        shadow.refreshed[event.memory_id] = world.clock.now()


def _check_expiry(world: World, shadow: _Shadow, expiry: timedelta, out: RunOutput, key: dict[str, Any]) -> int:
    """Expire what the shadow says has expired; a live memory the store lost is a violation."""
    violations = 0
    now = world.clock.now()
    truth = world.truth()
    for memory_id, memory in list(shadow.live.items()):
        expired = now >= shadow.refreshed[memory_id] + expiry
        try:
            world.store.get(memory_id, actor=Actor(memory.author))
            found = True
        except NotFound:
            found = False
        except MemstoreError:
            continue
        if expired:
            if memory_id not in shadow.expired_reported:
                shadow.expired_reported.add(memory_id)
                _event(out, key, "expired", memory_id, "", truth)
            if found:
                violations += 1
                _event(out, key, "expiry_violation", memory_id, "expired memory still returned by get()", truth)
            del shadow.live[memory_id]
        elif not found and world.access.level(memory.author, memory.repo) >= 1:
            violations += 1
            _event(out, key, "expiry_violation", memory_id, "live memory lost", truth)
            del shadow.live[memory_id]
    return violations


def _outcome(session: Session, task: Task, workspace: Workspace, world: World) -> dict[str, Any]:
    if task.surface is Surface.CODING_AGENT:
        commit = workspace.commit(f"{task.prompt}\n\nTask {task.key}", when=world.clock.now(), who=task.user)
        passed = commit is not None and check_change(workspace, task)
        if passed:
            workspace.merge(f"task/{task.key}")
            session.record("merge", "", commit or "")
        else:
            workspace.abandon()
        return {"merged": passed}
    if task.surface is Surface.CODE_REVIEW:
        expected = {f.path for f in task.findings}
        correct = sum(path in expected for path, _ in session.findings)
        return {"findings": len(session.findings), "correct_findings": correct, "expected_findings": len(expected)}
    return {"answer_correct": session.answer == task.answer}


def _memory_judgement(
    session: Session,
    handed: list[Memory],
    truth: dict[str, Any],
    true_lines: dict[str, list[tuple[str, int] | None]],
    key_of: dict[str, str],
    world: World,
) -> dict[str, Any]:
    """Per session: bad and usable memories given, refused, retired, used; moved ones re-anchored right."""
    kinds: dict[str, set[str]] = {}
    reanchored: dict[str, list[tuple[str, int]]] = {}
    for event in session.events:
        kinds.setdefault(event.kind, set()).add(event.memory_id)
        if event.kind == "reanchor":
            reanchored[event.memory_id] = [
                (where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1].split("-")[0]))
                for where in event.detail.split(";")
                if where
            ]
    given = [m.id for m in handed if m.id in truth and truth[m.id].repo == world.scenario.repo]
    bad = [i for i in given if not truth[i].truth.usable]
    usable = [i for i in given if truth[i].truth.usable]
    refused = kinds.get("refuse", set()) | kinds.get("retire", set())
    moved = [i for i in given if truth[i].truth.value == "moved"]
    right = 0
    for old in moved:
        want = true_lines.get(key_of[old], [])
        right += bool(want) and all(w is not None for w in want) and reanchored.get(old) == want
    used_bad = [i for i in kinds.get("use", set()) if i in truth and not truth[i].truth.usable]
    return {
        "bad_given": len(bad),
        "bad_refused": sum(i in refused for i in bad),
        "usable_given": len(usable),
        "usable_refused": sum(i in refused for i in usable),
        "moved_given": len(moved),
        "moved_reanchored": right,
        "stale_use": bool(used_bad),
    }


def _healing(world: World, truth: dict[str, Any], workspace: Workspace) -> dict[str, int]:
    """Bad memories of the initial pool that are out of use at the end: retired, or superseded by a
    correction whose citations still point at code (the agent's own later changes may have edited it)."""
    codebase = GitCodebase(workspace.repo, workspace.head("main"))
    bad = [i for i, spec in truth.items() if not spec.truth.usable and spec.repo == world.scenario.repo]
    healed = 0
    for memory_id in bad:
        spec = truth[memory_id]
        try:
            versions = world.store.history(memory_id, actor=Actor(spec.author))
        except MemstoreError:
            continue
        head = versions[-1]
        if (head.status is Status.RETIRED and head.id == memory_id) or (
            head.id != memory_id
            and head.status is Status.ACTIVE
            and head.citations
            and all(verify_citation(codebase, c).status.readable for c in head.citations)
        ):
            healed += 1
    return {"bad_initial": len(bad), "healed": healed}


def units(config: RunConfig) -> list[_Unit]:
    """Every (scenario, trial, arm) of a run, in the order its rows are kept."""
    return [
        _Unit(
            scenario,
            trial,
            arm,
            config.seed,
            config.limit,
            config.agent_config,
            config.expiry,
            config.timeout_for(arm.agent),
            config.base_dir,
        )
        for scenario in config.scenarios
        for trial in range(config.trials)
        for arm in config.arms
    ]


def check_config(config: RunConfig) -> None:
    """Refuse, before anything runs, agents and stores that cannot be used as given.

    Raises:
        ConfigurationError: naming the agent or store and what is wrong with it.
    """
    for arm in config.arms:
        make_agent(arm.agent, config.agent_config, timeout=config.timeout_for(arm.agent), base_dir=config.base_dir)
        check_store_uri(arm.store)


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop (SIGTERM, or Ctrl-C); its workers and scratch space are gone."""


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into `Interrupted` in the main thread, so clean-up runs as for Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Interrupted(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _die_with_parent(parent: int) -> None:
    """Worker start-up: die when the process that started the run dies, however it dies.

    Linux's parent-death signal kills the worker at once; a watchdog thread polling the
    parent's id covers the rest. Ctrl-C is the parent's to handle: workers ignore it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="memstore-parent-watch", daemon=True).start()


def _run_batch(batch: list[_Unit]) -> list[RunOutput]:
    return [run_unit(unit) for unit in batch]


def _lost(unit: _Unit) -> RunOutput:
    out = RunOutput()
    out.failures.append(
        {
            "arm": unit.arm.name,
            "agent": unit.arm.agent,
            "store": unit.arm.store_label,
            "scenario": unit.scenario.name,
            "trial": unit.trial,
            "error": "the worker process running this unit died (killed, or out of memory)",
            "where": "",
        }
    )
    return out


class _Pool:
    """A spawn process pool whose workers die with the run, and can be killed at once."""

    def __init__(self, workers: int) -> None:
        # Fresh interpreters ("spawn"): a forked worker would share the parent's git readers and scratch folder.
        self.executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )

    def kill(self) -> None:
        processes = list(getattr(self.executor, "_processes", {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        self.executor.shutdown(wait=True, cancel_futures=True)


def _in_pool(
    work: list[_Unit], batches: list[list[int]], workers: int, finish: Callable[[int, RunOutput], None]
) -> list[int]:
    """Run ``batches`` (positions in ``work``) on a pool; the positions lost when a worker died."""
    lost: list[int] = []
    pool = _Pool(workers)
    try:
        futures: dict[Future[list[RunOutput]], list[int]] = {
            pool.executor.submit(_run_batch, [work[i] for i in batch]): batch for batch in batches
        }
        while futures:
            finished, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in finished:
                batch = futures.pop(future)
                try:
                    outputs = future.result()
                except BrokenProcessPool:
                    lost += batch
                    continue
                for position, output in zip(batch, outputs, strict=True):
                    finish(position, output)
    except BaseException:
        pool.kill()
        raise
    pool.executor.shutdown(wait=True)
    return lost


def run(config: RunConfig, progress: Callable[[int, int], None] | None = None) -> RunOutput:
    """Run every unit of ``config``; ``progress(done, total)`` is called as units finish.

    A unit that fails is a failure row, not a crash. A worker process that dies (killed by an
    agent, out of memory) costs only the unit it was running: the units it took down with it
    run again one at a time, and the one that kills its worker again is recorded as lost. A
    SIGTERM or Ctrl-C stops the workers and removes the scratch space before it propagates.
    """
    clean_stale()
    work = units(config)
    results: list[RunOutput] = [RunOutput()] * len(work)
    done = 0

    def finish(position: int, output: RunOutput) -> None:
        nonlocal done
        results[position] = output
        done += 1
        if progress:
            progress(done, len(work))

    try:
        with _stop_on_sigterm():
            if config.workers <= 1:
                for position, unit in enumerate(work):
                    finish(position, run_unit(unit))
            else:
                # Contiguous batches keep one scenario's trials in one process, so its template is built once there.
                size = max(1, len(work) // (config.workers * 8))
                batches = [list(range(i, min(i + size, len(work)))) for i in range(0, len(work), size)]
                lost = _in_pool(work, batches, config.workers, finish)
                for position in sorted(lost):  # again, alone: a death now names its unit
                    if _in_pool(work, [[position]], 1, finish):
                        finish(position, _lost(work[position]))
    except BaseException:
        _TEMPLATES.clear()
        release_all()  # interrupted: nothing of this run stays behind
        raise
    finally:
        clean_stale()  # the folders of workers that were killed
    return merge_outputs(results)


def merge_outputs(results: Sequence[RunOutput]) -> RunOutput:
    """One output from the outputs of units, in their order; events numbered in that order."""
    merged = RunOutput()
    for result in results:
        for name in ("trials", "sessions", "events", "findings", "timings", "failures"):
            getattr(merged, name).extend(getattr(result, name))
    for position, event in enumerate(merged.events):
        event["seq"] = position
    return merged


def iter_arms(agents: Sequence[str], stores: Sequence[str]) -> Iterator[Arm]:
    """Every agent with every store (the no-memory control only once: it reads no store)."""
    for store in stores:
        for agent in agents:
            if agent == "no-memory" and store != stores[0]:
                continue
            yield Arm(agent, store)
