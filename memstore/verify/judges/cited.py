"""The first judge: a memory that cites nothing, or whose citations all lead nowhere."""

from __future__ import annotations

from memstore.model import Kind
from memstore.verify.judges.case import Case
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["Cited"]


class Cited:
    """Unsupported when a fact cites nothing; missing when no citation has anything left to read."""

    name = "cited"

    def decide(self, case: Case) -> Verdict | None:
        if not case.checks:
            if case.memory.kind is Kind.PREFERENCE:
                return Verdict(VerdictStatus.VALID, case.checks, reason="a preference cites no code to check")
            return Verdict(VerdictStatus.UNSUPPORTED, case.checks, reason="the fact cites nothing")
        if not case.readable:
            summary = ", ".join(f"{c.citation} {c.status.value}" for c in case.checks)
            return Verdict(VerdictStatus.MISSING, case.checks, reason=f"no cited code is left: {summary}")
        return None
