"""``memstore report`` and ``memstore compare``: re-render a run, and compare runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memstore.harness.analysis.compare import compare_runs
from memstore.harness.analysis.model import RunResults
from memstore.harness.analysis.results import check_same_scenarios, load_results, load_tables
from memstore.harness.report import gates, render_markdown, write_reports

__all__ = ["compare", "report"]


@click.command()
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--format",
    "formats",
    type=click.Choice(["html", "md", "json", "junit"]),
    multiple=True,
    help="Repeat for several. Default: html, md and junit.",
)
def report(run: Path, formats: tuple[str, ...]) -> None:
    """Render the reports of the run folder RUN again."""
    results = load_results(run)
    written = write_reports(run, results, load_tables(run), gates(results), formats or ("html", "md", "junit"))
    for path in written:
        click.echo(str(path))


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the comparison as Markdown to this file (printed otherwise).",
)
@click.option("--force", is_flag=True, help="Compare runs of different scenario sets anyway.")
def compare(runs: tuple[Path, ...], out: Path | None, force: bool) -> None:
    """Compare RUN_A with RUN_B [...]: each later run against the first, arm by arm.

    Exit status 1 when a comparison regressed significantly.
    """
    if len(runs) < 2:
        raise click.UsageError("give at least two runs (folders or results.json files)")
    first = load_results(runs[0])
    lines = [f"# memstore compare: {len(runs) - 1} run(s) against {runs[0]}", ""]
    regressed = False
    for other in runs[1:]:
        current = load_results(other)
        check_same_scenarios(current.run, first.run, force=force, what=str(runs[0]))
        found = compare_runs(current, first)
        regressed |= any(c.worse for c in found)
        against = RunResults(current.run, current.arms, tuple(found))
        summary = render_markdown(
            against, gates(current, found), comparisons_title="Against the first run (unpaired: two-proportion z-tests)"
        )
        lines += [f"## {other}", "", *summary.splitlines()[2:], ""]
    text = "\n".join(lines)
    if out is not None:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}")
    else:
        click.echo(text)
    if regressed:
        sys.exit(1)
