"""``memstore report`` and ``memstore compare`` as a user runs them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.scenarios.data import scenarios_dir

MOVED = str(scenarios_dir() / "api-version-moved.yaml")
CONTROL = str(scenarios_dir() / "api-version-control.yaml")


def _eval(out: Path, *args: str) -> None:
    result = CliRunner().invoke(
        main, ["eval", *args, "--out", str(out), "--agent", "jit-verify", "--agent", "trusting"]
    )
    assert result.exit_code == 3, result.output  # one scenario cannot decide every gate
    assert "UNDECIDED: none of" in result.output


def test_report_reads_a_run_written_before_tables_were_compressed(tmp_path: Path) -> None:
    """Runs of older versions hold plain .csv tables and results without roles; they still render."""
    _eval(tmp_path / "run", MOVED)
    for packed in (tmp_path / "run").glob("*.csv.gz"):
        (tmp_path / "run" / packed.name.removesuffix(".gz")).write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    del results["format"]  # format 1: what memstore wrote before formats (and roles) were recorded
    for arm in results["arms"].values():
        del arm["role"]
    (tmp_path / "run" / "results.json").write_text(json.dumps(results))
    result = CliRunner().invoke(main, ["report", str(tmp_path / "run"), "--format", "md"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "run" / "report.md").read_text()
    assert "| jit-verify/sqlite | 1.000" in text


def test_the_tables_are_compressed_and_the_same_every_time(tmp_path: Path) -> None:
    _eval(tmp_path / "a", MOVED)
    _eval(tmp_path / "b", MOVED)
    for name in ("sessions", "events", "trials"):
        packed = (tmp_path / "a" / f"{name}.csv.gz").read_bytes()
        assert packed == (tmp_path / "b" / f"{name}.csv.gz").read_bytes()  # no timestamp in the gzip header
        assert len(packed) < len(gzip.decompress(packed))


def test_report_renders_again(tmp_path: Path) -> None:
    _eval(tmp_path / "run", MOVED)
    (tmp_path / "run" / "report.html").unlink()
    result = CliRunner().invoke(main, ["report", str(tmp_path / "run"), "--format", "html", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(tmp_path / "run" / "report.html"), str(tmp_path / "run" / "report.json")]
    assert json.loads((tmp_path / "run" / "report.json").read_text())["gates"][0]["passed"] is True


def test_compare_two_runs_of_one_scenario_set(tmp_path: Path) -> None:
    _eval(tmp_path / "a", MOVED, "--seed", "1")
    _eval(tmp_path / "b", MOVED, "--seed", "2")
    result = CliRunner().invoke(
        main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c.md")]
    )
    assert result.exit_code == 3, result.output  # nothing regressed, but one scenario cannot rule a regression out
    text = (tmp_path / "c.md").read_text()
    assert text.startswith(f"# memstore compare: 1 run(s) against {tmp_path / 'a'}")
    assert "| merge_rate | jit-verify/sqlite (this run) | jit-verify/sqlite (baseline) |" in text


def test_compare_refuses_other_scenario_sets_unless_forced(tmp_path: Path) -> None:
    _eval(tmp_path / "a", MOVED)
    _eval(tmp_path / "b", CONTROL)
    refused = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert refused.exit_code == 2
    assert "ran another scenario set" in refused.output
    assert "Use --force to compare anyway." in refused.output
    forced = CliRunner().invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--force"])
    assert forced.exit_code == 3, forced.output


def test_eval_gates_against_a_baseline(tmp_path: Path) -> None:
    _eval(tmp_path / "a", MOVED)
    baseline = json.loads((tmp_path / "a" / "results.json").read_text())
    baseline["arms"]["jit-verify/sqlite"]["overall"]["merge_rate"] = {"value": 1.0, "k": 5000, "n": 5000}
    # the same agent with a budget of one read is another arm: the baseline's is renamed to gate it
    baseline["arms"]["jit-verify[reads=1]/sqlite"] = baseline["arms"].pop("jit-verify/sqlite")
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    result = CliRunner().invoke(
        main,
        [
            "eval",
            MOVED,
            "--out",
            str(tmp_path / "b"),
            "--agent",
            "jit-verify[reads=1]",  # one file of the three that must change: nothing merges
            "--trials",
            "30",
            "--baseline",
            str(tmp_path / "baseline.json"),
            "--fail-on-regression",
        ],
    )
    assert result.exit_code == 1, result.output
    assert "\u2717 jit-verify[reads=1]/sqlite: merge_rate not regressed: regressed" in result.output
