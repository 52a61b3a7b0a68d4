"""Just-in-time verification: re-read a memory's citations on the current code before using it.

The only package that talks to git. See docs/verification.md.
"""

from memstore.verify.beneath import remove_tree, walk
from memstore.verify.citations import CitationCheck, CitationStatus, anchor, line_map, verify_citation
from memstore.verify.claims import ClaimKind, FactClaim, claims_of, identifier_words, light_stem, terms
from memstore.verify.codebase import Codebase, FileRead, GitCodebase, ReadStatus, WorkingTree, split_lines
from memstore.verify.filetext import text_lines
from memstore.verify.git import GitRepository, Hunk, map_line, repository_root, source_commit
from memstore.verify.history import BuiltRepository, HistoryBuilder
from memstore.verify.instructions import Instruction, InstructionKind, find_instructions, instructions_in
from memstore.verify.pycode import syntax_tree
from memstore.verify.verdict import FLAGGED
from memstore.verify.verdicts import (
    Contradiction,
    ReferenceVerifier,
    Verdict,
    VerdictStatus,
    Verifier,
    verify_memories,
    verify_memory,
)
from memstore.verify.workspace import Workspace

__all__ = [
    "FLAGGED",
    "BuiltRepository",
    "CitationCheck",
    "CitationStatus",
    "ClaimKind",
    "Codebase",
    "Contradiction",
    "FactClaim",
    "FileRead",
    "GitCodebase",
    "GitRepository",
    "HistoryBuilder",
    "Hunk",
    "Instruction",
    "InstructionKind",
    "ReadStatus",
    "ReferenceVerifier",
    "Verdict",
    "VerdictStatus",
    "Verifier",
    "WorkingTree",
    "Workspace",
    "anchor",
    "claims_of",
    "find_instructions",
    "identifier_words",
    "instructions_in",
    "light_stem",
    "line_map",
    "map_line",
    "remove_tree",
    "repository_root",
    "source_commit",
    "split_lines",
    "syntax_tree",
    "terms",
    "text_lines",
    "verify_citation",
    "verify_memories",
    "verify_memory",
    "walk",
]
