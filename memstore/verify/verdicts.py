"""Judging a memory by its citations: valid, re-anchored, contradicted, unsupported or missing.

`verify_memory` checks every citation (`verify_citation`) and hands the checks to a `Verifier`.
The reference verifier is deterministic and reads only the code: a chain of judges, each reading
one kind of evidence, the first verdict standing (`memstore.verify.judges` lists them). The
verdict names the judge that decided (`Verdict.judge`).

Plug in another judge (an LLM, say) through the `Verifier` protocol, or a chain of your own
(`JudgeChain`), and measure it with the same harness. Whatever the judge, `verify_memory` reads
the memory for instructions to the reader (`memstore.verify.instructions`): a verdict on a memory
that carries any says so (`Verdict.instructions`) and is never usable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from memstore.model import Citation, Memory
from memstore.verify.citations import CitationCheck, verify_citation
from memstore.verify.codebase import Codebase
from memstore.verify.instructions import instructions_in
from memstore.verify.judges import REFERENCE_JUDGES, JudgeChain
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus, Verifier

__all__ = [
    "Contradiction",
    "ReferenceVerifier",
    "Verdict",
    "VerdictStatus",
    "Verifier",
    "verify_memories",
    "verify_memory",
]


class ReferenceVerifier(JudgeChain):
    """The deterministic reference judge: the chain of `memstore.verify.judges`, in its order."""

    def __init__(self) -> None:
        super().__init__(REFERENCE_JUDGES)


def verify_memory(
    memory: Memory,
    codebase: Codebase,
    *,
    verifier: Verifier | None = None,
    _checked: dict[Citation, CitationCheck] | None = None,
) -> Verdict:
    """Check every citation of ``memory`` against ``codebase``, judge it, and read it for
    instructions to the reader (a memory that carries any gets no correction: `Verdict.instructions`)."""
    checked = {} if _checked is None else _checked
    checks = []
    for citation in memory.citations:
        check = checked.get(citation)
        if check is None:
            check = checked[citation] = verify_citation(codebase, citation)
        checks.append(check)
    verdict = (verifier or ReferenceVerifier()).judge(memory, checks, codebase)
    found = verdict.instructions or instructions_in(memory)
    return replace(verdict, instructions=found, corrected=None) if found else verdict


def verify_memories(
    memories: Iterable[Memory],
    codebase: Codebase,
    *,
    verifier: Verifier | None = None,
    progress: Callable[[Iterable[Memory]], Iterable[Memory]] | None = None,
) -> list[Verdict]:
    """`verify_memory` for many memories, with their files read ahead in one batch.

    Args:
        progress: wraps the iteration (``rich.progress.track``, say) to show progress.
    """
    memories = list(memories)
    citations = [c for m in memories for c in m.citations]
    codebase.prefetch((c.path for c in citations), ((c.commit, c.path) for c in citations if c.commit is not None))
    loop = progress(memories) if progress is not None else memories
    verifier = verifier or ReferenceVerifier()
    checked: dict[Citation, CitationCheck] = {}  # memories citing the same lines share one check
    return [verify_memory(m, codebase, verifier=verifier, _checked=checked) for m in loop]
