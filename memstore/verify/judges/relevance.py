"""The judge of whether the cited code is about the fact at all.

A citation can point at the wrong lines: a fact about ``set_key`` citing lines of ``unset_key``, a
fact about the worker class citing the backlog setting. What a fact is about is what it names (its
names of code) and what it states (its values); the cited code, as it was when the memory was
written, is the cited statements, the definitions around them and the file's name. The citation is
about the fact when any of the fact's names or values stands there. When none does and some stand
elsewhere in the same file, the citation points at something else: unsupported. When the fact
names nothing the file has either, the words fact and code share decide (two or more).
"""

from __future__ import annotations

import re

from memstore.verify.claims import terms
from memstore.verify.evidence import Evidence
from memstore.verify.judges.case import Case
from memstore.verify.mentions import Mention, MentionKind
from memstore.verify.reading import Reading
from memstore.verify.tokens import cached_pattern
from memstore.verify.verdict import Verdict, VerdictStatus
from memstore.verify.words import stem, word_stems

__all__ = ["Relevance"]

_SPECIFIC = {MentionKind.STRING, MentionKind.NUMBER, MentionKind.URL, MentionKind.VERSION, MentionKind.PIN}
_FILE = re.compile(
    r"\.(?:py|pyi|js|mjs|cjs|ts|tsx|go|rs|java|md|rst|txt|toml|cfg|ini|ya?ml|json|sh|in)$", re.IGNORECASE
)


class Relevance:
    """Unsupported when the cited code holds nothing the fact names or states."""

    name = "relevance"

    def decide(self, case: Case) -> Verdict | None:
        reading = case.reading
        hooks = _hooks(reading)
        elsewhere: list[str] = []
        weak = False
        for ev in case.evidence:
            context = _context(ev)
            if context is None:
                return None  # nothing to read as it was: no way to tell
            if any(_stands(hook, context) for hook in hooks):
                return None
            context = context.replace(ev.check.citation.path, " ")  # the file's name is no tie by words
            found = [h for h in hooks if _stands(h, case.file_then(ev))]
            if any(h.kind is MentionKind.NAME for h in found) or len(found) >= 2:
                elsewhere += [h.text for h in found]
            else:
                shared = terms(f"{case.memory.subject} {reading.fact}") & terms(context)
                if len(shared) >= 2 or (not hooks and shared):
                    return None
                weak = True
        where = ", ".join(dict.fromkeys(elsewhere))
        reason = "the cited code is not about " + repr(case.memory.subject)
        if where:
            reason += f": what the fact names ({where}) stands elsewhere in the file"
        return Verdict(
            VerdictStatus.UNSUPPORTED,
            case.checks,
            reason=reason,
            uncertain="relevance judged by the words fact and code share" if weak and not where else "",
        )


def _hooks(reading: Reading) -> list[Mention]:
    """What ties a fact to code: its names of code (files aside) and its specific values (not a
    flag or a one-digit number, which stand everywhere)."""
    found = []
    for m in reading.mentions:
        if (m.kind is MentionKind.NAME and not _FILE.search(m.value) and len(m.value.strip("-_")) >= 2) or (
            m.kind in _SPECIFIC
            and (m.kind is not MentionKind.NUMBER or len(m.value.lstrip("-")) >= 2 or m.unit)
            and (m.kind is not MentionKind.STRING or len(m.value) >= 3)
        ):
            found.append(m)
    return found


def _parts(mention: Mention) -> list[str]:
    """The forms a name can stand in code as: whole, its last dotted part, without dashes."""
    value = mention.value.removesuffix("()")
    parts = {value, value.split(".")[-1], value.lstrip("-"), value.lstrip("-").replace("-", "_")}
    if "." in value:
        parts.update(p for p in value.split(".") if len(p) >= 4)
    return [p for p in parts if len(p) >= 2]


def _stands(hook: Mention, text: str) -> bool:
    if hook.kind is MentionKind.NAME:
        if any(cached_pattern(rf"(?<![\w$]){re.escape(p)}(?![\w$])").search(text) for p in _parts(hook)):
            return True
        word = hook.value.strip("-_")
        if re.fullmatch(r"[A-Za-z][a-z0-9]*|[A-Z][A-Z0-9]+", word):  # one word: as a part of a name too (API_VERSION)
            return stem(word) in {s for s, _ in word_stems(text)}
        return False
    value = hook.value
    return value in text or (
        hook.kind is MentionKind.NUMBER
        and cached_pattern(rf"(?<![\w.]){re.escape(value)}(?![\w])").search(text) is not None
    )


def _context(ev: Evidence) -> str | None:
    """The cited code as it was: the statements, the definition around them, its headers, the path."""
    if ev.then is None:
        return None
    parts = [ev.then.text, ev.check.citation.path, *(header for _, header in ev.then_parents)]
    if ev.then_scope is not None:
        parts.append(ev.then_scope.text)
    return "\n".join(parts)
