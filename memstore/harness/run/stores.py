"""Store URIs in a run: each trial opens a fresh store, from a URI used as given or refused."""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from memstore.access import AccessPolicy
from memstore.backends import redact
from memstore.clock import Clock
from memstore.errors import ConfigurationError
from memstore.harness.run.guard import StoreGuard
from memstore.ids import UlidIds
from memstore.store import MemoryStore, open_store

__all__ = ["StoreFactory", "check_store_uri", "store_capabilities", "trial_store"]

StoreFactory = Callable[[AccessPolicy, Clock], MemoryStore]
_PLACEHOLDERS = ("scenario", "trial", "arm")
_PER_TRIAL_SCHEMES = ("sqlite", "ranked", "agentmem")  # file stores: eval opens a fresh one per trial
_SERVER_SCHEMES = ("postgresql", "postgres")  # a store per trial is a schema per trial


def check_store_uri(uri: str) -> None:
    """Refuse, before anything runs, a store URI that eval could not use as given.

    A file store named by a bare scheme (``sqlite:``, ``ranked:``, ``agentmem:``) gets a fresh
    file per trial in private scratch space; one naming a path must say with ``{scenario}``,
    ``{trial}`` and ``{arm}`` how each trial's file differs, and its folder must exist. Then the
    store is opened once in a scratch folder (not a server's: that would make a schema for
    nothing), so an unknown scheme or a factory that fails is refused before any world is built.

    Raises:
        ConfigurationError: saying what to write instead.
    """
    wrapped = _mutant(uri)
    if wrapped is not None:
        from memstore.testing.mutants import split_mutant_uri

        split_mutant_uri(uri)  # a mutant that does not exist is refused by name
        check_store_uri(wrapped[1])
        return
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(uri) if name is not None]
    except ValueError as exc:
        raise ConfigurationError(f"store URI {uri!r}: {exc}; use {{scenario}}, {{trial}} and {{arm}}") from exc
    unknown = sorted({n for n in names if n not in _PLACEHOLDERS})
    if unknown:
        raise ConfigurationError(
            f"store URI {uri!r} has unknown placeholder(s) {', '.join(unknown)}; known: scenario, trial, arm"
        )
    _check_form(uri, names)
    if uri.partition(":")[0].lower() not in _SERVER_SCHEMES:
        _open_once(uri)  # and then it is opened, as a trial would open it


def _check_form(uri: str, names: list[str]) -> None:
    """What can be said of a store URI without opening it (see `check_store_uri`)."""
    scheme, _, rest = uri.partition(":")
    if scheme.lower() in _SERVER_SCHEMES:
        shown = redact(uri)  # never a password in a message
        if not names:
            raise ConfigurationError(
                f"store URI {shown!r} names one store for every trial, and eval needs a fresh one per trial: "
                "put {scenario}, {trial} and {arm} in its schema, such as ?schema=run_{scenario}_{trial}_{arm}"
            )
        return
    if scheme.lower() not in _PER_TRIAL_SCHEMES or not rest.strip("/") or rest.endswith(":memory:"):
        return
    if not names:
        raise ConfigurationError(
            f"store URI {uri!r} names one store for every trial, and eval needs a fresh one per trial: "
            f"use '{scheme}:' (a private file per trial), or put {{scenario}}, {{trial}} and {{arm}} in the path"
        )
    sample = Path(_format(uri, {"scenario": "s", "trial": 0, "arm": "a"}).partition(":")[2].lstrip("/"))
    folder = Path("/" + str(sample)).parent if rest.startswith("//") else sample.parent
    if "{" not in str(Path(rest).parent) and not folder.is_dir():
        raise ConfigurationError(f"store URI {uri!r}: the folder {folder} does not exist")


def _open_once(uri: str) -> frozenset[str]:
    """Open the store a trial would get, in a scratch folder, and close it: an unknown scheme, a
    factory that cannot be imported or that fails is refused before any world is built. The
    capabilities it declares. (A server store is not opened here: its schema per trial would be
    made for nothing.)"""
    import tempfile

    from memstore.clock import FakeClock

    if "{" in uri:
        return frozenset()  # a path per trial: its folder was checked above, and the file is the trial's
    with tempfile.TemporaryDirectory(prefix="memstore-probe-") as folder:
        make, _, _ = trial_store(
            uri, scenario="probe", trial=0, arm="probe", seed=0, expiry=timedelta(days=28), where=Path(folder)
        )
        try:
            store = make(AccessPolicy(), FakeClock())
        except ConfigurationError:
            raise
        except Exception as exc:  # a third-party factory may raise anything
            raise ConfigurationError(f"store {uri!r} could not be opened: {type(exc).__name__}: {exc}") from exc
        capabilities = frozenset(getattr(store, "capabilities", frozenset()))
        close = getattr(store, "close", None)
        if callable(close):
            close()
        return capabilities


def store_capabilities(uri: str) -> frozenset[str]:
    """What the store of ``uri`` declares (``negative-control`` for a store built to break the
    rules), from a store opened once in a scratch folder; nothing for a server store, not opened.

    Raises:
        ConfigurationError: a store that cannot be opened (see `check_store_uri`).
    """
    if uri.partition(":")[0].lower() in _SERVER_SCHEMES:
        return frozenset()
    return _open_once(uri)


def _schema_safe(uri: str) -> str:
    """``uri`` with its ``schema`` made a PostgreSQL name: lower case, ``_`` for anything else, at
    most 63 characters (a digest keeps long names apart)."""
    head, found, schema = uri.partition("schema=")
    if not found:
        return uri
    schema, amp, tail = schema.partition("&")
    name = re.sub(r"[^a-z0-9_]", "_", schema.lower())
    if len(name) > 63:
        name = name[:50] + "_" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return f"{head}schema={name}{amp}{tail}"


def _format(uri: str, values: dict[str, object]) -> str:
    return uri.format(**{k: v for k, v in values.items() if k in _PLACEHOLDERS})


def _mutant(uri: str) -> tuple[str, str] | None:
    """``mutant:NAME:INNER`` as (``mutant:NAME:``, ``INNER``); None for any other URI."""
    scheme, _, rest = uri.partition(":")
    if scheme.lower() != "mutant":
        return None
    name, _, inner = rest.partition(":")
    return f"{scheme}:{name}:", inner


def _per_trial(uri: str, *, scenario: str, trial: int, arm: str, where: Path) -> tuple[str, StoreGuard, str | None]:
    """One trial's own store URI, the guard over its files, and the URI another process opens the
    same store with (None for a store that lives in this process)."""
    wrapped = _mutant(uri)
    if wrapped is not None:  # a mutant wraps a store: the inner store is made per trial
        head, inner = wrapped
        inner, guard, shared = _per_trial(inner, scenario=scenario, trial=trial, arm=arm, where=where)
        return head + inner, guard, head + shared if shared is not None else None
    scheme, _, rest = uri.partition(":")
    guard = StoreGuard()
    if "{" in uri and scheme.lower() in _SERVER_SCHEMES:
        uri = _schema_safe(_format(uri, {"scenario": scenario, "trial": trial, "arm": arm}))
    elif "{" in uri:
        uri = _format(uri, {"scenario": scenario, "trial": trial, "arm": re.sub(r"\W", "_", arm)})
    elif scheme in {"sqlite", "ranked"} and not rest.strip("/"):
        uri = f"{scheme}:///{where / 'store.db'}"  # a fresh file per trial
        guard = StoreGuard([where / "store.db"])
    elif scheme == "agentmem" and not rest.strip("/"):
        uri = f"agentmem:///{where / 'agent-mem'}"  # a fresh base directory per trial
        guard = StoreGuard([where / "agent-mem"])
    rest = uri.partition(":")[2]
    shared = uri if scheme.lower() in _PER_TRIAL_SCHEMES and rest.strip("/") and not rest.endswith(":memory:") else None
    if scheme.lower() in _SERVER_SCHEMES:
        shared = uri  # a server: any process opens the same store
    return uri, guard, shared


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
