"""The judge of a fact's literal claims: quoted strings, code spans, versions, numbers and names.

A claim is contradicted when a change took it off a cited line (grounded: the line said it when
the memory was written, and says something else now), or when the cited code gives another value
to what the fact names (ungrounded). The correction carries the values read off the code when
every contradicted claim has one; else the verdict says it has none to offer.
"""

from __future__ import annotations

import re

from memstore.verify.citations import CitationCheck
from memstore.verify.claims import (
    ClaimKind,
    FactClaim,
    assignments,
    key_terms,
    kind_of,
    mentions,
    substitutions,
    terms,
    unquote,
)
from memstore.verify.definitions import statement_of
from memstore.verify.judges.case import Case
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus

__all__ = ["Literals"]


class Literals:
    """Contradicted when the code no longer says a literal claim of the fact."""

    name = "literals"

    def decide(self, case: Case) -> Verdict | None:
        checks, gone = case.located
        contradictions = _contradictions(case)
        known = {c.claim for c in contradictions}
        contradictions += [c for c in gone if c.claim not in known]
        if not contradictions:
            return None
        corrected = None
        if all(c.found is not None for c in contradictions):
            corrected = case.corrected(contradictions, checks)
        said = "; ".join(
            f"{c.where} no longer says {c.claim!r}" + (f" but {c.found!r}" if c.found else "") for c in contradictions
        )
        doubt = "" if corrected is not None else "a contradiction with no current value to read"
        return Verdict(VerdictStatus.CONTRADICTED, checks, corrected, said, tuple(contradictions), doubt)


def _effective_kind(claim: FactClaim) -> ClaimKind:
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


def _assigned(readable: list[CitationCheck], kind: ClaimKind, vocabulary: frozenset[str]) -> dict[str, str]:
    """The values of ``kind`` the cited code assigns to keys the fact names, and where: keys that
    share most of their words with the fact, else the one value for a key sharing some."""
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
        return loose  # the one value of that kind the cited code sets, for a key the fact names
    return values


def _contradictions(case: Case) -> list[Contradiction]:
    memory, codebase, claims, readable = case.memory, case.codebase, case.claims, case.located_readable
    found: dict[str, Contradiction] = {}
    statements = {id(c): f"{c.text}\n{statement_of(c, codebase)}" for c in readable}
    # 1. Grounded: a change removed a claimed literal from a cited line.
    for check in readable:
        assert check.text is not None
        if check.snippet is None or " ".join(check.snippet.split()) == " ".join(check.text.split()):
            continue
        swapped = substitutions(check.snippet, check.text)
        for claim in claims:
            if claim.text in found or not mentions(check.snippet, claim.text):
                continue
            if _effective_kind(claim) is ClaimKind.NUMBER:
                continue  # numbers are judged as values, token by token (`memstore.verify.judges.values`)
            if mentions(statements[id(check)], claim.text):
                continue
            if mentions(case.evidence_for(check).now_context, claim.text):
                continue  # it stands in the statements that took the cited lines' place, or around them
            found[claim.text] = Contradiction(
                claim.text, _verbatim(_replacement(claim.text, swapped), check.text), check.where
            )
    # 2. Ungrounded: the cited code assigns a different value to what the fact talks about
    # (also how a grounded contradiction whose replacement the change does not show is filled in).
    texts = [statements[id(c)] for c in readable if c.text is not None]
    stated = {c.text for c in claims} | {m.value for m in case.reading.values}
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
        values = _assigned(readable, kind, vocabulary)
        if not values:
            continue
        if any(v in stated for v in values if v != claim.text):
            continue  # the fact states the code's value too: this claim is about something else ("service 3")
        candidates = [v for v in values if v != claim.text]
        if not candidates and known is None:
            continue  # the code gives what the fact names the value the fact states
        replacement = candidates[0] if len(candidates) == 1 else None
        where = values[candidates[0]] if candidates else readable[0].where
        if known is None or replacement is not None:
            found[claim.text] = Contradiction(claim.text, replacement, known.where if known else where)
    return list(found.values())
