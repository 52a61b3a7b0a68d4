"""The one pipeline: check, build, run, write, compare, gate, report.

`memstore eval`, the pytest plugin and the tests all call `evaluate`, so a run means the
same thing wherever it starts::

    from memstore.harness.evaluate import evaluate
    from memstore.harness.run.runner.pool import RunConfig, iter_arms
    from memstore.harness.scenarios import load_library

    config = RunConfig(scenarios=tuple(load_library()), arms=tuple(iter_arms(["no-memory", "jit-verify"], ["sqlite:"])))
    evaluation = evaluate(config, Path("reports/runs/mine"))
    evaluation.results.arms["jit-verify/sqlite"].rate("merge_rate")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from memstore.errors import OutputError
from memstore.harness.analysis import Comparison, RunResults, compare_runs
from memstore.harness.compose import Parts, choose
from memstore.harness.records import FailureRecord, RunMeta
from memstore.harness.report import Decision, Gate, decide, gates, write_reports
from memstore.harness.run import Declared, RunConfig, RunOutput, check_config, declared
from memstore.harness.runfolder import (
    Baseline,
    RunFolder,
    check_same_scenarios,
    hold,
    load_baseline,
    run_in_folder,
    write_run,
)
from memstore.harness.scenarios import ScenarioError, scenario_set_hash, scenarios_dir
from memstore.harness.sequential import run_sequential
from memstore.harness.world import check_labels

__all__ = ["Evaluation", "Progress", "assemble", "evaluate", "evaluate_folder", "merge_folders", "run_part"]

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stage ``"build"`` while worlds are built, then ``"run"`` per unit."""


@dataclass(frozen=True)
class Evaluation:
    """A finished run: what it was, what it measured, and where it is.

    Attributes:
        config: what ran.
        results: the metrics and the paired comparisons (as ``results.json`` holds them).
        tables: the tables behind them (sessions, events, trials, findings, failures).
        gates: every gate of the run, with what it decided.
        baseline: the comparisons with the baseline, when one was given.
        failures: units that could not run, and why.
        folder: the run folder.
        seconds: how long the run took.
    """

    config: RunConfig
    results: RunResults
    tables: dict[str, pd.DataFrame]
    gates: list[Gate]
    baseline: list[Comparison]
    failures: list[FailureRecord]
    folder: Path
    seconds: float

    @property
    def failed(self) -> list[Gate]:
        return [g for g in self.gates if g.failed]

    @property
    def undecided(self) -> list[Gate]:
        """The gates the sample could not decide (inconclusive, not exercised)."""
        return [g for g in self.gates if not g.decided]

    @property
    def decision(self) -> Decision:
        """PASS, FAIL or UNDECIDED (`memstore.harness.report.gate.decide`)."""
        return decide(self.gates)

    @property
    def measured_nothing(self) -> bool:
        """An integrity gate failed: some arm measured nothing."""
        return any(g.integrity for g in self.failed)


def _checkout_secrets() -> set[Path]:
    """When memstore runs from its own checkout: the parts of it that hold grading data in
    another form (git's object store has every scenario file; reports/ the default run's
    drill-down; evals/ the populations' parameters; tests/ the outcomes expected of the
    library's scenarios)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / ".git").exists():
        return set()
    return {p for p in (root / ".git", root / "reports", root / "evals", root / "tests") if p.exists()}


def kept_apart(config: RunConfig, out: Path) -> RunConfig:
    """``config`` with what agents must not read named (the run folder, the scenario library, the
    run's scenario files) and session transcripts kept in ``out/transcripts``."""
    files = {Path(s.source).resolve() for s in config.scenarios if s.source}
    hidden = {out.resolve(), scenarios_dir().resolve(), *files, *_checkout_secrets()}
    runtime = replace(
        config.runtime,
        hidden=tuple(sorted({*config.runtime.hidden, *hidden})),
        transcripts=out.resolve() / "transcripts",
    )
    return replace(config, runtime=runtime)


def _checked(
    config: RunConfig, out: Path, baseline: Baseline | None, force: bool, progress: Progress | None
) -> tuple[RunConfig, dict[str, Declared]]:
    """``config`` kept apart from its agents, after everything that can be refused was refused;
    what its arms declare (`check_config`: each agent made once, each store opened once)."""
    config = kept_apart(config, out)
    arms = check_config(config)
    if baseline is not None:
        check_same_scenarios(
            RunMeta(scenario_set_hash=scenario_set_hash(config.scenarios)),
            baseline.results.run,
            force=force,
            what="the baseline",
        )
    problems = check_labels(config.scenarios, progress=(lambda d, t: progress("build", d, t)) if progress else None)
    if problems:
        raise ScenarioError(problems)
    return config, arms


def evaluate(
    config: RunConfig,
    out: Path,
    *,
    baseline: Baseline | None = None,
    force: bool = False,
    progress: Progress | None = None,
    retry_errors: bool = False,
    starting: Callable[[RunConfig], None] | None = None,
    parts: Parts | None = None,
) -> Evaluation:
    """Run ``config`` and write its run folder ``out`` (shards, tables, results.json, reports).

    Each unit is written to ``out/shards`` as it finishes, and units whose shards are already
    there are not run again (with ``retry_errors``, those that failed for infrastructure reasons
    are). Everything that can be refused is refused before any unit runs: agents and stores that
    cannot be used, a baseline of another scenario set (unless ``force``), scenarios whose truth
    labels do not hold on the repository they build. ``starting(config)`` is called then, before
    the first unit runs (the command writes the run's manifest there). The folder is held
    throughout (`memstore.harness.runfolder.lock`): another process using it is refused.
    ``parts``: the grading and the gates (`memstore.harness.compose.choose` by default), handed
    down to the stages that use them, with what the arms declared.

    Raises:
        ConfigurationError: an agent, a store or a baseline that cannot be used.
        RunFolderError: ``out`` is in use by another process.
        ScenarioError: a scenario that does not build as its labels say.
    """
    parts = parts or choose()
    with hold(out):
        config, arms = _checked(config, out, baseline, force, progress)
        if starting is not None:
            starting(config)
        started = time.perf_counter()
        shown = (lambda d, t: progress("run", d, t)) if progress else None
        if config.sequential:
            config, output, stopped = run_sequential(
                config, out / "shards", shown, parts=parts, arms=arms, retry_errors=retry_errors
            )
            seconds = time.perf_counter() - started
            found = stopped.metadata(output, arms)
            return assemble(config, out, output, seconds, arms=arms, parts=parts, baseline=baseline, sequential=found)
        whole: RunOutput = run_in_folder(
            config, out / "shards", shown, grading=parts.grading, retry_errors=retry_errors
        )
        seconds = time.perf_counter() - started
        return assemble(config, out, whole, seconds, arms=arms, parts=parts, baseline=baseline)


def evaluate_folder(
    run: RunFolder,
    *,
    baseline: Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
    retry_errors: bool = False,
) -> Evaluation:
    """`evaluate` the run of a folder `RunFolder.claim` opened, gated against the run folder (or
    ``results.json``) ``baseline``; a new run's manifest is written once everything was checked.

    Raises:
        ConfigurationError: a baseline that cannot be read, before anything runs; and as `evaluate`.
    """
    previous = load_baseline(baseline) if baseline is not None else None
    return evaluate(
        run.config,
        run.path,
        baseline=previous,
        force=force,
        progress=progress,
        retry_errors=retry_errors,
        starting=lambda _: run.begin(),
    )


def run_part(
    run: RunFolder, part: tuple[int, int], *, progress: Progress | None = None, retry_errors: bool = False
) -> RunOutput:
    """Run the ``part=(k, n)``-th of the units of ``run`` into its shards (for several machines:
    `merge_folders` assembles the parts); its rows."""
    with hold(run.path):
        config, _ = _checked(run.config, run.path, None, False, progress)
        run.begin()
        return run_in_folder(
            config,
            run.shards,
            (lambda d, t: progress("run", d, t)) if progress else None,
            grading=choose().grading,
            retry_errors=retry_errors,
            part=part,
        )


def merge_folders(parts: list[Path], out: Path, *, overwrite: bool = False) -> Evaluation:
    """One run in ``out`` from the shards of ``parts`` (`RunFolder.merged`), with its tables,
    results and reports, as `evaluate` would have written them.

    Raises:
        RunFolderError: folders that cannot be merged (`RunFolder.merged`); OutputError as `assemble`.
    """
    with RunFolder.merged(parts, out, overwrite=overwrite) as (merged, output):
        return assemble(merged.config, merged.path, output, 0.0)


def assemble(
    config: RunConfig,
    out: Path,
    output: RunOutput,
    seconds: float,
    *,
    arms: Mapping[str, Declared] | None = None,
    parts: Parts | None = None,
    baseline: Baseline | None = None,
    sequential: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Write the run folder's tables, results.json (with ``sequential`` in its metadata) and reports
    from the units' rows. ``arms``: what the arms declared when the run was checked (declared
    here again when not given: a merge); ``parts``: the gates (`choose` by default).

    Raises:
        OutputError: a file could not be written (a full disk); each is whole, the one before or the new one.
    """
    try:
        arms = arms if arms is not None else declared(config)
        results, tables = write_run(out, config, output, arms=arms, seconds=seconds, sequential=sequential)
        against = []
        if baseline is not None:
            against = compare_runs(
                results, baseline.results, current_sessions=tables["sessions"], baseline_sessions=baseline.sessions
            )
        gate_list = gates(results, against, families=(parts or choose()).gates)
        write_reports(out, results, tables, gate_list)
    except OSError as exc:
        where = f" ({Path(exc.filename).name})" if exc.filename else ""
        raise OutputError(
            f"could not write the run folder {out}: {exc.strerror or exc}{where}; no file in it is cut short, "
            f"and its shards are kept: `memstore eval --resume {out}` writes it again"
        ) from exc
    return Evaluation(config, results, tables, gate_list, against, output.failures, out, seconds)
