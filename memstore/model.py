"""The memory model: structured memories anchored to code citations.

A memory is the four-field object of the seeds (subject, fact, citations, reason) plus
the bookkeeping a store needs: who wrote it, from which surface, when it was last
validated, and which earlier version it corrects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from memstore.errors import ValidationError
from memstore.validation import (
    CITATION,
    COMMIT,
    MAX_CITATIONS,
    MAX_FACT_CHARS,
    MAX_LINE,
    MAX_PATH_CHARS,
    MAX_REASON_CHARS,
    MAX_SNIPPET_CHARS,
    MAX_SUBJECT_CHARS,
    check_line,
    check_text,
    clean_path,
    shown,
    utc,
    validate_repo,
)

__all__ = [
    "MAX_CITATIONS",
    "MAX_FACT_CHARS",
    "MAX_LINE",
    "MAX_PATH_CHARS",
    "MAX_REASON_CHARS",
    "MAX_SUBJECT_CHARS",
    "Citation",
    "Kind",
    "Memory",
    "MemoryDraft",
    "Status",
    "Surface",
    "Vote",
    "check_text",
    "clean_path",
    "validate_repo",
]


class Kind(StrEnum):
    """What a memory is about: the repository's code, or how one user likes work done."""

    FACT = "fact"
    PREFERENCE = "preference"


class Status(StrEnum):
    """Where a memory stands in its life."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETIRED = "retired"
    EXPIRED = "expired"


class Surface(StrEnum):
    """The product surface an operation comes from; it decides which tiers apply."""

    CODING_AGENT = "coding_agent"
    CODE_REVIEW = "code_review"
    CLI = "cli"


@dataclass(frozen=True, order=True)
class Citation:
    """A code location that supports a memory: ``path:line`` or ``path:line-end_line``.

    Attributes:
        path: repository-relative POSIX path; never absolute, never with ``..``.
        line: first cited line, 1-based.
        end_line: last cited line, inclusive; None for a single line.
        snippet: the cited text when the citation was made, if known.
        commit: the commit the citation was made at, if known.
    """

    path: str
    line: int
    end_line: int | None = None
    snippet: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", clean_path(self.path, "path"))
        check_line(self.line, "line")
        if self.end_line is not None:
            check_line(self.end_line, "end_line")
            if self.end_line < self.line:
                raise ValidationError("end_line", f"must not be before line {self.line}, got {self.end_line}")
            if self.end_line == self.line:
                object.__setattr__(self, "end_line", None)
        if self.snippet is not None:
            if not isinstance(self.snippet, str):
                raise ValidationError("snippet", "must be a string")
            check_text(self.snippet, "snippet", MAX_SNIPPET_CHARS, required=False)
        if self.commit is not None and (not isinstance(self.commit, str) or not COMMIT.match(self.commit)):
            raise ValidationError("commit", f"must be a hexadecimal commit id, got {shown(self.commit)}")

    @classmethod
    def parse(cls, text: str, *, snippet: str | None = None, commit: str | None = None) -> Citation:
        """Parse ``"src/a.ts:12"`` or ``"docs/x.md:37-40"``.

        Raises:
            ValidationError: for a missing line, an absolute or escaping path, a
                backslash, a NUL character, an empty path, or a line below 1.
        """
        if not isinstance(text, str):
            raise ValidationError("citation", f"must be a 'path:line' string, got {shown(text)}")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):  # a newline, a tab, an escape: never part of a path
            raise ValidationError("citation", f"must not hold control characters (a newline, a tab), got {shown(text)}")
        match = CITATION.fullmatch(text.strip(" "))
        if match is None:
            raise ValidationError("citation", f"must look like 'path:line' or 'path:line-end', got {shown(text)}")
        end = match.group("end")
        return cls(
            path=match.group("path"),
            line=int(match.group("line")),
            end_line=int(end) if end is not None else None,
            snippet=snippet,
            commit=commit,
        )

    @property
    def last_line(self) -> int:
        """The last cited line (``line`` for a single-line citation)."""
        return self.end_line if self.end_line is not None else self.line

    def __str__(self) -> str:
        if self.end_line is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; unknown parts are left out."""
        data: dict[str, Any] = {"path": self.path, "line": self.line}
        for key in ("end_line", "snippet", "commit"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def trusted(cls, path: str, line: int, end_line: int | None, snippet: str | None, commit: str | None) -> Citation:
        """Rebuild a citation that was validated when it was stored, without checking it again.

        For backends reading their own records on the hot path of ``recent()``; never
        for input from outside.
        """
        citation = object.__new__(cls)
        # Frozen dataclasses block __setattr__, not the instance dict: the fastest way in.
        citation.__dict__.update(path=path, line=line, end_line=end_line, snippet=snippet, commit=commit)
        return citation

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Citation:
        """Inverse of `to_dict`."""
        return cls(
            path=data["path"],
            line=data["line"],
            end_line=data.get("end_line"),
            snippet=data.get("snippet"),
            commit=data.get("commit"),
        )


def _coerce_citation(value: object, index: int) -> Citation:
    if isinstance(value, Citation):
        return value
    if isinstance(value, str):
        try:
            return Citation.parse(value)
        except ValidationError as exc:
            raise ValidationError(f"citations[{index}]", str(exc)) from exc
    raise ValidationError(f"citations[{index}]", f"must be a Citation or 'path:line' string, got {shown(value)}")


@dataclass(frozen=True)
class MemoryDraft:
    """What a caller hands to ``store()``; the store fills in the rest.

    Constructing a draft checks nothing: the store validates it (see `validated`), so
    that bad input is reported by the call that would have stored it.
    """

    repo: str
    kind: Kind
    subject: str
    fact: str
    citations: Sequence[Citation | str] = ()
    reason: str = ""

    def validated(self) -> MemoryDraft:
        """Return a normalised copy (citations parsed into a tuple), or raise `ValidationError`."""
        validate_repo(self.repo)
        try:
            kind = Kind(self.kind)
        except ValueError as exc:
            raise ValidationError("kind", f"must be 'fact' or 'preference', got {shown(self.kind)}") from exc
        subject = check_text(self.subject, "subject", MAX_SUBJECT_CHARS, required=True)
        fact = check_text(self.fact, "fact", MAX_FACT_CHARS, required=True)
        reason = check_text(self.reason, "reason", MAX_REASON_CHARS, required=False)
        if isinstance(self.citations, (str, bytes)) or not isinstance(self.citations, Sequence):
            raise ValidationError("citations", "must be a list of citations")
        if len(self.citations) > MAX_CITATIONS:
            raise ValidationError(
                "citations", f"at most {MAX_CITATIONS} citations are allowed, got {len(self.citations)}"
            )
        citations = tuple(_coerce_citation(c, i) for i, c in enumerate(self.citations))
        if kind is Kind.FACT and not citations:
            raise ValidationError("citations", "a repository fact needs at least one citation")
        return replace(self, kind=kind, subject=subject, fact=fact, reason=reason, citations=citations)


@dataclass(frozen=True)
class Memory:
    """A stored memory. Immutable: a correction is a new version that supersedes this one.

    Attributes:
        id: store-assigned identifier.
        repo: the repository it belongs to, ``owner/name``.
        kind: `Kind.FACT` (about the repository) or `Kind.PREFERENCE` (about its author).
        subject: the topic, e.g. "API version synchronization".
        fact: the claim itself.
        citations: the code locations that make the fact true.
        reason: why it matters.
        author: the user who stored it.
        surface: the surface it was stored from.
        created_at: when this version was stored (UTC).
        refreshed_at: when it was last validated and used; the expiry window starts here.
        supersedes: id of the version this one corrects, or None.
        status: `Status.ACTIVE` unless superseded, retired or expired.
        retired_reason: why it was retired, for a retired memory.
    """

    id: str
    repo: str
    kind: Kind
    subject: str
    fact: str
    citations: tuple[Citation, ...]
    reason: str
    author: str
    surface: Surface
    created_at: datetime
    refreshed_at: datetime
    supersedes: str | None = None
    status: Status = Status.ACTIVE
    retired_reason: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "created_at", utc(self.created_at, "created_at"))
        object.__setattr__(self, "refreshed_at", utc(self.refreshed_at, "refreshed_at"))
        if type(self.citations) is not tuple:
            object.__setattr__(self, "citations", tuple(self.citations))

    @classmethod
    def from_draft(
        cls,
        draft: MemoryDraft,
        *,
        memory_id: str,
        author: str,
        surface: Surface,
        now: datetime,
        supersedes: str | None = None,
    ) -> Memory:
        """A new, active memory from a draft that `MemoryDraft.validated` returned."""
        return cls(
            id=memory_id,
            repo=draft.repo,
            kind=Kind(draft.kind),
            subject=draft.subject,
            fact=draft.fact,
            citations=tuple(c for c in draft.citations if isinstance(c, Citation)),
            reason=draft.reason,
            author=author,
            surface=Surface(surface),
            created_at=now,
            refreshed_at=now,
            supersedes=supersedes,
        )

    def as_draft(self) -> MemoryDraft:
        """The draft this memory was stored from; a starting point for a correction."""
        return MemoryDraft(
            repo=self.repo,
            kind=self.kind,
            subject=self.subject,
            fact=self.fact,
            citations=self.citations,
            reason=self.reason,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (datetimes as ISO 8601 strings)."""
        return {
            "id": self.id,
            "repo": self.repo,
            "kind": self.kind.value,
            "subject": self.subject,
            "fact": self.fact,
            "citations": [c.to_dict() for c in self.citations],
            "reason": self.reason,
            "author": self.author,
            "surface": self.surface.value,
            "created_at": self.created_at.isoformat(),
            "refreshed_at": self.refreshed_at.isoformat(),
            "supersedes": self.supersedes,
            "status": self.status.value,
            "retired_reason": self.retired_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Memory:
        """Inverse of `to_dict`."""
        return cls(
            id=data["id"],
            repo=data["repo"],
            kind=Kind(data["kind"]),
            subject=data["subject"],
            fact=data["fact"],
            citations=tuple(Citation.from_dict(c) for c in data["citations"]),
            reason=data["reason"],
            author=data["author"],
            surface=Surface(data["surface"]),
            created_at=datetime.fromisoformat(data["created_at"]),
            refreshed_at=datetime.fromisoformat(data["refreshed_at"]),
            supersedes=data.get("supersedes"),
            status=Status(data.get("status", "active")),
            retired_reason=data.get("retired_reason"),
        )


@dataclass(frozen=True)
class Vote:
    """A user's judgement of one memory version in use: up (it helped, it held) or down (it
    misled, it was wrong), with the reason and when. A user's later vote on the same version
    replaces their earlier one in what counts (`memstore.backends.ranking`); every vote is kept."""

    memory_id: str
    author: str
    up: bool
    reason: str
    at: datetime
