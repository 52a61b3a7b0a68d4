"""The inspect task: memstore's scenarios, played by a solver, graded by memstore from the world.

    inspect eval memstore/memstore_task --model openai/gpt-4.1-mini -T scenarios=api-version-moved
    inspect eval memstore/memstore_task --model mockllm/model -T agent=jit-verify --epochs 3

`memstore_task` is one sample a scenario (`memstore.inspect.samples`), one epoch a trial. Its
solver, `play`, builds the scenario's world (a git repository and a seeded store) and plays its
sessions in order through memstore's trial loop, keeping the world; its scorer,
`memstore_scorer`, grades the trial with memstore's own grading, from the world the sessions left,
after the sample ran (`memstore.inspect.deferred`), and the task's clean-up removes the world.

Who works the sessions is the seam. ``agent="inspect"`` (the default) is inspect's model: each
session solved by ``session_solver`` (`memstore.inspect.sessions.tool_loop` unless given: any
inspect solver, or a registered solver's name) with the session's code, memory and ``finish``
tools. Any other ``agent`` is a memstore agent spec (``jit-verify``, ``llm:MODEL``,
``command:...``, ``package.module:factory``), which needs no model of inspect's.

The score is the share of the scenario's tasks that succeeded (1.0: every one), and its metadata
holds memstore's rows of the trial (sessions, trial, events, findings), which ``memstore compare``
reads back from the log (`memstore.inspect.logs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import lru_cache
from typing import Any

import anyio.to_thread
from inspect_ai import Task, task
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import registry_create, registry_info

from memstore.harness.records import row
from memstore.harness.run import AgentRuntime, Arm, RunOutput, Unit
from memstore.harness.scenarios import Scenario, scenario_set_hash
from memstore.inspect.deferred import SCHEME, KeptTrial
from memstore.inspect.logs import ROWS
from memstore.inspect.samples import load_scenarios, scenario_dataset
from memstore.inspect.sessions import SolverAgent, tool_loop

__all__ = ["memstore_scorer", "memstore_task", "play"]

TABLES = ("sessions", "trials", "events", "findings")
_TRIALS: dict[str, KeptTrial] = {}  # by the sample's uuid: played, not graded yet


@lru_cache(maxsize=8)
def _library(given: tuple[str, ...] | None) -> dict[str, Scenario]:
    return {s.name: s for s in load_scenarios(given)}


def _key(scenarios: str | Sequence[str] | None) -> tuple[str, ...] | None:
    return None if scenarios is None else (scenarios,) if isinstance(scenarios, str) else tuple(scenarios)


def _session_solver(given: Solver | str | None, steps: int) -> Solver:
    if given is None:
        return tool_loop(steps)
    return registry_create("solver", given) if isinstance(given, str) else given


@solver
def play(
    scenarios: str | Sequence[str] | None = None,
    agent: str = SCHEME,
    store: str = "sqlite:",
    memory: bool = True,
    session_solver: Solver | str | None = None,
    seed: int = 0,
    limit: int = 50,
    expiry_days: float = 28.0,
    steps: int = 30,
) -> Solver:
    """Play the sample's scenario, one trial (its epoch), keeping its world for `memstore_scorer`.

    Args:
        scenarios: the scenarios the samples are of (as `memstore_task` takes them).
        agent: ``inspect`` for inspect's model, or a memstore agent spec.
        store: the store URI each trial's store is opened from (``sqlite:`` is a fresh SQLite store).
        memory: for ``inspect``: False hands nothing and gives no memory tools (the control).
        session_solver: for ``inspect``: the solver of each session (default: `tool_loop`).
        seed: memstore's run seed (the agents' random streams, the stores' ids).
        limit: memories a store hands a session at most.
        expiry_days: days after which an unrefreshed memory expires.
        steps: for the default session solver: model calls a session may make.
    """
    each = _session_solver(session_solver, steps) if agent == SCHEME else None

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = _library(_key(scenarios)).get(str(state.sample_id))
        if scenario is None:
            raise RuntimeError(f"sample {state.sample_id!r} is not a scenario of this task's scenarios")
        inspected = f"{SCHEME}:{state.model}" + ("" if memory else "?memory=false")
        arm = Arm(inspected if each is not None else agent, store)
        unit = Unit(scenario, state.epoch - 1, arm, seed, limit, timedelta(days=expiry_days), AgentRuntime())
        player = SolverAgent(each, state, generate, memory=memory) if each is not None else None
        kept = KeptTrial(unit)
        try:
            await anyio.to_thread.run_sync(kept.play, player)
        finally:
            _TRIALS[state.uuid] = kept  # the scorer grades it, or the clean-up removes it (a sample cut short)
        if player is not None:
            state.messages, state.tools = player.messages, []  # every session's conversation; its tools are gone
        return state

    return solve


def _score_of(out: RunOutput) -> Score:
    """A trial's score: the share of its tasks that succeeded (a session that did not run for an
    infrastructure reason aside), with memstore's rows in its metadata."""
    done = [(s.task, s.outcome.task_success) for s in out.sessions if s.outcome.task_success is not None]
    value = sum(bool(ok) for _, ok in done) / len(done) if done else 0.0
    return Score(
        value=value,
        answer=f"{sum(bool(ok) for _, ok in done)}/{len(done)} tasks succeeded",
        explanation="\n".join(f"{key}: {'succeeded' if ok else 'failed'}" for key, ok in done) or "no session ran",
        metadata={ROWS: {name: [row(r) for r in getattr(out, name)] for name in TABLES}},
    )


@scorer(metrics=[mean(), stderr()])
def memstore_scorer() -> Scorer:
    """Grade the trial `play` played, with memstore's grading, from its world; then remove the world."""

    async def score(state: TaskState, target: Target) -> Score:
        kept = _TRIALS.pop(state.uuid, None)
        if kept is None:
            raise RuntimeError(
                f"sample {state.sample_id!r} has no trial to grade: memstore_scorer grades what the play "
                "solver played (to plug in a solver of your own, give it as memstore_task(session_solver=...), "
                "not as inspect's --solver)"
            )
        try:
            out = await anyio.to_thread.run_sync(kept.grade)
        finally:
            await anyio.to_thread.run_sync(kept.close)
        return _score_of(out)

    return score


async def _clean_up(state: TaskState) -> None:
    """A world the scorer did not grade (no scoring, or an error before it) goes all the same."""
    kept = _TRIALS.pop(state.uuid, None)
    if kept is not None:
        await anyio.to_thread.run_sync(kept.close)


def _memstore_task(
    scenarios: str | Sequence[str] | None = None,
    agent: str = SCHEME,
    store: str = "sqlite:",
    memory: bool = True,
    session_solver: Solver | str | None = None,
    seed: int = 0,
    limit: int = 50,
    expiry_days: float = 28.0,
    steps: int = 30,
) -> Task:
    """memstore's scenarios as an inspect task (see the module docstring; `play` names each parameter)."""
    chosen = tuple(_library(_key(scenarios)).values())
    settings: dict[str, Any] = {"agent": agent, "store": store, "memory": memory, "seed": seed, "limit": limit}
    return Task(
        dataset=scenario_dataset(chosen),
        solver=play(scenarios, agent, store, memory, session_solver, seed, limit, expiry_days, steps),
        scorer=memstore_scorer(),
        cleanup=_clean_up,
        metadata={ROWS: {"scenario_set_hash": scenario_set_hash(chosen), **settings}},
    )


memstore_task = task(name="memstore_task")(_memstore_task)
if "/" not in registry_info(memstore_task).name:  # an editable install: inspect names it without its package
    task(name="memstore/memstore_task")(_memstore_task)  # so ``inspect eval memstore/memstore_task`` finds it too
