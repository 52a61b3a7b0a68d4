"""The backend registry: a URI scheme names a factory that opens a store.

Built-in backends are imported only when their scheme is used. Third-party stores plug
in three ways: `register_backend` in-process, an entry point in the
``memstore.backends`` group (name = scheme, value = factory), or a
``package.module:factory`` URI. A factory is called as ``factory(uri, options)``.
"""

from __future__ import annotations

import importlib
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from memstore.access import AccessPolicy
from memstore.clock import Clock
from memstore.errors import ConfigurationError
from memstore.ids import IdFactory

if TYPE_CHECKING:
    from memstore.store import MemoryStore

__all__ = [
    "BackendFactory",
    "StoreOptions",
    "known_schemes",
    "portable_registrations",
    "redact",
    "register_backend",
    "resolve_backend",
    "restore_registrations",
    "without_password",
]

ENTRY_POINT_GROUP = "memstore.backends"


@dataclass(frozen=True)
class StoreOptions:
    """What every backend is opened with.

    ``read_only``: the caller will only read (a backend that can open its target read-only
    does, and refuses writes with `StorageError`); ``create``: whether a store that does not
    exist yet may be created (``False``: opening one that is not there is a
    `ConfigurationError`, so a mistyped path is never silently a new, empty store).
    """

    access: AccessPolicy
    clock: Clock
    expiry: timedelta
    ids: IdFactory
    read_only: bool = False
    create: bool = True


BackendFactory = Callable[[str, StoreOptions], "MemoryStore"]

_BUILTIN: dict[str, str] = {
    "agentmem": "memstore.backends.agentmem:open_agentmem",
    "memory": "memstore.backends.memory:open_memory",
    "mutant": "memstore.testing.mutants:open_mutant",
    "naive": "memstore.backends.naive:open_naive",
    "postgres": "memstore.backends.postgresql:open_postgresql",
    "postgresql": "memstore.backends.postgresql:open_postgresql",
    "ranked": "memstore.backends.ranked:open_ranked",
    "sqlite": "memstore.backends.sqlite:open_sqlite",
}
_REGISTERED: dict[str, BackendFactory] = {}
_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):")
_FACTORY_REF = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_]\w*)$")


_AUTHORITY = re.compile(r"://(?P<authority>[^/?#]*)")
_QUERY_PAIR = re.compile(r"(?P<sep>[?&])(?P<key>[^=&#]*)=(?P<value>[^&#]*)")
_KEYWORD_PASSWORD = re.compile(r"(?i)(?<![\w%])(password\s*=\s*)('(?:\\.|[^'\\])*'|\S*)")


def redact(uri: str) -> str:
    """``uri`` with every password replaced by ``***`` (what may be shown, logged or written).

    Every form libpq accepts is covered: the userinfo of a URL (up to the authority's last ``@``,
    so a password holding ``@`` is masked whole), a ``password`` query parameter however its
    name is percent-encoded, and ``password=`` in a keyword/value connection string. Store URIs
    nested in another (``mutant:NAME:postgresql://...``) are redacted where they sit.
    """

    def authority(found: re.Match[str]) -> str:
        text = found["authority"]
        userinfo, at, hosts = text.rpartition("@")
        if not at or ":" not in userinfo:
            return found[0]
        return f"://{userinfo.partition(':')[0]}:***@{hosts}"

    def pair(found: re.Match[str]) -> str:
        if urllib.parse.unquote(found["key"]).strip().lower() != "password":
            return found[0]
        return f"{found['sep']}{found['key']}=***"

    shown = _AUTHORITY.sub(authority, uri)
    shown = _QUERY_PAIR.sub(pair, shown)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m[1]}***", shown) if "://" not in shown else shown


def without_password(uri: str) -> str:
    """``uri`` with every password taken out (the forms of `redact`): what a run folder keeps,
    and what a unit's id is made of, so a resumed run (its password from ``PGPASSWORD`` or
    ``~/.pgpass``) finds the same units."""
    masked = redact(uri)
    masked = masked.replace(":***@", "@")
    masked = re.sub(r"([?&])[^=&#]*=\*\*\*(&|$)", lambda m: m[1] if m[2] else "", masked)
    masked = re.sub(r"[?&]$", "", masked)
    return re.sub(r"(?i)\s*password\s*=\s*\*\*\*", "", masked)


def register_backend(scheme: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register ``factory`` for ``scheme://`` URIs (a decorator)."""

    def decorate(factory: BackendFactory) -> BackendFactory:
        _REGISTERED[scheme.lower()] = factory
        return factory

    return decorate


def _entry_points() -> dict[str, Any]:
    return {ep.name.lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_schemes() -> list[str]:
    """Every scheme that `resolve_backend` can open, sorted."""
    return sorted({*_BUILTIN, *_REGISTERED, *_entry_points()})


def _load(ref: str) -> BackendFactory:
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import store module {module_name!r}: {exc}") from exc
    try:
        factory = getattr(module, attr)
    except AttributeError as exc:
        raise ConfigurationError(f"module {module_name!r} has no store factory {attr!r}") from exc
    if not callable(factory):
        raise ConfigurationError(f"{ref!r} is not callable")
    return factory  # type: ignore[no-any-return]


def resolve_backend(uri: str) -> BackendFactory:
    """The factory for ``uri``.

    Raises:
        ConfigurationError: naming the known schemes, when none fits.
    """
    if not isinstance(uri, str) or not uri:
        raise ConfigurationError("a store URI is needed, such as 'sqlite:///path/to/memories.db'")
    if "://" not in uri and _FACTORY_REF.match(uri):
        return _load(uri)
    match = _SCHEME.match(uri)
    scheme = match.group("scheme").lower() if match else ""
    if scheme in _REGISTERED:
        return _REGISTERED[scheme]
    if scheme in _BUILTIN:
        return _load(_BUILTIN[scheme])
    plugins = _entry_points()
    if scheme in plugins:
        factory = plugins[scheme].load()
        return factory  # type: ignore[no-any-return]
    known = ", ".join(f"{s}://" for s in known_schemes() if s != "mutant")
    raise ConfigurationError(
        f"unknown store URI {uri!r}: known schemes are {known}, or name a factory as 'package.module:function'"
    )


def portable_registrations(uris: list[str]) -> dict[str, str]:
    """The schemes of ``uris`` registered in this process, as ``module:qualname`` references a
    fresh worker process can import.

    Raises:
        ConfigurationError: for a registered factory that a fresh interpreter cannot import.
    """
    found = {}
    for uri in uris:
        match = _SCHEME.match(uri)
        scheme = match.group("scheme").lower() if match else ""
        factory = _REGISTERED.get(scheme)
        if factory is None or scheme in _BUILTIN:
            continue
        module, qualname = getattr(factory, "__module__", ""), getattr(factory, "__qualname__", "")
        if not module or module == "__main__" or "<" in qualname or "." in qualname or not qualname:
            raise ConfigurationError(
                f"store scheme {scheme!r} was registered with {factory!r}, which worker processes cannot import "
                "(a lambda, a nested function, or one in __main__): register a module-level factory, name it as "
                "'package.module:function', or run with one worker"
            )
        found[scheme] = f"{module}:{qualname}"
    return found


def restore_registrations(references: dict[str, str]) -> None:
    """In a worker process: register the parent's store schemes again from their references."""
    for scheme, reference in references.items():
        _REGISTERED[scheme] = _load(reference)
