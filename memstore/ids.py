"""Memory ids: sortable by creation time, and reproducible when the caller asks.

An id is ``mem_`` followed by a 26-character ULID (48 bits of milliseconds from the
store's clock, 80 random bits, Crockford base32). Within one millisecond a factory
increments the random part, so ids from one factory sort in creation order. Written
by hand because the ULID packages on PyPI read the system clock and `os.urandom`,
and ours must take both from the caller for byte-identical reruns.
"""

from __future__ import annotations

import os
import random
import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["IdFactory", "UlidIds"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class IdFactory(Protocol):
    """Makes a new, unique memory id at time ``now``."""

    def __call__(self, now: datetime) -> str: ...


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        value, digit = divmod(value, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


class UlidIds:
    """ULID-style ids; seeded for reproducible runs, from the OS otherwise.

    Args:
        seed: seed of the random part; None draws it from `os.urandom`.
    """

    def __init__(self, seed: int | str | None = None) -> None:
        self._rng = random.Random(seed) if seed is not None else None
        self._last_ms = -1
        self._last_random = 0
        self._lock = threading.Lock()

    def _random(self) -> int:
        if self._rng is None:
            return int.from_bytes(os.urandom(10), "big")
        return self._rng.getrandbits(_RANDOM_BITS)

    def __call__(self, now: datetime) -> str:
        ms = (now - _EPOCH) // timedelta(milliseconds=1)
        with self._lock:
            if ms <= self._last_ms:
                ms = self._last_ms
                rand = (self._last_random + 1) % (1 << _RANDOM_BITS)
            else:
                rand = self._random()
            self._last_ms, self._last_random = ms, rand
        return "mem_" + _encode(ms, 10) + _encode(rand, 16)
