"""The judge of the values a fact states: does the cited code give them, then and now?

Every value the fact states (a number with its unit, a string, a flag, a version, a pin, a URL,
and the code's own strings where the fact writes them as plain words: "in auto quoting mode") is
looked for among the values of the cited statements (`memstore.verify.slots`):

- *changed*: the value stood in the cited statements when the memory was written and a change took
  it away: contradicted, corrected with what took its place (the token the change put there, or
  the value now given to the same name);
- *near miss*: the value never stood there, but the statements give another value of its kind to
  what the fact names (``usecwd defaults to True`` of ``usecwd=False``; ``--quote`` defaults to
  auto where ``default='always'``): contradicted, corrected with the code's value.

A value said in the negative ("no timeout") is left to other judges; a value the code cannot be
seen to give to anything the fact names decides nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from memstore.verify.evidence import Evidence, Region
from memstore.verify.judges.case import Case
from memstore.verify.keys import an_input, key_of, keyed
from memstore.verify.mentions import Mention, MentionKind
from memstore.verify.reading import Cue, Reading
from memstore.verify.same import same_value, similar_string
from memstore.verify.slots import Slot, lower_bound
from memstore.verify.tokens import cached_pattern
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus
from memstore.verify.words import STOP

__all__ = ["Values"]

_COMPARED = frozenset(
    {MentionKind.NUMBER, MentionKind.STRING, MentionKind.FLAG, MentionKind.VERSION, MentionKind.PIN, MentionKind.URL}
)
_KINDS = {  # a fact's value and the code's values it can be a misremembering of
    MentionKind.NUMBER: {MentionKind.NUMBER},
    MentionKind.STRING: {MentionKind.STRING, MentionKind.VERSION, MentionKind.URL},
    MentionKind.FLAG: {MentionKind.FLAG},
    MentionKind.VERSION: {MentionKind.VERSION, MentionKind.PIN},
    MentionKind.PIN: {MentionKind.PIN},
    MentionKind.URL: {MentionKind.URL},
}


@dataclass(frozen=True)
class _Found:
    mention: Mention
    now: str | None  # what the code says in its place now, as the code writes it
    where: str
    near_miss: bool
    slot: Slot | None = None  # the code's value it stands for, where it is a near miss of one


def _slots(region: Region | None) -> tuple[Slot, ...]:
    return region.slots if region is not None else ()


def _words_as_values(reading: Reading, slots: tuple[Slot, ...]) -> list[Mention]:
    """The code's strings that the fact writes as plain words ("runs in auto quoting mode" of
    ``'auto'``): values it states without quoting them."""
    found: list[Mention] = []
    fact = reading.fact
    taken = [(m.start, m.end) for m in reading.mentions]
    keys = {k.lstrip("-").lower() for slot in slots for k in slot.keys}
    names = {n.value.lstrip("-").lower() for n in reading.names}
    for slot in slots:
        value = slot.value.strip()
        if slot.kind is not MentionKind.STRING or not 3 <= len(value) <= 40 or value.lower() in STOP:
            continue
        if value.lstrip("-").lower() in keys | names or value.startswith("-"):
            continue  # the name of an option or a key, not a value given to one
        if not re.fullmatch(r"[\w.-]+(?: [\w.-]+){0,3}", value) or value.isdigit():
            continue
        for match in cached_pattern(rf"(?<![\w.-]){re.escape(value)}(?![\w-])").finditer(fact):
            if all(match.end() <= a or match.start() >= b for a, b in taken):
                found.append(Mention(MentionKind.STRING, match.group(), value, match.start(), match.end()))
                taken.append(match.span())
    return found


def _candidates(mention: Mention, slots: tuple[Slot, ...], claimed: set[int]) -> list[Slot]:
    found = [s for s in slots if s.kind in _KINDS[mention.kind] and s.index not in claimed]
    if mention.kind is MentionKind.STRING:  # a string is misremembered as one near it, never as any string
        found = [s for s in found if similar_string(mention.value, s.value)]
    return found


def _about(slot: Slot, reading: Reading, mention: Mention) -> int:
    """How strongly the fact ties ``mention`` to ``slot``: the slot's keys named near the value (2),
    anywhere in the fact (1), or not at all (0)."""
    keys = slot.key_stems
    if not keys:
        return 0
    if keys & reading.near(mention, 40):
        return 2
    names = {n.value.lower().lstrip("-") for n in reading.names}
    if any(k.lower().lstrip("-") in names or k.lower().lstrip("-").split(".")[-1] in names for k in slot.keys):
        return 2
    return 1 if keys & reading.stems else 0


def _near_miss(
    found: dict[int, _Found], reading: Reading, mention: Mention, slot: Slot, ev: Evidence, now_slots: tuple[Slot, ...]
) -> None:
    """Record ``mention`` as a misremembering of the code's ``slot``, unless another value of the
    fact (not the same one said again) already stands for that slot and stands for it better
    (`_rank`)."""
    rival = next(
        (f for f in found.values() if f.slot == slot and f.mention.value != mention.value), None
    )  # the same value said twice ("4 spaces (`indent = 4`)") stands for the slot both times
    if rival is not None:
        if _rank(reading, rival.mention, slot) <= _rank(reading, mention, slot):
            return
        del found[rival.mention.start]
    now = _replacement(slot, ev, now_slots + ev.defined_slots) if ev.now is not None else slot.text
    found[mention.start] = _Found(mention, now, ev.check.where, True, slot)


def _rank(reading: Reading, mention: Mention, slot: Slot) -> tuple[bool, int]:
    """Which of two values of the fact stands for ``slot`` (the lower): one that is no label of a
    noun ("service 3", "Python 3"), then the one nearer a word of the names the code gives it to."""
    keys = slot.key_stems
    places = [w.start for w in reading.words if w.stem in keys]
    before = _LABEL.search(reading.fact[max(0, mention.start - 30) : mention.start])
    label = before is not None and before.group(1).lower() not in _CONNECTORS
    return label, min((abs(p - mention.start) for p in places), default=len(reading.fact))


_LABEL = re.compile(r"([A-Za-z]{2,})\s$")
_CONNECTORS = frozenset({
    "is", "are", "was", "be", "to", "of", "at", "as", "by", "equals", "than", "from", "with", "after", "every",
    "up", "about", "only", "just", "exactly", "its", "limit", "size", "default", "timeout", "value", "set",
})  # fmt: skip


def _stands(mention: Mention, regions: list[tuple[Slot, ...]]) -> bool:
    return any(same_value(mention, s) for slots in regions for s in slots)


def _in_file(case: Case, ev: Evidence, mention: Mention) -> bool:
    """Whether a message the fact quotes (a string of 12 characters or more) still stands somewhere in
    the cited file: moved into a constant, say, rather than changed."""
    if mention.kind is not MentionKind.STRING or len(mention.value) < 12:
        return False
    read = case.codebase.read(ev.check.path)
    return read.ok and mention.value in "\n".join(read.lines)


def _render(mention: Mention, slot_text: str) -> str:
    """The code's value written the way the fact wrote the one it replaces."""
    text = slot_text.strip()
    octal = re.fullmatch(r"(0[oO]?)([0-7]+)", mention.text.strip("`'\""))
    if octal and text.isdigit():
        return mention.text.replace(octal.group(0), octal.group(1) + format(int(text), "o"))
    if mention.kind in {MentionKind.VERSION, MentionKind.PIN} and re.search(r"[<>=!~^]", text):
        bound = lower_bound(text)
        if bound is not None:
            op = re.match(r"\s*([<>=!~^]+)", mention.value)
            text = f"{op.group(1) if op else ''}{bound}" if mention.kind is MentionKind.PIN else bound
    bare = text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`" else text
    if mention.text.startswith("`"):
        inner = mention.text[1:-1]
        quoted = len(inner) >= 2 and inner[0] in "\"'" and inner[-1] == inner[0]
        return (
            f"`{inner[0]}{bare}{inner[0]}`"
            if quoted
            else f"`{bare if mention.kind is not MentionKind.STRING else text}`"
        )
    if mention.text[:1] in {'"', "'"}:
        return f"{mention.text[0]}{bare}{mention.text[0]}"
    if mention.unit and mention.kind is MentionKind.NUMBER:
        return mention.text.replace(re.match(r"-?[\d.,_x]+|[A-Za-z]+", mention.text).group(), bare, 1)  # type: ignore[union-attr]
    return bare


def _overridden(hit: Slot, mention: Mention, case: Case) -> Slot | None:
    """A value the code now gives the same name in a cited statement where it gave none before
    (``reason = "Request Header Fields Too Large"`` added to the branch the fact is about, over the
    ``reason = "Bad Request"`` it relied on)."""
    if not hit.keys:
        return None
    for ev in case.evidence:
        then, now = _slots(ev.then), _slots(ev.now)
        for slot in now:
            if slot.keys[:1] != hit.keys[:1] or slot.kind is not hit.kind or same_value(mention, slot):
                continue
            if not any(t.keys[:1] == slot.keys[:1] and t.value == slot.value for t in then):
                return slot
    return None


def override_where(case: Case, slot: Slot) -> str:
    for ev in case.evidence:
        if slot in _slots(ev.now):
            return ev.check.where
    return case.evidence[0].check.where


def _bare(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`" else text


def _replacement(slot: Slot, ev: Evidence, now_slots: tuple[Slot, ...]) -> str | None:
    """What gives the value of ``slot`` (a value then) now: the token a change swapped it for, or
    the one value of its kind now given to its key."""
    for old, new in ev.diff[2]:
        if old.line == slot.line and old.value == slot.value and (new.kind is old.kind):
            return new.text
    same = [s for s in now_slots if s.kind is slot.kind and s.keys[:1] == slot.keys[:1] and s.keys]
    values = {s.value for s in same}
    if len(values) == 1:
        return same[0].text  # the one value its key is given now (the same one, moved: a near miss's value)
    if not ev.changed:
        return slot.text
    return None


def _verdict(case: Case, found: dict[int, _Found]) -> Verdict:
    """Contradicted, naming each value found, corrected when the code shows one value for each."""
    contradictions = tuple(
        Contradiction(_bare(_bare(f.mention.text)), _bare(f.now) if f.now is not None else None, f.where)
        for f in found.values()
    )
    corrected = None
    if all(f.now is not None for f in found.values()):
        fact = case.memory.fact
        for f in sorted(found.values(), key=lambda f: -f.mention.start):  # right to left: offsets hold
            assert f.now is not None
            fact = fact[: f.mention.start] + _render(f.mention, f.now) + fact[f.mention.end :]
        draft = case.corrected()
        corrected = None if draft is None else replace(draft, fact=fact)
    said = "; ".join(
        f"{f.where} {'never said' if f.near_miss else 'no longer says'} {f.mention.text!r}"
        + (f": it says {f.now!r}" if f.now is not None else "")
        for f in found.values()
    )
    doubt = "" if corrected is not None else "a value changed and the code shows no one value in its place"
    return Verdict(VerdictStatus.CONTRADICTED, case.checks, corrected, said, contradictions, doubt)


class Values:
    """Contradicted when a value the fact states was changed, or never was the code's."""

    name = "values"

    def decide(self, case: Case) -> Verdict | None:
        found: dict[int, _Found] = {}
        for ev in case.evidence:
            if ev.then is not None:
                self._find(case, ev, found)
        return _verdict(case, found) if found else None

    def _find(self, case: Case, ev: Evidence, found: dict[int, _Found]) -> None:
        """Into ``found``, keyed by where each stands in the fact, the values the fact states that
        one cited statement gave and a change took away, or never gave."""
        reading = case.reading
        then_slots, now_slots = _slots(ev.then), _slots(ev.now)
        scope_then, scope_now = _slots(ev.then_scope), _slots(ev.now_scope)
        mentions = [m for m in reading.mentions if m.kind in _COMPARED and not m.negated]
        mentions += _words_as_values(reading, then_slots)
        claimed = {s.index for m in mentions for s in then_slots if same_value(m, s)}
        for mention in (m for m in mentions if m.start not in found):
            conflict = self._conflict(reading, mention, then_slots)
            if conflict is not None:  # the fact gives a name a value the code never gave it
                _near_miss(found, reading, mention, conflict, ev, now_slots)
                continue
            hits = [s for s in then_slots if same_value(mention, s)]
            if hits:
                override = _overridden(hits[0], mention, case)
                if override is not None:
                    found[mention.start] = _Found(mention, override.text, override_where(case, override), False)
                    continue
                if ev.now is None or _stands(mention, [now_slots, ev.defined_slots]):
                    continue
                now = _replacement(hits[0], ev, now_slots)
                if now is None and (_stands(mention, [scope_now]) or _in_file(case, ev, mention)):
                    continue
                if now is not None and same_value(mention, Slot(hits[0].kind, now.strip("\"'`"), now, (), 0, 0)):
                    continue
                found[mention.start] = _Found(mention, now, ev.check.where, near_miss=False)
                continue
            if _stands(mention, [scope_then]) or any(
                _stands(mention, [_slots(other.then), _slots(other.then_scope)])
                for other in case.evidence
                if other is not ev
            ):
                continue
            counterpart = self._counterpart(reading, mention, then_slots, claimed)
            if counterpart is not None:
                _near_miss(found, reading, mention, counterpart, ev, now_slots)

    @staticmethod
    def _conflict(reading: Reading, mention: Mention, slots: tuple[Slot, ...]) -> Slot | None:
        """The code's value for the name the fact gives ``mention`` to, when it is another value:
        ``usecwd=True`` where ``usecwd: bool = False``; a default stated where the cited option's
        ``default=`` says another."""
        key = key_of(reading, mention, slots)
        given = [s for s in keyed(key, slots) if s.kind in _KINDS[mention.kind]] if key else []
        if not given and Cue.DEFAULT in reading.cues:
            given = [
                s for s in slots
                if s.kind in _KINDS[mention.kind] and s.keys[:1] == ("default",) and _about(s, reading, mention) == 2
            ]  # fmt: skip
        if not given or any(same_value(mention, s) for s in given) or an_input(reading, mention):
            return None
        if any(
            same_value(other, s)
            for other in reading.mentions
            if other is not mention
            and other.kind is not MentionKind.NAME
            and (key_of(reading, other, slots) in {None, key})
            for s in given
        ):
            return None  # the fact states the code's value for that name too: this one is something else
        claimed = [s for s in given if any(same_value(o, s) for o in reading.mentions if o is not mention)]
        if len(given) > 1 and len(claimed) < len(given):
            given = [s for s in given if s not in claimed]  # the values the fact states elsewhere are not this one's
        if mention.kind is MentionKind.STRING and not mention.quoted and not any(same_value(mention, s) for s in slots):
            return None  # a plain word is a value only where the code has it as one
        values = {s.value for s in given}
        return given[0] if len(values) == 1 else None

    @staticmethod
    def _counterpart(reading: Reading, mention: Mention, slots: tuple[Slot, ...], claimed: set[int]) -> Slot | None:
        """The code's value the fact's ``mention`` stands for, when the fact ties them together."""
        candidates = _candidates(mention, slots, claimed)
        if not candidates:
            return None
        key = mention.key or key_of(reading, mention)
        if key is not None:
            keyed = [
                s
                for s in candidates
                if any(k.lstrip("-").split(".")[-1] == key.lstrip("-").split(".")[-1] for k in s.keys[:1])
            ]
            if keyed:
                return keyed[0]
        if Cue.DEFAULT in reading.cues:
            defaults = [s for s in candidates if s.keys[:1] == ("default",) and _about(s, reading, mention) >= 1]
            if len(defaults) == 1:
                return defaults[0]
        scored = sorted(((_about(s, reading, mention), -s.index, s) for s in candidates), key=lambda x: (x[0], x[1]))
        best = [s for score, _, s in scored if score == 2]
        if len(best) == 1:
            return best[0]
        if mention.kind is MentionKind.STRING and mention.quoted:  # one string of the code all but the fact's
            close = [s for s in candidates if SequenceMatcher(None, mention.value, s.value).ratio() >= 0.75]
            if len(close) == 1:
                return close[0]
        return None
