"""One long-lived ``git diff-tree --stdin`` answers each pair of commits as ``git diff`` would."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memstore.errors import RepositoryError
from memstore.verify.beneath import remove_tree
from memstore.verify.differ import Differ

PATCH = ("-p", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-U0")
NAMES = ("--name-only", "--no-renames")


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", *args], capture_output=True, check=True
    ).stdout


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    commits = []
    steps: list[dict[str, bytes]] = [
        {"app.py": b"LIMIT = 1\n", "old.txt": b"x\n" * 30},
        {
            "app.py": b"LIMIT = 2\n",
            "new.txt": b"x\n" * 30,
            "=memstore-end-0=": b"a name like the marker\n",
            "src/deep/m.py": b"A = 1\n",
        },
        {"app.py": b"LIMIT = 2\n", "new.txt": b"x\n" * 30, "=memstore-end-0=": b"same\n", "bin.dat": b"\x00\x01\x02"},
    ]
    for step, files in enumerate(steps):
        for old in repo.iterdir():
            if old.name != ".git":
                remove_tree(old) if old.is_dir() else old.unlink()
        for name, body in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(body)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", f"step {step}")
        commits.append(_git(repo, "rev-parse", "HEAD").decode().strip())
    return repo, commits


def test_each_answer_is_what_git_diff_prints_and_one_process_gives_them_all(history: tuple[Path, list[str]]) -> None:
    repo, (a, b, c) = history
    patches, names = Differ(repo, PATCH), Differ(repo, NAMES)
    for old, new in [(a, b), (b, c), (a, c), (c, a), (c, c), (a, b)]:
        assert patches.diff(old, new) == _git(repo, "diff", *PATCH[1:], old, new)
        assert names.diff(old, new) == _git(repo, "diff", *NAMES, old, new)
    assert patches.diff(c, c) == b""
    assert names.diff(a, b).splitlines() == [b"=memstore-end-0=", b"app.py", b"new.txt", b"old.txt", b"src/deep/m.py"]
    assert b"rename from old.txt" in patches.diff(a, b)
    assert b"Binary files /dev/null and b/bin.dat differ" in patches.diff(b, c)
    assert patches._proc is not None
    first = patches._proc.pid
    patches.diff(a, c)
    assert patches._proc.pid == first  # the same process answered every pair
    patches.close()
    assert patches._proc is None
    assert patches.diff(a, b) == _git(repo, "diff", *PATCH[1:], a, b)  # started again


def test_an_id_that_is_no_commit_fails_and_the_next_diff_starts_afresh(history: tuple[Path, list[str]]) -> None:
    repo, (a, b, _c) = history
    differ = Differ(repo, PATCH)
    with pytest.raises(RepositoryError):
        differ.diff(a, "1" * 40)
    assert differ.diff(a, b) == _git(repo, "diff", *PATCH[1:], a, b)


def test_a_diff_past_its_cap_is_refused_unread_and_the_next_starts_afresh(history: tuple[Path, list[str]]) -> None:
    """A cap bounds what is read of a diff: past it git is stopped, the diff refused; one line
    longer than the cap is refused too, never read whole."""
    repo, (a, b, _c) = history
    whole = _git(repo, "diff", *PATCH[1:], a, b)
    differ = Differ(repo, PATCH)
    assert differ.diff(a, b, cap=len(whole)) == whole
    with pytest.raises(RepositoryError, match=f"longer than the {len(whole) - 1:,} bytes read"):
        differ.diff(a, b, cap=len(whole) - 1)
    with pytest.raises(RepositoryError, match="longer than the 10 bytes read"):
        differ.diff(a, b, cap=10)  # within the first line
    assert differ.diff(a, b) == whole
