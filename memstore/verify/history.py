"""Scripted git histories, written in one ``git fast-import`` run.

Tests, benchmarks and (later) scenario worlds describe a history as operations (write,
insert, delete lines, rename, remove, commit, branch, merge, revert, tag) and get a real
repository with deterministic authors and dates, so the same script always gives the
same commit ids. Building through fast-import writes a thousand commits in well under a
second, where one ``git commit`` per step would take many.

A branchy history::

    main:     c1 ── c2 ─────── m (merge feature)
                      \\      /
    feature:           f1 ─┘
    spike:    c1 ── s1            (never merged)
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstore.errors import RepositoryError, ValidationError
from memstore.model import clean_path
from memstore.verify.git import git_argv, git_env

__all__ = ["BuiltRepository", "HistoryBuilder"]

Snapshot = dict[str, bytes]


def _bytes(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


@dataclass
class _Commit:
    mark: int
    branch: str
    message: str
    when: datetime
    author: tuple[str, str]
    parents: tuple[str, ...]  # labels
    snapshot: Snapshot


@dataclass(frozen=True)
class BuiltRepository:
    """A repository written by `HistoryBuilder.build`.

    Attributes:
        path: where it is.
        commits: commit id of every commit, by the label `HistoryBuilder.commit` returned.
        bare: whether it has no work tree.
    """

    path: Path
    commits: Mapping[str, str]
    bare: bool


@dataclass
class HistoryBuilder:
    """Describe a history step by step, then `build` it.

    Args:
        start: the time of the first commit (timezone-aware).
        step: time between consecutive commits.
        author: (name, email) of every commit unless one is given.
    """

    start: datetime = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    step: timedelta = timedelta(hours=1)
    author: tuple[str, str] = ("Ana Author", "ana@example.com")
    _commits: dict[str, _Commit] = field(default_factory=dict)
    _heads: dict[str, str | None] = field(default_factory=lambda: {"main": None})
    _tags: dict[str, str] = field(default_factory=dict)
    _branch: str = "main"
    _staged: Snapshot | None = None

    # -- state ----------------------------------------------------------------------

    @property
    def branch(self) -> str:
        """The branch the next commit goes on."""
        return self._branch

    def files(self, label: str | None = None) -> Snapshot:
        """The files (path -> content) at ``label``, or staged on the current branch."""
        if label is not None:
            return dict(self._commits[label].snapshot)
        return dict(self._work())

    def text(self, path: str) -> str:
        """The staged text of ``path`` on the current branch."""
        return self._work()[path].decode()

    def _work(self) -> Snapshot:
        if self._staged is None:
            head = self._heads[self._branch]
            self._staged = dict(self._commits[head].snapshot) if head else {}
        return self._staged

    def _lines(self, path: str) -> list[bytes]:
        """The lines of ``path`` with their ``\n`` (bytes: any encoding survives line edits)."""
        if path not in self._work():
            raise ValidationError("path", f"{path!r} does not exist on {self._branch}")
        return re.findall(rb"[^\n]*\n|[^\n]+$", self._work()[path])

    # -- file operations (staged until the next commit) -----------------------------

    def write(self, path: str, text: str | bytes) -> HistoryBuilder:
        """Create or overwrite ``path`` (a clean repository-relative path, never into ``.git``)."""
        self._work()[clean_path(path)] = _bytes(text)
        return self

    def insert(self, path: str, line: int, text: str) -> HistoryBuilder:
        """Insert ``text`` (one or more lines) before 1-based ``line`` (len+1 appends)."""
        lines = self._lines(path)
        if not 1 <= line <= len(lines) + 1:
            raise ValidationError("line", f"{path} has {len(lines)} lines; cannot insert before {line}")
        new = _bytes(text if text.endswith("\n") else text + "\n")
        lines[line - 1 : line - 1] = re.findall(rb"[^\n]*\n", new)
        self._work()[path] = b"".join(lines)
        return self

    def delete_lines(self, path: str, first: int, last: int | None = None) -> HistoryBuilder:
        """Delete 1-based lines ``first``..``last`` (inclusive)."""
        lines = self._lines(path)
        last = first if last is None else last
        if not 1 <= first <= last <= len(lines):
            raise ValidationError("line", f"{path} has {len(lines)} lines; cannot delete {first}-{last}")
        del lines[first - 1 : last]
        self._work()[path] = b"".join(lines)
        return self

    def replace(self, path: str, old: str, new: str, count: int = 1) -> HistoryBuilder:
        """Replace ``old`` with ``new`` in ``path`` (``count`` times; 0 for all)."""
        text = self.text(path)
        if old not in text:
            raise ValidationError("old", f"{old!r} is not in {path}")
        self._work()[path] = text.replace(old, new, count if count else -1).encode()
        return self

    def rename(self, old: str, new: str) -> HistoryBuilder:
        """Move ``old`` to ``new``."""
        work = self._work()
        if old not in work:
            raise ValidationError("path", f"{old!r} does not exist on {self._branch}")
        work[clean_path(new)] = work.pop(old)
        return self

    def remove(self, path: str) -> HistoryBuilder:
        """Delete ``path``."""
        if self._work().pop(path, None) is None:
            raise ValidationError("path", f"{path!r} does not exist on {self._branch}")
        return self

    # -- history operations ----------------------------------------------------------

    def commit(self, message: str, *, label: str | None = None, author: tuple[str, str] | None = None) -> str:
        """Commit what is staged on the current branch; returns the commit's label."""
        return self._record(message, label, author, extra_parents=())

    def _record(
        self, message: str, label: str | None, author: tuple[str, str] | None, extra_parents: tuple[str, ...]
    ) -> str:
        mark = len(self._commits) + 1
        label = label or f"c{mark}"
        if label in self._commits:
            raise ValidationError("label", f"commit label {label!r} is already used")
        head = self._heads[self._branch]
        parents = ((head,) if head else ()) + extra_parents
        self._commits[label] = _Commit(
            mark=mark,
            branch=self._branch,
            message=message,
            when=self.start + self.step * (mark - 1),
            author=author or self.author,
            parents=parents,
            snapshot=dict(self._work()),
        )
        self._heads[self._branch] = label
        self._staged = None
        return label

    def branch_from(self, name: str, at: str | None = None) -> HistoryBuilder:
        """Create branch ``name`` at commit label or branch ``at`` (the current branch by default) and switch to it."""
        if name in self._heads:
            raise ValidationError("branch", f"branch {name!r} already exists")
        self._heads[name] = self._resolve(at) if at is not None else self._heads[self._branch]
        return self.switch(name)

    def switch(self, name: str) -> HistoryBuilder:
        """Make ``name`` the current branch (staged changes must be committed first)."""
        if name not in self._heads:
            raise ValidationError("branch", f"no branch {name!r}")
        if self._staged is not None and self._staged != self.files(self._heads[self._branch] or None):
            raise ValidationError("branch", f"commit the staged changes on {self._branch} before switching")
        self._branch, self._staged = name, None
        return self

    def merge(self, source: str, message: str | None = None, *, label: str | None = None) -> str:
        """Merge branch ``source`` into the current branch: files ``source`` changed since
        the merge base take its version (a scripted history has no conflicts to resolve)."""
        theirs = self._heads.get(source)
        ours = self._heads[self._branch]
        if theirs is None or ours is None:
            raise ValidationError("branch", f"cannot merge {source!r} into {self._branch!r}")
        base = self._commits[self._merge_base(ours, theirs)].snapshot
        mine, other = self._commits[ours].snapshot, self._commits[theirs].snapshot
        work = self._work()
        for path in set(base) | set(other):
            if base.get(path) != other.get(path):
                if path in other:
                    work[path] = other[path]
                else:
                    work.pop(path, None)
        del mine
        return self._record(message or f"Merge branch '{source}'", label, None, extra_parents=(theirs,))

    def revert(self, target: str, message: str | None = None, *, label: str | None = None) -> str:
        """Undo the changes of commit ``target`` on the current branch."""
        commit = self._commits[target]
        before = self._commits[commit.parents[0]].snapshot if commit.parents else {}
        work = self._work()
        for path in set(before) | set(commit.snapshot):
            if before.get(path) != commit.snapshot.get(path):
                if path in before:
                    work[path] = before[path]
                else:
                    work.pop(path, None)
        return self.commit(message or f'Revert "{commit.message}"', label=label)

    def tag(self, name: str, at: str | None = None) -> HistoryBuilder:
        """Tag commit label or branch ``at`` (the current branch's head by default)."""
        self._tags[name] = self._resolve(at if at is not None else self._branch)
        return self

    def _resolve(self, ref: str) -> str:
        if ref in self._commits:
            return ref
        head = self._heads.get(ref)
        if head is None:
            raise ValidationError("ref", f"{ref!r} is neither a commit label nor a branch with commits")
        return head

    def _ancestors(self, label: str) -> list[str]:
        seen, order, todo = set(), [], [label]
        while todo:
            current = todo.pop(0)
            if current not in seen:
                seen.add(current)
                order.append(current)
                todo.extend(self._commits[current].parents)
        return order

    def _merge_base(self, a: str, b: str) -> str:
        theirs = set(self._ancestors(b))
        return next(label for label in self._ancestors(a) if label in theirs)

    # -- writing ----------------------------------------------------------------------

    def stream(self) -> bytes:
        """The fast-import stream of the whole history."""
        out: list[bytes] = []
        for label, commit in self._commits.items():
            when = int(commit.when.timestamp())
            who = f"{commit.author[0]} <{commit.author[1]}> {when} +0000".encode()
            message = commit.message.encode()
            out += [
                f"commit refs/heads/{commit.branch}\nmark :{commit.mark}\n".encode(),
                b"author " + who + b"\ncommitter " + who + b"\n",
                f"data {len(message)}\n".encode() + message + b"\n",
            ]
            previous: Snapshot = {}
            if commit.parents:
                first = self._commits[commit.parents[0]]
                out.append(f"from :{first.mark}\n".encode())
                previous = first.snapshot
            else:
                out.append(b"deleteall\n")
            for parent in commit.parents[1:]:
                out.append(f"merge :{self._commits[parent].mark}\n".encode())
            for path in sorted(set(previous) - set(commit.snapshot)):
                out.append(b"D " + _quote(path) + b"\n")
            for path, data in sorted(commit.snapshot.items()):
                if previous.get(path) != data:
                    out.append(b"M 100644 inline " + _quote(path) + f"\ndata {len(data)}\n".encode() + data + b"\n")
            del label
        for name, head in self._heads.items():
            if head is not None:
                out.append(f"reset refs/heads/{name}\nfrom :{self._commits[head].mark}\n\n".encode())
        for name, target in self._tags.items():
            out.append(f"reset refs/tags/{name}\nfrom :{self._commits[target].mark}\n\n".encode())
        return b"".join(out)

    def build(self, path: str | Path, *, bare: bool = False) -> BuiltRepository:
        """Write the repository at ``path`` (which must not exist or be empty)."""
        target = Path(path)
        if target.exists() and any(target.iterdir()):
            raise ValidationError("path", f"{target} exists and is not empty")
        if not self._commits:
            raise ValidationError("history", "there are no commits to write")
        marks = target.parent / f".{target.name}.marks"
        try:
            # No template (sample hooks, a description: files every copy of the repository would
            # carry), and the objects in one pack however few (fast-import writes loose objects
            # below a hundred): a repository of a few files to copy.
            init = ["init", "-q", "--template=", "--initial-branch=main", *(["--bare"] if bare else []), str(target)]
            _git(Path.cwd(), *init)
            _git(
                target,
                "-c",
                "fastimport.unpackLimit=0",
                "fast-import",
                "--quiet",
                f"--export-marks={marks}",
                input=self.stream(),
            )
            by_mark = {}
            for line in marks.read_text().splitlines():
                mark, sha = line.split()
                by_mark[int(mark[1:])] = sha
        finally:
            marks.unlink(missing_ok=True)
        if not bare:
            _git(target, "checkout", "-q", "-f", "main")
        return BuiltRepository(target, {label: by_mark[c.mark] for label, c in self._commits.items()}, bare)


def _quote(path: str) -> bytes:
    if any(ch in path for ch in '"\n\\') or path.startswith(" "):
        escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'.encode()
    return path.encode()


def _git(where: Path, *args: str, input: bytes | None = None) -> None:
    done = subprocess.run(git_argv(where, *args), input=input, capture_output=True, env=git_env(), check=False)
    if done.returncode != 0:
        raise RepositoryError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
