"""Scratch space of a run: private folders that go away with the process that made them.

Every process of a run (the main one, and each worker) keeps its templates and trial worlds in
folders under the scratch base (`scratch_base`), named ``memstore-<kind>-<pid>-*``, each
holding a ``.lock`` file the process keeps locked for its lifetime. They are removed when the
process exits normally; a process that is killed cannot remove them, so the next run removes
every such folder whose lock is no longer held (`clean_stale`). Stores live in a folder of
their own, apart from the trials' working copies, so no relative path from a working copy
leads to a store.

The scratch base is ``$MEMSTORE_SCRATCH`` where it is set; otherwise ``/dev/shm`` where that is
a memory file system this process may write with room to spare (`ROOM`), because a trial is
thousands of small file operations (its template copied, git's objects and index written, a
store opened, the tree removed) and each costs tens of times more on a disk than in memory;
otherwise the system's temporary directory. Nothing a run measures depends on where it is.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

from memstore.errors import ConfigurationError
from memstore.harness.trees import remove_tree

__all__ = ["ROOM", "clean_stale", "release_all", "scratch", "scratch_base"]

ROOM = 2 << 30  # bytes /dev/shm must have free to hold scratch folders (a container's 64 MiB has not)
_PREFIX = "memstore-"
_MEMORY = Path("/dev/shm")
_KINDS = ("run", "stores")
_MADE: dict[str, tuple[Path, int]] = {}


def _remove(path: Path) -> None:

    with contextlib.suppress(OSError):
        remove_tree(path)


def scratch(kind: str = "run") -> Path:
    """This process's scratch folder of ``kind`` (``run``: templates and trials; ``stores``)."""
    made = _MADE.get(kind)
    if made is not None and made[0].is_dir():
        return made[0]
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{kind}-{os.getpid()}-", dir=scratch_base()))
    # Locked before it gets its name, so no other run ever finds the folder with its lock free.
    lock = os.open(path / ".lock.new", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.rename(path / ".lock.new", path / ".lock")
    _MADE[kind] = (path, lock)
    atexit.register(_release, kind)
    return path


def scratch_base() -> Path:
    """Where scratch folders are made (see the module docstring)."""
    chosen = os.environ.get("MEMSTORE_SCRATCH")
    if chosen:
        if not os.path.isdir(chosen) or not os.access(chosen, os.W_OK | os.X_OK):
            raise ConfigurationError(f"MEMSTORE_SCRATCH={chosen} is not a folder this user can write")
        return Path(chosen)
    return _MEMORY if _roomy(_MEMORY) else Path(tempfile.gettempdir())


def _roomy(folder: Path) -> bool:
    """Whether ``folder`` is a memory file system (tmpfs) this process may write, with `ROOM` free."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
            kinds = {fields[1]: fields[2] for line in mounts if len(fields := line.split()) > 2}
        found = os.statvfs(folder)
    except OSError:
        return False
    return (
        kinds.get(str(folder)) == "tmpfs"
        and os.access(folder, os.W_OK | os.X_OK)
        and found.f_bavail * found.f_frsize >= ROOM
    )


def _release(kind: str) -> None:
    made = _MADE.pop(kind, None)
    if made is None:
        return
    path, lock = made
    _remove(path)
    with contextlib.suppress(OSError):
        os.close(lock)


def release_all() -> None:
    """Remove this process's scratch folders now (at exit, or when a run is interrupted)."""
    for kind in list(_MADE):
        _release(kind)


def clean_stale(root: Path | None = None) -> list[Path]:
    """Remove scratch folders whose process is gone (their lock is free) from ``root``, or from
    the scratch base and the temporary directory; the folders removed."""
    removed = []
    bases = [root] if root is not None else list(dict.fromkeys([scratch_base(), Path(tempfile.gettempdir())]))
    mine = {path for path, _ in _MADE.values()}
    for path in (found for base in bases for found in sorted(Path(base).glob(f"{_PREFIX}*-*"))):
        if path in mine or not path.name.startswith(tuple(f"{_PREFIX}{k}-" for k in _KINDS)):
            continue
        try:
            lock = os.open(path / ".lock", os.O_RDWR)
        except OSError:
            continue  # not ours, or half made: leave it
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its process is alive
        finally:
            os.close(lock)
        _remove(path)
        removed.append(path)
    return removed
