"""What a verification decides: a verdict on a memory, with its evidence and its correction,
and the `Verifier` protocol any judge implements (the reference verifier is in
`memstore.verify.verdicts`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from memstore.model import Memory, MemoryDraft
from memstore.verify.citations import CitationCheck
from memstore.verify.codebase import Codebase

__all__ = ["Contradiction", "Verdict", "VerdictStatus", "Verifier"]


class VerdictStatus(StrEnum):
    """What to do with a memory: use it, use it re-anchored, or not at all."""

    VALID = "valid"
    REANCHORED = "reanchored"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    MISSING = "missing"

    @property
    def usable(self) -> bool:
        return self in {VerdictStatus.VALID, VerdictStatus.REANCHORED}


@dataclass(frozen=True)
class Contradiction:
    """A claim of the fact that the code no longer bears out."""

    claim: str
    found: str | None  # what the code says instead, when it can be read off
    where: str  # path:line of the evidence


@dataclass(frozen=True)
class Verdict:
    """The judgement on one memory, with its evidence.

    Attributes:
        status: the verdict.
        checks: one `CitationCheck` per citation, in order.
        corrected: for REANCHORED and CONTRADICTED, the draft to store as a correction
            (new citations; for CONTRADICTED, the fact with the current values), when one
            can be derived; else None.
        reason: one sentence a person can read.
        contradictions: the contradicted claims, for CONTRADICTED.
        uncertain: why the judge is not sure (a heuristic decided it: a changed line read as
            harmless, relevance by few shared words, a contradiction with no value to read),
            or "" when the code settles it. A second judge (an LLM, say) can take these cases.
        judge: the name of the step that decided (the reference verifier's chain names each
            judge: `memstore.verify.judges`), or "" for a verifier that does not say.
    """

    status: VerdictStatus
    checks: tuple[CitationCheck, ...]
    corrected: MemoryDraft | None = None
    reason: str = ""
    contradictions: tuple[Contradiction, ...] = field(default=())
    uncertain: str = ""
    judge: str = ""


@runtime_checkable
class Verifier(Protocol):
    """A judge of memories: given the citation checks, decide the verdict."""

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        """The verdict on ``memory`` given ``checks`` (one per citation) made against ``codebase``."""
        ...
