"""Following a citation of a definition to where the definition is now.

A fact that names a definition (``Owner.member``, ``do_truncate``) whose citation was followed onto
something else (a line of the same text in another class, a docstring's example, a decorator) is
cited at the definition where it is now, found by its name in the cited file; when ``Owner`` has no
``member`` any more, that claim is contradicted (renamed, where an alias ``OLD = NEW`` shows it)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from memstore.verify.citations import CitationCheck, CitationStatus
from memstore.verify.claims import FactClaim
from memstore.verify.codebase import Codebase
from memstore.verify.definitions import (
    defined_in,
    definition_at,
    enclosing_class,
    find_definition,
    find_member,
    in_brackets,
    named_definition,
    was_in,
)
from memstore.verify.tokens import cached_pattern
from memstore.verify.verdict import Contradiction

__all__ = ["follow_definitions"]

_ALIAS = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*(?:#.*)?$")  # OLD = NEW
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")


def follow_definitions(
    claims: Sequence[FactClaim], checks: tuple[CitationCheck, ...], codebase: Codebase, fact: str = ""
) -> tuple[tuple[CitationCheck, ...], list[Contradiction]]:
    """The checks with each cited definition the fact names followed to where it is now, and the
    claims of definitions that are gone (with the new name when an alias shows a rename). A
    definition the file now imports from another module is not gone, unless the fact is about
    where it is defined ("is defined in")."""
    fixed, gone = list(checks), []
    for claim in claims:
        named = named_definition(claim)
        if named is None:
            continue
        owner, member = named
        for index, check in enumerate(fixed):
            if check.status is CitationStatus.VALID or not check.status.readable or check.line is None:
                continue
            if check.status is not CitationStatus.CHANGED and check.citation.end_line is not None:
                continue  # a block that moved whole was followed as a block, not onto a look-alike line
            lines = codebase.read(check.path).lines
            if not 0 < check.line <= len(lines) or not defined_in(check.snippet, member):
                continue  # the memory did not cite that definition: where it is now is beside the point
            if in_brackets(codebase, check):
                continue  # a parameter or an argument of that name, not its definition
            here = definition_at(lines, check.line - 1, member)
            if here and (owner is None or enclosing_class(lines, here - 1) == owner):
                line: int | None = here  # the definition, where the fact says (or a line off it)
            elif owner is not None and not was_in(codebase, check, owner):
                break  # the old code does not show it in that class: nothing to say
            else:
                line = find_member(lines, owner, member) if owner else find_definition(lines, member)
            alias = _ALIAS.match(lines[line - 1]) if line is not None and _DEFINES.match(check.snippet or "") else None
            renamed = find_definition(lines, alias.group(2)) if alias and alias.group(1) == member else None
            if renamed is not None and alias is not None:  # an alias left for the old name: OLD = NEW
                new = claim.text.replace(member, alias.group(2))
                fixed[index] = replace(check, status=CitationStatus.MOVED, line=renamed, end_line=None,
                                       text=lines[renamed - 1])  # fmt: skip
                gone.append(Contradiction(claim.text, new, f"{check.path}:{renamed}"))
                break
            if line is not None and line != check.line:
                fixed[index] = replace(check, status=CitationStatus.MOVED, line=line, end_line=None,
                                       text=lines[line - 1])  # fmt: skip
            elif line is None and (_DEFINED_IN.search(fact) or not _imported(lines, member)):
                gone.append(Contradiction(claim.text, None, check.where))  # no longer defined there
            break
    return tuple(fixed), gone


# A fact about where a thing is defined: an import of it is not its definition.
_DEFINED_IN = re.compile(r"(?i)\b(?:defined|declared|implemented|lives|written) (?:in|inside)\b|\bdefines\b")


def _imported(lines: Sequence[str], name: str) -> bool:
    """Whether the file now imports ``name`` (its definition moved into a module it imports from)."""
    pattern = cached_pattern(rf"^\s*(?:from\s+[\w.]+\s+)?import\s+[^#\n]*(?<![\w.]){re.escape(name)}(?![\w])")
    return any(pattern.match(line) for line in lines)
