"""``memstore eval``: run agents through scenarios against stores, and write the run folder.

A thin layer over the library: it parses the options into a `Recipe`, opens the run folder
(`RunFolder.claim`: a new run, or the one ``--resume`` finishes), makes one call
(`evaluate_folder`, or `run_part` for ``--part K/N``) while it shows progress (a bar with the
time left on a terminal, a line every 10% elsewhere), prints the summary and sets the exit status.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from memstore.errors import ScenarioError
from memstore.harness.run import RunConfig
from memstore.harness.runfolder import DEFAULT_STORE, Recipe, RunFolder
from memstore.harness.scenarios import QUICK

if TYPE_CHECKING:
    from memstore.harness.evaluate import Evaluation

__all__ = ["eval_command"]


def _given(ctx: click.Context, name: str) -> bool:
    """Whether option ``name`` was set on the command line."""
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def _part(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    """``--part K/N``."""
    if value is None:
        return None
    k, _, n = value.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n) <= 10_000):
        raise click.BadParameter(f"{value!r}: give K/N with 1 <= K <= N, such as 1/4", param_hint="--part")
    return int(k), int(n)


def _tasks(config: RunConfig) -> str:
    """``2,042 tasks (29 hand-written, 13 mined, 2,000 generated)``: what a run holds, so a
    population pulled in by a glob is seen before it runs."""
    kinds: dict[str, int] = {}
    for scenario in config.scenarios:
        kinds[scenario.kind] = kinds.get(scenario.kind, 0) + len(scenario.tasks) * config.trials
    total = sum(kinds.values())
    if len(kinds) < 2:
        return f"{total:,} tasks"
    order = ("hand-written", "mined", "generated")
    return f"{total:,} tasks ({', '.join(f'{kinds[k]:,} {k}' for k in order if k in kinds)})"


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


@click.command(name="eval")
@click.argument("scenarios", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--store", "stores", multiple=True, help=f"Store URI; repeat to compare. Default: {DEFAULT_STORE}")
@click.option(
    "--negative-control",
    "negative_controls",
    multiple=True,
    metavar="URI",
    help="A store of --store built to break the store contract (a mutant): its arms pass when the "
    "audit catches its breaches. Only the person running says so; no store can declare it of itself.",
)
@click.option(
    "--agent", "agents", multiple=True, help="no-memory, trusting, jit-verify, or command:CMD. Default: all three."
)
@click.option("--trials", type=click.IntRange(1, 10_000), default=1, show_default=True, help="Trials per scenario.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed: the same seed gives the same results.")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=lambda: min(os.cpu_count() or 1, 8),
    show_default="the number of CPUs, at most 8, one per 4 units: a small run runs in this process",
    help="Processes (results do not depend on it).",
)
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=50, show_default=True, help="Memories handed per session."
)
@click.option(
    "--sample",
    type=click.IntRange(1, 1_000_000),
    default=None,
    metavar="N",
    help="Run about N tasks drawn from the scenarios (seeded by --seed, split evenly over hand-written, "
    "mined and generated, then by stratum), not all of them.",
)
@click.option(
    "--quick",
    is_flag=True,
    help=f"A run to try things out: --sample {QUICK} (the hand-written and mined libraries whole, "
    "a slice of the generated population; about a minute on two cores).",
)
@click.option(
    "--agent-param",
    "agent_params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter for every agent of the run that takes one (the stubs: searches, reads, learn); "
    "one agent's own: --agent 'jit-verify[reads=4]' (README, \"The stub agents\").",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run folder. Default: reports/runs/<time>-seed<S>.",
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    metavar="RUN",
    help="A run folder (or its results.json) to compare with, task by task where it kept its sessions "
    "(e.g. reports/baseline): a significant regression is a failed gate.",
)
@click.option(
    "--no-fail",
    is_flag=True,
    help="Exit 0 even when gates fail or are undecided, for exploratory runs (the summary still says so). "
    "An arm that measured nothing still exits 1.",
)
@click.option("--fail-on-regression", is_flag=True, hidden=True, help="The default now; kept so old scripts run.")
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
@click.option(
    "--sequential",
    is_flag=True,
    help="Take the scenarios in a seeded random order and stop as soon as every gate is decided, on "
    "anytime-valid intervals (for agents whose sessions cost money; docs/statistics.md).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="With --sequential: stop after about N sessions, decided or not.",
)
@click.option(
    "--executor",
    default="local",
    show_default=True,
    metavar="local|ray|ray://HOST:PORT",
    help="Where units run: a process pool here, a local Ray instance, or a Ray cluster (also RAY_ADDRESS).",
)
@click.option(
    "--resume",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    metavar="RUN",
    help="Finish the run in this folder: run only the units it has no shard of (its options are kept).",
)
@click.option("--retry-errors", is_flag=True, help="With --resume: run again the units that failed for "
              "infrastructure reasons (timeouts, a model endpoint down, a worker killed).")  # fmt: skip
@click.option(
    "--part",
    default=None,
    callback=_part,
    metavar="K/N",
    help="Run only the K-th of N interleaved parts of the units (one per machine); `memstore merge` assembles them.",
)
@click.option("--overwrite", is_flag=True, help="Replace the run folder named by --out if it holds an earlier run.")
@click.pass_context
def eval_command(
    ctx: click.Context,
    /,
    scenarios: tuple[Path, ...],
    sample: int | None,
    quick: bool,
    out: Path | None,
    baseline: Path | None,
    no_fail: bool,
    force: bool,
    resume: Path | None,
    retry_errors: bool,
    part: tuple[int, int] | None,
    overwrite: bool,
    fail_on_regression: bool,  # the default now; kept so old scripts run
    **recipe: Any,  # the run's other options: Recipe's fields of the same names
) -> None:
    """Run agents through SCENARIOS (files or folders; the shipped library by default).

    Exit status: 0 when every gate passed; 1 when a gate failed (a breach of the store
    contract, a treatment significantly worse than the control, a significant regression
    against --baseline, an arm that measured nothing); 3 when none failed but the sample could
    not decide some (inconclusive, or not exercised); 2 for a usage or configuration error
    (a run folder in use by another run, too), before anything runs; 4 for an internal error,
    or a run folder the machine could not write. With --no-fail: 0, unless an arm measured
    nothing (docs/ci.md).
    """
    _check_flags(quick, sample, retry_errors, resume)
    given = Recipe(
        scenarios=tuple(str(p.resolve()) for p in scenarios), sample=QUICK if quick else sample or 0, **recipe
    )
    explicit = {k for k in Recipe.__dataclass_fields__ if _given(ctx, k) or (k == "scenarios" and scenarios)}
    with RunFolder.claim(given, out=out, resume=resume, explicit=explicit, overwrite=overwrite) as run:
        _banner(run, part)
        try:
            if part is not None:
                _run_part(run, part, retry_errors)
            else:
                _finish(_evaluate(run, baseline, force=force, retry_errors=retry_errors), no_fail)
        except KeyboardInterrupt as exc:
            _interrupted(run, part)
            raise click.exceptions.Exit(130) from exc


def _interrupted(run: RunFolder, part: tuple[int, int] | None) -> None:
    """Ctrl-C: what the folder kept, and the command that finishes the run (the CLI exits 130)."""
    kept, every = run.kept()
    again = f"memstore eval --resume {run.path}" + (f" --part {part[0]}/{part[1]}" if part else "")
    click.echo(
        f"interrupted: {kept:,} of {every:,} units are kept in {run.path}; finish the run with: {again}", err=True
    )


def _evaluate(run: RunFolder, baseline: Path | None, *, force: bool, retry_errors: bool) -> Evaluation:
    """`evaluate_folder`, its progress shown."""
    from memstore.harness.evaluate import evaluate_folder  # pandas and the statistics: only for a run

    try:
        with _progress() as update:
            return evaluate_folder(run, baseline=baseline, force=force, progress=update, retry_errors=retry_errors)
    except ScenarioError as exc:
        raise CommandError(f"the scenarios do not build as their labels say:\n{exc}") from exc


def _run_part(run: RunFolder, part: tuple[int, int], retry_errors: bool) -> None:
    """``--part K/N``: this machine's units, into the folder's shards."""
    from memstore.harness.evaluate import run_part

    with _progress() as update:
        output = run_part(run, part, progress=update, retry_errors=retry_errors)
    units = len(output.trials) + len(output.failures)
    console().print(
        plain(
            f"part {part[0]}/{part[1]}: {units} unit(s) in {run.shards}; "
            "assemble the parts with `memstore merge RUN... --out DIR`"
        )
    )


def _check_flags(quick: bool, sample: int | None, retry_errors: bool, resume: Path | None) -> None:
    if quick and sample is not None:
        raise CommandError(f"--quick is --sample {QUICK}: give one of them")
    if retry_errors and resume is None:
        raise CommandError("--retry-errors goes with --resume RUN")


def _banner(run: RunFolder, part: tuple[int, int] | None) -> None:
    """What the run holds and where it goes, before it starts."""
    config = run.config
    console(stderr=True).print(
        f"memstore eval: {len(config.scenarios)} scenarios, {_tasks(config)}, "
        f"{len(config.arms)} arms, {config.workers} worker(s) -> {run.path}"
        + (" (resuming)" if run.resumed else "")
        + (f" (part {part[0]}/{part[1]})" if part else "")
    )
    if config.sample:
        console(stderr=True).print(plain(f"  {config.sample}"))


def _finish(evaluation: Evaluation, no_fail: bool) -> None:
    """The summary; the exit status of the run's decision (`EXIT`): 1 failed, 3 undecided (0 with
    ``no_fail``, unless an arm measured nothing)."""
    from memstore.harness.report import EXIT, print_summary

    print_summary(console(), evaluation.results, evaluation.gates, str(evaluation.folder), evaluation.seconds)
    for failure in evaluation.failures[:5]:
        console().print(plain(f"unit failed: {failure.arm} {failure.scenario}#{failure.trial}: {failure.error}"))
    if evaluation.measured_nothing:
        sys.exit(1)
    if not no_fail and EXIT[evaluation.decision]:
        sys.exit(EXIT[evaluation.decision])
