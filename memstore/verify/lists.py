"""Lists: what a fact enumerates, and the collections the cited code holds.

A fact lists things ("the signals forwarded are SIGUSR1, SIGTERM, SIGINT and SIGHUP", "six short
names: sync, eventlet, ...", "`__all__` exports 8 names") and code holds them in a collection (a
list, tuple, set or dict literal; a string of words split at run time; a list in a document). The
verifier pairs the two by the items they share and compares them: an item the fact names that the
collection does not hold, one the collection holds that a complete list leaves out, a count that
is not the collection's size, an order that is not the code's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstore.verify.mentions import Mention, MentionKind
from memstore.verify.reading import Reading
from memstore.verify.tokens import Language, Token, TokenKind
from memstore.verify.words import STOP

__all__ = ["Collection", "Enumeration", "collections_of", "enumerations_of", "normal", "parameter_lists"]


@dataclass(frozen=True)
class Collection:
    """The members of one collection of code, in order, as the code writes them."""

    members: tuple[str, ...]
    line: int  # where it opens, in its region (0-based)
    key: str = ""  # the name it is given to (``COLOURS = {...}``), or ""


@dataclass(frozen=True)
class Enumeration:
    """Items a fact lists, in order, with where the list stands in the fact."""

    items: tuple[str, ...]
    start: int
    end: int
    separator: str  # how the fact joins them: ", " or " "
    closed: bool = False  # written out as the whole list ("A, B and C"), not as examples of it
    parameters: bool = False  # a function's parameters, ``(a, b)``


def normal(item: str) -> str:
    """An item as compared: quotes, backticks and trailing punctuation aside, its last dotted part,
    lower case."""
    core = item.strip().rstrip(".,;:!?").strip("`'\"").strip()
    core = core.removesuffix("()")
    return core.rsplit(".", 1)[-1].lower() if re.fullmatch(r"[\w.]+", core) else core.lower()


_OPEN, _CLOSE = {"(": ")", "[": "]", "{": "}"}, {")", "]", "}"}


def collections_of(tokens: tuple[Token, ...], lines: tuple[str, ...], language: Language) -> list[Collection]:
    """The collections a region of code holds: each bracketed group of two or more items (its items'
    first token: a string's text, a name, a number), and each string of three or more words in
    capitals or of one shape (``"HUP QUIT INT TERM"``)."""
    found: list[Collection] = []
    stack: list[tuple[int, list[str], bool]] = []  # (line, members, expecting an item)
    keys: list[str] = []
    previous: Token | None = None
    for index, token in enumerate(tokens):
        previous = tokens[index - 1] if index else None
        if token.kind is TokenKind.PUNCT and token.value in _OPEN:
            stack.append((token.line, [], True))
            named = (
                index >= 2 and tokens[index - 1].value in {"=", ":"} and tokens[index - 2].kind is not TokenKind.PUNCT
            )
            keys.append(tokens[index - 2].value if named else "")
            continue
        if token.kind is TokenKind.PUNCT and token.value in _CLOSE:
            if stack:
                line, members, _ = stack.pop()
                key = keys.pop()
                if len(members) >= 2:
                    found.append(Collection(tuple(members), line, key))
            continue
        if not stack:
            if token.kind is TokenKind.STRING:
                _words(token, found)
            continue
        line, members, expecting = stack[-1]
        if token.kind is TokenKind.PUNCT and token.value in {",", ";"}:
            stack[-1] = (line, members, True)
        elif expecting and token.kind in {TokenKind.STRING, TokenKind.NAME, TokenKind.NUMBER}:
            members.append(token.value)
            stack[-1] = (line, members, False)
            if token.kind is TokenKind.STRING:
                _words(token, found)
        elif members and previous is not None and previous.value == "." and token.kind is TokenKind.NAME:
            members[-1] = f"{members[-1]}.{token.value}"  # ``self.prefix``: one member, dotted
    if language is Language.PROSE or language is Language.SHELL:
        found += _listed_lines(lines)
    return found


def _words(token: Token, found: list[Collection]) -> None:
    words = token.value.split()
    if len(words) >= 3 and all(re.fullmatch(r"[A-Z][A-Z0-9_]*", w) for w in words):
        found.append(Collection(tuple(words), token.line))


_ITEM_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[([^\]]+)\]|`([^`]+)`|(\S+))")


def _listed_lines(lines: tuple[str, ...]) -> list[Collection]:
    """A list in a document: consecutive item lines (``- [Honcho](...)``, ``* `name```), each the
    first thing it names."""
    found: list[Collection] = []
    run: list[str] = []
    start = 0
    for number, line in enumerate([*lines, ""]):
        match = _ITEM_LINE.match(line)
        if match:
            if not run:
                start = number
            run.append(next(g for g in match.groups() if g))
        elif line.strip() and run and line.startswith((" ", "\t")):
            continue  # an item's continuation line
        else:
            if len(run) >= 2:
                found.append(Collection(tuple(run), start))
            run = []
    return found


_ITEM = r"(?:`[^`\n]{1,60}`|\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'|[\w.\-:\\@]+(?:\(\))?)"
_ENUMERATION = re.compile(
    rf"{_ITEM}(?:\s*(?:,|;)\s*{_ITEM}){{1,40}}(?:\s*,?\s*(?:and|or|plus|as well as)\s+{_ITEM})?"
    rf"|{_ITEM}(?:\s*,\s*{_ITEM}){{0,40}}\s*,?\s*(?:and|or)\s+{_ITEM}"
)


def enumerations_of(reading: Reading) -> list[Enumeration]:
    """The lists a fact writes out: three or more items joined by commas, slashes or "and"/"or"."""
    found = []
    for match in _ENUMERATION.finditer(reading.fact):
        items = [i for i in re.split(r"\s*(?:,|;)\s*|\s+(?:and|or|plus|as well as)\s+", match.group()) if i]
        items = [i.strip().rstrip(".,;:!?") for i in items if i.strip() and i.strip().lower() not in {"and", "or"}]
        if len(items) >= 3 and all(_item_like(i) for i in items):
            before = reading.fact[max(0, match.start() - 40) : match.start()].lower()
            examples = re.search(
                r"\b(?:e\.g|such as|including|includes|include|like|among|for example|for instance)\b", before
            )
            closed = re.search(r"\s(?:and|as well as)\s+\S+$", match.group()) is not None and examples is None
            found.append(Enumeration(tuple(items), match.start(), match.end(), ", ", closed))
    return found


_PARAMETERS = re.compile(
    r"(?i)(?:\b(?:takes|accepts|parameters|arguments|signature|with|is|are)\b[^()\n]{0,30}|[\w.]+`?\s*)`?\((?P<inner>[^()\n]{0,300})\)`?"
)
_PARAMETER = re.compile(r"\s*(\*{0,2}[A-Za-z_]\w*)\s*(?:[:=][^,]*)?\s*")


def parameter_lists(reading: Reading) -> list[Enumeration]:
    """The parameter lists a fact writes out (```(request, stream=False)```, "accepts the parameters
    (a, b)"): their names, in order; a parameter list is a whole list."""
    found = []
    for match in _PARAMETERS.finditer(reading.fact):
        inner = match.group("inner")
        parts = [p for p in inner.split(",") if p.strip()] if inner.strip() else []
        names = [_PARAMETER.fullmatch(p) for p in parts]
        if names and all(names) and not any(n.group(1) in STOP for n in names if n):
            items = tuple(n.group(1).lstrip("*") for n in names if n)
            found.append(
                Enumeration(items, match.start("inner"), match.end("inner"), ", ", closed=True, parameters=True)
            )
    return found


def _item_like(item: str) -> bool:
    """An item of a list, not a word of the prose around it: quoted, code, a word in capitals, or one
    lower-case word (``json``, ``sync``), never a phrase."""
    return (
        bool(item)
        and item.lower() not in STOP
        and (item[0] in "`'\"" or re.fullmatch(r"[\w.\-:\\@]+(?:\(\))?", item) is not None)
    )


def items_named(reading: Reading) -> list[Mention]:
    """The names and strings of a fact, in order (what a list in it can be made of)."""
    return [m for m in reading.mentions if m.kind in {MentionKind.NAME, MentionKind.STRING}]
