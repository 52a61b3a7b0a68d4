"""memstore's scenarios as inspect samples: one sample a scenario, its epochs memstore's trials.

memstore's unit is a trial of a scenario: its sessions, in order, over one repository and one
store, where what one session stores is what a later one may be handed. So a sample is a scenario
(its id the scenario's name) and an epoch a trial. A sample holds what an agent may see and nothing
more: its input lists the sessions as the agent boundary shows them (surface, user, prompt), its
metadata names the scenario, its repository and its sessions, and its target is empty. The grading
data (labels, checks, expected findings and answers) stays in the scenario, which only the scorer
reads, after the sample ran (`memstore.inspect.deferred`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample

from memstore.errors import ConfigurationError
from memstore.harness.scenarios import Scenario, load_library, scenarios_dir

__all__ = ["load_scenarios", "scenario_dataset", "scenario_sample"]


def _names(given: str | Sequence[str] | None) -> list[str]:
    """The entries of ``-T scenarios=...``: a list, or strings of comma-separated entries."""
    entries = [given] if isinstance(given, str) else list(given or ())
    return [part.strip() for entry in entries for part in entry.split(",") if part.strip()]


def load_scenarios(given: str | Sequence[str] | None = None) -> list[Scenario]:
    """The scenarios named: each a file or folder of scenarios, or the name of one in the shipped
    library; the whole shipped library when none is named.

    Raises:
        ConfigurationError: a name that is neither a path nor a shipped scenario.
        ScenarioError: a scenario file with problems.
    """
    names = _names(given)
    paths = [name for name in names if Path(name).exists()]
    wanted = [name for name in names if not Path(name).exists()]
    found = load_library(paths) if paths or not names else []
    if wanted:
        shipped = _shipped(wanted)
        unknown = [name for name in wanted if name not in shipped]
        if unknown:
            raise ConfigurationError(
                f"no scenario file or shipped scenario named {', '.join(map(repr, unknown))}; "
                "name a scenario file, a folder of them, or a scenario of `memstore scenarios list`"
            )
        found += [shipped[name] for name in wanted]
    return found


def _shipped(names: Sequence[str]) -> dict[str, Scenario]:
    """The shipped scenarios of these names: each from the file of its name where there is one (the
    hand-written ones), the whole library only for the others (generated, mined)."""
    files = [scenarios_dir() / f"{name}.yaml" for name in names]
    found = {s.name: s for s in load_library([f for f in files if f.is_file()])}
    if set(names) - set(found):
        found = {s.name: s for s in load_library([scenarios_dir()])}
    return found


def scenario_sample(scenario: Scenario) -> Sample:
    """A scenario as a sample: what an agent is shown of it, no grading data."""
    sessions = [{"task": t.key, "surface": t.surface.value, "user": t.user} for t in scenario.tasks]
    lines = [f"Scenario {scenario.name}: {len(scenario.tasks)} session(s) in {scenario.repo}, in order."]
    lines += [f"{n}. [{t.surface.value}] {t.user}: {t.prompt}" for n, t in enumerate(scenario.tasks, 1)]
    return Sample(
        id=scenario.name,
        input="\n".join(lines),
        metadata={"scenario": scenario.name, "repo": scenario.repo, "sessions": sessions},
    )


def scenario_dataset(scenarios: Sequence[Scenario]) -> MemoryDataset:
    """A dataset of one sample per scenario, in the order given."""
    return MemoryDataset([scenario_sample(s) for s in scenarios], name="memstore")
