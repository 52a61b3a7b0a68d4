"""What a fact says, read out of free text: the code it names, the values it states, and what it
says of them, whatever the sentence around them.

A memory's fact is prose an agent wrote: "`find_dotenv` starts from the working directory
(usecwd=True)", "Unless you pass --quote, `dotenv set` quotes in auto mode", "The lint env runs
mypy six times". The verifier does not parse sentence shapes. It reads the fact as a person skims
it for what can be checked against code:

- *mentions*: each name of code (backticked, dotted, CamelCase, snake_case, CONSTANT, ``--option``,
  a call, a file name) and each value (a number with its unit, a quoted string, a URL, a version or
  a pin, a flag, a literal in a code span), with where it stands in the fact, so a correction
  replaces exactly the text that stated it;
- *words*: its content words, stemmed, with their positions (what a value is said of is named near
  it);
- *negated* mentions and words: those inside "no", "not", "never", "without", "nothing", "n't"
  (the fact says the code does *not* have them);
- *cues*: what the fact says of the values (a default, read from the environment, one platform,
  deprecated, raises, returns, an order, a complete list, a count, things that must match).

A reworded fact names the same code and states the same values, so it reads the same here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memstore.verify.tokens import number_value

__all__ = [
    "Cue",
    "Mention",
    "MentionKind",
    "Reading",
    "Word",
    "looks_like_code",
    "negated_spans",
    "read_fact",
    "stem",
    "word_stems",
]


class MentionKind(StrEnum):
    NAME = "name"  # a name of code: a function, a class, a constant, a key, an option, a file
    NUMBER = "number"
    STRING = "string"  # a quoted string, or a word the fact quotes
    FLAG = "flag"  # True, False, None (and their spellings in other languages)
    VERSION = "version"  # 1.2.3, v2.1
    PIN = "pin"  # a version requirement: >=3.8, ~=1.2, ^4.0.0, <3
    URL = "url"
    CODE = "code"  # a code span that is an expression: a call, a list, an assignment


class Cue(StrEnum):
    DEFAULT = "default"
    ENVIRONMENT = "environment"
    PLATFORM = "platform"
    DEPRECATED = "deprecated"
    RAISES = "raises"
    RETURNS = "returns"
    ORDER = "order"
    COMPLETE = "complete"  # only, exactly, all, "the X are A, B and C"
    COUNT = "count"  # a number of things: "six times", "8 projects"
    MATCH = "match"  # must match, kept in sync, the same in both
    UNIVERSAL = "universal"  # always, every, never, regardless, unconditionally


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


@dataclass(frozen=True, slots=True)
class Word:
    """A content word of the fact, stemmed, with its position and whether it is negated."""

    stem: str
    start: int
    negated: bool


@dataclass(frozen=True)
class Reading:
    """What `read_fact` found in a fact."""

    fact: str
    mentions: tuple[Mention, ...]
    words: tuple[Word, ...]
    cues: frozenset[Cue]

    @property
    def names(self) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is MentionKind.NAME)

    @property
    def values(self) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is not MentionKind.NAME)

    def near(self, mention: Mention, reach: int = 48) -> frozenset[str]:
        """The stems of the words within ``reach`` characters of a mention (what it is said of)."""
        return frozenset(w.stem for w in self.words if mention.start - reach <= w.start <= mention.end + reach)

    @property
    def stems(self) -> frozenset[str]:
        return frozenset(w.stem for w in self.words)


# -- words ----------------------------------------------------------------------------------------

STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "had",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "may",
        "might",
        "must",
        "not",
        "of",
        "on",
        "or",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "will",
        "would",
        "with",
        "you",
        "your",
        "all",
        "any",
        "each",
        "every",
        "one",
        "also",
        "only",
        "just",
        "its",
        "it's",
        "i.e",
        "e.g",
        "etc",
        "via",
        "per",
        "like",
        "unlike",
        "same",
        "such",
        "other",
        "others",
        "both",
        "either",
        "neither",
        "nor",
        "no",
        "yes",
        "out",
        "up",
        "down",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "once",
        "here",
        "more",
        "most",
        "some",
        "very",
        "own",
        "we",
        "our",
        "us",
        "they",
        "he",
        "she",
        "his",
        "her",
        "what",
        "why",
        "use",
        "used",
        "uses",
        "using",
        "set",
        "sets",
    ]
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


# -- negation -------------------------------------------------------------------------------------

_NEGATOR = re.compile(
    r"(?i)\b(?:no|not|never|without|nothing|none|neither|nor|cannot|lacks?|absent|instead of|rather than"
    r"|unlike|nowhere|no longer|isn't|aren't|doesn't|don't|didn't|won't|can't|hasn't|haven't|wasn't)\b|n't\b"
)
_QUOTED_TEXT = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"")
_CONDITION = re.compile(r"(?i)\b(?:if|when|whenever|unless|where|while|once|until|in case)\b")
_SCOPE_END = re.compile(r"[.;:!?()]|,\s|\bbut\b|\bwhile\b|\bwhereas\b|\bso\b|--|—")


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


# -- cues -----------------------------------------------------------------------------------------

_CUES: tuple[tuple[Cue, re.Pattern[str]], ...] = (
    (
        Cue.DEFAULT,
        re.compile(
            r"(?i)\bdefault"
            r"|\bunless (?:you |it is |one |the caller )?(?:pass|give|set|specif|overrid|provid|turn|configur|chang)"
            r"|\bif (?:not|none is|nothing is|no \w+ is) (?:given|passed|set|specified|provided)"
            r"|\bwhen (?:omitted|not given|not passed|not set|unset)|\bout of the box|\bfalls? back to"
            r"|\bleft (?:unset|out)|\bby itself\b|\bomitted\b"
        ),
    ),
    (
        Cue.ENVIRONMENT,
        re.compile(
            r"(?i)\benv(?:ironment)?(?:\s+|-)?var|\bfrom (?:the )?env(?:ironment)?\b|\bos\.environ|\bgetenv"
            r"|\benvironment\b|\$[A-Z_]{2,}"
        ),
    ),
    (Cue.PLATFORM, re.compile(r"(?i)\b(?:windows|linux|macos|mac os|darwin|posix|unix|win32)\b")),
    (Cue.DEPRECATED, re.compile(r"(?i)\bdeprecat|\bno longer used\b|\bunused\b|\bobsolete\b|\blegacy\b|\bdead code\b")),
    (Cue.RAISES, re.compile(r"(?i)\braise|\bthrow|\berrors? (?:out|with)\b|\bfails? with\b")),
    (Cue.RETURNS, re.compile(r"(?i)\breturn|\byields?\b|\bgives back\b|\bhands? back\b")),
    (
        Cue.ORDER,
        re.compile(
            r"(?i)\bbefore\b|\bafter\b|\bfirst\b|\bthen\b|\bfollowed by\b|\border\b|\bprecedes?\b|\blast\b|\bsorted\b"
        ),
    ),
    (
        Cue.COMPLETE,
        re.compile(
            r"(?i)\bonly\b|\bexactly\b|\bthe (?:full|whole|complete) (?:list|set)\b|\bnothing else\b|\bno other\b"
            r"|\bsole\b|\bsingle\b|\ball of\b|\bjust\b"
        ),
    ),
    (
        Cue.MATCH,
        re.compile(
            r"(?i)\bmatch|\bin sync\b|\bsame (?:value|version|name|list|number)|\bmirror"
            r"|\bkeep (?:the|them|both|these)\b.*\b(?:equal|identical|same|aligned)|\bagree\b|\bequal\b|\bidentical\b"
            r"|\bmust change together\b"
        ),
    ),
)
_COUNT_NOUN = re.compile(
    r"(?i)^\s*(?:[a-z-]+\s+){0,2}?(?:times|entries|items|names|elements|members|values|arguments|parameters|params"
    r"|options|flags|keys|fields|paths|projects|versions|steps|lines|rules|commands|sequences|escapes|characters"
    r"|environments|envs|files|modules|classes|functions|methods|hooks|retries|attempts|links|dependencies|extras"
    r"|targets)\b"
)


def _cues(fact: str, mentions: list[Mention]) -> frozenset[Cue]:
    prose = fact
    for m in mentions:  # what code is named is no cue (``raise_error_if_not_found`` raises nothing)
        if m.kind in {MentionKind.NAME, MentionKind.CODE, MentionKind.STRING, MentionKind.URL}:
            prose = prose[: m.start] + " " * (m.end - m.start) + prose[m.end :]
    found = {cue for cue, pattern in _CUES if pattern.search(prose)}
    if any(m.kind is MentionKind.NUMBER and _COUNT_NOUN.match(fact[m.end :]) for m in mentions):
        found.add(Cue.COUNT)
    return frozenset(found)


# -- mentions -------------------------------------------------------------------------------------

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
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "sixty": 60,
    "hundred": 100, "thousand": 1000, "once": 1, "twice": 2, "thrice": 3,
}  # fmt: skip
_NUMBER_WORD = re.compile(r"(?i)\b(" + "|".join(_NUMBER_WORDS) + r")\b")
_SWITCHES = {"on": "True", "off": "False", "enabled": "True", "disabled": "False"}
_SWITCH = re.compile(
    r"(?i)\b(?:defaults? to|is|are|starts?(?: out)?|turned|set to|switched)\s+(?P<a>on|off|enabled|disabled)\b"
    r"|\b(?P<b>on|off|enabled|disabled) by default\b"
)
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
def read_fact(fact: str) -> Reading:
    """The mentions, words and cues of a fact (see the module docstring)."""
    fact = fact[:8000]  # a fact is at most 4,000 characters; anything longer is read in part
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    def add(kind: MentionKind, text: str, value: str, start: int, end: int, **more: object) -> None:
        mentions.append(Mention(kind, text, value, start, end, **more))  # type: ignore[arg-type]

    for match in _CODE_SPAN.finditer(fact):
        inner, start, end = match.group(1), match.start(), match.end()
        taken.append((start, end))
        literal = _literal_kind(inner)
        if literal is not None:
            add(literal[0], match.group(), literal[1], start, end, quoted=True, unit=_unit_after(fact, end))
        elif re.fullmatch(r"--?[\w-]+|[A-Za-z_$][\w$]*(?:[./:][A-Za-z_$][\w$-]*)*(?:\(\))?", inner.strip()):
            add(MentionKind.NAME, match.group(), inner.strip().removesuffix("()"), start, end, quoted=True)
        else:
            add(MentionKind.CODE, match.group(), inner.strip(), start, end, quoted=True)
            for kind, text, value, at, key in _span_values(inner):  # the values inside a code span
                add(kind, text, value, start + 1 + at, start + 1 + at + len(text), quoted=True, key=key)
    for match in _URL.finditer(fact):
        url = match.group().rstrip(".,;:")
        if free(match.start(), match.start() + len(url)):
            taken.append((match.start(), match.start() + len(url)))
            add(MentionKind.URL, url, url, match.start(), match.start() + len(url))
    for match in _QUOTE.finditer(fact):
        if free(match.start(), match.end()):
            taken.append(match.span())
            value = match.group(1) if match.group(1) is not None else match.group(2)
            literal = _literal_kind(value)
            kind, comparable = (
                literal if literal and literal[0] is not MentionKind.STRING else (MentionKind.STRING, value)
            )
            add(kind, match.group(), comparable, match.start(), match.end(), quoted=True)
    for match in _PIN.finditer(fact):
        if free(match.start(), match.end()):
            taken.append(match.span())
            add(MentionKind.PIN, match.group(), " ".join(match.group().split()), match.start(), match.end())
    for match in _VERSION.finditer(fact):
        if free(match.start(), match.end()):
            taken.append(match.span())
            add(MentionKind.VERSION, match.group(), match.group().removeprefix("v"), match.start(), match.end())
    for match in _NUMBER_UNIT.finditer(fact):
        if free(match.start(), match.end()):
            taken.append(match.span())
            unit = _UNITS.get(match.group(2).lower(), match.group(2))
            add(MentionKind.NUMBER, match.group(), number_value(match.group(1)), match.start(), match.end(), unit=unit)
    for match in _NUMBER.finditer(fact):
        if free(match.start(), match.end()):
            taken.append(match.span())
            raw = match.group().replace(",", "")
            if re.fullmatch(r"0\d+", raw) and set(raw) <= set("01234567"):
                raw = "0o" + raw[1:]  # 0640: a file mode, octal
            add(MentionKind.NUMBER, match.group(), number_value(raw), match.start(), match.end(),
                unit=_unit_after(fact, match.end()))  # fmt: skip
    for match in _NUMBER_WORD.finditer(fact):
        unit = _unit_after(fact, match.end())
        follows = fact[match.end() :]
        if free(match.start(), match.end()) and (
            unit or _COUNT_NOUN.match(follows) or match.group().lower() in {"once", "twice", "thrice"}
        ):
            taken.append(match.span())
            value = str(_NUMBER_WORDS[match.group().lower()])
            add(MentionKind.NUMBER, match.group(), value, match.start(), match.end(), unit=unit)
    for match in _NAME.finditer(fact):
        text = match.group().rstrip(".-")
        if not free(match.start(), match.start() + len(text)):
            continue
        if text.lower() in _FLAGS and (text[0].isupper() or text in {"null", "nil", "undefined", "true", "false"}):
            add(MentionKind.FLAG, text, _FLAGS[text.lower()], match.start(), match.start() + len(text))
        elif looks_like_code(text) or fact.startswith("=", match.start() + len(text)):
            add(MentionKind.NAME, text, text.removesuffix("()"), match.start(), match.start() + len(text))
    for match in _SWITCH.finditer(fact):  # "defaults to off", "enabled by default": a flag in words
        word = match.group("a") or match.group("b")
        start = match.start("a") if match.group("a") else match.start("b")
        if free(start, start + len(word)):
            taken.append((start, start + len(word)))
            add(MentionKind.FLAG, word, _SWITCHES[word.lower()], start, start + len(word))
    negated = negated_spans(fact)
    mentions = [
        Mention(m.kind, m.text, m.value, m.start, m.end, m.unit, any(a <= m.start < b for a, b in negated), m.quoted)
        for m in sorted(mentions, key=lambda m: (m.start, m.end))
    ]
    words = tuple(Word(s, at, any(a <= at < b for a, b in negated)) for s, at in word_stems(fact))
    return Reading(fact, tuple(mentions), words, _cues(fact, mentions))


def _span_values(code: str) -> list[tuple[MentionKind, str, str, int, str]]:
    """The literal values of a code span (``default = 4096``, ``usecwd=True``, ``f(a, 'x')``): kind,
    text, comparable value, offset in the span, and the name an ``=`` or ``:`` gives each."""
    from memstore.verify.tokens import Language, TokenKind, tokenize

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
