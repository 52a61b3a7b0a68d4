"""``memstore eval``: run agents through scenarios against stores, and write the run folder."""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memstore.commands._shared import CommandError, console, plain
from memstore.errors import ConfigurationError
from memstore.harness.analysis.compare import compare_runs
from memstore.harness.analysis.results import TABLES, check_same_scenarios, load_results, metadata, write_run
from memstore.harness.loader import ScenarioError, load_library
from memstore.harness.report import arm_label, gates, simulation_notes, write_reports
from memstore.harness.run.agents import AGENTS, AgentConfig
from memstore.harness.run.runner import RunConfig, check_config, iter_arms, run

__all__ = ["eval_command"]

DEFAULT_AGENTS = tuple(AGENTS)
DEFAULT_STORE = "sqlite:"


def _progress_printer(total_hint: int) -> tuple[Any, Any]:
    """A rich progress bar on a terminal; plain lines (every 10%) elsewhere, such as CI logs."""
    if sys.stderr.isatty():
        progress = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        progress.start()
        job = progress.add_task("trials", total=total_hint)

        def update(done: int, total: int) -> None:
            progress.update(job, completed=done, total=total)

        return update, progress.stop
    last = [-1]

    def plain(done: int, total: int) -> None:
        step = done * 10 // max(total, 1)
        if step != last[0]:
            last[0] = step
            click.echo(f"eval: {done}/{total} trials", err=True)

    return plain, lambda: None


def _fmt(metric: Any) -> str:
    if metric is None:
        return "-"
    if isinstance(metric, dict):
        return f"{metric['value']:.3f}"
    return str(metric)


SUMMARY = {  # column: header, short enough for one line on a terminal
    "task_success_rate": "success",
    "merge_rate": "merge",
    "review_precision": "review P",
    "review_recall": "review R",
    "answer_accuracy": "answer",
    "harm_rate": "harm",
    "rescue_rate": "rescue",
    "stale_use_rate": "stale use",
    "detection_recall": "detect",
    "false_invalidation_rate": "false inv.",
    "self_heal_rate": "heal",
    "leaks": "leaks",
    "expiry_violations": "expiry",
    "agent_error_rate": "errors",
}


def summary_table(results: dict[str, Any]) -> Table:
    """The per-arm headline metrics (counts and intervals are in report.md and results.json)."""
    table = Table(title=f"memstore eval: {results['run']['tasks']} tasks x {len(results['arms'])} arms")
    table.add_column("arm", no_wrap=True)
    for header in SUMMARY.values():
        table.add_column(header, justify="right", no_wrap=True)
    for arm, data in results["arms"].items():
        table.add_row(plain(arm_label(arm, data)), *(plain(_fmt(data["overall"].get(c))) for c in SUMMARY))
    return table


def _timeouts(values: tuple[str, ...]) -> tuple[float, tuple[tuple[str, float], ...]]:
    """``--agent-timeout`` values: ``SECONDS`` for every agent, ``AGENT=SECONDS`` for one."""
    default, per_agent = None, []
    for value in values:
        agent, _, seconds = value.rpartition("=") if "=" in value else ("", "", value)
        try:
            number = float(seconds)
        except ValueError as exc:
            raise click.BadParameter(f"{value!r}: give SECONDS or AGENT=SECONDS", param_hint="--agent-timeout") from exc
        if not 0 < number <= 86_400:
            raise click.BadParameter(f"{value!r}: seconds from 0 to 86400", param_hint="--agent-timeout")
        if agent:
            per_agent.append((agent, number))
        else:
            default = number
    from memstore.harness.run.command import DEFAULT_TIMEOUT

    return (default if default is not None else DEFAULT_TIMEOUT), tuple(per_agent)


_RUN_FILES = {"results.json", "timings.json", "report.html", "report.md", "report.json", "junit.xml"} | {
    f"{name}.csv" for name in TABLES
}


def _prepare_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a folder that already holds something, unless told to replace a run folder."""
    if not folder.exists() or not any(folder.iterdir()):
        return
    if not overwrite:
        raise CommandError(f"the run folder {folder} is not empty; pass --overwrite to replace it, or another --out")
    strangers = sorted(p.name for p in folder.iterdir() if p.name not in _RUN_FILES)
    if strangers:
        raise CommandError(
            f"{folder} does not look like a run folder (it holds {', '.join(strangers[:5])}); not overwriting it"
        )
    for name in _RUN_FILES:
        (folder / name).unlink(missing_ok=True)


@click.command(name="eval")
@click.argument("scenarios", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--store", "stores", multiple=True, help=f"Store URI; repeat to compare. Default: {DEFAULT_STORE}")
@click.option(
    "--agent", "agents", multiple=True, help="no-memory, trusting, jit-verify, or command:CMD. Default: all three."
)
@click.option("--trials", type=click.IntRange(1, 10_000), default=1, show_default=True, help="Trials per scenario.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed: the same seed gives the same results.")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=lambda: min(os.cpu_count() or 1, 8),
    show_default="the number of CPUs, at most 8",
    help="Processes (results do not depend on it).",
)
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Memories handed per session."
)
@click.option(
    "--agent-param",
    "agent_params",
    multiple=True,
    metavar="NAME=VALUE",
    help='The stub agents\' exploration budget: searches, reads, learn (see README, "The stub agents").',
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run folder. Default: reports/runs/<time>-seed<S>.",
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A results.json to compare with (e.g. reports/baseline.json): regressions become failed gates.",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a gate fails: a significant regression against --baseline, a leak, an expiry violation.",
)
@click.option("--force", is_flag=True, help="Compare with a baseline of another scenario set anyway.")
@click.option(
    "--agent-timeout",
    "agent_timeouts",
    multiple=True,
    metavar="[AGENT=]SECONDS",
    help="Time a command agent may take per session (default 600); AGENT=SECONDS for one agent.",
)
@click.option("--overwrite", is_flag=True, help="Replace the run folder named by --out if it holds an earlier run.")
def eval_command(
    scenarios: tuple[Path, ...],
    stores: tuple[str, ...],
    agents: tuple[str, ...],
    trials: int,
    seed: int,
    workers: int,
    limit: int,
    agent_params: tuple[str, ...],
    out: Path | None,
    baseline: Path | None,
    fail_on_regression: bool,
    force: bool,
    agent_timeouts: tuple[str, ...],
    overwrite: bool,
) -> None:
    """Run agents through SCENARIOS (files or folders; the shipped library by default).

    Exit status: 0 when the run is done; 1 when a gate failed and --fail-on-regression was
    given, or when an arm measured nothing (its agent failed every session, units could not
    run, or its store was changed behind the harness's back); 2 for a usage or configuration
    error, before anything runs.
    """
    timeout, per_agent = _timeouts(agent_timeouts)
    try:
        library = tuple(load_library(scenarios))
    except ScenarioError as exc:
        raise CommandError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
    config = RunConfig(
        scenarios=library,
        arms=tuple(iter_arms(agents or DEFAULT_AGENTS, stores or (DEFAULT_STORE,))),
        trials=trials,
        seed=seed,
        workers=workers,
        limit=limit,
        agent_config=AgentConfig.parse(agent_params),
        agent_timeout=timeout,
        agent_timeouts=per_agent,
        base_dir=Path.cwd(),
    )
    unknown = sorted({agent for agent, _ in per_agent} - {arm.agent for arm in config.arms})
    if unknown:
        raise ConfigurationError(f"--agent-timeout names agent(s) not in this run: {', '.join(unknown)}")
    check_config(config)
    folder = out or Path("reports") / "runs" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-seed{seed}"
    _prepare_folder(folder, overwrite)
    units = len(library) * trials * len(config.arms)
    click.echo(
        f"memstore eval: {len(library)} scenarios, {sum(len(s.tasks) for s in library) * trials} tasks, "
        f"{len(config.arms)} arms, {workers} worker(s) -> {folder}",
        err=True,
    )
    previous = None
    if baseline is not None:  # read before the run: a bad baseline is refused before hours of work
        previous = load_results(baseline)
        check_same_scenarios({"run": metadata(config)}, previous, force=force, what=str(baseline))
    update, stop = _progress_printer(units)
    started = time.perf_counter()
    try:
        output = run(config, progress=update)
    finally:
        stop()
    results, tables = write_run(folder, config, output, seconds=time.perf_counter() - started)
    against = None
    if previous is not None:
        against = [c.to_dict() for c in compare_runs(results, previous)]
    gate_list = gates(results, against)
    write_reports(folder, results, tables, gate_list)
    console(width=200).print(summary_table(results))
    for note in simulation_notes(results)[:1]:  # the stub agents; populations are in the reports
        click.echo(f"Note: {note}")
    failed = [g for g in gate_list if not g.passed]
    for gate in failed:
        click.echo(f"FAILED {gate.name}: {gate.message}")
    for failure in output.failures[:5]:
        click.echo(f"unit failed: {failure['arm']} {failure['scenario']}#{failure['trial']}: {failure['error']}")
    click.echo(
        f"run folder: {folder} (report.html, report.md, junit.xml; {time.perf_counter() - started:.1f} s); "
        f"{len(gate_list) - len(failed)}/{len(gate_list)} gates passed"
    )
    if any(g.integrity for g in failed) or (fail_on_regression and failed):
        sys.exit(1)
