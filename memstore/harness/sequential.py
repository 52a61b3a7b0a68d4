"""A sequential run (``memstore eval --sequential``): stop as soon as every gate is decided.

Sessions of a real agent cost money; most gates are decided long before the whole library ran.
The run takes its scenarios in a seeded random order (`sequential_order`), in batches that grow
by a quarter of what ran (at least `FIRST_LOOK` tasks), and after each batch computes every
gate: the effect gates (no harm, harm seen) on anytime-valid confidence sequences over the pairs
in the order they ran, the verifier's bars on the beta-binomial mixture's confidence sequence
(`memstore.harness.analysis.anytime`, `memstore.harness.analysis.sequential`), the contract's
gates as always. Those intervals hold at every look at once, so stopping at the first look where
every gate is decided keeps the gates' error rates. It also stops when ``--max-sessions`` or
``--max-cost`` is spent, or when every scenario ran. Each unit is a shard like any run's: an interrupted run resumes
and looks again at the same points, so it stops at the same one.

`evals/bench/bench_sequential.py` measures the error rates and sessions of both modes on
simulated paired outcomes with known effects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memstore.harness.analysis import RunResults, anytime_intervals, compare_within, compute, sequential_order
from memstore.harness.compose import Parts
from memstore.harness.records import ArmMeta, RunMeta
from memstore.harness.report import GateFamily, gates
from memstore.harness.run import Declared, RunConfig, RunOutput, merge_outputs
from memstore.harness.runfolder import frames_of, run_in_folder

__all__ = ["FIRST_LOOK", "Stopped", "run_sequential"]

FIRST_LOOK = 20  # tasks before the first look (later looks: a quarter more each time)


@dataclass(frozen=True)
class Stopped:
    """Where a sequential run stopped: the scenarios it ran, in order; the looks; and why."""

    order: tuple[str, ...]
    looks: int
    reason: str
    planned: int  # scenarios it could have run

    def metadata(self, output: RunOutput, arms: Mapping[str, Declared]) -> dict[str, Any]:
        """What the run's metadata keeps of it (`RunMeta.sequential`), with the intervals the
        gates decide on (``arms``: what the arms declare, their roles)."""
        roles = {name: d.role for name, d in arms.items()}
        intervals = anytime_intervals(frames_of(output)["sessions"], self.order, roles)
        return {
            "order": list(self.order),
            "looks": self.looks,
            "stopped": self.reason,
            "scenarios_planned": self.planned,
            "intervals": intervals,
        }


def run_sequential(
    config: RunConfig,
    shards: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    parts: Parts,
    arms: Mapping[str, Declared],
    retry_errors: bool = False,
) -> tuple[RunConfig, RunOutput, Stopped]:
    """Run ``config``'s scenarios in their sequential order until every gate is decided, the
    session budget is spent or every scenario ran; the config of what ran (its scenarios in the
    library's order), its rows, and where it stopped. ``parts``: the grading and the gates the
    composition root chose; ``arms``: what the arms declare (`check_config`)."""
    by_name = {s.name: s for s in config.scenarios}
    order = sequential_order(by_name, config.seed)
    per_unit = {name: len(by_name[name].tasks) * config.trials for name in order}  # tasks per scenario
    units = config.trials * len(config.arms)  # units per scenario
    ran: list[str] = []
    output, looks, reason = RunOutput(), 0, "every scenario ran"
    while len(ran) < len(order):
        batch = _batch(order, ran, per_unit)

        def shown(done: int, _: int, before: int = len(ran) * units) -> None:
            if progress:
                progress(before + done, len(order) * units)

        left = None if config.max_cost is None else config.max_cost - _spent(output)
        part = replace(config, scenarios=tuple(by_name[n] for n in batch), max_cost=left)
        found = run_in_folder(part, shards, shown, grading=parts.grading, retry_errors=retry_errors)
        output = merge_outputs([output, found])
        ran += batch
        looks += 1
        if config.max_sessions and len(output.sessions) >= config.max_sessions:
            reason = f"--max-sessions {config.max_sessions} spent ({len(output.sessions)} sessions)"
            break
        if config.max_cost is not None and _spent(output) >= config.max_cost:
            reason = f"--max-cost {config.max_cost:g} spent (${_spent(output):.2f})"
            break
        if len(ran) < len(order) and _decided(config, output, ran, arms, parts.gates):
            reason = f"every gate decided after {looks} look(s)"
            break
    kept = set(ran)
    final = replace(config, scenarios=tuple(s for s in config.scenarios if s.name in kept))
    return final, output, Stopped(tuple(ran), looks, reason, len(order))


def _spent(output: RunOutput) -> float:
    """What the run's agents reported spending, in US dollars."""
    return sum(session.spent.cost_usd for session in output.sessions)


def _batch(order: list[str], ran: list[str], per_unit: dict[str, int]) -> list[str]:
    """The next scenarios to run: at least `FIRST_LOOK` tasks, or a quarter of what ran."""
    want = max(FIRST_LOOK, sum(per_unit[n] for n in ran) // 4)
    batch: list[str] = []
    for name in order[len(ran) :]:
        batch.append(name)
        if sum(per_unit[n] for n in batch) >= want:
            break
    return batch


def _decided(
    config: RunConfig, output: RunOutput, ran: list[str], arms: Mapping[str, Declared], families: Sequence[GateFamily]
) -> bool:
    """Whether every gate of the rows so far is decided, on anytime-valid intervals."""
    frames = frames_of(output)
    roles = {name: d.role for name, d in arms.items()}
    stopped = Stopped(tuple(ran), 0, "", len(config.scenarios))
    run = RunMeta(
        tasks=len(frames["sessions"]) // max(len(config.arms), 1),
        arms=tuple(
            ArmMeta(name, verifies=d.verifies, extra=dict.fromkeys(sorted(d.declares), True))
            for name, d in arms.items()
        ),
        sequential=stopped.metadata(output, arms),
    )
    results = RunResults(run, compute(frames, roles), tuple(compare_within(frames, seed=config.seed)))
    return all(g.decided for g in gates(results, families=families))
