"""The one pipeline: check, build, run, write, compare, gate, report.

`memstore eval`, the pytest plugin and the tests all call `evaluate`, so a run means the
same thing wherever it starts::

    from memstore.harness.evaluate import evaluate
    from memstore.harness.run.runner import RunConfig, iter_arms
    from memstore.harness.scenarios import load_library

    config = RunConfig(scenarios=tuple(load_library()), arms=tuple(iter_arms(["no-memory", "jit-verify"], ["sqlite:"])))
    evaluation = evaluate(config, Path("reports/runs/mine"))
    evaluation.results.arms["jit-verify/sqlite"].rate("merge_rate")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from memstore.harness.analysis.compare import Comparison, compare_runs
from memstore.harness.analysis.model import RunResults
from memstore.harness.analysis.results import check_same_scenarios, metadata, write_run
from memstore.harness.report import Gate, gates, write_reports
from memstore.harness.run.output import RunOutput
from memstore.harness.run.runner import RunConfig, check_config, run
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import ScenarioError, check_labels

__all__ = ["Evaluation", "Progress", "evaluate"]

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stage ``"build"`` while worlds are built, then ``"run"`` per unit."""


@dataclass(frozen=True)
class Evaluation:
    """A finished run: what it was, what it measured, and where it is.

    Attributes:
        config: what ran.
        results: the metrics and the paired comparisons (as ``results.json`` holds them).
        tables: the tables behind them (sessions, events, trials, findings, failures).
        gates: every gate of the run, passed or not.
        baseline: the comparisons with the baseline, when one was given.
        failures: units that could not run, as rows.
        folder: the run folder.
        seconds: how long the run took.
    """

    config: RunConfig
    results: RunResults
    tables: dict[str, pd.DataFrame]
    gates: list[Gate]
    baseline: list[Comparison]
    failures: list[dict[str, object]]
    folder: Path
    seconds: float

    @property
    def failed(self) -> list[Gate]:
        return [g for g in self.gates if not g.passed]

    @property
    def measured_nothing(self) -> bool:
        """An integrity gate failed: some arm measured nothing."""
        return any(g.integrity for g in self.failed)


def kept_apart(config: RunConfig, out: Path) -> RunConfig:
    """``config`` with what agents must not read named (the run folder, the scenario library, the
    run's scenario files) and session transcripts kept in ``out/transcripts``."""
    files = {Path(s.source).resolve() for s in config.scenarios if s.source}
    hidden = {out.resolve(), scenarios_dir().resolve(), *files}
    runtime = replace(
        config.runtime,
        hidden=tuple(sorted({*config.runtime.hidden, *hidden})),
        transcripts=out.resolve() / "transcripts",
    )
    return replace(config, runtime=runtime)


def evaluate(
    config: RunConfig,
    out: Path,
    *,
    baseline: RunResults | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> Evaluation:
    """Run ``config`` and write its run folder ``out`` (tables, results.json, reports).

    Everything that can be refused is refused before any unit runs: agents and stores that
    cannot be used, a baseline of another scenario set (unless ``force``), scenarios whose
    truth labels do not hold on the repository they build.

    Raises:
        ConfigurationError: an agent, a store or a baseline that cannot be used.
        ScenarioError: a scenario that does not build as its labels say.
    """
    config = kept_apart(config, out)
    check_config(config)
    if baseline is not None:
        check_same_scenarios(metadata(config), baseline.run, force=force, what="the baseline")
    problems = check_labels(config.scenarios, progress=(lambda d, t: progress("build", d, t)) if progress else None)
    if problems:
        raise ScenarioError(problems)
    started = time.perf_counter()
    output: RunOutput = run(config, progress=(lambda d, t: progress("run", d, t)) if progress else None)
    seconds = time.perf_counter() - started
    results, tables = write_run(out, config, output, seconds=seconds)
    against = compare_runs(results, baseline) if baseline is not None else []
    gate_list = gates(results, against)
    write_reports(out, results, tables, gate_list)
    return Evaluation(config, results, tables, gate_list, against, output.failures, out, seconds)
