"""Hostile citations: git's own directory, paths that git's batch reader splits, staged renames."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore import Citation
from memstore.cli import main
from memstore.verify import CitationStatus as S
from memstore.verify import GitCodebase, WorkingTree, verify_citation
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

TOKEN = "ghp_secretTOKEN1234567890"


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
    subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env={**env, "GIT_COMMITTER_EMAIL": "a@x"}
    )


@pytest.fixture
def secret_repo(build: Build) -> Path:
    """A work tree whose .git/config holds a remote URL with a token in it."""
    builder = HistoryBuilder()
    builder.write("README.md", "# Acme\n")
    builder.write("src/app.py", "PORT = 8080\n")
    builder.commit("initial")
    repo = build(builder).path
    _git(repo, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@github.com/acme/api.git")
    return repo


@pytest.mark.parametrize("path", [".git/config", ".GIT/config", "./.git/config", ".git./config", "src/../.git/config"])
def test_both_codebases_refuse_git_s_own_directory(secret_repo: Path, path: str) -> None:
    hostile = Citation.trusted(path, 7, None, None, None)  # as if stored before the rule existed
    for codebase in (WorkingTree(secret_repo), GitCodebase(secret_repo, "HEAD")):
        check = verify_citation(codebase, hostile)
        assert check.status is S.INVALID, (codebase, path)
        assert check.text is None
        assert TOKEN not in repr(check)


def test_a_symlink_into_git_is_refused_in_the_work_tree_and_in_history(build: Build) -> None:
    builder = HistoryBuilder()
    builder.write("README.md", "# Acme\n")
    builder.commit("initial")
    repo = build(builder).path
    (repo / "leak.txt").symlink_to(".git/config")
    _git(repo, "add", "leak.txt")
    _git(repo, "commit", "-qm", "link")
    for codebase in (WorkingTree(repo), GitCodebase(repo, "HEAD")):
        check = verify_citation(codebase, Citation("leak.txt", 1))
        assert check.status is S.INVALID, codebase
        assert "into .git" in check.problem


def test_a_refused_file_gives_no_snippet_back(secret_repo: Path) -> None:
    planted = Citation.trusted(".git/config", 7, None, f"url = https://{TOKEN}@github.com", None)
    check = verify_citation(WorkingTree(secret_repo), planted)
    assert (check.status, check.snippet, check.text) == (S.INVALID, None, None)


def test_memstore_verify_never_prints_or_stores_what_git_s_directory_holds(tmp_path: Path, secret_repo: Path) -> None:
    db = tmp_path / "m.db"
    uri = f"sqlite:///{db}"
    added = CliRunner().invoke(
        main,
        ["memories", "add", "--store", uri, "--as", "mal", "--repo", "acme/api", "--subject", "Remote",
         "--fact", "The remote is configured.", "--cite", "README.md:1", "--json"],
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    # A memory written before citations into .git were refused: plant its citation in the file.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET citations = ?", (json.dumps([{"path": ".git/config", "line": 7}]),))
    shown = CliRunner().invoke(main, ["verify", "--store", uri, "--as", "mal", "--repo", str(secret_repo), "--fix"])
    listed = CliRunner().invoke(main, ["memories", "list", "--store", uri, "--as", "ana", "--repo", "acme/api",
                                       "--format", "json"])  # fmt: skip
    assert TOKEN not in shown.output
    assert TOKEN not in listed.output
    assert TOKEN not in db.read_bytes().decode("utf-8", "replace")
    assert shown.exit_code == 1  # a bad memory, found and retired; not an error


def test_adding_a_citation_into_git_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["memories", "add", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "mal", "--repo", "acme/api",
         "--subject", "s", "--fact", "f", "--cite", ".git/config:7"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        "Error: citations[0]: path: the path must not point into git's own directory, got '.git/config'\n"
    )


def test_a_path_with_spaces_missing_at_its_commit_does_not_abort_the_batch(build: Build) -> None:
    builder = HistoryBuilder()
    builder.write("docs/read me.md", "one\ntwo\n")
    builder.commit("first", label="first")
    builder.rename("docs/read me.md", "docs/readme.md")
    builder.write("src/a.py", "x = 1\n")
    builder.commit("second", label="second")
    built = build(builder)
    codebase = GitCodebase(built.path, "main")
    missing = Citation("src/not there.py", 1, commit=built.commits["first"])  # "<name> missing" has spaces
    moved = Citation("docs/read me.md", 2, commit=built.commits["first"])
    assert verify_citation(codebase, missing).status is S.FILE_MISSING
    assert (verify_citation(codebase, moved).status, verify_citation(codebase, moved).path) == (
        S.RENAMED,
        "docs/readme.md",
    )


def test_a_staged_rename_in_the_work_tree_is_a_rename(build: Build) -> None:
    builder = HistoryBuilder()
    builder.write("src/config.py", "PORT = 8080\nHOST = 'x'\n")
    builder.commit("first", label="first")
    built = build(builder)
    _git(built.path, "mv", "src/config.py", "src/settings.py")  # staged, not committed
    tree = WorkingTree(built.path, history=GitCodebase(built.path, "HEAD"))
    check = verify_citation(tree, Citation("src/config.py", 1, commit=built.commits["first"]))
    assert (check.status, check.path, check.line) == (S.RENAMED, "src/settings.py", 1)
