"""The merge check: whether a coding session's change may merge.

A task's check (grading data) is run by the harness after the agent's session, on the change
it committed: values that must be equal across files, texts that must (not) be there, files
that must not change, and a command that must pass (a real test suite, where the fixture's
toolchain runs here). The scenario's patterns run under a time limit (the `regex` package's
``timeout``). The command runs the agent's code (a test suite imports the modules it edited), so
it runs as the agent did (`memstore.harness.run.isolation.sandbox.run_isolated`: the sandbox, a scrubbed
environment, no network, bounded): one that reads what it should not sees nothing, and one that
backtracks or hangs without end fails its check, not the run.

A command's verdict is kept, in each process, by what it ran on: the command, the isolation,
and every byte of the work tree (paths, modes, contents, links; of ``.git`` only its config; a
file's bytes are hashed again only when its status changed, as git's index trusts a file's).
Arms and trials that leave the same files get the same verdict without running it again, which
holds for the deterministic checks a scenario must give (a check whose outcome varies from run
to run on the same files is a flaky test: its verdict here is its first one). A run that left
the tree other than it found it (the agent's code wrote files, or planted configuration for
the harness's git) is never kept, so what it did happens again, and is seen again, in every
trial: results never depend on which trials shared a process.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time
from collections.abc import Collection
from pathlib import Path

from memstore.harness.run import AgentRuntime, run_isolated
from memstore.harness.scenarios import Task, pattern_group
from memstore.verify import Workspace

__all__ = ["CHECK_TIMEOUT", "check_change"]

CHECK_TIMEOUT = 300.0  # seconds a scenario's check command may run (a test suite, say)


def check_change(
    workspace: Workspace, task: Task, touched: Collection[str] = (), runtime: AgentRuntime | None = None
) -> bool:
    """Whether the work tree (the change committed on it touching ``touched``) passes ``task``'s
    check; its command runs under ``runtime``'s isolation (the agent's)."""
    check = task.check
    values = [pattern_group(location.pattern, workspace.read(location.path)) for location in check.equal]
    if any(v is None for v in values) or len(set(values)) > 1:
        return False
    for path, needle in check.contains:
        text = workspace.read(path)
        if text is None or needle not in text:
            return False
    for path, needle in check.absent:
        text = workspace.read(path)
        if text is not None and needle in text:
            return False
    if set(check.unchanged) & set(touched):
        return False
    return not (check.command and _command_fails(workspace, check.command, runtime or AgentRuntime()))


_VERDICTS: dict[str, bool] = {}  # what a command gave on a work tree, by `_ran_on` (see the module docstring)


def _ran_on(root: Path, argv: list[str], runtime: AgentRuntime) -> str:
    """A digest of what a check command's verdict depends on: the command, how it is isolated,
    and the work tree below ``root`` byte for byte (links read, never followed; of ``.git``, its config)."""
    digest = hashlib.sha256(repr((argv, runtime.sandbox.value, runtime.network.value)).encode())
    digest.update(_read_digest(root / ".git" / "config"))
    folders = [(str(root), "")]
    while folders:  # depth first, by name; links are read, never followed
        folder, prefix = folders.pop()
        below = []
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if not prefix and entry.name == ".git":
                continue
            if entry.is_dir(follow_symlinks=False):
                below.append((entry.path, f"{prefix}{entry.name}/"))
                continue
            info = entry.stat(follow_symlinks=False)
            digest.update(f"\0{prefix}{entry.name}\0{info.st_mode:o}\0".encode())
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(entry.path).encode(errors="surrogateescape"))
            elif stat.S_ISREG(info.st_mode):
                digest.update(_file_digest(Path(entry.path), info))
        folders += reversed(below)
    return digest.hexdigest()


_RACY_NS = 50_000_000  # a file changed this recently may change again unseen by its times: hashed again
_HASHED: dict[tuple[int, ...], bytes] = {}  # a file's status (as git's index keeps it) -> its content's digest
_HASHED_KEPT = 200_000


def _file_digest(path: Path, info: os.stat_result) -> bytes:
    """The digest of a regular file's bytes, given again while its status (device, inode, size,
    modification and change times) is the one it had when it was hashed, long enough ago."""
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    found = _HASHED.get(key)
    if found is None:
        found = _read_digest(path)
        if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) > _RACY_NS:
            if len(_HASHED) >= _HASHED_KEPT:
                _HASHED.clear()  # trials' files come and go: what a long run hashed long ago is dropped
            _HASHED[key] = found
    return found


def _read_digest(path: Path) -> bytes:
    """The digest of a regular file's bytes (read in chunks, never through a link or from a pipe
    an agent put in its place meanwhile; what cannot be read counts as a mark of its own)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b"unreadable"
    content = hashlib.sha256()
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b"not a file"
        while chunk := handle.read(1 << 20):
            content.update(chunk)
    return content.hexdigest().encode()


def _command_fails(workspace: Workspace, command: tuple[str, ...], runtime: AgentRuntime) -> bool:
    """Run the check command in the work tree as the agent ran (or give the verdict it gave on
    these very files); it fails on a non-zero exit, a timeout, or a program that cannot start."""
    argv = [sys.executable if part == "{python}" else part for part in command]
    key = _ran_on(workspace.path, argv, runtime)
    if key in _VERDICTS:
        return _VERDICTS[key]
    fails = _run_fails(workspace, argv, runtime)
    if _ran_on(workspace.path, argv, runtime) == key:  # it changed nothing: the next run would not either
        _VERDICTS[key] = fails
    return fails


def _run_fails(workspace: Workspace, argv: list[str], runtime: AgentRuntime) -> bool:
    env = {"PYTHONDONTWRITEBYTECODE": "1"}  # a check leaves nothing in the work tree
    try:
        finished = run_isolated(argv, workdir=workspace.path, runtime=runtime, timeout=CHECK_TIMEOUT, env=env)
    except OSError:
        return True
    return finished.timed_out or finished.returncode != 0
