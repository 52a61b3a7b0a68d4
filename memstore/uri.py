"""A store URI as one value: `StoreURI.parse(text)` reads it once, and every part is read off it.

A store URI names a backend by its scheme (``sqlite:///a.db``, ``postgresql://ana@db/team``,
``mcp:server-memory``), names a factory (``package.module:factory``), or wraps another store's
URI: a mutant around a store (``mutant:NAME:INNER``), a server serving one
(``mcp:memstore?store=INNER``). This module reads the text and nothing more. Which scheme opens
which store is the registry's business (`memstore.store.resolve_backend`); each backend reads
its own options from `StoreURI.query` and refuses what it cannot use.

Passwords are the reason the value exists in one place. `StoreURI.redacted` shows each one as
``***`` (what may be printed, logged or written); `StoreURI.identity` takes them out (what a
unit's id and a run folder are keyed on, so a resumed run, its password now from ``PGPASSWORD``,
finds the same units). Every form libpq accepts is covered, wherever a URI sits in another.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from dataclasses import dataclass

from memstore.errors import ConfigurationError
from memstore.registry import REFERENCE

__all__ = ["WRAPPING_SCHEMES", "StoreURI", "redact", "without_password"]

# Schemes whose URI is ``SCHEME:NAME:INNER`` (`memstore.testing.mutants`). They are listed here,
# not asked of the backend, because a backend is imported only when a store is opened, and a URI
# is read (its label shown, its password hidden) long before that, or without it.
WRAPPING_SCHEMES = frozenset({"mutant"})
_NEEDED = "a store URI is needed, such as 'sqlite:///path/to/memories.db'"
_MOST_NESTED = 8  # stores inside stores: a deeper URI is refused, not recursed into
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?P<rest>.*)", re.DOTALL)


@dataclass(frozen=True, repr=False)
class StoreURI:
    """A store URI, parsed once (`StoreURI.parse`); its ``repr`` shows it redacted.

    Attributes:
        text: the URI as given, password and all: what opens the store, never what is shown.
        scheme: lower-cased (``sqlite``); "" for a ``package.module:factory`` reference.
        redacted: every password as ``***``: what may be shown, logged or written.
        identity: every password taken out: what unit ids and run folders are keyed on.
        label: the short name an arm shows (``sqlite``, ``forgets-some(sqlite)``,
            ``mcp:memstore(ranked)``, ``mcp:server-memory``).
        module: a reference's module (``package.module``); "" for a URI with a scheme.
        attribute: a reference's factory (``factory``).
        wrapper: a wrapping URI's name (``forgets-some`` in ``mutant:forgets-some:sqlite:``).
        inner: the store it wraps (``mutant:NAME:INNER``) or serves (``?store=INNER``).
        path: after the scheme and ``//``, before ``?``, leading slashes made one: the file or folder
            a file-based store names (``/abs/a.db``, ``rel.db``, ``:memory:``), the name a named
            store gives (``server-memory``); "" when it names none (``sqlite:``, ``agentmem://``).
            A server's URL holds its authority here: read that with the server's own parser.
        query: after the first ``?``, as written (each backend reads its own options).
    """

    text: str
    scheme: str
    redacted: str
    identity: str
    label: str
    module: str = ""
    attribute: str = ""
    wrapper: str = ""
    inner: StoreURI | None = None
    path: str = ""
    query: str = ""

    @classmethod
    def parse(cls, text: object) -> StoreURI:
        """The value of ``text``.

        Raises:
            ConfigurationError: for no text, text with neither a scheme nor a
                ``package.module:factory`` form, or stores nested more than 8 deep.
        """
        if not isinstance(text, str) or not text:
            raise ConfigurationError(_NEEDED)
        return _parse(text, 0)

    @property
    def head(self) -> str:
        """What a wrapping URI puts before the store it wraps (``mutant:NAME:``); "" for any other."""
        return self.text[: len(self.text) - len(self.inner.text)] if self.wrapper and self.inner else ""

    def __repr__(self) -> str:
        return f"StoreURI({self.redacted!r})"


@functools.lru_cache(maxsize=4096)
def _parse(text: str, depth: int) -> StoreURI:
    """`StoreURI.parse` for a text ``depth`` stores deep (cached: a run reads one URI per row)."""
    shown, kept = redact(text), without_password(text)
    if depth > _MOST_NESTED:
        raise ConfigurationError(f"a store URI nests more than {_MOST_NESTED} stores in one another: {shown[:80]!r}...")
    found = _SCHEME.fullmatch(text)
    reference = REFERENCE.fullmatch(text)
    if reference is not None and (found is None or "." in reference["module"]):
        return StoreURI(text, "", shown, kept, shown, module=reference["module"], attribute=reference["attr"])
    if found is None:
        raise ConfigurationError(
            f"unknown store URI {shown!r}: it has no scheme; write one such as 'sqlite:///path/to/memories.db', "
            "or name a factory as 'package.module:function'"
        )
    scheme, rest = found["scheme"], found["rest"]
    name, _, inside = rest.partition(":")
    if scheme.lower() in WRAPPING_SCHEMES and name and inside:
        inner = _parse(inside, depth + 1)
        label = redact(f"{name}({inner.label})")
        return StoreURI(text, scheme.lower(), shown, kept, label, wrapper=name, inner=inner)
    body, _, query = rest.partition("?")
    if not rest or body.startswith("//"):
        return StoreURI(text, scheme.lower(), shown, kept, scheme, path=_path(body), query=query)
    pairs = [pair for pair in query.split("&") if pair]
    served = [pair.partition("=")[2] for pair in pairs if pair.startswith("store=")]
    # The served store as its server is given it: the query value decoded (`urllib.parse.parse_qs`).
    served_text = urllib.parse.unquote_plus(served[-1]) if served else ""
    served_store = _parse(served_text, depth + 1) if served_text else None
    others = [pair for pair in pairs if not pair.startswith("store=")]
    label = f"{scheme}:{body}" + (f"({served_store.label})" if served_store else "")
    label += f"?{'&'.join(others)}" if others else ""
    return StoreURI(text, scheme.lower(), shown, kept, redact(label), inner=served_store, path=_path(body), query=query)


def _path(body: str) -> str:
    """`StoreURI.path` of the part between the scheme and the query."""
    path = body[2:] if body.startswith("//") else body
    if not path.strip("/"):
        return ""
    return "/" + path.lstrip("/") if path.startswith("/") else path


_AUTHORITY = re.compile(r"://(?P<authority>[^/?#]*)")
_QUERY_PAIR = re.compile(r"(?P<sep>[?&])(?P<key>[^=&#]*)=(?P<value>[^&#]*)")
_KEYWORD_PASSWORD = re.compile(r"(?i)(?<![\w%])(password\s*=\s*)('(?:\\.|[^'\\])*'|\S*)")


def redact(text: str) -> str:
    """``text`` with every password replaced by ``***``: `StoreURI.redacted`, and the same for a
    text that is not a store URI (a libpq connection string, say).

    Every form libpq accepts is covered: the userinfo of a URL (up to the authority's last ``@``,
    so a password holding ``@`` is masked whole), a ``password`` query parameter however its
    name is percent-encoded, and ``password=`` in a keyword/value connection string. URIs nested
    in another (``mutant:NAME:postgresql://...``) are redacted where they sit.
    """

    def authority(found: re.Match[str]) -> str:
        userinfo, at, hosts = found["authority"].rpartition("@")
        if not at or ":" not in userinfo:
            return found[0]
        return f"://{userinfo.partition(':')[0]}:***@{hosts}"

    def pair(found: re.Match[str]) -> str:
        if urllib.parse.unquote(found["key"]).strip().lower() != "password":
            return found[0]
        return f"{found['sep']}{found['key']}=***"

    shown = _AUTHORITY.sub(authority, text)
    shown = _QUERY_PAIR.sub(pair, shown)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m[1]}***", shown) if "://" not in shown else shown


def without_password(text: str) -> str:
    """``text`` with every password taken out (the forms of `redact`): `StoreURI.identity`."""
    masked = redact(text)
    masked = masked.replace(":***@", "@")
    masked = re.sub(r"([?&])[^=&#]*=\*\*\*(&|$)", lambda m: m[1] if m[2] else "", masked)
    masked = re.sub(r"[?&]$", "", masked)
    return re.sub(r"(?i)\s*password\s*=\s*\*\*\*", "", masked)
