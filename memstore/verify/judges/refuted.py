"""The judge of claims the cited code does not make (`memstore.verify.predicates`)."""

from __future__ import annotations

from memstore.verify.judges.case import Case
from memstore.verify.predicates import refuted_claim
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["Refuted"]


class Refuted:
    """Unsupported when the code shows that what the fact says of it is not so."""

    name = "refuted"

    def decide(self, case: Case) -> Verdict | None:
        refuted = refuted_claim(case.memory.fact, [c.path for c in case.readable], case.codebase)
        if refuted is None:
            return None
        return Verdict(VerdictStatus.UNSUPPORTED, case.checks, reason=f"the code refutes the fact: {refuted}")
