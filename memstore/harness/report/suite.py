"""The gate suite the pytest plugin brings: every gate of `memstore eval`, plus the two that need
a known scenario set, planned before the run so each is a test of its own.

`plan` names the gates a run will have from its arms alone (their names, agents and roles), so
pytest can list them at collection and the run happens once, at the first of them;
`suite_gates` computes them from the finished run. Each gate is named by its arm and its key
(``contract[forgotten]``, ``no_harm``, ``verifier[detection_recall]``, ``baseline``...).

- every arm: the integrity gates and one gate per promise of the store contract (a negative
  control: that its breaches are caught); against a baseline, one gate gathering every metric
  compared (``baseline``);
- a treatment arm, given a control: not significantly worse than it on any outcome;
- a harm probe (``trusting``, ``blind-trusting``), given a control: bad memory measurably harms
  it (a scenario set where this fails cannot show that anything is safe);
- ``jit-verify``, given hand-written scenarios: the verifier's bars on those (detection recall
  at least 0.95, false invalidation at most 0.02, re-anchoring at least 0.9). Mined and
  generated scenarios hold memories the reference verifier gets wrong, on purpose: they are
  reported, not held to these bars.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from memstore.harness.analysis.metrics import compute
from memstore.harness.analysis.model import Role, RunResults
from memstore.harness.report.gates import Gate, harm_seen_gate, verifier_gates
from memstore.harness.run.promises import PROMISES

__all__ = ["INTEGRITY_KEYS", "PlannedArm", "plan", "suite_gates"]

INTEGRITY_KEYS = ("integrity[agent_errors]", "integrity[infra_errors]", "integrity[units]", "integrity[tampering]")
VERIFIER_KEYS = ("verifier[detection_recall]", "verifier[false_invalidation_rate]", "verifier[reanchor_accuracy]")
VERIFIER_AGENT = "jit-verify"


@dataclass(frozen=True)
class PlannedArm:
    """An arm as known before the run: its name, its agent, and the role its agent and store declare."""

    name: str
    agent: str
    role: Role


def plan(arms: Sequence[PlannedArm], *, hand_written: bool) -> list[tuple[str, str]]:
    """Every gate (arm, key) a run of ``arms`` will have, in the order they are shown."""
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
        if arm.agent == VERIFIER_AGENT and arm.role is Role.TREATMENT and hand_written:
            keys += VERIFIER_KEYS
        keys.append("baseline")
        found += [(arm.name, key) for key in keys]
    return found


def suite_gates(
    results: RunResults, tables: dict[str, pd.DataFrame], run_gates: list[Gate], hand_written: set[str]
) -> list[Gate]:
    """``run_gates`` (what `memstore eval` gated, with its baseline gates if it had a baseline),
    each harm probe's ``harm_seen`` and ``jit-verify``'s verifier bars on the scenarios named in
    ``hand_written``."""
    found = list(run_gates)
    if results.arms_of(Role.CONTROL):
        found += [harm_seen_gate(results, [name]) for name in results.arms_of(Role.HARM_PROBE)]
    verifiers = [n for n, a in results.arms.items() if a.agent == VERIFIER_AGENT and a.role is Role.TREATMENT]
    if verifiers and hand_written:
        kept = {
            name: frame[frame.scenario.isin(hand_written)] if "scenario" in frame else frame
            for name, frame in tables.items()
        }
        library = compute(kept)
        for name in verifiers:
            if name in library:
                found += verifier_gates(library[name], name)
    return found
