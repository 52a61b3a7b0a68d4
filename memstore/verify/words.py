"""Words of prose and code, compared: stemmed, identifiers split, programming's synonyms joined,
and the stretches of a sentence a negation governs. What a fact and the code it cites must share
to be about the same thing is read here, the same way on both sides."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["STOP", "looks_like_code", "negated_spans", "stem", "word_stems"]

STOP = frozenset(
    """
    a an and are as at be been being but by can could do does did for from has have had how if in
    into is it its itself may might must not of on or should so than that the their them then there
    these this those to was were when where which while who whom will would with you your all any
    each every one also only just its it's i.e e.g etc via per like unlike same such other others
    both either neither nor no yes out up down over under about after before again once here more
    most some very own we our us they he she his her what why use used uses using set sets
    """.split()  # noqa: SIM905 (a word list reads best as words)
)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


# Words of programming that people and code spell differently: one concept each, so that "no
# exception handling" meets ``except``, "the environment" meets ``environ``, "throws" meets ``raise``.
_CONCEPTS = {
    "exception": "except", "exceptions": "except", "catch": "except", "catches": "except", "caught": "except",
    "environment": "environ", "env": "environ", "getenv": "environ",
    "throw": "raise", "throws": "raise", "thrown": "raise", "raises": "raise", "raised": "raise",
    "memoize": "cache", "memoized": "cache", "memoise": "cache", "memoised": "cache", "cached": "cache",
    "argument": "arg", "arguments": "arg", "args": "arg", "parameter": "param", "parameters": "param",
    "params": "param", "dictionary": "dict", "directory": "dir", "configuration": "config",
}  # fmt: skip


def stem(word: str) -> str:
    """A light stemmer, so "sorting", "sorted" and "sorts" meet, and "retries" meets "retry"; words
    of programming spelled two ways meet as one (`_CONCEPTS`)."""
    word = word.lower()
    if word in _CONCEPTS:
        return _CONCEPTS[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed", "er"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # "stopped" -> "stop"
            return word
    return word


def word_stems(text: str) -> list[tuple[str, int]]:
    """`_word_stems`, kept for the texts code and facts repeat (a name, a string)."""
    return list(_word_stems(text)) if len(text) > 200 else list(_cached_stems(text))


@lru_cache(maxsize=65536)
def _cached_stems(text: str) -> tuple[tuple[str, int], ...]:
    return tuple(_word_stems(text))


def _word_stems(text: str) -> list[tuple[str, int]]:
    """The content words of a text (identifiers split at case changes and underscores), stemmed,
    with the offset of the identifier each comes from."""
    found: list[tuple[str, int]] = []
    for match in _WORD.finditer(text):
        token = match.group()
        parts = [p for piece in token.split("_") for p in _CAMEL.findall(piece)]
        for part in {token, *parts} if len(parts) > 1 else {token}:
            low = part.lower()
            if len(low) >= 2 and low not in STOP and not low.isdigit():
                found.append((stem(low), match.start()))
    return found


_NEGATOR = re.compile(
    r"(?i)\b(?:no|not|never|without|nothing|none|neither|nor|cannot|lacks?|absent|instead of|rather than"
    r"|unlike|nowhere|no longer|isn't|aren't|doesn't|don't|didn't|won't|can't|hasn't|haven't|wasn't)\b|n't\b"
)
_QUOTED_TEXT = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"")
_CONDITION = re.compile(r"(?i)\b(?:if|when|whenever|unless|where|while|once|until|in case)\b")
# A clause ends at a stop, a comma or a bracket of prose, never at the dot of a dotted name or the
# brackets of a call (``never compared with os.getuid()``).
_SCOPE_END = re.compile(r"[.;:!?](?=\s|$|['\"`])|\s\(|\)(?=\s|$|[,.;:])|,\s|\bbut\b|\bwhile\b|\bwhereas\b|\bso\b|--|—")


def negated_spans(fact: str) -> list[tuple[int, int]]:
    """The spans of a fact that a negation governs ("no `encoding` parameter": from "no" to the
    end of its clause)."""
    spans = []
    quoted = [m.span() for m in _QUOTED_TEXT.finditer(fact)]
    for match in _NEGATOR.finditer(fact):
        if match.group() == "None" or any(a <= match.start() < b for a, b in quoted):
            continue  # ``None``, or a word inside code or quotes: a value, not a negation
        clause = re.split(r"[.;:!?]|,\s|--|—", fact[: match.start()])[-1]
        if _CONDITION.search(clause):
            continue  # "when no callback is set": a condition, not a claim that there is none
        end = _SCOPE_END.search(fact, match.end())
        spans.append((match.start(), end.start() if end else len(fact)))
    return spans


_ENGLISH_CODE = frozenset({"e.g", "i.e", "etc", "vs"})


def looks_like_code(word: str) -> bool:
    """snake_case, camelCase, dotted.names, paths and files, CONSTANTS, ``--options``, calls:
    not plain English words."""
    core = word.removesuffix("()")
    if word.startswith("-"):
        return len(core.strip("-")) >= 1
    if core.lower() in _ENGLISH_CODE:
        return False
    if re.search(r"[./]", core):
        parts = re.split(r"[./]", core)
        return all(len(p) >= 1 for p in parts) and len(core) >= 4 and not core.replace(".", "").isdigit()
    return (
        word.endswith("()")
        or "_" in core.strip("_")
        or core.startswith("__")
        or bool(re.search(r"[a-z][A-Z]", core))
        or (core.isupper() and len(core) >= 2 and not core.isdigit())
        or "$" in core
    )
