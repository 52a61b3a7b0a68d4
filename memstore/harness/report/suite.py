"""The gate suite the pytest plugin collects: every gate of `memstore eval`, planned before the
run so each is a test of its own.

`plan` names the gates a run will have from its arms alone (their names, roles and whether their
agent verifies), so pytest can list them at collection and the run happens once, at the first of
them; the gates themselves are `memstore.harness.report.builtin_gates.gates`, the same as the command's.
Each is named by its arm and its key (``contract[forgotten]``, ``no_harm``,
``verifier[detection_recall]``, ``baseline``...):

- every arm: the integrity gates and one gate per promise of the store contract (a negative
  control, as the person running says or memstore's own ``naive:``: that its breaches are
  caught); against a baseline, one gate gathering every metric compared (``baseline``);
- a treatment arm, given a control: not worse than it on any outcome;
- a harm probe (``trusting``, ``blind-trusting``), given a control: bad memory measurably harms
  it (a scenario set where this fails cannot show that anything is safe);
- an arm whose agent declares that it verifies (``verifies``): the verifier's bars;
- a plug-in's family (`memstore.harness.report.families`): one test per arm it judges, keyed by the
  family's name (``memstore::ARM::cost``), or one for the run (``memstore::run::cost``), holding
  every gate the family makes there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memstore.harness.records import PROMISES, Role
from memstore.harness.report.families import GateFamily

__all__ = ["INTEGRITY_KEYS", "PLANNED", "RUN", "VERIFIER_KEYS", "PlannedArm", "plan"]

INTEGRITY_KEYS = ("integrity[agent_errors]", "integrity[infra_errors]", "integrity[units]", "integrity[tampering]")
VERIFIER_KEYS = ("verifier[detection_recall]", "verifier[false_invalidation_rate]", "verifier[reanchor_accuracy]")
PLANNED = ("integrity", "contract", "no_harm", "harm_seen", "verifier", "baseline")  # memstore's, planned gate by gate
RUN = "run"  # the arm part of the test of a family of the run: memstore::run::FAMILY


@dataclass(frozen=True)
class PlannedArm:
    """An arm as known before the run: its name, its role, and whether its agent verifies."""

    name: str
    role: Role
    verifies: bool = False
    declares: frozenset[str] = frozenset()  # more its agent declares (``declares``), for a plug-in's families

    def judged_by(self, family: GateFamily) -> bool:
        """Whether ``family`` (one of arms) judges this arm, as `GateFamily.arms` will choose."""
        if family.each_arm:
            return True
        declared = self.verifies if family.declares == "verifies" else family.declares in self.declares
        return declared and self.role is not Role.NEGATIVE_CONTROL


def plan(arms: Sequence[PlannedArm], families: Sequence[GateFamily] = ()) -> list[tuple[str, str]]:
    """Every gate (arm, key) a run of ``arms`` will have, in the order they are shown; then a test
    for each arm each other family of ``families`` judges (arm, its name), or for the run (`RUN`)."""
    control = any(a.role is Role.CONTROL for a in arms)
    found: list[tuple[str, str]] = []
    for arm in arms:
        keys = list(INTEGRITY_KEYS)
        if arm.role is Role.NEGATIVE_CONTROL:
            keys.append("contract[caught]")
        else:
            keys += [f"contract[{p.metric}]" for p in PROMISES]
        if arm.role is Role.TREATMENT and control:
            keys.append("no_harm")
        if arm.role is Role.HARM_PROBE and control:
            keys.append("harm_seen")
        if arm.verifies and arm.role is not Role.NEGATIVE_CONTROL:
            keys += VERIFIER_KEYS
        keys.append("baseline")
        found += [(arm.name, key) for key in keys]
    for family in (f for f in families if f.name not in PLANNED):
        if family.each_arm or family.declares:
            found += [(arm.name, family.name) for arm in arms if arm.judged_by(family)]
        else:
            found.append((RUN, family.name))
    return found
