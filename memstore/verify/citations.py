"""Checking one citation against a codebase: does the cited text still stand, and where.

With the commit the citation was made at, the cited lines are mapped through the change
from that commit's version of the file to the current one (so a ``}`` or ``return None``
among many follows its own line, not the nearest look-alike). Without it, the snippet is
looked for, taking the occurrence nearest the cited line. Whitespace is compared
collapsed: re-indenting or re-wrapping spaces does not invalidate a citation.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from enum import StrEnum

from memstore.errors import ValidationError
from memstore.model import Citation
from memstore.verify.blocks import definition_names, definition_span
from memstore.verify.claims import code_form
from memstore.verify.codebase import Codebase, FileRead, ReadStatus
from memstore.verify.filetext import is_python
from memstore.verify.lines import Lines, align, lines_of, normalise
from memstore.verify.pycode import TOO_DEEP, too_deep

__all__ = ["CitationCheck", "CitationStatus", "anchor", "line_map", "verify_citation"]


class CitationStatus(StrEnum):
    """What became of a cited location (docs/verification.md)."""

    VALID = "valid"
    MOVED = "moved"
    RENAMED = "renamed"
    CHANGED = "changed"
    LINE_MISSING = "line_missing"
    FILE_MISSING = "file_missing"
    INVALID = "invalid"

    @property
    def usable(self) -> bool:
        """Whether the cited text still stands (possibly elsewhere)."""
        return self in {CitationStatus.VALID, CitationStatus.MOVED, CitationStatus.RENAMED}

    @property
    def readable(self) -> bool:
        """Whether there is current text to judge the memory by."""
        return self.usable or self is CitationStatus.CHANGED


@dataclass(frozen=True)
class CitationCheck:
    """The outcome of checking one citation.

    Attributes:
        citation: the citation checked.
        status: what became of it.
        path: where the file is now (the new path after a rename).
        line: the first line the text stands at now; for CHANGED, the line that took its place.
        end_line: the last line of a range, or None.
        text: what stands at ``line``..``end_line`` now (None when there is nothing to read).
        snippet: the text that was cited (recorded, or recovered from ``citation.commit``).
        problem: why an INVALID citation could not be read.
    """

    citation: Citation
    status: CitationStatus
    path: str
    line: int | None = None
    end_line: int | None = None
    text: str | None = None
    snippet: str | None = None
    problem: str = ""

    @property
    def where(self) -> str:
        """``path:line`` (or ``path:line-end``) of the text now, or the path alone."""
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}" + (f"-{self.end_line}" if self.end_line else "")


def line_map(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[int | None, ...]:
    """For each 0-based line of ``old``, its 0-based line in ``new``, or None if it did not survive.

    Lines are compared with whitespace collapsed; the diff is patience diff, which keeps a
    repeated line (``}``) paired with its own neighbours and stays fast on any file.
    """
    alignment = align(lines_of(old), lines_of(new))
    return tuple(alignment.survived(i) for i in range(len(old)))


@dataclass(frozen=True)
class _Found:
    status: CitationStatus
    start: int | None  # 0-based
    size: int


_SIMILAR_WINDOW = 60  # candidate starts looked at around the anchor for a changed block
_SIMILAR_MAX_CHARS = 4_000  # a block larger than this is placed at its anchor, not compared
_SHORTLIST = 3  # starts compared exactly, of those sharing the most words with the cited block
_WORDS = re.compile(r"\w+|[^\w\s]")


def _locate(old: Lines | None, snippet: tuple[str, ...] | None, new: Lines, start: int, size: int) -> _Found:
    """Where the cited block (0-based ``start``, ``size`` lines) stands in ``new``."""
    if snippet is None:  # nothing to compare: only existence can be checked
        if start + size <= len(new):
            return _Found(CitationStatus.VALID, start, size)
        return _Found(CitationStatus.LINE_MISSING, None, size)
    want = tuple(normalise(line) for line in snippet)
    size = len(want)
    current = new.lines
    anchor = min(start, max(len(new) - 1, 0))
    if old is not None and old.lines[start : start + size] == want:
        alignment = align(old, new)
        mapped = tuple(alignment.survived(i) for i in range(start, start + size))
        first = mapped[0] if mapped else None
        if first is not None and mapped == tuple(range(first, first + size)):
            return _Found(CitationStatus.VALID if first == start else CitationStatus.MOVED, first, size)
        last = mapped[-1] if mapped else None
        if first is not None and last is not None and all(m is not None for m in mapped) and last > first:
            # Every line survived, with lines added in between: the block stands, wider.
            return _Found(CitationStatus.MOVED, first, last - first + 1)
        lo, hi = alignment.region(start, size, len(new))
        anchor = lo
        rewritten = tuple(alignment.rewritten(i) for i in range(start, start + size))
        first = rewritten[0] if rewritten else None
        if first is not None and rewritten == tuple(range(first, first + size)):
            lo, hi, anchor = first, first + size, first  # a one-for-one rewrite: that is its place
    elif start + size <= len(current) and current[start : start + size] == want:
        return _Found(CitationStatus.VALID, start, size)
    else:
        lo, hi = 0, len(new)
    found = new.find(want, anchor)
    if found is not None:
        return _Found(CitationStatus.VALID if found == start else CitationStatus.MOVED, found, size)
    if not current:
        return _Found(CitationStatus.CHANGED, None, size)
    guess = _most_like(want, current, lo, hi, anchor)
    if guess is None:
        guess = min(anchor, len(new) - 1)
    return _Found(CitationStatus.CHANGED, guess, min(size, len(new) - guess))


def _most_like(want: tuple[str, ...], current: tuple[str, ...], lo: int, hi: int, anchor: int) -> int | None:
    """The start near ``anchor`` in ``lo``..``hi`` whose block reads most like ``want`` (ratio >= 0.5).

    Bounded on purpose: at most `_SIMILAR_WINDOW` starts on each side of the anchor, and no
    comparison at all for a block over `_SIMILAR_MAX_CHARS` (it stays at its anchor), so a
    changed citation costs the same in a file of ten lines and in one of half a million.
    """
    size, target = len(want), "\n".join(want)
    if len(target) > _SIMILAR_MAX_CHARS:
        return None
    first = max(lo, anchor - _SIMILAR_WINDOW)
    last = min(max(hi, lo + 1), len(current) - size + 1, anchor + _SIMILAR_WINDOW + 1)
    # A cheap first pass (the words each candidate block shares with the cited one) picks the few
    # starts worth the exact comparison: difflib on every start of the window was most of the cost.
    words = set(_WORDS.findall(target))
    lines = [set(_WORDS.findall(line)) for line in current[first : last + size]]
    shortlist = []
    for i in range(first, last):
        block = set().union(*lines[i - first : i - first + size]) if size > 1 else lines[i - first]
        union = len(words | block)
        shortlist.append((len(words & block) / union if union else 0.0, -abs(i - anchor), i))
    shortlist.sort(reverse=True)
    best: tuple[float, int, int] | None = None
    for _, _, i in shortlist[:_SHORTLIST]:
        matcher = difflib.SequenceMatcher(None, target, "\n".join(current[i : i + size])[: 2 * _SIMILAR_MAX_CHARS])
        if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5:
            continue
        key = (matcher.ratio(), -abs(i - anchor), i)
        if best is None or key > best:
            best = key
    return best[2] if best is not None and best[0] >= 0.5 else None


def _in_its_definition(
    found: _Found, old: tuple[str, ...], new: tuple[str, ...], snippet: tuple[str, ...], start: int
) -> _Found:
    """The cited block followed into the definition it belonged to, not onto the same lines in a
    neighbouring one: when the lines found belong to another definition than the cited ones did
    (``LengthReader.read`` for ``ChunkedReader.read``) and that definition still stands, the block
    is looked for there (and, not found whole, is changed there)."""
    assert found.start is not None
    then = definition_names(old, start)
    if not then or definition_names(new, found.start) == then:
        return found
    span = definition_span(new, then)
    if span is None:
        return found
    want = tuple(normalise(line) for line in snippet)
    first, last = span
    inside = [normalise(line) for line in new[first : last + 1]]
    for offset in range(len(inside) - len(want) + 1):
        if tuple(inside[offset : offset + len(want)]) == want:
            at = first + offset
            return _Found(CitationStatus.VALID if at == start else CitationStatus.MOVED, at, len(want))
    guess = _most_like(want, new, first, last + 1, first)
    at = guess if guess is not None else first
    return _Found(CitationStatus.CHANGED, at, min(len(want), len(new) - at))


def _text(lines: tuple[str, ...], start: int, size: int) -> str:
    return "\n".join(lines[start : start + size])


def _check(citation: Citation, status: CitationStatus, path: str, snippet: str | None, **rest: object) -> CitationCheck:
    return CitationCheck(citation=citation, status=status, path=path, snippet=snippet, **rest)  # type: ignore[arg-type]


def verify_citation(codebase: Codebase, citation: Citation) -> CitationCheck:
    """Check ``citation`` against ``codebase``: see `CitationStatus` for the outcomes."""
    start, size = citation.line - 1, citation.last_line - citation.line + 1
    old: FileRead | None = None
    if citation.commit is not None and codebase.has_commit(citation.commit):
        old = codebase.read_at(citation.commit, citation.path)
    old_lines = old.lines if old is not None and old.ok else None
    snippet: tuple[str, ...] | None = None
    if citation.snippet is not None:
        snippet = tuple(citation.snippet.split("\n"))
    elif old_lines is not None and start + size <= len(old_lines):
        snippet = old_lines[start : start + size]
    snippet_text = "\n".join(snippet) if snippet is not None else None

    current = codebase.read(citation.path)
    path = citation.path
    status_if_found = None
    if current.status is ReadStatus.INVALID:  # nothing of a refused file is carried, not even the snippet
        return _check(citation, CitationStatus.INVALID, path, None, problem=current.problem)
    if current.status is ReadStatus.MISSING:
        moved_to = _find_renamed(codebase, citation, old, snippet)
        if moved_to is None:
            return _check(citation, CitationStatus.FILE_MISSING, path, snippet_text)
        path, current = moved_to, codebase.read(moved_to)
        if not current.ok:
            return _check(citation, CitationStatus.FILE_MISSING, citation.path, snippet_text)
        status_if_found = CitationStatus.RENAMED
    if is_python(path) and too_deep(current.lines, current.key):  # its syntax cannot be read: like a binary file
        return _check(citation, CitationStatus.INVALID, path, None, problem=TOO_DEEP)

    old_view = lines_of(old_lines, old.key) if old is not None and old_lines is not None else None
    found = _locate(old_view, snippet, lines_of(current.lines, current.key), start, size)
    if old_lines is not None and snippet is not None and found.start is not None:
        found = _in_its_definition(found, old_lines, current.lines, snippet, start)
    status = found.status
    if status_if_found is not None and status in {CitationStatus.VALID, CitationStatus.MOVED}:
        status = status_if_found
    if found.start is None:
        return _check(citation, status, path, snippet_text)
    end = found.start + found.size
    return _check(
        citation,
        status,
        path,
        snippet_text,
        line=found.start + 1,
        end_line=end if found.size > 1 else None,
        text=_text(current.lines, found.start, found.size),
    )


def _find_renamed(
    codebase: Codebase, citation: Citation, old: FileRead | None, snippet: tuple[str, ...] | None
) -> str | None:
    """Where a missing file went, only on evidence of a move: git's rename detection when the
    commit is known; the same path under or out of ``src/`` (a package moved wholesale); else a
    file of the same name that holds the cited block whole, in its tokens (`code_form`: quotes,
    spacing and trailing commas aside: a file moved and reformatted in one change, which git no
    longer pairs). A file of another name is no evidence, whatever it holds (a module split in
    two, code copied, the same name defined): a citation of a deleted file is missing, not
    re-anchored onto another file."""
    if old is not None and old.ok and citation.commit is not None:
        renamed = codebase.rename_of(citation.commit, citation.path)
        if renamed is not None:
            return renamed
    for other in (f"src/{citation.path}", citation.path.removeprefix("src/")):
        if other != citation.path and codebase.read(other).ok:
            return other
    if snippet is None:
        return None
    want = tuple(form for form in (code_form(line) for line in snippet) if form)
    if not want:
        return None
    name = citation.path.rsplit("/", 1)[-1]
    same_name = [
        path
        for path in codebase.paths()
        if path != citation.path
        and path.rsplit("/", 1)[-1] == name
        and set(want) <= _forms(codebase, path)
        and _holds_whole(codebase, path, want)
    ]
    return max(same_name, key=lambda p: (_common_parts(p, citation.path), p)) if same_name else None


def _holds_whole(codebase: Codebase, path: str, want: tuple[str, ...]) -> bool:
    """Whether ``path`` holds the block ``want`` (code forms) as consecutive lines, blanks aside."""
    forms = _code_forms(codebase, path)[0]
    first = want[0]
    return any(tuple(forms[i : i + len(want)]) == want for i, form in enumerate(forms) if form == first)


_FORMS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}  # file content key -> its lines' code forms


def _code_forms(codebase: Codebase, path: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The code forms of a file's non-blank lines, in order and as a set (kept by content)."""
    read = codebase.read(path)
    if not read.ok:
        return (), frozenset()
    found = _FORMS.get(read.key) if read.key else None
    if found is None:
        ordered = tuple(form for form in map(code_form, read.lines) if form)
        found = (ordered, frozenset(ordered))
        if read.key:
            if len(_FORMS) > 20_000:
                _FORMS.clear()
            _FORMS[read.key] = found
    return found


def _forms(codebase: Codebase, path: str) -> frozenset[str]:
    return _code_forms(codebase, path)[1]


def _common_parts(a: str, b: str) -> int:
    return sum(1 for x, y in zip(a.split("/"), b.split("/"), strict=False) if x == y)


def anchor(codebase: Codebase, citation: Citation) -> Citation:
    """``citation`` with the text it cites now and the codebase's commit recorded, as the
    seeds' ``store_memory`` tool does, so that later checks can follow it through history.

    Raises:
        ValidationError: when the cited file or lines cannot be read in ``codebase``.
    """
    read = codebase.read(citation.path)
    if not read.ok:
        reason = read.problem or "it does not exist"
        raise ValidationError("citations", f"cannot cite {citation}: {reason}")
    if citation.last_line > len(read.lines):
        raise ValidationError("citations", f"cannot cite {citation}: {citation.path} has {len(read.lines)} lines")
    snippet = "\n".join(read.lines[citation.line - 1 : citation.last_line])
    return Citation(citation.path, citation.line, citation.end_line, snippet=snippet, commit=codebase.commit)
