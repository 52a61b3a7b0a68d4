"""The code behind one citation, as it was when the memory was written and as it is now.

A judge compares a fact with code, and a change with the fact; both need the same reading of a
citation: the cited lines widened to the whole statements they are part of (a wrapped call, a
multi-line dictionary, a signature), the blocks that enclose them (``def load(...)``, ``try:``,
``[testenv]``), and, where a change touched them, what the change took away and what it put in.
`Evidence` holds that reading for one citation: ``then`` from the commit the citation was made at,
``now`` from the codebase judged, and the token difference between the two.

Without the citation's commit in the repository the recorded snippet stands for ``then`` (no
context around it); without a snippet either, ``then`` is unknown and judges fall back on ``now``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from memstore.verify.blocks import enclosing_scope, parents, section_span, statement_span
from memstore.verify.citations import CitationCheck
from memstore.verify.codebase import Codebase
from memstore.verify.lines import align, diff_opcodes, lines_of
from memstore.verify.slots import Slot, slots_of
from memstore.verify.tokens import Language, Token, TokenKind, language_of, tokenize
from memstore.verify.words import stem, word_stems

__all__ = ["Evidence", "Region", "evidence_of"]

_REGION_LINES = 80  # the most lines of code read for one citation, then or now


_BRACES = re.compile(r"(?<!\w)(\w++)\{([\w.,\s-]{1,200})\}")  # from a word's start only: linear


@dataclass(frozen=True)
class Region:
    """Lines of one file (0-based, ``first``..``last`` inclusive) and their tokens."""

    path: str
    language: Language
    first: int
    last: int
    lines: tuple[str, ...] = field(repr=False)

    @cached_property
    def text(self) -> str:
        return "\n".join(self.lines)

    @cached_property
    def tokens(self) -> tuple[Token, ...]:
        """The code tokens (comments aside; in prose, every token)."""
        return tuple(t for t in tokenize(self.text, self.language) if t.kind is not TokenKind.COMMENT)

    @cached_property
    def slots(self) -> tuple[Slot, ...]:
        """The literal values of its code and what they are given to (`memstore.verify.slots`)."""
        return slots_of(self.tokens, self.lines, self.language)

    @cached_property
    def stems(self) -> Counter[str]:
        """The words of its code tokens, stemmed (names split at case changes and underscores, the
        words inside strings), and its numbers as written: what a fact's words are compared with."""
        found: Counter[str] = Counter()
        for token in self.tokens:
            if token.kind is TokenKind.NUMBER:
                found[token.value] += 1
            elif token.kind in {TokenKind.NAME, TokenKind.STRING}:
                found.update(s for s, _ in word_stems(token.value))
        if self.language in {Language.SHELL, Language.PROSE}:  # tox's py{38,39}: py38 and py39
            for match in _BRACES.finditer(self.text):
                found.update(stem(match.group(1) + part.strip()) for part in match.group(2).split(","))
        return found


@dataclass(frozen=True)
class Evidence:
    """One citation read then and now.

    Attributes:
        check: the citation's check against the codebase.
        then: the cited statements when the memory was written (None: unknown).
        now: the statements that stand in their place now (None: nothing readable).
        then_scope, now_scope: the definitions that enclose them, then and now (None: at top level).
    """

    check: CitationCheck
    then: Region | None
    now: Region | None
    then_scope: Region | None
    now_scope: Region | None
    then_parents: tuple[tuple[int, str], ...] = ()
    now_parents: tuple[tuple[int, str], ...] = ()
    then_section: Region | None = None
    now_section: Region | None = None
    rewritten: str | None = None  # a one-line citation rewritten one for one: the line in its place
    now_defined: str = ""  # the definitions, in the file now, of names the change brought into the statements

    @cached_property
    def defined_slots(self) -> tuple[Slot, ...]:
        """The values of `now_defined` (where values the change moved out of the statements went)."""
        if not self.now_defined or self.now is None:
            return ()
        lines = tuple(self.now_defined.split("\n"))
        tokens = tuple(t for t in tokenize(self.now_defined, self.now.language) if t.kind is not TokenKind.COMMENT)
        return slots_of(tokens, lines, self.now.language)

    @cached_property
    def now_context(self) -> str:
        """What the statements now say, with the headers of the definitions around them and the
        definitions of the names the change brought in: a message moved into a constant, a class
        name a ``super()`` call dropped, still stand here."""
        if self.now is None:
            return ""
        return "\n".join([self.now.text, *(h for _, h in self.now_parents), self.now_defined])

    @cached_property
    def changed(self) -> bool:
        """Whether the code tokens of the cited statements differ between then and now."""
        if self.then is None or self.now is None:
            return False
        return [t.value for t in self.then.tokens] != [t.value for t in self.now.tokens]

    @cached_property
    def diff(self) -> tuple[Counter[str], Counter[str], tuple[tuple[Token, Token], ...]]:
        """Token values the change took away, those it put in, and tokens replaced one for one."""
        if self.then is None or self.now is None:
            return Counter(), Counter(), ()
        old, new = self.then.tokens, self.now.tokens
        a, b = [t.value for t in old], [t.value for t in new]
        removed: Counter[str] = Counter()
        added: Counter[str] = Counter()
        swaps: list[tuple[Token, Token]] = []
        for tag, i1, i2, j1, j2 in _opcodes(a, b):
            if tag == "equal":
                continue
            removed.update(a[i1:i2])
            added.update(b[j1:j2])
            if tag == "replace":
                olds = [t for t in old[i1:i2] if t.kind is not TokenKind.PUNCT]
                news = [t for t in new[j1:j2] if t.kind is not TokenKind.PUNCT]
                if len(olds) == len(news):
                    swaps += zip(olds, news, strict=True)
                elif len(olds) == 1 and len(news) >= 1:
                    same = [t for t in news if t.kind is olds[0].kind]
                    if len(same) == 1:
                        swaps.append((olds[0], same[0]))
        return removed - added, added - removed, tuple(swaps)

    @cached_property
    def guards_changed(self) -> bool:
        """Whether the blocks that enclose the cited lines are not the same then and now (a ``try``
        or an ``if`` added around an unchanged line)."""
        if not self.then_parents or self.now is None:
            return False

        def heads(found: tuple[tuple[int, str], ...]) -> list[str]:
            return [" ".join(h.split()) for _, h in found]

        return heads(self.then_parents) != heads(self.now_parents)


_DIFF_TOKENS = 4_000  # tokens compared one by one; past this a region is compared as a bag of words


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The diff of two token lists (patience diff, compiled); one replacement of the whole when they
    are too long to compare token by token."""
    if len(a) + len(b) <= _DIFF_TOKENS:
        return diff_opcodes(a, b)
    return [("replace", 0, len(a), 0, len(b))] if a != b else [("equal", 0, len(a), 0, len(b))]


_REGION_CHARS = 40_000  # a region's text is read up to this many characters (a minified line is cut)


def _region(path: str, lines: Sequence[str], first: int, last: int) -> Region:
    language = language_of(path)
    first, last = max(0, first), min(len(lines) - 1, last)
    last = min(last, first + _REGION_LINES - 1)
    kept, size = [], 0
    for line in lines[first : last + 1]:
        kept.append(line[: max(0, _REGION_CHARS - size)])
        size += len(kept[-1]) + 1
    return Region(path, language, first, last, tuple(kept))


def evidence_of(check: CitationCheck, codebase: Codebase) -> Evidence:
    """Read one citation then and now (see `Evidence`)."""
    citation = check.citation
    language = language_of(citation.path)
    start, size = citation.line - 1, citation.last_line - citation.line + 1
    then = then_scope = then_section = None
    then_parents: tuple[tuple[int, str], ...] = ()
    old_lines: tuple[str, ...] | None = None
    old_key = ""
    if citation.commit is not None and codebase.has_commit(citation.commit):
        read = codebase.read_at(citation.commit, citation.path)
        if read.ok and start + size <= len(read.lines):
            old_lines, old_key = read.lines, read.key
            first, last = statement_span(read.lines, start, start + size - 1, language)
            then = _region(citation.path, read.lines, first, last)
            found = enclosing_scope(read.lines, start)
            then_scope = _region(citation.path, read.lines, *found) if found else None
            then_parents = parents(read.lines, start)
            if language in {Language.PROSE, Language.SHELL}:
                then_section = _region(citation.path, read.lines, *section_span(read.lines, start, start + size - 1))
    if then is None and check.snippet is not None:
        snippet = tuple(check.snippet.split("\n"))
        then = Region(citation.path, language, start, start + len(snippet) - 1, snippet)
    now = now_scope = now_section = None
    rewritten: str | None = None
    now_parents: tuple[tuple[int, str], ...] = ()
    defined = ""
    if check.status.readable and check.line is not None:
        current = codebase.read(check.path)
        if current.ok and current.lines:
            first, last = check.line - 1, (check.end_line or check.line) - 1
            if old_lines is not None and check.path == citation.path and check.status.value == "changed":
                # what took the cited lines' place: between the lines around them that survived
                alignment = align(lines_of(old_lines, old_key), lines_of(current.lines, current.key))
                lo, hi = alignment.region(start, size, len(current.lines))
                one = alignment.rewritten(start) if size == 1 else None
                rewritten = current.lines[one] if one is not None else None
                if hi > lo and hi - lo <= 3 * size + 12:
                    first, last = lo, hi - 1
            first, last = statement_span(current.lines, first, min(last, len(current.lines) - 1), language)
            now = _region(check.path, current.lines, first, last)
            found = enclosing_scope(current.lines, first)
            now_scope = _region(check.path, current.lines, *found) if found else None
            now_parents = parents(current.lines, check.line - 1)
            if then is not None and then.lines != now.lines:  # only a change brings names in
                defined = _definitions(then, now, current.lines, current.key)
                defined += _imported(then, now, codebase, check.path)
            if language in {Language.PROSE, Language.SHELL}:
                now_section = _region(check.path, current.lines, *section_span(current.lines, first, last))
    return Evidence(
        check, then, now, then_scope, now_scope, then_parents, now_parents, then_section, now_section, rewritten,
        defined,
    )  # fmt: skip


def _definitions(then: Region, now: Region, lines: tuple[str, ...], key: str) -> str:
    """The statements of ``lines`` that assign the names ``now`` uses and ``then`` did not (at most
    three): where a value the change took out of the statements went (``raise ImportError(WARN)``)."""
    before = {t.value for t in then.tokens if t.kind is TokenKind.NAME}
    brought = [t.value for t in now.tokens if t.kind is TokenKind.NAME and t.value not in before]
    if not brought:
        return ""
    assigned = _assigned(lines, key)
    found = []
    for name in list(dict.fromkeys(brought))[:3]:
        at = assigned.get(name)
        if at is not None:
            first, last = statement_span(lines, at, at, now.language)
            found.append("\n".join(lines[first : min(last, first + 20) + 1]))
    return "\n".join(found)[:_REGION_CHARS]  # read as a region is: a minified line is cut


_FROM_IMPORT = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([\w\s,]+)\)?", re.MULTILINE)


def _imported(then: Region, now: Region, codebase: Codebase, path: str) -> str:
    """The definitions, in the module they are imported from, of names the statements assigned
    then and import now (``RETRY_LIMIT = 40`` became ``from .limits import RETRY_LIMIT``)."""
    if now.language is not Language.PYTHON or "import" not in now.text:
        return ""
    before = {t.value for t in then.tokens if t.kind is TokenKind.NAME}
    found = []
    for match in _FROM_IMPORT.finditer(now.text):
        names = [n.split(" as ")[0].strip() for n in match.group(3).split(",")]
        wanted = [n for n in names if n in before]
        for candidate in _module_paths(match.group(1), match.group(2), path) if wanted else []:
            read = codebase.read(candidate)
            if not read.ok:
                continue
            assigned = _assigned(read.lines, read.key)
            for name in wanted:
                at = assigned.get(name)
                if at is not None:
                    first, last = statement_span(read.lines, at, at, Language.PYTHON)
                    found.append("\n".join(read.lines[first : min(last, first + 20) + 1]))
            break
    return "".join("\n" + text for text in found)


def _module_paths(dots: str, module: str, path: str) -> list[str]:
    """Where a module an import names can stand: beside the importing file (relative), from the root
    of the repository, or under ``src/``."""
    parts = [p for p in module.split(".") if p]
    if dots:
        base = PurePosixPath(path).parent
        for _ in range(len(dots) - 1):
            base = base.parent
        stem = "/".join([*([] if str(base) == "." else [str(base)]), *parts])
        return [f"{stem}.py", f"{stem}/__init__.py"] if parts else []
    stem = "/".join(parts)
    return [f"{stem}.py", f"{stem}/__init__.py", f"src/{stem}.py", f"src/{stem}/__init__.py"] if parts else []


_ASSIGNMENT = re.compile(r"^\s*(?:(?:export\s+)?(?:const|let|var)\s+)?([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=(?!=)")
_ASSIGNED: dict[str, dict[str, int]] = {}


def _assigned(lines: tuple[str, ...], key: str) -> dict[str, int]:
    """Each name a line of the file assigns, and the first line that does (kept by the file's content key)."""
    found = _ASSIGNED.get(key) if key else None
    if found is None:
        found = {}
        for index, line in enumerate(lines):
            match = _ASSIGNMENT.match(line)
            if match is not None:
                found.setdefault(match.group(1), index)
        if key:
            if len(_ASSIGNED) >= 256:
                _ASSIGNED.clear()
            _ASSIGNED[key] = found
    return found
