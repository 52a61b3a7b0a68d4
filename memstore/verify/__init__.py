"""Just-in-time verification: re-read a memory's citations on the current code before using it.

The only package that talks to git. See docs/verification.md.
"""

from memstore.verify.citations import CitationCheck, CitationStatus, anchor, line_map, verify_citation
from memstore.verify.codebase import Codebase, FileRead, GitCodebase, ReadStatus, WorkingTree
from memstore.verify.instructions import Instruction, InstructionKind, find_instructions, instructions_in
from memstore.verify.verdicts import (
    Contradiction,
    ReferenceVerifier,
    Verdict,
    VerdictStatus,
    Verifier,
    verify_memories,
    verify_memory,
)

__all__ = [
    "CitationCheck",
    "CitationStatus",
    "Codebase",
    "Contradiction",
    "FileRead",
    "GitCodebase",
    "Instruction",
    "InstructionKind",
    "ReadStatus",
    "ReferenceVerifier",
    "Verdict",
    "VerdictStatus",
    "Verifier",
    "WorkingTree",
    "anchor",
    "find_instructions",
    "instructions_in",
    "line_map",
    "verify_citation",
    "verify_memories",
    "verify_memory",
]
