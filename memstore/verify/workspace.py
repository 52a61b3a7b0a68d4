"""A working copy an agent edits: task branches, real commits, fast-forward merges.

The harness's coding sessions run here: a branch per task from ``main``, the agent's edits
committed with the world clock's date (so reruns give the same commit ids), and a merge
into ``main`` when the scenario's check passes. Part of `memstore.verify` because this
package owns every conversation with git.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from memstore.errors import RepositoryError, ValidationError
from memstore.model import clean_path
from memstore.verify.ancestry import merge_base
from memstore.verify.beneath import open_beneath, read_beneath_stat, remove_tree, write_beneath
from memstore.verify.codebase import MAX_FILE_BYTES
from memstore.verify.differ import Differ
from memstore.verify.filetext import decode, encode
from memstore.verify.git import GitRepository, git_argv, git_env

__all__ = ["Workspace"]

_BRANCH = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*")  # a branch name the harness gives (main, task/KEY)
_RACY_NS = 50_000_000  # a file changed this recently (50 ms) is read again next time, not kept


def _stamp(info: os.stat_result) -> tuple[int, ...]:
    """What tells one state of a file from another (the ``lstat`` fields git's index keeps)."""
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


_FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NAMES: dict[tuple[str, ...], list[str]] = {}  # `Workspace._names`, by the question and the two commits
_NAMES_KEPT = 65_536


_COMMIT_ID = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64})\n?")


def _swap(git_dir: Path, name: str, content: bytes, still: Callable[[], bool] = lambda: True) -> bool:
    """Replace ``git_dir/name`` with ``content`` through ``name.lock`` as git does (the lock made
    exclusively, ``still()`` asked under it, the lock renamed over the file); False, with the file
    and lock as they were, when the lock is held or cannot be made, or ``still()`` says no."""
    try:
        fd = open_beneath(git_dir, f"{name}.lock", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as lock:
            lock.write(content)
        if not still():
            raise OSError(f"{name} moved meanwhile")
        os.rename(git_dir / f"{name}.lock", git_dir / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(git_dir / f"{name}.lock")
        return False
    return True


class Workspace:
    """Edit, commit and merge in a non-bare repository.

    Args:
        path: the work tree.
        copied_from: the repository this one is a copy of, if it is one (what it read by
            object id holds here too).
    """

    def __init__(self, path: str | Path, *, copied_from: GitRepository | None = None) -> None:
        self.path = Path(path)
        self.repo = GitRepository(self.path, copied_from=copied_from)
        self._config = (self.path / ".git" / "config").read_bytes()  # as the harness wrote it
        # Where the branches point, as this harness moved them since the last `secure` (an agent
        # that could write ``.git`` may have moved them: `secure` forgets them all).
        self._heads: dict[str, str] = {}
        self._branch: str | None = None
        self._differs: dict[tuple[str, ...], Differ] = {}  # by options: `memstore.verify.differ`
        self._texts: dict[str, tuple[tuple[int, ...], str]] = {}  # path -> (its status when read, its text)

    def secure(self) -> list[str]:
        """Undo what an agent could leave for the harness's own git to run, before that git
        touches the tree an agent edited: nested repositories (a ``.git`` folder, file or link
        below the top: their configuration would run under ``git add`` or ``git status``) are
        removed, and a changed ``.git/config`` (filters, includes, a moved work tree) is put back.
        Every call also runs with `memstore.verify.git.HARDENED`. What was undone, one line each.
        """
        undone = []
        self._heads.clear()
        top = self.path / ".git"
        if top.is_symlink() or not top.is_dir():
            raise RepositoryError(f"{top} was replaced: the working copy cannot be trusted")
        folders = [(str(self.path), "")]
        while folders:  # depth first, by name; never follows a symlink
            folder, prefix = folders.pop()
            below = []
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                is_dir = entry.is_dir(follow_symlinks=False)
                if entry.name.lower() != ".git" or (not prefix and entry.name == ".git"):
                    if is_dir and prefix + entry.name != ".git":
                        below.append((entry.path, f"{prefix}{entry.name}/"))
                    continue
                if is_dir:
                    remove_tree(Path(entry.path))  # an agent may have locked it
                else:
                    os.unlink(entry.path)
                undone.append(f"a nested repository's {prefix}{entry.name} was removed")
            folders += reversed(below)
        config = top / "config"
        if config.is_symlink() or not config.is_file() or config.read_bytes() != self._config:
            config.unlink(missing_ok=True)
            config.write_bytes(self._config)
            undone.append("the repository's .git/config was changed; it was put back")
        return undone

    def _git(self, *args: str, when: datetime | None = None, who: str = "agent") -> str:
        done = self._run(*args, when=when, who=who)
        if done.returncode != 0:
            raise RepositoryError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode(errors="replace")

    def _run(self, *args: str, when: datetime | None = None, who: str = "agent") -> subprocess.CompletedProcess[bytes]:
        env = git_env()
        if when is not None:
            stamp = f"{int(when.timestamp())} +0000"
            env.update({"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        env.update(
            {
                "GIT_AUTHOR_NAME": who,
                "GIT_AUTHOR_EMAIL": f"{who}@example.com",
                "GIT_COMMITTER_NAME": who,
                "GIT_COMMITTER_EMAIL": f"{who}@example.com",
            }
        )
        return subprocess.run(git_argv(self.path, *args), capture_output=True, env=env, check=False)

    def head(self, ref: str = "main") -> str:
        """The commit ``ref`` points at now."""
        found = self._heads.get(ref) or self._branch_file(ref)
        if found is None:
            found = self._git("rev-parse", "--verify", "--end-of-options", ref).strip()
        self._heads[ref] = found
        return found

    def _branch_file(self, branch: str) -> str | None:
        """The commit of branch ``branch`` read from its file in ``.git/refs/heads``, as git reads
        it (what ``rev-parse`` would run a process for); None where only git can say (a packed or
        symbolic ref, a name that is not a plain branch's, anything but a commit id in the file)."""
        if branch == "HEAD" or not _BRANCH.fullmatch(branch) or ".." in branch:
            return None
        try:
            fd = os.open(self.path / ".git" / "refs" / "heads" / branch, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            text = handle.read(100) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        found = _COMMIT_ID.fullmatch(text)
        return found.group(1).decode() if found else None

    def _moved(self, branch: str, to: str | None) -> None:
        if to is None:
            self._heads.pop(branch, None)
        else:
            self._heads[branch] = to

    def start(self, branch: str, base: str = "main") -> None:
        """Check out a new branch ``branch`` from ``base``, discarding stray edits."""
        self._git("checkout", "-q", "-f", "-B", branch, base)
        self._branch = branch
        self._heads.pop("HEAD", None)
        self._moved(branch, self._heads.get(base))

    def read(self, path: str) -> str | None:
        """A file of the work tree, or None (outside it, in ``.git``, not a regular file, too
        large), opened beneath the work tree whatever is swapped on disk meanwhile, and decoded
        as its language's tools decode it (`memstore.verify.filetext`: a Python file by its
        coding header).

        What was read is kept with the status of the file it came from (device, inode, type,
        size, modification and change times) and given again while ``lstat`` finds that very
        file unchanged at the path, as git's index trusts a file whose status it recorded. A
        file changed less than `_RACY_NS` before it was read is not kept: a change within the
        same tick of the file system's clock would leave its times as they were."""
        try:
            clean = clean_path(path)
        except ValidationError:
            return None
        kept = self._texts.get(clean)
        if kept is not None:
            try:
                if _stamp(os.lstat(os.path.join(self.path, clean))) == kept[0]:
                    return kept[1]
            except OSError:
                pass
            del self._texts[clean]
        try:
            data, info = read_beneath_stat(self.path, clean, MAX_FILE_BYTES)
        except (ValidationError, OSError, ValueError):
            return None
        text = decode(data, clean)
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _RACY_NS:
            self._texts[clean] = (_stamp(info), text)
        return text

    def replace(self, path: str, old: str, new: str) -> bool:
        """Replace the first ``old`` with ``new`` in ``path``; False if ``old`` is not there."""
        text = self.read(path)
        if text is None or old not in text:
            return False
        return self.write(path, text.replace(old, new, 1))

    def write(self, path: str, text: str) -> bool:
        """Write ``path`` of the work tree (never outside it, never into ``.git``, never through
        a symlink or over a folder), encoded as `read` decodes it; False if refused."""
        try:
            write_beneath(self.path, clean_path(path), encode(text, path))
        except (ValidationError, OSError):
            return False
        return True

    def commit(self, message: str, *, when: datetime, who: str) -> str | None:
        """Commit every change of the work tree; the new commit id, or None when nothing changed."""
        self._git("add", "-A")
        done = self._run("commit", "-q", "-m", message, when=when, who=who)
        if done.returncode != 0:  # nothing to commit (exit status 1), or a failure: status says which
            if self._git("status", "--porcelain", "--ignore-submodules=all").strip():
                raise RepositoryError(f"git commit failed: {done.stderr.decode(errors='replace').strip()}")
            return None
        made = (self._branch_file(self._branch) if self._branch else None) or self._git("rev-parse", "HEAD").strip()
        self._heads.pop("HEAD", None)
        if self._branch is not None:
            self._moved(self._branch, made)
        else:  # on a branch the harness did not start: which one moved is git's to say
            self._heads.clear()
        return made

    def merge(self, branch: str, into: str = "main") -> None:
        """Fast-forward ``into`` to ``branch`` and check it out.

        When the branch checked out is ``branch`` and its commit's one parent is where ``into``
        points (the session's one commit, as the harness makes it), ``into`` moves by compare and
        swap and HEAD follows it (`_fast_forward`); the work tree and index are that commit's
        already. Otherwise git's checkout and ``merge --ff-only``.
        """
        old, new = self.head(into), self.head(branch)
        if self._branch == branch and _BRANCH.fullmatch(into) and self.repo.parents(new) == (old,):
            if not self._fast_forward(into, old, new, f"merge {branch}: Fast-forward"):
                self._git("update-ref", "-m", f"merge {branch}: Fast-forward", f"refs/heads/{into}", new, old)
                self._git("symbolic-ref", "HEAD", f"refs/heads/{into}")
        else:
            self._git("checkout", "-q", into)
            self._git("merge", "-q", "--ff-only", branch)
        self._branch = into
        self._heads.pop("HEAD", None)
        self._moved(into, self._heads.get(branch))

    def _fast_forward(self, branch: str, old: str, new: str, message: str) -> bool:
        """Move ``branch`` from ``old`` to ``new`` and point HEAD at it as ``update-ref -m MESSAGE
        NEW OLD`` and ``symbolic-ref HEAD`` do, with no process: each file is written to its
        ``.lock`` (made exclusively), the old value checked under the lock, and renamed into place;
        the move is logged in the branch's reflog. False, with nothing changed, where only git can
        say (a packed or missing ref, a lock another process holds, a ref that moved meanwhile)."""
        git_dir = self.path / ".git"
        ref = f"refs/heads/{branch}"
        if not _swap(git_dir, ref, f"{new}\n".encode(), lambda: self._branch_file(branch) == old):
            return False
        stamp = f"agent <agent@example.com> {int(time.time())} +0000"  # as `_git` names the harness
        with contextlib.suppress(OSError):  # git, too, moves the ref when its log cannot be written
            os.makedirs(git_dir / "logs" / "refs" / "heads" / os.path.dirname(branch), exist_ok=True)
            fd = open_beneath(git_dir, f"logs/{ref}", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            with os.fdopen(fd, "ab") as log:
                log.write(f"{old} {new} {stamp}\t{message}\n".encode())
        if not _swap(git_dir, "HEAD", f"ref: {ref}\n".encode()):
            self._git("symbolic-ref", "HEAD", ref)
        return True

    def discard(self) -> list[str]:
        """Drop what was written into the work tree, unread: everything but ``.git`` is removed (at
        any depth, never through a link), what an agent planted for git is undone (`secure`), and
        git checks the commit's files out again. What `secure` undid, one line each."""
        removed = True
        while removed:  # entries removed while the folder is listed may hide others: list again
            removed = False
            with os.scandir(self.path) as listing:
                for entry in listing:
                    if entry.name == ".git":
                        continue
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            remove_tree(Path(entry.path))
                        else:
                            os.unlink(entry.path)
                        removed = True
        self._texts.clear()
        undone = self.secure()
        self._git("checkout", "-q", "-f")
        return undone

    def abandon(self, into: str = "main") -> None:
        """Go back to ``into``, leaving the task branch unmerged."""
        self._git("checkout", "-q", "-f", into)
        self._branch = into
        self._heads.pop("HEAD", None)

    def changed(self, base: str, head: str) -> list[str]:
        """Files a pull request from ``head`` into ``base`` changes (from their merge base)."""
        return self._names("--name-only", "-M", self.head(base), self.head(head), merge_base=True)

    def _names(self, *args: str, merge_base: bool = False) -> list[str]:
        """The paths ``git diff ARGS OLD NEW`` names (``OLD...NEW`` with ``merge_base``). Between
        two commits by id they are a function of the two (and of the configuration every working
        copy of the run shares): kept for the process, so arms and trials that made the same
        commits ask git once."""
        *options, old, new = args
        key = (*args, str(merge_base))
        by_id = bool(_FULL_ID.fullmatch(old) and _FULL_ID.fullmatch(new))
        found = _NAMES.get(key) if by_id else None
        if found is None:
            base = (self._merge_base(old, new) if merge_base else old) if by_id else None
            if base is not None:
                out = self._differ(tuple(options)).diff(base, new).decode(errors="replace")
            else:
                out = self._git(
                    "diff", *options, f"{old}...{new}" if merge_base else old, *([] if merge_base else [new])
                )
            found = [line for line in out.splitlines() if line]
            if by_id:
                if len(_NAMES) >= _NAMES_KEPT:
                    _NAMES.clear()
                _NAMES[key] = found
        return list(found)

    def pull_request_diff(self, base: str, head: str) -> str:
        """The unified diff a pull request from ``head`` into ``base`` shows (from their merge base)."""
        options = ("--no-color", "--no-ext-diff", "--no-textconv", "-M")
        found = self._merge_base(self.head(base), self.head(head))
        if found is not None:
            return self._differ(("-p", *options)).diff(found, self.head(head)).decode(errors="replace")
        return self._git("diff", *options, f"{base}...{head}")

    def _merge_base(self, old: str, new: str) -> str | None:
        """The one merge base of two commit ids (None: none, several, or not ids: git is asked)."""
        if not (_FULL_ID.fullmatch(old) and _FULL_ID.fullmatch(new)):
            return None
        return merge_base(self.repo, old, new)

    def diff(self, old: str, new: str, *, cap: int | None = None) -> str:
        """Git's own ``-U0`` diff between two commits: what changed, line by line; with ``cap``,
        refused (`RepositoryError`) past that many bytes, read no further."""
        options = ("--no-color", "--no-ext-diff", "--no-textconv", "-M", "-U0")
        if _FULL_ID.fullmatch(old) and _FULL_ID.fullmatch(new):
            return self._differ(("-p", *options)).diff(old, new, cap=cap).decode(errors="replace")
        return self._git("diff", *options, old, new)

    def _differ(self, options: tuple[str, ...]) -> Differ:
        found = self._differs.get(options)
        if found is None:
            found = self._differs[options] = Differ(self.path, options)
        return found

    def close(self) -> None:
        """Stop the git processes this working copy keeps (each restarts when next needed)."""
        for differ in self._differs.values():
            differ.close()
        self.repo.close()

    def touched(self, old: str, new: str) -> list[str]:
        """Paths a change from ``old`` to ``new`` touched (both names of a rename)."""
        return self._names("--name-only", "--no-renames", old, new)
