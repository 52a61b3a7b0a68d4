"""Scenarios: scenarios as values (`scenario`), the YAML loader and its checks, and the generated populations.

Data in, frozen objects out: `load_file` and `load_library` parse and check scenario files
(schema, references, histories that apply) without building anything; `memstore.harness.world`
builds a scenario into a repository and a seeded store, and `memstore.harness.world.check_labels` builds one to
confirm its truth labels.
"""

from memstore.harness.scenarios.loader import Problem, load_file, load_library, read_file, scenario_files
from memstore.harness.scenarios.scenario import Scenario, SeedMemory, Task

__all__ = ["Problem", "Scenario", "SeedMemory", "Task", "load_file", "load_library", "read_file", "scenario_files"]
