"""Fixtures shared by the package's tests."""

from __future__ import annotations

import os
import shutil
import sys
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
    machine has room (`memstore.harness.run.isolation.scratch.scratch_base`), since the tests build
    thousands of small git repositories. Before pytest makes its temporary-path factory; not in
    xdist's workers, which are given their part of it; never over a ``--basetemp`` asked for."""
    from memstore.harness.run.isolation.scratch import scratch_base

    _compile_once(config)
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist 3.6+ would hand out the files with
        config.option.loadscopereorder = False  # the most tests first, undoing the order below
    base = scratch_base()
    if config.option.basetemp is None and not hasattr(config, "workerinput") and base != Path(tempfile.gettempdir()):
        config.option.basetemp = tempfile.mkdtemp(dir=base, prefix="memstore-pytest-")
        config.stash[_MADE] = config.option.basetemp


_MADE = pytest.StashKey[str]()


def _compile_once(config: pytest.Config) -> None:
    """Where ``PYTHONDONTWRITEBYTECODE`` is set, every Python process the suite starts (hundreds:
    evals, their workers, servers, agents) would compile memstore from source again, and pytest
    rewrite every test module again: about 40 s of the suite's CPU. The suite keeps that
    bytecode instead in a cache of its own outside the checkout (``PYTHONPYCACHEPREFIX``, in the
    user's cache folder; ``MEMSTORE_PYCACHE=DIR`` chooses, ``off`` leaves Python's setting
    alone), so the checkout stays as clean as the setting keeps it. In the controller, before
    xdist starts its workers, which inherit it."""
    choice = os.environ.get("MEMSTORE_PYCACHE", "")
    if hasattr(config, "workerinput") or not sys.flags.dont_write_bytecode or choice == "off":
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # the user keeps bytecode somewhere already: only writing it was turned off
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memstore" / "pycache"
    prefix = Path(choice) if choice else cache
    prefix.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    sys.pycache_prefix, sys.dont_write_bytecode = str(prefix), False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that hold a slow test (``@pytest.mark.slow``) and the evaluation suite first, each
    file's tests in their order: pytest-xdist (``--dist loadfile``) hands files out in this order,
    so the long ones start while the other worker has work, and the last files handed out are
    short. In collection order, the evaluation suite's run and the mutation suites came last, and
    one worker ran them alone for a minute."""
    heavy = {
        item.path
        for item in items
        if item.get_closest_marker("slow") or item.path.is_relative_to(config.rootpath / "evals")
    }
    items.sort(key=lambda item: item.path not in heavy)  # stable: the rest keep their order


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
