"""Codebases: the code a citation is checked against, at a git ref or in a directory.

A read never escapes the repository: a path must be a clean repository-relative path,
a symlink is followed only while it stays inside, and a binary file or one over
`MAX_FILE_BYTES` is reported as unreadable without its content being loaded.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

from memstore.errors import RepositoryError, ValidationError
from memstore.model import clean_path
from memstore.verify.beneath import Escape, read_beneath, walk
from memstore.verify.filetext import file_lines, is_python
from memstore.verify.git import GitRepository, TreeEntry

__all__ = [
    "MAX_FILE_BYTES",
    "Codebase",
    "FileRead",
    "GitCodebase",
    "ReadStatus",
    "WorkingTree",
    "split_lines",
]

MAX_FILE_BYTES = 1024 * 1024
_SYMLINK_HOPS = 8


class ReadStatus(StrEnum):
    """How reading one path went."""

    OK = "ok"
    MISSING = "missing"
    INVALID = "invalid"


@dataclass(frozen=True)
class FileRead:
    """The outcome of reading one file.

    Attributes:
        status: `ReadStatus.OK`, `MISSING`, or `INVALID` (unsafe or unreadable).
        path: the path asked for.
        lines: the file's lines without line endings (OK only).
        key: identifies the content (a blob id or a digest), for caches keyed on content.
        problem: why an INVALID read was refused.
    """

    status: ReadStatus
    path: str
    lines: tuple[str, ...] = ()
    key: str = ""
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.status is ReadStatus.OK


def split_lines(data: bytes, path: str = "") -> tuple[str, ...]:
    """The lines of the file ``path``, decoded and counted as its language's tools do
    (`memstore.verify.filetext`); with no path, as git counts them."""
    return file_lines(data, path)


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8000]  # git's own test


def _safe(path: str) -> str | None:
    """``path`` as a clean repository-relative path, or None if it could escape the repository
    or reach into git's own directory (the model's one rule for paths, `clean_path`)."""
    found = _cleaned(path)
    return found if isinstance(found, str) else None


@lru_cache(maxsize=65_536)  # paths are checked on every read of every citation; the answer never changes
def _cleaned(path: str) -> str | FileRead:
    """``path`` made clean, or the INVALID read that refuses it (saying why)."""
    try:
        return clean_path(path)
    except ValidationError as exc:
        problem = "the path escapes the repository" if ".." in str(path).split("/") else str(exc).partition(": ")[2]
        return _invalid(str(path), problem)


def _invalid(path: str, problem: str) -> FileRead:
    return FileRead(ReadStatus.INVALID, path, problem=problem)


def _missing(path: str) -> FileRead:
    return FileRead(ReadStatus.MISSING, path)


def _content(path: str, data: bytes, key: str) -> FileRead:
    if _is_binary(data):
        return _invalid(path, "binary file")
    return FileRead(ReadStatus.OK, path, split_lines(data, path), _keyed(key, path))


def _keyed(key: str, path: str) -> str:
    """The key of a content read as the file ``path``: the same bytes read as Python and as
    anything else are two texts (decoded, and their lines counted, by two rules)."""
    return f"{key}:python" if is_python(path) else key


@runtime_checkable
class Codebase(Protocol):
    """Code to verify against. ``commit`` is the commit the code is at, when there is one."""

    commit: str | None

    def read(self, path: str) -> FileRead:
        """The file at ``path`` now."""
        ...

    def read_at(self, commit: str, path: str) -> FileRead:
        """The file at ``path`` in ``commit`` (MISSING when either is unknown)."""
        ...

    def has_commit(self, commit: str) -> bool:
        """Whether ``commit`` is in the repository's history."""
        ...

    def rename_of(self, commit: str, path: str) -> str | None:
        """Where the file ``path`` of ``commit`` lives now, if it was renamed or moved."""
        ...

    def paths(self) -> Sequence[str]:
        """Every file path now."""
        ...

    def prefetch(self, current: Iterable[str], historic: Iterable[tuple[str, str]]) -> None:
        """Read ahead, in one batch, files that are about to be asked for."""
        ...


class GitCodebase:
    """The files of a git repository at one ref (branch, tag, sha), read without a checkout.

    Args:
        repo_path: the repository, bare or not.
        ref: what to read; ``HEAD`` by default.

    Raises:
        RepositoryError: when the repository or the ref cannot be read.
    """

    def __init__(self, repo_path: str | Path | GitRepository, ref: str = "HEAD") -> None:
        self.repo = repo_path if isinstance(repo_path, GitRepository) else GitRepository(repo_path)
        commit = self.repo.resolve(ref)
        if commit is None:
            raise RepositoryError(f"{ref!r} is not a commit of {self.repo.path}")
        self.ref = ref
        self.commit: str | None = commit
        self._tree = self.repo.tree(commit)
        self._decoded: dict[tuple[str, bool], tuple[str, ...] | None] = {}  # (blob id, Python) -> lines (None: binary)
        # The code at a commit never changes, so every answer can be kept.
        self._reads: dict[str, FileRead] = {}
        self._reads_at: dict[tuple[str, str], FileRead] = {}
        self._commits: dict[str, bool] = {}
        self._by_oid: dict[str, list[str]] | None = None

    def __repr__(self) -> str:
        return f"GitCodebase({str(self.repo.path)!r}, {self.ref!r})"

    def _entry(self, path: str) -> tuple[str, TreeEntry] | FileRead:
        """Follow symlinks inside the tree; refuse the ones that leave it."""
        clean = _cleaned(path)
        if isinstance(clean, FileRead):
            return clean
        for _ in range(_SYMLINK_HOPS):
            entry = self._tree.get(clean)
            if entry is None:
                return _missing(path)
            if not entry.is_symlink:
                if not entry.is_file:
                    return _invalid(path, "not a regular file (a submodule?)")
                if entry.size is not None and entry.size > MAX_FILE_BYTES:
                    return _invalid(path, f"larger than {MAX_FILE_BYTES} bytes")
                return clean, entry
            target = self.repo.blob(entry.oid, max_size=4096)
            if target is None:
                return _invalid(path, "unreadable symlink")
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(clean), target.decode(errors="replace")))
            resolved = _safe(joined)
            if resolved is None or joined.startswith(".."):
                return _invalid(path, "a symlink that points outside the repository or into .git")
            clean = resolved
        return _invalid(path, "too many levels of symlinks")

    def read(self, path: str) -> FileRead:
        read = self._reads.get(path)
        if read is None:
            found = self._entry(path)
            read = found if isinstance(found, FileRead) else self._decode(path, found[1].oid, None)
            self._reads[path] = read
        return read

    def read_at(self, commit: str, path: str) -> FileRead:
        read = self._reads_at.get((commit, path))
        if read is None:
            read = self._reads_at[(commit, path)] = self._read_at(commit, path)
        return read

    def _read_at(self, commit: str, path: str) -> FileRead:
        clean = _cleaned(path)
        if isinstance(clean, FileRead):
            return clean
        found = self.repo.objects([f"{commit}:{clean}"], max_size=MAX_FILE_BYTES).get(f"{commit}:{clean}")
        if found is None or found.kind != "blob":
            return _missing(path)
        if found.data is None:
            return _invalid(path, f"larger than {MAX_FILE_BYTES} bytes")
        return self._decode(path, found.oid, found.data)

    def _decode(self, path: str, oid: str, data: bytes | None) -> FileRead:
        """The lines of blob ``oid`` as the file ``path``, decoded once per blob (and per rule of
        reading: `memstore.verify.filetext`) however often they are read."""
        rule = (oid, is_python(path))
        if rule not in self._decoded:
            if data is None:
                data = self.repo.blob(oid, max_size=MAX_FILE_BYTES)
                if data is None:
                    return _invalid(path, "unreadable blob")
            self._decoded[rule] = None if _is_binary(data) else split_lines(data, path)
        lines = self._decoded[rule]
        if lines is None:
            return _invalid(path, "binary file")
        return FileRead(ReadStatus.OK, path, lines, _keyed(oid, path))

    def has_commit(self, commit: str) -> bool:
        known = self._commits.get(commit)
        if known is None:
            found = self.repo.objects([commit]).get(commit)
            known = self._commits[commit] = found is not None and found.kind == "commit"
        return known

    def rename_of(self, commit: str, path: str) -> str | None:
        old = self.repo.objects([f"{commit}:{path}"]).get(f"{commit}:{path}")
        if old is not None:
            if self._by_oid is None:
                self._by_oid = {}
                for name, entry in self._tree.items():
                    self._by_oid.setdefault(entry.oid, []).append(name)
            same = [p for p in self._by_oid.get(old.oid, ()) if p != path]
            if len(same) == 1:  # an exact move: no diff needed
                return same[0]
        assert self.commit is not None
        return self.repo.renames(commit, self.commit).get(path)

    def paths(self) -> Sequence[str]:
        return list(self._tree)

    def prefetch(self, current: Iterable[str], historic: Iterable[tuple[str, str]]) -> None:
        oids = []
        for path in current:
            entry = self._tree.get(_safe(path) or "")
            if entry is not None and entry.is_file:
                oids.append(entry.oid)
        names = [f"{commit}:{clean}" for commit, path in historic if (clean := _safe(path))]
        commits = {commit for commit, _ in historic}
        self.repo.objects([*oids, *commits, *names], max_size=MAX_FILE_BYTES)


class WorkingTree:
    """The files of a directory as they are on disk (uncommitted changes included).

    Args:
        root: the directory.
        history: a `GitCodebase` to answer for past commits, if the directory is a git work tree.
            ``commit`` is its commit while the work tree is clean, else None (so re-anchored
            citations never claim a commit that does not hold their text).
    """

    def __init__(self, root: str | Path, history: GitCodebase | None = None) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise RepositoryError(f"{root} is not a directory")
        self.history = history
        # A commit names this code only while the work tree matches it.
        clean = history is not None and history.repo.is_clean()
        self.commit: str | None = history.commit if history is not None and clean else None
        self._renames: dict[str, dict[str, str]] | None = None

    def __repr__(self) -> str:
        return f"WorkingTree({str(self.root)!r})"

    def read(self, path: str) -> FileRead:
        clean = _cleaned(path)
        if isinstance(clean, FileRead):
            return clean
        try:  # opened beneath the root, component by component: nothing swapped on disk redirects it
            data = read_beneath(self.root, clean, MAX_FILE_BYTES)
        except Escape:
            return _invalid(path, "a symlink that points outside the repository or into .git")
        except (FileNotFoundError, NotADirectoryError):
            return _missing(path)
        except IsADirectoryError:
            return _invalid(path, "not a regular file")
        except ValueError:
            return _invalid(path, f"larger than {MAX_FILE_BYTES} bytes")
        except OSError as exc:
            return _invalid(path, f"unreadable: {exc.strerror or exc}")
        return _content(path, data, hashlib.sha1(data).hexdigest())

    def read_at(self, commit: str, path: str) -> FileRead:
        return self.history.read_at(commit, path) if self.history else _missing(path)

    def has_commit(self, commit: str) -> bool:
        return self.history.has_commit(commit) if self.history else False

    def rename_of(self, commit: str, path: str) -> str | None:
        if self.history is None:
            return None
        if self.commit is not None:  # a clean work tree is its commit
            return self.history.rename_of(commit, path)
        if self._renames is None or commit not in self._renames:
            # Staged renames (``git mv`` not yet committed) count: diff the commit against the work tree.
            self._renames = {**(self._renames or {}), commit: self.history.repo.renames(commit, None)}
        found = self._renames[commit].get(path)
        return found if found is not None and self.read(found).status is not ReadStatus.MISSING else None

    def paths(self) -> Sequence[str]:
        found = []
        for directory, dirs, files in walk(self.root):
            dirs[:] = [d for d in dirs if _safe(d) is not None]
            for name in files:
                found.append(Path(directory, name).relative_to(self.root).as_posix())
        return sorted(found)

    def prefetch(self, current: Iterable[str], historic: Iterable[tuple[str, str]]) -> None:
        if self.history is not None:
            self.history.prefetch((), historic)
