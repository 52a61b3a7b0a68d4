"""What every judge of the chain reads: the memory, its citation checks and the codebase, with
the evidence several judges share computed once (`Case`), and the `Judge` protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Protocol

from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.validation import MAX_SNIPPET_CHARS
from memstore.verify.citations import CitationCheck
from memstore.verify.claims import FactClaim, claims_of
from memstore.verify.codebase import Codebase
from memstore.verify.corrections import replacements, rewrite
from memstore.verify.evidence import Evidence, evidence_of
from memstore.verify.judges.owners import follow_definitions
from memstore.verify.mentions import Mention, MentionKind
from memstore.verify.reading import Reading, read_fact
from memstore.verify.verdict import Contradiction, Verdict

__all__ = ["Case", "Judge", "reanchored"]


@dataclass
class Case:
    """One memory before the judges, and what they find out about it along the way.

    Attributes:
        memory: the memory judged.
        checks: one `CitationCheck` per citation, in order.
        codebase: the code it is judged against.
        unchecked: claims of the fact a judge could not check, each a sentence saying why (the
            chain puts them in the verdict's ``uncertain``, whichever judge decides).
    """

    memory: Memory
    checks: tuple[CitationCheck, ...]
    codebase: Codebase
    shared: dict[object, Evidence] = field(default_factory=dict, repr=False)
    unchecked: list[str] = field(default_factory=list)

    @cached_property
    def readable(self) -> list[CitationCheck]:
        """The checks with text to read now."""
        return [c for c in self.checks if c.status.readable and c.text is not None]

    @cached_property
    def reading(self) -> Reading:
        """What the fact names and states (`memstore.verify.reading`)."""
        return read_fact(self.memory.fact)

    @cached_property
    def evidence(self) -> list[Evidence]:
        """Each readable citation read then and now (`memstore.verify.evidence`)."""
        return [self.evidence_for(c) for c in self.readable]

    def evidence_for(self, check: CitationCheck) -> Evidence:
        """One check read then and now (kept: judges ask for the same check more than once)."""
        key = (check.citation, check.status, check.path, check.line, check.end_line, check.text)
        found = self.shared.get(key)
        if found is None:
            found = self.shared[key] = evidence_of(check, self.codebase)
        elif found.check is not check:
            found = replace(found, check=check)
        return found

    @cached_property
    def claims(self) -> list[FactClaim]:
        """The literal claims of the fact (`memstore.verify.claims`)."""
        return claims_of(self.memory.fact)

    @cached_property
    def located(self) -> tuple[tuple[CitationCheck, ...], list[Contradiction]]:
        """The checks with each cited definition the fact names followed to where it is now, and
        the definitions it names that are gone (`memstore.verify.judges.owners`)."""
        return follow_definitions(self.claims, self.checks, self.codebase, self.memory.fact)

    @cached_property
    def located_readable(self) -> list[CitationCheck]:
        """`located`'s checks with text to read now."""
        return [c for c in self.located[0] if c.status.readable and c.text is not None]

    def corrected(
        self, contradictions: Sequence[Contradiction] = (), checks: Sequence[CitationCheck] | None = None
    ) -> MemoryDraft | None:
        """The memory with its citations where the code stands now and each contradicted claim
        replaced by what the code says (every contradiction must carry ``found``)."""
        memory = self.memory
        citations = tuple(
            reanchored(c, self.codebase.commit)
            for c in (self.checks if checks is None else checks)
            if c.status.readable and c.line is not None
        )
        if not citations and memory.kind is Kind.FACT:
            return None
        fact, subject = memory.fact, memory.subject
        for contradiction in contradictions:
            assert contradiction.found is not None
            fact = fact.replace(contradiction.claim, contradiction.found)
            subject = subject.replace(contradiction.claim, contradiction.found)
        return MemoryDraft(memory.repo, memory.kind, subject, fact, citations, memory.reason)

    def file_then(self, ev: Evidence) -> str:
        """The whole cited file as it was at the memory's commit, or "" where that is unknown."""
        commit = ev.check.citation.commit
        if commit is None or not self.codebase.has_commit(commit):
            return ""
        read = self.codebase.read_at(commit, ev.check.citation.path)
        return "\n".join(read.lines) if read.ok else ""

    def read_off_change(self) -> tuple[MemoryDraft | None, tuple[Contradiction, ...]]:
        """The memory with what a change put in place of each thing the fact stated that the change
        took away, read character by character off the cited statements then and now
        (`memstore.verify.corrections`), and its citations where the code stands now; None where no
        one stretch of the code took the place of anything the fact stated."""
        mentions = [m for m in self.reading.mentions if (not m.negated and m.kind is not MentionKind.CODE) or m.quoted]
        found: dict[Mention, str] = {}
        where: dict[Mention, str] = {}
        for ev in self.evidence:
            if ev.then is None or ev.now is None:
                continue
            for mention, new in replacements(
                ev.then.text, ev.now.text, [m for m in mentions if m not in found]
            ).items():
                found[mention] = new
                where[mention] = ev.check.where
        draft = self.corrected() if found else None
        if draft is None:
            return None, ()
        contradictions = tuple(Contradiction(m.text.strip("`"), new, where[m]) for m, new in found.items())
        return replace(draft, fact=rewrite(self.memory.fact, found)), contradictions


def reanchored(check: CitationCheck, commit: str | None) -> Citation:
    """The citation of a check where its text stands now, with that text and the commit (a text
    longer than a citation may record, a minified line say, is left out: the lines say where)."""
    assert check.line is not None
    text = check.text if check.text is None or len(check.text) <= MAX_SNIPPET_CHARS else None
    return Citation(check.path, check.line, check.end_line, snippet=text, commit=commit)


class Judge(Protocol):
    """One step of the chain: a verdict on the case, or None to pass it to the next judge."""

    name: str

    def decide(self, case: Case) -> Verdict | None: ...
