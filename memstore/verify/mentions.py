"""The names and values a fact states, found in free text (see `memstore.verify.reading`): each name
of code and each value, with where it stands in the fact, so that a correction replaces exactly the
text that stated it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any

from memstore.verify.tokens import Language, TokenKind, number_value, tokenize
from memstore.verify.words import looks_like_code, negated_spans

__all__ = ["COUNT_NOUN", "Mention", "MentionKind", "find_mentions"]


class MentionKind(StrEnum):
    NAME = "name"  # a name of code: a function, a class, a constant, a key, an option, a file
    NUMBER = "number"
    STRING = "string"  # a quoted string, or a word the fact quotes
    FLAG = "flag"  # True, False, None (and their spellings in other languages)
    VERSION = "version"  # 1.2.3, v2.1
    PIN = "pin"  # a version requirement: >=3.8, ~=1.2, ^4.0.0, <3
    URL = "url"
    CODE = "code"  # a code span that is an expression: a call, a list, an assignment


@dataclass(frozen=True, slots=True)
class Mention:
    """One name or value in the fact.

    Attributes:
        kind: what it is.
        text: the fact's text that states it (what a correction replaces).
        value: its comparable form: a number in canonical form, a string's text, a name as written
            (without backticks or a trailing ``()``), a flag as ``True``/``False``/``None``.
        start, end: where ``text`` stands in the fact.
        unit: a number's unit, canonical (``s``, ``ms``, ``min``, ``h``, ``day``, ``byte``,
            ``KiB``...), or "".
        negated: the fact says the code does not have it ("no `encoding` parameter").
        quoted: it stands in backticks or quotes (the writer marked it as code or a literal).
        key: for a value inside a code span, the name the span gives it (``default`` in
            ```default = 4096```), else "".
    """

    kind: MentionKind
    text: str
    value: str
    start: int
    end: int
    unit: str = ""
    negated: bool = False
    quoted: bool = False
    key: str = ""


_CODE_SPAN = re.compile(r"`([^`\n]{1,300})`")
_QUOTE = re.compile(r"(?<![\w\\])\"([^\"\n]{1,300})\"|(?<![\w\\])'([^'\n]{1,300})'(?![\w])")
_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s`'\"<>()\[\]]+")
_PIN = re.compile(
    r"(?:===|==|>=|<=|~=|!=|\^|~|>|<)\s?v?\d+(?:\.[\dx*]+)*(?:[-+.]?[a-z]+\d*)?(?:\s*,\s*(?:===|==|>=|<=|~=|!=|>|<)\s?\d+(?:\.[\dx*]+)*)*"
)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:[-+.]?(?:a|b|rc|dev|post|alpha|beta)\.?\d*)?(?![\w]|\.\d)")
_NUMBER = re.compile(
    r"(?<![\w.])-?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|\d{1,3}(?:,\d{3})+(?![\d])|\d[\d_]*(?:\.\d+)?)(?:[eE][+-]?\d+)?(?![\w]|\.\d)"
)
_NUMBER_UNIT = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(ms|s|sec|secs|min|mins|h|hrs?|KiB|MiB|GiB|KB|MB|GB|kB|B|b|x)\b"
)
_NAME = re.compile(
    r"(?<![\w$./-])(?:--?[A-Za-z][\w-]*|[A-Za-z_$][\w$]*(?:[./][A-Za-z_$][\w$-]*)*(?:\(\)|(?==[^=\s]|=\s|=$))?)"
)
_FLAGS = {"true": "True", "false": "False", "none": "None", "null": "None", "nil": "None", "undefined": "None"}
_UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "day": "day", "days": "day", "week": "week", "weeks": "week",
    "byte": "byte", "bytes": "byte", "b": "byte",
    "kb": "KB", "kib": "KiB", "kilobyte": "KB", "kilobytes": "KB",
    "mb": "MB", "mib": "MiB", "megabyte": "MB", "megabytes": "MB",
    "gb": "GB", "gib": "GiB", "x": "x", "times": "x",
}  # fmt: skip
_UNIT_AFTER = re.compile(r"\s?([A-Za-z]+)\b")
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "thousand": 1000, "once": 1, "twice": 2, "thrice": 3,
}  # fmt: skip
_WORD_OF_NUMBER = "(?:" + "|".join(w for w in _NUMBER_WORDS if w not in {"once", "twice", "thrice"}) + ")"
# A number in words, one word or several ("eight thousand", "two hundred and fifty", "forty-two").
_NUMBER_WORD = re.compile(rf"(?i)\b(?:once|twice|thrice|{_WORD_OF_NUMBER}(?:(?:[\s-]+|\s+and\s+){_WORD_OF_NUMBER})*)\b")
_ADVERBS = frozenset({"once", "twice", "thrice"})
# The nouns a number counts ("six times", "8 projects"): a number word before one is a number.
COUNT_NOUN = re.compile(
    r"(?i)^\s*(?:[a-z-]+\s+){0,2}?(?:times|entries|items|names|elements|members|values|arguments|parameters|params"
    r"|options|flags|keys|fields|paths|projects|versions|steps|lines|rules|commands|sequences|escapes|characters"
    r"|environments|envs|files|modules|classes|functions|methods|hooks|retries|attempts|links|dependencies|extras"
    r"|targets)\b"
)
_SWITCHES = {"on": "True", "off": "False", "enabled": "True", "disabled": "False"}
_SWITCH = re.compile(
    r"(?i)\b(?:defaults? to|is|are|starts?(?: out)?|turned|set to|switched)\s+(?P<a>on|off|enabled|disabled)\b"
    r"|\b(?P<b>on|off|enabled|disabled) by default\b"
)


def _in_words(text: str) -> int:
    """The number a run of number words says: "eight thousand" 8000, "two hundred and fifty" 250."""
    total = current = 0
    for word in re.findall(r"[a-z]+", text.lower()):
        value = _NUMBER_WORDS.get(word)
        if value is None:
            continue  # "and"
        if value == 1000:
            total, current = total + max(current, 1) * 1000, 0
        elif value == 100:
            current = max(current, 1) * 100
        else:
            current += value
    return total + current


def _literal_kind(inner: str) -> tuple[MentionKind, str] | None:
    """The kind and comparable value of a code span or quoted text that is a single literal."""
    text = inner.strip()
    if not text:
        return None
    if text.lower() in _FLAGS:
        return MentionKind.FLAG, _FLAGS[text.lower()]
    if _URL.fullmatch(text):
        return MentionKind.URL, text
    if _PIN.fullmatch(text):
        return MentionKind.PIN, " ".join(text.split())
    if _VERSION.fullmatch(text):
        return MentionKind.VERSION, text.removeprefix("v")
    if re.fullmatch(r"-?(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)", text):
        return MentionKind.NUMBER, number_value(text.lstrip("-")) if not text.startswith("-") else "-" + number_value(
            text[1:]
        )
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return MentionKind.STRING, text[1:-1]
    return None


@lru_cache(maxsize=16384)
def find_mentions(fact: str) -> tuple[Mention, ...]:
    """The names and values of a fact, in the order they stand, each marked negated when a negation
    governs it."""
    finder = _Finder(fact)
    finder.code_spans()
    finder.urls()
    finder.quotes()
    finder.numbers()
    finder.names()
    negated = negated_spans(fact)
    return tuple(
        replace(m, negated=any(a <= m.start < b for a, b in negated))
        for m in sorted(finder.mentions, key=lambda m: (m.start, m.end))
    )


class _Finder:
    """One pass over a fact per kind of mention, the more specific first: a text that one pass takes
    (a code span, a URL, a quote, a version) no later pass reads again."""

    def __init__(self, fact: str) -> None:
        self.fact = fact
        self.mentions: list[Mention] = []
        self.taken: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.taken)

    def take(self, kind: MentionKind, text: str, value: str, start: int, **more: Any) -> None:
        self.taken.append((start, start + len(text)))
        self.mentions.append(Mention(kind, text, value, start, start + len(text), **more))

    def code_spans(self) -> None:
        for match in _CODE_SPAN.finditer(self.fact):
            inner, start = match.group(1), match.start()
            literal = _literal_kind(inner)
            if literal is not None:
                unit = _unit_after(self.fact, match.end())
                self.take(literal[0], match.group(), literal[1], start, quoted=True, unit=unit)
            elif re.fullmatch(r"--?[\w-]+|[A-Za-z_$][\w$]*(?:[./:][A-Za-z_$][\w$-]*)*(?:\(\))?", inner.strip()):
                self.take(MentionKind.NAME, match.group(), inner.strip().removesuffix("()"), start, quoted=True)
            else:
                self.take(MentionKind.CODE, match.group(), inner.strip(), start, quoted=True)
                for kind, text, value, at, key in _span_values(inner):  # the values inside a code span
                    end = start + 1 + at + len(text)
                    self.mentions.append(Mention(kind, text, value, start + 1 + at, end, quoted=True, key=key))

    def urls(self) -> None:
        for match in _URL.finditer(self.fact):
            url = match.group().rstrip(".,;:")
            if self.free(match.start(), match.start() + len(url)):
                self.take(MentionKind.URL, url, url, match.start())

    def quotes(self) -> None:
        for match in _QUOTE.finditer(self.fact):
            if self.free(match.start(), match.end()):
                value = match.group(1) if match.group(1) is not None else match.group(2)
                literal = _literal_kind(value)
                kind, comparable = (
                    literal if literal and literal[0] is not MentionKind.STRING else (MentionKind.STRING, value)
                )
                self.take(kind, match.group(), comparable, match.start(), quoted=True)

    def numbers(self) -> None:
        fact = self.fact
        for match in _PIN.finditer(fact):
            if self.free(match.start(), match.end()):
                self.take(MentionKind.PIN, match.group(), " ".join(match.group().split()), match.start())
        for match in _VERSION.finditer(fact):
            if self.free(match.start(), match.end()):
                self.take(MentionKind.VERSION, match.group(), match.group().removeprefix("v"), match.start())
        for match in _NUMBER_UNIT.finditer(fact):
            if self.free(match.start(), match.end()):
                unit = _UNITS.get(match.group(2).lower(), match.group(2))
                self.take(MentionKind.NUMBER, match.group(), number_value(match.group(1)), match.start(), unit=unit)
        for match in _NUMBER.finditer(fact):
            if self.free(match.start(), match.end()):
                raw = match.group().replace(",", "")
                if re.fullmatch(r"0\d+", raw) and set(raw) <= set("01234567"):
                    raw = "0o" + raw[1:]  # 0640: a file mode, octal
                unit = _unit_after(fact, match.end())
                self.take(MentionKind.NUMBER, match.group(), number_value(raw), match.start(), unit=unit)
        for match in _NUMBER_WORD.finditer(fact):
            unit = _unit_after(fact, match.end())
            number = _in_words(match.group())
            counted = (
                unit
                or COUNT_NOUN.match(fact[match.end() :])
                or match.group().lower() in _ADVERBS
                or number >= 20  # "the limit is forty": no word of prose but a number
            )
            if self.free(match.start(), match.end()) and counted:
                self.take(MentionKind.NUMBER, match.group(), str(number), match.start(), unit=unit)

    def names(self) -> None:
        fact = self.fact
        for match in _NAME.finditer(fact):
            text = match.group().rstrip(".-")
            start, end = match.start(), match.start() + len(text)
            if not self.free(start, end):
                continue
            if text.lower() in _FLAGS and (text[0].isupper() or text in {"null", "nil", "undefined", "true", "false"}):
                self.mentions.append(Mention(MentionKind.FLAG, text, _FLAGS[text.lower()], start, end))
            elif looks_like_code(text) or fact.startswith("=", end):
                self.mentions.append(Mention(MentionKind.NAME, text, text.removesuffix("()"), start, end))
        for match in _SWITCH.finditer(fact):  # "defaults to off", "enabled by default": a flag in words
            word = match.group("a") or match.group("b")
            start = match.start("a") if match.group("a") else match.start("b")
            if self.free(start, start + len(word)):
                self.take(MentionKind.FLAG, word, _SWITCHES[word.lower()], start)


def _span_values(code: str) -> list[tuple[MentionKind, str, str, int, str]]:
    """The literal values of a code span (``default = 4096``, ``usecwd=True``, ``f(a, 'x')``): kind,
    text, comparable value, offset in the span, and the name an ``=`` or ``:`` gives each."""
    tokens = [t for t in tokenize(code, Language.PYTHON) if t.kind is not TokenKind.COMMENT]
    found = []
    starts = [0, *[m.end() for m in re.finditer("\n", code)]]
    for index, token in enumerate(tokens):
        literal: tuple[MentionKind, str] | None = None
        if token.kind is TokenKind.STRING:
            literal = _literal_kind(token.text) or (MentionKind.STRING, token.value)
            if literal[0] is MentionKind.STRING:
                literal = (MentionKind.STRING, token.value)
        elif token.kind is TokenKind.NUMBER or (token.kind is TokenKind.NAME and token.value.lower() in _FLAGS):
            literal = _literal_kind(token.text)
        if literal is None:
            continue
        key = ""
        if (
            index >= 2
            and tokens[index - 1].value in {"=", ":", "==", ":="}
            and tokens[index - 2].kind is TokenKind.NAME
        ):
            key = tokens[index - 2].value
        at = starts[token.line] + token.column
        found.append((literal[0], token.text, literal[1], at, key))
    return found


def _unit_after(fact: str, end: int) -> str:
    match = _UNIT_AFTER.match(fact, end)
    if match is None:
        return ""
    return _UNITS.get(match.group(1).lower(), "")
