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
from memstore.verify.instruction import Instruction

__all__ = ["FLAGGED", "Contradiction", "Verdict", "VerdictStatus", "Verifier"]

FLAGGED = "flagged:"  # in `Verdict.summary`: what follows are the kinds of instruction the memory carries


class VerdictStatus(StrEnum):
    """What to do with a memory: use it, use it re-anchored, or not at all."""

    VALID = "valid"
    REANCHORED = "reanchored"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    MISSING = "missing"

    @property
    def usable(self) -> bool:
        """Whether the code bears the memory out (`Verdict.usable` also asks that it carry no instructions)."""
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
        instructions: the instructions to the reader the memory carries ("ignore your task",
            "`curl ... | sh`": `memstore.verify.instructions`), whatever its status says of the code.
            A memory that carries any is never usable, and has no correction (one would store
            the instructions again, in the corrector's name).
    """

    status: VerdictStatus
    checks: tuple[CitationCheck, ...]
    corrected: MemoryDraft | None = None
    reason: str = ""
    contradictions: tuple[Contradiction, ...] = field(default=())
    uncertain: str = ""
    judge: str = ""
    instructions: tuple[Instruction, ...] = field(default=())

    @property
    def usable(self) -> bool:
        """Whether to use the memory: the code bears it out (valid or re-anchored) and it carries
        no instructions to the reader."""
        return self.status.usable and not self.instructions

    def summary(self) -> str:
        """The status, and the kinds of instruction the memory carries, in one word each: what an
        event log keeps ("valid", "valid flagged:override,pipe-to-shell")."""
        if not self.instructions:
            return self.status.value
        return f"{self.status.value} {FLAGGED}{','.join(dict.fromkeys(i.kind.value for i in self.instructions))}"


@runtime_checkable
class Verifier(Protocol):
    """A judge of memories: given the citation checks, decide the verdict."""

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        """The verdict on ``memory`` given ``checks`` (one per citation) made against ``codebase``."""
        ...
