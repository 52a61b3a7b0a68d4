"""Fixtures shared by the package's tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memstore import AccessPolicy, Clock, MemoryStore, UlidIds, open_store
from tests.backends.postgres import URL as POSTGRES_URL
from tests.backends.postgres import fresh_uri

BACKENDS = ["memory", "sqlite-file", "sqlite-memory", *(["postgresql"] if POSTGRES_URL else [])]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary folders where the harness keeps its scratch: in memory where the
    machine has room (`memstore.harness.run.scratch.scratch_base`), since the tests build
    thousands of small git repositories. Before pytest makes its temporary-path factory; not in
    xdist's workers, which are given their part of it; never over a ``--basetemp`` asked for."""
    from memstore.harness.run.scratch import scratch_base

    base = scratch_base()
    if config.option.basetemp is None and not hasattr(config, "workerinput") and base != Path(tempfile.gettempdir()):
        config.option.basetemp = tempfile.mkdtemp(dir=base, prefix="memstore-pytest-")
        config.stash[_MADE] = config.option.basetemp


_MADE = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the temporary folders made above (memory is not a disk to fill run after run)."""
    made = config.stash.get(_MADE, None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(autouse=True)
def _terminal_width_from_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands honour ``COLUMNS``; pytest-xdist's workers set it to 80. A test that
    cares about width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


def uri_for(backend: str, tmp_path: Path) -> str:
    """The URI of a fresh store of ``backend`` under ``tmp_path``."""
    if backend == "postgresql":
        return fresh_uri()
    return {
        "memory": "memory://",
        "sqlite-file": f"sqlite:///{tmp_path / 'memories.db'}",
        "sqlite-memory": "sqlite://:memory:",
    }[backend]


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., MemoryStore]:
    counter = iter(range(1_000_000))

    def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
        target = tmp_path / f"store-{next(counter)}"
        target.mkdir()
        return open_store(uri_for(request.param, target), access=access, clock=clock, expiry=expiry, ids=UlidIds(7))

    return make
