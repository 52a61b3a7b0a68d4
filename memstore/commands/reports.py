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
    from memstore.harness.report import EXIT, compare_folders

    compared = compare_folders(runs, force=force)
    if out is not None:
        out.write_text(compared.text, encoding="utf-8")
        click.echo(f"wrote {out}")
    else:
        click.echo(compared.text)
    if EXIT[compared.decision]:
        sys.exit(EXIT[compared.decision])
