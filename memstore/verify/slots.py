"""The values code gives, and what it gives them to: the other side of `memstore.verify.reading`.

A *slot* is one literal value in a region of code (`memstore.verify.evidence.Region`) with the
names it is given to: ``default='always'`` in ``click.option('-q', '--quote', ...)`` is the string
``always`` given to ``default``, inside a call of ``option`` with the option ``--quote``;
``max-line-length = 100`` in setup.cfg is the number 100 given to ``max-line-length``;
``"version": "8.3.0"`` in package.json is the version 8.3.0 given to ``version``. The key is read
from the tokens around the value (an ``=`` or a ``:`` before it, the call or the bracket it is in),
the same way in every language, so a fact's value can be paired with the code's whatever the file.

Whether a value a fact states is the code's value is `memstore.verify.same`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from memstore.verify.mentions import MentionKind
from memstore.verify.tokens import Language, Token, TokenKind, number_value
from memstore.verify.words import word_stems

__all__ = ["FLAGS", "Slot", "lower_bound", "slots_of", "value_kind"]

FLAGS = {"True": "True", "False": "False", "None": "None", "true": "True", "false": "False", "null": "None",
          "nil": "None", "undefined": "None", "yes": "True", "no": "False", "on": "True", "off": "False"}  # fmt: skip
_ASSIGN = frozenset({"=", ":", ":=", "=>", "?:", "+=", "|="})
_MARKS = frozenset({"(", ")", "[", "]", "{", "}", ";"})  # what `_keys` looks back for
_URL = re.compile(r"(?:https?|ftp|wss?)://\S+")
_PIN = re.compile(r"(?:===|==|>=|<=|~=|!=|\^|~|>|<)\s*v?\d")
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+.]?[A-Za-z]+\d*)?")
_ADDRESS = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")  # 127.0.0.1: an address, not a version


@dataclass(frozen=True, slots=True)
class Slot:
    """One literal value of a region and what it is given to.

    Attributes:
        kind: number, string, flag, version, pin or URL.
        value: its comparable form (as `memstore.verify.mentions.Mention.value`).
        text: as the code writes it (quotes included), for a correction.
        keys: the names it is given to, innermost first (``default``, then ``--quote``, ``option``).
        index: the token's index in the region.
        line: its line in the region (0-based).
    """

    kind: MentionKind
    value: str
    text: str
    keys: tuple[str, ...]
    index: int
    line: int

    @property
    def key_stems(self) -> frozenset[str]:
        return frozenset(s for key in self.keys for s, _ in word_stems(key.strip("-")))


def value_kind(token: Token) -> tuple[MentionKind, str] | None:
    """The kind and comparable value of a literal token, or None for a token that is no value."""
    if token.kind is TokenKind.NUMBER:
        if token.value.count(".") >= 2 or not re.fullmatch(r"-?[\d.]+", token.value):
            return MentionKind.VERSION, token.value
        return MentionKind.NUMBER, token.value
    if token.kind is TokenKind.NAME and token.value in FLAGS and token.value not in {"yes", "no", "on", "off"}:
        return MentionKind.FLAG, FLAGS[token.value]
    if token.kind is TokenKind.STRING:
        text = token.value
        if _URL.fullmatch(text.strip()):
            return MentionKind.URL, text.strip()
        if _PIN.match(text.strip()):
            return MentionKind.PIN, re.sub(r"\s+", "", text.strip())
        if _VERSION.fullmatch(text.strip()) and not _ADDRESS.fullmatch(text.strip()):
            return MentionKind.VERSION, text.strip().removeprefix("v")
        return MentionKind.STRING, text
    return None


def _annotated(tokens: tuple[Token, ...], end: int) -> int | None:
    """The index of the name an annotation ending at ``end`` belongs to (``name: t.Optional[str]``,
    ``name: "T"``), or None when the tokens before ``end`` are no annotation."""
    depth, at = 0, end
    while at >= 0 and end - at < 40:
        value = tokens[at].value
        if value in {"]", ")"}:
            depth += 1
        elif value in {"[", "("}:
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and value == ":":
            return at - 1 if at >= 1 and tokens[at - 1].kind is TokenKind.NAME else None
        elif depth == 0 and (value in {",", "=", ";", "{", "}"} or tokens[at].kind is TokenKind.NUMBER):
            return None
        at -= 1
    return None


_LOOKUPS = frozenset({"get", "pop", "setdefault", "getenv", "getattr"})


def _fallback_of(tokens: tuple[Token, ...], index: int) -> str:
    """The key a value is the fallback of, when it is the last argument of a lookup by that key:
    ``d.get('key', value)``, ``kwargs.pop('key', value)``, ``os.getenv('KEY', value)``,
    ``getattr(obj, 'name', value)``."""
    if index < 4 or tokens[index - 1].value != "," or tokens[index - 2].kind is not TokenKind.STRING:
        return ""
    if index + 1 < len(tokens) and tokens[index + 1].value != ")":
        return ""
    opener = index - 3
    if tokens[opener].value == "," and tokens[opener - 1].kind is TokenKind.NAME:
        opener -= 2  # getattr(obj, 'name', value)
    if opener < 1 or tokens[opener].value != "(" or tokens[opener - 1].value not in _LOOKUPS:
        return ""
    return tokens[index - 2].value


def _word_before(tokens: tuple[Token, ...], index: int) -> tuple[str, ...]:
    """In prose, the word a value follows on its line ("listens on port `8080`"): what it is of."""
    before = tokens[index - 1] if index else None
    if before is None or before.line != tokens[index].line or before.kind is not TokenKind.NAME:
        return ()
    return (before.value,) if len(before.value) >= 3 and before.value.isalpha() else ()


def _subscript_key(tokens: tuple[Token, ...], at: int) -> bool:
    """Whether the ``=`` at ``at`` assigns to a subscript by a string: ``kwargs["lock_name"] =``."""
    return (
        at >= 3
        and (tokens[at - 3].value, tokens[at - 1].value) == ("[", "]")
        and (tokens[at - 2].kind is TokenKind.STRING)
    )


def _enclosing_keys(tokens: tuple[Token, ...], index: int, at: int, window: int, keys: list[str]) -> None:
    """Add to ``keys`` the calls and brackets the value at ``index`` is inside, looking back from
    ``at`` to ``window``, with their keys and option strings; at most four keys in all."""
    depth = 0
    for back in range(at, window, -1):
        token = tokens[back]
        if token.value in {")", "]", "}"}:
            depth += 1
        elif token.value in {"(", "[", "{"}:
            if depth:
                depth -= 1
                continue
            before = back - 1
            if before >= 0 and tokens[before].kind is TokenKind.NAME:
                keys.append(tokens[before].value)
            elif (
                before >= 1
                and tokens[before].value in _ASSIGN
                and tokens[before - 1].kind in {TokenKind.NAME, TokenKind.STRING}
            ):
                keys.append(tokens[before - 1].value)
            keys += [
                t.value for t in tokens[back + 1 : index] if t.kind is TokenKind.STRING and t.value.startswith("-")
            ]
            if len(keys) >= 4:
                break
        elif depth == 0 and token.kind is TokenKind.PUNCT and token.value == ";":
            break


def _keys(tokens: tuple[Token, ...], index: int, marks: list[int]) -> tuple[str, ...]:
    """The names the value at ``index`` is given to: the key before an ``=`` or ``:``, then the
    calls and brackets it is inside, with their keys and their option strings (``--quote``).
    ``marks``: the positions of the brackets and ``;`` among ``tokens``, in order."""
    keys: list[str] = []
    at = index - 1
    if at >= 0 and tokens[at].value == "-":
        at -= 1
    if at >= 1 and tokens[at].value in {"=", ":="}:
        named = _annotated(tokens, at - 1)  # ``usecwd: bool = False``: the name, not its type
        if named is not None:
            keys.append(tokens[named].value)
            at = named - 1
        elif _subscript_key(tokens, at):
            keys.append(tokens[at - 2].value)  # ``kwargs["lock_name"] = "mp_lock"``
            at -= 4
    if (
        not keys
        and at >= 1
        and tokens[at].value in _ASSIGN
        and tokens[at - 1].kind in {TokenKind.NAME, TokenKind.STRING}
    ):
        keys.append(tokens[at - 1].value)
        at -= 2
        while at >= 1 and tokens[at].value in {"-", "."} and tokens[at - 1].kind is TokenKind.NAME:
            keys[-1] = tokens[at - 1].value + tokens[at].value + keys[-1]  # max-line-length, a.b.c
            at -= 2
    if not keys and at >= 1 and tokens[at].value in {"or", "||", "??"} and tokens[at - 1].kind is TokenKind.NAME:
        keys += [tokens[at - 1].value, "default"]  # ``case or 'upper'``: the value case falls back to
        at -= 2
    if not keys and (fallback := _fallback_of(tokens, index)):
        keys += [fallback, "default"]  # ``kwargs.pop('buf_size', 256)``: the value buf_size falls back to
    window = max(-1, index - 200)
    last = bisect.bisect_right(marks, at)
    if not last or marks[last - 1] <= window:  # no bracket and no ``;`` to look back for (a run of values)
        return tuple(dict.fromkeys(keys))
    _enclosing_keys(tokens, index, at, window, keys)
    return tuple(dict.fromkeys(keys))


def _slots(tokens: tuple[Token, ...], lines: tuple[str, ...], language: Language) -> tuple[Slot, ...]:
    found: list[Slot] = []
    marks = [index for index, token in enumerate(tokens) if token.value in _MARKS]
    for index, token in enumerate(tokens):
        kind = value_kind(token)
        if kind is None:
            continue
        if (
            token.kind is TokenKind.STRING
            and index + 1 < len(tokens)
            and tokens[index + 1].value == ":"
            and (index + 2 >= len(tokens) or tokens[index + 2].value != ":")
        ):
            continue  # ``"node": ...``: a key of an object, not a value
        value = kind[1]
        if (
            kind[0] is MentionKind.NUMBER
            and index
            and tokens[index - 1].value == "-"
            and (index < 2 or tokens[index - 2].kind is TokenKind.PUNCT)
        ):
            value = "-" + value
        keys = _keys(tokens, index, marks)
        if language is Language.PROSE:
            keys = keys or _word_before(tokens, index)
            if token.text.startswith("`") and re.fullmatch(r"\d+(?:\.\d+)?", value):
                kind = (MentionKind.NUMBER, number_value(value))  # a number in a code span of prose: `8080`
                value = kind[1]
        found.append(Slot(kind[0], value, token.text, keys, index, token.line))
    if language in {Language.SHELL, Language.PROSE}:
        found += _line_values(lines, len(tokens))
    found += _requirements(found, lines, language, len(tokens) + len(lines))
    return tuple(found)


_REQUIREMENT = re.compile(
    r"^\s*[\"']?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[\w,\s-]+\])?\s*"
    r"(?P<spec>(?:[<>=!~^]=?|===)\s*v?[\w.*+-]+(?:\s*,\s*(?:[<>=!~^]=?|===)\s*v?[\w.*+-]+)*)"
)


def _requirements(found: list[Slot], lines: tuple[str, ...], language: Language, base: int) -> list[Slot]:
    """Pins of requirements (``setuptools >= 21.0.0,!=24.0.0``, ``sh>=2``, ``"jest": "^29.3.1"``): the
    specifier as a pin given to its project, from a string of the code or a line of its own."""
    pins = []
    texts = [(s.value, s.line) for s in found if s.kind is MentionKind.STRING]
    if language in {Language.SHELL, Language.PROSE}:
        texts += [(line, number) for number, line in enumerate(lines)]
    for number, (text, line) in enumerate(texts):
        match = _REQUIREMENT.match(text)
        if match is not None:
            spec = re.sub(r"\s+", "", match["spec"])
            pins.append(Slot(MentionKind.PIN, spec, match["spec"], (match["name"],), base + number, line))
    for slot in found:  # "jest": "^29.3.1": a version range given to a package name
        if slot.kind in {MentionKind.STRING, MentionKind.VERSION} and re.fullmatch(r"[\^~]\d[\w.*+-]*", slot.value):
            pins.append(Slot(MentionKind.PIN, slot.value, slot.text, slot.keys, slot.index, slot.line))
    return pins


def lower_bound(spec: str) -> str | None:
    """The version a pin starts from (``>=21.0.0,!=24.0.0`` -> ``21.0.0``; ``^29.3.1`` -> ``29.3.1``)."""
    match = re.search(r"(?:>=|\^|~=|~|==|===)\s*v?(\d[\w.*+-]*)", spec)
    return match.group(1) if match else None


# The value runs to a comment or the end, its trailing spaces aside: spelled out possessively, since
# a lazy value before ``\s*`` tried every run of spaces once per character before it (quadratic).
_SETTING = re.compile(
    r"\s*+(?:[-*]\s++)?([A-Za-z_][\w.-]*+)\s*+[:=]\s*+"
    r"(?P<value>[^\s#;](?:[^\s#;]++|\s++(?=[^\s#;]))*+)\s*+(?:[#;].*)?$"
)


def _line_values(lines: tuple[str, ...], base: int) -> list[Slot]:
    """Unquoted settings of configuration files: ``max-line-length = 100``, ``universal: 1``,
    ``exclude = .tox,.git``: the whole value as a string, given to its key."""
    found = []
    for number, line in enumerate(lines):
        match = _SETTING.match(line)
        if match is None or match["value"][:1] in {'"', "'", "[", "{"}:
            continue
        value = match["value"].strip()
        kind = MentionKind.STRING
        if _URL.fullmatch(value):
            kind = MentionKind.URL
        elif _PIN.match(value):
            kind, value = MentionKind.PIN, re.sub(r"\s+", "", value)
        found.append(Slot(kind, value, match["value"].strip(), (match.group(1),), base + number, number))
    return found


def slots_of(tokens: tuple[Token, ...], lines: tuple[str, ...], language: Language) -> tuple[Slot, ...]:
    """Every literal value of a region's tokens (the tokens of ``lines``, comments left out), with
    its keys (see `Slot`). Kept by the lines they come from: memories citing one statement share
    them."""
    key = (lines, language)
    found = _KEPT.get(key)
    if found is None:
        if len(_KEPT) >= 4096:
            _KEPT.clear()
        found = _KEPT[key] = _slots(tokens, lines, language)
    return found


_KEPT: dict[tuple[tuple[str, ...], Language], tuple[Slot, ...]] = {}
