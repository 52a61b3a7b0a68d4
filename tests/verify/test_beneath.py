"""Reading beneath a root: no symlink swapped in on disk leads a read out of the repository.

The race test swaps a folder of the work tree with a symlink to an outside folder (atomically,
``renameat2(RENAME_EXCHANGE)``) as fast as it can while the reader reads through it: a reader
that checks ``realpath()`` and then opens the path reads the outside file within a few hundred
tries; one that opens component by component never does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
import time
from pathlib import Path

import pytest

from memstore.verify import ReadStatus, WorkingTree
from memstore.verify.beneath import Escape, read_beneath, write_beneath
from memstore.verify.workspace import Workspace

SECRET = b"the hidden answer 42\n"
HONEST = b"x = 1\n"

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> None:
    if _libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_bytes(HONEST)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_bytes(SECRET)
    (root / "swap").symlink_to(outside)  # exchanged with src/ by the racer
    return root, outside


def _race(root: Path, read: object, tries: int = 3000) -> set[bytes]:
    """Every content a reader got for ``src/app.py`` while src/ and a symlink to the outside
    were exchanged without pause."""
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            _exchange(root / "src", root / "swap")

    racer = threading.Thread(target=swap)
    racer.start()
    seen = set()
    try:
        for _ in range(tries):
            got = read()  # type: ignore[operator]
            if got is not None:
                seen.add(got)
    finally:
        stop.set()
        racer.join()
    return seen


def test_a_working_tree_read_never_follows_a_symlink_swapped_in_while_it_reads(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    working = WorkingTree(root)

    def read() -> bytes | None:
        found = working.read("src/app.py")
        return "\n".join(found.lines).encode() + b"\n" if found.status is ReadStatus.OK else None

    seen = _race(root, read)
    assert SECRET not in seen
    assert HONEST in seen  # the reader did read, between the swaps


def test_the_harness_workspace_reads_and_writes_beneath_too(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    os.system(f"git -C {root} init -q")
    space = Workspace(root)

    def read() -> bytes | None:
        text = space.read("src/app.py")
        return text.encode() if text is not None else None

    assert SECRET not in _race(root, read)
    _race(root, lambda: space.write("src/app.py", "y = 2\n") and None)  # refused while swapped
    assert (outside / "app.py").read_bytes() == SECRET  # never written through the symlink


def test_the_check_then_read_reader_loses_the_same_race(tree: tuple[Path, Path]) -> None:
    """The race is real: the reader the working tree had (realpath, then open by name) loses it."""
    root, _ = tree

    def check_then_open() -> bytes | None:
        target = root / "src" / "app.py"
        try:
            if not Path(os.path.realpath(target)).is_relative_to(root.resolve()):
                return None
            return target.read_bytes()  # opened by name again: the swap may have happened since
        except OSError:
            return None

    deadline = time.monotonic() + 60  # the window is small: race until it is hit (in practice, at once)
    seen: set[bytes] = set()
    while SECRET not in seen and time.monotonic() < deadline:
        seen |= _race(root, check_then_open, tries=5000)
    assert SECRET in seen


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ("app.py", HONEST),  # a relative link inside the root is followed
        ("../src/app.py", HONEST),
        ("/ROOT/src/app.py", HONEST),  # an absolute link into the root too
    ],
)
def test_links_that_stay_inside_are_followed(tree: tuple[Path, Path], link: str, expected: bytes) -> None:
    root, _ = tree
    (root / "src" / "alias.py").symlink_to(link.replace("/ROOT", str(root.resolve())))
    assert read_beneath(root, "src/alias.py", 1000) == expected


@pytest.mark.parametrize("link", ["../../outside/app.py", "/etc/passwd", "../.git/config", "loop"])
def test_links_that_leave_or_loop_are_refused(tree: tuple[Path, Path], link: str) -> None:
    root, _ = tree
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src" / "alias.py").symlink_to(link if link != "loop" else "alias.py")
    with pytest.raises(Escape):
        read_beneath(root, "src/alias.py", 1000)


def test_a_fifo_and_a_folder_are_not_files(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    os.mkfifo(root / "src" / "pipe")
    with pytest.raises(IsADirectoryError):
        read_beneath(root, "src/pipe", 1000)  # refused without blocking on it
    with pytest.raises(IsADirectoryError):
        read_beneath(root, "src", 1000)


def test_write_beneath_makes_folders_and_refuses_symlinks(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    write_beneath(root, "new/deep/file.txt", b"hello")
    assert (root / "new" / "deep" / "file.txt").read_bytes() == b"hello"
    with pytest.raises(Escape):
        write_beneath(root, "swap/app.py", b"pwned")  # swap/ points outside
    (root / "src" / "out.py").symlink_to(outside / "app.py")
    with pytest.raises(Escape):
        write_beneath(root, "src/out.py", b"pwned")
    assert (outside / "app.py").read_bytes() == SECRET


def _aged(path: Path) -> None:
    """Make ``path`` look written a minute ago (older than the racy window, so a read keeps it)."""
    past = time.time_ns() - 60 * 10**9
    os.utime(path, ns=(past, past), follow_symlinks=False)
    time.sleep(0.06)  # its change time (set by utime) must age past the window too


def test_a_kept_read_is_given_again_only_while_the_file_is_unchanged(tree: tuple[Path, Path]) -> None:
    """The working copy keeps what it read by the file's status: a rewrite of the same size,
    a mode change or a time put back (ctime moves) is read again; a folder swapped for a link
    to an outside one never gives the outside file, kept or not."""
    root, outside = tree
    os.system(f"git -C {root} init -q")
    app = root / "src" / "app.py"
    _aged(app)
    space = Workspace(root)
    assert space.read("src/app.py") == HONEST.decode()
    assert "src/app.py" in space._texts  # kept: old enough
    app.write_bytes(b"x = 9\n")  # same size, written at once
    assert space.read("src/app.py") == "x = 9\n"
    _aged(app)
    assert space.read("src/app.py") == "x = 9\n"
    stat_before = app.stat()
    app.write_bytes(b"x = 7\n")
    os.utime(app, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))  # mtime put back: ctime still moves
    assert space.read("src/app.py") == "x = 7\n"
    _aged(app)
    assert space.read("src/app.py") == "x = 7\n"
    os.replace(root / "src", root / "src-old")
    (root / "src").symlink_to(outside)  # the folder now a link out of the tree (to a file of that name)
    assert space.read("src/app.py") is None  # refused, neither the kept text nor the outside file


def test_kept_reads_lose_no_race_either(tree: tuple[Path, Path]) -> None:
    """The race of `test_the_harness_workspace_reads_and_writes_beneath_too`, with the file's
    text kept from an earlier read: a swapped folder makes the status differ, never the answer."""
    root, _ = tree
    os.system(f"git -C {root} init -q")
    _aged(root / "src" / "app.py")
    space = Workspace(root)
    assert space.read("src/app.py") == HONEST.decode()
    seen = _race(root, lambda: (text := space.read("src/app.py")) and text.encode())
    assert seen == {HONEST}


def test_a_fresh_file_is_not_kept(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    os.system(f"git -C {root} init -q")
    (root / "src" / "new.py").write_text("y = 1\n")
    space = Workspace(root)
    assert space.read("src/new.py") == "y = 1\n"
    assert "src/new.py" not in space._texts  # written within the racy window: read again next time
