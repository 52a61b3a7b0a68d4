"""The judge of facts that state a value of code in a shape read exactly (`memstore.verify.by_statement`)."""

from __future__ import annotations

from memstore.verify.by_statement import judge_statements
from memstore.verify.judges.case import Case
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["StatedValues"]


class StatedValues:
    """Contradicted where the code says another value than the fact states; valid or re-anchored
    where it says the same; unsupported where the cited file never defined what the fact names."""

    name = "stated"

    def decide(self, case: Case) -> Verdict | None:
        judged = judge_statements(case.memory, case.checks, case.readable, case.codebase)
        if isinstance(judged, Verdict):
            return judged
        if judged is not None:  # what it stated a value of is gone, and was not renamed there
            return Verdict(VerdictStatus.CONTRADICTED, case.checks, reason=judged)
        return None
