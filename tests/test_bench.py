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


def test_bench_verify_runs_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["bench_verify.py", "--files", "40", "--commits", "20", "--memories", "30", "--baseline-sample", "10"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "bench_verify.py"), run_name="__main__")
    assert done.value.code == 0
    output = capsys.readouterr().out
    assert "repository: 40 files, 20 commits" in output
    assert "30 memories, 90 citation checks at HEAD" in output
    assert "warm, same process:" in output


def test_bench_worlds_runs_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_worlds.py", "--commits", "60", "--baseline-commits", "5", "--trials", "5"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "bench_worlds.py"), run_name="__main__")
    assert done.value.code == 0
    output = capsys.readouterr().out
    assert "history of 60 commits" in output
    assert "memory://    5 worlds: median" in output


def test_bench_runner_runs_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_runner.py", "--workers", "1", "--repositories", "2", "--skip-baseline"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "bench_runner.py"), run_name="__main__")
    assert done.value.code == 0
    output = capsys.readouterr().out
    assert "generated population, 1 workers" in output
    assert "40 tasks x 3 arms =    120 sessions" in output


def test_bench_mcp_runs_small(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_mcp.py", "--calls", "5"])
    runpy.run_path(str(BENCH / "bench_mcp.py"), run_name="__main__")  # the server's stderr needs a real fd: capfd
    output = capfd.readouterr().out
    assert "1,000 memories in a SQLite store, 5 calls each" in output
    assert "recent_memories  stdio" in output
    assert "verify_memory    stdio" in output


def test_bench_sequential_runs_small(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_sequential.py", "--runs", "4", "--workers", "1"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "bench_sequential.py"), run_name="__main__")
    assert done.value.code == 0
    output = capsys.readouterr().out
    assert "no-harm gate (treatment vs control)" in output
    assert "fixed: N = 740 pairs (1,480 sessions)" in output
    assert "figures:" in output
    assert "simulated outcomes, 4 runs per truth, seed 0" in output


def test_eval_instructions_flags_no_hand_written_fact_and_every_planted_memory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["eval_instructions.py"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BENCH / "eval_instructions.py"), run_name="__main__")
    assert done.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    flagged = {line[:34].strip(): line[34:].split(" of ")[0].strip() for line in lines if " flagged (" in line}
    sources = ("hand-written, tuning projects", "hand-written, hold-out", "library (seeded and mined)")
    assert flagged == dict.fromkeys(sources, "0")  # no false flags (the hold-out's texts are not printed)
    assert "planted with instructions (claim.instructs): 6 of 6 flagged" in lines
