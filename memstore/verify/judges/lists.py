"""The judge of what a fact lists, against the collection the cited code holds (`memstore.verify.lists`).

A fact that writes out a list is paired with the collection of the cited code (as it was when the
memory was written) that holds most of its items. It is contradicted when

- it names an item the collection does not hold (a signal the code never forwarded);
- it says the list is complete ("only", "exactly", "the six names", a count) and the collection
  holds an item it leaves out, or its count is not the collection's size;
- a change since took an item it names out of the collection, or added one to a list it says is
  complete;
- it gives an order ("first", "then", "->") the collection does not have.

The correction writes the collection's items now in the fact's place (and its size where the fact
gave a count).
"""

from __future__ import annotations

import re
from dataclasses import replace

from memstore.verify.evidence import Evidence, Region
from memstore.verify.judges.case import Case
from memstore.verify.lists import Collection, Enumeration, collections_of, enumerations_of, normal, parameter_lists
from memstore.verify.reading import Cue, Reading
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus

__all__ = ["Lists"]

_NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                 "nineteen", "twenty"]  # fmt: skip
_COUNT = re.compile(
    r"(?i)\b(?P<n>\d{1,3}|" + "|".join(_NUMBER_WORDS[2:]) + r")\b\s+(?:[\w-]+\s+){0,3}?"
    r"(?:items|entries|names|elements|members|values|arguments|parameters|options|flags|keys|fields|paths|projects"
    r"|versions|steps|lines|rules|commands|sequences|escapes|characters|environments|envs|files|modules|classes"
    r"|functions|methods|hooks|signals|colou?rs|levels|extensions|links|formats|strategies|workers|metrics|tables"
    r"|dictionaries|exports|choices|events|targets|components|keywords|codes|aliases|handlers|dependencies|extras)\b"
)


_NOTHING = frozenset({"none", "null", "nil", "undefined"})  # "or unset": not an item a list leaves out
_COMPLETE = re.compile(
    r"(?i)\b(?:exactly|only|nothing else|no others?|and no more|all of|the (?:full|whole|complete) (?:list|set)|"
    r"these \w+ (?:alone|only))\b"
)


def _count_of(reading: Reading) -> tuple[int, int, int] | None:
    """The number a fact gives of the things it lists, and where it stands: (n, start, end)."""
    match = _COUNT.search(reading.fact)
    if match is None:
        return None
    text = match.group("n").lower()
    n = int(text) if text.isdigit() else _NUMBER_WORDS.index(text)
    return n, match.start("n"), match.end("n")


def _collections(region: Region | None, section: Region | None) -> list[Collection]:
    found = collections_of(region.tokens, region.lines, region.language) if region is not None else []
    if section is not None:
        found += collections_of(section.tokens, section.lines, section.language)
    return found


def _paired(items: tuple[str, ...], collections: list[Collection], least: int = 2) -> Collection | None:
    """The collection that holds most of the items (at least ``least``, and most of them)."""
    wanted = [normal(i) for i in items]
    best: tuple[int, Collection] | None = None
    for c in collections:
        members = {normal(m) for m in c.members}
        shared = sum(1 for w in wanted if w in members)
        if shared >= least and 2 * shared >= len(wanted) and (best is None or shared > best[0]):
            best = (shared, c)
    return best[1] if best else None


class Lists:
    """Contradicted when what the fact lists is not what the cited collection holds."""

    name = "lists"

    def decide(self, case: Case) -> Verdict | None:
        reading = case.reading
        signatures = parameter_lists(reading)
        inside = [(e.start, e.end) for e in signatures]
        enumerations = signatures + [
            e for e in enumerations_of(reading) if not any(a <= e.start < b for a, b in inside)
        ]
        count = _count_of(reading)
        complete = _COMPLETE.search(reading.fact) is not None or count is not None
        for ev in case.evidence:
            then = _collections(ev.then, ev.then_section)
            now = _collections(ev.now, ev.now_section)
            unchanged = not ev.changed and (
                ev.then_section is None or ev.now_section is None or ev.then_section.text == ev.now_section.text
            )
            paired = False
            for enumeration in enumerations:
                least = 1 if enumeration.parameters else 2
                candidates = [_without_self(c) for c in then if _written_of(enumeration, c)]
                collection = _paired(_without_self_items(enumeration), candidates, least)
                if collection is None:
                    continue
                paired = True
                found = _judge(enumeration, collection, [] if unchanged else now, complete, count, reading)
                if found is not None:
                    return self._verdict(case, ev, enumeration, collection, now, count, found)
            if count is not None and not paired and not enumerations:
                verdict = self._counted(case, ev, then, [] if unchanged else now, count)
                if verdict is not None:
                    return verdict
        return None

    @staticmethod
    def _counted(
        case: Case, ev: Evidence, then: list[Collection], now: list[Collection], count: tuple[int, int, int]
    ) -> Verdict | None:
        """A count the fact gives of the one collection the cited code holds: its size then and now."""
        named = {normal(n.value) for n in case.reading.names}
        sizable = [c for c in then if len(c.members) >= 2 and c.key and normal(c.key) in named]
        if len(sizable) != 1:
            return None  # a count is of the collection the fact names, or of none the judge can tell
        collection = sizable[0]
        current = _paired(collection.members, now) if now else collection
        size = (
            len(collection.members)
            if count[0] != len(collection.members)
            else (len(current.members) if current is not None else count[0])
        )
        if size == count[0]:
            return None
        number = case.memory.fact[count[1] : count[2]]
        said = str(size) if number.isdigit() or size >= len(_NUMBER_WORDS) else _NUMBER_WORDS[size]
        draft = case.corrected()
        corrected = (
            None
            if draft is None
            else replace(draft, fact=case.memory.fact[: count[1]] + said + case.memory.fact[count[2] :])
        )
        reason = f"{ev.check.where}: the collection holds {size} items, not {count[0]}"
        return Verdict(VerdictStatus.CONTRADICTED, case.checks, corrected, reason,
                       (Contradiction(number, said, ev.check.where),))  # fmt: skip

    @staticmethod
    def _verdict(
        case: Case,
        ev: Evidence,
        enumeration: Enumeration,
        then: Collection,
        now: list[Collection],
        count: tuple[int, int, int] | None,
        reason: str,
    ) -> Verdict:
        current = _paired(then.members, now) if ev.now is not None else None
        corrected = None
        if current is not None:
            fact = case.memory.fact
            written = _written(enumeration, current.members)
            edits = [(enumeration.start, enumeration.end, written)]
            if count is not None and not (enumeration.start <= count[1] < enumeration.end):
                number = fact[count[1] : count[2]]
                size = len(current.members)
                said = str(size) if number.isdigit() or size >= len(_NUMBER_WORDS) else _NUMBER_WORDS[size]
                edits.append((count[1], count[2], said))
            for start, end, text in sorted(edits, reverse=True):
                fact = fact[:start] + text + fact[end:]
            draft = case.corrected()
            corrected = None if draft is None else replace(draft, fact=fact)
        contradiction = Contradiction(
            case.memory.fact[enumeration.start : enumeration.end],
            ", ".join(current.members) if current is not None else None,
            ev.check.where,
        )
        doubt = "" if corrected is not None else "a list whose items now the code does not show in one place"
        return Verdict(VerdictStatus.CONTRADICTED, case.checks, corrected, f"{ev.check.where}: {reason}",
                       (contradiction,), doubt)  # fmt: skip


def _judge(
    enumeration: Enumeration,
    then: Collection,
    now: list[Collection],
    complete: bool,
    count: tuple[int, int, int] | None,
    reading: Reading,
) -> str | None:
    """Why the list the fact writes is not the collection's, or None when it is."""
    listed = [normal(i) for i in _without_self_items(enumeration)]
    members = [normal(m) for m in then.members]
    if enumeration.parameters:
        now = [_without_self(c) for c in now]
        # A signature written out whole (its optional parameters too, or "only", "exactly") is the
        # whole list; one written with its required parameters alone, or a call's arguments, is some.
        optional = {normal(m) for m in then.optional}
        complete = then.definition and (complete or optional <= set(listed))
        if then.definition and not complete:
            members = [m for m in members if m not in optional]
            then = replace(then, members=tuple(m for m in then.members if normal(m) not in optional))
    extra = [
        i for i, n in zip(_without_self_items(enumeration), listed, strict=True)
        if n not in members and not any(n in m or m in n for m in members)  # "path" of ``dotenv_path``
    ]  # fmt: skip
    if extra and len(extra) == 1 and len(listed) - 1 >= 2 and _shaped_like(extra[0], then.members):
        return f"it never held {extra[0]}"
    left_out = [
        m for m, n in zip(then.members, members, strict=True)
        if n not in listed and n not in _NOTHING and not any(i in n for i in listed)
    ]  # fmt: skip
    whole = enumeration.closed and len(listed) >= 0.75 * len(members) and len(left_out) == 1
    if (complete or whole) and left_out and not extra:
        return f"it also held {', '.join(left_out)}, which the fact leaves out"
    if count is not None and count[0] != len(then.members) and not extra and not left_out:
        return f"it held {len(then.members)} items, not {count[0]}"
    if Cue.ORDER in reading.cues and not extra:
        order = [n for n in members if n in listed]
        stated = [n for n in listed if n in members]
        if order != stated:
            return f"its order is {', '.join(m for m in then.members if normal(m) in listed)}"
    current = _paired(then.members, now)
    if current is None:
        return None
    held = [normal(m) for m in current.members]
    gone = [i for i, n in zip(_without_self_items(enumeration), listed, strict=True) if n not in held]
    if gone:
        return f"it no longer holds {', '.join(gone)}"
    added = [m for m in current.members if normal(m) not in members]
    if complete and added:
        return f"it now also holds {', '.join(added)}"
    return None


def _without_self(collection: Collection) -> Collection:
    if not collection.definition:
        return collection
    members = tuple(m for m in collection.members if m not in {"self", "cls"})
    return replace(collection, members=members)


def _without_self_items(enumeration: Enumeration) -> tuple[str, ...]:
    if not enumeration.parameters:
        return enumeration.items
    return tuple(i for i in enumeration.items if i not in {"self", "cls"})


def _written_of(enumeration: Enumeration, collection: Collection) -> bool:
    """Whether a collection of code can be what the fact writes: any, for a list; for parameters,
    the definition or call of the name the fact writes them after (a class's constructor for the
    class), or any definition where the fact names none."""
    if not enumeration.parameters:
        return True
    if not enumeration.callee:
        return collection.definition
    callee = enumeration.callee.rsplit(".", 1)[-1]
    return collection.opener == callee or (
        callee[:1].isupper() and collection.opener in {"__init__", "constructor"} and collection.definition
    )


def _shaped_like(item: str, members: tuple[str, ...]) -> bool:
    """Whether an item the collection lacks looks like its members (all capitals among capitals,
    lower case among lower case, a dotted name among dotted names): a member misremembered, not a
    word of the prose the list ran into."""
    core = item.strip("`'\"").removesuffix("()")

    def shape(text: str) -> tuple[bool, bool, bool]:
        return (text.isupper(), text.islower(), "." in text)

    shapes = {shape(m) for m in members}
    return shape(core) in shapes


def _written(enumeration: Enumeration, members: tuple[str, ...]) -> str:
    """The members written as the fact wrote its list (quoted or not, joined with "and")."""
    sample = enumeration.items[0]
    quote = sample[0] if sample[:1] in {"`", "'", '"'} and sample[-1:] == sample[:1] else ""
    written = [f"{quote}{m}{quote}" for m in members]
    if enumeration.parameters:
        return ", ".join(written)
    if len(written) == 1:
        return written[0]
    return ", ".join(written[:-1]) + " and " + written[-1]
