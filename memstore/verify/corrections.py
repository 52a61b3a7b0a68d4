"""Corrections read off a change: what the code now says in place of what a fact stated.

A contradicted memory is corrected in its own words: each thing it stated that a change took away
is replaced, where it stood in the fact, by what the change put in its place in the cited code,
whole (a version inside a URL, a name inside a dotted path, a number inside an expression), never
spliced from old and new text. The place is found by aligning the cited statements as they were
with what stands there now, character by character: the text the fact stated is one stretch of the
old statements, and the stretch of the new ones that took its place is its replacement. Where no
one stretch took its place (the code around it was rewritten, or it was only removed), there is
no correction, and the verdict says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from memstore.verify.reading import Mention, MentionKind

__all__ = ["replacements", "rewrite"]

_MAX_CHARS = 6_000  # statements compared character by character up to this size (difflib is quadratic at worst)
_UNIT = re.compile(r"[\w.$:/@+-]")


def replacements(then: str, now: str, mentions: Iterable[Mention]) -> dict[Mention, str]:
    """For each mention whose text stood once in ``then`` and stands nowhere in ``now``, the text
    that took its place in ``now`` (widened to whole tokens), when one stretch did."""
    if not then or not now or len(then) > _MAX_CHARS or len(now) > _MAX_CHARS:
        return {}
    found: dict[Mention, str] = {}
    opcodes: list[tuple[str, int, int, int, int]] | None = None
    for mention in mentions:
        stated = _core(mention)
        if len(stated) < 1 or then.count(stated) != 1 or _stands(stated, now):
            continue
        if opcodes is None:
            opcodes = [
                (str(t), a, b, c, d) for t, a, b, c, d in SequenceMatcher(None, then, now, autojunk=False).get_opcodes()
            ]
        start = then.index(stated)
        new = _mapped(opcodes, start, start + len(stated), then, now)
        if new and new != stated and _same_kind(mention, new) and _whole(new, now):
            found[mention] = new
    return found


def rewrite(fact: str, found: dict[Mention, str]) -> str:
    """``fact`` with each mention replaced by its replacement, written as the fact wrote it."""
    for mention, new in sorted(found.items(), key=lambda item: -item[0].start):
        text = mention.text
        core = _core(mention)
        written = text.replace(core, new, 1) if core in text else new
        fact = fact[: mention.start] + written + fact[mention.end :]
    return fact


def _core(mention: Mention) -> str:
    """The text of a mention as code would hold it: without backticks and quotes."""
    text = mention.text.strip()
    for _ in range(2):
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "`\"'":
            text = text[1:-1]
    if mention.kind is MentionKind.NUMBER and mention.unit:
        number = re.match(r"-?[\d.,_]+", text)
        return number.group() if number else text
    return text


def _stands(stated: str, text: str) -> bool:
    if re.fullmatch(r"[\w.]+", stated):
        return re.search(rf"(?<![\w]){re.escape(stated)}(?![\w])", text) is not None
    return stated in text


def _mapped(opcodes: list[tuple[str, int, int, int, int]], start: int, end: int, then: str, now: str) -> str | None:
    """The stretch of ``now`` that took the place of ``then[start:end]``: the new side of the edits
    that touch it, widened to whole tokens; None when the stretch lies in no single edit region."""
    lo = hi = None
    for tag, i1, i2, j1, j2 in opcodes:
        if i2 <= start or i1 >= end:
            if tag != "equal" and i1 == i2 and start < i1 < end:  # an insertion inside the stretch
                lo = j1 if lo is None else min(lo, j1)
                hi = j2 if hi is None else max(hi, j2)
            continue
        if tag == "equal":
            a, b = max(start, i1), min(end, i2)
            lo = j1 + (a - i1) if lo is None else min(lo, j1 + (a - i1))
            hi = j1 + (b - i1) if hi is None else max(hi, j1 + (b - i1))
        else:
            lo = j1 if lo is None else min(lo, j1)
            hi = j2 if hi is None else max(hi, j2)
    if lo is None or hi is None or hi <= lo:
        return None
    whole = (start == 0 or not _UNIT.match(then[start - 1])) and (end >= len(then) or not _UNIT.match(then[end]))
    if whole:  # the fact stated a whole token: its replacement is a whole token too
        while lo > 0 and _UNIT.match(now[lo - 1]):
            lo -= 1
        while hi < len(now) and _UNIT.match(now[hi]):
            hi += 1
    new = now[lo:hi].strip()
    return new if new and "\n" not in new and len(new) <= 200 else None


def _whole(new: str, now: str) -> bool:
    """Whether ``new`` stands in ``now`` as whole tokens (not a piece cut out of a longer word)."""
    at = now.find(new)
    while at >= 0:
        before = now[at - 1] if at else " "
        after = now[at + len(new)] if at + len(new) < len(now) else " "
        if not (before.isalnum() and new[0].isalnum()) and not (after.isalnum() and new[-1].isalnum()):
            return True
        at = now.find(new, at + 1)
    return False


def _same_kind(mention: Mention, new: str) -> bool:
    """Whether the replacement is the same sort of thing as what the fact stated (a number for a
    number, a name for a name), not a fragment of the statement around it."""
    if mention.kind is MentionKind.NUMBER:
        return re.fullmatch(r"-?[\d.,_]+", new) is not None
    if mention.kind is MentionKind.VERSION:
        return re.fullmatch(r"v?\d[\w.+-]*", new) is not None
    if mention.kind is MentionKind.NAME:
        return re.fullmatch(r"[\w.$:/-]+(?:\(\))?", new) is not None
    return len(new) <= max(80, 3 * len(_core(mention)))
