"""`memstore eval --sample N`: a seeded, stratified sample of the library's tasks."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.cli import main
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.harness.scenarios.sample import sample_tasks
from memstore.harness.scenarios.scenario import Scenario


@pytest.fixture(scope="module")
def library() -> list[Scenario]:
    return load_library()


def _kinds(scenarios: list[Scenario]) -> Counter[str]:
    return Counter(s.kind for s in scenarios for _ in s.tasks)


def _picked(scenarios: list[Scenario]) -> list[tuple[str, str]]:
    return sorted((s.name, t.key) for s in scenarios for t in s.tasks)


def test_a_sample_splits_evenly_over_the_kinds_and_keeps_the_small_ones_whole(library: list[Scenario]) -> None:
    kept, sample = sample_tasks(library, 120, seed=0)
    assert _kinds(library) == {"generated": 2000, "hand-written": 31, "mined": 13}
    assert _kinds(kept) == {"hand-written": 31, "mined": 13, "generated": 76}
    assert sample.tasks == 120
    assert sample.population == 2044
    assert sample.describe().startswith("a sample of 120 of 2,044 tasks")
    assert _kinds(sample_tasks(library, 30, seed=0)[0]) == {"hand-written": 10, "mined": 10, "generated": 10}


def test_within_a_kind_the_strata_keep_their_shares(library: list[Scenario]) -> None:
    kept, _ = sample_tasks(library, 600, seed=0)
    generated = Counter(t.stratum for s in kept if s.kind == "generated" for t in s.tasks)
    everything = Counter(t.stratum for s in library if s.kind == "generated" for t in s.tasks)
    total = sum(generated.values())
    for stratum, count in everything.items():
        assert abs(generated[stratum] / total - count / 2000) < 0.01, stratum


def test_the_same_seed_draws_the_same_tasks_and_another_seed_others(library: list[Scenario]) -> None:
    first = _picked(sample_tasks(library, 60, seed=3)[0])
    assert first == _picked(sample_tasks(list(reversed(library)), 60, seed=3)[0])  # not the files' order
    assert first != _picked(sample_tasks(library, 60, seed=4)[0])


def test_a_task_brings_what_it_learns_from_and_the_clock_runs_as_before(library: list[Scenario]) -> None:
    cross = next(s for s in library if s.name == "cross-agent-logging")
    assert any(n.startswith("learned:") for t in cross.tasks for n in t.needs)
    brought = 0
    for seed in range(20):  # whichever task is drawn, it starts when it started in the whole scenario
        (one,) = sample_tasks([cross], 1, seed=seed)[0]
        starts = {t.key: sum((u.after for u in cross.tasks[: i + 1]), timedelta(0)) for i, t in enumerate(cross.tasks)}
        elapsed = timedelta(0)
        for task in one.tasks:
            elapsed += task.after
            assert elapsed == starts[task.key]
        for task in one.tasks:
            for need in task.needs:
                if need.startswith("learned:"):
                    assert need.removeprefix("learned:") in [t.key for t in one.tasks]
                    brought += 1
    assert brought > 0  # some seed drew a task that learns from another


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=1, max_value=2100), seed=st.integers(min_value=0, max_value=10**6))
def test_any_sample_holds_about_n_tasks_of_the_library(library: list[Scenario], n: int, seed: int) -> None:
    kept, sample = sample_tasks(library, n, seed)
    picked = _picked(kept)
    assert len(picked) == len(set(picked)) == sample.tasks
    assert set(picked) <= set(_picked(library))
    assert min(n, 2044) <= sample.tasks <= min(n, 2044) + 2  # a task may bring the ones it learns from
    assert all(s.tasks for s in kept)
    whole = {s.name: s for s in library}
    assert all(s.memories == whole[s.name].memories for s in kept)  # the pool is untouched


def test_a_sample_needs_a_task() -> None:
    with pytest.raises(ValueError, match="at least one task"):
        sample_tasks([], 0, seed=0)


def test_eval_runs_a_sample_and_says_so(tmp_path: Path) -> None:
    folder = str(scenarios_dir())
    result = CliRunner().invoke(
        main, ["eval", folder, "--sample", "6", "--agent", "jit-verify", "--out", str(tmp_path / "run")]
    )
    assert result.exit_code == 3, result.output  # seven tasks: undecided
    # six drawn, two of each kind; a hand-written one brought the task it learns from
    assert "7 tasks (3 hand-written, 2 mined, 2 generated)" in result.output
    assert "a sample of 7 of 2,044 tasks (asked 6;" in result.output
    run = json.loads((tmp_path / "run" / "results.json").read_text())["run"]
    assert run["tasks"] == 7
    assert run["sample"].startswith("a sample of 7 of ")
    assert "Tasks: a sample of 7 of" in (tmp_path / "run" / "report.md").read_text()
    again = CliRunner().invoke(main, ["eval", "--resume", str(tmp_path / "run"), "--sample", "7"])
    assert again.exit_code == 2
    assert "sample: 6 there, 7 asked for now" in again.output


def test_quick_is_a_sample_and_not_with_another() -> None:
    result = CliRunner().invoke(main, ["eval", "--quick", "--sample", "5"])
    assert result.exit_code == 2
    assert "--quick is --sample 120: give one of them" in result.output
