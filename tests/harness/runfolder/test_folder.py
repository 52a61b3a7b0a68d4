"""`RunFolder`: a new run is made only in an empty folder, an unfinished one is resumed only as the
same run, and parts merge only whole, every shard checked (rows of no unit: nothing here runs)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from memstore.errors import ConfigurationError, RunFolderError
from memstore.harness.run.output import RunOutput
from memstore.harness.run.runner.pool import units
from memstore.harness.runfolder.folder import RunFolder
from memstore.harness.runfolder.recipe import Recipe
from memstore.harness.runfolder.shards import shard_path, write_shard
from memstore.harness.scenarios.data import scenarios_dir

RECIPE = Recipe(scenarios=(str(scenarios_dir() / "api-version-moved.yaml"),), seed=7)  # four units, one per arm


def _made(path: Path) -> RunFolder:
    """A new run folder with its manifest written, and no unit run yet."""
    run = RunFolder.create(RECIPE, path)
    run.begin()
    return run


def test_a_new_run_goes_only_to_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match=r"is not empty; pass --resume"):
        RunFolder.create(RECIPE, tmp_path)
    with pytest.raises(RunFolderError, match=r"does not look like a run folder \(it holds notes.txt\)"):
        RunFolder.create(RECIPE, tmp_path, overwrite=True)


def test_scenarios_with_problems_are_sent_to_the_validator(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"run `memstore scenarios validate`:\n.*nowhere.yaml:1:1"):
        RunFolder.create(Recipe(scenarios=(str(tmp_path / "nowhere.yaml"),)), tmp_path / "run")


def test_a_folder_is_opened_as_the_run_its_manifest_describes(tmp_path: Path) -> None:
    made = _made(tmp_path / "run")
    opened = RunFolder.open(tmp_path / "run")
    assert (opened.recipe, opened.config, opened.resumed) == (RECIPE, made.config, False)
    with pytest.raises(RunFolderError, match=r"is not a run folder made by memstore eval"):
        RunFolder.open(tmp_path)


def test_a_resumed_run_takes_how_it_runs_and_refuses_to_be_another_run(tmp_path: Path) -> None:
    _made(tmp_path / "run")
    faster = RunFolder.resume(tmp_path / "run", Recipe(workers=3, seed=99), {"workers"})
    assert (faster.resumed, faster.recipe.workers, faster.config.workers, faster.recipe.seed) == (True, 3, 3, 7)
    with pytest.raises(RunFolderError, match=r"not the same run \(seed: 7 there, 8 asked for now\)"):
        RunFolder.resume(tmp_path / "run", Recipe(seed=8), {"seed"})


def _parts(tmp_path: Path) -> list[Path]:
    """The run made in two parts, each with every other unit's shard (of no rows)."""
    parts = [tmp_path / "part1", tmp_path / "part2"]
    for k, part in enumerate(parts):
        run = _made(part)
        for unit in units(run.config)[k::2]:
            write_shard(run.shards, unit, RunOutput())
    return parts


def test_parts_merge_into_one_folder_with_every_shard(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    with RunFolder.merged(parts, tmp_path / "merged") as (merged, output):
        assert (merged.recipe, output) == (RECIPE, RunOutput())
    every = sorted(p.name for part in parts for p in (part / "shards").iterdir())
    assert sorted(p.name for p in (tmp_path / "merged" / "shards").iterdir()) == every
    assert RunFolder.open(tmp_path / "merged").recipe == RECIPE


def test_a_merge_missing_units_or_holding_a_bad_shard_is_refused(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    with (
        pytest.raises(RunFolderError, match=r"2 unit\(s\) are in none of the folders"),
        RunFolder.merged(parts[:1], tmp_path / "merged"),
    ):
        pass
    unit = units(RunFolder.open(parts[0]).config)[0]  # a shard of part1; a bad copy in part2 is refused too
    shard_path(parts[1] / "shards", unit).write_bytes(gzip.compress(json.dumps({"engine": "other"}).encode()))
    with (
        pytest.raises(RunFolderError, match=r"part2: a bad shard \(.*not a shard of"),
        RunFolder.merged(parts, tmp_path / "merged"),
    ):
        pass
    with pytest.raises(RunFolderError, match=r"--out must be a new folder"), RunFolder.merged(parts, parts[0]):
        pass
    assert not (tmp_path / "merged").exists()
