"""A run is described once: a `Recipe` (keyword options with their defaults), built into its
`RunConfig` by `Recipe.config` for ``memstore eval`` and the pytest plugin alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstore.commands.eval import eval_command
from memstore.errors import ConfigurationError, ScenarioError
from memstore.harness.run.runner.config import RunConfig
from memstore.harness.run.runner.pool import iter_arms
from memstore.harness.runfolder.recipe import DEFAULT_AGENTS, Recipe
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_library

MOVED = str(scenarios_dir() / "api-version-moved.yaml")

# ``memstore eval``'s options that are not the run's: where it goes, what it is gated against,
# how it exits, and how the command reads --sample.
NOT_THE_RUNS = {"quick", "out", "baseline", "no_fail", "fail_on_regression", "force", "resume", "retry_errors",
                "part", "overwrite"}  # fmt: skip


def test_every_option_of_a_run_is_a_recipe_field_of_its_name_and_the_reverse() -> None:
    options = {param.name for param in eval_command.params}
    assert set(Recipe.__dataclass_fields__) == options - NOT_THE_RUNS


def test_a_recipe_is_given_by_keyword() -> None:
    with pytest.raises(TypeError):
        Recipe((MOVED,))  # type: ignore[misc]


def test_the_plugins_defaults_build_the_run_it_used_to_build_by_hand() -> None:
    recipe = Recipe(scenarios=(MOVED,), stores=("sqlite:",), agents=DEFAULT_AGENTS, workers=2)
    by_hand = RunConfig(
        scenarios=tuple(load_library([MOVED])), arms=tuple(iter_arms(DEFAULT_AGENTS, ["sqlite:"], [])), workers=2
    )
    assert recipe.config() == by_hand


def test_options_left_out_take_their_defaults() -> None:
    config = Recipe(scenarios=(MOVED,)).config()
    assert [arm.name for arm in config.arms] == [
        "no-memory/sqlite",
        "trusting/sqlite",
        "blind-trusting/sqlite",
        "jit-verify/sqlite",
    ]
    assert (config.trials, config.seed, config.workers, config.limit, config.runtime.timeout) == (1, 0, 1, 50, 600.0)


def test_a_recipe_comes_back_from_its_manifest_as_it_was_written() -> None:
    recipe = Recipe(scenarios=(MOVED,), agent_params=("reads=2",), max_cost=1.5, sequential=True, max_sessions=9)
    assert Recipe.from_json(json.loads(json.dumps(recipe.to_json()))) == recipe


def test_scenarios_that_cannot_be_read_are_the_loaders_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"nowhere.yaml:1:1: cannot read"):
        Recipe(scenarios=(str(tmp_path / "nowhere.yaml"),)).config()


def test_choices_that_do_not_hold_together_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"--negative-control names a store this run does not evaluate"):
        Recipe(scenarios=(MOVED,), negative_controls=("naive",)).config()
    with pytest.raises(ConfigurationError, match=r"--max-sessions goes with --sequential"):
        Recipe(scenarios=(MOVED,), max_sessions=3).config()
    with pytest.raises(ConfigurationError, match=r"--agent-timeout names agent\(s\) not in this run: nobody"):
        Recipe(scenarios=(MOVED,), agent_timeouts=("nobody=5",)).config()
