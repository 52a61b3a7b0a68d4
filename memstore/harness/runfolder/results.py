"""A run folder: its tables, ``results.json`` and, apart from them, ``timings.json``.

Everything in ``results.json`` and the tables follows from the run's inputs and seed, so
two runs with one seed write byte-identical files, from any checkout; what the machine and the
checkout decide (seconds, sessions per second, store latency, the git commit memstore ran
from) goes to ``timings.json``.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from memstore import __version__
from memstore.errors import ConfigurationError
from memstore.harness.analysis import RunResults, compare_groups, compare_within, compute, confusion, healing_curves
from memstore.harness.records import (
    EVENT,
    SESSION,
    TABLES,
    ArmMeta,
    RunMeta,
    columns,
    format_of,
    row,
    upgrade,
    upgrade_tables,
)
from memstore.harness.run import Declared, RunConfig, RunOutput, gunzip_bounded, read_bounded, resolve_mode
from memstore.harness.runfolder.atomic import whole
from memstore.harness.runfolder.forked import in_child
from memstore.harness.scenarios import scenario_set_hash
from memstore.uri import StoreURI
from memstore.verify import source_commit

__all__ = [
    "TABLES",
    "Baseline",
    "check_same_scenarios",
    "load_baseline",
    "load_results",
    "load_tables",
    "table_path",
    "write_run",
]

_ORDER = {
    "trials": ["arm", "scenario", "trial"],
    "sessions": ["arm", "scenario", "trial", "index"],
    "events": ["seq"],
    "findings": ["arm", "scenario", "trial", "task", "path"],
    "failures": ["arm", "scenario", "trial"],
}


def _git_commit() -> str | None:
    """The commit of the memstore checkout running this, if it runs from one."""
    return source_commit(Path(__file__).resolve().parents[2])


def frames_of(output: RunOutput) -> dict[str, pd.DataFrame]:
    """The tables of a run's rows, each in its kept order."""
    frames = {}
    for name, record in TABLES.items():
        frame = pd.DataFrame([row(r) for r in getattr(output, name)])
        if name == "sessions":
            frame = frame.reindex(columns=list(columns(record)))
        if not frame.empty:
            frame = frame.sort_values(_ORDER[name], kind="stable").reset_index(drop=True)
        frames[name] = frame
    return frames


def metadata(config: RunConfig, arms: Mapping[str, Declared], sequential: Mapping[str, Any] | None = None) -> RunMeta:
    """What a run was: enough to rerun it and to refuse comparing it with another kind of run
    (with what the arms' agents and stores declare: roles, simulations, parameters, profiles);
    ``sequential``: a sequential run's order, looks and intervals."""
    return RunMeta(
        seed=config.seed,
        trials=config.trials,
        limit=config.limit,
        scenario_set_hash=scenario_set_hash(config.scenarios),
        scenarios=tuple(sorted(s.name for s in config.scenarios)),
        tasks=sum(len(s.tasks) for s in config.scenarios) * config.trials,
        sample=config.sample or None,
        arms=tuple(
            ArmMeta(
                name=a.name,
                agent=a.agent,
                store=StoreURI.parse(a.store).redacted,
                role=arms[a.name].role,
                simulated=arms[a.name].simulated,
                verifies=arms[a.name].verifies,
                params=arms[a.name].params,
                extra=dict.fromkeys(sorted(arms[a.name].declares), True),
            )
            for a in config.arms
        ),
        stores=tuple(sorted({StoreURI.parse(arm.store).redacted for arm in config.arms})),
        store_profiles=_profiles(config, arms),
        populations={
            s.population["name"]: s.population for s in sorted(config.scenarios, key=lambda s: s.name) if s.population
        },
        expiry_days=config.expiry.total_seconds() / 86_400,
        agent_runtime=_agent_runtime(config),
        memstore_version=__version__,
        sequential=sequential,
    )


def _profiles(config: RunConfig, arms: Mapping[str, Declared]) -> dict[str, Any] | None:
    """What the stores over other projects' engines do themselves and what is emulated around them
    (only for runs that have such a store: `memstore.harness.run.play.stores.store_profile`)."""
    profiles = {StoreURI.parse(a.store).redacted: arms[a.name].store for a in config.arms}
    shown = {uri: p for uri, p in sorted(profiles.items()) if p["native"] or p["emulated"]}
    return shown or None


def _agent_runtime(config: RunConfig) -> dict[str, Any] | None:
    """How command agents ran (only for runs that have them): sandbox, network, timeout, environment."""
    if not any(arm.agent.startswith("command:") for arm in config.arms):
        return None

    runtime = config.runtime
    return {
        "sandbox": resolve_mode(runtime.sandbox)[1],
        "network": runtime.network.value,
        "timeout_seconds": runtime.timeout,
        "env": list(runtime.env),
    }


def table_path(folder: Path, name: str) -> Path:
    """Where table ``name`` of a run folder is: gzipped CSV, or plain CSV in older runs."""
    plain = folder / f"{name}.csv"
    return plain if plain.exists() and not (folder / f"{name}.csv.gz").exists() else folder / f"{name}.csv.gz"


def write_run(
    folder: Path,
    config: RunConfig,
    output: RunOutput,
    *,
    arms: Mapping[str, Declared],
    seconds: float,
    sequential: Mapping[str, Any] | None = None,
) -> tuple[RunResults, dict[str, pd.DataFrame]]:
    """Write tables, results.json and timings.json into ``folder``, each whole (`whole`); return
    the results and tables. ``arms``: what the arms declare, as the run checked them before it
    started (`memstore.harness.run.runner.declarations.check_config`); ``sequential``: a sequential
    run's order and intervals, for its metadata.

    Tables are gzipped CSV with a zero timestamp in the gzip header, so one seed gives the same
    bytes every time."""
    folder.mkdir(parents=True, exist_ok=True)
    frames = frames_of(output)
    # The metrics per arm, scenario and origin (the tail's largest part) in a child, beside the rest.
    computing = in_child(
        lambda: compute(frames, {name: arm.role for name, arm in arms.items()}), workers=config.workers
    )
    try:
        for name, frame in frames.items():
            # gzip's header names the file: the table's own name, never the temporary one
            with (
                whole(folder / f"{name}.csv.gz") as path,
                path.open("wb") as raw,
                gzip.GzipFile(filename=f"{name}.csv", mode="wb", fileobj=raw, mtime=0) as packed,
            ):
                frame.to_csv(packed, index=False, float_format="%.6g", lineterminator="\n")
        comparisons = tuple(compare_within(frames, seed=config.seed))
        results = RunResults(
            run=metadata(config, arms, sequential),
            arms=computing.result(),
            comparisons=comparisons,
            groups=tuple(compare_groups(frames)),
            confusion=confusion(frames),
            healing=healing_curves(frames),
        )
    finally:
        computing.close()
    with whole(folder / "results.json") as path:
        path.write_text(json.dumps(results.to_json(), indent=2, sort_keys=True) + "\n")
    _write_timings(folder, config, output, frames["sessions"], seconds)
    return results, frames


def _write_timings(
    folder: Path, config: RunConfig, output: RunOutput, sessions_table: pd.DataFrame, seconds: float
) -> None:
    """``timings.json``: where the run ran from, how long it took, and the seconds per arm."""
    timings = pd.DataFrame(output.timings)
    per_arm = {}
    merged_column = SESSION.merged
    merges = (
        sessions_table.groupby(SESSION.arm)[merged_column].sum() if merged_column in sessions_table else pd.Series()
    )
    for arm in sorted(timings.arm.unique()) if not timings.empty else []:
        rows = timings[timings.arm == arm]
        sessions = int(rows.task.ne("").sum())
        store_s = float(rows.get("store_s", pd.Series(dtype=float)).fillna(0).sum())
        agent_s = float(rows.get("agent_s", pd.Series(dtype=float)).fillna(0).sum())
        merged = int(merges.get(arm, 0) or 0)
        per_arm[arm] = {
            "sessions": sessions,
            "agent_seconds": round(agent_s, 3),
            "agent_seconds_per_session": round(agent_s / max(sessions, 1), 3),
            "agent_seconds_per_merge": round(agent_s / merged, 3) if merged else None,
            "store_ms_per_session": round(1000 * store_s / max(sessions, 1), 3),
        }
    sessions_total = len(output.sessions)
    text = json.dumps(
        {
            "git_commit": _git_commit(),  # where it ran from: not part of the results, which any checkout repeats
            "seconds": round(seconds, 3),
            "sessions": sessions_total,
            "sessions_per_second": round(sessions_total / seconds, 2) if seconds else None,
            "workers": config.workers,
            "per_arm": per_arm,
        },
        indent=2,
        sort_keys=True,
    )
    with whole(folder / "timings.json") as path:
        path.write_text(text + "\n")


def check_same_scenarios(current: RunMeta, other: RunMeta, *, force: bool, what: str) -> None:
    """Refuse to compare runs (their ``run`` descriptions) of different scenario sets: their
    numbers measure different things."""
    mine, theirs = current.scenario_set_hash, other.scenario_set_hash
    if mine != theirs and not force:
        raise ConfigurationError(
            f"{what} ran another scenario set ({theirs}, this run {mine}); comparing them would mislead. "
            "Use --force to compare anyway."
        )


def load_results(folder_or_file: Path) -> RunResults:
    """The results of a run folder (or a results.json file)."""
    path = folder_or_file / "results.json" if folder_or_file.is_dir() else folder_or_file
    try:
        data = json.loads(read_bounded(path, cap=_RESULTS_CAP))
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigurationError(f"cannot read results from {path}: {exc}") from exc
    run, arms = (data.get("run"), data.get("arms")) if isinstance(data, dict) else (None, None)
    missing = [key for key in _RUN_KEYS if not isinstance(run, dict) or key not in run]
    if missing or not isinstance(arms, dict) or not all(isinstance(a, dict) and "overall" in a for a in arms.values()):
        what = f"run.{missing[0]}" if missing else "arms"
        raise ConfigurationError(f"{path} is not the results of a memstore run ({what} is missing or malformed)")
    try:
        results = RunResults.from_json(upgrade(data))
        if format_of(data) == 1 and folder_or_file.is_dir():  # format 1 kept the charts' data in its tables only
            tables = load_tables(folder_or_file)
            results = replace(results, confusion=confusion(tables), healing=healing_curves(tables))
        return results
    except ConfigurationError as exc:
        raise ConfigurationError(f"{path}: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"{path} is not the results of a memstore run: {exc}") from exc


_RESULTS_CAP = 512 * 1024 * 1024
_RUN_KEYS = ("seed", "trials", "tasks", "scenario_set_hash", "memstore_version")


@dataclass(frozen=True)
class Baseline:
    """A run to compare another with: its results, and its sessions (one row per task and arm)
    when it kept them, so that comparisons with it are paired task by task."""

    results: RunResults
    sessions: pd.DataFrame | None
    source: Path

    @property
    def paired(self) -> bool:
        return self.sessions is not None


def load_baseline(folder_or_file: Path) -> Baseline:
    """A baseline from a run folder (or a results.json file, whose folder may hold its sessions
    table): without a sessions table it can only be compared unpaired.

    Raises:
        ConfigurationError: for something that is not a run's results.
    """
    results = load_results(folder_or_file)
    folder = folder_or_file if folder_or_file.is_dir() else folder_or_file.parent
    path = table_path(folder, "sessions")
    if not path.is_file():
        return Baseline(results, None, folder_or_file)
    try:
        sessions = read_table(path)
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the baseline's sessions from {path}: {exc}") from exc
    if not {"arm", "scenario", "trial", "task"} <= set(sessions.columns):
        raise ConfigurationError(f"{path} is not a sessions table of a memstore run")
    sessions = upgrade_tables({"sessions": sessions}, _tables_format(folder))["sessions"]
    return Baseline(results, sessions, folder_or_file)


TABLE_CAP = 2 * 1024 * 1024 * 1024  # bytes a table may take once decompressed


def read_table(path: Path) -> pd.DataFrame:
    """A table of a run folder (CSV, gzipped or not), read within `TABLE_CAP` bytes.

    Raises:
        OSError: unreadable, not a regular file, or too large. ValueError: not a CSV table
            (``EmptyDataError`` for one with no rows), a damaged gzip stream.
    """
    data = read_bounded(path, cap=TABLE_CAP)
    if path.name.endswith(".gz"):
        data = gunzip_bounded(data, TABLE_CAP)
    return pd.read_csv(io.BytesIO(data), keep_default_na=True)


def _tables_format(folder: Path) -> int:
    """The format of a run folder's tables: its ``results.json``'s (1 for a folder without one)."""
    try:
        data = json.loads(read_bounded(folder / "results.json", cap=_RESULTS_CAP))
    except (OSError, ValueError, RecursionError):
        return 1
    return format_of(data) if isinstance(data, dict) else 1


def load_tables(folder: Path) -> dict[str, pd.DataFrame]:
    """The tables of a run folder, in the current format (`upgrade_tables`)."""
    version = _tables_format(folder)
    tables = {}
    for name in TABLES:
        path = table_path(folder, name)
        if version == 1 and name == "failures" and not path.exists():
            continue  # format 1 could lack it: upgrade_tables gives an empty one
        try:
            tables[name] = read_table(path)
        except pd.errors.EmptyDataError:  # a table with no rows (no review findings, say)
            tables[name] = pd.DataFrame()
        except (OSError, ValueError) as exc:  # missing, or not a table pandas can read
            raise ConfigurationError(f"{folder} is not a run folder: {exc}") from exc
    if "events" in tables and "truth" in tables["events"]:
        for column in ("truth", "origin", "detail", EVENT.memory_id):
            tables["events"][column] = tables["events"][column].fillna("").astype(str)
    return upgrade_tables(tables, version)
