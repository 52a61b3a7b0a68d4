"""Reading code around a citation: the block a short line belongs to, the whole statement a
wrapped line is part of, and definitions by name (which class a line is in; where ``Owner``
defines ``member`` now). The reference verifier uses these to judge a citation as the code a
person would read there, not as one line of text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstore.verify.blocks import bracket_depth
from memstore.verify.citations import CitationCheck, CitationStatus
from memstore.verify.claims import ClaimKind, FactClaim, terms
from memstore.verify.codebase import Codebase
from memstore.verify.tokens import cached_pattern

__all__ = [
    "CLASS_LINE",
    "SHORT",
    "bracket_depth",
    "context_of",
    "defined_in",
    "definition_at",
    "enclosing_class",
    "find_definition",
    "find_member",
    "head_of",
    "in_brackets",
    "member_defined",
    "named_definition",
    "statement_of",
    "was_in",
]


SHORT = 4  # content words a cited line needs to be judged on its own; fewer: its block is read too
_SIGNATURE_LINES = 40  # lines a wrapped signature or call may span above a cited line of it (attrs' attrib: 16)
CONTEXT_LINES = (2, 4)  # lines read before and after a short citation


def context_of(check: CitationCheck, codebase: Codebase) -> str:
    """A short citation's text with the lines around it (``def get(``: its docstring and body)."""
    assert check.text is not None
    if check.line is None or (len(terms(check.text)) >= SHORT and check.status is not CitationStatus.CHANGED):
        return check.text  # a changed line may have been split (a reformatted signature): read its block
    read = codebase.read(check.path)
    if not read.lines:
        return check.text
    first = max(0, check.line - 1 - CONTEXT_LINES[0])
    last = min(len(read.lines), (check.end_line or check.line) + CONTEXT_LINES[1])
    return "\n".join(read.lines[first:last])


def head_of(lines: Sequence[str], index: int) -> int:
    """The first line (0-based) of the statement the line at ``index`` is part of: the line that
    opened the brackets it is in (a wrapped signature's ``def``, a call's name), followed up
    through brackets within brackets, at most `_SIGNATURE_LINES` above."""
    start = index
    while True:
        depth, opener = 0, None
        for above in range(start - 1, max(-1, index - _SIGNATURE_LINES), -1):
            depth += bracket_depth(lines[above])
            if depth > 0:  # this line opened a bracket still open below it
                opener = above
                break
        if opener is None:
            return start
        start = opener


def statement_of(check: CitationCheck, codebase: Codebase, *, always: bool = False) -> str:
    """The whole statement a changed citation now lands in: a signature black wrapped over
    several lines is read as one (``by: str = "key",`` is still ``do_dictsort``'s default).
    A citation whose lines did not change is its own text, unless ``always``."""
    assert check.text is not None
    if (check.status is CitationStatus.VALID and not always) or check.line is None:
        return check.text
    lines = codebase.read(check.path).lines
    index = check.line - 1
    if not 0 <= index < len(lines):
        return check.text
    start = head_of(lines, index)
    depth, end = 0, start
    for end in range(start, min(len(lines), start + 40)):
        depth += bracket_depth(lines[end])
        if depth <= 0 and end >= index:
            break
    return "\n".join(lines[start : end + 1])


CLASS_LINE = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)")


def enclosing_class(lines: Sequence[str], index: int) -> str | None:
    """The class a line (0-based ``index``) is defined in, by indentation; None at module level."""
    line = lines[index]
    indent = len(line) - len(line.lstrip())
    for above in range(index - 1, -1, -1):
        text = lines[above]
        if not text.strip():
            continue
        depth = len(text) - len(text.lstrip())
        if depth < indent:
            match = CLASS_LINE.match(text)
            if match:
                return match.group(2)
            indent = depth
            if depth == 0:
                return None
    return None


def named_definition(claim: FactClaim) -> tuple[str | None, str] | None:
    """``(owner, member)`` for a claim naming a definition: ``Owner.member`` or ``function``."""
    if claim.kind not in {ClaimKind.CODE, ClaimKind.IDENTIFIER}:
        return None
    match = re.fullmatch(r"(?:([A-Za-z_]\w*)\.)?([A-Za-z_]\w+)(?:\(\))?", claim.text)
    return None if match is None else (match.group(1), match.group(2))


_TARGETS = r"(?:\w+\s*,\s*)*"  # the names before it in a tuple assignment: ``_range, _unich = range, chr``


def definition_at(lines: Sequence[str], index: int, name: str) -> int | None:
    """The line (1-based) of the definition of ``name`` that the line at ``index`` belongs to: that
    line itself, the ``def`` below a decorator, or the head of a signature wrapped over lines;
    None when it belongs to no definition of ``name`` (a line of a body is not its ``def``)."""
    pattern = cached_pattern(
        rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*(?::[^=]+)?="
        rf"|^\s*{_TARGETS}{re.escape(name)}\s*(?:,\s*\w+\s*)*=(?!=)"
    )
    at = index
    while 0 <= at < len(lines) and lines[at].lstrip().startswith("@") and at < index + 4:
        at += 1  # a decorator: the definition is below it
    if at == index:
        at = head_of(lines, index)  # inside a wrapped signature: its head
    return at + 1 if 0 <= at < len(lines) and pattern.match(lines[at]) else None


def find_definition(lines: Sequence[str], name: str) -> int | None:
    """The line (1-based) of the one top-level definition of ``name`` in a file, or None."""
    pattern = cached_pattern(
        rf"^(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*(?::[^=]+)?="
        rf"|^{_TARGETS}{re.escape(name)}\s*(?:,\s*\w+\s*)*=(?!=)"
    )
    found = [n for n, text in enumerate(lines, 1) if pattern.match(text)]
    return found[0] if len(found) == 1 else None


def defined_in(snippet: str | None, name: str) -> bool:
    """Whether the cited text, as it was, defined ``name``: a ``def`` or ``class`` of it, or an
    assignment to it as a statement; not a parameter or keyword argument of that name in a wrapped
    signature or call (``    le=None,``), which defines nothing."""
    if snippet is None:
        return False
    pattern = rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*(?::[^=]+)?=(?!=)"
    compiled = cached_pattern(pattern)
    return any(compiled.match(line) and not _argument_line(line) for line in snippet.split("\n"))


def _argument_line(line: str) -> bool:
    """A line that is one parameter or keyword argument of a wrapped signature or call: it ends
    with a comma, or closes the brackets it is in (``le=None,``, ``retries: int = 3)``)."""
    code = line.split("#", 1)[0].rstrip()
    return code.endswith(",") or bracket_depth(code) < 0


def in_brackets(codebase: Codebase, check: CitationCheck) -> bool:
    """Whether the cited line was inside a bracket when the memory was written (a parameter of a
    wrapped signature, an argument of a call): it defines nothing, whatever it looks like."""
    commit = check.citation.commit
    if commit is None or not codebase.has_commit(commit):
        return False
    lines = codebase.read_at(commit, check.citation.path).lines
    index = check.citation.line - 1
    return 0 <= index < len(lines) and head_of(lines, index) != index


def was_in(codebase: Codebase, check: CitationCheck, owner: str) -> bool:
    """Whether the cited line was in class ``owner`` when the memory was written."""
    commit = check.citation.commit
    if commit is None or not codebase.has_commit(commit):
        return True  # nothing to compare with: take the fact's word
    lines = codebase.read_at(commit, check.citation.path).lines
    index = check.citation.line - 1
    return 0 <= index < len(lines) and enclosing_class(lines, index) == owner


def find_member(lines: Sequence[str], owner: str, member: str) -> int | None:
    """The line (1-based) where class ``owner`` of this file defines ``member``, or None."""
    for number, text in enumerate(lines):
        match = CLASS_LINE.match(text)
        if match is None or match.group(2) != owner:
            continue
        depth = len(match.group(1))
        for inner in range(number + 1, len(lines)):
            line = lines[inner]
            if line.strip() and len(line) - len(line.lstrip()) <= depth:
                break
            if cached_pattern(
                rf"\s+(?:async\s+)?def\s+{re.escape(member)}\b|\s+{re.escape(member)}\s*(?::[^=]+)?="
            ).match(line):
                return inner + 1
    return None


def member_defined(text: str, claim: str) -> bool:
    """``Attribute.__init__`` and ``Session.get`` are about ``def __init__(`` and ``def get(``: a
    qualified name whose last part the cited code defines."""
    owner, dot, member = claim.rstrip("()").rpartition(".")
    if not dot or not owner or not re.fullmatch(r"[A-Za-z_]\w*", member):
        return False
    return cached_pattern(rf"\b(?:def|class|function|fn|func)\s+{re.escape(member)}\b").search(text) is not None
