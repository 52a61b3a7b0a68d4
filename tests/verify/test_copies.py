"""What the harness keeps between git calls is what git would answer: a copy of a repository
starts from what its original read by object id (never by name), a working copy's branches are
where the harness moved them until an agent could have moved them, and built repositories are a
few files to copy (one pack, no sample hooks)."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstore.verify import git as git_module
from memstore.verify.beneath import remove_tree
from memstore.verify.differ import Differ
from memstore.verify.git import GitRepository
from memstore.verify.history import HistoryBuilder
from memstore.verify.workspace import Workspace
from tests.verify.conftest import Build

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _built(build: Build) -> tuple[Path, dict[str, str]]:
    builder = HistoryBuilder()
    builder.write("app.py", "LIMIT = 1\n").commit("one", label="one")
    builder.write("app.py", "LIMIT = 2\n").commit("two", label="two")
    built = build(builder)
    return built.path, built.commits


def _answer(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, check=True).stdout.strip()


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    real = git_module.GitRepository.run

    def counted(self: GitRepository, *args: str, input: bytes | None = None) -> bytes:
        calls.append(args)
        return real(self, *args, input=input)

    monkeypatch.setattr(git_module.GitRepository, "run", counted)
    return calls


def test_a_copy_reads_its_originals_trees_by_commit_id_without_asking_git(
    build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, commits = _built(build)
    original = GitRepository(path)
    tree = original.tree(commits["one"])
    assert original.resolve(commits["two"]) == commits["two"]
    copy_path = tmp_path / "copy"
    shutil.copytree(path, copy_path, symlinks=True)
    copy = GitRepository(copy_path, copied_from=original)
    calls = _count_git(monkeypatch)
    assert copy.tree(commits["one"]) == tree
    assert copy.resolve(commits["two"]) == commits["two"]
    assert calls == []  # both were known by id
    assert copy.resolve("main") == commits["two"]  # a name is asked of the copy itself (its object reader)
    assert copy.resolve("main~1") == commits["one"]
    assert copy.resolve("no-such-branch") is None
    assert copy.resolve(f"{commits['two']}^{{tree}}") is None  # a tree is not a commit
    assert calls == []


def test_a_copy_never_takes_a_name_from_its_original(build: Build, tmp_path: Path) -> None:
    """The copy's ``main`` moved after the copy was made: the original's answer for ``main`` is
    not the copy's, and a blob named by ``main:path`` is read in the copy."""
    path, commits = _built(build)
    original = GitRepository(path)
    assert original.resolve("main") == commits["two"]
    assert original.objects(["main:app.py"])["main:app.py"].data == b"LIMIT = 2\n"
    copy_path = tmp_path / "copy"
    shutil.copytree(path, copy_path, symlinks=True)
    subprocess.run(["git", "-C", str(copy_path), "reset", "-q", "--hard", commits["one"]], check=True)
    copy = GitRepository(copy_path, copied_from=original)
    assert copy.resolve("main") == commits["one"]
    assert copy.objects(["main:app.py"])["main:app.py"].data == b"LIMIT = 1\n"
    blob = original.tree(commits["two"])["app.py"].oid
    assert copy.blob(blob) == b"LIMIT = 2\n"  # by id: the same object in both


def test_a_working_copy_knows_its_branches_until_an_agent_could_have_moved_them(build: Build) -> None:
    path, commits = _built(build)
    workspace = Workspace(path)
    assert workspace.head("main") == commits["two"]
    workspace.start("task/a")
    assert workspace.head("task/a") == commits["two"]
    (path / "app.py").write_text("LIMIT = 3\n")
    made = workspace.commit("three", when=WHEN, who="ana")
    assert made is not None
    assert workspace.head("task/a") == made
    workspace.merge("task/a")
    assert workspace.head("main") == made
    # An unsandboxed agent moves main behind the harness's back; after `secure`, git is asked again.
    subprocess.run(["git", "-C", str(path), "update-ref", "refs/heads/main", commits["one"]], check=True)
    assert workspace.head("main") == made  # what the harness did last
    workspace.secure()
    assert workspace.head("main") == commits["one"]
    workspace.abandon()
    assert workspace.head("main") == commits["one"]


def test_a_built_repository_is_one_pack_and_no_sample_hooks(build: Build) -> None:
    path, commits = _built(build)
    files = sorted(p.relative_to(path / ".git").as_posix() for p in (path / ".git").rglob("*") if p.is_file())
    assert not any(f.startswith(("hooks/", "objects/")) and not f.startswith("objects/pack/") for f in files)
    assert len([f for f in files if f.endswith(".pack")]) == 1
    assert GitRepository(path).tree(commits["one"])["app.py"].size == len("LIMIT = 1\n")


def test_remove_tree_removes_a_sealed_folder_and_only_the_link_to_one(tmp_path: Path) -> None:
    sealed = tmp_path / "sealed"
    (sealed / "inner").mkdir(parents=True)
    (sealed / "inner" / "f").write_text("x")
    (sealed / "inner").chmod(0o555)
    sealed.chmod(0o555)
    link = tmp_path / "link"
    link.symlink_to(sealed)
    remove_tree(link)
    assert not link.exists()
    assert not link.is_symlink()
    assert (sealed / "inner" / "f").exists()
    remove_tree(sealed)
    assert not sealed.exists()


def test_names_between_two_commits_are_asked_once_per_process(build: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a diff between two commits by id names is theirs: a second working copy (another arm
    or trial that made the same commits) gets it without git; a branch's name is resolved first,
    so a branch that moved is asked again."""
    from memstore.verify import workspace as workspace_module

    path, commits = _built(build)
    monkeypatch.setattr(workspace_module, "_NAMES", {})
    asked: list[tuple[str, ...]] = []
    real = Workspace._git

    def counted(self: Workspace, *args: str, **kwargs: object) -> str:
        asked.append(args)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Workspace, "_git", counted)
    real_diff = Differ.diff

    def diffed(self: Differ, old: str, new: str) -> bytes:
        asked.append(("diff-tree", *self.options))
        return real_diff(self, old, new)

    monkeypatch.setattr(Differ, "diff", diffed)
    copy = path.parent / "copy"
    shutil.copytree(path, copy, symlinks=True)
    one, other = Workspace(path), Workspace(copy)
    assert one.touched(commits["one"], commits["two"]) == ["app.py"]
    assert other.touched(commits["one"], commits["two"]) == ["app.py"]
    assert asked == [("diff-tree", "--name-only", "--no-renames")]  # by ids: the working copy's diff-tree
    assert other.changed(commits["one"], "main") == ["app.py"]
    (copy / "new.py").write_text("x = 1\n")
    made = other.commit("more", when=WHEN, who="dev")
    assert made is not None
    assert other.changed(commits["one"], "main") == ["app.py", "new.py"]  # main moved: asked again
    assert [a[0] for a in asked if a[0].startswith("diff")] == [
        "diff-tree",
        "diff-tree",
        "diff-tree",
    ]  # from a merge base too: the base walked through the object reader, then the same diff-tree


def test_a_sessions_merge_moves_main_by_compare_and_swap(build: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's one commit on main fast-forwards main without a checkout or a process (the
    tree is that commit's already; the ref files are swapped through their locks, the move
    logged as git logs it); a packed main goes through git's ``update-ref``; a branch main is not
    the parent of goes through git's ``merge --ff-only``, which refuses what is not a fast-forward."""
    from memstore.errors import RepositoryError

    path, commits = _built(build)
    space = Workspace(path)
    asked: list[str] = []
    real = Workspace._git

    def counted(self: Workspace, *args: str, **kwargs: object) -> str:
        asked.append(args[0])
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Workspace, "_git", counted)
    space.start("task/a")
    (path / "app.py").write_text("LIMIT = 3\n")
    made = space.commit("three", when=WHEN, who="dev")
    assert made is not None
    asked.clear()
    space.merge("task/a")
    assert asked == []
    head = subprocess.run(["git", "-C", str(path), "symbolic-ref", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == "refs/heads/main"
    assert space.head("main") == made
    assert _answer(path, "rev-parse", "main") == made
    assert space.repo.is_clean()
    assert _answer(path, "reflog", "-1", "--format=%H %gs", "main") == f"{made} merge task/a: Fast-forward"
    assert not list((path / ".git").rglob("*.lock"))
    subprocess.run(["git", "-C", str(path), "fsck", "--no-progress"], check=True, capture_output=True)

    subprocess.run(["git", "-C", str(path), "pack-refs", "--all"], check=True)  # main only in packed-refs now
    space = Workspace(path)
    space.start("task/c")
    (path / "app.py").write_text("LIMIT = 5\n")
    made = space.commit("five", when=WHEN, who="dev")
    asked.clear()
    space.merge("task/c")
    assert asked[:2] == ["rev-parse", "update-ref"]  # only git reads a packed ref: git moves it
    assert _answer(path, "rev-parse", "main") == made
    assert _answer(path, "symbolic-ref", "HEAD") == "refs/heads/main"
    lock = path / ".git" / "refs" / "heads" / "main.lock"
    assert (path / ".git" / "refs" / "heads" / "main").is_file()  # git's update wrote it loose again
    space.start("task/d")
    (path / "app.py").write_text("LIMIT = 6\n")
    assert space.commit("six", when=WHEN, who="dev") is not None
    lock.write_text("held by another git\n")
    with pytest.raises(RepositoryError):
        space.merge("task/d")  # the lock is held: git is asked, and refuses too
    assert lock.read_text() == "held by another git\n"
    assert _answer(path, "rev-parse", "main") == made
    lock.unlink()
    space.merge("task/d")
    assert _answer(path, "rev-parse", "main") != made
    subprocess.run(["git", "-C", str(path), "branch", "-f", "side", commits["one"]], check=True)
    space.start("task/b", base="side")
    (path / "app.py").write_text("LIMIT = 4\n")
    assert space.commit("four", when=WHEN, who="dev") is not None
    asked.clear()
    with pytest.raises(RepositoryError):
        space.merge("task/b")  # main is not its parent: git's own fast-forward, refused
    assert asked[:2] == ["checkout", "merge"]
