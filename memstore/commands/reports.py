"""``memstore report`` and ``memstore compare``: re-render a run, and compare runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

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
    from memstore.harness.report import render_again  # pandas and the statistics: only when it runs

    for path in render_again(run, formats or ("html", "md", "junit")):
        click.echo(str(path))


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the comparison as Markdown to this file (printed otherwise).",
)
@click.option("--force", is_flag=True, help="Compare runs of other scenario sets (or logs of other samples) anyway.")
@click.option(
    "--scorer",
    default=None,
    help="Inspect logs of a task other than memstore's: the scorer whose scores are the outcomes "
    "(default: each sample's first).",
)
def compare(runs: tuple[Path, ...], out: Path | None, force: bool, scorer: str | None) -> None:
    """Compare RUN_A with RUN_B [...]: each later run against the first, arm by arm, task by
    task where both runs kept their sessions (run folders), unpaired otherwise.

    The runs may be inspect eval logs instead (.eval or .json files of the same samples, read
    with inspect-ai: pip install 'agent-memstore[inspect]'): each later log against the first,
    paired by sample and epoch, with the same tests, gates and exit status.

    Exit status as ``memstore eval``'s: 1 when a gate of a later run fails (a significant
    regression against the first run, or a gate of that run itself, such as a breach of the
    store contract); 3 when none failed but some could not be decided (a difference whose
    interval does not rule out a regression of 5 points, say); 0 when every gate passed.
    """
    if len(runs) < 2:
        raise click.UsageError("give at least two runs (folders or results.json files) or inspect eval logs")
    from memstore.harness.report import EXIT, compare_folders
    from memstore.inspect import compare_logs, is_inspect_log

    logs = [is_inspect_log(run) for run in runs]
    if any(logs) and not all(logs):
        raise click.UsageError("compare inspect eval logs with inspect eval logs, and run folders with run folders")
    if scorer is not None and not all(logs):
        raise click.UsageError("--scorer is for inspect eval logs")
    compared = compare_logs(runs, force=force, scorer=scorer) if all(logs) else compare_folders(runs, force=force)
    if out is not None:
        out.write_text(compared.text, encoding="utf-8")
        click.echo(f"wrote {out}")
    else:
        click.echo(compared.text)
    if EXIT[compared.decision]:
        sys.exit(EXIT[compared.decision])
