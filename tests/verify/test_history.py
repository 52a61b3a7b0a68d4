"""Scripted histories become real repositories, the same ids every time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memstore import ValidationError
from memstore.verify.history import HistoryBuilder


def _git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, check=True).stdout


def _history() -> HistoryBuilder:
    """
    main:   c1 ── c2 ──────── merge
              \\           /
    feature:   └── f1 ────┘
    spike:  c1 ── s1          (never merged)
    """
    b = HistoryBuilder()
    b.write("src/app.py", "one\ntwo\nthree\n").write("README.md", "# app\n")
    b.commit("initial", label="c1")
    b.insert("src/app.py", 2, "one and a half")
    b.commit("insert", label="c2")
    b.branch_from("feature", at="c1")
    b.write("docs/guide.md", "guide\n")
    b.commit("docs", label="f1")
    b.branch_from("spike", at="c1")
    b.replace("src/app.py", "two", "TWO")
    b.commit("spike", label="s1")
    b.switch("main")
    b.merge("feature", label="merge")
    b.tag("v1.0")
    return b


def test_ids_are_deterministic(tmp_path: Path) -> None:
    first = _history().build(tmp_path / "a")
    second = _history().build(tmp_path / "b", bare=True)
    assert first.commits == second.commits
    assert _git(first.path, "rev-parse", "main").strip() == first.commits["merge"]


def test_branches_tags_and_merges(tmp_path: Path) -> None:
    built = _history().build(tmp_path / "r")
    assert _git(built.path, "rev-parse", "v1.0").strip() == built.commits["merge"]
    assert _git(built.path, "rev-parse", "spike").strip() == built.commits["s1"]
    parents = _git(built.path, "log", "-1", "--format=%P", "main").split()
    assert parents == [built.commits["c2"], built.commits["f1"]]
    assert (built.path / "docs" / "guide.md").read_text() == "guide\n"
    assert (built.path / "src" / "app.py").read_text() == "one\none and a half\ntwo\nthree\n"


def test_spike_is_not_merged(tmp_path: Path) -> None:
    built = _history().build(tmp_path / "r")
    done = subprocess.run(["git", "-C", str(built.path), "merge-base", "--is-ancestor", "spike", "main"])
    assert done.returncode == 1


def test_dates_and_authors_come_from_the_script(tmp_path: Path) -> None:
    built = _history().build(tmp_path / "r")
    log = _git(built.path, "log", "--reverse", "--format=%an <%ae> %aI", "main").splitlines()
    assert log[0] == "Ana Author <ana@example.com> 2026-01-05T09:00:00+00:00"


def test_revert_restores_the_old_text(tmp_path: Path) -> None:
    b = HistoryBuilder()
    b.write("v.txt", "v1\n")
    b.commit("one")
    b.replace("v.txt", "v1", "v2")
    changed = b.commit("two")
    b.revert(changed)
    built = b.build(tmp_path / "r")
    assert (built.path / "v.txt").read_text() == "v1\n"
    assert _git(built.path, "log", "-1", "--format=%s").strip() == 'Revert "two"'


def test_rename_and_remove(tmp_path: Path) -> None:
    b = HistoryBuilder()
    b.write("a.txt", "a\n").write("b.txt", "b\n")
    b.commit("one")
    b.rename("a.txt", "dir/c.txt").remove("b.txt")
    b.commit("two")
    built = b.build(tmp_path / "r")
    assert _git(built.path, "ls-files").split() == ["dir/c.txt"]


def test_bad_steps_are_refused() -> None:
    b = HistoryBuilder()
    b.write("a.txt", "a\n")
    with pytest.raises(ValidationError):
        b.insert("a.txt", 5, "x")
    with pytest.raises(ValidationError):
        b.remove("nope.txt")
    with pytest.raises(ValidationError):
        b.replace("a.txt", "zzz", "y")


def test_build_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "keep.txt").write_text("mine")
    b = HistoryBuilder()
    b.write("a.txt", "a\n")
    b.commit("one")
    with pytest.raises(ValidationError):
        b.build(tmp_path / "r")
    assert (tmp_path / "r" / "keep.txt").read_text() == "mine"
