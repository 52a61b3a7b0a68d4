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
from dataclasses import dataclass, field

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
    opener: str = ""  # for a bracket after a name, the name: a call's or a definition's (``split(sql, encoding)``)
    definition: bool = False  # the parameters of a definition (``def split(...)``, ``constructor(...) {``)
    optional: frozenset[str] = frozenset()  # for a definition, the parameters with a default, and ``*args``


@dataclass(frozen=True)
class Enumeration:
    """Items a fact lists, in order, with where the list stands in the fact."""

    items: tuple[str, ...]
    start: int
    end: int
    separator: str  # how the fact joins them: ", " or " "
    closed: bool = False  # written out as the whole list ("A, B and C"), not as examples of it
    parameters: bool = False  # a function's parameters, ``(a, b)``
    callee: str = ""  # for parameters, the name the fact writes them after (``split`` of ``split(sql)``)


def normal(item: str) -> str:
    """An item as compared: quotes, backticks and trailing punctuation aside, its last dotted part,
    lower case."""
    core = item.strip().rstrip(".,;:!?").strip("`'\"").strip()
    core = core.removesuffix("()")
    return core.rsplit(".", 1)[-1].lower() if re.fullmatch(r"[\w.]+", core) else core.lower()


_OPEN, _CLOSE = {"(": ")", "[": "]", "{": "}"}, {")", "]", "}"}


@dataclass
class _Open:
    """A bracket being read: its members so far, and where the member being read ends."""

    line: int
    key: str
    opener: str
    definition: bool
    members: list[str] = field(default_factory=list)
    optional: set[str] = field(default_factory=set)
    expecting: bool = True  # after the bracket or a separator: the next token starts a member
    tail: int = -1  # the index of the current member's last token (a dotted name grows from it)


def collections_of(tokens: tuple[Token, ...], lines: tuple[str, ...], language: Language) -> list[Collection]:
    """The collections a region of code holds: each bracketed group of two or more items (its items'
    first token: a string's text, a name, a number), and each string of three or more words in
    capitals or of one shape (``"HUP QUIT INT TERM"``). Kept by the lines they come from (the
    tokens are those of the lines)."""
    key = (lines, language)
    kept = _KEPT.get(key)
    if kept is None:
        if len(_KEPT) >= 4096:
            _KEPT.clear()
        kept = _KEPT[key] = tuple(_collections_of(tokens, lines, language))
    return list(kept)


_KEPT: dict[tuple[tuple[str, ...], Language], tuple[Collection, ...]] = {}


def _collections_of(tokens: tuple[Token, ...], lines: tuple[str, ...], language: Language) -> list[Collection]:
    found: list[Collection] = []
    stack: list[_Open] = []
    for index, token in enumerate(tokens):
        if token.kind is TokenKind.PUNCT and token.value in _OPEN:
            named = (
                index >= 2 and tokens[index - 1].value in {"=", ":"} and tokens[index - 2].kind is not TokenKind.PUNCT
            )
            stack.append(_Open(token.line, tokens[index - 2].value if named else "", *_opener(tokens, index)))
            continue
        if token.kind is TokenKind.PUNCT and token.value in _CLOSE:
            if stack:
                done = stack.pop()
                follows = tokens[index + 1].value if index + 1 < len(tokens) else ""
                definition = done.definition or (bool(done.opener) and follows == "{")
                if len(done.members) >= 2 or (definition and done.members):
                    optional = frozenset(done.optional) if definition else frozenset()
                    members = tuple(done.members)
                    found.append(Collection(members, done.line, done.key, done.opener, definition, optional))
            continue
        if not stack:
            if token.kind is TokenKind.STRING:
                _words(token, found)
            continue
        _read_member(stack[-1], tokens, index, found)
    if language is Language.PROSE or language is Language.SHELL:
        found += _listed_lines(lines)
    return found


_DEFINES = frozenset({"def", "function", "func", "fn"})


def _opener(tokens: tuple[Token, ...], index: int) -> tuple[str, bool]:
    """The name a ``(`` at ``index`` follows (a call's or a definition's), and whether it defines it."""
    if tokens[index].value != "(" or index < 1 or tokens[index - 1].kind is not TokenKind.NAME:
        return "", False
    return tokens[index - 1].value, index >= 2 and tokens[index - 2].value in _DEFINES


def _read_member(open_: _Open, tokens: tuple[Token, ...], index: int, found: list[Collection]) -> None:
    token = tokens[index]
    if token.kind is TokenKind.PUNCT and token.value in {",", ";"}:
        open_.expecting, open_.tail = True, -1
    elif open_.expecting and token.kind is TokenKind.PUNCT and token.value in {"*", "**", "..."}:
        open_.optional.add("*")  # ``*args``, ``**kwargs``, ``...rest``: the member that follows
    elif open_.expecting and token.kind in {TokenKind.STRING, TokenKind.NAME, TokenKind.NUMBER}:
        open_.members.append(token.value)
        open_.expecting, open_.tail = False, index
        if "*" in open_.optional:
            open_.optional.discard("*")
            open_.optional.add(token.value)
        if token.kind is TokenKind.STRING:
            _words(token, found)
    elif open_.tail == index - 2 and tokens[index - 1].value == "." and token.kind is TokenKind.NAME:
        open_.members[-1] = f"{open_.members[-1]}.{token.value}"  # ``self.prefix``: one member, dotted
        open_.tail = index
    elif token.value == "=" and open_.members and not open_.expecting:
        open_.optional.add(open_.members[-1])  # ``sleep=gen.sleep``: a parameter with a default
        open_.tail = -1
    elif token.kind is not TokenKind.PUNCT or token.value != ".":
        open_.tail = -1 if token.value != ":" else open_.tail


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


# A bare item starts where a word does (a search tried every position inside a long word), and runs
# of spaces are crossed once: linear in the fact.
_ITEM = r"(?:`[^`\n]{1,60}`|\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'|(?<![\w.\-:\\@])[\w.\-:\\@]+(?:\(\))?)"
_ENUMERATION = re.compile(
    rf"{_ITEM}(?:\s*+(?:,|;)\s*+{_ITEM}){{1,40}}(?:\s*+,?\s*+(?:and|or|plus|as well as)\s+{_ITEM})?"
    rf"|{_ITEM}(?:\s*+,\s*+{_ITEM}){{0,40}}\s*+,?\s*+(?:and|or)\s+{_ITEM}"
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
    r"(?i)(?:\b(?:takes|accepts|parameters|arguments|signature|with|is|are)\b[^()\n]{0,30}|(?<![\w.])(?P<callee>[\w.]+)`?\s*)`?"
    r"\((?P<inner>[^()\n]{0,300})\)`?"
)
_PARAMETER = re.compile(r"\s*(\*{0,2}[A-Za-z_]\w*)\s*(?:[:=][^,]*)?\s*")


def parameter_lists(reading: Reading) -> list[Enumeration]:
    """The parameter lists a fact writes out (```(request, stream=False)```, "accepts the parameters
    (a, b)"): their names, in order; a parameter list is a whole list."""
    found = []
    for match in _PARAMETERS.finditer(reading.fact):
        if match.group("callee") and reading.fact[match.end("callee") : match.start("inner")].strip("`") != "(":
            continue  # "a field (H:MM:SS)": a remark in brackets, not a call or a signature
        inner = match.group("inner")
        parts = [p for p in inner.split(",") if p.strip()] if inner.strip() else []
        names = [_PARAMETER.fullmatch(p) for p in parts]
        if names and all(names) and not any(n.group(1) in STOP for n in names if n):
            items = tuple(n.group(1).lstrip("*") for n in names if n)
            found.append(
                Enumeration(
                    items,
                    match.start("inner"),
                    match.end("inner"),
                    ", ",
                    closed=True,
                    parameters=True,
                    callee=match.group("callee") or "",
                )
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
