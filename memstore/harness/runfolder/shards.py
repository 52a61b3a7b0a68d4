"""Shards: each finished unit of a run, written at once to the run folder, so a run survives.

Every unit (one trial of one scenario in one arm) has a deterministic id: a digest of what
decides its outcome (the scenario's content, the trial, the arm, the seed, the stubs' budget,
the expiry, the retrieval limit, the engine version). When a unit finishes, its rows are written
to ``shards/<id>.json.gz`` (written to a temporary name, then renamed: a shard is whole or
absent). ``results.json`` and the reports are assembled from the shards in unit order, so a run
gives the same bytes whatever the executor, the worker count, the order units finished in, and
however often it was interrupted and resumed (`memstore eval --resume`), and shards made on
several machines assemble into one run (`memstore merge`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstore import __version__
from memstore.errors import BadShard
from memstore.harness.records import FORMAT, SHARD_TABLES, TABLES, from_row, row
from memstore.harness.run import GradingFactory, RunConfig, RunOutput, Unit, gunzip_bounded, read_bounded, run
from memstore.harness.scenarios import Scenario, scenario_set_hash
from memstore.uri import StoreURI

__all__ = [
    "ENGINE",
    "SHARD_CAP",
    "BadShard",
    "check_shard",
    "infrastructure_failed",
    "read_shard",
    "run_in_folder",
    "shard_path",
    "unit_id",
    "write_shard",
]

ENGINE = f"memstore-{__version__}/shards-{FORMAT}"  # a shard from another engine is never reused


def unit_id(unit: Unit) -> str:
    """The unit's id: the same for the same work, whatever run, machine or order it is in."""

    key = {
        "engine": ENGINE,
        "scenario": unit.scenario.name,
        "content": _content(unit.scenario),
        "trial": unit.trial,
        "agent": unit.arm.agent,
        "store": StoreURI.parse(unit.arm.store).identity,  # a resumed run has no password to give
        "seed": unit.seed,
        "limit": unit.limit,
        "expiry_s": unit.expiry.total_seconds(),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


_CONTENT: dict[int, tuple[Scenario, str]] = {}  # id(scenario) -> (it, its content hash)


def _content(scenario: Scenario) -> str:
    """``scenario_set_hash`` of one scenario, once per scenario object (a run asks for every unit,
    and each reads the fixture's files); the object is kept with it, so its id is not reused."""
    kept = _CONTENT.get(id(scenario))
    if kept is None or kept[0] is not scenario:
        if len(_CONTENT) >= 4096:
            _CONTENT.clear()  # a long-lived process loads scenarios again and again: keep only recent ones
        kept = _CONTENT[id(scenario)] = (scenario, scenario_set_hash((scenario,)))
    return kept[1]


def shard_path(folder: Path, unit: Unit) -> Path:
    return folder / f"{unit_id(unit)}.json.gz"


def _plain(value: Any) -> Any:
    """A value JSON can hold (numpy scalars as Python ones)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def write_shard(folder: Path, unit: Unit, output: RunOutput) -> Path:
    """Write one finished unit's rows, whole or not at all."""
    folder.mkdir(parents=True, exist_ok=True)
    found = unit_id(unit)
    target = folder / f"{found}.json.gz"
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    rows = {
        name: [row(r) for r in getattr(output, name)] if name in TABLES else getattr(output, name)
        for name in SHARD_TABLES
    }
    data = {"format": FORMAT, "engine": ENGINE, "unit": found, **rows}
    raw = json.dumps(data, default=_plain).encode()
    with open(partial, "wb") as handle:
        handle.write(gzip.compress(raw, mtime=0))
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(target)
    return target


# Bytes a shard may take, decompressed: what a unit can hold, with room to spare. The largest
# shard of `memstore eval --quick` (300 units) is 143 KB (410 events); 32 MiB is over 200 times
# that, and a shard this large still merges in 700 MB of memory. A larger one is not a unit's.
SHARD_CAP = 32 * 1024 * 1024
_SCALARS = (str, int, float, bool, type(None))


def check_shard(path: Path, expected: str) -> RunOutput:
    """The rows of the shard at ``path``, which must be unit ``expected``'s.

    Raises:
        BadShard: unreadable, not gzip, decompressing past `SHARD_CAP` (or past the memory left),
            of another engine or another unit, or rows that are not lists of flat records.
    """
    try:
        data = json.loads(gunzip_bounded(read_bounded(path, cap=SHARD_CAP), SHARD_CAP))
    except (OSError, ValueError, RecursionError) as exc:
        raise BadShard(f"{path.name}: {exc}") from exc
    except MemoryError as exc:
        raise BadShard(f"{path.name}: too large to read in the memory left") from exc
    if not isinstance(data, dict) or data.get("engine") != ENGINE:
        raise BadShard(f"{path.name}: not a shard of {ENGINE}")
    if data.get("unit") != expected:
        raise BadShard(f"{path.name}: holds unit {str(data.get('unit'))[:40]!r}, not the unit its name says")
    for name in SHARD_TABLES:
        rows = data.get(name, [])
        if not isinstance(rows, list) or not all(
            isinstance(row, dict) and all(isinstance(k, str) and _flat(v) for k, v in row.items()) for row in rows
        ):
            raise BadShard(f"{path.name}: its {name!r} are not a list of flat records")
    try:
        typed: dict[str, Any] = {
            name: [from_row(record, r) for r in data.get(name, [])] for name, record in TABLES.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BadShard(f"{path.name}: a row is not its table's record ({type(exc).__name__}: {exc})") from exc
    return RunOutput(**typed, timings=list(data.get("timings", [])))


def _flat(value: Any) -> bool:
    return isinstance(value, _SCALARS) or (isinstance(value, list) and all(isinstance(v, _SCALARS) for v in value))


def read_shard(path: Path) -> RunOutput | None:
    """A unit's rows from its shard; None when there is none, or it is not this engine's shard of
    the unit its name says (a resumed run runs that unit again)."""
    if not path.is_file():
        return None
    try:
        return check_shard(path, path.name.removesuffix(".json.gz"))
    except BadShard:
        return None


def infrastructure_failed(output: RunOutput) -> bool:
    """Whether a unit failed for a reason outside the agent's work: it could not run (a worker
    died, the cost cap stopped it, the harness failed) or a session lost its agent to a timeout
    or a model endpoint. Those are what ``--retry-errors`` runs again."""
    return bool(output.failures) or any(s.infra_error for s in output.sessions)


def run_in_folder(
    config: RunConfig,
    shards: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    grading: GradingFactory,
    retry_errors: bool = False,
    part: tuple[int, int] | None = None,
) -> RunOutput:
    """`memstore.harness.run.runner.pool.run` (each trial graded by what ``grading`` makes), each unit
    written to ``shards`` as it finishes, and a unit whose shard is already there read back, not
    run again: an interrupted run resumes where it stopped. ``retry_errors`` runs again the units
    that failed for infrastructure reasons."""

    def done(unit: Unit) -> RunOutput | None:
        found = read_shard(shard_path(shards, unit))
        return None if found is None or (retry_errors and infrastructure_failed(found)) else found

    def keep(unit: Unit, output: RunOutput) -> None:
        write_shard(shards, unit, output)

    return run(config, progress, grading=grading, done=done, keep=keep, part=part)
