"""How memstore starts git: hardened arguments and environment (`git_argv`, `git_env`), and
the questions asked of a checkout (its root, its commit, its remote's name)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
from pathlib import Path

from memstore.errors import RepositoryError

__all__ = [
    "HARDENED",
    "batch_commands",
    "git_argv",
    "git_env",
    "plain_git_dir",
    "repo_name_of_url",
    "repository_root",
    "source_commit",
]


# Configuration a repository (or a nested one, or an agent that wrote its ``.git/config``) could
# set to make git run a program: every call memstore makes overrides it (command-line ``-c`` wins
# over every configuration file). Filters and textconv drivers are named by attributes and defined
# in configuration; memstore's own working copies keep the configuration the harness wrote
# (`memstore.verify.workspace.Workspace.secure`), and diffs are asked for without either.
HARDENED = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.sshCommand=false",
    "core.askPass=false",
    "core.untrackedCache=false",
    "credential.helper=",
    "sequence.editor=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gpg.program=false",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "protocol.allow=never",
    "protocol.file.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "uploadpack.packObjectsHook=",
    "safe.bareRepository=all",
)


def git_argv(where: str | Path, *args: str) -> list[str]:
    """``git -C where ARGS`` with `HARDENED` in force: the only way memstore starts git."""
    return ["git", *(arg for item in HARDENED for arg in ("-c", item)), "-C", str(where), *args]


def git_env() -> dict[str, str]:
    """The environment git runs in: no prompts, no pager, no locale surprises, no system config."""
    env = dict(os.environ)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_ASKPASS": "false",
            "SSH_ASKPASS": "false",
        }
    )
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_EXTERNAL_DIFF",
    ):
        env.pop(name, None)
    return env


@functools.cache
def batch_commands() -> bool:
    """Whether this machine's git reads ``cat-file --batch-command`` (git 2.36 and later)."""
    try:
        out = subprocess.run(["git", "version"], capture_output=True, text=True, env=git_env(), check=False).stdout
    except OSError:
        return False
    found = re.search(r"(\d+)\.(\d+)", out)
    return found is not None and (int(found[1]), int(found[2])) >= (2, 36)


def plain_git_dir(path: Path) -> Path | None:
    """The ``.git`` folder of a work tree when it is a plain folder (not a link, not a file
    pointing elsewhere) holding a ``HEAD``, as git would find it; None otherwise (git is asked)."""
    top = path / ".git"
    try:
        if top.is_symlink() or not top.is_dir() or not (top / "HEAD").is_file():
            return None
    except OSError:
        return None
    return Path(os.path.abspath(top))


def start_piped(where: str | Path, *args: str) -> subprocess.Popen[bytes]:
    """A long-lived ``git -C where ARGS`` read and written through pipes (its errors dropped).

    Raises:
        RepositoryError: when git cannot start."""
    try:
        return subprocess.Popen(
            git_argv(where, *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_env(),
        )
    except OSError as exc:
        raise RepositoryError(f"cannot run git {args[0]}: {exc}") from exc


def stop_piped(proc: subprocess.Popen[bytes] | None) -> None:
    """End a `start_piped` process: its input closed, waited for, its output closed."""
    if proc is None:
        return
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def _answer(where: str | Path, *args: str) -> list[str] | None:
    """The lines git prints for ``git -C where ARGS`` (None when it fails or cannot start)."""
    try:
        done = subprocess.run(git_argv(where, *args), capture_output=True, text=True, env=git_env(), check=False)
    except OSError:
        return None
    return (done.stdout.split("\n")[:-1] or None) if done.returncode == 0 else None


def repository_root(cwd: str | Path) -> Path | None:
    """The root of the repository ``cwd`` is in, shared by all its worktrees (from git's common
    directory), or None outside a repository."""
    found = _answer(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if not found:
        return None
    common = Path(found[0])
    return common.parent if common.name == ".git" else common


def source_commit(package: Path) -> str | None:
    """The commit a package directory was loaded from, when it is the ``memstore/`` folder of a
    git checkout (its parent is the work tree's top level); None for an installed copy, even one
    inside someone else's repository, and when git cannot tell."""
    lines = _answer(package, "rev-parse", "--show-toplevel", "HEAD") or []
    if len(lines) != 2 or Path(lines[0]).resolve() != package.resolve().parent:
        return None
    return lines[1]


_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?[^/:]+:(?!//)(?P<path>.+)$")  # git@host:owner/name.git


def repo_name_of_url(url: str) -> str | None:
    """``owner/name`` from a git remote URL, or None when the URL does not name one."""
    from urllib.parse import urlsplit

    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme.endswith("file") or not parts.netloc:
            return None
        path = parts.path
    else:
        scp = _SCP_LIKE.match(url)
        if scp is None:
            return None  # a local path: it names a folder, not a repository on a host
        path = scp.group("path")
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2:
        return None
    owner, name = segments[-2], segments[-1].removesuffix(".git")
    return f"{owner}/{name}" if re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", f"{owner}/{name}") else None
