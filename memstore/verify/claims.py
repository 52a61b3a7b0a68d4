"""The literal claims of a fact, and what code text says about them.

A fact such as 'The API version is "v2.1.4" in `API_VERSION`' makes claims that code can
confirm or contradict word for word: quoted strings, code spans, versions, numbers and
code identifiers. These helpers extract them, find the values code assigns to keys a
fact talks about, and pair the tokens a change replaced, so a verdict can say what is
contradicted and what the corrected value is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memstore.verify.lines import diff_opcodes
from memstore.verify.tokens import cached_pattern

__all__ = [
    "ClaimKind",
    "FactClaim",
    "assignments",
    "claims_of",
    "code_form",
    "identifier_words",
    "light_stem",
    "mentions",
    "substitutions",
    "terms",
]


class ClaimKind(StrEnum):
    VERSION = "version"
    QUOTED = "quoted"
    CODE = "code"
    NUMBER = "number"
    IDENTIFIER = "identifier"


@dataclass(frozen=True)
class FactClaim:
    """One literal claim of a fact: its kind and its exact text."""

    kind: ClaimKind
    text: str


_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z][0-9A-Za-z.]*[0-9A-Za-z])?(?!\w|\.\w)")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|(?<!\w)'([^'\n]{1,200})'(?!\w)")
_CODE = re.compile(r"`([^`\n]{1,200})`")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w|\.\w)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENTIFIER = re.compile(r"(?<![\w./-])[A-Za-z_][\w-]*(?:[./][\w-]+)*(?:\(\))?")
_TOKEN = re.compile(r"v?\d+(?:\.\d+)+(?:-[0-9A-Za-z.]+)?|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S")
_ASSIGNMENT = re.compile(  # the look-behind starts keys only at word starts: linear on a long word
    r"(?<![A-Za-z0-9_])(?P<key>[A-Za-z_][A-Za-z0-9_]*)[\"']?\s*(?::=|=|:)\s*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|v?\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)?|[A-Za-z_][\w.]*)"
)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
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
        "use",
        "used",
        "uses",
        "using",
        "was",
        "were",
        "when",
        "where",
        "which",
        "while",
        "who",
        "will",
        "with",
        "without",
        "you",
        "your",
        "all",
        "any",
        "each",
        "every",
        "one",
        "two",
        "three",
        "file",
        "files",
        "line",
        "lines",
        "const",
        "let",
        "var",
        "def",
        "func",
        "function",
        "return",
        "true",
        "false",
        "none",
        "null",
        "export",
        "import",
        "new",
        "self",
    ]
)


def _looks_like_code(word: str) -> bool:
    """snake_case, camelCase, dotted.names, paths/files, CONSTANTS and calls: not plain English words."""
    core = word.removesuffix("()").strip("-")
    if re.search(r"[./]", core):
        return all(len(part) >= 2 for part in re.split(r"[./]", core))  # not "e.g"
    return (
        word.endswith("()")
        or "_" in core.strip("_")
        or bool(re.search(r"[a-z][A-Z]", core))
        or (core.isupper() and (len(core) >= 5 or any(c.isdigit() for c in core)))
    )


@lru_cache(maxsize=8192)
def _claims(fact: str) -> tuple[FactClaim, ...]:
    return tuple(_find_claims(fact))


def claims_of(fact: str) -> list[FactClaim]:
    """The literal claims of ``fact``, in order, without repeats."""
    return list(_claims(fact))


def _find_claims(fact: str) -> list[FactClaim]:
    found: list[FactClaim] = []
    spans: list[tuple[int, int]] = []

    def add(kind: ClaimKind, text: str, span: tuple[int, int]) -> None:
        spans.append(span)
        claim = FactClaim(kind, text)
        if text and claim not in found:
            found.append(claim)

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in spans)

    for match in _CODE.finditer(fact):
        add(ClaimKind.CODE, match.group(1), match.span())
    for match in _QUOTED.finditer(fact):
        if free(match.span()):
            add(ClaimKind.QUOTED, match.group(1) or match.group(2), match.span())
    for match in _VERSION.finditer(fact):
        if free(match.span()):
            add(ClaimKind.VERSION, match.group(), match.span())
    for match in _NUMBER.finditer(fact):
        if free(match.span()):
            add(ClaimKind.NUMBER, match.group(), match.span())
    for match in _IDENTIFIER.finditer(fact):
        if free(match.span()) and _looks_like_code(match.group()):
            add(ClaimKind.IDENTIFIER, match.group(), match.span())
    return found


_ANNOTATION = re.compile(
    r"(?<![\w.])([A-Za-z_]\w*)\s*:\s*(?:[A-Za-z_][\w.]*(?:\[[^\]=\n]*\])?|\"[^\"\n]*\"|'[^'\n]*')\s*=(?!=)"
)
_SPACE = re.compile(r"\s+")
_UNICODE_PREFIX = re.compile(r"(?<![\w])[uU](?=[\"'])")  # u"" is "" (Python 2's unicode literals)
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def code_form(text: str) -> str:
    """Code as tokens, not characters: one kind of quote, no spacing, no trailing commas, no
    annotations (``help_option_names = ['--help']`` and ``help_option_names = ["--help"]`` are
    one form; so are ``max_length=45`` and ``max_length: int = 45``)."""
    form = _ANNOTATION.sub(r"\1=", _UNICODE_PREFIX.sub("", text).replace("'", '"'))
    return _TRAILING_COMMA.sub("", _SPACE.sub("", form))


def _mentions_as_code(text: str, literal: str) -> bool:
    """``mentions`` for a literal of code (with punctuation or spaces), compared in `code_form`."""
    form, within = code_form(literal), code_form(text)
    if not form:
        return False
    pattern = (r"(?<![\w.])" if form[0].isalnum() or form[0] == "_" else "") + re.escape(form)
    pattern += r"(?![\w])" if form[-1].isalnum() or form[-1] == "_" else ""
    return cached_pattern(pattern).search(within) is not None


def mentions(text: str, literal: str) -> bool:
    """Whether ``literal`` stands in ``text`` as a whole token (not inside a longer word or number);
    a literal of code (``x = ['a']``) also where its tokens stand, however quoted, spaced or annotated."""
    if not literal:
        return False
    if not re.fullmatch(r"[\w.\-/]+(?:\(\))?", literal) and _mentions_as_code(text, literal):
        return True
    if literal.endswith("()") and len(literal) > 2:  # a call: the name followed by its arguments
        return cached_pattern(rf"(?<![\w.]){re.escape(literal[:-2])}\s*\(").search(text) is not None
    if re.fullmatch(r"0[xX][0-9a-fA-F_]+", literal):  # 0xcafebabe and 0xCAFEBABE are one number
        return cached_pattern(rf"(?<![\w.]){re.escape(literal)}(?![\w])", re.IGNORECASE).search(text) is not None
    if _VERSION.fullmatch(literal):  # "2.1.4" and "v2.1.4" are the same version
        core = re.escape(literal.removeprefix("v"))
        return cached_pattern(rf"(?<![\w.])v?{core}(?![\w]|\.\d)").search(text) is not None
    pattern = r"(?<![\w.])" + re.escape(literal) if literal[0].isalnum() or literal[0] == "_" else re.escape(literal)
    pattern += r"(?![\w])" if literal[-1].isalnum() or literal[-1] in "_)" else ""
    return cached_pattern(pattern).search(text) is not None


def kind_of(value: str) -> ClaimKind:
    """The kind of claim a literal value from code would be."""
    if value[:1] in {'"', "'"}:
        return ClaimKind.QUOTED
    if value[:1] == "`":
        return ClaimKind.CODE
    if _VERSION.fullmatch(value):
        return ClaimKind.VERSION
    if _NUMBER.fullmatch(value):
        return ClaimKind.NUMBER
    return ClaimKind.IDENTIFIER


def assignments(text: str) -> list[tuple[str, str]]:
    """``(key, value)`` pairs a text assigns: ``KEY = 1``, ``key: "x"``, ``Version: v2.1.4``.
    Quotes are kept on string values."""
    return [(m.group("key"), m.group("value")) for m in _ASSIGNMENT.finditer(text)]


def unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`" else value


def light_stem(word: str) -> str:
    """A light stemmer: plurals and -ing, so "codes"/"code" and "logging"/"logged"/"log" meet."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def identifier_words(text: str) -> list[str]:
    """The words of ``text``, identifiers split at case changes and underscores, lower-cased."""
    found: list[str] = []
    for token in _WORD.findall(text):
        for part in token.split("_"):
            found.extend(p.lower() for p in _CAMEL.findall(part))
    return found


_TERMS_MAX_CHARS = 100_000  # relevance is judged on the first 100k characters of a cited text


@lru_cache(maxsize=16384)
def terms(text: str) -> frozenset[str]:
    """The content words of ``text``, stemmed: what a fact and code must share to be about the same thing."""
    found = identifier_words(text[:_TERMS_MAX_CHARS])
    return frozenset(light_stem(w) for w in found if len(w) >= 3 and w not in STOPWORDS)


@lru_cache(maxsize=4096)
def key_terms(key: str) -> frozenset[str]:
    """The words of an assignment key (``API_VERSION`` -> {"api", "version"})."""
    return frozenset(light_stem(w) for w in identifier_words(key) if w not in STOPWORDS)


def substitutions(before: str, after: str) -> dict[str, str]:
    """Tokens that a change replaced one for one: ``v2.1.4 -> v2.2.0``, ``createPool -> makePool``."""
    old, new = _TOKEN.findall(before), _TOKEN.findall(after)
    pairs: dict[str, str] = {}
    for op, i1, i2, j1, j2 in diff_opcodes(old, new):  # patience diff: near linear, unlike difflib
        if op == "replace" and i2 - i1 == j2 - j1:
            for a, b in zip(old[i1:i2], new[j1:j2], strict=True):
                if a != b and len(a) > 1:
                    pairs.setdefault(a, b)
    return pairs
