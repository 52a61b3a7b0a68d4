"""Inspect eval logs as memstore runs: what ``memstore compare`` reads of ``.eval`` and ``.json`` logs.

Each log becomes a `Baseline` (memstore's results, and its sessions table), so two or more logs of
the same samples get what two run folders get from ``memstore compare``: outcomes paired by sample
and epoch (McNemar's exact test with a task-clustered interval; the paired bootstrap for review
precision and recall), Holm's adjustment, the gates, the exit status and the Markdown report
(`memstore.harness.report.compare_baselines`). Every log's arm is named after the first log's task,
so that each later log is compared with the first one arm to arm.

A log of memstore's task (`memstore.inspect.task`) holds memstore's rows of each trial in its
scores' metadata: its results are a run folder's, every metric. Any other log gives one session a
sample and epoch whose outcome is its score (the first scorer's, or the one named): a success where
inspect reads the value as 1 (``C``, ``1``, ``True``), a failure otherwise. A sample that errored
is a unit that could not run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memstore import __version__
from memstore.errors import ConfigurationError
from memstore.harness.analysis import RunResults, compare_groups, compare_within, compute, confusion, healing_curves
from memstore.harness.records import (
    TABLES,
    ArmMeta,
    Breaches,
    Chances,
    FailureRecord,
    Lookups,
    Outcome,
    Recall,
    Role,
    RunMeta,
    SessionRecord,
    Spent,
    TrialRecord,
    from_row,
)
from memstore.harness.report import Compared, compare_baselines
from memstore.harness.run import RunOutput
from memstore.harness.runfolder import Baseline, frames_of
from memstore.model import Surface

__all__ = ["EXTRA", "ROWS", "compare_logs", "is_inspect_log", "log_baselines", "read_log"]

EXTRA = "inspect"  # the extra that installs inspect-ai
ROWS = "memstore"  # the key of memstore's task's metadata, and of its scores' metadata holding a trial's rows


def is_inspect_log(path: Path) -> bool:
    """Whether ``path`` is an inspect eval log by its looks: a ``.eval`` file, or a ``.json`` file
    holding an ``eval`` (a run folder's ``results.json`` holds a ``run``)."""
    if path.is_dir() or path.suffix not in {".eval", ".json"}:
        return False
    if path.suffix == ".eval":
        return True
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "eval" in data and "run" not in data


def read_log(path: Path) -> Any:
    """An inspect eval log (`inspect_ai.log.EvalLog`), samples and all.

    Raises:
        ConfigurationError: inspect-ai is not installed, or ``path`` is not a log it can read.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise ConfigurationError(
            f"reading inspect eval logs needs inspect-ai: pip install 'agent-memstore[{EXTRA}]'"
        ) from exc
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # pydantic's, zipfile's, a reader's refusal: each says the file is not a log
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigurationError(f"{path} is not an inspect eval log ({said})") from exc


def _units(log: Any) -> set[tuple[str, int]]:
    """The (sample id, epoch) pairs a log holds."""
    return {(str(sample.id), int(sample.epoch)) for sample in log.samples or []}


def _shown(units: set[tuple[str, int]]) -> str:
    listed = [f"{sample} (epoch {epoch})" for sample, epoch in sorted(units)[:5]]
    return ", ".join(listed) + (f" and {len(units) - 5} more" if len(units) > 5 else "")


def check_same_samples(paths: Sequence[Path], logs: Sequence[Any], *, force: bool) -> None:
    """Refuse logs of other samples than the first log's (unless ``force``): paired by sample and
    epoch, they would be compared on the samples they share only."""
    first = _units(logs[0])
    for path, log in zip(paths[1:], logs[1:], strict=True):
        mine = _units(log)
        if mine == first or force:
            continue
        parts = [f"{len(first - mine)} only in {paths[0]}: {_shown(first - mine)}"] if first - mine else []
        parts += [f"{len(mine - first)} only in {path}: {_shown(mine - first)}"] if mine - first else []
        raise ConfigurationError(
            f"{path} and {paths[0]} are not logs of the same samples ({'; '.join(parts)}); "
            "comparing them would pair only the samples they share. Use --force to compare anyway."
        )


def _score(sample: Any, scorer: str | None) -> Any:
    """The sample's score by ``scorer`` (its first, when None), or None."""
    scores = sample.scores or {}
    if scorer is not None:
        return scores.get(scorer)
    return next(iter(scores.values()), None)


def _settings(log: Any) -> Mapping[str, Any]:
    """What memstore's task was run with (its agent, store, seed, scenario set), {} for another task."""
    found = (log.eval.metadata or {}).get(ROWS)
    return found if isinstance(found, Mapping) else {}


def _memstore_rows(out: RunOutput, rows: Mapping[str, Any], arm: str) -> None:
    """A memstore trial's rows, as its scorer kept them, in ``out`` under the arm ``arm``."""
    for name, record in TABLES.items():  # every table its scorer kept (`memstore.inspect.task`)
        for plain in rows.get(name, []):
            getattr(out, name).append(replace(from_row(record, plain), arm=arm))


def _sample_rows(out: RunOutput, sample: Any, score: Any, arm: str, agent: str) -> None:
    """One session and one trial for a sample of another task: its outcome, its score; nothing
    handed, nothing looked up, no breach (what such a session did not have)."""
    from inspect_ai.scorer import value_to_float

    ok = value_to_float()(score.value) >= 1.0
    name, trial = str(sample.id), int(sample.epoch) - 1
    key: dict[str, Any] = {"arm": arm, "agent": agent, "store": "", "scenario": name, "trial": trial}
    out.sessions.append(
        SessionRecord(
            **key, role=Role.TREATMENT, task=name, surface=Surface.CLI, spent=Spent(model=agent),
            outcome=Outcome(task_success=ok), user="", scenario_kind="inspect", stratum="", index=0, handed=0,
            injected_chars=0, lookups=Lookups(), leaks=0, expiry_violations=0, contract=Breaches(),
            contract_chances=Chances(), agent_error=False, infra_error=False, tampered=0, origins=(),
            recall=Recall(), moved_given=0, moved_reanchored=0, stale_use=False, misled_origins=(), healed=0,
        )
    )  # fmt: skip
    out.trials.append(
        TrialRecord(
            **key, trial_id=f"{name}#{trial}", sessions=1, seeded=0, refused_seeds=0, bad_initial=0, healed=0,
            bad_ids=(), healed_ids=(), bad_seeds=(), healed_seeds=(),
        )
    )  # fmt: skip


def _output(log: Any, arm: str, scorer: str | None) -> RunOutput:
    """Every row a log gives (see the module docstring), each under the arm ``arm``."""
    out = RunOutput()
    agent = str(_settings(log).get("agent") or log.eval.model)
    for sample in sorted(log.samples or [], key=lambda s: (str(s.id), int(s.epoch))):
        score = _score(sample, scorer)
        rows = (score.metadata or {}).get(ROWS) if score is not None else None
        if isinstance(rows, Mapping):
            try:
                _memstore_rows(out, rows, arm)
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigurationError(f"sample {sample.id!r} holds rows this memstore cannot read ({exc})") from exc
        elif score is not None:
            _sample_rows(out, sample, score, arm, agent)
        else:
            why = sample.error.message if sample.error is not None else f"no score{f' by {scorer}' if scorer else ''}"
            key: dict[str, Any] = {"arm": arm, "agent": agent, "store": "", "scenario": str(sample.id)}
            key["trial"] = int(sample.epoch) - 1
            out.failures.append(FailureRecord(**key, error=str(why)[:500], where="inspect"))
    return out


def _scenario_set_hash(log: Any) -> str:
    """memstore's fingerprint of the scenarios memstore's task ran; for another task, one of its samples' ids."""
    given = _settings(log).get("scenario_set_hash")
    if isinstance(given, str):
        return given
    ids = sorted({str(sample.id) for sample in log.samples or []})
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def _meta(path: Path, log: Any, arm: str, out: RunOutput) -> RunMeta:
    """What the log's run was, as memstore describes a run."""
    settings = _settings(log)
    first = out.sessions[0] if out.sessions else None
    agent = first.agent if first is not None else str(settings.get("agent") or log.eval.model)
    store = first.store if first is not None else ""
    return RunMeta(
        seed=int(settings.get("seed", 0)),
        trials=max((int(s.epoch) for s in log.samples or []), default=1),
        limit=int(settings.get("limit", 0)),
        scenario_set_hash=_scenario_set_hash(log),
        scenarios=tuple(sorted({str(s.id) for s in log.samples or []})),
        tasks=len(out.sessions),
        arms=(ArmMeta(name=arm, agent=agent, store=store, role=first.role if first is not None else Role.TREATMENT),),
        stores=(store,) if store else (),
        memstore_version=__version__,
        extra={EXTRA: {"log": str(path), "task": log.eval.task, "model": log.eval.model, "eval_id": log.eval.eval_id}},
    )


def log_baseline(path: Path, log: Any, arm: str, scorer: str | None = None) -> Baseline:
    """A log as a run to compare: memstore's results of it and its sessions table."""
    out = _output(log, arm, scorer)
    frames = frames_of(out)
    meta = _meta(path, log, arm, out)
    roles = {a.name: a.role for a in meta.arms}
    results = RunResults(
        run=meta,
        arms=compute(frames, roles),
        comparisons=tuple(compare_within(frames, seed=meta.seed)),
        groups=tuple(compare_groups(frames)),
        confusion=confusion(frames),
        healing=healing_curves(frames),
    )
    return Baseline(results, frames["sessions"], path)


def log_baselines(paths: Sequence[Path], *, force: bool = False, scorer: str | None = None) -> list[Baseline]:
    """Two or more logs of the same samples, as runs to compare with the first (see the module docstring).

    Raises:
        ConfigurationError: inspect-ai missing, a file that is not a log, logs of other samples (unless ``force``).
    """
    logs = [read_log(path) for path in paths]
    check_same_samples(paths, logs, force=force)
    for path, log in zip(paths, logs, strict=True):
        named = sorted({name for sample in log.samples or [] for name in sample.scores or {}})
        if scorer is not None and scorer not in named:
            raise ConfigurationError(f"no sample of {path} was scored by {scorer!r}; its scorers: {', '.join(named)}")
    arm = str(logs[0].eval.task)
    return [log_baseline(path, log, arm, scorer) for path, log in zip(paths, logs, strict=True)]


def compare_logs(paths: Sequence[Path], *, force: bool = False, scorer: str | None = None) -> Compared:
    """Each of ``paths[1:]`` (inspect eval logs) against ``paths[0]``, as ``memstore compare`` compares runs.

    Raises:
        ConfigurationError: inspect-ai missing, a file that is not a log, logs of other samples or
            scenario sets (unless ``force``).
    """
    return compare_baselines(log_baselines(paths, force=force, scorer=scorer), force=force)
