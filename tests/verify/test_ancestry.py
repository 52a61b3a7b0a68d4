"""A merge base walked through the object reader is the one ``git merge-base`` names.

The history, oldest at the left (``x`` and ``y`` cross: each merges the other's parent)::

    root - a1 - a2 - m1 - x ------ main
       \\        \\   /      \\ /
        \\        b1 - b2     X
         \\                 / \\
          \\        c1 - c2 -- y
           lone   (no common root with the rest: its own history)
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from memstore.verify.ancestry import merge_base
from memstore.verify.git import GitRepository
from memstore.verify.workspace import Workspace


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return done.stdout.strip()


def _commit(repo: Path, name: str, *parents: str) -> str:
    """A commit of every file written so far, one more named for it (each tree is its own)."""
    (repo / f"{name}.txt").write_text(f"{name}\n" * 5)
    (repo / "f").write_text(f"f\nchanged by {name}\n")
    _git(repo, "add", "-A")
    tree = _git(repo, "write-tree")
    return _git(repo, "commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", name)


@pytest.fixture
def graph(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q")
    c: dict[str, str] = {}
    c["root"] = _commit(repo, "root")
    c["a1"] = _commit(repo, "a1", c["root"])
    c["a2"] = _commit(repo, "a2", c["a1"])
    c["b1"] = _commit(repo, "b1", c["a2"])
    c["b2"] = _commit(repo, "b2", c["b1"])
    c["m1"] = _commit(repo, "m1", c["a2"], c["b1"])
    c["c1"] = _commit(repo, "c1", c["root"])
    c["c2"] = _commit(repo, "c2", c["c1"])
    c["x"] = _commit(repo, "x", c["m1"], c["c2"])
    c["y"] = _commit(repo, "y", c["c2"], c["m1"])
    c["main"] = _commit(repo, "main", c["x"])
    c["lone"] = _commit(repo, "lone")
    return repo, c


def test_every_pair_has_the_merge_base_git_names_or_none_where_git_must_choose(
    graph: tuple[Path, dict[str, str]],
) -> None:
    repo, commits = graph
    reader = GitRepository(repo)
    decided = 0
    for (_, a), (_, b) in itertools.product(commits.items(), repeat=2):
        bases = _git(repo, "merge-base", "--all", a, b).split()
        assert merge_base(reader, a, b) == (bases[0] if len(bases) == 1 else None), (a, b, bases)
        decided += len(bases) == 1
    assert decided > 100  # the cases with one answer are most of them
    assert merge_base(reader, commits["x"], commits["y"]) is None  # criss-cross: m1 and c2
    assert merge_base(reader, commits["main"], commits["lone"]) is None
    assert merge_base(reader, commits["b2"], commits["main"]) == commits["b1"]
    assert merge_base(reader, "0" * 40, commits["main"]) is None  # not a commit of the repository
    reader.close()


def test_a_pull_request_diff_from_the_merge_base_is_what_git_diff_shows(graph: tuple[Path, dict[str, str]]) -> None:
    repo, commits = graph
    for name in ("b2", "main", "y", "x"):
        _git(repo, "branch", "-f", name, commits[name])
    workspace = Workspace(repo)
    for base, head in [("main", "b2"), ("b2", "main"), ("x", "y")]:  # x...y: git chooses (criss-cross)
        shown = _git(repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", f"{base}...{head}")
        assert "diff --git" in shown
        assert workspace.pull_request_diff(base, head).strip() == shown
        names = _git(repo, "diff", "--name-only", "-M", f"{base}...{head}").split()
        assert workspace.changed(base, head) == names
    workspace.close()
