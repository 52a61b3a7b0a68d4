"""``memstore scenarios``: list, validate and show scenario files."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import click
from rich.table import Table

from memstore.commands._shared import CommandError, console, plain, safe
from memstore.harness.scenarios import Scenario, ScenarioError, load_library, read_file, scenario_files
from memstore.harness.world import check_labels

__all__ = ["scenarios"]

_PATHS = click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))


def _human(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days}d" if days else "", f"{hours}h" if hours else "", f"{minutes}m" if minutes else ""]
    return "".join(parts) or "0m"


def _load(paths: tuple[Path, ...]) -> list[Scenario]:
    try:
        return load_library(paths)
    except ScenarioError as exc:
        raise CommandError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc


@click.group()
def scenarios() -> None:
    """The scenario library: worlds to run agents in (see scenarios/README.md)."""


@scenarios.command(name="list")
@_PATHS
def list_(paths: tuple[Path, ...]) -> None:
    """List the scenarios of PATHS (files or folders; the shipped library by default)."""
    found = _load(paths)
    table = Table(title=f"{len(found)} scenarios, {sum(len(s.tasks) for s in found):,} tasks")
    for column in ("name", "tags", "memories", "tasks", "surfaces"):
        table.add_column(column, overflow="fold")
    generated: dict[str, list[Scenario]] = {}
    for scenario in found:
        if scenario.files is not None:
            generated.setdefault(scenario.source, []).append(scenario)
            continue
        surfaces = sorted({t.surface.value for t in scenario.tasks})
        table.add_row(
            *(
                plain(cell)
                for cell in (
                    scenario.name,
                    ", ".join(scenario.tags),
                    str(sum(m.copies for m in scenario.memories)),
                    str(len(scenario.tasks)),
                    ", ".join(surfaces),
                )
            )
        )
    for source, group in generated.items():
        table.add_row(
            *(
                plain(cell)
                for cell in (
                    f"{Path(source).stem} ({len(group)} generated)",
                    "generated",
                    str(sum(len(s.memories) for s in group)),
                    str(sum(len(s.tasks) for s in group)),
                    ", ".join(sorted({t.surface.value for s in group for t in s.tasks})),
                )
            )
        )
    console().print(table)


@scenarios.command()
@_PATHS
def validate(paths: tuple[Path, ...]) -> None:
    """Check scenario files: schema, references, the history, and the truth labels.

    Exit status 1 when any file has a problem; every problem is printed as
    FILE:LINE:COLUMN: at FIELD: MESSAGE.
    """
    files = scenario_files(paths)
    problems = 0
    count = 0
    for file in files:
        found, wrong = read_file(file)
        wrong = wrong or check_labels(found)  # built, explicitly: the labels must hold on the repository
        count += len(found)
        for problem in wrong:
            click.echo(safe(problem), err=True)
        problems += len(wrong)
    if problems:
        click.echo(f"{problems} problem(s) in {len(files)} file(s)", err=True)
        sys.exit(1)
    click.echo(f"{len(files)} file(s), {count} scenario(s): all valid")


@scenarios.command()
@click.argument("name")
@_PATHS
def show(name: str, paths: tuple[Path, ...]) -> None:
    """Describe the scenario NAME: its repository, history, memories and tasks."""
    found = {s.name: s for s in _load(paths)}
    scenario = found.get(name)
    if scenario is None:
        near = ", ".join(sorted(n for n in found if name in n)[:10]) or ", ".join(sorted(found)[:10])
        raise CommandError(f"no scenario {name!r}; some there are: {near}")

    def echo(text: str = "") -> None:
        click.echo(safe(text))

    echo(f"{scenario.name}  ({scenario.source})")
    echo(f"  {scenario.description}")
    echo(
        f"  repository {scenario.repo} from fixture {scenario.fixture or '(generated)'}, evaluated at "
        f"{scenario.evaluate_at}, tasks start {scenario.start.isoformat()}"
    )
    echo(
        "  users: "
        + "; ".join(
            f"{u} " + ", ".join(f"{r}={lvl.name.lower()}" for r, lvl in g.items()) for u, g in scenario.users.items()
        )
    )
    echo(f"\nhistory ({len(scenario.history)} steps after the initial import):")
    for step in scenario.history:
        what = step.args.get(step.op)
        edits = f" ({', '.join(e.op for e in step.edits)})" if step.edits else ""
        echo(f"  {step.op} {what}{edits}")
    echo(f"\nmemories ({len(scenario.memories)}):")
    for m in scenario.memories:
        copies = f" x{m.copies}" if m.copies > 1 else ""
        echo(
            f"  {m.key}{copies}: {m.origin.value}, {m.truth.value} at {scenario.evaluate_at}; "
            f"{m.kind.value} by {m.author}, learned at {m.learned_at}, "
            f"{_human(m.age)} before the first task"
        )
        echo(f"    {m.subject}: {m.fact}")
        if m.citations:
            echo(f"    cites {', '.join(m.citations)}")
    echo(f"\ntasks ({len(scenario.tasks)}):")
    for t in scenario.tasks:
        needs = f"; needs {', '.join(t.needs)}" if t.needs else ""
        echo(f"  {t.key}: {t.surface.value} as {t.user}, after {_human(t.after)}{needs}")
        echo(f"    {t.prompt}")
