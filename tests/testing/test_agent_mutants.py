"""Agent mutants: each broken jit-verify is told apart from jit-verify by its named metric, with a
significant paired verdict, on the default library (less the population) and a population sample.

The run they share takes half a minute of one worker: they are marked ``ci`` and run by
``.ci/run``'s own step (`pytest -m ci`), beside the adapters' mutation suites, to keep the
README's test command within five minutes; the store mutants (tests/testing/test_mutants.py)
stay in it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from memstore.errors import ConfigurationError
from memstore.harness.analysis.compare import Comparison, ComparisonVerdict
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.run.boundary.agents import make_agent
from memstore.harness.run.runner.pool import Arm, RunConfig, iter_arms
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.testing.agent_mutants import AGENT_MUTANTS
from tests.testing.test_mutants import hand_written_library


def population_sample(folder: Path, name: str, repositories: int, **changed: object) -> Path:
    """The default generated population with fewer repositories (the same parameters otherwise)."""
    spec = yaml.safe_load((scenarios_dir() / "generated-population.yaml").read_text(encoding="utf-8"))
    spec["name"] = name
    spec["generator"] |= {"repositories": repositories, **changed}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """The hand-written library and two population samples (three repositories, two flooded so
    that retrieval matters) where the repository itself names few copies of a setting
    (``discoverable`` 0, more aliases): memory is needed there, so what a mutant breaks shows in
    outcomes (the mined scenarios, minutes more, tell no mutant apart that these do not).
    jit-verify and every agent mutant on the reference store, and jit-verify on ranked:."""
    folder = tmp_path_factory.mktemp("agent-mutants")
    # (and no memories the reference verifier gets wrong: the mutants are the subject here)
    needs_memory = {"discoverable": 0.0, "aliases": 0.6}
    paths = [
        *hand_written_library(),
        population_sample(folder, "population-sample", 3, flood_share=0.0, **needs_memory),
        population_sample(folder, "flooded-sample", 2, flood_share=1.0, **needs_memory),
    ]
    agents = ["jit-verify", *(f"mutant:{name}" for name in AGENT_MUTANTS)]
    arms = (*iter_arms(agents, ["sqlite:"]), Arm("jit-verify", "ranked:"))
    config = RunConfig(scenarios=tuple(load_library(paths)), arms=arms, workers=2)
    return evaluate(config, folder / "run")


def _comparison(run: Evaluation, one: str, other: str, metric: str) -> Comparison:
    (found,) = [c for c in run.results.comparisons if {c.a, c.b} == {one, other} and c.metric == metric]
    return found


@pytest.mark.ci
@pytest.mark.slow
def test_outcomes_are_not_at_ceiling_retrieval_decides_them(agent_run: Evaluation) -> None:
    """Where newer, unrelated memories bury the pool, recency with the default limit hands the
    agent none of what it needs, and ranked retrieval does: task success differs, significantly."""
    c = _comparison(agent_run, "jit-verify/ranked", "jit-verify/sqlite", "task_success_rate")
    ranked_better = ComparisonVerdict.IMPROVED if c.a == "jit-verify/ranked" else ComparisonVerdict.REGRESSED
    assert c.verdict is ranked_better, c
    assert max(c.a_value, c.b_value) - min(c.a_value, c.b_value) > 0.05


@pytest.mark.ci
@pytest.mark.slow
def test_outcomes_are_not_at_ceiling_the_verifier_decides_them(agent_run: Evaluation) -> None:
    c = _comparison(agent_run, "jit-verify/sqlite", "mutant:weak-verifier/sqlite", "task_success_rate")
    assert c.verdict is (ComparisonVerdict.IMPROVED if c.a == "jit-verify/sqlite" else ComparisonVerdict.REGRESSED), c
    assert c.p_adjusted < 0.01


@pytest.mark.ci
@pytest.mark.slow
@pytest.mark.parametrize("name", list(AGENT_MUTANTS))
def test_each_agent_mutant_is_told_apart_from_jit_verify(agent_run: Evaluation, name: str) -> None:
    told_by = AGENT_MUTANTS[name].told_by
    comparison = _comparison(agent_run, "jit-verify/sqlite", f"mutant:{name}/sqlite", told_by)
    jit_better = ComparisonVerdict.IMPROVED if comparison.a == "jit-verify/sqlite" else ComparisonVerdict.REGRESSED
    assert comparison.verdict is jit_better, comparison
    assert comparison.p_adjusted < 0.01
    assert comparison.method.startswith("mcnemar-exact")


def test_an_agent_mutant_is_named_like_any_agent() -> None:
    agent = make_agent("mutant:never-corrects")
    assert (agent.name, agent.uses_memory) == ("mutant:never-corrects", True)
    with pytest.raises(ConfigurationError, match="unknown agent mutant 'forgets'; known: claims-memory"):
        make_agent("mutant:forgets")
