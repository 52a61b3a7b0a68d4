"""The pytest plugin brings memstore's gates to any project: one test per gate, every failed one
listed, a failed run's folder kept. Each test runs pytest in a temporary project that holds
nothing of memstore's but a store of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
# Hand-written scenarios with bad memories the verifier catches and corrections to supersede.
CHOSEN = ("api-version-moved.yaml", "db-pool-contradicted.yaml", "logging-abandoned-branch.yaml")

# A team's store, in a file of its own: a wrapper around memstore's in-memory store. The broken
# one keeps a correction as a new memory, so the wrong version stays active beside it.
STORES = """
from memstore.backends import resolve_backend


class Forwarding:
    def __init__(self, inner):
        self.inner = inner
        self.capabilities = inner.capabilities

    def __getattr__(self, name):
        return getattr(self.inner, name)


class DropsCorrections(Forwarding):
    def store(self, draft, *, actor, surface, supersedes=None):
        return self.inner.store(draft, actor=actor, surface=surface, supersedes=None)


def open_good(uri, options):
    return Forwarding(resolve_backend("memory:")("memory:", options))


def open_broken(uri, options):
    return DropsCorrections(resolve_backend("memory:")("memory:", options))
"""


def _pytest(project: Path, *options: str) -> subprocess.CompletedProcess[str]:
    project.mkdir(parents=True, exist_ok=True)
    (project / "teamstore.py").write_text(STORES)
    # --opt=VALUE: pytest takes a lone argument naming a path as where the project's root is
    scenarios = [f"--memstore-scenarios={SCENARIOS / name}" for name in CHOSEN]
    env = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *scenarios,
         "--memstore-agent", "no-memory", "--memstore-agent", "jit-verify", "--memstore-workers", "1", *options],
        capture_output=True, text=True, check=False, cwd=project, env=env,
    )  # fmt: skip


def test_plugin_options_are_registered() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, check=True)
    for option in (
        "--memstore-gates",
        "--memstore-store=URI",
        "--memstore-agent=AGENT",
        "--memstore-scenarios=PATH",
        "--memstore-sample=N",
        "--memstore-trials=N",
        "--memstore-seed=S",
        "--memstore-baseline=RUN",
        "--memstore-report=DIR",
        "--memstore-workers=N",
    ):
        assert option in done.stdout, option


def test_without_its_options_the_plugin_adds_no_test(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert "test_one.py::test_one" in done.stdout
    assert "memstore::" not in done.stdout


@pytest.mark.slow
def test_an_empty_project_runs_every_gate_and_a_good_store_is_not_red(tmp_path: Path) -> None:
    """Three scenarios cannot decide every gate: a good store is not red (the undecided gates are
    skipped, each with why and what would decide it), and not green either under --memstore-strict."""
    done = _pytest(tmp_path / "project", "--memstore-store", "teamstore:open_good")
    assert done.returncode == 0, done.stdout[-3000:]
    passed = re.findall(r"^PASSED (memstore::\S+)", done.stdout, re.M)
    assert "FAILED" not in done.stdout
    arm = "jit-verify/teamstore:open_good"
    assert f"memstore::{arm}::contract[unsuperseded]" in passed
    assert "memstore::no-memory/teamstore:open_good::integrity[agent_errors]" in passed
    assert len(passed) == 26
    skipped = re.findall(r"^SKIPPED \[\d+\] \S+ (.*)$", done.stdout, re.M)
    assert any(
        s.startswith(f"{arm}: not significantly worse than the control: inconclusive: ") and "tasks (4 now) would" in s
        for s in skipped
    ), skipped
    assert any(s.startswith(f"{arm}: detection_recall >= 0.95: inconclusive: 1.000 (3/3)") for s in skipped), skipped
    assert any(
        "not exercised: no session gave the store a chance" in s and "a memory that expired" in s for s in skipped
    )
    assert "16 skipped" in done.stdout
    said = "memstore: no gate test failed; 16 gate(s) undecided on this sample (skipped unless --memstore-strict)"
    assert said in done.stdout
    assert "memstore: no baseline at reports/baseline (--memstore-baseline RUN): no regression gate" in done.stdout
    folder = re.search(r"; run folder (\S+) \(removed", done.stdout)
    assert folder is not None, done.stdout[-2000:]
    assert not Path(folder.group(1)).exists()  # nothing failed: the run leaves nothing behind
    strict = _pytest(tmp_path / "strict", "--memstore-store", "teamstore:open_good", "--memstore-strict")
    assert strict.returncode == 1, strict.stdout[-3000:]
    failed = set(re.findall(r"^FAILED (memstore::\S+)", strict.stdout, re.M))
    assert f"memstore::{arm}::no_harm" in failed
    assert f"memstore::{arm}::contract[expired_returned]" in failed
    assert len(failed) == 16


@pytest.mark.slow
def test_a_store_that_drops_corrections_fails_every_gate_it_breaks_and_keeps_its_run(tmp_path: Path) -> None:
    done = _pytest(tmp_path / "project", "--memstore-store", "teamstore:open_broken")
    assert done.returncode == 1, done.stdout[-3000:]
    failed = sorted(set(re.findall(r"^FAILED (memstore::\S+)", done.stdout, re.M)))
    arm = "jit-verify/teamstore:open_broken"
    assert f"memstore::{arm}::contract[unsuperseded]" in failed
    kept = re.search(r"^memstore: (\d+) gate test\(s\) failed;.* run folder (\S+) \(kept\)", done.stdout, re.M)
    assert kept is not None, done.stdout[-2000:]
    folder = Path(kept.group(2))
    assert (folder / "results.json").is_file()
    assert (folder / "report.html").is_file()
    assert f"run folder (kept): {folder}" in done.stdout
    # Every failed gate of the run is a failed test, none left out: the run's own gates say which.
    results = json.loads((folder / "results.json").read_text())
    breaches = sorted(
        f"memstore::{name}::contract[{metric}]"
        for name, arm_result in results["arms"].items()
        for metric in ("unsuperseded", "superseded_returned")
        if arm_result["overall"].get(metric)
    )
    assert breaches
    assert set(breaches) <= set(failed)
    assert int(kept.group(1)) == len(failed)
    assert all(f.startswith(f"memstore::{arm}::") for f in failed)  # the control reads no store


def test_a_store_that_cannot_be_opened_is_an_error_at_collection(tmp_path: Path) -> None:
    done = _pytest(tmp_path / "project", "--memstore-store", "teamstore:open_missing")
    assert done.returncode != 0
    assert "open_missing" in done.stdout + done.stderr
    assert "PASSED" not in done.stdout


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--memstore-trials", "0"], "argument --memstore-trials: a whole number of at least 1, not '0'"),
        (["--memstore-sample", "-3"], "argument --memstore-sample: a whole number of at least 0, not '-3'"),
        (["--memstore-workers", "many"], "argument --memstore-workers: a whole number of at least 1, not 'many'"),
        (["--memstore-store", "bogus:"], "ERROR: memstore: unknown store URI 'bogus:'"),
        (["--memstore-agent", "nonsense"], "ERROR: memstore: unknown agent 'nonsense'"),
        (["--memstore-scenarios=/nonexistent"], "ERROR: memstore: /nonexistent:1:1: cannot read"),
    ],
)
def test_a_bad_option_is_a_usage_error_of_one_line(tmp_path: Path, options: list[str], said: str) -> None:
    done = _pytest(tmp_path / "project", *options)
    assert done.returncode == 4  # pytest's usage error
    assert said in done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


PROBE = """
import pathlib

def test_the_run(memstore_run):
    pathlib.Path({where!r}).write_text(str(memstore_run.folder))
    assert memstore_run.results.arms["jit-verify/sqlite"].rate("merge_rate").value == 1.0
"""


def _session(tmp_path: Path, *options: str) -> Path:
    tmp_path.mkdir()
    where = tmp_path / "folder.txt"
    (tmp_path / "test_probe.py").write_text(PROBE.format(where=str(where)))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_probe.py"),
         f"--memstore-scenarios={SCENARIOS / 'api-version-control.yaml'}", "--memstore-workers", "1",
         "-k", "test_the_run", *options],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    return Path(where.read_text())


def test_the_session_run_leaves_nothing_behind_unless_kept(tmp_path: Path) -> None:
    scratch = _session(tmp_path / "one")
    assert not scratch.exists()  # the temporary run folder went with the session
    kept = _session(tmp_path / "two", "--memstore-report", str(tmp_path / "kept"))
    assert kept == tmp_path / "kept"
    assert (kept / "results.json").exists()
    assert (kept / "report.html").exists()


# The same store URI, its code changed between two pytest runs: the first keeps every scope, the
# second leaks another repository's memories.
KEEPS_SCOPES = """
from memstore.backends import resolve_backend

def open_store(uri, options):
    return resolve_backend("memory:")("memory:", options)
"""
LEAKS = """
from memstore.backends import resolve_backend
from memstore.testing.mutants import STORE_MUTANTS

def open_store(uri, options):
    return STORE_MUTANTS["other-repositories"].wrap(resolve_backend("memory:")("memory:", options), options)
"""
SCOPE_GATE = "memstore::jit-verify/teamstore:open_store::contract[scope_leaks]"


def _scoped(project: Path, store: str, *options: str) -> subprocess.CompletedProcess[str]:
    """The scope-leak gate of one scenario, with the store's code ``store``."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "teamstore.py").write_text(store)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-k", "scope_leaks",
         f"--memstore-scenarios={SCENARIOS / 'other-repo-no-leak.yaml'}", "--memstore-agent", "jit-verify",
         "--memstore-store", "teamstore:open_store", "--memstore-workers", "1", *options],
        capture_output=True, text=True, check=False, cwd=project, env={**os.environ, "PYTHONPATH": str(project)},
    )  # fmt: skip


def test_a_kept_run_folder_of_an_earlier_session_is_run_afresh_not_resumed(tmp_path: Path) -> None:
    kept = tmp_path / "memstore-run"
    first = _scoped(tmp_path / "project", KEEPS_SCOPES, f"--memstore-report={kept}")
    assert first.returncode == 0, first.stdout[-3000:]
    assert re.findall(r"^PASSED (memstore::\S+)", first.stdout, re.M) == [SCOPE_GATE]
    assert f"--memstore-report {kept} holds" not in first.stdout  # it was empty: nothing to say
    second = _scoped(tmp_path / "project", LEAKS, f"--memstore-report={kept}")  # a cached folder in CI
    assert second.returncode == 1, second.stdout[-3000:]
    assert re.findall(r"^FAILED (memstore::\S+)", second.stdout, re.M) == [SCOPE_GATE]
    said = f"memstore: --memstore-report {kept} holds an earlier run: it is replaced by this session's"
    assert said in second.stdout
    overall = json.loads((kept / "results.json").read_text())["arms"]["jit-verify/teamstore:open_store"]["overall"]
    assert overall["scope_leaks"] == 1  # the folder holds this session's run, not the earlier one


def test_a_kept_report_folder_that_is_not_a_run_folder_is_a_usage_error(tmp_path: Path) -> None:
    kept = tmp_path / "sources"
    kept.mkdir()
    (kept / "main.py").write_text("print('mine')\n")
    done = _scoped(tmp_path / "project", KEEPS_SCOPES, f"--memstore-report={kept}")
    assert done.returncode == 4, done.stdout[-3000:]  # pytest's usage error
    assert f"{kept} does not look like a run folder (it holds main.py); not overwriting it" in done.stderr
    assert (kept / "main.py").read_text() == "print('mine')\n"


@pytest.mark.ci  # two pytest sessions under xdist: .ci/run's `pytest -m ci` step
def test_under_xdist_a_leftover_done_marker_is_not_this_sessions_run(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    kept = tmp_path / "memstore-run"
    first = _scoped(tmp_path / "project", KEEPS_SCOPES, "-n", "2", f"--memstore-report={kept}")
    assert first.returncode == 0, first.stdout[-3000:]
    assert re.findall(r"PASSED (memstore::\S+)", first.stdout) == [SCOPE_GATE]
    second = _scoped(tmp_path / "project", LEAKS, "-n", "2", f"--memstore-report={kept}")
    assert second.returncode == 1, second.stdout[-3000:]
    assert re.findall(r"FAILED (memstore::\S+)", second.stdout) == [SCOPE_GATE]


# A team's own gate families (registered by its conftest.py) and an agent that declares the
# capability one of them asks for: each family is a test of its own, for the arms it judges.
FAMILIES = """
from memstore.harness.report.families import gate
from memstore.harness.report.gate import Gate, Outcome


@gate("prudent", declares="prudent")
def careful(run, arm):
    return [Gate(f"{arm}: careful", Outcome.FAILED, "a careful arm is held to more", arm=arm, key="prudent")]


@gate("sessions_counted")
def counted(run):
    tasks = run.results.run.tasks
    return [Gate("tasks counted", Outcome.PASSED if tasks else Outcome.FAILED, f"{tasks} tasks", key="counted")]
"""
CAREFUL_AGENT = """
from memstore.harness.run import make_agent


def careful(params):
    agent = make_agent("jit-verify")
    agent.declares = frozenset({"prudent"})
    return agent
"""


def test_a_plugin_gate_family_is_a_test_for_each_arm_it_judges(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text(FAMILIES)
    (project / "teamagent.py").write_text(CAREFUL_AGENT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-k", "prudent or counted",
         f"--memstore-scenarios={SCENARIOS / 'other-repo-no-leak.yaml'}", "--memstore-agent", "no-memory",
         "--memstore-agent", "teamagent:careful", "--memstore-workers", "1", f"--memstore-report={tmp_path / 'run'}"],
        capture_output=True, text=True, check=False, cwd=project, env={**os.environ, "PYTHONPATH": str(project)},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    assert re.findall(r"FAILED (memstore::\S+)", done.stdout) == ["memstore::teamagent:careful/sqlite::prudent"]
    assert re.findall(r"PASSED (memstore::\S+)", done.stdout) == ["memstore::run::sessions_counted"]
    assert "a careful arm is held to more" in done.stdout
    assert "no-memory/sqlite::prudent" not in done.stdout  # its agent declares nothing: not judged
    arms = json.loads((tmp_path / "run" / "results.json").read_text())["run"]["arms"]
    assert [arm.get("prudent") for arm in arms] == [None, True]  # what it declared, kept for the gates
