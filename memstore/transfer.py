"""Memories in and out of any store as JSON lines: ``memstore memories export`` and ``import``.

An export line is a memory as `Memory.to_dict` gives it (id, repository, kind, subject, fact,
citations with the text and commit they were anchored at, reason, author, times, status). An
import line is either one of those or a line the miner writes (``memstore mine``'s
``.verdicts.jsonl``: ``subject``, ``fact``, ``path``, ``line``, ``snippet``, ``commit``). Only
what a memory says is imported, as a draft the receiving store validates: repository, kind,
subject, fact, citations (their text and commit kept, or anchored again), reason. The store
gives new ids, times and the importing user as author; a mined line's truth label and the
values it was labelled with are grading data and are never imported.

`read_lines` reads and checks every line before anything is stored, so a file with one bad
line stores nothing (`ImportProblems` lists every bad line). `store_lines` then asks the store
about every line (`check_lines`: may this user store it there) and stores them all or none: in
one call where the store takes a batch (`memstore.store.BatchStore`), else one by one, taking
back what was stored when a line is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memstore.access import Actor
from memstore.errors import ImportProblems, MemstoreError, ValidationError
from memstore.model import Citation, Kind, Memory, MemoryDraft, Surface
from memstore.store import BatchStore, MemoryStore
from memstore.verify import Codebase, anchor

__all__ = [
    "MAX_IMPORT_LINES",
    "ImportLine",
    "ImportProblems",
    "Problem",
    "check_lines",
    "export_lines",
    "read_drafts",
    "read_lines",
    "store_lines",
]

MAX_IMPORT_LINES = 100_000


@dataclass(frozen=True)
class Problem:
    line: int
    message: str


@dataclass(frozen=True)
class ImportLine:
    """A line of an import file, as the draft it holds; ``labelled_false``: the line is a verdict
    benchmark's memory that its label says is false (contradicted, unsupported, missing), not one
    to keep in a store unless asked for."""

    line: int
    draft: MemoryDraft
    labelled_false: str = ""


TRUE_LABELS = frozenset({"valid", "moved", "renamed", "reanchored"})  # a mined memory that is (still) true


def _labelled_false(data: object) -> str:
    """The false truth label a mined line carries ("contradicted"), or "" for none or a true one."""
    truth = data.get("truth") if isinstance(data, dict) else None
    return truth if isinstance(truth, str) and truth and truth not in TRUE_LABELS else ""


def export_lines(memories: Iterable[Memory]) -> Iterator[str]:
    """One JSON line per memory (newline included)."""
    for memory in memories:
        yield json.dumps(memory.to_dict(), ensure_ascii=False, sort_keys=True) + "\n"


def _text(data: dict[str, Any], field: str, default: str = "") -> str:
    """The text of ``field``: a JSON string, or ``default`` where it is missing or null."""
    value = data.get(field)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a JSON string, not {_json_type(value)}")
    return value


def _json_type(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true or false"
    return "a number"


def _citations(data: dict[str, Any]) -> list[Citation]:
    if "path" in data and "line" in data:  # a mined line: one citation, with the text it cites at --from
        snippet, commit = _text(data, "snippet"), _text(data, "commit")
        return [Citation(_text(data, "path"), _int(data["line"]), snippet=snippet or None, commit=commit or None)]
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
    target = repo or _text(data, "repo")
    if not target:
        raise ValidationError("repo", "no repository: the line names none, so give --repo OWNER/NAME")
    kind = Kind.FACT if mined else Kind(_text(data, "kind", "fact"))
    citations = _citations(data)
    if codebase is not None:
        citations = [anchor(codebase, Citation(c.path, c.line, c.end_line)) for c in citations]
    reason = _text(data, "reason") or ("mined from the repository's history" if mined else "")
    draft = MemoryDraft(target, kind, _text(data, "subject"), _text(data, "fact"), citations, reason)
    return draft.validated()


def read_lines(lines: Iterable[str], *, repo: str | None = None, codebase: Codebase | None = None) -> list[ImportLine]:
    """The drafts of an import file's lines, every one checked, each with its line number
    (``repo``: the repository for lines that name none, and for every line when given;
    ``codebase``: anchor each citation there again, refusing one whose lines it does not have).

    Raises:
        ImportProblems: naming every line that cannot be stored (then none is).
    """
    found: list[ImportLine] = []
    problems: list[Problem] = []
    for number, text in enumerate(lines, 1):
        if number > MAX_IMPORT_LINES:
            problems.append(Problem(number, f"more than {MAX_IMPORT_LINES:,} lines: split the file"))
            break
        if not text.strip():
            continue
        try:
            data = json.loads(text)
            found.append(ImportLine(number, _draft(data, repo, codebase), _labelled_false(data)))
        except json.JSONDecodeError as exc:
            problems.append(Problem(number, f"not JSON ({exc.msg} at column {exc.colno})"))
        except RecursionError:  # json.loads and the checks after it recurse once per level
            problems.append(Problem(number, "nested too deeply to read (lists or objects within each other)"))
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            problems.append(Problem(number, str(exc)))
    if problems:
        raise ImportProblems(problems)
    return found


def read_drafts(
    lines: Iterable[str], *, repo: str | None = None, codebase: Codebase | None = None
) -> list[MemoryDraft]:
    """The drafts of `read_lines`, without their line numbers.

    Raises:
        ImportProblems: naming every line that cannot be stored (then none is).
    """
    return [found.draft for found in read_lines(lines, repo=repo, codebase=codebase)]


def check_lines(store: MemoryStore, lines: Iterable[ImportLine], *, actor: Actor, surface: Surface) -> bool:
    """Ask the store whether ``actor`` may store every line, storing nothing; False when the store
    cannot say without storing (it is no `BatchStore`).

    Raises:
        ImportProblems: naming every line the store would refuse.
    """
    if not isinstance(store, BatchStore):
        return False
    problems: list[Problem] = []
    for found in lines:
        try:
            store.check_store(found.draft, actor=actor, surface=surface)
        except MemstoreError as exc:
            problems.append(Problem(found.line, str(exc)))
    if problems:
        raise ImportProblems(problems)
    return True


def store_lines(store: MemoryStore, lines: list[ImportLine], *, actor: Actor, surface: Surface) -> list[Memory]:
    """Store every line, or none: checked first and stored in one call where the store takes a
    batch; else one by one, deleting what was stored when a line is refused.

    Raises:
        ImportProblems: naming every line the store refuses (with ``stored``, the memories that
            could not be taken back), before or while storing.
    """
    if check_lines(store, lines, actor=actor, surface=surface):
        assert isinstance(store, BatchStore)
        return store.store_all([found.draft for found in lines], actor=actor, surface=surface)
    stored: list[Memory] = []
    for found in lines:
        try:
            stored.append(store.store(found.draft, actor=actor, surface=surface))
        except Exception as exc:
            kept = _take_back(store, stored, actor)
            if not isinstance(exc, MemstoreError):
                raise
            raise ImportProblems([Problem(found.line, str(exc))], stored=kept) from exc
    return stored


def _take_back(store: MemoryStore, stored: list[Memory], actor: Actor) -> tuple[str, ...]:
    """Delete what an import stored, newest first; the ids of those the store would not delete."""
    kept: list[str] = []
    for memory in reversed(stored):
        try:
            store.delete(memory.id, actor=actor)
        except MemstoreError:
            kept.append(memory.id)
    return tuple(reversed(kept))
