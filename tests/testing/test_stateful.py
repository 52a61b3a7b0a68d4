"""Random operation sequences against the model of the rules, on every built-in backend."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, settings

from memstore import AccessPolicy, Clock, UlidIds, open_store
from memstore.store import MemoryStore
from memstore.testing.stateful import state_machine_for


def _factory(uri: str):  # type: ignore[no-untyped-def]
    def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
        return open_store(uri, access=access, clock=clock, expiry=expiry, ids=UlidIds(3))

    return make


_SETTINGS = settings(
    max_examples=100, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

TestMemoryBackendStateful = state_machine_for(_factory("memory://")).TestCase
TestMemoryBackendStateful.settings = _SETTINGS
TestSqliteBackendStateful = state_machine_for(_factory("sqlite://:memory:")).TestCase
TestSqliteBackendStateful.settings = _SETTINGS
