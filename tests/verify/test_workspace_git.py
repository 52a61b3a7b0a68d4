"""The harness's own git on a tree an agent edited runs nothing the agent planted.

Each case plants one way of getting git to run a program (a nested repository's
``core.fsmonitor``, a ``.git`` file pointing at such a repository, the working copy's own
configuration and hooks as an unsandboxed agent could write them, filters, textconv drivers,
an include) whose program would touch a marker file; then the harness does what it does after
a session (undo what was planted, commit, diff, merge). The marker must not exist. The last
test shows the cases are not blind: with the defences taken away, each plant does run.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstore.verify import git as git_module
from memstore.verify import workspace as workspace_module
from memstore.verify.workspace import Workspace

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(where), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "--initial-branch=main")
    (root / "app.py").write_text("x = 1\n")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "start")
    return root


def _program(marker: Path) -> str:
    return f"sh -c 'echo ran >> {marker}; exit 0'"


def _repo_with_fsmonitor(where: Path, name: str, marker: Path) -> None:
    """A committed repository at ``where`` (one file, ``name``) whose fsmonitor leaves ``marker``."""
    where.mkdir(parents=True)
    _git(where, "init", "-q")
    (where / name).write_text("y = 2\n")
    _git(where, "add", "-A")
    _git(where, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "nested")
    _git(where, "config", "core.fsmonitor", _program(marker))  # set last: git ran it above otherwise


def _nested_fsmonitor(root: Path, marker: Path) -> None:
    _repo_with_fsmonitor(root / "vendor" / "x", "lib.py", marker)


def _gitdir_file(root: Path, marker: Path) -> None:
    hidden = root / "stash" / "repo"
    _repo_with_fsmonitor(hidden, "f.txt", marker)
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text(f"gitdir: {hidden / '.git'}\n")
    (root / "sub" / "f.txt").write_text("y = 2\n")


def _own_fsmonitor(root: Path, marker: Path) -> None:
    _git(root, "config", "core.fsmonitor", _program(marker))
    (root / "app.py").write_text("x = 2\n")


def _hooks(root: Path, marker: Path) -> None:
    for hook in ("pre-commit", "post-commit", "commit-msg", "post-checkout", "post-merge", "reference-transaction"):
        path = root / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        path.chmod(0o755)
    (root / "app.py").write_text("x = 2\n")


def _hooks_path(root: Path, marker: Path) -> None:
    (root / "myhooks").mkdir()
    hook = root / "myhooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho hooksPath >> {marker}\n")
    hook.chmod(0o755)
    _git(root, "config", "core.hooksPath", str(root / "myhooks"))


def _filter(root: Path, marker: Path) -> None:
    _git(root, "config", "filter.evil.clean", f"sh -c 'echo clean >> {marker}; cat'")
    _git(root, "config", "filter.evil.smudge", f"sh -c 'echo smudge >> {marker}; cat'")
    (root / ".gitattributes").write_text("* filter=evil\n")
    (root / "app.py").write_text("x = 2\n")


def _textconv(root: Path, marker: Path) -> None:
    _git(root, "config", "diff.evil.textconv", f"sh -c 'echo textconv >> {marker}; cat \"$0\"'")
    _git(root, "config", "diff.external", f"sh -c 'echo external >> {marker}'")
    (root / ".gitattributes").write_text("*.py diff=evil\n")
    (root / "app.py").write_text("x = 2\n")


def _include(root: Path, marker: Path) -> None:
    (root / "extra.cfg").write_text(f'[core]\n\tfsmonitor = "{_program(marker)}"\n')
    _git(root, "config", "include.path", str(root / "extra.cfg"))
    (root / "app.py").write_text("x = 2\n")


PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "nested repository's core.fsmonitor": _nested_fsmonitor,
    "a .git file naming another repository": _gitdir_file,
    "the working copy's own core.fsmonitor": _own_fsmonitor,
    "hooks in .git/hooks": _hooks,
    "core.hooksPath": _hooks_path,
    "a clean/smudge filter": _filter,
    "textconv and diff.external": _textconv,
    "include.path": _include,
}


def _after_a_session(space: Workspace) -> list[str]:
    """What the harness does once an agent's session ended: the commands it runs on the tree."""
    base = space.head("main")
    undone = space.secure()
    commit = space.commit("agent's change", when=WHEN, who="dev")
    if commit is not None:
        space.diff(base, commit)
        space.touched(base, commit)
        space.changed(base, commit)
        space.pull_request_diff(base, commit)
        undone += space.secure()
        space.repo.is_clean()  # as the next session's stored memory asks, on the branch that holds the change
        space.abandon()
    space.repo.is_clean()
    return undone


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_nothing_an_agent_planted_runs_under_the_harness_git(repo: Path, tmp_path: Path, plant: str) -> None:
    space = Workspace(repo)
    _git(repo, "checkout", "-q", "-b", "task/x")
    marker = tmp_path / "marker"
    PLANTS[plant](repo, marker)
    undone = _after_a_session(space)
    assert not marker.exists(), marker.read_text()
    if plant in {"nested repository's core.fsmonitor", "a .git file naming another repository"}:
        assert any("nested repository" in u for u in undone)  # recorded as tampering by the trial
    if plant in {"the working copy's own core.fsmonitor", "a clean/smudge filter", "include.path"}:
        assert "the repository's .git/config was changed; it was put back" in undone


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_without_the_defences_each_plant_runs(
    repo: Path, tmp_path: Path, plant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cases are not blind: with no HARDENED configuration, submodules looked into, diffs
    with external tools and textconv, and nothing undone, git runs them."""

    def bare_argv(where: str | Path, *args: str) -> list[str]:
        defences = {"--ignore-submodules=all", "--no-textconv", "--no-ext-diff"}
        return ["git", "-C", str(where), *(a for a in args if a not in defences)]

    monkeypatch.setattr(git_module, "git_argv", bare_argv)
    monkeypatch.setattr(workspace_module, "git_argv", bare_argv)
    monkeypatch.setattr(Workspace, "secure", lambda self: [])
    # A pull request's diff is diff-tree's from the merge base (no textconv, no external diff
    # even undefended); where git must choose the merge base, it is git diff's: that path here.
    monkeypatch.setattr(workspace_module, "merge_base", lambda *args: None)
    space = Workspace(repo)
    _git(repo, "checkout", "-q", "-b", "task/x")
    marker = tmp_path / "marker"
    PLANTS[plant](repo, marker)
    _after_a_session(space)
    assert marker.exists()


def test_a_replaced_git_folder_stops_the_harness(repo: Path, tmp_path: Path) -> None:
    from memstore.errors import RepositoryError

    space = Workspace(repo)
    (repo / ".git").rename(tmp_path / "moved.git")
    (repo / ".git").symlink_to(tmp_path / "moved.git")
    with pytest.raises(RepositoryError, match="was replaced"):
        space.secure()
