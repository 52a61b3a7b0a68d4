"""A gate of a run and what it decided (`Outcome`), and what a run's gates decide together
(`Decision`, `decide`): see `memstore.harness.report.builtin_gates` for the gates themselves.

The exit statuses of ``memstore eval`` and ``memstore compare`` come from here, and mean the
same in both: 0 every gate passed; 1 a gate failed (or an arm measured nothing); 3 none failed,
but some are inconclusive or not exercised, so the run cannot be called a pass; 2 is an error in
what was asked (click's usage errors, a store that cannot be opened); 4 an internal error.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["EXIT", "Decision", "Gate", "Outcome", "decide", "decided", "shown_p"]


class Outcome(StrEnum):
    """What a gate decided (see the module docstring)."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_EXERCISED = "not exercised"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Gate:
    """A check of a run: one JUnit test case.

    ``integrity``: the gate says whether the run measured anything at all (an agent that failed
    every session, units that could not run, a store changed behind the harness's back); a
    run that fails one is a failed run, whatever else was asked. ``needed``: for a gate that did
    not decide, what would decide it (a kind of session to run; about how many tasks);
    ``tasks_needed``: that number, where it is one.
    """

    name: str
    outcome: Outcome
    message: str
    integrity: bool = False
    arm: str = ""  # the arm it judges ("" for a gate of several)
    key: str = ""  # what it checks, the same for every arm: contract[forgotten], no_harm, baseline[merge_rate]...
    needed: str = ""
    tasks_needed: int | None = None

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAILED

    @property
    def decided(self) -> bool:
        return self.outcome in {Outcome.PASSED, Outcome.FAILED}

    @property
    def advice(self) -> str:
        """What would decide it, as a phrase: ``needs a scenario with ...`` (not exercised) or
        ``about 60 tasks (29 now) would rule it out`` (inconclusive); "" when nothing is needed."""
        if not self.needed:
            return ""
        return f"needs {self.needed}" if self.needed.startswith(("a ", "an ")) else self.needed


class Decision(StrEnum):
    """What a run's gates decide together: the first word of every summary."""

    PASS = "PASS"  # every gate passed
    FAIL = "FAIL"  # a gate failed
    UNDECIDED = "UNDECIDED"  # none failed; some inconclusive or not exercised


EXIT = {Decision.PASS: 0, Decision.FAIL: 1, Decision.UNDECIDED: 3}
"""The exit status of each decision (``memstore eval``, ``memstore compare``)."""


def decide(gate_list: list[Gate]) -> Decision:
    """PASS when every gate passed; FAIL when any failed; UNDECIDED otherwise (and for no gate)."""
    if any(g.failed for g in gate_list):
        return Decision.FAIL
    if gate_list and all(g.passed for g in gate_list):
        return Decision.PASS
    return Decision.UNDECIDED


def decided(ok: bool) -> Outcome:
    """Passed when ``ok``, else failed."""
    return Outcome.PASSED if ok else Outcome.FAILED


def shown_p(p: float) -> str:
    """A p-value as a report shows it."""
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"
