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

from memstore.errors import MemstoreError
from memstore.harness.agents import AGENTS, AgentConfig
from memstore.harness.compare import compare_runs
from memstore.harness.loader import ScenarioError, load_library
from memstore.harness.metrics import OUTCOME_RATES
from memstore.harness.report import arm_label, gates, write_reports
from memstore.harness.results import check_same_scenarios, load_results, write_run
from memstore.harness.runner import RunConfig, iter_arms, run

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
        return f"{metric['value']:.3f} ({metric['k']}/{metric['n']})"
    return str(metric)


def summary_table(results: dict[str, Any]) -> Table:
    """The per-arm headline metrics."""
    columns = [*OUTCOME_RATES, "leaks", "expiry_violations"]
    table = Table(title=f"memstore eval: {results['run']['tasks']} tasks x {len(results['arms'])} arms")
    table.add_column("arm", no_wrap=True)
    for column in columns:
        table.add_column(column.replace("_", " "), overflow="fold")
    for arm, data in results["arms"].items():
        table.add_row(arm_label(arm, data), *(_fmt(data["overall"].get(c)) for c in columns))
    return table


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
    help="Stub agents' imperfections: explore, slip, heed (see README).",
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
) -> None:
    """Run agents through SCENARIOS (files or folders; the shipped library by default)."""
    try:
        library = tuple(load_library(scenarios))
        config = RunConfig(
            scenarios=library,
            arms=tuple(iter_arms(agents or DEFAULT_AGENTS, stores or (DEFAULT_STORE,))),
            trials=trials,
            seed=seed,
            workers=workers,
            limit=limit,
            agent_config=AgentConfig.parse(agent_params),
        )
    except ScenarioError as exc:
        raise click.ClickException(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
    except MemstoreError as exc:
        raise click.ClickException(str(exc)) from exc
    folder = out or Path("reports") / "runs" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-seed{seed}"
    units = len(library) * trials * len(config.arms)
    click.echo(
        f"memstore eval: {len(library)} scenarios, {sum(len(s.tasks) for s in library) * trials} tasks, "
        f"{len(config.arms)} arms, {workers} worker(s) -> {folder}",
        err=True,
    )
    update, stop = _progress_printer(units)
    started = time.perf_counter()
    try:
        output = run(config, progress=update)
    except MemstoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        stop()
    results, tables = write_run(folder, config, output, seconds=time.perf_counter() - started)
    against = None
    if baseline is not None:
        try:
            previous = load_results(baseline)
            check_same_scenarios(results, previous, force=force, what=str(baseline))
        except MemstoreError as exc:
            raise click.ClickException(str(exc)) from exc
        against = [c.to_dict() for c in compare_runs(results, previous)]
    gate_list = gates(results, against)
    write_reports(folder, results, tables, gate_list)
    Console(width=None if sys.stdout.isatty() else 200).print(summary_table(results))
    failed = [g for g in gate_list if not g.passed]
    for gate in failed:
        click.echo(f"FAILED {gate.name}: {gate.message}")
    click.echo(
        f"run folder: {folder} (report.html, report.md, junit.xml; {time.perf_counter() - started:.1f} s); "
        f"{len(gate_list) - len(failed)}/{len(gate_list)} gates passed"
    )
    if fail_on_regression and failed:
        sys.exit(1)
