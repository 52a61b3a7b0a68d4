"""The backends: a URI scheme names a factory that opens a store (`memstore.store.BACKENDS`,
a `memstore.registry.Registry`).

Built-in backends are imported only when their scheme is used. Third-party stores plug
in three ways: `register_backend` in-process, an entry point in the
``memstore.backends`` group (name = scheme, value = factory), or a
``package.module:factory`` URI. A factory is called as ``factory(uri, options)``.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable

from memstore.store import BACKENDS, BackendFactory, StoreOptions, resolve_backend, scheme_of

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

ENTRY_POINT_GROUP = BACKENDS.group
_REGISTERED = BACKENDS.registered  # what this process registered (tests swap entries in and out)


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
    return BACKENDS.portable(scheme_of(uri) for uri in uris)


def restore_registrations(references: dict[str, str]) -> None:
    """In a worker process: register the parent's store schemes again from their references."""
    BACKENDS.restore(references)
