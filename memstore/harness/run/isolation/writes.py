"""What a session wrote into its working copy, held to a budget before the harness reads any of it.

An agent may write without end: 420 MB in a working copy cost the harness 1.8 GB and 90 s to
commit, diff and parse, and the copy lies in ``/dev/shm``, in memory. So before a session's
change is committed, its working copy is compared with how the session found it (`stamps`,
taken as it starts): every file that is new or changed (by inode, size, modification time or
type) counts its size, and every new file or folder counts one, and past the budget
(`WRITE_BUDGET`) the walk stops (`overrun`). A session past it is an agent error; what it wrote
is discarded unread. The repository's own ``.git`` is the harness's and is not counted.

The walk treats the tree as hostile: it never follows a link (a link counts as a file of its
own size), keeps a stack instead of recursing (a tree may be thousands of folders deep), and
reads each folder as it goes, so a folder of a million entries costs what the budget allows.

The budget: the library's changes are a few files of kilobytes (its fixture repositories hold at
most 13 files and 64 KB), and a real agent's own leftovers (bytecode caches, a test runner's
cache, its trajectory) are some hundreds of files and a few megabytes. 16 MiB and 10,000 files
is some hundred times what a scenario needs, and bounds what the harness spends on a change it
keeps: a 60 MiB change cost it 321 MiB of memory to commit, diff and check (measured), so one
within the budget costs about 90 MiB and a second. A single file may not grow past the byte
budget either: the agent's command and the check that runs its code run with ``RLIMIT_FSIZE``
just past it (`MAX_FILE_BYTES`, set by `memstore.harness.run.isolation.reaper`), in their temporary
folders too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DIFF_CAP", "MAX_FILE_BYTES", "WRITE_BUDGET", "Stamps", "WriteBudget", "overrun", "stamps"]

Stamps = dict[str, tuple[int, int, int, int]]  # path below the root -> (mode, inode, size, mtime ns)


@dataclass(frozen=True)
class WriteBudget:
    """What one session may write into its working copy.

    Attributes:
        bytes: the sizes of its new and changed files, summed.
        files: how many files and folders it made or changed.
    """

    bytes: int = 16 * 1024 * 1024
    files: int = 10_000


WRITE_BUDGET = WriteBudget()
# No file an agent's command (or the check running its code) writes grows past this: a file cut
# there is past the byte budget still, and the session is discarded like any other past it.
MAX_FILE_BYTES = WRITE_BUDGET.bytes + 1
# The -U0 patch of a change within the budget: every added line once with its '+' (a file of
# empty lines doubles), the lines of the repository's own files it removed, a header per file.
DIFF_CAP = 2 * WRITE_BUDGET.bytes + 16 * 1024 * 1024


def _entries(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below ``root`` but its top ``.git``, with its ``lstat``, folder by folder."""
    pending = [(os.fspath(root), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            listing = os.scandir(folder)
        except OSError:
            continue  # gone, or made unreadable: what it holds was not read by anyone either
        with listing:
            for entry in listing:
                if not prefix and entry.name == ".git":
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append((entry.path, f"{prefix}{entry.name}/"))
                yield prefix + entry.name, info


def _stamp(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)


def stamps(root: Path) -> Stamps:
    """How the working copy is now (a tree the harness made: its size is the repository's)."""
    return {path: _stamp(info) for path, info in _entries(root)}


def overrun(root: Path, before: Stamps, budget: WriteBudget = WRITE_BUDGET) -> str | None:
    """Why what was written below ``root`` since ``before`` is past ``budget``, or None. Stops
    reading the tree as soon as it is."""
    written = count = 0
    for path, info in _entries(root):
        was = before.get(path)
        if was == _stamp(info) or (was is not None and stat.S_ISDIR(info.st_mode)):
            continue  # unchanged, or a folder that was there (its times move with what it holds)
        count += 1
        if not stat.S_ISDIR(info.st_mode):
            written += info.st_size
        if written > budget.bytes:
            return f"wrote more than {budget.bytes:,} bytes into its working copy (the session's write budget)"
        if count > budget.files:
            return f"wrote more than {budget.files:,} files into its working copy (the session's write budget)"
    return None
