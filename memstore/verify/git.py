"""The one place memstore talks to git (reading side).

`GitRepository` keeps one long-lived ``git cat-file --batch-command`` process per repository
and pipelines many object reads through it in one round trip, with a cache of blobs by id
and of trees by commit. A commit's files are listed through that reader from its tree objects
(`memstore.verify.listing`; ``git ls-tree -r -l`` where git is older than 2.36), so a file's
existence, mode (symlink, submodule) and size are known before anything is read.

Written on ``subprocess`` rather than GitPython on purpose: GitPython's reader answers one
object per round trip, and cold verification needs thousands of reads in one batch.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from memstore.errors import RepositoryError
from memstore.verify.gitrun import (
    HARDENED,
    batch_commands,
    git_argv,
    git_env,
    plain_git_dir,
    repo_name_of_url,
    repository_root,
    source_commit,
    start_piped,
    stop_piped,
)
from memstore.verify.hunks import Hunk, map_line, parse_sections
from memstore.verify.listing import TreeEntry, list_tree, parse_ls_tree

__all__ = [
    "HARDENED",
    "GitObject",
    "GitRepository",
    "Hunk",
    "TreeEntry",
    "git_argv",
    "git_env",
    "map_line",
    "repo_name_of_url",
    "repository_root",
    "source_commit",
]

_BLOB_CACHE_BYTES = 256 * 1024 * 1024
_CHUNK = 800  # object names per pipelined write: well under a pipe buffer
_IMMUTABLE = re.compile(r"^[0-9a-f]{40,64}(?::|$)")
_TREES: dict[str, dict[str, TreeEntry]] = {}  # every file of a commit, by its id: the same in every repository
_TREES_KEPT = 4096
_FOUND = re.compile(rb"^([0-9a-f]{40,64}) ([a-z]+) (\d+)\n\Z")
_FULL_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


@dataclass(frozen=True)
class GitObject:
    """An object looked up by name: its id, kind (``blob``, ``commit``, ...), size, and a blob's content."""

    oid: str
    kind: str
    size: int
    data: bytes | None


def _discard(stream: IO[bytes], count: int) -> None:
    while count > 0:
        chunk = stream.read(min(count, 1 << 20))
        if not chunk:
            raise ValueError("git cat-file ended early")
        count -= len(chunk)


class GitRepository:
    """Read-only access to the objects of one git repository, bare or not.

    Args:
        path: the repository (its work tree, or the bare repository's directory).

    Raises:
        RepositoryError: when ``path`` is not a git repository or git cannot run.
    """

    def __init__(self, path: str | Path, *, copied_from: GitRepository | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise RepositoryError(f"{self.path} is not a directory")
        self.git_dir = plain_git_dir(self.path) or Path(self.run("rev-parse", "--absolute-git-dir").decode().strip())
        # A copy of another repository (a trial's world of its template) holds every object the
        # original holds: what the original read by object id holds here too.
        self._original = copied_from
        self._lock = threading.Lock()
        self._cat: subprocess.Popen[bytes] | None = None
        self._blobs: OrderedDict[str, bytes] = OrderedDict()
        self._names: dict[str, tuple[str, str, int]] = {}
        self._blob_bytes = 0
        self._trees: dict[str, dict[str, TreeEntry]] = {}
        self._commits: dict[str, str | None] = {}
        self._renames: dict[tuple[str, str | None], dict[str, str]] = {}

    def __repr__(self) -> str:
        return f"GitRepository({str(self.path)!r})"

    # -- commands -------------------------------------------------------------------

    def run(self, *args: str, input: bytes | None = None) -> bytes:
        """Run ``git -C path ARGS`` and return its standard output.

        Raises:
            RepositoryError: with git's own message when it fails.
        """
        try:
            done = subprocess.run(
                git_argv(self.path, *args),
                input=input,
                capture_output=True,
                env=git_env(),
                check=False,
            )
        except OSError as exc:
            raise RepositoryError(f"cannot run git: {exc}") from exc
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
            raise RepositoryError(f"git {' '.join(args[:2])} failed in {self.path}: {message}")
        return done.stdout

    def resolve(self, ref: str) -> str | None:
        """The commit id ``ref`` names (branch, tag, sha, ``HEAD~2``...), or None."""
        if ref not in self._commits and self._original is not None and _FULL_ID.match(ref):
            known = self._original._commits.get(ref)
            if known is not None:  # a commit of the original is a commit of the copy
                self._commits[ref] = known
        if ref not in self._commits and _FULL_ID.match(ref):  # an id: the object reader says if it is a commit
            found = self.objects([ref]).get(ref)
            if found is not None and found.kind == "commit":
                self._commits[ref] = found.oid
        if ref not in self._commits:
            if ref.startswith("-") or "\x00" in ref or "\n" in ref:
                return None
            if batch_commands():  # the object reader resolves a name as rev-parse does, with no process
                with self._lock:
                    named = self._exchange([f"info {ref}^{{commit}}"])[0]
                self._commits[ref] = named[0] if named is not None and named[1] == "commit" else None
                return self._commits[ref]
            try:
                out = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
            except RepositoryError:
                self._commits[ref] = None
            else:
                self._commits[ref] = out.decode().strip() or None
        return self._commits[ref]

    def origin_name(self) -> str | None:
        """The repository's ``owner/name`` read off its ``origin`` remote URL (``https://host/owner/
        name.git``, ``git@host:owner/name``, ``ssh://...``), or None when there is no origin or its
        URL names no owner and repository (a local path, say): the name is never guessed."""
        try:
            url = self.run("config", "--get", "remote.origin.url").decode(errors="replace").strip()
        except RepositoryError:
            return None
        return repo_name_of_url(url)

    def is_clean(self) -> bool:
        """Whether the work tree matches HEAD (untracked files aside)."""
        return not self.run("status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all").strip()

    def is_bare(self) -> bool:
        """Whether the repository has no work tree."""
        return self.run("rev-parse", "--is-bare-repository").decode().strip() == "true"

    def tree(self, commit: str) -> dict[str, TreeEntry]:
        """Every file of ``commit`` by path (listed through the object reader, cached)."""
        found = self._trees.get(commit)
        if found is None and _FULL_ID.match(commit):
            found = _TREES.get(commit)  # a commit's tree never changes, in any repository that has it
        if found is None and batch_commands():
            with self._lock:
                try:
                    found = list_tree(self._exchange, commit)
                except LookupError:
                    found = None  # a broken repository: ls-tree says what is wrong
        if found is None:
            found = parse_ls_tree(self.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit))
        self._trees[commit] = found
        if _FULL_ID.match(commit) and commit not in _TREES:
            _TREES[commit] = found
            while len(_TREES) > _TREES_KEPT:
                del _TREES[next(iter(_TREES))]
        return found

    def parents(self, commit: str) -> tuple[str, ...] | None:
        """The parents of the commit ``commit`` (a full id) names, read through the object reader
        (no process of its own); None when it is not a commit of this repository."""
        if not _FULL_ID.match(commit):
            return None
        with self._lock:
            found = self._exchange([self._asked(commit)])[0]
        if found is None or found[1] != "commit" or found[3] is None:
            return None
        data = found[3]
        head = data.split(b"\n\n", 1)[0]
        return tuple(line[7:].decode() for line in head.split(b"\n") if line.startswith(b"parent "))

    def renames(self, old: str, new: str | None) -> dict[str, str]:
        """Files of ``old`` that git's rename detection finds under another path in ``new``
        (``None``: the work tree and index as they are now, staged renames included; not cached)."""
        key = (old, new)
        if new is None or key not in self._renames:
            raw = self.run(
                "diff", "--no-ext-diff", "--no-textconv", "-M", "--name-status", "-z", old, *([new] if new else [])
            )
            fields = raw.split(b"\x00")
            found: dict[str, str] = {}
            i = 0
            while i < len(fields) and fields[i]:
                status = fields[i].decode()
                if status.startswith(("R", "C")):
                    source = fields[i + 1].decode("utf-8", "surrogateescape")
                    target = fields[i + 2].decode("utf-8", "surrogateescape")
                    if status.startswith("R"):
                        found[source] = target
                    i += 3
                else:
                    i += 2
            if new is None:
                return found
            self._renames[key] = found
        return self._renames[key]

    def diff_hunks(self, old: str, new: str, algorithm: str = "myers") -> dict[str, tuple[str, list[Hunk]]]:
        """For each file of ``old`` that the diff to ``new`` touches: (its new path, "" if deleted; hunks).

        Git's own line mapping (``git diff -M -U0``): an independent answer to "where did this
        line go", used as ground truth by the harness and the relocation evaluation.
        """
        return self.hunks_between([(old, new)], algorithm)[(old, new)]

    def hunks_between(
        self, pairs: Iterable[tuple[str, str]], algorithm: str = "myers"
    ) -> dict[tuple[str, str], dict[str, tuple[str, list[Hunk]]]]:
        """`diff_hunks` for many pairs of commits in one ``git diff-tree --stdin`` (each pair's
        section opens with the line of its new commit's id, ``--always`` even when empty).

        Raises:
            RepositoryError: when a name is not a commit of this repository."""
        wanted = list(dict.fromkeys(pairs))
        ids: dict[str, str] = {}
        for name in (name for pair in wanted for name in pair):
            if (ids.setdefault(name, self.resolve(name) or "")) == "":
                raise RepositoryError(f"{name!r} is not a commit of {self.path}")
        options = ("-p", "-M", "-U0", f"--diff-algorithm={algorithm}", "--no-color", "--no-ext-diff", "--no-textconv")
        asked = "".join(f"{ids[new]} {ids[old]}\n" for old, new in wanted).encode()  # commit, then its "parent"
        out = self.run("diff-tree", "--stdin", "--always", *options, input=asked)
        try:
            return dict(zip(wanted, parse_sections(out, [ids[new] for _, new in wanted]), strict=True))
        except ValueError as exc:
            raise RepositoryError(f"git diff-tree in {self.path}: {exc}") from exc

    # -- objects --------------------------------------------------------------------

    def _reader(self) -> subprocess.Popen[bytes]:
        if self._cat is None or self._cat.poll() is not None:
            self._cat = start_piped(self.path, "cat-file", "--batch-command" if batch_commands() else "--batch")
        return self._cat

    def objects(self, names: Iterable[str], *, max_size: int | None = None) -> dict[str, GitObject]:
        """Look up objects by name (an id, or ``<commit>:<path>``) in one pipelined batch.

        Names git cannot resolve are left out. Only blobs carry ``data``, and a blob over
        ``max_size`` comes back with ``data`` None: its size is known, its content is
        never read into memory. Lookups by id (and ``<id>:<path>``) are cached.
        """
        wanted = [n for n in dict.fromkeys(names) if n and "\n" not in n and not n.startswith("-")]
        result: dict[str, GitObject] = {}
        with self._lock:
            pending = []
            for name in wanted:
                meta = self._names.get(name)
                if meta is None and self._original is not None:
                    meta = self._inherited(name)
                if meta is None:
                    pending.append(name)
                    continue
                oid, kind, size = meta
                if kind != "blob" or (max_size is not None and size > max_size):
                    result[name] = GitObject(oid, kind, size, None)
                elif (data := self._blobs.get(oid)) is not None:
                    self._blobs.move_to_end(oid)
                    result[name] = GitObject(oid, kind, size, data)
                else:
                    pending.append(name)  # dropped from the blob cache; read again
            for start in range(0, len(pending), _CHUNK):
                result.update(self._fetch(pending[start : start + _CHUNK], max_size))
        return result

    def _inherited(self, name: str) -> tuple[str, str, int] | None:
        """What the original read under ``name`` (names by object id only: they mean the same
        object in the copy), and its blob if the original still keeps it."""
        assert self._original is not None
        meta = self._original._names.get(name)
        if meta is not None:
            self._names[name] = meta
            data = self._original._blobs.get(meta[0])
            if data is not None:
                self._remember(meta[0], data)
        return meta

    def blob(self, oid: str, *, max_size: int | None = None) -> bytes | None:
        """One blob's contents, or None (missing, not a blob, or over ``max_size``)."""
        found = self.objects([oid], max_size=max_size).get(oid)
        return found.data if found is not None else None

    def _fetch(self, names: Sequence[str], max_size: int | None) -> dict[str, GitObject]:
        found: dict[str, GitObject] = {}
        answers = self._exchange([self._asked(name) for name in names], blobs_up_to=max_size)
        for name, answer in zip(names, answers, strict=True):
            if answer is None:
                continue
            oid, kind, size, data = answer
            if data is not None:
                self._remember(oid, data)
            if _IMMUTABLE.match(name):
                self._names[name] = (oid, kind, size)
            found[name] = GitObject(oid, kind, size, data)
        return found

    @staticmethod
    def _asked(name: str) -> str:
        """The reader's command for an object's contents (``--batch`` takes the bare name)."""
        return f"contents {name}" if batch_commands() else name

    def _exchange(
        self, commands: Sequence[str], *, blobs_up_to: int | None = -1
    ) -> list[tuple[str, str, int, bytes | None] | None]:
        """One pipelined round trip through the object reader (the caller holds the lock): for
        each command, (id, kind, size, content) or None where git found nothing. ``info``
        commands carry no content; blobs carry theirs up to ``blobs_up_to`` bytes (None: any size;
        -1: every object's content, trees and commits too), objects beyond it None."""
        proc = self._reader()
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            proc.stdin.write("".join(f"{command}\n" for command in commands).encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
            answers: list[tuple[str, str, int, bytes | None] | None] = []
            for command in commands:
                header = _FOUND.match(proc.stdout.readline())
                if header is None:  # "<name> missing" or "<name> ambiguous"; the name may hold spaces
                    answers.append(None)
                    continue
                oid, kind, size = header[1].decode(), header[2].decode(), int(header[3])
                data: bytes | None = None
                if command.startswith("info "):
                    pass
                elif blobs_up_to == -1 or (kind == "blob" and (blobs_up_to is None or size <= blobs_up_to)):
                    data = proc.stdout.read(size)
                    proc.stdout.read(1)
                else:
                    _discard(proc.stdout, size + 1)
                answers.append((oid, kind, size, data))
            return answers
        except (OSError, ValueError) as exc:
            self.close()
            raise RepositoryError(f"reading objects from {self.path} failed: {exc}") from exc

    def _remember(self, oid: str, data: bytes) -> None:
        self._blobs[oid] = data
        self._blob_bytes += len(data)
        while self._blob_bytes > _BLOB_CACHE_BYTES and self._blobs:
            _, dropped = self._blobs.popitem(last=False)
            self._blob_bytes -= len(dropped)

    def close(self) -> None:
        """Stop the object reader (it restarts on the next read)."""
        proc, self._cat = self._cat, None
        stop_piped(proc)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finaliser
            self.close()
