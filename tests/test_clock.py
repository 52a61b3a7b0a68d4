"""Clocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memstore import FakeClock, SystemClock, ValidationError


def test_fake_clock_moves_only_when_told() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = FakeClock(start)
    assert clock.now() == start
    assert clock.advance(timedelta(days=28)) == datetime(2026, 1, 29, tzinfo=UTC)
    assert clock.now() == datetime(2026, 1, 29, tzinfo=UTC)


def test_fake_clock_never_goes_back() -> None:
    clock = FakeClock()
    with pytest.raises(ValidationError):
        clock.advance(timedelta(seconds=-1))
    with pytest.raises(ValidationError):
        clock.set(clock.now() - timedelta(seconds=1))


def test_fake_clock_needs_an_aware_start() -> None:
    with pytest.raises(ValidationError):
        FakeClock(datetime(2026, 1, 1))


def test_fake_clock_converts_to_utc() -> None:
    clock = FakeClock(datetime(2026, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))))
    assert clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    assert clock.now().tzinfo == UTC


def test_system_clock_is_aware_utc() -> None:
    assert SystemClock().now().tzinfo == UTC
