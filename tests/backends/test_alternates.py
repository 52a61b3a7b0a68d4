"""The alternate stores pass the conformance suite where their format allows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memstore import AccessPolicy, Clock, MemoryStore, UlidIds, open_store
from memstore.testing import StoreConformance
from memstore.testing.stateful import state_machine_for


@pytest.fixture(params=["ranked", "agentmem", "naive"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class TestAlternateBackends(StoreConformance):
    @pytest.fixture
    def store_factory(self, backend: str, tmp_path: Path) -> Callable[..., MemoryStore]:
        counter = iter(range(1000))

        def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
            where = tmp_path / f"s{next(counter)}"
            uri = {"ranked": f"ranked:///{where}.db", "agentmem": f"agentmem:///{where}", "naive": "naive://"}[backend]
            return open_store(uri, access=access, clock=clock, expiry=expiry, ids=UlidIds(9))

        return make


def _ranked(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
    return open_store("ranked://", access=access, clock=clock, expiry=expiry, ids=UlidIds(4))


TestRankedStateful = state_machine_for(_ranked).TestCase
