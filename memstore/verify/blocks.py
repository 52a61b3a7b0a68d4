"""The structure of code around a line, read the same way in every language: the statement a
line is part of (its brackets balanced), the blocks that enclose it (by indentation: ``def``,
``class``, ``if``, ``try``, a section of a configuration file) and the definition it belongs to.
No parser: a citation cuts fragments out of files of any language, and these readings must hold on
any of them, bounded in the lines they look at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from memstore.verify.tokens import Language

__all__ = [
    "bracket_depth",
    "definition_names",
    "definition_span",
    "enclosing_scope",
    "opener",
    "parents",
    "section_span",
    "statement_span",
]

_STRING = re.compile(r"'(?:\\.|[^'\\])*'" + r'|"(?:\\.|[^"\\])*"')


@lru_cache(maxsize=65536)
def bracket_depth(text: str) -> int:
    """Brackets a line opens minus those it closes, outside its one-line strings and comments
    (a heuristic: a string that spans lines is read as code)."""
    code = "\n".join(_STRING.sub("", line).split("#", 1)[0] for line in text.split("\n"))
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


_STATEMENT_LINES = 40  # a statement is read whole up to this many lines
_SCOPE_LINES = 400  # the most lines of an enclosing definition read
_DEFINITION = re.compile(
    r"(?:async\s+)?(?:def|class|function|func|fn)\s+([A-Za-z_$][\w$]*)|(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)"
    r"|\[([^\]]++)\]$|(?:static\s+|async\s+|get\s+|set\s+)*([A-Za-z_$][\w$]*+)\s*+\((?:[^)]*+\)\s*+\{|[^)]*\{)$"
)


def opener(lines: Sequence[str], first: int) -> int:
    """The line (0-based) that opened the innermost bracket still open at line ``first``: the head
    of a wrapped call, signature or literal that line is part of (``first`` itself when none is)."""
    depth = 0
    for above in range(first - 1, max(-1, first - _STATEMENT_LINES), -1):
        depth += bracket_depth(lines[above])
        if depth > 0:
            return above
    return first


def statement_span(lines: Sequence[str], first: int, last: int, language: Language) -> tuple[int, int]:
    """``first``..``last`` widened to the innermost statement they are part of (brackets balanced):
    a line of a wrapped signature is read with its ``def``, one item of a list with its list."""
    if language is Language.PROSE or first >= len(lines):
        return first, last
    span = "\n".join(lines[first : last + 1])
    start = first if bracket_depth(span) >= 0 and _never_below(lines, first, last) else opener(lines, first)
    if (
        start == first
        and first > 0
        and all(_continues(lines[i]) or not lines[i].strip() for i in range(first, last + 1))
    ):
        start = opener(lines, first)  # items of a wrapped list or signature: read with their list
    depth, end = 0, start
    for end in range(start, min(len(lines), start + _STATEMENT_LINES)):
        depth += bracket_depth(lines[end])
        if depth <= 0 and end >= last:
            break
    return start, max(end, min(last, len(lines) - 1))


def _never_below(lines: Sequence[str], first: int, last: int) -> bool:
    """Whether the lines close no bracket they did not open (their running depth stays >= 0)."""
    depth = 0
    for index in range(first, last + 1):
        depth += bracket_depth(lines[index])
        if depth < 0:
            return False
    return True


def _continues(line: str) -> bool:
    """A line that is one item of a wrapped call, signature or literal (``le=None,``, ``"a",``)."""
    code = line.split("#", 1)[0].strip()
    return code.endswith(",") and not code.startswith(("def ", "class ", "async def ", "function ", "if ", "for "))


_HEADER = re.compile(
    r"^\s*(?:async\s+def|def|class|function|func|fn|if|elif|else|try|except|finally|with|for|while|match|case"
    r"|export|public|private|protected|static|const\s+\w+\s*=\s*(?:async\s*)?\(|\w+\s*\(.*\)\s*\{|\[[^\]]+\]\s*$"
    r"|[\w.-]+:\s*$|describe|it\b|test\b)"
)


_PARENTS: dict[tuple[int, int], tuple[Sequence[str], tuple[tuple[int, str], ...]]] = {}


def parents(lines: Sequence[str], index: int, limit: int = 8) -> tuple[tuple[int, str], ...]:
    """`_parents`, kept per file and line while the file is alive (the same lines are asked for by
    several judges and citations)."""
    key = (id(lines), index)
    found = _PARENTS.get(key)
    if found is not None and found[0] is lines:
        return found[1]
    result = _parents(lines, index, limit)
    if len(_PARENTS) > 50_000:
        _PARENTS.clear()
    _PARENTS[key] = (lines, result)
    return result


def _parents(lines: Sequence[str], index: int, limit: int = 8) -> tuple[tuple[int, str], ...]:
    """The blocks that enclose line ``index`` (0-based), innermost first: (line, text) of each
    header (``def load(path):``, ``try:``, ``[testenv]``, ``tool:``), by indentation; a section
    header of an INI or TOML file encloses what follows it at the same indentation."""
    if not 0 <= index < len(lines):
        return ()
    found: list[tuple[int, str]] = []
    line = lines[index]
    indent = len(line) - len(line.lstrip()) if line.strip() else 10**6
    for above in range(index - 1, max(-1, index - _SCOPE_LINES), -1):
        text = lines[above]
        stripped = text.strip()
        if not stripped or stripped.startswith(("#", "//", "*", "/*", "@")):
            continue
        depth = len(text) - len(text.lstrip())
        if depth < indent or (depth == 0 and stripped.startswith("[") and stripped.endswith("]")):
            if _HEADER.match(text) or text.rstrip().endswith((":", "{")):
                head = opener(lines, above) if stripped.startswith((")", "]", "}")) else above
                found.append((head, " ".join(" ".join(lines[head : above + 1]).split())))
                if len(found) >= limit:
                    break
            indent = min(indent, depth)
            if depth == 0 and not (stripped.startswith("[") and indent > 0):
                if stripped.startswith("[") or _HEADER.match(text):
                    break
                break
    return tuple(found)


_SCOPES: dict[tuple[int, int], tuple[Sequence[str], tuple[int, int] | None]] = {}


def enclosing_scope(lines: Sequence[str], index: int) -> tuple[int, int] | None:
    """`_enclosing_scope`, kept per file and line while the file is alive."""
    key = (id(lines), index)
    found = _SCOPES.get(key)
    if found is not None and found[0] is lines:
        return found[1]
    result = _enclosing_scope(lines, index)
    if len(_SCOPES) > 50_000:
        _SCOPES.clear()
    _SCOPES[key] = (lines, result)
    return result


def _enclosing_scope(lines: Sequence[str], index: int) -> tuple[int, int] | None:
    """The definition (``def``, ``class``, ``function``, a section) that encloses line ``index``:
    from its header to its last line, by indentation (at most `_SCOPE_LINES`)."""
    for at, header in parents(lines, index):
        if re.match(
            r"(?:async\s+def|def|class|function|func|fn)\b|\[[^\]]+\]$|export\s+(?:default\s+)?(?:async\s+)?(?:function|class)",
            header,
        ):
            base = len(lines[at]) - len(lines[at].lstrip())
            end = at
            for below in range(at + 1, min(len(lines), at + _SCOPE_LINES)):
                text = lines[below]
                if not text.strip():
                    continue
                depth = len(text) - len(text.lstrip())
                if depth <= base and not text.strip().startswith((")", "]", "}")):
                    if header.startswith("[") and not text.strip().startswith("["):
                        end = below
                        continue
                    break
                end = below
            return at, end
    return None


def definition_names(lines: Sequence[str], index: int) -> tuple[str, ...]:
    """The names of the definitions that enclose line ``index``, innermost first (``('read',
    'ChunkedReader')``): functions, classes, methods, sections."""
    names = []
    for _, header in parents(lines, index):
        name = _defined(header)
        if name is not None:
            names.append(name)
    return tuple(names)


_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "with", "else", "try", "do", "return", "elif"})


def _defined(header: str) -> str | None:
    match = _DEFINITION.match(header.strip())
    if match is None:
        return None
    name = next(g for g in match.groups() if g)
    return None if name in _NOT_NAMES else name


def definition_span(lines: Sequence[str], names: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the definition ``names`` (innermost first, as `definition_names` gives them) stands in
    ``lines``: its header to its last line (0-based), or None when it is not there or not once."""
    if not names:
        return None
    found = []
    for index, line in enumerate(lines):
        if _defined(line) == names[0] and definition_names(lines, index) == names[1:]:
            found.append(index)
    if len(found) != 1:
        return None
    head = found[0]
    base = len(lines[head]) - len(lines[head].lstrip())
    end = head
    for below in range(head + 1, min(len(lines), head + _SCOPE_LINES)):
        text = lines[below]
        if not text.strip():
            continue
        if len(text) - len(text.lstrip()) <= base and not text.strip().startswith((")", "]", "}")):
            break
        end = below
    return head, end


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s|^\s*\[[^\]]+\]\s*$")
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#`'\"])\1{2,}\s*$")


def section_span(lines: Sequence[str], first: int, last: int) -> tuple[int, int]:
    """The section of a document or configuration file the lines ``first``..``last`` are in: from
    the heading above them (Markdown ``#``, reStructuredText underline, ``[section]``) to the line
    before the next one, at most 40 lines up and 80 down."""
    start = first
    for above in range(first, max(-1, first - 40), -1):
        if _is_heading(lines, above):
            start = above
            break
    end = last
    for below in range(last + 1, min(len(lines), last + 80)):
        if _is_heading(lines, below):
            break
        end = below
    return start, end


def _is_heading(lines: Sequence[str], index: int) -> bool:
    if _HEADING.match(lines[index]):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return bool(lines[index].strip()) and _UNDERLINE.match(following) is not None
