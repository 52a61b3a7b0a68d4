"""Judging a fact by what it states of code (`memstore.verify.stated`), read off the cited files
(`memstore.verify.pycode`): the first step of the reference verifier for a fact in such a shape.

- Every statement located in a cited file: the fact is contradicted where the code says another
  value (the correction states the code's values, its citations on the lines that say them, and
  never the old value), else valid, or re-anchored onto those lines.
- A statement of a parameter's default where the parameter has no default any more: contradicted,
  with nothing to correct it with.
- A statement not located, where the cited file did not define what it names either when the
  memory was written (read at the citation's commit): unsupported, the citation is about
  something else. Where the file defined it then and does not now, what it stated a value of is
  gone: the fact's literal claims are judged (a rename shows there, with its correction), and a
  verdict that would use the memory is contradicted instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstore.model import Citation, Memory, MemoryDraft
from memstore.validation import MAX_SNIPPET_CHARS
from memstore.verify.citations import CitationCheck, CitationStatus
from memstore.verify.codebase import Codebase
from memstore.verify.pycode import Said, agrees, assigned_names, names, said_of
from memstore.verify.stated import Stated, What, stated
from memstore.verify.verdict import Contradiction, Verdict, VerdictStatus

__all__ = ["judge_statements"]

Located = tuple[Stated, Said, CitationCheck]  # a statement, what the code says of it, the citation it is under


def judge_statements(
    memory: Memory, checks: tuple[CitationCheck, ...], readable: Sequence[CitationCheck], codebase: Codebase
) -> Verdict | str | None:
    """The verdict on a fact that states values of code (see the module docstring); a reason (a
    sentence) when what it stated a value of is gone, for the caller to judge by the literal
    claims; None when the fact states no value in a shape this reads, or the code cannot tell."""
    statements = stated(memory.fact)
    python = any(c.path.endswith((".py", ".pyi")) for c in readable)
    statements = [s for s in statements if python or s.what is What.REQUIREMENT]
    if not statements:
        return None  # only Python and a project's pins are read exactly
    found: list[Located] = []
    for statement in statements:
        located = _locate(statement, readable, codebase)
        if located is None:
            reads = ((c.path, codebase.read(c.path)) for c in readable)
            if any(names(statement, read.lines, read.key, path) for path, read in reads):
                return None  # defined there, but not so as to be read exactly (a property and its setter)
            then = _defined_then(statement, readable, codebase)
            if then is None:
                return None
            if not then:
                about = f"{statement.name}" + (f"'s {statement.param}" if statement.param else "")
                return Verdict(VerdictStatus.UNSUPPORTED, checks, reason=f"the cited code is not about {about}")
            renamed = _renamed(memory, checks, statement, readable, codebase)
            if renamed is not None:
                return renamed
            return f"the cited file no longer says what {statement.name} {statement.what.value} is"
        found.append(located)
    absent = [(s, c) for s, said, c in found if said.value is None]
    if absent:
        s, c = absent[0]
        return Verdict(VerdictStatus.CONTRADICTED, checks, reason=f"{c.path}: {s.name}'s {s.param} has no default now")
    return _judged(memory, checks, found, codebase)


def _locate(statement: Stated, readable: Sequence[CitationCheck], codebase: Codebase) -> Located | None:
    for check in readable:
        read = codebase.read(check.path)
        said = said_of(statement, read.lines, read.key, check.path)
        if said is not None:
            return statement, said, check
    return None


def _defined_then(statement: Stated, readable: Sequence[CitationCheck], codebase: Codebase) -> bool | None:
    """Whether a cited file said something of what ``statement`` names when the memory was written;
    None when no cited file can be read as it was."""
    known = False
    for check in readable:
        commit = check.citation.commit
        if commit is None or not codebase.has_commit(commit):
            continue
        old = codebase.read_at(commit, check.citation.path)
        if not old.ok:
            continue
        known = True
        if names(statement, old.lines, old.key, check.citation.path):
            return True
    return False if known else None


# ``NAME = value`` up to the value; possessive, so a run of spaces is crossed once. The value's end
# is found by hand (`_assigned`): a lazy value before ``\s*,?\s*(?:#.*)?$`` tried every split of
# every run of spaces after it (cubic: 1,500 spaces took 30 s).
_ASSIGNED = re.compile(r"\s*+(?P<name>[A-Za-z_]\w*+)\s*+(?::[^=]++)?=(?!=)(?P<space>\s*+)")


def _assigned(line: str) -> tuple[str, str] | None:
    """The name and the value of a one-line assignment ``NAME = value`` (a trailing comma and a
    comment aside), or None: in one pass, whatever the line."""
    head = _ASSIGNED.match(line)
    if head is None or "\n" in line:
        return None
    start = head.end()
    if start == len(line):  # nothing after the sign but spaces: the value is the last of them
        return (head["name"], line[-1]) if head["space"] else None
    comment = line.find("#", start + 1)
    end = len(line) if comment < 0 else comment
    end = len(line[:end].rstrip())
    if line[end - 1 : end] == "," and end - 1 > start:
        end = len(line[: end - 1].rstrip())
    return head["name"], line[start : max(start + 1, end)]


def _renamed(
    memory: Memory,
    checks: tuple[CitationCheck, ...],
    statement: Stated,
    readable: Sequence[CitationCheck],
    codebase: Codebase,
) -> Verdict | None:
    """A constant or a parameter renamed: the line its citation was followed to now gives another
    name the value the fact states (``WS_1005_ABNORMAL_CLOSURE = 1005`` became
    ``WS_1005_NO_STATUS_RCVD = 1005``; ``doActions=True`` became ``do_actions=True``). The
    correction names the new name; None when the line shows no such rename."""
    if statement.what not in {What.VALUE, What.DEFAULT}:
        return None
    old = statement.param if statement.what is What.DEFAULT else statement.name.rpartition(".")[2]
    for check in readable:
        assigned = _assigned(check.text) if check.text else None
        new: str | None = None
        if assigned is not None and assigned[0] != old and old:
            new = assigned[0] if agrees(statement, Said(assigned[1].rstrip(",)"), 0)) else None
        if new is None and statement.what is What.VALUE:
            new = _new_name_holding(statement, check, codebase)
        if new is None or not old:
            continue
        fact = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, memory.fact)
        subject = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, memory.subject)
        citations = tuple(_cite(c, None, codebase) for c in checks if c.status.readable and c.line is not None)
        corrected = MemoryDraft(memory.repo, memory.kind, subject, fact, citations, memory.reason)
        reason = f"{check.where} names it {new!r} now: {old!r} was renamed"
        return Verdict(VerdictStatus.CONTRADICTED, checks, corrected, reason, (Contradiction(old, new, check.where),))
    return None


def _new_name_holding(statement: Stated, check: CitationCheck, codebase: Codebase) -> str | None:
    """The one name of the cited file's scope (module or class) that holds the value a constant
    had and that the file did not have when the memory was written: the constant renamed."""
    commit = check.citation.commit
    if commit is None or not codebase.has_commit(commit):
        return None
    now, then = codebase.read(check.path), codebase.read_at(commit, check.citation.path)
    owner = statement.name.rpartition(".")[0]
    before = set(assigned_names(then.lines, then.key, check.citation.path, owner)) if then.ok else set()
    holding = [
        name
        for name, value in assigned_names(now.lines, now.key, check.path, owner).items()
        if name not in before and agrees(statement, Said(value, 0))
    ]
    return holding[0] if len(holding) == 1 else None


def _judged(
    memory: Memory,
    checks: tuple[CitationCheck, ...],
    found: list[Located],
    codebase: Codebase,
) -> Verdict:
    wrong = [(s, said, check) for s, said, check in found if not agrees(s, said)]
    at = {id(check): said.line for _, said, check in found}
    citations = tuple(_cite(c, at.get(id(c)), codebase) for c in checks if c.status.readable and c.line is not None)
    if wrong:
        fact = memory.fact
        for s, said, _ in wrong:
            fact = fact.replace(s.span, s.span.replace(s.value, str(said.value), 1))
        contradictions = tuple(Contradiction(s.value, said.value, f"{c.path}:{said.line}") for s, said, c in wrong)
        reason = "; ".join(f"{c.path}:{said.line} says {said.value!r} where the fact says {s.value!r}"
                           for s, said, c in wrong)  # fmt: skip
        corrected = MemoryDraft(memory.repo, memory.kind, memory.subject, fact, citations, memory.reason)
        return Verdict(VerdictStatus.CONTRADICTED, checks, corrected, reason, contradictions)
    if all(c.status is CitationStatus.VALID and _within(c, at.get(id(c))) for c in checks):
        return Verdict(VerdictStatus.VALID, checks, reason="the cited code says what the fact says")
    corrected = MemoryDraft(memory.repo, memory.kind, memory.subject, memory.fact, citations, memory.reason)
    where = ", ".join(str(c) for c in citations)
    return Verdict(VerdictStatus.REANCHORED, checks, corrected, f"the code says what the fact says, at {where}")


def _within(check: CitationCheck, line: int | None) -> bool:
    """Whether a statement read at ``line`` stands among the cited lines (no line: it does)."""
    assert check.line is not None
    return line is None or check.line <= line <= (check.end_line or check.line)


def _cite(check: CitationCheck, line: int | None, codebase: Codebase) -> Citation:
    """The citation of ``check`` now: on ``line`` when a statement was read there, else where it stands."""
    assert check.line is not None
    text = check.text if line is None else codebase.read(check.path).lines[line - 1]
    if text is not None and len(text) > MAX_SNIPPET_CHARS:  # a minified line: the line number says where
        text = None
    if line is None:
        return Citation(check.path, check.line, check.end_line, snippet=text, commit=codebase.commit)
    return Citation(check.path, line, snippet=text, commit=codebase.commit)
