"""Memories in and out of any store as JSON lines: ``memstore memories export`` and ``import``.

An export line is a memory as `Memory.to_dict` gives it (id, repository, kind, subject, fact,
citations with the text and commit they were anchored at, reason, author, times, status). An
import line is either one of those or a line the miner writes (``memstore mine``'s
``.verdicts.jsonl``: ``subject``, ``fact``, ``path``, ``line``, ``snippet``, ``commit``). Only
what a memory says is imported, as a draft the receiving store validates: repository, kind,
subject, fact, citations (their text and commit kept, or anchored again), reason. The store
gives new ids, times and the importing user as author; a mined line's truth label and the
values it was labelled with are grading data and are never imported.

`read_drafts` reads and checks every line before anything is stored, so a file with one bad
line stores nothing (`ImportProblems` lists every bad line).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memstore.errors import MemstoreError, ValidationError
from memstore.model import Citation, Kind, Memory, MemoryDraft
from memstore.verify.citations import anchor
from memstore.verify.codebase import Codebase

__all__ = ["MAX_IMPORT_LINES", "ImportProblems", "Problem", "export_lines", "read_drafts"]

MAX_IMPORT_LINES = 100_000


@dataclass(frozen=True)
class Problem:
    line: int
    message: str


class ImportProblems(MemstoreError):
    """Lines of an import file that cannot be stored, every one of them (nothing was stored)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        shown = [f"line {p.line}: {p.message}" for p in problems[:20]]
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__("\n".join(shown) + more)


def export_lines(memories: Iterable[Memory]) -> Iterator[str]:
    """One JSON line per memory (newline included)."""
    for memory in memories:
        yield json.dumps(memory.to_dict(), ensure_ascii=False, sort_keys=True) + "\n"


def _citations(data: dict[str, Any]) -> list[Citation]:
    if "path" in data and "line" in data:  # a mined line: one citation, with the text it cites at --from
        snippet, commit = data.get("snippet"), data.get("commit")
        return [Citation(str(data["path"]), _int(data["line"]), snippet=snippet or None, commit=commit or None)]
    raw = data.get("citations", [])
    if not isinstance(raw, list):
        raise ValidationError("citations", "must be a list")
    return [Citation.parse(c) if isinstance(c, str) else Citation.from_dict(c) for c in raw]


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("line", f"must be a whole number, not {value!r}")
    return value


def _draft(data: object, repo: str | None, codebase: Codebase | None) -> MemoryDraft:
    if not isinstance(data, dict):
        raise ValidationError("line", "must be a JSON object")
    mined = "snippet" in data or "truth" in data
    target = repo or data.get("repo")
    if not isinstance(target, str) or not target:
        raise ValidationError("repo", "no repository: the line names none, so give --repo OWNER/NAME")
    kind = Kind.FACT if mined else Kind(str(data.get("kind", "fact")))
    citations = _citations(data)
    if codebase is not None:
        citations = [anchor(codebase, Citation(c.path, c.line, c.end_line)) for c in citations]
    draft = MemoryDraft(
        target,
        kind,
        str(data.get("subject", "")),
        str(data.get("fact", "")),
        citations,
        str(data.get("reason") or ("mined from the repository's history" if mined else "")),
    )
    return draft.validated()


def read_drafts(
    lines: Iterable[str], *, repo: str | None = None, codebase: Codebase | None = None
) -> list[MemoryDraft]:
    """The drafts of an import file's lines, every one checked (``repo``: the repository for
    lines that name none, and for every line when given; ``codebase``: anchor each citation
    there again, refusing one whose lines it does not have).

    Raises:
        ImportProblems: naming every line that cannot be stored (then none is).
    """
    drafts: list[MemoryDraft] = []
    problems: list[Problem] = []
    for number, text in enumerate(lines, 1):
        if number > MAX_IMPORT_LINES:
            problems.append(Problem(number, f"more than {MAX_IMPORT_LINES:,} lines: split the file"))
            break
        if not text.strip():
            continue
        try:
            drafts.append(_draft(json.loads(text), repo, codebase))
        except json.JSONDecodeError as exc:
            problems.append(Problem(number, f"not JSON ({exc.msg} at column {exc.colno})"))
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            problems.append(Problem(number, str(exc)))
    if problems:
        raise ImportProblems(problems)
    return drafts
