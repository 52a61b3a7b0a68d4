"""Judging a memory by its citations: valid, re-anchored, contradicted, unsupported or missing.

`verify_memory` checks every citation (`verify_citation`) and hands the checks to a
`Verifier`. The reference verifier is deterministic and reads only the code:

1. Nothing readable behind any citation: MISSING (a fact citing nothing: UNSUPPORTED).
2. A literal claim of the fact (quoted string, code span, version, number, identifier)
   that a change removed from a cited line, or that the cited code assigns a different
   value to: CONTRADICTED, with a corrected draft carrying the values read off the code
   when every contradicted claim has one.
3. Cited code that is not about the memory's subject: UNSUPPORTED.
4. Citations that moved, were renamed, changed harmlessly, or point nowhere beside ones
   that hold: REANCHORED, with a corrected draft carrying the new citations.
5. Otherwise VALID.

Plug in another judge (an LLM, say) through the `Verifier` protocol and measure it with
the same harness.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify.by_statement import judge_statements
from memstore.verify.citations import CitationCheck, CitationStatus, verify_citation
from memstore.verify.claims import (
    Claim,
    ClaimKind,
    assignments,
    claims_of,
    key_terms,
    kind_of,
    mentions,
    substitutions,
    terms,
    unquote,
)
from memstore.verify.codebase import Codebase
from memstore.verify.definitions import (
    context_of,
    defined_in,
    definition_at,
    enclosing_class,
    find_definition,
    find_member,
    in_brackets,
    member_defined,
    named_definition,
    statement_of,
    was_in,
)
from memstore.verify.predicates import refuted_claim
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


def _effective_kind(claim: Claim) -> ClaimKind:
    if claim.kind in {ClaimKind.QUOTED, ClaimKind.CODE}:
        inner = kind_of(claim.text)
        if inner in {ClaimKind.VERSION, ClaimKind.NUMBER}:
            return inner
    return claim.kind


def _value_kind(value: str) -> ClaimKind:
    inner = kind_of(unquote(value))
    if inner in {ClaimKind.VERSION, ClaimKind.NUMBER}:
        return inner
    return kind_of(value)


def _replacement(claim: str, swapped: dict[str, str]) -> str | None:
    """What a change put in place of ``claim``: the claim with the replaced tokens swapped
    (``jest.fn()`` becomes ``vi.fn()``; a string loses its quotes)."""
    if claim in swapped:
        return swapped[claim]
    quoted = next((unquote(new) for old, new in swapped.items() if unquote(old) == claim), None)
    if quoted is not None:
        return quoted
    result = claim
    for old, new in swapped.items():
        result = re.sub(rf"(?<![\w]){re.escape(old)}(?![\w])", new, result)
    return result if result != claim else None


def _verbatim(value: str | None, text: str) -> str | None:
    """``value`` if the current code says it word for word (a correction is read off the code,
    never spliced together from old and new), else None."""
    if value is None or not value.strip():
        return None
    return value if mentions(text, value) or value in text else None


_ALIAS = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*(?:#.*)?$")  # OLD = NEW
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")
_FLAGS = frozenset({"None", "True", "False", "null", "true", "false", "nil", "undefined"})


def _reanchor(check: CitationCheck, commit: str | None) -> Citation:
    assert check.line is not None
    return Citation(check.path, check.line, check.end_line, snippet=check.text, commit=commit)


class ReferenceVerifier:
    """The deterministic reference judge described in this module's docstring."""

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        checks = tuple(checks)
        if not checks:
            if memory.kind is Kind.PREFERENCE:
                return Verdict(VerdictStatus.VALID, checks, reason="a preference cites no code to check")
            return Verdict(VerdictStatus.UNSUPPORTED, checks, reason="the fact cites nothing")
        readable = [c for c in checks if c.status.readable and c.text is not None]
        if not readable:
            summary = ", ".join(f"{c.citation} {c.status.value}" for c in checks)
            return Verdict(VerdictStatus.MISSING, checks, reason=f"no cited code is left: {summary}")

        refuted = refuted_claim(memory.fact, [c.path for c in readable], codebase)
        if refuted is not None:
            return Verdict(VerdictStatus.UNSUPPORTED, checks, reason=f"the code refutes the fact: {refuted}")
        judged = judge_statements(memory, checks, readable, codebase)
        if isinstance(judged, Verdict):
            return judged
        if judged is not None:  # what it stated a value of is gone, and was not renamed there
            return Verdict(VerdictStatus.CONTRADICTED, checks, reason=judged)
        return self._by_claims(memory, checks, codebase)

    def _by_claims(self, memory: Memory, checks: tuple[CitationCheck, ...], codebase: Codebase) -> Verdict:
        """The verdict by the fact's literal claims (steps 2 to 5 of the module docstring)."""
        claims = claims_of(memory.fact)
        checks, gone = self._owners(claims, checks, codebase)
        readable = [c for c in checks if c.status.readable and c.text is not None]
        contradictions = self._contradictions(memory, claims, readable, codebase)
        known = {c.claim for c in contradictions}
        contradictions += [c for c in gone if c.claim not in known]
        if contradictions:
            corrected = None
            if all(c.found is not None for c in contradictions):
                corrected = self._corrected(memory, checks, codebase, contradictions)
            said = "; ".join(
                f"{c.where} no longer says {c.claim!r}" + (f" but {c.found!r}" if c.found else "")
                for c in contradictions
            )
            doubt = "" if corrected is not None else "a contradiction with no current value to read"
            return Verdict(VerdictStatus.CONTRADICTED, checks, corrected, said, tuple(contradictions), doubt)

        weak = len(terms(f"{memory.subject} {memory.fact}") & terms("\n".join(c.text or "" for c in readable))) <= 1
        if not self._about(memory, claims, readable, codebase):
            return Verdict(
                VerdictStatus.UNSUPPORTED,
                checks,
                reason="the cited code is not about " + repr(memory.subject),
                uncertain="relevance judged by the words fact and code share" if weak else "",
            )
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
            self._corrected(memory, checks, codebase, ()),
            reason,
            uncertain="a cited line changed, and no claim of the fact was seen to go" if changed else "",
        )

    @staticmethod
    def _contradictions(
        memory: Memory, claims: list[Claim], readable: list[CitationCheck], codebase: Codebase
    ) -> list[Contradiction]:
        found: dict[str, Contradiction] = {}
        statements = {id(c): statement_of(c, codebase) for c in readable}
        # 1. Grounded: a change removed a claimed literal from a cited line.
        for check in readable:
            assert check.text is not None
            if check.snippet is None or " ".join(check.snippet.split()) == " ".join(check.text.split()):
                continue
            swapped = substitutions(check.snippet, check.text)
            for claim in claims:
                if claim.text in found or not mentions(check.snippet, claim.text):
                    continue
                if mentions(statements[id(check)], claim.text):
                    continue
                found[claim.text] = Contradiction(
                    claim.text, _verbatim(_replacement(claim.text, swapped), check.text), check.where
                )
        # 2. Ungrounded: the cited code assigns a different value to what the fact talks about
        # (also how a grounded contradiction whose replacement the change does not show is filled in).
        texts = [statements[id(c)] for c in readable if c.text is not None]
        vocabulary = terms(f"{memory.subject} {memory.fact}")
        for claim in claims:
            known = found.get(claim.text)
            if (known is not None and known.found is not None) or (
                known is None and any(mentions(t, claim.text) for t in texts)
            ):
                continue
            kind = _effective_kind(claim)
            if kind not in {ClaimKind.VERSION, ClaimKind.NUMBER, ClaimKind.QUOTED, ClaimKind.CODE}:
                continue
            values: dict[str, str] = {}
            loose: dict[str, str] = {}  # keys sharing only some words with the fact
            for check in readable:
                assert check.text is not None
                for key, value in assignments(check.text):
                    if _value_kind(value) is not kind:
                        continue
                    shared = key_terms(key) & vocabulary
                    if shared and 2 * len(shared) >= len(key_terms(key)):
                        values.setdefault(unquote(value), check.where)
                    elif shared:
                        loose.setdefault(unquote(value), check.where)
            if not values and len(loose) == 1 and kind in {ClaimKind.VERSION, ClaimKind.NUMBER}:
                values = loose  # the one value of that kind the cited code sets, for a key the fact names
            if not values:
                continue
            candidates = [v for v in values if v != claim.text]
            replacement = candidates[0] if len(candidates) == 1 else None
            where = values[candidates[0]] if candidates else readable[0].where
            if known is None or replacement is not None:
                found[claim.text] = Contradiction(claim.text, replacement, known.where if known else where)
        return list(found.values())

    @staticmethod
    def _owners(
        claims: list[Claim], checks: tuple[CitationCheck, ...], codebase: Codebase
    ) -> tuple[tuple[CitationCheck, ...], list[Contradiction]]:
        """A fact that names a definition (``Owner.member``, ``do_truncate``) whose citation was
        followed onto something else (a line of the same text in another class, a docstring's
        example, a decorator): cite the definition where it is now, found by its name in the
        cited file; when ``Owner`` has no ``member`` any more, that claim is contradicted."""
        fixed, gone = list(checks), []
        for claim in claims:
            named = named_definition(claim)
            if named is None:
                continue
            owner, member = named
            for index, check in enumerate(fixed):
                if check.status is CitationStatus.VALID or not check.status.readable or check.line is None:
                    continue
                lines = codebase.read(check.path).lines
                if not 0 < check.line <= len(lines) or not defined_in(check.snippet, member):
                    continue  # the memory did not cite that definition: where it is now is beside the point
                if in_brackets(codebase, check):
                    continue  # a parameter or an argument of that name, not its definition
                here = definition_at(lines, check.line - 1, member)
                if here and (owner is None or enclosing_class(lines, here - 1) == owner):
                    line: int | None = here  # the definition, where the fact says (or a line off it)
                elif owner is not None and not was_in(codebase, check, owner):
                    break  # the old code does not show it in that class: nothing to say
                else:
                    line = find_member(lines, owner, member) if owner else find_definition(lines, member)
                alias = (
                    _ALIAS.match(lines[line - 1]) if line is not None and _DEFINES.match(check.snippet or "") else None
                )
                renamed = find_definition(lines, alias.group(2)) if alias and alias.group(1) == member else None
                if renamed is not None and alias is not None:  # an alias left for the old name: OLD = NEW
                    new = claim.text.replace(member, alias.group(2))
                    fixed[index] = replace(check, status=CitationStatus.MOVED, line=renamed, end_line=None,
                                           text=lines[renamed - 1])  # fmt: skip
                    gone.append(Contradiction(claim.text, new, f"{check.path}:{renamed}"))
                    break
                if line is not None and line != check.line:
                    fixed[index] = replace(check, status=CitationStatus.MOVED, line=line, end_line=None,
                                           text=lines[line - 1])  # fmt: skip
                elif line is None:
                    gone.append(Contradiction(claim.text, None, check.where))  # no longer defined there
                break
        return tuple(fixed), gone

    @staticmethod
    def _about(memory: Memory, claims: list[Claim], readable: list[CitationCheck], codebase: Codebase) -> bool:
        # a short line is read with its block, and a line of a wrapped signature or call with the
        # whole statement (``le=None,`` is about ``cmp_using``, whose ``def`` opens it)
        readings = [(context_of(c, codebase), statement_of(c, codebase, always=True)) for c in readable if c.text]
        text = "\n".join(f"{block}\n{statement}" for block, statement in readings)
        shared = terms(f"{memory.subject} {memory.fact}") & terms(text)
        # what ties a fact to code: its names and values, not a number or a flag (``None`` is everywhere)
        hooks = [c for c in claims if c.kind is not ClaimKind.NUMBER and unquote(c.text) not in _FLAGS]
        if not shared:  # no word in common: about it only where it names code the cited code defines
            names = [c for c in hooks if c.kind in {ClaimKind.CODE, ClaimKind.IDENTIFIER}]
            return any(defined_in(text, n.text.rstrip("()")) or member_defined(text, n.text) for n in names)
        if hooks and len(shared) <= 1:
            return any(mentions(text, c.text) or member_defined(text, c.text) for c in hooks)
        return True

    @staticmethod
    def _corrected(
        memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase, contradictions: Sequence[Contradiction]
    ) -> MemoryDraft | None:
        citations = tuple(_reanchor(c, codebase.commit) for c in checks if c.status.readable and c.line is not None)
        if not citations and memory.kind is Kind.FACT:
            return None
        fact, subject = memory.fact, memory.subject
        for contradiction in contradictions:
            assert contradiction.found is not None
            fact = fact.replace(contradiction.claim, contradiction.found)
            subject = subject.replace(contradiction.claim, contradiction.found)
        return MemoryDraft(memory.repo, memory.kind, subject, fact, citations, memory.reason)


def verify_memory(memory: Memory, codebase: Codebase, *, verifier: Verifier | None = None) -> Verdict:
    """Check every citation of ``memory`` against ``codebase`` and judge it."""
    checks = [verify_citation(codebase, citation) for citation in memory.citations]
    return (verifier or ReferenceVerifier()).judge(memory, checks, codebase)


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
    return [verify_memory(m, codebase, verifier=verifier) for m in loop]
