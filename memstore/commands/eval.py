"""``memstore eval``: run agents through scenarios against stores, and write the run folder.

A thin layer over `memstore.harness.evaluate.evaluate`: it parses the options, shows progress
(a bar with the time left on a terminal, a line every 10% elsewhere), prints the summary and
sets the exit status.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memstore.commands._shared import CommandError, console, plain
from memstore.errors import ConfigurationError, ScenarioError
from memstore.harness.analysis.results import TABLES, load_results
from memstore.harness.evaluate import evaluate
from memstore.harness.report.terminal import print_summary
from memstore.harness.run.agents import BUILT_IN, AgentConfig
from memstore.harness.run.runner import RunConfig, iter_arms
from memstore.harness.scenarios.loader import load_library

__all__ = ["eval_command"]

DEFAULT_AGENTS = BUILT_IN
DEFAULT_STORE = "sqlite:"
_STAGES = {"build": "building worlds", "run": "trials"}


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar with the time left on a terminal; plain lines (every 10%) elsewhere, such as CI logs."""
    if sys.stderr.isatty():
        bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        jobs: dict[str, object] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in jobs:
                jobs[stage] = bar.add_task(_STAGES.get(stage, stage), total=total)
            bar.update(jobs[stage], completed=done, total=total)  # type: ignore[arg-type]

        with bar:
            yield update
        return
    last: dict[str, int] = {}

    def plain(stage: str, done: int, total: int) -> None:
        step = done * 10 // max(total, 1)
        if last.get(stage) != step:
            last[stage] = step
            click.echo(f"eval: {done}/{total} {_STAGES.get(stage, stage)}", err=True)

    yield plain


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
    from memstore.harness.run.sandbox import DEFAULT_TIMEOUT

    return (default if default is not None else DEFAULT_TIMEOUT), tuple(per_agent)


_RUN_FILES = {"results.json", "timings.json", "report.html", "report.md", "report.json", "junit.xml"} | {
    f"{name}.{ext}" for name in TABLES for ext in ("csv", "csv.gz")
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


def _config(
    scenarios: tuple[Path, ...],
    stores: tuple[str, ...],
    agents: tuple[str, ...],
    trials: int,
    seed: int,
    workers: int,
    limit: int,
    agent_params: tuple[str, ...],
    agent_timeouts: tuple[str, ...],
    isolation: tuple[str, str, tuple[str, ...]] = ("auto", "none", ()),
    max_cost: float | None = None,
) -> RunConfig:
    """The run the options describe (scenarios loaded and checked as files)."""
    from memstore.harness.run.sandbox import AgentRuntime, Network, SandboxMode

    timeout, per_agent = _timeouts(agent_timeouts)
    sandbox, network, env_names = isolation
    missing = [name for name in env_names if name not in os.environ]
    if missing:
        raise ConfigurationError(f"--agent-env names variables this environment does not set: {', '.join(missing)}")
    runtime = AgentRuntime(
        timeout=timeout,
        base_dir=Path.cwd(),
        sandbox=SandboxMode(sandbox),
        network=Network(network),
        env=tuple(env_names),
    )
    try:
        library = tuple(load_library(scenarios))
    except ScenarioError as exc:
        raise CommandError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
    agent_config = AgentConfig.parse(agent_params)
    config = RunConfig(
        scenarios=library,
        arms=tuple(iter_arms(agents or DEFAULT_AGENTS, stores or (DEFAULT_STORE,), agent_config)),
        trials=trials,
        seed=seed,
        workers=workers,
        limit=limit,
        agent_config=agent_config,
        runtime=runtime,
        agent_timeouts=per_agent,
        max_cost=max_cost,
    )
    unknown = sorted({agent for agent, _ in per_agent} - {arm.agent for arm in config.arms})
    if unknown:
        raise ConfigurationError(f"--agent-timeout names agent(s) not in this run: {', '.join(unknown)}")
    return config


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
@click.option(
    "--agent-sandbox",
    type=click.Choice(["auto", "bwrap", "off"]),
    default="auto",
    show_default=True,
    help="Run command agents in bubblewrap (auto: where it works, else a reported weaker fallback).",
)
@click.option(
    "--agent-network",
    type=click.Choice(["none", "host"]),
    default="none",
    show_default=True,
    help="Network for sandboxed command agents (an LLM agent needs host, for its API).",
)
@click.option(
    "--agent-env",
    "agent_env",
    multiple=True,
    metavar="NAME",
    help="Pass this environment variable to agents (an API key, say); repeat for more.",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="USD",
    help="Start no new unit once the agents' reported cost reaches this many US dollars.",
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
    agent_sandbox: str,
    agent_network: str,
    agent_env: tuple[str, ...],
    max_cost: float | None,
    overwrite: bool,
) -> None:
    """Run agents through SCENARIOS (files or folders; the shipped library by default).

    Exit status: 0 when the run is done; 1 when a gate failed and --fail-on-regression was
    given, or when an arm measured nothing (its agent failed every session, units could not
    run, or its store was changed behind the harness's back); 2 for a usage or configuration
    error, before anything runs.
    """
    config = _config(
        scenarios,
        stores,
        agents,
        trials,
        seed,
        workers,
        limit,
        agent_params,
        agent_timeouts,
        (agent_sandbox, agent_network, agent_env),
        max_cost,
    )
    folder = out or Path("reports") / "runs" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-seed{seed}"
    _prepare_folder(folder, overwrite)
    console(stderr=True).print(
        f"memstore eval: {len(config.scenarios)} scenarios, "
        f"{sum(len(s.tasks) for s in config.scenarios) * trials} tasks, "
        f"{len(config.arms)} arms, {workers} worker(s) -> {folder}"
    )
    previous = load_results(baseline) if baseline is not None else None  # a bad baseline is refused first
    try:
        with _progress() as update:
            evaluation = evaluate(config, folder, baseline=previous, force=force, progress=update)
    except ScenarioError as exc:
        raise CommandError(f"the scenarios do not build as their labels say:\n{exc}") from exc
    print_summary(console(), evaluation.results, evaluation.gates, str(folder), evaluation.seconds)
    for failure in evaluation.failures[:5]:
        console().print(
            plain(f"unit failed: {failure['arm']} {failure['scenario']}#{failure['trial']}: {failure['error']}")
        )
    if evaluation.measured_nothing or (fail_on_regression and evaluation.failed):
        sys.exit(1)
