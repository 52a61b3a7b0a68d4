"""A commit's files listed through the object reader are the ones ``git ls-tree -r -l`` lists."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.errors import RepositoryError
from memstore.verify import listing
from memstore.verify.git import GitRepository
from memstore.verify.gitrun import batch_commands
from memstore.verify.hunks import parse_hunks
from memstore.verify.listing import parse_ls_tree

pytestmark = pytest.mark.skipif(not batch_commands(), reason="git older than 2.36 lists trees with ls-tree only")


def _git(repo: Path, *args: str, input: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", *args],
        input=input,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def _ls_tree(repo: Path, commit: str) -> dict[str, listing.TreeEntry]:
    raw = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-l", "-z", "--full-tree", commit], capture_output=True, check=True
    ).stdout
    return parse_ls_tree(raw)


def _listed(repo: Path, commit: str) -> dict[str, listing.TreeEntry]:
    listing._TREES.clear()
    listing._SIZES.clear()
    found = GitRepository(repo).tree(commit)
    assert list(found) == list(_ls_tree(repo, commit))  # the same order, too
    return found


def test_a_tree_with_folders_links_modes_and_odd_names_is_listed_as_ls_tree_lists_it(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    for path, body in {
        "a.b": b"x",
        "a/c.txt": b"one\n",
        "a/d/e.py": b"print(1)\n" * 50,
        "a-b/f": b"",
        "z.sh": b"#!/bin/sh\n",
    }.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(body)
    (repo / "z.sh").chmod(0o755)
    os.symlink("a/c.txt", repo / "link")
    (repo / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    _git(repo, "add", "-A")
    _git(repo, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/sub")
    _git(repo, "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    found = _listed(repo, head)
    assert found == _ls_tree(repo, head)
    assert found["a/d/e.py"].size == 450
    assert found["z.sh"].mode == "100755"
    assert found["link"].is_symlink
    assert found["vendor/sub"] == listing.TreeEntry("160000", "1" * 40, None)
    assert os.fsdecode(b"caf\xe9.txt") in found
    assert _listed(repo, "HEAD") == found  # a name git resolves lists the same


def test_an_old_tools_file_mode_is_read_as_git_reads_it(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    blob = _git(repo, "hash-object", "-w", "--stdin", input=b"group-writable\n")
    tree = _git(
        repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=b"100664 f\x00" + bytes.fromhex(blob)
    )
    commit = _git(repo, "commit-tree", tree, "-m", "old")
    assert _listed(repo, commit) == _ls_tree(repo, commit) == {"f": listing.TreeEntry("100644", blob, 15)}


def test_a_sha256_repository_is_listed_too(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "--object-format=sha256")
    (repo / "d").mkdir()
    (repo / "d" / "f.txt").write_text("x\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    found = _listed(repo, head)
    assert found == _ls_tree(repo, head)
    assert len(found["d/f.txt"].oid) == 64


def test_what_is_not_a_commit_or_a_broken_tree_fails_as_ls_tree_fails(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    missing = "2" * 40
    tree = _git(
        repo,
        "hash-object",
        "-w",
        "-t",
        "tree",
        "--literally",
        "--stdin",
        input=b"40000 gone\x00" + bytes.fromhex(missing),
    )
    commit = _git(repo, "commit-tree", tree, "-m", "broken")
    with pytest.raises(RepositoryError):
        GitRepository(repo).tree(commit)
    with pytest.raises(RepositoryError):
        GitRepository(repo).tree("no-such-branch")


_NAMES = st.text(alphabet="ab.-_/", min_size=1, max_size=8).filter(
    lambda n: not n.startswith("/") and not n.endswith("/") and "//" not in n and ".git" not in n
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(_NAMES, st.binary(max_size=40), min_size=1, max_size=8))
def test_any_tree_is_listed_as_ls_tree_lists_it(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes]
) -> None:
    repo = tmp_path_factory.mktemp("r")
    _git(repo, "init", "-q")
    written = 0
    for name, body in sorted(files.items()):
        parts = name.split("/")
        if any(p in {"", ".", ".."} for p in parts):
            continue
        target = repo.joinpath(*parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a name that is both a file and a folder: the other one stays
        written += 1
    if not written:
        return
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    assert _listed(repo, "HEAD") == _ls_tree(repo, "HEAD")


def test_many_diffs_in_one_diff_tree_are_each_the_diff_git_diff_gives(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    commits = []
    for step, files in enumerate(
        [
            {"f.txt": "a\nb\nc\nd\n", "g.txt": "x\ny\n" * 20},
            {"f.txt": "a\nB\nc\nd\ne\n", "h.txt": "x\ny\n" * 20, "n.txt": "new\n"},
            {"h.txt": "x\ny\n" * 19 + "x\nz\n", "n.txt": "new\n"},
        ]
    ):
        for old in repo.iterdir():
            if old.name != ".git":
                old.unlink()
        for path, body in files.items():
            (repo / path).write_text(body)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"step {step}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    a, b, c = commits
    pairs = [(a, c), (b, c), (a, b), (c, c), (c, a), (a, c)]
    found = GitRepository(repo).hunks_between(pairs)
    assert list(found) == [(a, c), (b, c), (a, b), (c, c), (c, a)]  # each pair once, in order
    for old, new in found:
        out = subprocess.run(
            ["git", "-C", str(repo), "diff", "-M", "-U0", "--diff-algorithm=myers", "--no-color", old, new],
            capture_output=True,
            check=True,
        ).stdout
        assert found[(old, new)] == parse_hunks(out)
    assert found[(c, c)] == {}
    assert found[(a, b)]["g.txt"] == ("h.txt", [])  # a rename with nothing else changed
    assert found[(a, b)]["f.txt"] == ("f.txt", [(2, 1, 2, 1), (4, 0, 5, 1)])
    assert found[(a, c)]["f.txt"] == ("", [(1, 4, 0, 0)])  # deleted
    assert GitRepository(repo).diff_hunks("HEAD~2", "HEAD") == found[(a, c)]  # names are resolved
    with pytest.raises(RepositoryError):
        GitRepository(repo).hunks_between([(a, "no-such-branch")])


def test_folders_nested_deeper_than_pythons_stack_are_listed(tmp_path: Path) -> None:
    """An agent's commit may nest a file 1,500 folders deep: listed, in order, without recursion."""
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    blob = _git(repo, "hash-object", "-w", "--stdin", input=b"deep\n")
    tree = _git(repo, "mktree", input=f"100644 blob {blob}\tf\n".encode())
    for _ in range(1500):
        tree = _git(repo, "mktree", input=f"040000 tree {tree}\td\n100644 blob {blob}\tz\n".encode())
    commit = _git(repo, "commit-tree", tree, "-m", "deep")
    found = _listed(repo, commit)
    assert len(found) == 1501
    assert "/".join(["d"] * 1500) + "/f" in found
