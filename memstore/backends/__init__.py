"""The backends: a URI scheme names a factory that opens a store (`memstore.store.BACKENDS`,
a `memstore.registry.Registry`).

Built-in backends are imported only when their scheme is used. Third-party stores plug
in three ways: `register_backend` in-process, an entry point in the
``memstore.backends`` group (name = scheme, value = factory), or a
``package.module:factory`` URI. A factory is called as ``factory(uri, options)``.

A URI is read by `memstore.uri.StoreURI` (its scheme, path, what it wraps, its password hidden or
taken out); `redact` and `without_password` are that module's, re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from memstore.store import BACKENDS, BackendFactory, StoreOptions, resolve_backend
from memstore.uri import StoreURI, redact, without_password

__all__ = [
    "BackendFactory",
    "PerTrial",
    "StoreOptions",
    "TrialStore",
    "folder_per_trial",
    "known_schemes",
    "per_trial",
    "per_trial_of",
    "portable_registrations",
    "redact",
    "register_backend",
    "resolve_backend",
    "restore_registrations",
    "without_password",
    "wrapped_of",
    "wraps",
]

ENTRY_POINT_GROUP = BACKENDS.group
F = TypeVar("F", bound=BackendFactory)


@dataclass(frozen=True)
class TrialStore:
    """One trial's own store, as its backend makes it (`PerTrial`).

    Attributes:
        uri: the URI that opens it.
        files: what it keeps on disk in the trial's private folder (kept from the agent).
        shared: whether another process (a session's MCP server) opens the same store with ``uri``;
            False for a store that lives in the process that opened it.
        folder: the existing folder its file must go in, where the URI names one (checked before a run).
    """

    uri: str
    files: tuple[Path, ...] = ()
    shared: bool = False
    folder: Path | None = None


@dataclass(frozen=True)
class PerTrial:
    """How a backend that keeps its memories outside the process gets a fresh store per trial.

    Attributes:
        make: ``make(uri, folder)``: the trial's store for ``uri`` (its ``{scenario}``, ``{trial}``
            and ``{arm}`` filled in) in ``folder``, a folder private to that trial's store.
        hint: what to write instead of a URI that names one store for every trial.
        server: a store on a server (a schema, say): not opened to probe it before a run.
    """

    make: Callable[[str, Path], TrialStore]
    hint: str = "put {{scenario}}, {{trial}} and {{arm}} in it"
    server: bool = False


def per_trial(
    make: Callable[[str, Path], TrialStore], *, hint: str = PerTrial.hint, server: bool = False
) -> Callable[[F], F]:
    """Declare how ``factory``'s backend makes a fresh store per trial (a decorator): ``memstore
    eval`` then gives every trial its own store, and refuses a URI that names one for all of them.
    A backend that declares nothing is opened with its URI as given in every trial (right for a
    store that lives in memory)."""

    def decorate(factory: F) -> F:
        factory.per_trial = PerTrial(make, hint, server)  # type: ignore[attr-defined]
        return factory

    return decorate


def folder_per_trial(scheme: str, name: str, *, shared: bool) -> Callable[[str, Path], TrialStore]:
    """`PerTrial.make` for a backend that keeps its memories in the folder its URI names
    (``scheme:///dir``): the bare scheme is a new folder ``name`` in the trial's own folder, and a
    URI that names one is used as given. ``shared``: another process may open the same store."""

    def make(uri: str, folder: Path) -> TrialStore:
        if not StoreURI.parse(uri).path:
            base = folder / name
            return TrialStore(f"{scheme}:///{base}", files=(base,), shared=shared)
        return TrialStore(uri, shared=shared)

    return make


def per_trial_of(uri: str) -> PerTrial | None:
    """What the backend of ``uri`` declares with `per_trial` (None: nothing)."""
    found = getattr(resolve_backend(uri), "per_trial", None)
    return found if isinstance(found, PerTrial) else None


def wraps(split: Callable[[str], tuple[str, str]]) -> Callable[[F], F]:
    """Declare that ``factory``'s URIs wrap another store's (a decorator): ``split(uri)`` gives
    the wrapper's head and the inner store's URI (``mutant:NAME:`` and ``sqlite:``), and refuses
    a head it does not know (the mutants read both off `StoreURI`: `StoreURI.head`, `StoreURI.inner`).
    ``memstore eval`` checks the inner store and makes it per trial as its own backend declares."""

    def decorate(factory: F) -> F:
        factory.wraps = split  # type: ignore[attr-defined]
        return factory

    return decorate


def wrapped_of(uri: str) -> tuple[str, str] | None:
    """(head, inner URI) of a URI whose backend wraps another store (`wraps`); None for any other.

    Raises:
        ConfigurationError: for a wrapper's URI its backend refuses.
    """
    split = getattr(resolve_backend(uri), "wraps", None)
    return split(uri) if callable(split) else None


def register_backend(scheme: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register ``factory`` for ``scheme://`` URIs (a decorator)."""
    return BACKENDS.register(scheme)


def known_schemes() -> list[str]:
    """Every scheme that `resolve_backend` can open, sorted."""
    return BACKENDS.names()


def portable_registrations(uris: list[str]) -> dict[str, str]:
    """The schemes of ``uris`` registered in this process, as ``module:qualname`` references a
    fresh worker process can import.

    Raises:
        ConfigurationError: for a registered factory that a fresh interpreter cannot import.
    """
    return BACKENDS.portable(StoreURI.parse(uri).scheme for uri in uris)


def restore_registrations(references: dict[str, str]) -> None:
    """In a worker process: register the parent's store schemes again from their references."""
    BACKENDS.restore(references)
