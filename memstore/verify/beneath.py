"""Open a file beneath a directory, whatever is swapped on disk while it is opened.

Checking ``realpath()`` and then opening the path races: between the two an agent can swap a
folder for a symlink (``renameat2(RENAME_EXCHANGE)``) and the open follows it out of the
repository. Here every component is opened relative to the folder before it (``dir_fd``) with
``O_NOFOLLOW``, so the kernel never follows a link the walk did not read itself; a symlink met
on the way is read (``readlink`` through the same folder) and its target walked the same way,
from the root for an absolute one, and refused if it leaves the root or enters ``.git``. What
is finally opened is checked through its descriptor (``fstat``), never by name again. This is
the per-component form of ``openat2(RESOLVE_BENEATH)``, which Python does not expose.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from memstore.errors import Escape

__all__ = [
    "MAX_LINKS",
    "Escape",
    "open_beneath",
    "read_beneath",
    "read_beneath_stat",
    "remove_tree",
    "walk",
    "write_beneath",
]

MAX_LINKS = 40  # symlinks followed on one path, as the kernel allows
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _forbidden(name: str) -> bool:
    return name.lower() == ".git"


def _parts(text: str) -> list[str]:
    return [p for p in PurePosixPath(text).parts if p not in ("", ".", "/")]


def _walk(root: Path, relative: str, *, parent_only: bool) -> tuple[int, str]:
    """An open descriptor of the folder holding ``relative``'s last component, and that name.

    Raises:
        Escape: the path (through its symlinks) leaves ``root`` or enters ``.git``.
        OSError: a component is missing or not a folder.
    """
    top = os.open(root, _DIR)
    stack = [top]  # the folders walked, root first: ".." pops, never asks the file system
    pending = _parts(relative)
    links = 0
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise Escape(errno.EXDEV, "leaves the repository")
                os.close(stack.pop())
                continue
            if _forbidden(name):
                raise Escape(errno.EACCES, "inside .git")
            last = not pending
            try:
                info = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    return stack.pop(), name
                raise
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise Escape(errno.ELOOP, "too many symlinks")
                target = os.readlink(name, dir_fd=stack[-1])
                if target.startswith("/"):
                    inside = _inside(root, target)
                    if inside is None:
                        raise Escape(errno.EXDEV, "a symlink that points outside the repository")
                    while len(stack) > 1:
                        os.close(stack.pop())
                    pending = [*_parts(inside), *pending]
                else:
                    pending = [*_parts(target), *pending]
                continue
            if last and (parent_only or not stat.S_ISDIR(info.st_mode)):
                return stack.pop(), name
            stack.append(os.open(name, _DIR, dir_fd=stack[-1]))
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file")
    finally:
        for fd in stack:
            os.close(fd)


def _inside(root: Path, target: str) -> str | None:
    """An absolute symlink target as a path relative to ``root``, or None outside it."""
    path = PurePosixPath(os.path.normpath(target))
    base = PurePosixPath(root)
    return path.relative_to(base).as_posix() if path == base or path.is_relative_to(base) else None


def open_beneath(root: str | Path, relative: str, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A descriptor of ``root/relative`` opened without following any symlink the walk did not
    check (the last component with ``O_NOFOLLOW``; ``O_NONBLOCK`` so a FIFO cannot hang it)."""
    folder, name = _walk(Path(root).resolve(), relative, parent_only=False)
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a symlink after the walk looked at it
            raise Escape(errno.ELOOP, "a symlink appeared while it was opened") from exc
        raise
    finally:
        os.close(folder)


def read_beneath(root: str | Path, relative: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``root/relative``, read through one descriptor.

    Raises:
        Escape: outside the root or in ``.git``.
        FileNotFoundError: it is not there.
        IsADirectoryError, ValueError: not a regular file; larger than ``max_bytes``.
    """
    return read_beneath_stat(root, relative, max_bytes)[0]


def read_beneath_stat(root: str | Path, relative: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """`read_beneath`, with the status of the file that was read (of its descriptor)."""
    fd = open_beneath(root, relative)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        if info.st_size > max_bytes:
            raise ValueError(f"larger than {max_bytes} bytes")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes")
    return data, info


def write_beneath(root: str | Path, relative: str, data: bytes) -> None:
    """Write ``root/relative`` (its folders made, never through a symlink, never over a folder).

    Raises:
        Escape: outside the root or in ``.git``. OSError: cannot be written.
    """
    root = Path(root).resolve()
    parts = _parts(relative)
    for depth in range(1, len(parts)):  # make the folders, each beneath the last
        folder = "/".join(parts[:depth])
        with contextlib.suppress(FileExistsError):
            parent, name = _walk(root, folder, parent_only=True)
            try:
                os.mkdir(name, dir_fd=parent)
            finally:
                os.close(parent)
    fd = open_beneath(root, relative, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        handle.write(data)


def walk(root: str | Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(root)`` without recursion: each folder with its folders and its other entries,
    top-down, never through a link (a link is listed with the files). The caller may prune the
    folders it is given, as with ``os.walk``; an unreadable folder is skipped.

    By hand because in Python 3.11 ``os.walk`` (and ``shutil.rmtree``) recurse once per folder
    level: a tree a thousand folders deep, which git and the file system hold without trouble,
    raises RecursionError.
    """
    pending = [os.fspath(root)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in entries:
            try:
                inside = entry.is_dir(follow_symlinks=False)
            except OSError:
                inside = False
            (dirs if inside else files).append(entry.name)
        yield folder, dirs, files
        pending.extend(os.path.join(folder, name) for name in reversed(dirs))  # in order, as os.walk


def _remove(folder: str, name: str, remove: Callable[[str], None]) -> None:
    """Remove ``folder/name``; a folder made read-only (or locked by an agent) is opened up first."""
    path = os.path.join(folder, name)
    try:
        remove(path)
    except FileNotFoundError:
        return
    except PermissionError:
        os.chmod(folder, 0o755)
        remove(path)


def remove_tree(root: Path) -> None:
    """Delete ``root`` and what it holds, even where it was made read-only (a sealed template, a
    folder an agent locked); never through a link (a link is removed, not what it points at); at
    any depth (`walk`)."""
    if root.is_symlink():
        root.unlink()
        return
    if not root.exists():
        return
    with contextlib.suppress(OSError):
        os.chmod(root, 0o755)  # a locked top folder could not even be listed
    folders = []
    for folder, dirs, files in walk(root):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(folder, name), 0o755)  # to list it, and remove what it holds
        for name in files:
            _remove(folder, name, os.unlink)
        folders.append(folder)
    for folder in reversed(folders[1:]):  # the deepest first: each is empty by the time it is removed
        parent, name = os.path.split(folder)
        _remove(parent, name, os.rmdir)
    os.rmdir(root)  # never opening up the folder it is in: that is not the tree's
