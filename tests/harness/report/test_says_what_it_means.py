"""The reports say what they mean: a run whose gates failed or could not be decided lists the
failed tasks in report.md (arm, scenario, trial, task, what went wrong), as report.html's drill-down
does; the tables' abbreviations and which way is better are spelled out under them (terminal and
report.md); an ``llm:`` arm is named after its model, not after the tail of its endpoint's URL."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.analysis.run_results import ArmResult, Role, RunResults
from memstore.harness.records import RunMeta
from memstore.harness.report.terminal import legend, short_names

ROOT = Path(__file__).resolve().parents[3]
EXPIRY = str(ROOT / "scenarios" / "expiry-and-refresh.yaml")


def test_a_failed_run_lists_its_failed_tasks_and_spells_out_its_tables(tmp_path: Path) -> None:
    argv = ["eval", EXPIRY, "--store", "mutant:never-expires:sqlite:", "--agent", "jit-verify"]
    result = CliRunner().invoke(main, [*argv, "--out", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    failed = report[report.index("## Failed tasks") :].split("\n\n## ")[0].splitlines()
    assert failed[2] == "1 session(s) failed their task or saw the store break a promise:"
    assert failed[4:6] == ["| arm | scenario | trial | task | what went wrong |", "|---|---|---|---|---|"]
    assert failed[6] == (
        "| jit-verify/never-expires(sqlite) | expiry-and-refresh | 0 | bump-patch | store broke expired_returned |"
    )
    assert "task success rate: higher is better; merge rate: higher is better;" in report
    assert "leaks: must be 0; expiry violations: must be 0; contract breaches: must be 0;" in report
    assert "needed recall at k: the share of tasks whose needed memory was among the first k handed" in report
    # the terminal: the short labels of its table, spelled out
    said = " ".join(result.output.split())
    assert "success: task success rate, higher is better; merge: merge rate, higher is better;" in said
    assert "false inv.: false invalidation rate, lower is better;" in said


def test_a_run_that_passes_lists_no_failed_tasks(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", EXPIRY, "--agent", "jit-verify", "--out", str(tmp_path / "run")])
    assert result.exit_code == 3, result.output  # two tasks decide nothing: undecided, and nothing failed
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Failed tasks" not in report  # undecided, but no task failed: no table


def test_an_llm_arm_is_named_after_its_model() -> None:
    endpoint = "base_url=http://127.0.0.1:8080/v1"
    agents = (
        f"llm:SmolLM2-135M-Instruct?{endpoint}",
        f"llm:SmolLM2-135M-Instruct?{endpoint}&memory=false",
        "llm:openai/gpt-4.1-mini?price_in=0.4",
        "no-memory",
    )
    arms = {f"{agent}/sqlite": ArmResult(agent, "sqlite", Role.TREATMENT, {}) for agent in agents}
    results = RunResults(run=RunMeta(), arms=arms, comparisons=())
    assert list(short_names(results).values()) == [
        "SmolLM2-135M-Ins",
        "SmolLM2-135M-Ins no-mem",
        "gpt-4.1-mini",
        "no-memory",
    ]
    assert "gpt-4.1-mini = llm:openai/gpt-4.1-mini?price_in=0.4" in legend(results)
