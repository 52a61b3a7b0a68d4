"""Store URIs in a run: each trial opens a fresh store, as its backend declares (`memstore.backends.per_trial`),
from a URI used as given or refused."""

from __future__ import annotations

import re
import string
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from memstore.access import AccessPolicy
from memstore.backends import PerTrial, per_trial_of, wrapped_of
from memstore.clock import Clock, FakeClock
from memstore.errors import ConfigurationError
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.ids import UlidIds
from memstore.store import MemoryStore, open_store
from memstore.uri import StoreURI

__all__ = ["StoreFactory", "check_store_uri", "store_capabilities", "store_profile", "trial_store"]

StoreFactory = Callable[[AccessPolicy, Clock], MemoryStore]
_PLACEHOLDERS = ("scenario", "trial", "arm")


def check_store_uri(uri: str) -> None:
    """Refuse, before anything runs, a store URI that eval could not use as given.

    A backend that keeps its memories outside the process declares how a trial gets a fresh store
    (`memstore.backends.per_trial`): a bare scheme (``sqlite:``, ``ranked:``, ``agentmem:``) gets
    a fresh file per trial in private scratch space; a URI naming a path or a schema must say with
    ``{scenario}``, ``{trial}`` and ``{arm}`` how each trial's store differs, and a named folder
    must exist. Then the store is opened once in a scratch folder (not a server's: that would make
    a schema for nothing), so an unknown scheme or a factory that fails is refused before any
    world is built.

    Raises:
        ConfigurationError: saying what to write instead.
    """
    wrapped = wrapped_of(uri)  # a wrapper its backend refuses (an unknown mutant) is refused by name
    if wrapped is not None:
        check_store_uri(wrapped[1])
        return
    shown = StoreURI.parse(uri).redacted
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(uri) if name is not None]
    except ValueError as exc:
        raise ConfigurationError(f"store URI {shown!r}: {exc}; use {{scenario}}, {{trial}} and {{arm}}") from exc
    unknown = sorted({n for n in names if n not in _PLACEHOLDERS})
    if unknown:
        raise ConfigurationError(
            f"store URI {shown!r} has unknown placeholder(s) {', '.join(unknown)}; known: scenario, trial, arm"
        )
    declared = per_trial_of(uri)
    if declared is not None:
        _check_per_trial(uri, declared)
    if declared is None or not declared.server:
        _open_once(uri)  # and then it is opened, as a trial would open it


def _check_per_trial(uri: str, declared: PerTrial) -> None:
    """Two trials' stores must differ, and a named folder must exist (see `check_store_uri`)."""
    with tempfile.TemporaryDirectory(prefix="memstore-probe-") as folder:
        one, other = (
            declared.make(_format(uri, {"scenario": s, "trial": t, "arm": a}), Path(folder) / s)
            for s, t, a in (("s", 0, "a"), ("t", 1, "b"))
        )
    parsed = StoreURI.parse(uri)
    if one.shared and one.uri == other.uri:
        raise ConfigurationError(
            f"store URI {parsed.redacted!r} names one store for every trial, and eval needs a fresh one per trial: "
            + declared.hint.format(scheme=parsed.scheme)
        )
    if one.folder is not None and one.folder == other.folder and not one.folder.is_dir():
        raise ConfigurationError(f"store URI {parsed.redacted!r}: the folder {one.folder} does not exist")


def _open_once(uri: str) -> dict[str, Any]:
    """Open the store a trial would get, in a scratch folder, and close it: an unknown scheme, a
    factory that cannot be imported or that fails is refused before any world is built. What it
    declares (`store_profile`). (A server store is not opened here: its schema per trial would be
    made for nothing.)"""
    if "{" in uri and per_trial_of(uri) is not None:
        return _profile(None)  # a store per trial named by placeholders: checked above, and the store is the trial's
    with tempfile.TemporaryDirectory(prefix="memstore-probe-") as folder:
        make, _, _ = trial_store(
            uri, scenario="probe", trial=0, arm="probe", seed=0, expiry=timedelta(days=28), where=Path(folder)
        )
        try:
            store = make(AccessPolicy(), FakeClock())
        except ConfigurationError:
            raise
        except Exception as exc:  # a third-party factory may raise anything
            shown = StoreURI.parse(uri).redacted
            raise ConfigurationError(f"store {shown!r} could not be opened: {type(exc).__name__}: {exc}") from exc
        profile = _profile(store)
        close = getattr(store, "close", None)
        if callable(close):
            close()
        return profile


def _profile(store: object) -> dict[str, Any]:
    return {
        "capabilities": sorted(getattr(store, "capabilities", frozenset())),
        "native": dict(getattr(store, "native", {})),
        "emulated": dict(getattr(store, "emulated", {})),
    }


def store_profile(uri: str) -> dict[str, Any]:
    """What the store of ``uri`` declares: its ``capabilities``, and for a store over another
    project's engine (`memstore.backends.foreign`) what that engine does itself (``native``) and
    what is done around it (``emulated``); nothing for a server store, not opened.

    Raises:
        ConfigurationError: a store that cannot be opened (see `check_store_uri`).
    """
    inner = wrapped_of(uri)
    declared = per_trial_of(inner[1] if inner is not None else uri)
    if declared is not None and declared.server:
        return _profile(None)
    return _open_once(uri)


def store_capabilities(uri: str) -> frozenset[str]:
    """What the store of ``uri`` declares (``negative-control`` for a store built to break the
    rules), from a store opened once in a scratch folder; nothing for a server store, not opened.

    Raises:
        ConfigurationError: a store that cannot be opened (see `check_store_uri`).
    """
    return frozenset(store_profile(uri)["capabilities"])


def _format(uri: str, values: dict[str, Any]) -> str:
    """``uri`` with its placeholders filled in (an arm's name made a file name's part)."""
    safe = {k: re.sub(r"\W", "_", v) if k == "arm" and isinstance(v, str) else v for k, v in values.items()}
    return uri.format(**{k: v for k, v in safe.items() if k in _PLACEHOLDERS})


def _per_trial(uri: str, *, scenario: str, trial: int, arm: str, where: Path) -> tuple[str, StoreGuard, str | None]:
    """One trial's own store URI, the guard over its files, and the URI another process opens the
    same store with (None for a store that lives in this process)."""
    wrapped = wrapped_of(uri)
    if wrapped is not None:  # a wrapper (a mutant) around a store: the inner store is made per trial
        head, inner = wrapped
        inner, guard, shared = _per_trial(inner, scenario=scenario, trial=trial, arm=arm, where=where)
        return head + inner, guard, head + shared if shared is not None else None
    declared = per_trial_of(uri)
    if declared is None:
        return uri, StoreGuard(), None
    made = declared.make(_format(uri, {"scenario": scenario, "trial": trial, "arm": arm}), where)
    return made.uri, StoreGuard(list(made.files)), made.uri if made.shared else None


def trial_store(
    uri: str, *, scenario: str, trial: int, arm: str, seed: int, expiry: timedelta, where: Path
) -> tuple[StoreFactory, StoreGuard, str | None]:
    """How to open one trial's store, the guard over its files, and the URI another process
    opens the same store with (None for a store that lives in this process). ``where`` is a
    folder private to the store, apart from the trial's working copy."""
    uri, guard, shared = _per_trial(uri, scenario=scenario, trial=trial, arm=arm, where=where)
    ids = UlidIds(f"{seed}|{scenario}|{trial}")

    def make(access: AccessPolicy, clock: Clock) -> MemoryStore:
        return open_store(uri, access=access, clock=clock, expiry=expiry, ids=ids)

    return make, guard, shared
