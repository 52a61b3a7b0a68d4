"""The last judge: the citations stand where they stood (valid) or elsewhere (re-anchored)."""

from __future__ import annotations

from memstore.verify.citations import CitationStatus
from memstore.verify.judges.case import Case
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["Citations"]


class Citations:
    """Valid when every cited line stands where it stood; else re-anchored. Always decides."""

    name = "citations"

    def decide(self, case: Case) -> Verdict:
        checks = case.located[0]
        if all(c.status is CitationStatus.VALID for c in checks):
            return Verdict(VerdictStatus.VALID, checks, reason="every cited line still says what it said")
        moved = [c for c in checks if c.status is not CitationStatus.VALID]
        reason = "; ".join(
            f"{c.citation} {c.status.value}" + (f" -> {c.where}" if c.status.readable else "") for c in moved
        )
        changed = any(c.status is CitationStatus.CHANGED for c in checks)
        return Verdict(
            VerdictStatus.REANCHORED,
            checks,
            case.corrected((), checks),
            reason,
            uncertain="a cited line changed, and no claim of the fact was seen to go" if changed else "",
        )
