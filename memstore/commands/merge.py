"""``memstore merge RUN... --out DIR``: one run from the shards of several run folders (the parts
of a run made on several machines with ``memstore eval --part K/N``, or copies of one run)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memstore.commands._shared import console, plain
from memstore.harness.run import units

__all__ = ["merge_command"]


@click.command(name="merge")
@click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The merged run folder.")
@click.option("--overwrite", is_flag=True, help="Replace the folder named by --out if it holds an earlier run.")
def merge_command(runs: tuple[Path, ...], out: Path, overwrite: bool) -> None:
    """Assemble one run from the shards in RUNS (folders of the same run: same scenarios, arms,
    trials, seed and engine). Refuses folders of different runs, and a merge that misses units.

    Exit status: 0 when merged (and no arm measured nothing); 1 when an arm measured nothing;
    2 for folders that cannot be merged (or that another run is using); 4 when the merged folder
    could not be written.
    """
    from memstore.harness.evaluate import merge_folders  # pandas and the statistics: only when it runs
    from memstore.harness.report import EXIT, print_summary

    evaluation = merge_folders(list(runs), out, overwrite=overwrite)
    print_summary(console(), evaluation.results, evaluation.gates, str(out), evaluation.seconds)
    console().print(plain(f"merged {len(runs)} run folder(s): {len(units(evaluation.config))} units"))
    if evaluation.measured_nothing:
        sys.exit(1)
    if EXIT[evaluation.decision]:
        sys.exit(EXIT[evaluation.decision])  # as `memstore eval` would have exited
