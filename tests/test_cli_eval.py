"""``memstore eval`` as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.run.runner.pool import RunConfig, fitted_workers, iter_arms
from memstore.harness.runfolder.recipe import DEFAULT_AGENTS
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library

MOVED = str(scenarios_dir() / "api-version-moved.yaml")
ADVERSARIAL = str(scenarios_dir() / "adversarial-memories.yaml")


def _eval(out: Path, *extra: str) -> str:
    result = CliRunner().invoke(main, ["eval", MOVED, ADVERSARIAL, "--out", str(out), "--seed", "5", *extra])
    assert result.exit_code == 3, result.output  # two scenarios cannot decide every gate: exit 3, not 0
    assert "UNDECIDED: none of " in result.output
    return result.output


def test_eval_writes_the_run_folder(tmp_path: Path) -> None:
    output = _eval(tmp_path / "run", "--trials", "2")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "events.csv.gz",
        "failures.csv.gz",
        "findings.csv.gz",
        "junit.xml",
        "manifest.json",
        "report.html",
        "report.md",
        "results.json",
        "sessions.csv.gz",
        "shards",
        "timings.json",
        "trials.csv.gz",
    ]
    assert len(list((tmp_path / "run" / "shards").iterdir())) == 16  # 2 scenarios x 4 arms x 2 trials
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert sorted(results["arms"]) == [
        "blind-trusting/sqlite",
        "jit-verify/sqlite",
        "no-memory/sqlite",
        "trusting/sqlite",
    ]
    assert results["run"]["seed"] == 5
    assert results["run"]["tasks"] == 6  # 3 tasks x 2 trials
    jit = results["arms"]["jit-verify/sqlite"]["overall"]
    assert jit["detection_recall"] == {"k": 8, "n": 8, "value": 1.0}  # four bad memories a trial, each refused
    assert jit["leaks"] == 0
    assert "\n6 tasks x 4 arms" in output
    assert "Arms: every one on the store sqlite; no-memory (control)." in output
    assert "eval: 16/16 trials" in output  # plain progress lines when not on a terminal


def test_same_seed_same_files(tmp_path: Path) -> None:
    _eval(tmp_path / "a", "--workers", "1")
    _eval(tmp_path / "b", "--workers", "2")
    for name in ("results.json", "sessions.csv.gz", "events.csv.gz", "trials.csv.gz", "findings.csv.gz"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_the_default_starts_no_more_workers_than_the_run_has_work_for(tmp_path: Path) -> None:
    """One scenario's four units run in this process; asked for, two workers they get; four
    units a worker otherwise, up to the CPUs."""
    small = CliRunner().invoke(main, ["eval", MOVED, "--out", str(tmp_path / "small")])
    assert small.exit_code == 3, small.output
    assert "1 tasks, 4 arms, 1 worker(s)" in small.output
    asked = CliRunner().invoke(main, ["eval", MOVED, "--workers", "2", "--out", str(tmp_path / "asked")])
    assert "1 tasks, 4 arms, 2 worker(s)" in asked.output
    config = RunConfig(
        scenarios=tuple(load_library([MOVED, ADVERSARIAL])),
        arms=tuple(iter_arms(DEFAULT_AGENTS, ["sqlite:"])),
        workers=8,
    )
    assert [fitted_workers(replace(config, trials=t)) for t in (1, 2, 3, 5)] == [2, 4, 6, 8]
    assert fitted_workers(replace(config, workers=3, trials=5)) == 3
    assert fitted_workers(replace(config, executor="ray://127.0.0.1:1", trials=1)) == 8  # Ray's workers are its own


def test_agents_stores_and_params_are_chosen(tmp_path: Path) -> None:
    _eval(
        tmp_path / "run",
        "--agent",
        "jit-verify",
        "--store",
        "memory://",
        "--store",
        "sqlite:",
        "--agent-param",
        "searches=1",
        "--agent-param",
        "learn=false",
    )
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert sorted(results["arms"]) == [
        "jit-verify[learn=false,searches=1]/memory",
        "jit-verify[learn=false,searches=1]/sqlite",
    ]
    assert [a["params"] for a in results["run"]["arms"]] == [{"searches": 1, "reads": 8, "learn": False}] * 2
    assert "agent_config" not in results["run"]


def test_bad_arguments_are_clean_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", MOVED, "--agent", "clever", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "unknown agent 'clever'" in result.output
    result = CliRunner().invoke(main, ["eval", MOVED, "--agent-param", "luck=1", "--out", str(tmp_path / "x")])
    assert "unknown agent parameter 'luck'" in result.output


def _eval_at(columns: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "memstore", "eval", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def narrow(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A run on an 80-column terminal, and its folder."""
    out = tmp_path_factory.mktemp("narrow") / "run"
    return out, _eval_at(80, MOVED, ADVERSARIAL, "--out", str(out), "--store", "sqlite:", "--store", "memory://")


@pytest.mark.parametrize("columns", [80, 120])
def test_the_output_fits_the_terminal(
    narrow: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path, columns: int
) -> None:
    """COLUMNS=80 memstore eval ...: no line longer than the terminal, no word broken (at 120, the
    same run finished again from a copy of its folder: the summary is the same, the units are not
    run twice)."""
    done = narrow[1]
    if columns != 80:
        shutil.copytree(narrow[0], tmp_path / "run")
        done = _eval_at(columns, "--resume", str(tmp_path / "run"))
    assert done.returncode == 3, done.stderr
    lines = (done.stdout + done.stderr).splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "jit = jit-verify" in done.stdout
    assert "stores @memory, @sqlite" in done.stdout
    headers = [line.split() for line in done.stdout.splitlines() if line.lstrip().startswith("blind@")]
    assert sorted({h for line in headers for h in line if h.startswith("jit@")}) == ["jit@memory", "jit@sqlite"]
    assert any(line.startswith("success ") for line in done.stdout.splitlines())
    assert "gates passed" in done.stdout
    said = " ".join(done.stdout.split())  # the store under test against the reference, for the treatment agent
    assert "memory against the reference sqlite: failed no gate; jit-verify success +0.0 points [" in said


LEAK = str(scenarios_dir() / "other-repo-no-leak.yaml")
_SCOPE = "a repository's facts reach only users who may read that repository (scope_leaks == 0)"


def _summary(output: str) -> list[str]:
    """The lines after the progress display (and the run's own header line)."""
    lines = output.splitlines()
    return [line for line in lines if not line.startswith(("eval: ", "memstore eval: ")) or "tasks x" in line]


def test_a_failed_gate_fails_the_run_and_the_summary_says_so_first(tmp_path: Path) -> None:
    args = ["eval", LEAK, "--store", "mutant:other-repositories:sqlite:", "--agent", "jit-verify"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    first = _summary(result.output)[0]
    assert first == "FAIL: 2 of 22 gates failed"
    assert _summary(result.output)[1] == (
        f"  \u2717 jit-verify/other-repositories(sqlite): {_SCOPE}: 1 breach in 4 chances "
        "(scenarios: other-repo-no-leak)"
    )
    # the leaked memories cite another repository's code: the verifier refuses them, and is charged
    assert _summary(result.output)[2].startswith("  \u2717 jit-verify/other-repositories(sqlite): false_invalidation")
    exploratory = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "again"), "--no-fail"])
    assert exploratory.exit_code == 0, exploratory.output
    assert _summary(exploratory.output)[0].startswith("FAIL: 2 of 22 gates failed")


@pytest.mark.slow
def test_a_run_whose_gates_all_pass_says_pass_and_exits_0(tmp_path: Path) -> None:
    """--quick exercises every promise and decides every gate of the four built-in arms."""
    result = CliRunner().invoke(main, ["eval", "--quick", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    first = next(line for line in _summary(result.output) if not line.startswith("  a sample of"))
    assert first.startswith("PASS: all 82 gates passed. Task success against no memory")
    assert "(regressed probe)" in first
    assert "Probes: blind-trusting/sqlite, trusting/sqlite: a probe, expected to regress" in result.output


def test_a_sample_too_small_to_decide_exits_3_and_says_what_would(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", LEAK, "--agent", "jit-verify", "--out", str(tmp_path / "run")])
    assert result.exit_code == 3, result.output
    lines = _summary(result.output)
    assert lines[0] == "UNDECIDED: none of 22 gates failed; 1 inconclusive, 8 not exercised (the sample cannot decide)"
    assert any("tasks (2 now) would decide it" in line for line in lines), result.output
    assert lines[-1].startswith("Next: run about ")
    assert "--sequential stops as soon as every gate is decided" in lines[-1]
    assert CliRunner().invoke(main, ["eval", LEAK, "--agent", "jit-verify", "--out", str(tmp_path / "b"),
                                     "--no-fail"]).exit_code == 0  # fmt: skip


def test_compare_fails_when_a_later_run_fails_a_gate(tmp_path: Path) -> None:
    runner = CliRunner()
    good = runner.invoke(main, ["eval", LEAK, "--agent", "jit-verify", "--out", str(tmp_path / "a")])
    mutant = ["--store", "mutant:other-repositories:sqlite:", "--no-fail"]
    bad = runner.invoke(main, ["eval", LEAK, "--agent", "jit-verify", *mutant, "--out", str(tmp_path / "b")])
    assert (good.exit_code, bad.exit_code) == (3, 0)
    same = runner.invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "a")])
    assert same.exit_code == 3, same.output  # nothing regressed; two tasks rule nothing out
    assert "**UNDECIDED**: none of 34 gates failed" in same.output  # 22, and 12 against the baseline
    result = runner.invoke(main, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 1, result.output
    assert "**FAIL**: 2 of 22 gates failed" in result.output  # its arm is another store's: nothing to compare
    assert "Against the first run (paired by task: McNemar, paired bootstrap)" in same.output


FAILING_FACTORY = """
def open_broken(uri, options):
    raise RuntimeError("cannot reach the memory service")
"""


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--store", "sqlit:"], "unknown store URI 'sqlit:'"),
        (["--store", "mywrap:open_countin"], "cannot import store module 'mywrap'"),
        (["--store", "brokenstore:open_broken"], "RuntimeError: cannot reach the memory service"),
        (["--agent", "jit-verfy"], "unknown agent 'jit-verfy'"),
    ],
)
def test_a_store_or_agent_that_cannot_be_used_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: list[str], said: str
) -> None:
    """Every store is opened and every agent loaded once, before a world is built: exit 2 in
    seconds, one line, no run folder, not even the run's banner."""
    (tmp_path / "brokenstore.py").write_text(FAILING_FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = str(scenarios_dir() / "api-version-control.yaml")
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["eval", scenario, *option, "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    assert time.perf_counter() - started < 10
    assert said in result.output
    assert "memstore eval:" not in result.output
    assert not (tmp_path / "run").exists()


def test_agent_errors_are_shown_with_their_cause_and_kept_out_of_harm(tmp_path: Path) -> None:
    """The first distinct reasons an agent failed its sessions are in the summary, the gate's
    message and both reports; a failed session is no harmed task."""
    agent = tmp_path / "typo_agent.py"
    agent.write_text(
        "import json, os\n"
        "json.dump({'schema_version': 1, 'memories_ops': []}, open(os.environ['MEMSTORE_RESULT'], 'w'))\n"
    )
    scenario = str(scenarios_dir() / "api-version-control.yaml")
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        ["eval", scenario, "--agent", "no-memory", "--agent", f"command:{sys.executable} {agent}", "--out", str(out)],
    )
    assert result.exit_code == 1, result.output  # the agent measured nothing
    said = (
        "agent error in 1 session(s): result.json does not match the schema: the result: Additional properties "
        "are not allowed ('memories_ops' was unexpected)"
    )
    assert said in " ".join(result.output.split()), result.output
    assert "nothing was measured; first: result.json does not match the schema" in " ".join(result.output.split())
    assert said in (out / "report.md").read_text()
    assert "memories_ops" in (out / "report.html").read_text()
    arm = next(a for name, a in json.loads((out / "results.json").read_text())["arms"].items() if "typo" in name)
    assert arm["overall"]["harm_rate"] is None  # the errored session is no harm
    assert arm["overall"]["agent_error_rate"] == {"k": 1, "n": 1, "value": 1.0}
    assert arm["errors"][0]["sessions"] == 1
