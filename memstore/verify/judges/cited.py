"""The first judge: a memory that cites nothing, or whose citations all lead nowhere (gone, or
refused as unreadable: binary, too large, too deeply nested to parse; the reason says which)."""

from __future__ import annotations

from collections.abc import Sequence

from memstore.model import Kind
from memstore.verify.citations import CitationCheck, CitationStatus
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
            return Verdict(VerdictStatus.MISSING, case.checks, reason=_nothing_left(case.checks))
        return None


def _nothing_left(checks: Sequence[CitationCheck]) -> str:
    """Why nothing cited can be read: the files refused and why ("not checked: a.py: binary
    file"), and the citations that lead nowhere."""
    refused = [c for c in checks if c.status is CitationStatus.INVALID and c.problem]
    gone = [c for c in checks if c not in refused]
    parts = []
    if refused:
        parts.append("not checked: " + "; ".join(dict.fromkeys(f"{c.path}: {c.problem}" for c in refused)))
    if gone:
        parts.append("no cited code is left: " + ", ".join(f"{c.citation} {c.status.value}" for c in gone))
    return "; ".join(parts)
