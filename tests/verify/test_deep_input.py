"""Input nested too deeply to parse is a verdict about the memories that cite it, never the end of
``memstore verify`` (issue 43, item 6). The repository: `tests.deep_code`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.verify import GitCodebase, WorkingTree
from memstore.verify.beneath import remove_tree, walk
from tests.deep_code import DEEP_FOLDER, GOOD, HOSTILE, deep_repository

TOO_DEEP = "too deeply nested to parse (more than 200 levels of syntax)"


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    with deep_repository(tmp_path / "api") as built:
        yield built.path


def _add(store: str, repo: Path, subject: str, fact: str, cite: str) -> str:
    result = CliRunner().invoke(main, ["memories", "add", "--store", store, "--as", "ana", "--repo", "acme/api",
                                       "--subject", subject, "--fact", fact, "--cite", cite, "--anchor", str(repo),
                                       "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["id"]  # type: ignore[no-any-return]


def _verify(store: str, repo: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    result = CliRunner().invoke(main, ["verify", "--store", store, "--as", "ana", "--repo", str(repo),
                                       "--name", "acme/api", "--format", "json"])  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, {m["memory"]["subject"]: m for m in json.loads(result.output)["memories"]}


def test_memstore_verify_judges_every_memory_of_a_repository_with_deep_input(tmp_path: Path, repo: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    _add(store, repo, *GOOD)
    assert _verify(store, repo)[0] == 0  # the good memory alone: usable
    for subject, fact, cite in HOSTILE.values():
        _add(store, repo, subject, fact, cite)

    code, verdicts = _verify(store, repo)

    assert code == 1  # two memories cannot be checked: bad memories, not an error of the run
    assert (verdicts["Timeout"]["verdict"], verdicts["Timeout"]["reason"]) == (
        "valid",
        "every cited line still says what it said",
    )
    for subject, path in (("Log level", "expr.py"), ("Mode", "elif.py")):
        assert verdicts[subject]["verdict"] == "missing"
        assert verdicts[subject]["reason"] == f"not checked: {path}: {TOO_DEEP}"
        assert [(c["status"], c["problem"]) for c in verdicts[subject]["checks"]] == [("invalid", TOO_DEEP)]
    # The file in the deep folder is ordinary: listing the package around it no longer recurses.
    assert (verdicts["Total"]["verdict"], verdicts["Total"]["checks"][0]["status"]) == ("valid", "valid")


def test_a_deep_folder_tree_is_listed_in_the_work_tree_and_at_a_commit(repo: Path) -> None:
    expected = [DEEP_FOLDER, "elif.py", "expr.py", "good.py"]
    assert sorted(GitCodebase(repo).paths()) == expected
    assert WorkingTree(repo).paths() == expected


def test_walk_goes_top_down_and_takes_pruning_as_os_walk_does(tmp_path: Path) -> None:
    for folder in ("a/b", "a/skip/c", "e"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("f")
    (tmp_path / "a" / "skip" / "g.txt").write_text("g")
    (tmp_path / "link").symlink_to(tmp_path / "a")  # a link is a name in its folder, never entered
    seen = []
    for folder, dirs, files in walk(tmp_path):
        dirs[:] = sorted(d for d in dirs if d != "skip")
        seen.append((Path(folder).relative_to(tmp_path).as_posix(), sorted(files)))
    assert sorted(seen) == [(".", ["link"]), ("a", []), ("a/b", ["f.txt"]), ("e", [])]


def test_remove_tree_removes_a_deep_read_only_tree(tmp_path: Path) -> None:
    root = leaf = tmp_path / "deep"
    root.mkdir()
    for _ in range(1200):  # one at a time: Path.mkdir(parents=True) recurses once per missing folder
        leaf = leaf / "d"
        leaf.mkdir()
    (leaf / "f.txt").write_text("x")
    leaf.chmod(0o555)  # sealed, as a template is
    remove_tree(root)
    assert not root.exists()
