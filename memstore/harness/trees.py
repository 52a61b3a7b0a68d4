"""Folders of files the harness builds, copies and throws away: a template's repository copied
for each trial, sealed read-only and fingerprinted, and removed even where it was sealed; a
scratch folder for one build. Every walk is `memstore.verify.beneath.walk`, which does not
recurse: a repository may hold folders a thousand levels deep."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memstore.verify import remove_tree, walk

__all__ = ["copy_tree", "fingerprint", "make_read_only", "remove_tree", "scratch_folder"]


def fingerprint(root: Path) -> str:
    """A fingerprint of every file under ``root``: path, kind, mode, content (links by target)."""
    digest = hashlib.sha256()
    for directory, dirs, files in walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(directory, name)
            info = path.lstat()
            digest.update(f"{path.relative_to(root).as_posix()}\0{stat.S_IFMT(info.st_mode)}\0".encode())
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
            digest.update(b"x" if info.st_mode & stat.S_IXUSR else b"-")
    return digest.hexdigest()


def copy_tree(source: Path, dest: Path) -> None:
    """Copy a template: contents, symbolic links and the executable bit, but not its read-only
    modes (the copy is the trial's to write)."""
    for directory, _, files in walk(source):
        target = dest / Path(directory).relative_to(source)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            path, copy = Path(directory, name), target / name
            if path.is_symlink():
                os.symlink(os.readlink(path), copy)
                continue
            shutil.copyfile(path, copy)
            if path.stat().st_mode & stat.S_IXUSR:
                copy.chmod(0o755)


def make_read_only(root: Path) -> None:
    """Take write permission away from every file and folder under ``root``."""
    for directory, dirs, files in reversed(list(walk(root))):  # each folder's content before the folder
        for name in files:
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode & ~0o222)
        for name in dirs:
            Path(directory, name).chmod(0o555)
    root.chmod(0o555)


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new temporary folder, removed on the way out with `remove_tree` (``TemporaryDirectory``
    removes with ``shutil.rmtree``, which recurses once per folder level)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        remove_tree(folder)
