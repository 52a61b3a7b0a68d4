"""The rules a memory's fields obey: limits, repository names, citation paths, storable text.

`memstore.model` re-exports what callers use (`clean_path`, `check_text`, `validate_repo`, the
limits); every rule raises `ValidationError` naming the field.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memstore.errors import ValidationError

__all__ = [
    "CITATION",
    "COMMIT",
    "MAX_CITATIONS",
    "MAX_FACT_CHARS",
    "MAX_LINE",
    "MAX_PATH_CHARS",
    "MAX_REASON_CHARS",
    "MAX_SNIPPET_CHARS",
    "MAX_SUBJECT_CHARS",
    "check_line",
    "check_text",
    "clean_path",
    "shown",
    "utc",
    "validate_repo",
]

MAX_CITATIONS = 20
MAX_SUBJECT_CHARS = 200
MAX_FACT_CHARS = 4_000
MAX_REASON_CHARS = 4_000
MAX_SNIPPET_CHARS = 100_000
MAX_PATH_CHARS = 4_096  # git's own limit (PATH_MAX)
MAX_LINE = 100_000_000  # far past any file under the verifier's size cap; bounds what a citation may claim

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
COMMIT = re.compile(r"^[0-9a-f]{4,64}$")
CITATION = re.compile(r"^(?P<path>.+):(?P<line>-?\d{1,12})(?:-(?P<end>-?\d{1,12}))?$")
# Lone surrogates cannot be stored as UTF-8; control and bidirectional-override characters in a
# path hide what it names from a person reading it.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_PATH_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def validate_repo(repo: object, field_name: str = "repo") -> str:
    """Return ``repo`` if it is an ``owner/name`` string, else raise `ValidationError`."""
    if not isinstance(repo, str) or not _REPO.match(repo) or any(part in {".", ".."} for part in repo.split("/")):
        raise ValidationError(field_name, f"must look like 'owner/name', got {shown(repo)}")
    return repo


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages that echo input."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}...({len(text):,} chars)"


def _is_git_dir(segment: str) -> bool:
    """Whether a path segment names git's own directory in any spelling a filesystem may resolve
    to it: any case (macOS, Windows), trailing dots or spaces and the 8.3 short name (NTFS)."""
    name = segment.rstrip(". ").lower()
    return name in {".git", "git~1"}


def clean_path(path: object, field_name: str = "path") -> str:
    """Check a repository-relative POSIX path and return it without `.` or empty segments.

    The one rule for every path a memory may name (citations, and the codebases that read
    them): relative, no ``..``, never into ``.git/``, no NUL, control or bidirectional-override
    characters, at most `MAX_PATH_CHARS` characters.

    Raises:
        ValidationError: naming ``field_name``.
    """
    if not isinstance(path, str) or not path.strip():
        raise ValidationError(field_name, "the path is empty")
    if len(path) > MAX_PATH_CHARS:
        raise ValidationError(field_name, f"the path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in path:
        raise ValidationError(field_name, "the path contains a NUL character")
    if _PATH_UNSAFE.search(path) or not path.isprintable():  # unassigned, format, separators: unreadable
        raise ValidationError(field_name, f"the path contains a control or invisible character: {shown(path)}")
    if "\\" in path:
        raise ValidationError(field_name, f"use '/' to separate path segments, not '\\' in {shown(path)}")
    if path.startswith("/") or re.match(r"^[A-Za-z]:/", path):
        raise ValidationError(field_name, f"the path must be relative to the repository, got {shown(path)}")
    segments = [s for s in path.split("/") if s not in {"", "."}]
    if ".." in segments:
        raise ValidationError(field_name, f"the path must not contain '..' segments, got {shown(path)}")
    if not segments:
        raise ValidationError(field_name, "the path is empty")
    if any(_is_git_dir(s) for s in segments):
        raise ValidationError(field_name, f"the path must not point into git's own directory, got {shown(path)}")
    return "/".join(segments)


def check_line(value: object, field_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field_name, f"must be an integer, got {shown(value)}")
    if not 1 <= value <= MAX_LINE:
        said = str(value) if abs(value) < 10**12 else f"a number of {value.bit_length()} bits"
        if value < 1:
            raise ValidationError(field_name, f"lines are numbered from 1, got {said}")
        raise ValidationError(field_name, f"must be at most {MAX_LINE:,}, got {said}")
    return value


def check_text(value: object, field_name: str, limit: int, *, required: bool) -> str:
    """Return ``value`` if it is a storable string of at most ``limit`` characters, else raise
    `ValidationError`: no NUL, no lone surrogate (neither survives UTF-8 storage)."""
    if not isinstance(value, str):
        raise ValidationError(field_name, f"must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise ValidationError(field_name, "must not be empty")
    if len(value) > limit:
        raise ValidationError(field_name, f"must be at most {limit} characters, got {len(value)}")
    if "\x00" in value:
        raise ValidationError(field_name, "must not contain NUL characters")
    if _SURROGATE.search(value):
        raise ValidationError(field_name, "must be valid Unicode text (it holds a lone surrogate)")
    return value


def utc(value: datetime, field_name: str) -> datetime:
    if type(value) is datetime and value.tzinfo is UTC:
        return value
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(field_name, "must be a timezone-aware datetime")
    return value.astimezone(UTC)
