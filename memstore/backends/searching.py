"""``search:INNER``: a reference store (``search:sqlite:``, ``search:postgresql://...``,
``search:memory://``) that hands memories by ``search()`` and keeps votes that count.

Every reference store can search and keep votes (`memstore.backends.base.RecordStore.search`,
``vote``). What an arm is handed is the store's to declare: a reference store declares
``recent()`` (the newest first: the default, and the baseline's), and this wrapper declares
``search`` and ``votes``, so the harness hands each session ``search(the task's words)`` and an
agent that judges a memory votes on it. The two side by side measure what weighted retrieval
buys (docs/store.md, "Search and votes").
"""

from __future__ import annotations

from typing import Any

from memstore.backends import StoreOptions, resolve_backend, wraps
from memstore.errors import ConfigurationError
from memstore.store import MemoryStore
from memstore.uri import StoreURI

__all__ = ["SearchingStore", "open_searching"]

_PREFIX = "search:"


class SearchingStore:
    """The inner store, declaring ``search`` and ``votes`` (every call goes to it unchanged)."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.capabilities: frozenset[str] = frozenset(getattr(inner, "capabilities", frozenset())) | {
            "search",
            "votes",
        }

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"SearchingStore({self.inner!r})"


def _head_and_inner(uri: str) -> tuple[str, str]:
    """``search:INNER`` as (``search:``, ``INNER``), for `memstore.backends.wraps`."""
    inner = uri[len(_PREFIX) :] if uri.startswith(_PREFIX) else ""
    if not inner or StoreURI.parse(inner).scheme not in {"sqlite", "postgresql", "postgres", "memory"}:
        raise ConfigurationError(
            f"{StoreURI.parse(uri).redacted!r}: search: wraps a reference store: search:sqlite:, "
            "search:postgresql://..., search:memory://"
        )
    return _PREFIX, inner


@wraps(_head_and_inner)
def open_searching(uri: str, options: StoreOptions) -> SearchingStore:
    """The backend factory of ``search:`` URIs."""
    _, inner = _head_and_inner(uri)
    return SearchingStore(resolve_backend(inner)(inner, options))
