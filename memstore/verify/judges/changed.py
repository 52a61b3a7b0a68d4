"""The judge of a cited statement that a change rewrote: did the change touch what the fact says?

A cited line that changed is the commonest sign that a memory went stale, and the commonest
reason a verifier that only follows lines passes it. Here the change is read as words: what the
cited statements said when the memory was written (``then``) against what stands in their place
now. The memory is contradicted when

- a word of the fact (or of its subject) that the statements said then is gone from them now
  ("echoes each pair of ``items()``" after ``items()`` was replaced), or
- a word the fact says the code does *not* have appeared ("no ``encoding`` parameter" after
  ``encoding`` was added), or
- the statements were mostly rewritten (more than `REWRITTEN` of their words gone).

A change that touched none of the fact's words (``'-q %s' % quote`` became ``f'-q {quote}'``)
leaves the memory to the next judges: re-anchored. No correction is offered (no single value took
the place of a value the fact states; `memstore.verify.judges.values` corrects those), and the
verdict says so and is marked uncertain, for a second judge to confirm.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, replace

from memstore.model import MemoryDraft
from memstore.verify.citations import CitationStatus
from memstore.verify.evidence import Evidence, Region
from memstore.verify.judges.case import Case
from memstore.verify.mentions import MentionKind
from memstore.verify.reading import Cue
from memstore.verify.tokens import TokenKind
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus
from memstore.verify.words import word_stems

__all__ = ["REWRITTEN", "Changed"]

_EXCLUSIVE = re.compile(
    r"(?i)\b(?:the only|only one|the single|a single|the sole|no other|nothing else|just one|is unique)\b"
)
REWRITTEN = 0.3  # the share of a statement's words a change took away that makes it another statement


class Changed:
    """Contradicted when a change to the cited statements took away or brought in a word the fact
    relies on."""

    name = "changed"

    def decide(self, case: Case) -> Verdict | None:
        said = _Said.of(case)
        reasons = [r for r in (_reason(case.evidence_for(c), case, said) for c in case.located_readable) if r]
        if not reasons:
            return None
        corrected, contradictions = case.read_off_change()
        if corrected is None:
            corrected, contradictions = _words_swapped(case, said)
        tail = "" if corrected is not None else "; no one value of the code replaces what the fact says"
        return Verdict(
            VerdictStatus.CONTRADICTED,
            case.checks,
            corrected,
            reason="; ".join(reasons) + tail,
            contradictions=contradictions,
            uncertain="a rewritten statement read as touching the fact by its words",
        )


@dataclass(frozen=True)
class _Said:
    """What a fact relies on, as words: what it says (with its subject's words), what it denies,
    whether it claims a whole (a complete list, a count, "the only"), and its words of code."""

    said: set[str]
    denied: set[str]
    closed: bool
    exclusive: bool
    coded: set[str]
    written: set[str]  # the words of the fact alone (the subject aside)

    @classmethod
    def of(cls, case: Case) -> _Said:
        reading = case.reading
        return cls(
            said={w.stem for w in reading.words if not w.negated} | {s for s, _ in word_stems(case.memory.subject)},
            denied={w.stem for w in reading.words if w.negated},
            closed=bool(reading.cues & {Cue.COMPLETE, Cue.COUNT}),
            exclusive=_EXCLUSIVE.search(reading.fact) is not None,
            coded={
                s
                for m in reading.mentions
                if m.kind in {MentionKind.NAME, MentionKind.CODE}
                for s, _ in word_stems(m.value)
            },
            written={w.stem for w in reading.words},
        )


def _reason(ev: Evidence, case: Case, fact: _Said) -> str | None:
    """Why a change to one cited statement contradicts the fact, or None."""
    said = fact.said
    grown_beside = f"{ev.check.where}: its section gained {{}}, beside what the fact says is all there is"
    if fact.closed and ev.then_section is not None and ev.now_section is not None and (grown := _grown(ev, said)):
        return grown_beside.format(", ".join(grown[:4]))
    scoped = ev.then_scope is not None and ev.now_scope is not None
    if fact.exclusive and scoped and (grown := _grown_in_scope(ev, said)):
        return grown_beside.format(", ".join(grown[:4]))
    if ev.then is None or ev.now is None or not ev.changed:
        return None
    cited_changed = ev.check.status is CitationStatus.CHANGED
    then, now = ev.then.stems, ev.now.stems
    kept = _still_there(ev, case)
    gone = sorted(s for s in said if s in then and s not in now and s not in kept)
    above_then = {s for _, h in ev.then_parents for s, _ in word_stems(h)} | _stems(ev.then_scope)
    above_now = {s for _, h in ev.now_parents for s, _ in word_stems(h)} | _stems(ev.now_scope)
    came = sorted(s for s in fact.denied if (s in now and s not in then) or (s in above_now and s not in above_then))
    new = sorted(s for s in (now - then) if s not in then and not s.isdigit() and len(s) > 2)
    removed = sum((then - now).values())
    share = removed / max(1, sum(then.values()))
    where = ev.check.where
    if came:
        return f"{where} now has {', '.join(came[:4])}, which the fact says it does not"
    if cited_changed and (swapped := _swapped(ev, fact)):
        return f"{where} now says {', '.join(f'{new} where it said {old}' for old, new in swapped[:3])}"
    if cited_changed and gone and (len(gone) >= 2 or set(gone) & fact.coded):
        return f"{where} no longer says {', '.join(gone[:4])}"
    if cited_changed and share >= REWRITTEN and removed >= 3 and not _holds(said, then, now, kept, fact.coded):
        return f"{where} was rewritten ({share:.0%} of its words are gone)"
    if fact.closed and new and not _imports_only(ev):
        return f"{where} gained {', '.join(new[:4])}, beside what the fact says is all there is"
    if cited_changed and (lost := _lost_from_line(ev, said & fact.coded)):
        return f"{where} no longer says {', '.join(lost[:4])} on the cited line"
    if Cue.UNIVERSAL in case.reading.cues and ev.guards_changed:
        return f"{where} now stands under {ev.now_parents[0][1]!r}: the fact says it always holds"
    return None


def _grown(ev: Evidence, said: set[str]) -> list[str]:
    """Words of items a list in a document or a configuration file gained next to the cited lines:
    lines shaped like the cited ones (the same opening, ``-`` or ``.. autoclass::``) that the section
    did not have, holding the words every cited item shares with the fact."""
    assert ev.then_section is not None
    assert ev.now_section is not None
    cited = [line for line in (ev.check.snippet or "").split("\n") if line.strip()]
    shapes = Counter(_shape(line) for line in cited)
    if not shapes or shapes.most_common(1)[0][1] < 2:
        return []
    shape = {shapes.most_common(1)[0][0]}
    items = [line for line in cited if _shape(line) in shape]
    common = set.intersection(*({s for s, _ in word_stems(line)} for line in items)) & said
    before = {" ".join(line.split()) for line in ev.then_section.lines}
    added = [
        line for line in ev.now_section.lines
        if _shape(line) in shape and " ".join(line.split()) not in before
        and (not common or common <= {s for s, _ in word_stems(line)})
    ]  # fmt: skip
    return sorted({s for line in added for s, _ in word_stems(line) if len(s) > 2})


def _shape(line: str) -> str:
    """The opening of a line: its indentation and first mark or word (``-``, ``..``, ``"key":``)."""
    stripped = line.lstrip()
    first = re.match(r"[-*+]|\d+[.)]|\.\.\s*[\w:-]+|\W+|\w+", stripped)
    return f"{len(line) - len(stripped)}:{first.group() if first else ''}"


def _lost_from_line(ev: Evidence, words: set[str]) -> list[str]:
    """Words of the fact's code that a one-line citation said and the line rewritten in its place
    does not (``3.10: py310, lint, manifest`` became ``3.10: py310``)."""
    snippet, text = ev.check.snippet, ev.rewritten
    if not snippet or not text or "\n" in snippet:
        return []
    before = {s for s, _ in word_stems(snippet)}
    after = {s for s, _ in word_stems(text)}
    return sorted(w for w in words if w in before and w not in after)


def _still_there(ev: Evidence, case: Case) -> set[str]:
    """Words that left the cited statements but not the code around them: the names of the
    definitions that enclose them now (``super(TqdmWarning, self)`` became ``super()`` inside
    ``class TqdmWarning``), the words of the definitions of names the change brought in
    (``raise ImportError(WARN_NOIPYW)``), and the words of a long message the change moved
    elsewhere in the file."""
    kept = {s for _, header in ev.now_parents for s, _ in word_stems(header)}
    kept |= {s for s, _ in word_stems(ev.now_defined)}
    if ev.then is None:
        return kept
    messages = [t.value for t in ev.then.tokens if t.kind is TokenKind.STRING and len(t.value) >= 20]
    if messages:
        read = case.codebase.read(ev.check.path)
        text = "\n".join(read.lines) if read.ok else ""
        for message in messages:
            if message in text:
                kept |= {s for s, _ in word_stems(message)}
    return kept


def _swapped(ev: Evidence, fact: _Said) -> list[tuple[str, str]]:
    """Words of the fact the change replaced one for one in the cited statements (``log.info`` became
    ``log.error`` under "logs it at INFO level"), where the fact does not say the new word too."""
    assert ev.then is not None
    assert ev.now is not None
    found = []
    for old, new in ev.diff[2]:
        if old.kind is not TokenKind.NAME or new.kind is not TokenKind.NAME or len(old.value) < 3:
            continue
        if sum(1 for t in ev.then.tokens if t.line == old.line) < 2:
            continue  # a line that was only that word (an item of a list): removed, not replaced
        was, now = word_stems(old.value), word_stems(new.value)
        if len(was) != 1 or len(now) != 1 or was[0][0] == now[0][0]:
            continue
        word, replacement = was[0][0], now[0][0]
        if word in fact.said and replacement not in fact.written and ev.now.stems[word] < ev.then.stems[word]:
            found.append((old.value, new.value))
    return found


def _words_swapped(case: Case, fact: _Said) -> tuple[MemoryDraft | None, tuple[Contradiction, ...]]:
    """The fact with each word a change replaced one for one written as the new word (in the
    fact's case: INFO becomes ERROR), when every changed citation shows such a swap."""
    swaps = [
        (old, new, ev.check.where)
        for ev in (case.evidence_for(c) for c in case.located_readable)
        if ev.check.status is CitationStatus.CHANGED and ev.then is not None and ev.now is not None
        for old, new in _swapped(ev, fact)
    ]
    draft = case.corrected() if swaps else None
    if draft is None:
        return None, ()
    text = draft.fact
    for old, new, _ in swaps:
        pattern = re.compile(rf"(?i)(?<![\w]){re.escape(old)}(?![\w])")
        text = pattern.sub(functools.partial(_in_case_of, word=new), text)
    if text == draft.fact:
        return None, ()
    return replace(draft, fact=text), tuple(Contradiction(old, new, where) for old, new, where in swaps)


def _in_case_of(match: re.Match[str], word: str) -> str:
    written = match.group()
    if written.isupper() and len(written) > 1:
        return word.upper()
    if written[:1].isupper() and written[1:].islower():
        return word[:1].upper() + word[1:]
    return word


def _imports_only(ev: Evidence) -> bool:
    """Whether the statements now only import what they held (a value moved into another module)."""
    assert ev.now is not None
    return bool(ev.now_defined) and all(
        line.lstrip().startswith(("from ", "import ")) or not line.strip() for line in ev.now.lines
    )


def _holds(said: set[str], then: Counter[str], now: Counter[str], kept: set[str], coded: set[str]) -> bool:
    """Whether the words of the fact the statements said then all stand now (a rewrite that kept
    them): its words of code, where it names two or more that the statements said, else all its words."""
    grounded = {s for s in coded if s in then}
    if len(grounded) < 2:
        grounded = {s for s in said if s in then}
    return bool(grounded) and all(s in now or s in kept for s in grounded)


def _stems(region: Region | None) -> set[str]:
    return set(region.stems) if region is not None else set()


def _grown_in_scope(ev: Evidence, said: set[str]) -> list[str]:
    """Lines the definition around a citation gained that say what the cited lines said of the
    fact (another option validated with the same message beside the one the fact says is the
    only one): the words of those lines."""
    assert ev.then_scope is not None
    assert ev.now_scope is not None
    cited = {s for s, _ in word_stems(ev.check.snippet or "")} & said
    if len(cited) < 2:
        return []
    before = {" ".join(line.split()) for line in ev.then_scope.lines}
    shapes = {_shape(line) for line in (ev.check.snippet or "").split("\n") if line.strip()}
    grown: set[str] = set()
    for line in ev.now_scope.lines:
        if " ".join(line.split()) in before or not line.strip() or _shape(line) not in shapes:
            continue
        words = {s for s, _ in word_stems(line)}
        if len(words & cited) >= 3:  # the same kind of line, saying the same of something else
            grown |= words - cited
    return sorted(w for w in grown if len(w) > 2)
