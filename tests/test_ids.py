"""Memory ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstore import UlidIds

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_seeded_ids_repeat() -> None:
    first, second = UlidIds(5), UlidIds(5)
    assert [first(T0) for _ in range(3)] == [second(T0) for _ in range(3)]


def test_ids_sort_in_creation_order() -> None:
    ids = UlidIds(1)
    made = [ids(T0) for _ in range(100)] + [ids(T0 + timedelta(milliseconds=1))]
    assert made == sorted(made)
    assert len(set(made)) == 101


def test_id_shape() -> None:
    made = UlidIds()(T0)
    assert made.startswith("mem_")
    assert len(made) == 30
    assert made[4:14] == "01KDVDNA00"  # 2026-01-01T00:00:00Z in milliseconds, Crockford base32


def test_unseeded_ids_differ() -> None:
    assert UlidIds()(T0) != UlidIds()(T0)
