"""verify_citation on real repositories: every status, relocation, and the hard cases."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memstore import Citation
from memstore.verify import CitationStatus, GitCodebase, WorkingTree, verify_citation
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build, braces

S = CitationStatus


def _two_commits(build: Build, before: dict[str, str], change: object) -> tuple[GitCodebase, str]:
    b = HistoryBuilder()
    for path, text in before.items():
        b.write(path, text)
    b.commit("before", label="old")
    change(b)  # type: ignore[operator]
    b.commit("after", label="new")
    built = build(b)
    return GitCodebase(built.path, "main"), built.commits["old"]


def test_valid_when_nothing_changed(build: Build) -> None:
    codebase, old = _two_commits(build, {"a.py": braces()}, lambda b: b.write("other.txt", "x\n"))
    check = verify_citation(codebase, Citation("a.py", 3, commit=old))
    assert (check.status, check.path, check.line, check.text, check.snippet) == (
        S.VALID,
        "a.py",
        3,
        "    return None",
        "    return None",
    )


@pytest.mark.parametrize("line", [1, 2, 3, 4, 10, 11, 12, 24])
def test_repeated_short_lines_follow_their_own_line_through_insertions(build: Build, line: int) -> None:
    def change(b: HistoryBuilder) -> None:
        b.insert("a.py", 1, "import os\nimport sys\n\n")  # 3 lines above everything
        b.insert("a.py", 12, "}\n}\nreturn None\n")  # look-alike lines in the middle

    codebase, old = _two_commits(build, {"a.py": braces()}, change)
    check = verify_citation(codebase, Citation("a.py", line, commit=old))
    expected = line + 3 if line + 3 < 12 else line + 6
    assert (check.status, check.line) == (S.MOVED, expected)
    assert check.text == check.snippet


def test_one_of_several_identical_lines_is_followed(build: Build) -> None:
    text = "x = 1\n}\n}\n}\ny = 2\n}\n"

    def change(b: HistoryBuilder) -> None:
        b.insert("a.py", 1, "a\nb\n")
        b.insert("a.py", 7, "w = 0\n}\n")  # a look-alike before 'y = 2' (now line 7)

    codebase, old = _two_commits(build, {"a.py": text}, change)
    assert [verify_citation(codebase, Citation("a.py", n, commit=old)).line for n in (2, 3, 4, 6)] == [4, 5, 6, 10]


def test_range_moves_as_a_block(build: Build) -> None:
    codebase, old = _two_commits(build, {"a.py": braces()}, lambda b: b.insert("a.py", 1, "# one\n# two\n"))
    check = verify_citation(codebase, Citation("a.py", 5, 8, commit=old))
    assert (check.status, check.line, check.end_line) == (S.MOVED, 7, 10)
    assert check.text == "def f1(argument):\n    argument.\n    return None\n}"


def test_changed_line_reports_what_stands_there_now(build: Build) -> None:
    text = 'export const API_VERSION = "v2.1.4";\nexport const NAME = "sdk";\n'
    codebase, old = _two_commits(build, {"c.ts": text}, lambda b: b.replace("c.ts", "v2.1.4", "v2.2.0"))
    check = verify_citation(codebase, Citation("c.ts", 1, commit=old))
    assert (check.status, check.line) == (S.CHANGED, 1)
    assert check.snippet == 'export const API_VERSION = "v2.1.4";'
    assert check.text == 'export const API_VERSION = "v2.2.0";'


def test_changed_line_after_insertions_maps_to_its_replacement(build: Build) -> None:
    text = "a\nb\nVERSION = 1\nc\n"

    def change(b: HistoryBuilder) -> None:
        b.insert("v.py", 1, "new1\nnew2\n")
        b.replace("v.py", "VERSION = 1", "VERSION = 2")

    codebase, old = _two_commits(build, {"v.py": text}, change)
    check = verify_citation(codebase, Citation("v.py", 3, commit=old))
    assert (check.status, check.line, check.text) == (S.CHANGED, 5, "VERSION = 2")


def test_renamed_file(build: Build) -> None:
    codebase, old = _two_commits(build, {"src/a.py": braces()}, lambda b: b.rename("src/a.py", "lib/b.py"))
    check = verify_citation(codebase, Citation("src/a.py", 7, commit=old))
    assert (check.status, check.path, check.line, check.text) == (S.RENAMED, "lib/b.py", 7, "    return None")


def test_renamed_and_edited_file_found_by_git_rename_detection(build: Build) -> None:
    def change(b: HistoryBuilder) -> None:
        b.rename("src/a.py", "lib/b.py")
        b.insert("lib/b.py", 1, "# moved here\n")

    codebase, old = _two_commits(build, {"src/a.py": braces(10)}, change)
    check = verify_citation(codebase, Citation("src/a.py", 7, commit=old))
    assert (check.status, check.path, check.line) == (S.RENAMED, "lib/b.py", 8)


def test_renamed_file_found_by_snippet_without_commit(build: Build) -> None:
    codebase, _ = _two_commits(
        build, {"src/util.py": "A = 1\nB = 2\n"}, lambda b: b.rename("src/util.py", "lib/util.py")
    )
    check = verify_citation(codebase, Citation("src/util.py", 2, snippet="B = 2"))
    assert (check.status, check.path, check.line) == (S.RENAMED, "lib/util.py", 2)


def test_deleted_file(build: Build) -> None:
    codebase, old = _two_commits(build, {"a.py": "x\n", "b.py": "y\n"}, lambda b: b.remove("a.py"))
    check = verify_citation(codebase, Citation("a.py", 1, commit=old))
    assert (check.status, check.text, check.snippet) == (S.FILE_MISSING, None, "x")


def test_line_past_the_end_without_snippet(build: Build) -> None:
    codebase, _ = _two_commits(build, {"a.py": "x\ny\n"}, lambda b: b.write("c.txt", "c\n"))
    assert verify_citation(codebase, Citation("a.py", 2)).status is S.VALID
    check = verify_citation(codebase, Citation("a.py", 3))
    assert (check.status, check.line) == (S.LINE_MISSING, None)


def test_snippet_past_the_end_is_changed(build: Build) -> None:
    codebase, _ = _two_commits(build, {"a.py": "x\n"}, lambda b: b.write("c.txt", "c\n"))
    assert verify_citation(codebase, Citation("a.py", 40, snippet="gone")).status is S.CHANGED


def test_without_commit_the_nearest_occurrence_wins(build: Build) -> None:
    codebase, _ = _two_commits(build, {"a.py": braces()}, lambda b: b.insert("a.py", 1, "# one\n"))
    check = verify_citation(codebase, Citation("a.py", 8, snippet="}"))
    assert (check.status, check.line) == (S.MOVED, 9)  # 8 was the '}' of f1; 9 is nearest after the insert


def test_unknown_commit_falls_back_to_the_snippet(build: Build) -> None:
    codebase, _ = _two_commits(build, {"a.py": "a\nb\nc\n"}, lambda b: b.insert("a.py", 1, "z\n"))
    check = verify_citation(codebase, Citation("a.py", 2, snippet="b", commit="0" * 40))
    assert (check.status, check.line) == (S.MOVED, 3)


def test_memory_learned_on_an_abandoned_branch(build: Build) -> None:
    b = HistoryBuilder()
    b.write("cfg.py", "TIMEOUT = 30\nRETRIES = 3\n")
    b.commit("base", label="base")
    b.branch_from("spike")
    b.replace("cfg.py", "TIMEOUT = 30", "TIMEOUT = 90")
    b.commit("spike", label="spike")
    b.switch("main")
    b.insert("cfg.py", 1, "# settings\n")
    b.commit("main moves on", label="main")
    built = build(b)
    codebase = GitCodebase(built.path, "main")
    learned = verify_citation(codebase, Citation("cfg.py", 1, commit=built.commits["spike"]))
    assert (learned.status, learned.snippet, learned.line, learned.text) == (
        S.CHANGED,
        "TIMEOUT = 90",
        2,
        "TIMEOUT = 30",
    )
    unchanged = verify_citation(codebase, Citation("cfg.py", 2, commit=built.commits["spike"]))
    assert (unchanged.status, unchanged.line) == (S.MOVED, 3)


def test_whitespace_only_changes_and_crlf_keep_a_citation(build: Build) -> None:
    def change(b: HistoryBuilder) -> None:
        b.write("a.py", "def f():\r\n        return   None\r\n")

    codebase, old = _two_commits(build, {"a.py": "def f():\n    return None\n"}, change)
    check = verify_citation(codebase, Citation("a.py", 2, commit=old))
    assert (check.status, check.line, check.text) == (S.VALID, 2, "        return   None")


def test_non_utf8_file_does_not_crash(build: Build) -> None:
    codebase, old = _two_commits(
        build,
        {"latin.txt": "caf\xe9\nname = 1\n".encode("latin-1")},
        lambda b: b.insert("latin.txt", 1, "top"),  # type: ignore[dict-item]
    )
    check = verify_citation(codebase, Citation("latin.txt", 2, commit=old))
    assert (check.status, check.line, check.text) == (S.MOVED, 3, "name = 1")


def test_binary_and_huge_files_are_invalid_and_not_read(build: Build) -> None:
    b = HistoryBuilder()
    b.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    b.write("big.txt", b"line\n" * 300_000)
    b.commit("assets")
    codebase = GitCodebase(build(b).path, "main")
    assert verify_citation(codebase, Citation("logo.png", 1)).status is S.INVALID
    big = verify_citation(codebase, Citation("big.txt", 1))
    assert (big.status, big.problem) == (S.INVALID, "larger than 1048576 bytes")
    assert codebase.repo.objects([codebase._tree["big.txt"].oid], max_size=1).popitem()[1].data is None


def test_escaping_path_is_invalid() -> None:
    class Nowhere:
        commit = None

    hostile = Citation.trusted("../../etc/passwd", 1, None, None, None)
    check = verify_citation(WorkingTree(Path("/")), hostile)  # even with / as the root, nothing is read
    assert check.status is S.INVALID
    assert check.problem == "the path escapes the repository"


def test_symlink_out_of_the_repository_is_invalid(build: Build, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password = hunter2\n")
    b = HistoryBuilder()
    b.write("ok.txt", "fine\n")
    b.commit("one")
    built = build(b)
    os.symlink(secret, built.path / "leak.txt")
    os.symlink("ok.txt", built.path / "alias.txt")
    tree = WorkingTree(built.path)
    leak = verify_citation(tree, Citation("leak.txt", 1, snippet="password = hunter2"))
    assert (leak.status, leak.text) == (S.INVALID, None)
    assert verify_citation(tree, Citation("alias.txt", 1, snippet="fine")).status is S.VALID


def test_symlink_in_git_pointing_out_is_invalid(build: Build) -> None:
    b = HistoryBuilder()
    b.write("ok.txt", "fine\n").write("leak.txt", "../../../../etc/passwd").write("alias.txt", "ok.txt")
    b.commit("one")
    built = build(b, bare=True)
    # fast-import wrote them as files; re-commit them as symlinks with plumbing
    import subprocess

    def run(*args: str, data: bytes | None = None) -> str:
        return (
            subprocess.run(["git", "-C", str(built.path), *args], input=data, capture_output=True, check=True)
            .stdout.decode()
            .strip()
        )

    blob_out, blob_in, ok = (
        run("hash-object", "-w", "--stdin", data=d) for d in (b"../../../../etc/passwd", b"ok.txt", b"fine\n")
    )
    tree = run(
        "mktree",
        data=f"120000 blob {blob_out}\tleak.txt\n120000 blob {blob_in}\talias.txt\n100644 blob {ok}\tok.txt\n".encode(),
    )
    commit = run("commit-tree", tree, "-m", "links", data=None)
    codebase = GitCodebase(built.path, commit)
    assert verify_citation(codebase, Citation("leak.txt", 1)).status is S.INVALID
    assert verify_citation(codebase, Citation("alias.txt", 1, snippet="fine")).status is S.VALID


def test_bare_repository_at_a_tag_and_a_sha(build: Build) -> None:
    b = HistoryBuilder()
    b.write("a.txt", "v1\n")
    first = b.commit("one")
    b.tag("release")
    b.write("a.txt", "v2\n")
    b.commit("two")
    built = build(b, bare=True)
    for ref in ("release", built.commits[first]):
        assert verify_citation(GitCodebase(built.path, ref), Citation("a.txt", 1, snippet="v1")).status is S.VALID
    assert verify_citation(GitCodebase(built.path, "main"), Citation("a.txt", 1, snippet="v1")).status is S.CHANGED


def test_working_tree_sees_uncommitted_edits_and_history(build: Build) -> None:
    b = HistoryBuilder()
    b.write("a.txt", "one\ntwo\n")
    first = b.commit("one")
    built = build(b)
    (built.path / "a.txt").write_text("zero\none\ntwo\n")
    tree = WorkingTree(built.path, history=GitCodebase(built.path))
    check = verify_citation(tree, Citation("a.txt", 2, commit=built.commits[first]))
    assert (check.status, check.line, check.text) == (S.MOVED, 3, "two")
