"""Interruptions and infrastructure errors say the next step: Ctrl-C prints how many units the run
folder kept and the ``--resume`` command that finishes the run (which then does); a model
endpoint that cannot be reached is named, with its URL and the error, in the summary and in
report.md, not only in events.csv.gz."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIOS = [str(ROOT / "scenarios" / f"{n}.yaml") for n in ("api-version-moved", "api-docs-deleted", "db-pool-revert")]


def test_ctrl_c_says_what_was_kept_and_how_to_finish(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = [str(BIN / "memstore"), "eval", *SCENARIOS, "--trials", "4", "--workers", "1", "--out", str(run)]
    started = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list((run / "shards").glob("*.json.gz")):
        time.sleep(0.05)  # the first unit kept
    started.send_signal(signal.SIGINT)
    _, err = started.communicate(timeout=240)
    assert started.returncode == 130, err
    line = next(x for x in err.splitlines() if x.startswith("interrupted: "))
    kept = len(list((run / "shards").glob("*.json.gz")))
    assert line == (
        f"interrupted: {kept} of 48 units are kept in {run}; finish the run with: memstore eval --resume {run}"
    )
    assert 0 < kept < 48  # 3 scenarios x 4 trials x the 4 default arms
    finished = subprocess.run(
        [str(BIN / "memstore"), "eval", "--resume", str(run)], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert finished.returncode in (0, 1, 3), finished.stderr
    assert (run / "results.json").is_file()
    assert len(list((run / "shards").glob("*.json.gz"))) == 48


def test_an_endpoint_that_cannot_be_reached_is_named_in_the_summary(tmp_path: Path) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "not-used")
    agent = "llm:test-model?base_url=http://127.0.0.1:9/v1"  # the discard port: nothing listens
    result = CliRunner().invoke(main, ["eval", SCENARIOS[0], "--agent", agent, "--out", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    said = (
        f"{agent}/sqlite: not run in 1 session(s), an infrastructure error: the model endpoint "
        "http://127.0.0.1:9/v1/ failed: APIConnectionError: Connection error."
    )
    assert said in result.output.splitlines()
    assert f"- {said}" in (tmp_path / "run" / "report.md").read_text(encoding="utf-8").splitlines()
