"""Shards and resume: a run killed mid-way and resumed, a run split into parts and merged, and a
run resumed with --retry-errors give the same results.json, byte for byte, as one uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main

ROOT = Path(__file__).parents[1]
SCENARIOS = [str(ROOT / "scenarios" / f"{n}.yaml") for n in ("api-version-moved", "api-version-control",
                                                             "api-docs-deleted", "db-pool-contradicted")]  # fmt: skip
OPTIONS = [*SCENARIOS, "--trials", "2", "--seed", "7"]


def _eval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["eval", *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run, uninterrupted."""
    out = tmp_path_factory.mktemp("whole") / "run"
    code, output = _eval(*OPTIONS, "--workers", "2", "--out", str(out))
    assert code == 3, output  # four scenarios: undecided
    return out


def _same(a: Path, b: Path) -> None:
    for name in ("results.json", "sessions.csv.gz", "events.csv.gz", "trials.csv.gz", "findings.csv.gz"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.slow
def test_a_run_killed_mid_way_and_resumed_gives_the_same_bytes(whole: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [sys.executable, "-m", "memstore", "eval", *OPTIONS, "--workers", "2", "--out", str(out)]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "shards").glob("*.json.gz"))) < 3:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_before = len(list((out / "shards").glob("*.json.gz")))
    assert 3 <= done_before < 32  # killed mid-way
    assert not (out / "results.json").exists()
    code, output = _eval("--resume", str(out))
    assert code == 3, output  # four scenarios: undecided
    assert "(resuming)" in output
    assert len(list((out / "shards").glob("*.json.gz"))) == 32
    _same(whole, out)


def test_parts_made_apart_merge_into_the_same_run(whole: Path, tmp_path: Path) -> None:
    for k in (1, 2):
        code, output = _eval(*OPTIONS, "--part", f"{k}/2", "--out", str(tmp_path / f"part{k}"))
        assert code == 0, output  # a part decides nothing: merge does
        assert f"part {k}/2: 16 unit(s)" in output
    code, output = (
        CliRunner().invoke(main, ["merge", str(tmp_path / "part1"), "--out", str(tmp_path / "m0")]).exit_code,
        "",
    )
    assert code == 2  # half the units are missing
    result = CliRunner().invoke(
        main, ["merge", str(tmp_path / "part1"), str(tmp_path / "part2"), "--out", str(tmp_path / "m")]
    )
    assert result.exit_code == 3, result.output  # as the whole run's
    _same(whole, tmp_path / "m")


def test_resume_refuses_a_folder_of_another_run(whole: Path, tmp_path: Path) -> None:
    code, output = _eval("--resume", str(whole), "--seed", "8")
    assert code == 2
    assert "not the same run (seed: 7 there, 8 asked for now)" in output
    other = tmp_path / "other"
    assert _eval(SCENARIOS[0], "--seed", "8", "--out", str(other))[0] == 3
    result = CliRunner().invoke(main, ["merge", str(whole), str(other), "--out", str(tmp_path / "m")])
    assert result.exit_code == 2
    assert "not the same run" in result.output
    code, output = _eval("--resume", str(tmp_path))
    assert code == 2
    assert "is not a run folder made by memstore eval" in output


FLAKY = r"""
import json, os, pathlib, sys
log = pathlib.Path(sys.argv[1])
with log.open("a") as f:
    f.write("x")
task = json.load(open(os.environ["MEMSTORE_TASK"]))
if not pathlib.Path(sys.argv[2]).exists() and task["task"]["key"] == "bump-version":
    result = {"error": {"kind": "infrastructure", "message": "the endpoint is down"}}
else:
    result = {}
json.dump(result, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def test_retry_errors_runs_again_only_what_the_infrastructure_lost(tmp_path: Path) -> None:
    script, log, up = tmp_path / "flaky.py", tmp_path / "calls.log", tmp_path / "up"
    script.write_text(FLAKY)
    agent = f"command:{sys.executable} {script} {log} {up}"
    out = tmp_path / "run"
    options = [SCENARIOS[0], SCENARIOS[1], SCENARIOS[3], "--agent", agent, "--agent-sandbox", "off", "--out", str(out)]
    _eval(*options)
    sessions_first = len(log.read_text())
    first = json.loads((out / "results.json").read_text())
    arm = next(iter(first["arms"].values()))
    assert arm["overall"]["infra_error_rate"]["k"] == 2  # the bump-version tasks of two scenarios
    assert sessions_first > 2  # the third scenario's sessions ran too
    up.touch()
    code, output = _eval("--resume", str(out))  # without --retry-errors: nothing to run
    assert len(log.read_text()) == sessions_first
    code, output = _eval("--resume", str(out), "--retry-errors")
    assert code == 3, output  # four scenarios: undecided
    assert len(log.read_text()) == sessions_first + 2  # only the two units that lost a session ran again
    again = json.loads((out / "results.json").read_text())
    assert next(iter(again["arms"].values()))["overall"]["infra_error_rate"]["k"] == 0
