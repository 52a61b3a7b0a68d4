"""Run folders: what a run is (its `Recipe`), written first as ``manifest.json``, so a run can be
resumed (``memstore eval --resume``), split across machines (``--part``) and assembled
(``memstore merge``); and the folder rules (never overwrite what is not a run folder)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from memstore.errors import RunFolderError
from memstore.harness.records import FORMAT, TABLES
from memstore.harness.run import RunConfig, read_bounded
from memstore.harness.runfolder.lock import LOCK
from memstore.harness.runfolder.recipe import Recipe
from memstore.harness.runfolder.shards import ENGINE
from memstore.harness.scenarios import scenario_set_hash
from memstore.uri import StoreURI

__all__ = [
    "MANIFEST",
    "holds_a_run",
    "new_folder",
    "prepare_folder",
    "read_manifest",
    "write_manifest",
]

MANIFEST = "manifest.json"
_MANIFEST_CAP = 16 * 1024 * 1024


def write_manifest(folder: Path, recipe: Recipe, config: RunConfig) -> None:
    """Record what the run is, before any unit runs."""
    folder.mkdir(parents=True, exist_ok=True)
    written = recipe.to_json()
    # No password is written to disk: a resumed run connects with PGPASSWORD or ~/.pgpass.
    written["stores"] = [StoreURI.parse(s).identity for s in written["stores"]]
    data = {
        "format": FORMAT,
        "engine": ENGINE,
        "recipe": written,
        "scenario_set_hash": scenario_set_hash(config.scenarios),
    }
    partial = folder / f".{MANIFEST}.part"
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    partial.replace(folder / MANIFEST)


def read_manifest(folder: Path) -> tuple[Recipe, str | None]:
    """The recipe a run folder's manifest holds, and the scenario set it recorded (their hash).

    Raises:
        RunFolderError: a folder with no readable manifest, or one of another engine.
    """
    try:
        data = json.loads(read_bounded(folder / MANIFEST, cap=_MANIFEST_CAP))
        recipe = Recipe.from_json(data["recipe"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise RunFolderError(
            f"{folder} is not a run folder made by memstore eval (no readable {MANIFEST}: {exc})"
        ) from exc
    if data.get("engine") != ENGINE:
        raise RunFolderError(f"{folder} was made by {data.get('engine')}, not {ENGINE}: its shards cannot be reused")
    recorded = data.get("scenario_set_hash")
    return recipe, recorded if isinstance(recorded, str) else None


_RUN_FILES = {"results.json", "timings.json", "report.html", "report.md", "report.json", "junit.xml", MANIFEST} | {
    f"{name}.{ext}" for name in TABLES for ext in ("csv", "csv.gz")
}
_RUN_FILES |= {f".{name}.part" for name in _RUN_FILES}  # what a run stopped mid-write leaves (`whole`)
_RUN_FOLDERS = {"shards", "transcripts"}


def _holds_anything(folder: Path) -> bool:
    """Whether ``folder`` exists and holds something beside its lock."""
    return folder.exists() and any(p.name != LOCK for p in folder.iterdir())


def holds_a_run(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier run (False when it is missing or empty).

    Raises:
        RunFolderError: it holds what is not a run folder's (it is never overwritten).
    """
    if not _holds_anything(folder):
        return False
    strangers = sorted(p.name for p in folder.iterdir() if p.name not in _RUN_FILES | _RUN_FOLDERS | {LOCK})
    if strangers:
        raise RunFolderError(
            f"{folder} does not look like a run folder (it holds {', '.join(strangers[:5])}); not overwriting it"
        )
    return True


def prepare_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a folder that already holds something, unless told to replace a run folder (its
    lock, which the caller may hold, stays)."""
    if not _holds_anything(folder):
        return
    if not overwrite:
        raise RunFolderError(
            f"the run folder {folder} is not empty; pass --resume {folder} to finish it, --overwrite to replace it, "
            "or another --out"
        )
    holds_a_run(folder)
    for name in _RUN_FILES:
        (folder / name).unlink(missing_ok=True)
    for name in _RUN_FOLDERS:
        shutil.rmtree(folder / name, ignore_errors=True)


def new_folder(seed: int) -> Path:
    """Where a new run goes when no folder is named: ``reports/runs/<time>-seed<S>``."""
    return Path("reports") / "runs" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-seed{seed}"
