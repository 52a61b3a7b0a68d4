"""One process at a time in a run folder: a lock held for as long as a run, a resume or a merge
uses the folder.

Two evaluations writing one folder would interleave their shards and overwrite each other's
results, and a merge beside a running eval would assemble half a run. So each takes the
folder's lock (``fcntl.flock`` on `LOCK` in it) before it touches anything, and holds it until
it is done; a second is refused at once, in one line, rather than left waiting for a run that
may take hours. A merge reads the runs it assembles under a shared lock: merges may read one run
together, but not beside an eval writing it.

A writer removes the lock file as it lets go (and the folder, if it made it and left nothing in
it: a refused run leaves no folder behind); whoever locked the file just removed sees that it
is no longer the folder's and takes the one there now. The lock goes with its process: a run
killed mid-way leaves the file behind, unlocked.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from memstore.errors import RunFolderError

__all__ = ["LOCK", "hold"]

LOCK = ".memstore.lock"
_HELD: set[Path] = set()  # the folders this process holds (a command holds one, then the pipeline it calls)
_TRIES = 20  # lock files taken that were removed under us before one holds (each a process letting go)


@contextmanager
def hold(folder: Path, *, reading: bool = False) -> Iterator[None]:
    """Hold ``folder``'s lock for the block (made, with the folder, if need be): exclusive to
    write the folder, shared (``reading``) to read a run that others may read too. A folder this
    process holds already is held again.

    Raises:
        RunFolderError: another process holds it (in one line, with its process id).
    """
    key = folder.resolve()
    if key in _HELD:
        yield
        return
    made = not reading and not folder.exists()
    fd = _acquire(folder, reading)
    if fd is None:  # a run that cannot be written (a read-only copy) cannot be written beside us either
        yield
        return
    _HELD.add(key)
    try:
        yield
    finally:
        _HELD.discard(key)
        if not reading:  # still held: no one can take the file being removed and keep it
            with suppress(OSError):
                (folder / LOCK).unlink()
                if made:
                    folder.rmdir()  # only if the block left it empty
        os.close(fd)


def _acquire(folder: Path, reading: bool) -> int | None:
    """A descriptor of the folder's lock file, locked; None for a folder only read that cannot hold one."""
    for _ in range(_TRIES):
        fd = _open(folder, reading)
        if fd is None:
            return None
        try:
            _lock(fd, folder, reading)
            taken = os.fstat(fd)
            now = os.stat(folder / LOCK, follow_symlinks=False)
        except FileNotFoundError:
            os.close(fd)  # removed by the one before us as it let go
            continue
        except BaseException:
            os.close(fd)
            raise
        if (taken.st_dev, taken.st_ino) == (now.st_dev, now.st_ino):
            if not reading:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)
    raise RunFolderError(f"the run folder {folder} is being taken and let go by other memstore processes: try again")


def _open(folder: Path, reading: bool) -> int | None:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        if not reading:
            folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder / LOCK, flags, 0o644)
    except OSError as exc:
        if reading and exc.errno in {errno.EACCES, errno.EROFS, errno.EPERM}:
            return None
        raise


def _lock(fd: int, folder: Path, reading: bool) -> None:
    """Take the lock on ``fd`` now, or say who has it (a writer leaves its process id in the file)."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if reading else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        who = f" (pid {holder})" if holder.isdigit() and not _readers_only(fd) else ""
        raise RunFolderError(
            f"the run folder {folder} is in use by another memstore process{who}: wait for it to end, "
            "or use another folder"
        ) from None


def _readers_only(fd: int) -> bool:
    """Whether the lock is shared (merges reading): the process id in the file is then not theirs."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True
