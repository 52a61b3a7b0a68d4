"""Random operation sequences against the model of the rules, on every built-in backend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from hypothesis import HealthCheck, settings

from memstore import AccessPolicy, Clock, UlidIds, open_store
from memstore.store import MemoryStore
from memstore.testing.stateful import state_machine_for
from tests.backends.postgres import URL as POSTGRES_URL
from tests.backends.postgres import fresh_uri


def _factory(uri: str | Callable[[], str]):  # type: ignore[no-untyped-def]
    def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
        target = uri() if callable(uri) else uri  # PostgreSQL: a fresh schema for every example
        return open_store(target, access=access, clock=clock, expiry=expiry, ids=UlidIds(3))

    return make


_SETTINGS = settings(
    max_examples=100, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

TestMemoryBackendStateful = state_machine_for(_factory("memory://")).TestCase
TestMemoryBackendStateful.settings = _SETTINGS
TestSqliteBackendStateful = state_machine_for(_factory("sqlite://:memory:")).TestCase
TestSqliteBackendStateful.settings = _SETTINGS
if POSTGRES_URL:
    TestPostgresBackendStateful = state_machine_for(_factory(fresh_uri)).TestCase
    TestPostgresBackendStateful.settings = settings(_SETTINGS, max_examples=40)
