"""Whether a value a fact states is the value the code gives (`memstore.verify.slots`): ``30
seconds`` is ``30``, or ``30000`` in milliseconds; ``True`` is ``true``; ``>= 3.8`` is ``>=3.8``; a
message with placeholders is the code's format string (``Worker N booted`` and ``Worker %s booted``).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from difflib import SequenceMatcher

from memstore.verify.mentions import Mention, MentionKind
from memstore.verify.slots import FLAGS, Slot

__all__ = ["same_string", "same_value", "similar_string"]


_SECONDS = {"ms": Decimal("0.001"), "s": Decimal(1), "min": Decimal(60), "h": Decimal(3600), "day": Decimal(86400),
            "week": Decimal(604800)}  # fmt: skip
_BYTES = {"byte": 1, "KB": 1000, "KiB": 1024, "MB": 1000**2, "MiB": 1024**2, "GB": 1000**3, "GiB": 1024**3}


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except (InvalidOperation, ValueError):
        return None


def same_value(mention: Mention, slot: Slot) -> bool:
    """Whether the value a fact states is the value the code gives (units and spellings aside)."""
    kind, value = mention.kind, mention.value
    if kind is MentionKind.NUMBER and slot.kind is MentionKind.NUMBER:
        if value == slot.value:
            return True
        stated, code = _number(value), _number(slot.value)
        if stated is None or code is None:
            return False
        if mention.unit in _SECONDS:
            seconds = stated * _SECONDS[mention.unit]
            return code in {seconds, seconds * 1000}  # the code counts seconds or milliseconds
        if mention.unit in _BYTES:
            return code == stated * _BYTES[mention.unit]
        return False
    if kind is MentionKind.NUMBER and slot.kind is MentionKind.STRING:
        return slot.value.strip() == value
    if kind is MentionKind.FLAG:
        return (slot.kind is MentionKind.FLAG and slot.value == value) or (
            slot.kind is MentionKind.STRING and FLAGS.get(slot.value.strip()) == value
        )
    if kind is MentionKind.VERSION:
        if slot.kind is MentionKind.PIN:
            return any(v.lstrip("v") == value for v in re.findall(r"v?\d[\w.*+-]*", slot.value))
        return slot.kind in {MentionKind.VERSION, MentionKind.NUMBER, MentionKind.STRING} and (
            slot.value.strip().removeprefix("v") == value or slot.value == value
        )
    if kind is MentionKind.PIN:
        if slot.kind not in {MentionKind.PIN, MentionKind.STRING}:
            return False
        pin, spec = re.sub(r"\s+", "", value), re.sub(r"\s+", "", slot.value)
        return pin == spec or (slot.kind is MentionKind.PIN and pin in spec.split(","))
    if kind is MentionKind.URL:
        return slot.kind in {MentionKind.URL, MentionKind.STRING} and slot.value.rstrip("/") == value.rstrip("/")
    if kind is MentionKind.STRING:
        if slot.kind is MentionKind.NUMBER:
            return value.strip() == slot.value
        if slot.kind is MentionKind.FLAG:
            return FLAGS.get(value.strip()) == slot.value
        return same_string(value, slot.value)
    return False


_PLACEHOLDER = re.compile(
    r"%[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEcaA%]|\{[^{}]{0,40}\}|\$\{[^{}]{0,40}\}|<[^<>\s]{1,30}>|\.\.\.|…"
    r"|\b[A-Z][A-Z_]{1,}\b|\bX\b|\bN\b"
)


_STRICT_PLACEHOLDER = re.compile(
    r"%[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEcaA%]|\{[^{}]{0,40}\}|\$\{[^{}]{0,40}\}|<[^<>\s]{1,30}>|\.\.\.|…"
)


def _chunks(text: str, strict: bool = False) -> list[str]:
    """The fixed parts of a message template, placeholders (``%s``, ``{name}``, ``${x}``, ``<key>``,
    ``...``; unless ``strict``, also a word in capitals: ``NAME``) taken out."""
    pattern = _STRICT_PLACEHOLDER if strict else _PLACEHOLDER
    return [c.strip() for c in pattern.split(text) if c.strip()]


def same_string(stated: str, code: str) -> bool:
    """Whether a string a fact quotes is the code's string: equal, a part of it (a message quoted in
    part), or the same template with other placeholders ("Unknown quote_mode: <mode>" of
    ``f"Unknown quote_mode: {quote_mode}"``). A list of items (``a,b,c``) must be equal."""
    stated_s, code_s = stated.strip(), code.strip()
    if stated_s == code_s:
        return True
    if not stated_s:
        return False
    listing = "," in stated_s and " " not in stated_s
    if listing:
        return False
    if len(stated_s) >= 4 and stated_s in code_s:
        return True
    for strict in (True, False):
        if _in_order(_chunks(stated_s, strict), code_s) or _in_order(_chunks(code_s, strict), stated_s):
            return True
    return False


def _in_order(parts: list[str], text: str) -> bool:
    """Whether the fixed parts of one template stand in the other string, in order."""
    if not parts or sum(len(p) for p in parts) < 4:
        return False
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0 and len(part) >= 20:  # a long message may differ in the case of a letter
            found = text.lower().find(part.lower(), at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def similar_string(stated: str, code: str) -> bool:
    """Whether two strings are near enough to be one misremembered as the other ("Starting
    directory not found" and "Starting path not found")."""
    a, b = stated.strip().lower(), code.strip().lower()
    if not a or not b:
        return False
    return SequenceMatcher(None, a, b).ratio() >= 0.6
