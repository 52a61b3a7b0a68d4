"""The conformance suite's failures are readable in the user's own test run: its assertions are
rewritten as the user's are (`memstore.testing` registers its modules with pytest), so a store that
drops memories from ``recent()`` shows what was expected and what came back, not a bare
``AssertionError``. Run from a scratch folder, as a user's project runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FORGETFUL = """\
import pytest

from memstore import UlidIds
from memstore.backends import StoreOptions
from memstore.backends.sqlite import SqliteStore
from memstore.testing import StoreConformance


class Forgetful(SqliteStore):
    def recent(self, repo, **kw):
        return super().recent(repo, **kw)[:1]


class TestForgetful(StoreConformance):
    @pytest.fixture
    def store_factory(self):
        def make(access, clock, expiry):
            return Forgetful(":memory:", StoreOptions(access=access, clock=clock, expiry=expiry, ids=UlidIds(1)))

        return make
"""


def test_a_failed_conformance_test_shows_both_sides(tmp_path: Path) -> None:
    (tmp_path / "test_forgetful.py").write_text(FORGETFUL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    test = "test_forgetful.py::TestForgetful::test_recent_ties_are_broken_by_created_at_then_id"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", test],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-3000:]
    errors = [line for line in done.stdout.splitlines() if line.startswith("E ")]
    assert errors[0].startswith("E       AssertionError: assert ['mem_"), errors
    assert "] == ['mem_" in errors[0]
    assert any("Right contains one more item: 'mem_" in line for line in errors), errors
