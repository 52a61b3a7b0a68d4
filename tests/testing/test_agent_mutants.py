"""Agent mutants: each broken jit-verify is told apart from jit-verify by its named metric, with a
significant paired verdict, on the default library (less the population) and a population sample."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from memstore.errors import ConfigurationError
from memstore.harness.analysis.compare import Verdict
from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.run.agents import make_agent
from memstore.harness.run.runner import RunConfig, iter_arms
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library
from memstore.testing.agent_mutants import AGENT_MUTANTS
from tests.testing.test_mutants import default_library_without_population


def population_sample(folder: Path, repositories: int) -> Path:
    """The default generated population with fewer repositories (the same parameters otherwise)."""
    spec = yaml.safe_load((scenarios_dir() / "generated-population.yaml").read_text(encoding="utf-8"))
    spec["generator"]["repositories"] = repositories
    path = folder / "population-sample.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    folder = tmp_path_factory.mktemp("agent-mutants")
    paths = [*default_library_without_population(), population_sample(folder, 3)]
    agents = ["jit-verify", *(f"mutant:{name}" for name in AGENT_MUTANTS)]
    config = RunConfig(scenarios=tuple(load_library(paths)), arms=tuple(iter_arms(agents, ["sqlite:"])), workers=2)
    return evaluate(config, folder / "run")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(AGENT_MUTANTS))
def test_each_agent_mutant_is_told_apart_from_jit_verify(agent_run: Evaluation, name: str) -> None:
    told_by = AGENT_MUTANTS[name].told_by
    found = [
        c
        for c in agent_run.results.comparisons
        if {c.a, c.b} == {"jit-verify/sqlite", f"mutant:{name}/sqlite"} and c.metric == told_by
    ]
    assert len(found) == 1
    (comparison,) = found
    jit_better = Verdict.IMPROVED if comparison.a == "jit-verify/sqlite" else Verdict.REGRESSED
    assert comparison.verdict is jit_better, comparison
    assert comparison.p_adjusted < 0.001
    assert comparison.method.startswith("mcnemar-exact")


def test_an_agent_mutant_is_named_like_any_agent() -> None:
    agent = make_agent("mutant:never-corrects")
    assert (agent.name, agent.uses_memory) == ("mutant:never-corrects", True)
    with pytest.raises(ConfigurationError, match="unknown agent mutant 'forgets'; known: claims-memory"):
        make_agent("mutant:forgets")
