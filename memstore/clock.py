"""Injected time: every store reads the time from a `Clock`, never from the system directly."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol, runtime_checkable

from memstore.errors import StorageError, ValidationError

__all__ = ["DEFAULT_START", "Clock", "FakeClock", "FileClock", "SystemClock", "write_clock_file"]

DEFAULT_START = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)


@runtime_checkable
class Clock(Protocol):
    """A source of timezone-aware UTC datetimes."""

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class FakeClock:
    """A clock that moves only when told to: for tests and simulated worlds.

    Args:
        start: the first time it tells; must be timezone-aware.
    """

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        if start.tzinfo is None or start.utcoffset() is None:
            raise ValidationError("start", "FakeClock needs a timezone-aware datetime")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by ``delta`` (never backwards) and return the new time."""
        if delta < timedelta(0):
            raise ValidationError("delta", "a clock only moves forward")
        with self._lock:
            self._now += delta
            return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when``, which must not be earlier than now."""
        if when.tzinfo is None or when.utcoffset() is None:
            raise ValidationError("when", "needs a timezone-aware datetime")
        self.advance(when.astimezone(UTC) - self.now())

    def __repr__(self) -> str:
        return f"FakeClock({self._now.isoformat()})"


class FileClock:
    """The time written in a file, read at every call: a clock that another process moves.

    For a server whose clock is someone else's, such as a ``memstore mcp`` server that a harness
    drives through a simulated month: the harness writes the time, the server reads it. The file
    holds one ISO 8601 time with a timezone; its writer replaces it whole (`write_clock_file`),
    so a reader never sees half a time. A time earlier than one already told is not told: the
    clock never moves backwards.

    Raises:
        StorageError: when the file cannot be read or does not hold such a time (at start, and
            at any call after).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._told: datetime | None = None
        self._lock = threading.Lock()
        self.now()

    def now(self) -> datetime:
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"clock file {self.path}: cannot read it ({exc})") from exc
        try:
            when = datetime.fromisoformat(text)
        except ValueError as exc:
            raise StorageError(f"clock file {self.path}: {text[:40]!r} is not an ISO 8601 time") from exc
        if when.tzinfo is None or when.utcoffset() is None:
            raise StorageError(f"clock file {self.path}: {text[:40]!r} has no timezone")
        with self._lock:
            self._told = max(when.astimezone(UTC), self._told or when.astimezone(UTC))
            return self._told

    def __repr__(self) -> str:
        return f"FileClock({str(self.path)!r})"


def write_clock_file(path: Path, when: datetime) -> None:
    """Set the time a `FileClock` on ``path`` tells, replacing the file whole."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValidationError("when", "needs a timezone-aware datetime")
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(when.astimezone(UTC).isoformat() + "\n", encoding="utf-8")
    os.replace(partial, path)
