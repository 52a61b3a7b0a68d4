"""Injected time: every store reads the time from a `Clock`, never from the system directly."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from memstore.errors import ValidationError

__all__ = ["DEFAULT_START", "Clock", "FakeClock", "SystemClock"]

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
