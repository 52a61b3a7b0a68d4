"""Scenarios: scenarios as values (`scenario`), the YAML loader and its checks, and the generated populations.

Data in, frozen objects out: `load_file` and `load_library` parse and check scenario files
(schema, references, histories that apply) without building anything; `memstore.harness.world`
builds a scenario into a repository and a seeded store, and `memstore.harness.world.check_labels` builds one to
confirm its truth labels.
"""

from memstore.harness.scenarios.data import fixture_files, scenario_set_hash, scenarios_dir
from memstore.harness.scenarios.loader import Problem, ScenarioError, load_file, load_library, read_file, scenario_files
from memstore.harness.scenarios.mined_scenario import scenario_document
from memstore.harness.scenarios.mining import MINED_KINDS, Mined, mine, mined_file
from memstore.harness.scenarios.sample import QUICK, sample_tasks
from memstore.harness.scenarios.scenario import (
    AnswerMatch,
    Edit,
    Intent,
    IntentAction,
    Location,
    Scenario,
    SeedMemory,
    Step,
    Task,
    Truth,
)
from memstore.harness.scenarios.source import Positions, Reporter, load_yaml
from memstore.harness.scenarios.values import normalise, pattern_group, read_value, same_value, values_in

__all__ = [
    "MINED_KINDS",
    "QUICK",
    "AnswerMatch",
    "Edit",
    "Intent",
    "IntentAction",
    "Location",
    "Mined",
    "Positions",
    "Problem",
    "Reporter",
    "Scenario",
    "ScenarioError",
    "SeedMemory",
    "Step",
    "Task",
    "Truth",
    "fixture_files",
    "load_file",
    "load_library",
    "load_yaml",
    "mine",
    "mined_file",
    "normalise",
    "pattern_group",
    "read_file",
    "read_value",
    "same_value",
    "sample_tasks",
    "scenario_document",
    "scenario_files",
    "scenario_set_hash",
    "scenarios_dir",
    "values_in",
]
