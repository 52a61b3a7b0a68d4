"""``memstore report`` and ``memstore compare``: re-render a run, and compare runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memstore.harness.analysis.compare import compare_runs
from memstore.harness.analysis.model import RunResults
from memstore.harness.report import Gate, gates, render_markdown, write_reports
from memstore.harness.report.gate import EXIT, decide
from memstore.harness.runfolder.results import check_same_scenarios, load_baseline, load_results, load_tables

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
    """Compare RUN_A with RUN_B [...]: each later run against the first, arm by arm, task by
    task where both runs kept their sessions (run folders), unpaired otherwise.

    Exit status as ``memstore eval``'s: 1 when a gate of a later run fails (a significant
    regression against the first run, or a gate of that run itself, such as a breach of the
    store contract); 3 when none failed but some could not be decided (a difference whose
    interval does not rule out a regression of 5 points, say); 0 when every gate passed.
    """
    if len(runs) < 2:
        raise click.UsageError("give at least two runs (folders or results.json files)")
    first = load_baseline(runs[0])
    lines = [f"# memstore compare: {len(runs) - 1} run(s) against {runs[0]}", ""]
    every: list[Gate] = []
    for other in runs[1:]:
        current = load_baseline(other)
        check_same_scenarios(current.results.run, first.results.run, force=force, what=str(runs[0]))
        found = compare_runs(
            current.results, first.results, current_sessions=current.sessions, baseline_sessions=first.sessions
        )
        gate_list = gates(current.results, found)
        every += gate_list
        against = RunResults(current.results.run, current.results.arms, tuple(found))
        how = "paired by task: McNemar, paired bootstrap" if current.paired and first.paired else "unpaired"
        summary = render_markdown(against, gate_list, comparisons_title=f"Against the first run ({how})")
        lines += [f"## {other}", "", *summary.splitlines()[2:], ""]  # the verdict first, as in report.md
    text = "\n".join(lines)
    if out is not None:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}")
    else:
        click.echo(text)
    if EXIT[decide(every)]:
        sys.exit(EXIT[decide(every)])
