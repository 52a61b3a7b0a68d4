"""``traced:INNER``: any store (``traced:sqlite:``, ``traced:memcite:``...) whose every operation is an
OpenTelemetry span named and attributed by the GenAI memory conventions, plus memstore's own.

The optional extra ``otel`` (``pip install 'agent-memstore[otel]'``: opentelemetry-api and -sdk).
Each call of the store protocol is one span, ``"{operation} {store}"``, with:

- ``gen_ai.operation.name``: ``create_memory`` (a store), ``update_memory`` (a correction, a
  refresh, a retirement, a vote), ``search_memory`` (recent, search, get, history),
  ``delete_memory`` (delete, sweep), and ``create_memory_store`` when the store is opened;
- ``gen_ai.provider.name`` ``memstore``, ``gen_ai.memory.store.id`` (the inner store's URI, its
  password hidden), ``gen_ai.memory.record.id`` (the memory written, read or changed),
  ``gen_ai.memory.record.count`` (memories handed, or deleted by a sweep), and
  ``gen_ai.memory.query.text`` (the search query: content, recorded only where
  ``MEMSTORE_OTEL_CAPTURE_CONTENT=1`` says so);
- memstore's own, where the semantic conventions have none yet: memstore.operation (the
  protocol's name of the call), memstore.repository (the scope), memstore.surface,
  memstore.user, memstore.memory.status, memstore.memory.supersedes and
  memstore.memory.expires_at (the end of a memory's window: refreshed + the store's expiry).

A failed call's span has status ERROR and the exception recorded, and the error is raised as it
was. The spans go to the tracer provider the process set up (an OTLP exporter, say); with none
set, ``MEMSTORE_OTEL_FILE=PATH`` makes one that appends each span to PATH as a line of JSON
(`JsonLinesExporter`), which is what the test reads back.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from memstore.access import Actor
from memstore.backends import StoreOptions, resolve_backend, wraps
from memstore.errors import ConfigurationError
from memstore.model import Memory, MemoryDraft, Surface
from memstore.store import MemoryStore
from memstore.uri import StoreURI

__all__ = ["JsonLinesExporter", "TracedStore", "open_traced"]

_PREFIX = "traced:"
_SETUP = threading.Lock()


def _trace() -> Any:
    try:
        from opentelemetry import trace  # an optional dependency: pip install 'agent-memstore[otel]'
    except ImportError as exc:
        raise ConfigurationError("traced: needs OpenTelemetry: pip install 'agent-memstore[otel]'") from exc
    return trace


class JsonLinesExporter:
    """An OpenTelemetry span exporter that appends each span to a file as one line of JSON
    (``name``, ``attributes``, ``status``, ``start`` and ``end`` in nanoseconds)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        lines = [
            json.dumps(
                {
                    "name": s.name,
                    "attributes": dict(s.attributes or {}),
                    "status": s.status.status_code.name,
                    "start": s.start_time,
                    "end": s.end_time,
                },
                sort_keys=True,
                default=str,
            )
            for s in spans
        ]
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write("".join(f"{line}\n" for line in lines))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _tracer() -> Any:
    """memstore's tracer, from the provider the process set up (or, with none and
    ``MEMSTORE_OTEL_FILE`` set, one that writes that file)."""
    trace = _trace()
    with _SETUP:
        path = os.environ.get("MEMSTORE_OTEL_FILE")
        if path and type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor

            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(path)))  # type: ignore[arg-type]
            trace.set_tracer_provider(provider)
    return trace.get_tracer("memstore")


class TracedStore:
    """The inner store, every call of the store protocol a span (the module docstring)."""

    def __init__(self, inner: MemoryStore, label: str, expiry: timedelta) -> None:
        self.inner = inner
        self.label = label
        self.expiry = expiry
        self.capabilities: frozenset[str] = frozenset(getattr(inner, "capabilities", frozenset()))
        self._tracer = _tracer()
        self._content = os.environ.get("MEMSTORE_OTEL_CAPTURE_CONTENT") == "1"
        if callable(getattr(inner, "search", None)):  # a store that searches, traced; none, none
            self.search = self._search
        if callable(getattr(inner, "vote", None)):  # a store that keeps votes, traced; none, none
            self.vote = self._vote
        with self._span("create_memory_store", "open"):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"TracedStore({self.inner!r})"

    @contextmanager
    def _span(self, operation: str, call: str, **attributes: Any) -> Iterator[Any]:
        given = {k: v for k, v in attributes.items() if v is not None}
        base = {"gen_ai.operation.name": operation, "gen_ai.provider.name": "memstore"}
        base |= {"gen_ai.memory.store.id": self.label, "memstore.operation": call}
        with self._tracer.start_as_current_span(f"{operation} {self.label}", attributes=base | given) as span:
            yield span

    def _memory(self, span: Any, memory: Memory) -> None:
        span.set_attribute("gen_ai.memory.record.id", memory.id)
        span.set_attribute("memstore.repository", memory.repo)
        span.set_attribute("memstore.memory.status", memory.status.value)
        span.set_attribute("memstore.memory.expires_at", (memory.refreshed_at + self.expiry).isoformat())
        if memory.supersedes:
            span.set_attribute("memstore.memory.supersedes", memory.supersedes)

    def _listed(self, operation: str, call: str, found: Callable[[], list[Memory]], **attributes: Any) -> list[Memory]:
        with self._span(operation, call, **attributes) as span:
            memories = found()
            span.set_attribute("gen_ai.memory.record.count", len(memories))
            return memories

    # -- the store protocol ---------------------------------------------------------------

    def store(self, draft: MemoryDraft, *, actor: Actor, surface: Surface, supersedes: str | None = None) -> Memory:
        operation = "create_memory" if supersedes is None else "update_memory"
        with self._span(operation, "store", **_who(actor, surface), **{"memstore.repository": draft.repo}) as span:
            memory = self.inner.store(draft, actor=actor, surface=surface, supersedes=supersedes)
            self._memory(span, memory)
            return memory

    def recent(self, repo: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        found = lambda: self.inner.recent(repo, actor=actor, surface=surface, limit=limit)  # noqa: E731
        return self._listed("search_memory", "recent", found, **_who(actor, surface), **{"memstore.repository": repo})

    def _search(self, repo: str, query: str, *, actor: Actor, surface: Surface, limit: int = 50) -> list[Memory]:
        found = lambda: self.inner.search(repo, query, actor=actor, surface=surface, limit=limit)  # type: ignore[attr-defined]  # noqa: E731
        text = {"gen_ai.memory.query.text": query if self._content else None}
        return self._listed(
            "search_memory", "search", found, **_who(actor, surface), **{"memstore.repository": repo}, **text
        )

    def get(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._span("search_memory", "get", **_who(actor, None), **_record(memory_id)) as span:
            memory = self.inner.get(memory_id, actor=actor)
            self._memory(span, memory)
            return memory

    def refresh(self, memory_id: str, *, actor: Actor) -> Memory:
        with self._span("update_memory", "refresh", **_who(actor, None), **_record(memory_id)) as span:
            memory = self.inner.refresh(memory_id, actor=actor)
            self._memory(span, memory)
            return memory

    def _vote(self, memory_id: str, *, actor: Actor, up: bool, reason: str) -> Any:
        direction = {"memstore.vote": "up" if up else "down"}
        with self._span("update_memory", "vote", **_who(actor, None), **_record(memory_id), **direction):
            return self.inner.vote(memory_id, actor=actor, up=up, reason=reason)  # type: ignore[attr-defined]

    def trace_verdict(self, memory: Memory, verdict: str) -> None:
        """A verification of ``memory`` against the code (`memstore.verify`), judged ``verdict``:
        memstore's own operation (``verify_memory``; the GenAI conventions name none), a span with
        the memory's scope and expiry and the verdict (attribute memstore.verdict). Verifying reads
        the repository, not the store: whoever verifies (memstore's MCP server) reports it here."""
        with self._span("verify_memory", "verify", **{"memstore.verdict": verdict}) as span:
            self._memory(span, memory)

    def retire(self, memory_id: str, *, actor: Actor, reason: str) -> None:
        with self._span("update_memory", "retire", **_who(actor, None), **_record(memory_id)):
            self.inner.retire(memory_id, actor=actor, reason=reason)

    def delete(self, memory_id: str, *, actor: Actor) -> None:
        with self._span("delete_memory", "delete", **_who(actor, None), **_record(memory_id)):
            self.inner.delete(memory_id, actor=actor)

    def history(self, memory_id: str, *, actor: Actor) -> list[Memory]:
        found = lambda: self.inner.history(memory_id, actor=actor)  # noqa: E731
        return self._listed("search_memory", "history", found, **_who(actor, None), **_record(memory_id))

    def sweep(self) -> int:
        with self._span("delete_memory", "sweep") as span:
            deleted = self.inner.sweep()
            span.set_attribute("gen_ai.memory.record.count", deleted)
            return deleted


def _record(memory_id: str) -> dict[str, Any]:
    return {"gen_ai.memory.record.id": memory_id}


def _who(actor: Actor, surface: Surface | None) -> dict[str, Any]:
    return {"memstore.user": actor.user, "memstore.surface": None if surface is None else surface.value}


def _head_and_inner(uri: str) -> tuple[str, str]:
    """``traced:INNER`` as (``traced:``, ``INNER``), for `memstore.backends.wraps`."""
    inner = uri[len(_PREFIX) :] if uri.startswith(_PREFIX) else ""
    if not inner:
        raise ConfigurationError(
            f"{StoreURI.parse(uri).redacted!r}: traced: wraps a store: traced:sqlite:, traced:memcite:"
        )
    return _PREFIX, inner


@wraps(_head_and_inner)
def open_traced(uri: str, options: StoreOptions) -> TracedStore:
    """The backend factory of ``traced:`` URIs."""
    _, inner = _head_and_inner(uri)
    _trace()
    return TracedStore(resolve_backend(inner)(inner, options), StoreURI.parse(inner).redacted, options.expiry)
