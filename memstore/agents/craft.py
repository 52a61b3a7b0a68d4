"""What the built-in agents know how to do with a repository, as plain rules over lines.

Where a setting is kept (a line that assigns a value to a key named like it), what value it
holds, how to write a new one, how to add an entry next to its siblings, how to make a line
follow a convention shown elsewhere, which value in a fact answers a question. No language is
parsed: the rules are simple enough for a reader to check, and they work as well (or as
badly) on TypeScript, Go, Python, JSON and Markdown.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache

from memstore.agents.statements import statement
from memstore.verify import ClaimKind, FactClaim, claims_of, identifier_words, light_stem

__all__ = [
    "Definition",
    "answer_from_fact",
    "asked_name",
    "call_names",
    "called_names",
    "convention_pairs",
    "definition",
    "entry_names",
    "field_name",
    "identifiers",
    "instruction_skips",
    "linked_names",
    "name_pattern",
    "names_like",
    "names_near",
    "same_name",
    "shared_entries",
    "subject_names",
    "subject_words",
    "with_entry",
    "with_value",
]

_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<key>[A-Za-z_][\w.-]*)[\"']?\s*(?::=|=|:)\s*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|v?\d[\w.]*(?:-[0-9A-Za-z.]+)?|[A-Za-z_][\w.-]*(?=\s*[,;)]?\s*$))"
)
_TABLE_ROW = re.compile(r"^\s*\|(?P<key>[^|]+)\|(?P<value>[^|]+)\|")
_LABEL = re.compile(  # a whole line "label: value", the label in words ("Log files kept: 14d")
    r"^\s*(?:[-*]\s+)?(?P<key>[A-Za-z][A-Za-z0-9 _().-]{0,60}?)\s*:\s+"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[\w./-]+)\s*,?\s*$"
)
_GENERIC = frozenset({"value", "setting", "current", "number", "name", "what", "which"})
_INSTRUCTION = re.compile(
    r"(?i)\b(?:never|do not|don't|must not)\s+(?:edit|change|touch|modify|update)\s+(?P<what>[^.;:,]+)"
)
_FIELD = re.compile(
    r"""^\s*(?:"(?P<json>[A-Za-z_]\w*)"\s*:|(?P<py>[A-Za-z_]\w*)\s*:\s*[A-Za-z"'\[]|(?P<sql>[a-z_]\w*)\s+[A-Z]+\b)"""
)
_CALL_ROOT = re.compile(r"^(?:await\s+|new\s+)?(?P<root>[A-Za-z_]\w*)")
_IMPORT = re.compile(r"^\s*(?:import\b|from\s+\S+\s+import\b|(?:const|let|var)\s+.+=\s*require\()")


def subject_words(subject: str) -> list[str]:
    """The words of a subject that name it (identifiers split, lower case, generic words aside)."""
    return [w for w in identifier_words(subject) if w not in _GENERIC] or identifier_words(subject)


def _is_identifier(subject: str) -> bool:
    return " " not in subject.strip() and bool(re.fullmatch(r"[A-Za-z_][\w.-]*", subject.strip()))


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def name_pattern(subject: str) -> str:
    """A case-insensitive regular expression for the places a subject is named: an identifier in
    any of its spellings (``RETRY_LIMIT_3``, ``retryLimit3``, ``retry-limit-3``), or a phrase by
    its neighbouring word pairs (``pool size`` finds ``MAX_POOL_SIZE``)."""
    parts = subject_words(subject)
    if _is_identifier(subject):
        return r"(?<![A-Za-z0-9])" + r"[\W_]*".join(re.escape(p) for p in parts) + r"(?![A-Za-z0-9])"
    stems = [re.escape(light_stem(p)) for p in parts]
    if len(stems) == 1:
        return rf"(?<![A-Za-z0-9]){stems[0]}"
    return "|".join(rf"{a}\w*[\W_]*{b}" for a, b in itertools.pairwise(stems))


_QUOTED = re.compile(r"\"(?P<double>[^\"\n]{2,80})\"|'(?P<single>[^'\n]{2,80})'|`(?P<code>[^`\n]{2,80})`")


def linked_names(line: str, subject: str) -> list[str]:
    """The other names a line gives beside the subject, where it mentions the subject without
    giving it a value: the quoted strings and code spans of a test's table row (``(3,
    'RETRY_LIMIT_3', 'maxAttempts3', 'Attempts allowed (service 3)')``) or of a doc's "also
    called `maxAttempts3`". A careful reader follows them: they are what the file says the
    subject is called elsewhere. Values and the subject's own spellings are left out."""
    if not re.search(name_pattern(subject), line, re.IGNORECASE) or definition(line) is not None:
        return []
    found = []
    for match in _QUOTED.finditer(line):
        name = (match.group("double") or match.group("single") or match.group("code")).strip()
        if _norm(name) != _norm(subject) and not re.fullmatch(r"v?\d[\w.]*", name) and name != "None":
            found.append(name)
    return list(dict.fromkeys(found))


def same_name(key: str, name: str) -> bool:
    """Whether a key is ``name`` in another spelling (``max_attempts_3`` and ``maxAttempts3``)."""
    return _norm(key) == _norm(name) != ""


def names_like(name: str, subject: str) -> bool:
    """Whether a key names the subject: the same identifier in another spelling, or (for a
    phrase) a key sharing at least half of its words, one of them not a number."""
    if _is_identifier(subject):
        return _norm(name) == _norm(subject)
    wanted = set(subject_words(subject))
    shared = set(identifier_words(name)) & wanted
    return 2 * len(shared) >= len(wanted) and any(not w.isdigit() for w in shared)


def shares_a_word(name: str, subject: str) -> bool:
    """A looser test, for a line found by its value: the key shares a word (not a number)."""
    shared = set(identifier_words(name)) & set(subject_words(subject))
    return any(not w.isdigit() for w in shared)


@dataclass(frozen=True)
class Definition:
    """A line that gives a key a value: where the value stands in the line."""

    key: str
    value: str  # as written, quotes included
    start: int
    end: int

    @property
    def bare(self) -> str:
        """The value without its quotes."""
        return self.value[1:-1] if len(self.value) >= 2 and self.value[0] in "\"'`" else self.value.strip()


@lru_cache(maxsize=1 << 15)
def definition(line: str) -> Definition | None:
    """The key a line assigns and the value it assigns (``KEY = 10``, ``"key": "x"``,
    ``Version: v2.1.4``, a Markdown table row ``| KEY | 10 |``), or None."""
    row = _TABLE_ROW.match(line)
    if row is not None and not set(row.group("key").strip()) <= set("-: "):
        value = row.group("value")
        start = row.start("value") + len(value) - len(value.lstrip())
        return Definition(row.group("key").strip(), value.strip(), start, start + len(value.strip()))
    found = _LABEL.match(line[:2000]) or _ASSIGNMENT.search(line[:2000])
    if found is None:
        return None
    return Definition(found.group("key"), found.group("value"), found.start("value"), found.end("value"))


def with_value(line: str, new: str) -> str:
    """``line`` with the value it assigns replaced by ``new`` (quoted as the old one was); the
    line unchanged when it assigns nothing."""
    found = definition(line)
    if found is None:
        return line
    quote = found.value[0] if found.value[:1] in {'"', "'", "`"} else ""
    return f"{line[: found.start]}{quote}{new}{quote}{line[found.end :]}"


def instruction_skips(fact: str) -> list[str]:
    """What a fact tells an agent never to edit (``never edit docs/``): the words or paths named."""
    return [m.group("what").strip() for m in _INSTRUCTION.finditer(fact)]


def field_name(line: str) -> str | None:
    """The name of the field a line declares (a JSON key, a typed field, a SQL column), or None."""
    return _field(line)


def _field(line: str) -> str | None:
    match = _FIELD.match(line)
    return (match.group("json") or match.group("py") or match.group("sql")) if match is not None else None


def entry_names(lines: list[str]) -> list[str]:
    """The names of the entries a file lists (JSON keys, typed fields, SQL columns), in order: those
    at the deepest indentation, where a list's entries sit (not the keys of the object around it)."""
    fields = [(len(line) - len(line.lstrip()), name) for line in lines if (name := _field(line))]
    if not fields:
        return []
    deepest = max(indent for indent, _ in fields)
    return list(dict.fromkeys(name for indent, name in fields if indent == deepest))


def shared_entries(files: list[list[str]]) -> list[str]:
    """The entries that the files list in common (those of the longest list, if only one lists any)."""
    lists = [names for lines in files if len(names := entry_names(lines)) >= 2]
    if not lists:
        return []
    common = [name for name in lists[0] if sum(name in names for names in lists) >= 2]
    return common or max(lists, key=len)


def with_entry(lines: list[str], siblings: list[str], entry: str, *, json: bool) -> tuple[int, list[str]] | None:
    """Where to add ``entry`` to a file that lists ``siblings``, and the lines to add.

    In a list of fields: a copy of the last field line of a sibling, renamed (inserted before
    it, so a JSON object keeps its commas). In a changelog: a copy of the last item naming a
    sibling, renamed, under its "Unreleased" heading. None when the file shows neither.
    """
    for index in range(len(lines) - 1, -1, -1):
        name = _field(lines[index])
        if name in siblings:
            copy = re.sub(rf"(?<![\w]){re.escape(name)}(?![\w])", entry, lines[index], count=1)
            if json and not copy.rstrip().endswith(","):
                copy = copy.rstrip() + ","
            return index + 1, [copy]
    heading = next((i for i, line in enumerate(lines) if re.match(r"#+\s*\[?unreleased", line, re.IGNORECASE)), None)
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        named = next((s for s in siblings if re.search(rf"(?<![\w]){re.escape(s)}(?![\w])", line)), None)
        if heading is not None and named is not None and line.lstrip().startswith(("- ", "* ")):
            copy = re.sub(rf"(?<![\w]){re.escape(named)}(?![\w])", entry, line, count=1)
            return heading + 2, [copy, ""] if heading + 1 < len(lines) and lines[heading + 1].strip() == "" else [copy]
    return None


def convention_pairs(target: list[str], examples: list[str]) -> list[tuple[int, str, str, str]]:
    """Lines of ``target`` to make like ``examples``: a statement binding the same name through
    another call (``with psycopg.connect(DSN) as connection:`` where the examples say ``with
    get_connection() as connection:``), in the same form. The first example of each wins, so an
    agent puts the lines it was pointed at first. Each as (0-based line, new line, old call
    root, new call root)."""
    shown: dict[str, tuple[str, str]] = {}
    for line in examples:
        parsed = statement(line)
        if parsed is not None and not _IMPORT.match(line):
            shown.setdefault(parsed[1], (line.strip(), parsed[2]))
    pairs = []
    for index, line in enumerate(target):
        parsed = statement(line)
        if parsed is None or _IMPORT.match(line) or parsed[1] not in shown:
            continue
        indent, _, expression = parsed
        example, example_expression = shown[parsed[1]]
        old_root, new_root = _CALL_ROOT.match(expression), _CALL_ROOT.match(example_expression)
        if old_root is None or new_root is None or old_root.group("root") == new_root.group("root"):
            continue
        pairs.append((index, indent + example, old_root.group("root"), new_root.group("root")))
    return pairs


_CALLED = re.compile(r"(?<![\w.])[\w.]++\(")  # tried from a word's start only: linear in the line
_NAME_START = re.compile(r"[A-Za-z_]")


def called_names(line: str) -> Iterator[str]:
    """The names a line calls (``client.get`` of ``client.get(url)``), in order, each from its
    first letter or underscore (``2fa.check(`` calls ``fa.check``)."""
    for match in _CALLED.finditer(line):
        start = _NAME_START.search(match.group())
        if start is not None:
            yield match.group()[start.start() : -1]


def import_of(name: str, lines: list[str]) -> int | None:
    """The 0-based line that imports ``name`` in ``lines``, or None."""
    for index, line in enumerate(lines):
        if _IMPORT.match(line) and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", line):
            return index
    return None


def call_names(fact: str) -> list[str]:
    """The functions a fact names as calls (``get_connection()``), in order."""
    return [c.text[:-2] for c in claims_of(fact) if c.text.endswith("()") and re.fullmatch(r"[\w.]+\(\)", c.text)]


@lru_cache(maxsize=1 << 14)
def identifiers(text: str) -> frozenset[str]:
    """The code identifiers a text names (``RETRY_LIMIT_3``, ``maxFiles``, ``__author__``),
    normalised to compare (kept by text: the stubs ask of the same task and memory texts all
    session long)."""
    found = set()
    for token in re.finditer(r"[A-Za-z_][\w]*", text):
        t = token.group()
        # A name Python reserves (``__version__``) is code, whatever its letters; a module's file
        # name (``__init__.py``) is not: a question names it only to say where to look.
        dunder = _DUNDER.fullmatch(t) and not text.startswith(".py", token.end())
        if "_" in t.strip("_") or re.search(r"[a-z][A-Z]", t) or dunder:
            found.add(_norm(t))
    return frozenset(found)


_DUNDER = re.compile(r"__[A-Za-z]\w*__")
_PLACED = re.compile(r"^\s*`?(?P<name>[\w.]+)`?\s+in\s+`?(?P<module>[\w.]+)`?\s*$")


def subject_names(subject: str, modules: Collection[str]) -> frozenset[str]:
    """The code identifiers a memory's subject names, but for the module a subject written as
    "NAME in MODULE" places its name in, where that module is one of ``modules`` (the cited
    files' modules) and not the name itself: "__title__ in __version__" names ``__title__``, and
    ``__version__`` there is the file ``__version__.py``, not the constant."""
    placed = _PLACED.match(subject)
    if placed is None or _norm(placed["name"]) == _norm(placed["module"]) or placed["module"] not in modules:
        return identifiers(subject)
    return identifiers(placed["name"])


_NAME_QUESTION = re.compile(
    r"(?i)^\s*(?:which|what)\b.*?\b(?P<kind>header|file|function|helper|variable|key|flag|field|column|code|name)s?\b"
)
_NAMED = re.compile(r"`(?P<code>[^`\s]{2,80})`|\"(?P<quoted>[^\"\s]{2,80})\"|'(?P<single>[^'\s]{2,80})'")


def asked_name(question: str) -> str | None:
    """The kind of name a question asks for (``header`` in "Which header carries the API
    version?"), or None for a question about a value."""
    found = _NAME_QUESTION.match(question)
    return found.group("kind").lower() if found else None


def names_near(lines: list[str], kind: str, subject: str) -> list[str]:
    """Names (code spans, quoted strings) on lines that mention ``kind`` and a word of
    ``subject``, the most often given first (ties: first seen)."""
    wanted = [w for w in subject_words(subject) if w != kind]
    counts: dict[str, int] = {}
    for line in lines:
        low = line.lower()
        if kind not in low or (wanted and not any(light_stem(w) in low for w in wanted)):
            continue
        for found in _NAMED.finditer(line):
            name = found.group("code") or found.group("quoted") or found.group("single")
            if not re.fullmatch(r"v?\d[\w.]*", name):  # a value is not a name
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])


_LINE_REFERENCE = re.compile(r"\(?\b(?:at |on )?lines?\s+\d+(?:\s*[-\u2013]\s*\d+)?\)?", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w.-])[\w.-]+(?:/[\w.-]+)*\.\w{1,8}|(?<![\w.-])[\w.-]+(?:/[\w.-]+)+")  # fullmatched
_NUMERIC = re.compile(r"v?\d+(?:[._]\d+)*")


def _as_value(claim: FactClaim) -> FactClaim:
    """A code span holding a number (`` `0.75` ``) is a number."""
    if claim.kind is ClaimKind.CODE and _NUMERIC.fullmatch(claim.text):
        return FactClaim(ClaimKind.NUMBER, claim.text)
    return claim


def answer_from_fact(fact: str, question: str) -> str | None:
    """The value a fact gives in answer to a question: for a question about a command, the
    longest quoted or code text; otherwise the first version or number, then the first quoted
    text; for a question about a name, a code span or identifier too. None when it gives none."""
    claims = [_as_value(c) for c in claims_of(_LINE_REFERENCE.sub("", fact))]  # "(line 43)" says where, not what
    if not claims:
        return None
    if re.search(r"(?i)\bcommand\b", question):
        texts = [c.text for c in claims if c.kind in {ClaimKind.QUOTED, ClaimKind.CODE}]
        if texts:
            return max(texts, key=lambda t: (len(t.split()), len(t)))
    if re.match(r"(?i)\s*which\s+file\b", question):  # the path it gives, not the name it is about
        paths = [c.text for c in claims if c.kind is ClaimKind.CODE and _PATH.fullmatch(c.text)]
        return paths[0] if paths else None
    kinds: list[set[ClaimKind]] = [{ClaimKind.VERSION, ClaimKind.NUMBER}, {ClaimKind.QUOTED}]
    if re.match(r"(?i)\s*(which|what)\b.*\b(name|header|file|function|helper|variable|key)\b", question):
        kinds += [{ClaimKind.CODE}, {ClaimKind.IDENTIFIER}]
    for wanted in kinds:
        found = [c.text for c in claims if c.kind in wanted]
        if found:
            return found[0]
    return None
