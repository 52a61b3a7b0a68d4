"""Code as tokens, in any of the languages a memory cites: strings, numbers, names, punctuation.

The verifier compares what a fact states with the values code gives, in Python, JavaScript and
TypeScript, Go, YAML, TOML, INI and setup.cfg, JSON, Markdown and plain text. One scanner serves
them all, told by the file's name which comments and strings the language has: what differs
between them for this purpose is small (``#`` or ``//`` comments, backticks, triple quotes), and a
parser per language would refuse the fragments a citation cuts out of a file.

The scanner is linear in its input whatever the text (every pattern is anchored at one position
and has no nested repetition; an unterminated string or comment ends at the end of its line or of
the text), so a hostile line costs its length, not its square.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import lru_cache

__all__ = ["Language", "Token", "TokenKind", "cached_pattern", "language_of", "number_value", "tokenize"]


class Language(StrEnum):
    PYTHON = "python"
    SCRIPT = "script"  # JavaScript, TypeScript, Go, C-like: // and /* */ comments, backtick strings
    SHELL = "shell"  # YAML, TOML, INI, setup.cfg, shell, Makefiles: # comments
    JSON = "json"
    PROSE = "prose"  # Markdown, reStructuredText, text: no comments, backticks mark code


_BY_SUFFIX = {
    **dict.fromkeys((".py", ".pyi", ".pyx"), Language.PYTHON),
    **dict.fromkeys(
        (
            ".js",
            ".mjs",
            ".cjs",
            ".jsx",
            ".ts",
            ".tsx",
            ".mts",
            ".cts",
            ".go",
            ".java",
            ".kt",
            ".c",
            ".h",
            ".cc",
            ".cpp",
            ".hpp",
            ".rs",
            ".swift",
            ".cs",
            ".scala",
            ".dart",
            ".php",
        ),
        Language.SCRIPT,
    ),
    **dict.fromkeys(
        (".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".sh", ".bash", ".env", ".properties", ".mk", ".r"),
        Language.SHELL,
    ),
    **dict.fromkeys((".json", ".jsonc", ".json5", ".ipynb"), Language.JSON),
    **dict.fromkeys((".md", ".markdown", ".rst", ".txt", ".adoc", ".html", ".htm", ".xml", ".svg"), Language.PROSE),
}
_BY_NAME = {"makefile": Language.SHELL, "dockerfile": Language.SHELL, "procfile": Language.SHELL}


@lru_cache(maxsize=8192)
def language_of(path: str) -> Language:
    """The language a file is read as, by its name (text without a known suffix reads as prose)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.startswith((".env", "requirements")):
        return Language.SHELL
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:], Language.PROSE) if dot >= 0 else Language.PROSE


class TokenKind(StrEnum):
    STRING = "string"  # value: the text between the quotes, escapes as written
    NUMBER = "number"  # value: the number in canonical form (`number_value`)
    NAME = "name"  # value: the name (dotted names are several tokens)
    PUNCT = "punct"  # value: the character(s)
    COMMENT = "comment"  # value: the comment's text


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, the text as written, its value, and where it starts (0-based line and
    column in the text scanned)."""

    kind: TokenKind
    text: str
    value: str
    line: int
    column: int


_SPACE = re.compile(r"[ \t\f\v\r]+")  # \r too: a lone one is a character of its line outside Python
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_VERSION = re.compile(r"\d+(?:\.\d+){2,}(?:[-+.]?[A-Za-z]+\d*)?(?![\w.])")  # 1.2.3, 0.19.2, 2.0.0rc1: one token
_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.\d[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJnLlfFuU]?"
)
_URL = re.compile(r"(?:https?|ftp|wss?)://[^\s`'\"<>()\[\]]+[^\s`'\"<>()\[\].,;:!?]")
_OPERATOR = re.compile(r"\*\*=?|//=?|<<=?|>>=?|[-+*/%&|^=!<>:]=|->|=>|\.\.\.|\?\?|\?\.|\S")
_PREFIX = re.compile(r"(?i)(?:[rbuf]|br|rb|fr|rf)(?=['\"])")


def tokenize(text: str, language: Language) -> list[Token]:
    """The tokens of ``text`` read as ``language`` (comments included, as `TokenKind.COMMENT`)."""
    return list(_tokenize(text, language))


@lru_cache(maxsize=4096)
def _tokenize(text: str, language: Language) -> tuple[Token, ...]:
    found: list[Token] = []
    line_starts = [0]
    line_starts += [m.end() for m in re.finditer("\n", text)]
    line = 0
    at, end = 0, len(text)
    while at < end:
        if text[at] == "\n":
            at += 1
            continue
        space = _SPACE.match(text, at)
        if space:
            at = space.end()
            continue
        while line + 1 < len(line_starts) and line_starts[line + 1] <= at:
            line += 1
        kind, value, stop = _token_at(text, at, language)
        found.append(Token(kind, text[at:stop], value, line, at - line_starts[line]))
        at = stop
    return tuple(found)


def _token_at(text: str, at: int, language: Language) -> tuple[TokenKind, str, int]:
    """The kind and value of the token that starts at ``at``, and where it ends."""
    char = text[at]
    if (char == "#" and language in {Language.PYTHON, Language.SHELL}) or (
        language is Language.SCRIPT and text.startswith("//", at)
    ):
        stop = _line_end(text, at)
        return TokenKind.COMMENT, text[at:stop].lstrip("#/ "), stop
    if language is Language.SCRIPT and text.startswith("/*", at):
        stop = text.find("*/", at + 2)
        stop = len(text) if stop < 0 else stop + 2
        return TokenKind.COMMENT, text[at + 2 : stop - 2].strip(), stop
    prefix = _PREFIX.match(text, at) if language is Language.PYTHON else None
    quote_at = prefix.end() if prefix else at
    if text[quote_at : quote_at + 1] in {'"', "'"} or (
        text[quote_at : quote_at + 1] == "`" and language in {Language.SCRIPT, Language.PROSE}
    ):
        stop, inner = _string(text, quote_at, language)
        return TokenKind.STRING, inner, stop
    version = _VERSION.match(text, at) if char.isdigit() else None
    if version:
        return TokenKind.NUMBER, version.group(), version.end()
    url = _URL.match(text, at) if char in "hfwHFW" else None
    if url:  # a link outside quotes (Markdown, comments aside) is one value
        return TokenKind.STRING, url.group(), url.end()
    number = _NUMBER.match(text, at)
    if number and (char.isdigit() or (char == "." and number.end() > at + 1)):
        return TokenKind.NUMBER, number_value(number.group()), number.end()
    name = _NAME.match(text, at)
    if name:
        return TokenKind.NAME, name.group(), name.end()
    operator = _OPERATOR.match(text, at)
    assert operator is not None  # \S matches any character left
    return TokenKind.PUNCT, operator.group(), operator.end()


def _line_end(text: str, at: int) -> int:
    stop = text.find("\n", at)
    return len(text) if stop < 0 else stop


def _string(text: str, at: int, language: Language) -> tuple[int, str]:
    """Where the string opening at ``at`` ends, and its inner text. A triple-quoted Python string
    and a backtick template may span lines; any other ends at its line's end if unterminated."""
    quote = text[at]
    if language is Language.PYTHON and text.startswith(quote * 3, at):
        stop = text.find(quote * 3, at + 3)
        stop = len(text) if stop < 0 else stop + 3
        return stop, text[at + 3 : max(at + 3, stop - 3)]
    if language is Language.PROSE and quote in {"'", '"'}:
        # an apostrophe in prose ("don't") is no string: a quote closes on its own line or not at all
        stop = text.find(quote, at + 1)
        line_end = _line_end(text, at)
        if stop < 0 or stop > line_end:
            return at + 1, ""
        return stop + 1, text[at + 1 : stop]
    multiline = quote == "`"
    index = at + 1
    limit = len(text) if multiline else _line_end(text, at)
    while index < limit:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1, text[at + 1 : index]
        index += 1
    return limit, text[at + 1 : limit]


def number_value(text: str) -> str:
    """A number's canonical form: ``0x1F``, ``31`` and ``31.0`` are all ``31``; ``1_000`` is ``1000``;
    ``1e3`` is ``1000``. A text that is no number is returned as it is."""
    core = text.replace("_", "").rstrip("jJnLlfFuU") if text[:2].lower() != "0x" else text.replace("_", "")
    try:
        if core[:2].lower() == "0x":
            return str(int(core, 16))
        if core[:2].lower() == "0o":
            return str(int(core[2:], 8))
        if core[:2].lower() == "0b":
            return str(int(core[2:], 2))
        value = Decimal(core)
    except (InvalidOperation, ValueError):
        return text
    if not value.is_finite():
        return text
    if value == value.to_integral_value() and abs(value) < Decimal(10) ** 30:
        return str(int(value))
    return format(value.normalize(), "f")


@lru_cache(maxsize=16384)
def cached_pattern(source: str, flags: int = 0) -> re.Pattern[str]:
    """A compiled regular expression, kept: the verifier builds patterns from the names and values
    of facts, thousands of distinct ones in a run, past what the ``re`` module keeps (512)."""
    return re.compile(source, flags)
