"""The name a fact gives a value: ``usecwd=True``, "usecwd defaults to True", "the default for
parseAll is False", "multiplier 2", "exits with 3 (APP_LOAD_ERROR)"; and whether the fact names the
value as one to give the code ("pass `exc_info=True`") rather than as what the code says."""

from __future__ import annotations

import re

from memstore.verify.mentions import Mention
from memstore.verify.reading import Reading
from memstore.verify.slots import Slot
from memstore.verify.words import looks_like_code

__all__ = ["an_input", "bare_key", "key_of", "keyed"]


def key_of(reading: Reading, mention: Mention, slots: tuple[Slot, ...] = ()) -> str | None:
    """The name the fact gives a value to: outright (``usecwd=True``, ``usecwd defaults to True``,
    ``decode('latin-1')``, ``max-line-length = 100``), or the name of the cited code's keys that
    stands nearest the value ("multiplier 2", "exits with 3 (APP_LOAD_ERROR)"). A plain word of the
    fact is a key only where the code has a key of that name."""
    if mention.key:
        return mention.key
    derived = not any(m.start == mention.start and m.end == mention.end for m in reading.mentions)
    before = reading.fact[max(0, mention.start - 60) : mention.start]
    match = re.search(
        r"([A-Za-z_][\w.-]*)`?\s*(?:=|:|\(|is|to|as|of|equals|defaults to|is set to|set to|defaulting to"
        r"|starts(?: out)?"
        r"|default(?:s)?\s*(?:value)?\s*(?:is|of)?)\s*`?['\"]?$",
        before,
    )
    named = {n.value.lstrip("-") for n in reading.names}
    if match is not None:
        name = match.group(1)
        if keyed(name, slots) or (
            (name.lstrip("-") in named or looks_like_code(name)) and not _defaults_phrase(reading)
        ):
            return name
    phrase = _defaults_phrase(reading)
    if phrase is not None and keyed(phrase, slots):
        return phrase  # "the default for parseAll in ParserElement.matches is False"
    return None if derived else _nearest_key(reading, mention, slots)


_DEFAULT_FOR = re.compile(
    r"(?i)\bdefault(?:s| value)?\s+(?:for|of)\s+`?([A-Za-z_][\w-]*)`?"
    r"|\bwithout\s+(?:a |an |the |its )?`?([A-Za-z_][\w-]*)`?"
    r"|`?([A-Za-z_][\w-]*)`?\s+(?:falls back|defaults)\s+to\b"
)


def _defaults_phrase(reading: Reading) -> str | None:
    """The parameter a fact says the default of in words: "the default for X", "called without X",
    "X falls back to"."""
    match = _DEFAULT_FOR.search(reading.fact)
    return next((g for g in match.groups() if g), None) if match else None


def _nearest_key(reading: Reading, mention: Mention, slots: tuple[Slot, ...]) -> str | None:
    """A key of the cited code that the fact names right before the value ("multiplier 2",
    "max-line-length of 100") or in brackets right after it ("exits with 3 (APP_LOAD_ERROR)")."""
    keys = {bare_key(k): k for slot in slots for k in slot.keys[:1]}
    if not keys:
        return None
    fact = reading.fact
    before = re.search(
        r"`?([A-Za-z_][\w.-]*)`?\s*(?:(?:is|of|at|to|are|equals|defaults? to|set to)\s+)?[=:(]?\s*[`'\"]?$",
        fact[max(0, mention.start - 40) : mention.start],
    )
    if before is not None and bare_key(before.group(1)) in keys:
        return keys[bare_key(before.group(1))]
    after = re.match(r"[`'\"]?\s*\(\s*`?([A-Za-z_][\w.-]*)`?\s*\)", fact[mention.end : mention.end + 40])
    if after is not None and bare_key(after.group(1)) in keys:
        return keys[bare_key(after.group(1))]
    return None


_INPUT = re.compile(
    r"(?i)\b(?:pass(?:ing)?|set(?:ting)?|call(?:ing)? (?:it )?with|use|using|override|assign(?:ing)?|give|giving"
    r"|to (?:disable|enable|turn (?:it )?(?:off|on))|if you want|you can)\b[^.;:]{0,40}$"
)


def an_input(reading: Reading, mention: Mention) -> bool:
    """Whether the fact names the value as one to give the code ("pass `exc_info=True`", "unless you
    pass bytes=False"), not as what the code says."""
    return _INPUT.search(reading.fact[max(0, mention.start - 50) : mention.start]) is not None


def keyed(key: str, slots: tuple[Slot, ...]) -> list[Slot]:
    """The slots given to ``key`` (by its last dotted part: ``GracefulTimeout.default`` is ``default``)."""
    want = bare_key(key)
    return [s for s in slots if s.keys and bare_key(s.keys[0]) == want]


def bare_key(key: str) -> str:
    """A key as compared: its last dotted part, without leading dashes or underscores, lower case."""
    return key.split(".")[-1].lstrip("-_").replace("-", "_").lower()
