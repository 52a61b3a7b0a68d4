"""The judge of whether the cited code is about the fact at all."""

from __future__ import annotations

from memstore.verify.claims import ClaimKind, mentions, terms, unquote
from memstore.verify.definitions import context_of, defined_in, member_defined, statement_of
from memstore.verify.judges.case import Case
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["Relevance"]

_FLAGS = frozenset({"None", "True", "False", "null", "true", "false", "nil", "undefined"})


class Relevance:
    """Unsupported when the cited code shares nothing with the fact that ties them together."""

    name = "relevance"

    def decide(self, case: Case) -> Verdict | None:
        memory, readable = case.memory, case.located_readable
        if _about(case):
            return None
        code = "\n".join(c.text or "" for c in readable)
        weak = len(terms(f"{memory.subject} {memory.fact}") & terms(code)) <= 1
        return Verdict(
            VerdictStatus.UNSUPPORTED,
            case.located[0],
            reason="the cited code is not about " + repr(memory.subject),
            uncertain="relevance judged by the words fact and code share" if weak else "",
        )


def _about(case: Case) -> bool:
    # a short line is read with its block, and a line of a wrapped signature or call with the
    # whole statement (``le=None,`` is about ``cmp_using``, whose ``def`` opens it)
    memory, codebase = case.memory, case.codebase
    readings = [(context_of(c, codebase), statement_of(c, codebase, always=True)) for c in case.located_readable]
    text = "\n".join(f"{block}\n{statement}" for block, statement in readings)
    shared = terms(f"{memory.subject} {memory.fact}") & terms(text)
    # what ties a fact to code: its names and values, not a number or a flag (``None`` is everywhere)
    hooks = [c for c in case.claims if c.kind is not ClaimKind.NUMBER and unquote(c.text) not in _FLAGS]
    if not shared:  # no word in common: about it only where it names code the cited code defines
        names = [c for c in hooks if c.kind in {ClaimKind.CODE, ClaimKind.IDENTIFIER}]
        return any(defined_in(text, n.text.rstrip("()")) or member_defined(text, n.text) for n in names)
    if hooks and len(shared) <= 1:
        return any(mentions(text, c.text) or member_defined(text, c.text) for c in hooks)
    return True
