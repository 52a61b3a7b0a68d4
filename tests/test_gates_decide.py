"""Gates that decide, chosen by the run: what a store declares never turns a gate off; a verifier
that refuses everything fails `memstore eval`; a forgetful store is not green on a sample that
exercises its promise; a sequential run stops when every gate is decided."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.scenarios.data import scenarios_dir

LEAK = str(scenarios_dir() / "other-repo-no-leak.yaml")

# A leaky store that declares itself a negative control, hoping to be judged as one.
STORES = """
from memstore.backends import resolve_backend


class Declares:
    def __init__(self, inner):
        self.inner = inner
        self.capabilities = frozenset(inner.capabilities) | {"negative-control"}

    def __getattr__(self, name):
        return getattr(self.inner, name)


def open_leaky(uri, options):
    uri = "mutant:other-repositories:memory://"
    return Declares(resolve_backend(uri)(uri, options))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "teamstore.py").write_text(STORES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _eval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["eval", *args])
    return result.exit_code, result.output


def test_a_store_that_declares_itself_a_negative_control_is_still_judged_on_its_leaks(project: Path) -> None:
    code, output = _eval(LEAK, "--store", "teamstore:open_leaky", "--agent", "jit-verify", "--out", "run")
    assert code == 1, output
    assert "scope_leaks == 0): 1 breach in 4 chances" in output
    roles = {a["name"]: a["role"] for a in json.loads((project / "run" / "results.json").read_text())["run"]["arms"]}
    assert roles == {"jit-verify/teamstore:open_leaky": "treatment"}
    # said by the person running: a negative control, whose gate is that its breaches are caught
    code, output = _eval(
        LEAK, "--store", "teamstore:open_leaky", "--agent", "jit-verify", "--negative-control", "teamstore:open_leaky",
        "--out", "said",
    )  # fmt: skip
    assert code == 0, output
    assert output.splitlines()[-1].endswith("5/5 gates passed")  # four of integrity, and the breaches caught
    report = (project / "said" / "report.md").read_text()
    assert (
        "breaches are caught (contract_breaches &gt; 0) | passed | 1 breach(es) of the store contract found |" in report
    )
    assert "scope_leaks == 0" not in report
    code, output = _eval(LEAK, "--agent", "jit-verify", "--negative-control", "sqlite:", "--store", "memory://",
                         "--out", "stranger")  # fmt: skip
    assert code == 2
    assert "--negative-control names a store this run does not evaluate: sqlite:" in output


def test_a_verifier_that_refuses_everything_fails_eval(project: Path) -> None:
    """Its agent declares that it verifies: the verifier's bars are gates of `memstore eval`, and
    the README's example holds enough valid memories to decide that it fails them."""
    scenarios = [str(scenarios_dir() / f"{n}.yaml") for n in README_SCENARIOS]
    code, output = _eval(*scenarios, "--agent", "no-memory", "--agent", "mutant:retires-everything", "--out", "run")
    assert code == 1, output
    assert "mutant:retires-everything/sqlite: false_invalidation_rate <= 0.02: 1.000 (7/7)" in " ".join(output.split())


def test_a_forgetful_store_is_not_green_on_the_readme_example(project: Path) -> None:
    """The README's example exercises every promise of the contract: a store that forgets some
    memories fails the gate that names it."""
    scenarios = [str(scenarios_dir() / f"{n}.yaml") for n in README_SCENARIOS]
    code, output = _eval(*scenarios, "--store", "mutant:forgets-some:sqlite:", "--out", "run")
    assert code == 1, output
    assert "forgets-some(sqlite): recent() returns every live memory the user may see, up to the limit " in output
    assert (
        "(forgotten == 0): 3 breaches in 16 chances (scenarios: adversarial-memories, review-without-preferences)"
        in (" ".join(output.split()))
    )
    code, output = _eval(*scenarios, "--out", "good")
    assert code == 3, output  # nothing failed; nine tasks cannot decide the effects
    assert "not exercised" not in output  # every promise was put to the test


README_SCENARIOS = (
    "adversarial-memories",
    "expiry-and-refresh",
    "other-repo-no-leak",
    "review-without-preferences",
    "read-only-writer",
)


def test_a_sequential_run_stops_when_every_gate_is_decided_and_says_where(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop: scenarios in a seeded order, a look after each batch, a stop at the first look
    where every gate is decided (here: made to be at the second look), the order, the looks and
    the intervals kept; --resume stops at the same point; --max-sessions stops it too."""
    from memstore.harness import sequential

    looks: list[int] = []

    def decided_at_second_look(config: object, output: object, ran: list[str], *chosen: object) -> bool:
        looks.append(len(ran))
        return len(looks) % 2 == 0

    monkeypatch.setattr(sequential, "FIRST_LOOK", 2)
    monkeypatch.setattr(sequential, "_decided", decided_at_second_look)
    scenarios = [str(scenarios_dir() / f"{n}.yaml") for n in README_SCENARIOS]
    code, output = _eval(*scenarios, "--sequential", "--out", "run")
    assert code == 3, output
    found = json.loads((project / "run" / "results.json").read_text())
    kept = found["run"]["sequential"]
    assert kept["stopped"] == "every gate decided after 2 look(s)"
    assert kept["order"] == sequential.sequential_order(README_SCENARIOS, 0)[: len(kept["order"])]
    assert len(kept["order"]) == looks[1] < kept["scenarios_planned"] == 5
    assert found["run"]["tasks"] < 9
    assert set(kept["intervals"]["jit-verify/sqlite"]) <= {"task_success_rate", "merge_rate", "answer_accuracy"}
    again, _ = _eval("--resume", "run")
    assert again == 3
    assert json.loads((project / "run" / "results.json").read_text())["run"]["sequential"] == kept
    monkeypatch.setattr(sequential, "_decided", lambda *_: False)
    capped, output = _eval(*scenarios, "--sequential", "--max-sessions", "4", "--out", "capped")
    stopped = json.loads((project / "capped" / "results.json").read_text())["run"]["sequential"]["stopped"]
    assert stopped.startswith("--max-sessions 4 spent")
    assert capped == 3, output
    refused, output = _eval(*scenarios, "--max-sessions", "4", "--out", "refused")
    assert refused == 2
    assert "--max-sessions goes with --sequential" in output


@pytest.mark.slow
@pytest.mark.ci  # a sequential run of all of --quick: .ci/run's `pytest -m ci` step
def test_on_a_small_sample_the_anytime_intervals_stay_open_and_the_run_says_so(project: Path) -> None:
    """Anytime-valid intervals are wider than fixed ones: on --quick's sessions, the fixed interval
    of jit-verify's merge rate against no-memory rules out harm of 5 points (a fixed run of --quick
    decides every gate: evals/test_regression.py), the anytime one does not, so a sequential run
    runs all of --quick and stays undecided."""
    code, output = _eval("--quick", "--sequential", "--agent", "no-memory", "--agent", "jit-verify", "--out", "run")
    assert code == 3, output
    found = json.loads((project / "run" / "results.json").read_text())
    kept = found["run"]["sequential"]
    assert kept["stopped"] == "every scenario ran"
    assert "jit-verify/sqlite: not significantly worse than the control: merge_rate" in " ".join(output.split())
    low, high, n = kept["intervals"]["jit-verify/sqlite"]["merge_rate"]
    fixed = next(
        c for c in found["comparisons"] if (c["a"], c["metric"], c["group"]) == ("jit-verify/sqlite", "merge_rate", "")
    )
    assert low < -0.05 < fixed["low"]  # harm of 5 points: ruled out by the fixed interval, not by the anytime one
    assert low < fixed["low"] <= fixed["high"] < high
    assert n == fixed["n"] > 0
