"""The benchmark scripts still run (on tiny sizes; the real figures come from running them by hand)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parent.parent / "evals" / "bench"


def test_bench_store_runs_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_store.py", "--sizes", "2000", "--queries", "30", "--stores", "100"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "bench_store.py"), run_name="__main__")
    assert done.value.code == 0
    output = capsys.readouterr().out
    assert "store(), one transaction per call, 100 calls" in output
    assert "      2,000 sqlite" in output
    assert "      2,000 memory" in output
