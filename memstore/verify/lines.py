"""Lines as the verifier compares them, and the line diff that maps old lines to new ones.

Every comparison collapses whitespace (re-indenting or re-wrapping spaces never invalidates
a citation). A file is normalised once per content (keyed by its blob id or digest) into a
`Lines`: the normalised lines, and the same text joined with line offsets, so that finding a
block is a substring search in C rather than a loop in Python. The diff is patience diff
(the `patiencediff` package, compiled, from the Breezy project), whose cost stays near
linear on the inputs that make a longest-common-subsequence diff quadratic: thousands of
``}`` lines, lock files, minified code. Everything here is bounded for any file under the
verifier's size cap.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import operator
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

import patiencediff
from patiencediff._patiencediff_py import PatienceSequenceMatcher_py

__all__ = ["Lines", "align", "diff_opcodes", "lines_of", "normalise"]

_SPACES = re.compile(r"[^\S\n]+")  # runs of whitespace other than the line break: what str.split() splits on
_CACHE_CHARS = 64 * 1024 * 1024  # normalised text kept across checks: files are cited many times over


def normalise(line: str) -> str:
    """One line with its whitespace collapsed (what `Lines` does to every line of a file)."""
    return " ".join(line.split())


class Lines:
    """The normalised lines of one text, and the same text joined for fast block search.

    Attributes:
        lines: each line with whitespace collapsed.
        text: the lines joined with ``\\n``, with a ``\\n`` before the first and after the last.
        key: identifies the content (for caches), or "" for a text with no key.
    """

    __slots__ = ("_starts", "key", "lines", "text")

    def __init__(self, lines: tuple[str, ...], text: str, key: str = "") -> None:
        self.lines, self.text, self.key = lines, text, key
        self._starts: tuple[int, ...] | None = None

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def starts(self) -> tuple[int, ...]:
        """The offset in ``text`` of each line's first character (computed when first searched)."""
        if self._starts is None:
            # After the leading \n, each line before it adds its text and its \n: iterators
            # all the way down, no Python loop over half a million lines.
            self._starts = tuple(
                itertools.accumulate(map(operator.add, map(len, self.lines[:-1]), itertools.repeat(1)), initial=1)
            )
        return self._starts

    def find(self, block: Sequence[str], near: int) -> int | None:
        """The 0-based start of the occurrence of ``block`` (normalised lines) nearest line
        ``near``; on a tie the later one (insertions above a line are likelier). None if absent."""
        if not block or len(block) > len(self.lines):
            return None
        needle = "\n" + "\n".join(block) + "\n"
        near = min(max(near, 0), len(self.lines) - 1)
        offset = self.starts[near] - 1
        after = self.text.find(needle, offset)
        before = self.text.rfind(needle, 0, offset + len(needle) - 1)
        found = [bisect.bisect_left(self.starts, o + 1) for o in (after, before) if o >= 0]
        if not found:
            return None
        return min(found, key=lambda start: (abs(start - near), -start))


def _build(text_lines: Sequence[str], key: str) -> Lines:
    if not text_lines:
        return Lines((), "\n", key)
    # Runs of whitespace become one space; then the one space left at a line's edge goes
    # (the text is framed by line breaks, so every edge is a "\n " or a " \n").
    text = _SPACES.sub(" ", "\n" + "\n".join(text_lines) + "\n").replace("\n ", "\n").replace(" \n", "\n")
    return Lines(tuple(text[1:-1].split("\n")), text, key)


class _Lru:
    """A small thread-safe LRU cache bounded by the characters it holds."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[object, tuple[int, object]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: object) -> object | None:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[1]

    def put(self, key: object, value: object, size: int) -> None:
        with self.lock:
            if key in self.items:
                return
            self.items[key] = (size, value)
            self.used += size
            while self.used > self.budget and len(self.items) > 1:
                _, (dropped, _) = self.items.popitem(last=False)
                self.used -= dropped


_LINES = _Lru(_CACHE_CHARS)
_ALIGNMENTS = _Lru(_CACHE_CHARS)


def lines_of(text_lines: Sequence[str], key: str = "") -> Lines:
    """The normalised `Lines` of ``text_lines``; kept by ``key`` (a content id) when one is given."""
    if not key:
        return _build(text_lines, "")
    found = _LINES.get(key)
    if found is None:
        found = _build(text_lines, key)
        _LINES.put(key, found, len(found.text) + 8 * len(found.lines))
    assert isinstance(found, Lines)
    return found


class Alignment:
    """How the lines of an old text map onto a new one, kept as the diff's runs (not one entry
    per line): lines that survived, and lines rewritten one for one (the i-th line of a replaced
    block of n lines became the i-th line of its n-line replacement)."""

    __slots__ = ("_firsts", "runs")

    def __init__(self, runs: list[tuple[str, int, int, int, int]]) -> None:
        self.runs = runs  # (tag, old start, old end, new start, new end), covering the old text in order
        self._firsts = [run[1] for run in runs]

    def _run(self, line: int) -> tuple[str, int, int, int, int] | None:
        index = bisect.bisect_right(self._firsts, line) - 1
        while 0 <= index < len(self.runs) and self.runs[index][2] <= line:  # skip empty (inserting) runs
            index += 1
        if index < 0 or index >= len(self.runs) or not self.runs[index][1] <= line < self.runs[index][2]:
            return None
        return self.runs[index]

    def survived(self, line: int) -> int | None:
        """Where old ``line`` (0-based) stands in the new text, if it survived unchanged."""
        run = self._run(line)
        return run[3] + line - run[1] if run is not None and run[0] == "equal" else None

    def rewritten(self, line: int) -> int | None:
        """The new line that old ``line`` was rewritten into, one for one, if it was."""
        run = self._run(line)
        if run is None or run[0] != "replace" or run[2] - run[1] != run[4] - run[3]:
            return None
        return run[3] + line - run[1]

    def region(self, start: int, size: int, new_len: int) -> tuple[int, int]:
        """The new lines that took the place of old ``start``..``start + size``: between the
        nearest surviving line above and the nearest below (0-based, end exclusive)."""
        lo, hi, end = 0, new_len, start + size
        for tag, i1, i2, j1, _ in self.runs:
            if tag != "equal" or i1 == i2:
                continue
            if i1 < start:  # this run holds surviving lines above the block: the last of them bounds it
                lo = j1 + min(i2, start) - i1
            if i2 > end:  # ... and this one the first surviving line below it
                hi = j1 + max(end, i1) - i1
                break
        return lo, max(lo, hi)


# Small inputs go to the package's Python matcher: the same algorithm, and where it gives up it
# raises an exception, where the compiled one panics and prints the panic to stderr.
_PYTHON_ITEMS = 3_000
_PYTHON_MATCHER = PatienceSequenceMatcher_py
_DIFFLIB_ITEMS = 6_000  # items difflib compares when patience diff gives up (it is quadratic at worst)


def diff_opcodes(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """The opcodes of a diff of ``a`` and ``b``: patience diff, compiled; where it gives up, difflib.

    Patience diff gives up past a fixed recursion depth on some inputs (items that come in pairs:
    ``a a b b`` against ``a = a b = b``, met in real keyword-argument lists); the compiled matcher
    panics there (and prints the panic), so inputs up to `_PYTHON_ITEMS` go to the package's Python
    matcher, which raises instead. Giving up is not an error of the input: difflib then compares
    them, and past `_DIFFLIB_ITEMS` the two are one replacement.
    """
    matcher = _PYTHON_MATCHER if len(a) + len(b) <= _PYTHON_ITEMS else patiencediff.PatienceSequenceMatcher
    try:
        return list(matcher(None, a, b).get_opcodes())
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit | MemoryError):
            raise
    if len(a) + len(b) <= _DIFFLIB_ITEMS:
        return list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    if list(a) == list(b):
        return [("equal", 0, len(a), 0, len(b))]
    return [("replace", 0, len(a), 0, len(b))]


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many leading lines ``a`` and ``b`` share (compared a chunk at a time, in C)."""
    size, step = 0, 4096
    limit = min(len(a), len(b))
    while step:
        while size + step <= limit and a[size : size + step] == b[size : size + step]:
            size += step
        step //= 8
    return size


def _align(old: tuple[str, ...], new: tuple[str, ...]) -> Alignment:
    # The lines before the first change are matched as they are, as patience diff would match
    # them; the diff runs on the rest. (Not the common suffix too: patience anchors on unique
    # lines before it matches trailing ones, and a trimmed suffix would pair look-alikes.)
    head = _common_prefix(old, new)
    runs = [("equal", 0, head, 0, head)] if head else []
    if head < len(old) and head < len(new):
        runs += [
            (tag, head + i1, head + i2, head + j1, head + j2)
            for tag, i1, i2, j1, j2 in diff_opcodes(old[head:], new[head:])
        ]
    elif head < len(old):
        runs.append(("delete", head, len(old), len(new), len(new)))
    return Alignment(runs)


def align(old: Lines, new: Lines) -> Alignment:
    """How ``old``'s lines map onto ``new``'s (see `Alignment`); kept when both texts have keys."""
    if not (old.key and new.key):
        return _align(old.lines, new.lines)
    cache_key = (old.key, new.key)
    found = _ALIGNMENTS.get(cache_key)
    if found is None:
        found = _align(old.lines, new.lines)
        _ALIGNMENTS.put(cache_key, found, 64 + 8 * len(found.runs))
    assert isinstance(found, Alignment)
    return found
