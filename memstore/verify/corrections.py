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
from functools import lru_cache

from memstore.verify.mentions import Mention, MentionKind

__all__ = ["replacements", "rewrite"]

_MAX_CHARS = 6_000  # statements compared character by character up to this size (difflib is quadratic at worst)
_UNIT = re.compile(r"[\w.$:/@+-]")


def replacements(then: str, now: str, mentions: Iterable[Mention]) -> dict[Mention, str]:
    """For each mention whose text stood once in ``then`` and stands nowhere in ``now``, the text
    that took its place in ``now`` (widened to whole tokens), when one stretch did."""
    if not then or not now or len(then) > _MAX_CHARS or len(now) > _MAX_CHARS:
        return {}
    found: dict[Mention, str] = {}
    for mention in mentions:
        stated = _core(mention)
        if len(stated) < 1 or then.count(stated) != 1 or _stands(stated, now):
            continue
        start = then.index(stated)
        mapped = _mapped(_opcodes(then, now), start, start + len(stated), then, now)
        if mapped is None:
            continue
        new, lo, hi = mapped
        if (
            new != stated
            and _same_kind(mention, new)
            and _whole(new, now)
            and _in_place(then, start, start + len(stated), now, lo, hi)
            and _well_formed(stated, new)
        ):
            found[mention] = new
    return found


@lru_cache(maxsize=512)
def _opcodes(then: str, now: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """The character edits from ``then`` to ``now`` (kept: the wordings of a memory share them)."""
    return tuple(
        (str(t), a, b, c, d) for t, a, b, c, d in SequenceMatcher(None, then, now, autojunk=False).get_opcodes()
    )


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


def _mapped(
    opcodes: tuple[tuple[str, int, int, int, int], ...], start: int, end: int, then: str, now: str
) -> tuple[str, int, int] | None:
    """The stretch of ``now`` that took the place of ``then[start:end]`` and where it stands: the new
    side of the edits that touch it, widened to whole tokens; None when the stretch lies in no
    single edit region."""
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
    if (start == 0 or not _word(then[start - 1])) and start < len(then) and _word(then[start]):
        while lo > 0 and _word(now[lo - 1]) and _word(now[lo]):
            lo -= 1  # the stated text began a word: so does its replacement
    if (end >= len(then) or not _word(then[end])) and end > 0 and _word(then[end - 1]):
        while hi < len(now) and _word(now[hi]) and _word(now[hi - 1]):
            hi += 1  # and it ended one
    new = now[lo:hi].strip()
    return (new, lo, hi) if new and "\n" not in new and len(new) <= 200 else None


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _in_place(then: str, start: int, end: int, now: str, lo: int, hi: int) -> bool:
    """Whether the replacement stands where the stated text stood: the nearest character on each
    side of it on its line is the one that stood there beside the stated text (a line's end matches
    anything), and the rest of the line held or the replacement is a kin of the stated text (it
    shares much of its spelling: ``time.time()`` and ``time.monotonic()``)."""
    pairs = ((_beside(then, start, -1), _beside(now, lo, -1)), (_beside(then, end, 1), _beside(now, hi, 1)))
    if not all(a == b or not a or not b for a, b in pairs):
        return False
    around_then, around_now = _line_around(then, start, end), _line_around(now, lo, hi)
    if len(around_then.strip()) >= 8 and SequenceMatcher(None, around_then, around_now, autojunk=False).ratio() >= 0.6:
        return True  # the line around it held
    return SequenceMatcher(None, then[start:end], now[lo:hi], autojunk=False).ratio() >= 0.4  # or it is kin to it


def _line_around(text: str, start: int, end: int) -> str:
    """The rest of the line ``text[start:end]`` stands on."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return text[first:start] + "\0" + text[end : len(text) if last < 0 else last]


def _beside(text: str, at: int, step: int) -> str:
    """The first character other than a space from ``at`` (``step`` -1: before it), or "" at a line's end."""
    index = at - 1 if step < 0 else at
    while 0 <= index < len(text) and text[index] in " \t":
        index += step
    return text[index] if 0 <= index < len(text) and text[index] not in "\r\n" else ""


_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))


def _well_formed(stated: str, new: str) -> bool:
    """Whether the replacement is a whole piece of code as the stated text was: its brackets and
    quotes balanced, not cut at a separator, not the stated name with a part of it dropped."""
    if any(new.count(a) != new.count(b) for a, b in _PAIRS if stated.count(a) == stated.count(b)):
        return False
    if any(stated.count(q) % 2 == 0 and new.count(q) % 2 for q in "\"'`"):
        return False
    if (new[0] in ",;:." and new[0] != stated[0]) or (new[-1] in ",;:." and new[-1] != stated[-1]):
        return False
    return not (len(new) < len(stated) and new in stated and re.fullmatch(r"[\w.]+", stated))


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
