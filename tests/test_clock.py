"""Clocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memstore import FakeClock, StorageError, SystemClock, ValidationError
from memstore.clock import FileClock, write_clock_file


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


def test_file_clock_tells_what_its_file_says_and_never_goes_back(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    start = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)
    write_clock_file(path, start)
    clock = FileClock(path)
    assert clock.now() == start
    write_clock_file(path, start + timedelta(days=29))  # another process moves it
    assert clock.now() == start + timedelta(days=29)
    write_clock_file(path, start)
    assert clock.now() == start + timedelta(days=29)
    assert [p.name for p in tmp_path.iterdir()] == ["clock"]  # replaced whole, nothing left beside it


@pytest.mark.parametrize(("text", "message"), [("", "not an ISO 8601 time"), ("2026-01-15T09:00:00", "no timezone")])
def test_file_clock_refuses_a_file_without_a_time(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "clock"
    path.write_text(text)
    with pytest.raises(StorageError, match=message):
        FileClock(path)
    with pytest.raises(StorageError, match="cannot read it"):
        FileClock(tmp_path / "nothing")
