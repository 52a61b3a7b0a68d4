"""``memstore merge RUN... --out DIR``: one run from the shards of several run folders (the parts
of a run made on several machines with ``memstore eval --part K/N``, or copies of one run)."""

from __future__ import annotations

import shutil
import sys
from contextlib import ExitStack
from pathlib import Path

import click

from memstore.commands._shared import CommandError, console, plain
from memstore.harness.evaluate import assemble, collect
from memstore.harness.report.gate import EXIT
from memstore.harness.report.terminal import print_summary
from memstore.harness.run.runner import units
from memstore.harness.runfolder.lock import hold
from memstore.harness.runfolder.manifest import prepare_folder, read_manifest, same_run, write_manifest
from memstore.harness.runfolder.shards import BadShard, check_shard, shard_path, unit_id

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
    if out.resolve() in {r.resolve() for r in runs}:
        raise CommandError("--out must be a new folder, not one of the runs merged")
    with ExitStack() as held:  # the runs are read while no eval writes them; --out is this merge's alone
        for run in runs:
            held.enter_context(hold(run, reading=True))
        _merge(runs, out, overwrite)


def _merge(runs: tuple[Path, ...], out: Path, overwrite: bool) -> None:
    """The runs checked and collected, then written to ``out`` (held while it is written)."""
    recipe, config = read_manifest(runs[0])
    for other in runs[1:]:
        same_run(recipe, read_manifest(other)[0], f"in {other}")
    for unit in units(config):  # a damaged or misplaced shard is refused, not skipped
        for run in runs:
            path = shard_path(run / "shards", unit)
            if path.is_file():
                try:
                    check_shard(path, unit_id(unit))
                except BadShard as exc:
                    raise CommandError(f"{run}: a bad shard ({exc}); not merging it") from exc
    output, missing = collect(config, list(runs))
    if missing:
        raise CommandError(
            f"{len(missing)} unit(s) are in none of the folders (e.g. {', '.join(missing[:3])}): "
            "finish them with `memstore eval --resume RUN`"
        )
    with hold(out):
        prepare_folder(out, overwrite)
        write_manifest(out, recipe, config)
        for unit in units(config):  # the merged folder holds its shards too: it can be merged or resumed again
            source = next(shard_path(r / "shards", unit) for r in runs if shard_path(r / "shards", unit).is_file())
            target = shard_path(out / "shards", unit)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        evaluation = assemble(config, out, output, 0.0)
    print_summary(console(), evaluation.results, evaluation.gates, str(out), evaluation.seconds)
    console().print(plain(f"merged {len(runs)} run folder(s): {len(units(config))} units"))
    if evaluation.measured_nothing:
        sys.exit(1)
    if EXIT[evaluation.decision]:
        sys.exit(EXIT[evaluation.decision])  # as `memstore eval` would have exited
