"""The reference verifier as a chain of judges.

Each judge reads one kind of evidence about a memory and either decides its verdict or passes
it on; the first verdict stands (first-result semantics, as pluggy's ``firstresult`` hooks), and
the verdict names the judge that gave it (`Verdict.judge`). In order:

1. ``cited``: nothing cited, or nothing left to read behind any citation (unsupported, missing).
2. ``refuted``: the fact says something of the cited code that the code shows is not so (read
   from the environment, one platform only, deprecated and unused, ignores a parameter, raises):
   unsupported.
3. ``stated``: the fact states a value of code in a shape read exactly (a name's value, a
   parameter's default, a function's parameters, a class's bases, a pin): contradicted where the
   code says another, else valid or re-anchored.
4. ``values``: a value the fact states in free words (a number with its unit, a string, a flag, a
   version, a pin, a URL) that a change took away, or that the cited code never gave what the
   fact names (a near miss): contradicted, corrected with the code's value.
5. ``lists``: a list the fact writes out, a count, a parameter list, against the collection the
   cited code holds: an item left out or added, a wrong count, an order stated wrongly.
6. ``relevance``: the cited code is not about the fact: unsupported.
7. ``literals``: a literal claim of the fact (quoted string, code span, version, name) that a
   change took off a cited line, or a value the cited code gives what the fact names: contradicted.
8. ``changed``: a change to the cited statements took away or brought in a word the fact relies
   on (a guard added around an unchanged line, a list grown beside "the only"): contradicted.
9. ``citations``: the citations stand (valid) or moved (re-anchored). Always decides.

A contradicted verdict that found no current value gets the correction the change shows, read
character by character off the cited statements then and now, when it replaces every claim the
verdict contradicts and stands where the claim stood (`Case.read_off_change`); else the verdict
says there is none.

Plug in a chain of your own (`JudgeChain`), or any `Verifier`.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import replace

from memstore.model import Memory
from memstore.verify.citations import CitationCheck
from memstore.verify.codebase import Codebase, GitCodebase
from memstore.verify.evidence import Evidence
from memstore.verify.judges.case import Case, Judge
from memstore.verify.judges.changed import Changed
from memstore.verify.judges.citations import Citations
from memstore.verify.judges.cited import Cited
from memstore.verify.judges.lists import Lists
from memstore.verify.judges.literals import Literals
from memstore.verify.judges.refuted import Refuted
from memstore.verify.judges.relevance import Relevance
from memstore.verify.judges.stated import StatedValues
from memstore.verify.judges.values import Values
from memstore.verify.verdict import Verdict, VerdictStatus

__all__ = ["REFERENCE_JUDGES", "Case", "Judge", "JudgeChain"]

REFERENCE_JUDGES: tuple[Judge, ...] = (
    Cited(),
    Refuted(),
    StatedValues(),
    Values(),
    Lists(),
    Relevance(),
    Literals(),
    Changed(),
    Citations(),
)


class JudgeChain:
    """A `Verifier` that asks its judges in order; the first verdict stands.

    Args:
        judges: the steps, in order (default: the reference chain). The last must always decide.
    """

    def __init__(self, judges: Sequence[Judge] = REFERENCE_JUDGES) -> None:
        self.judges = tuple(judges)
        # Each citation's reading then and now, kept per codebase (a codebase reads one state of the
        # code): the wordings of one memory, and memories citing the same lines, share it.
        self._evidence: weakref.WeakKeyDictionary[Codebase, dict[object, Evidence]] = weakref.WeakKeyDictionary()

    def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
        shared: dict[object, Evidence] = {}
        if isinstance(codebase, GitCodebase):  # one commit's code never changes; a work tree may
            shared = self._evidence.setdefault(codebase, shared)
        if len(shared) > 20_000:
            shared.clear()
        case = Case(memory, tuple(checks), codebase, shared=shared)
        for step in self.judges:
            verdict = step.decide(case)
            if verdict is not None:
                verdict = _completed(verdict, case)
                uncertain = "; ".join(u for u in (verdict.uncertain, *case.unchecked) if u)
                return replace(verdict, judge=step.name, uncertain=uncertain)
        raise ValueError(f"no judge of {[j.name for j in self.judges]} decided; the last one must always decide")


def _completed(verdict: Verdict, case: Case) -> Verdict:
    """A contradicted verdict that found no current value gets the correction a change shows
    (`Case.read_off_change`), when that correction replaces every claim the verdict contradicts."""
    if verdict.status is not VerdictStatus.CONTRADICTED or verdict.corrected is not None or not verdict.contradictions:
        return verdict
    draft, _ = case.read_off_change()
    if draft is None or any(_states(draft.fact, c.claim) for c in verdict.contradictions):
        return verdict
    return replace(verdict, corrected=draft, uncertain="a correction read off the change, character by character")


def _states(fact: str, claim: str) -> bool:
    core = claim.strip().strip("`\"'")
    return bool(core) and re.search(rf"(?<![\w.]){re.escape(core)}(?![\w])", fact.replace("`", "")) is not None
