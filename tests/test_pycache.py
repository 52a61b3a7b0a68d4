"""The suite's bytecode cache (tests/conftest.py `_compile_once`): where writing bytecode is turned
off, the suite keeps it in a folder of its own, outside the checkout, and leaves a user's own
prefix, an explicit ``off`` and xdist's workers alone."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import _compile_once


@pytest.fixture
def no_bytecode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(sys, "flags", SimpleNamespace(dont_write_bytecode=1))
    monkeypatch.setattr(sys, "pycache_prefix", sys.pycache_prefix)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.delenv("MEMSTORE_PYCACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_bytecode_goes_to_the_users_cache_folder_and_the_workers_inherit_it(no_bytecode: Path) -> None:
    _compile_once(SimpleNamespace())  # type: ignore[arg-type]
    prefix = no_bytecode / "cache" / "memstore" / "pycache"
    assert prefix.is_dir()
    assert (sys.pycache_prefix, sys.dont_write_bytecode) == (str(prefix), False)

    assert os.environ["PYTHONPYCACHEPREFIX"] == str(prefix)
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ


@pytest.mark.parametrize("case", ["off", "prefix", "worker"])
def test_off_a_users_own_prefix_and_xdist_workers_are_left_alone(
    no_bytecode: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    config = SimpleNamespace(workerinput={}) if case == "worker" else SimpleNamespace()
    if case == "off":
        monkeypatch.setenv("MEMSTORE_PYCACHE", "off")
    if case == "prefix":
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(no_bytecode / "mine"))
    _compile_once(config)  # type: ignore[arg-type]

    assert (sys.dont_write_bytecode, os.environ["PYTHONDONTWRITEBYTECODE"]) == (True, "1")
    assert not (no_bytecode / "cache").exists()
