"""The line diff behind citation checks: right on repeated lines, bounded on any file under the cap."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import patiencediff
from hypothesis import example, given
from hypothesis import strategies as st

from memstore.model import Citation
from memstore.verify import CitationStatus as S
from memstore.verify import GitCodebase, verify_citation
from memstore.verify.codebase import MAX_FILE_BYTES
from memstore.verify.history import HistoryBuilder
from memstore.verify.lines import align, diff_opcodes, lines_of, normalise
from tests.verify.conftest import Build


@contextmanager
def finishes_within(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: the quadratic diff this replaces took minutes on these inputs."""

    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _two_versions(build: Build, old: str, new: str) -> tuple[GitCodebase, str]:
    builder = HistoryBuilder()
    builder.write("f.txt", old)
    builder.commit("old", label="old")
    builder.write("f.txt", new)
    builder.commit("new", label="new")
    built = build(builder)
    return GitCodebase(built.path, "main"), built.commits["old"]


def test_a_brace_among_half_a_million_follows_its_line_past_an_insertion(build: Build) -> None:
    count = MAX_FILE_BYTES // 2 - 8  # the largest file of one-character lines under the cap
    old = "}\n" * count
    new = "}\n" * (count // 2) + "inserted\n" + "}\n" * (count - count // 2)
    codebase, commit = _two_versions(build, old, new)
    with finishes_within(20):  # difflib took 24 s at 16k lines; this is 32 times that many
        below = verify_citation(codebase, Citation("f.txt", count // 2 + 10, commit=commit))
        above = verify_citation(codebase, Citation("f.txt", 10, commit=commit))
    assert (below.status, below.line) == (S.MOVED, count // 2 + 11)
    assert (above.status, above.line) == (S.VALID, 10)


def test_a_lock_file_rewritten_in_many_places_is_checked_in_bounded_time(build: Build) -> None:
    old = "".join(f'    "node_modules/pkg{i}": "sha512-{i * 7919:x}",\n' for i in range(20_000))
    new = "".join(line.replace('",', '0",') if i % 5 == 0 else line for i, line in enumerate(old.splitlines(True)))
    codebase, commit = _two_versions(build, old, new)
    with finishes_within(20):
        kept = verify_citation(codebase, Citation("f.txt", 10_002, commit=commit))
        changed = verify_citation(codebase, Citation("f.txt", 10_001, commit=commit))
    assert (kept.status, kept.line) == (S.VALID, 10_002)
    assert (changed.status, changed.line) == (S.CHANGED, 10_001)


def test_a_changed_line_in_a_megabyte_line_file_is_bounded(build: Build) -> None:
    line = "x" * (MAX_FILE_BYTES - 100)
    codebase, commit = _two_versions(build, line + "\n", "y" + line + "\n")
    with finishes_within(20):
        check = verify_citation(codebase, Citation("f.txt", 1, commit=commit))
    assert (check.status, check.line) == (S.CHANGED, 1)


lines = st.lists(st.sampled_from(["}", "{", "return None", "x = 1", "", "  }", "y = 2"]), max_size=40)


def _brute_force(old: list[str], new: list[str]) -> tuple[list[int | None], list[int | None]]:
    """The per-line maps straight from patience diff's opcodes (what `Alignment` keeps as runs)."""
    a, b = [normalise(x) for x in old], [normalise(x) for x in new]
    survived: list[int | None] = [None] * len(a)
    rewritten: list[int | None] = [None] * len(a)
    if a == b:
        return list(range(len(a))), [None] * len(a)
    for tag, i1, i2, j1, j2 in patiencediff.PatienceSequenceMatcher(None, a, b).get_opcodes():
        for k in range(i2 - i1):
            if tag == "equal":
                survived[i1 + k] = j1 + k
            elif tag == "replace" and i2 - i1 == j2 - j1:
                rewritten[i1 + k] = j1 + k
    return survived, rewritten


@given(lines, lines)
def test_surviving_lines_map_in_order_onto_equal_lines(old: list[str], new: list[str]) -> None:
    alignment = align(lines_of(old), lines_of(new))
    mapped = [(i, alignment.survived(i)) for i in range(len(old))]
    kept = [(i, j) for i, j in mapped if j is not None]
    assert all(normalise(old[i]) == normalise(new[j]) for i, j in kept)
    assert [j for _, j in kept] == sorted({j for _, j in kept})  # in order, none twice


@given(lines, lines)
def test_the_region_lies_between_the_nearest_surviving_lines(old: list[str], new: list[str]) -> None:
    alignment = align(lines_of(old), lines_of(new))
    survived = [alignment.survived(i) for i in range(len(old))]
    for start in range(len(old)):
        for size in (1, 2):
            above = [j for j in survived[:start] if j is not None]
            below = [j for j in survived[start + size :] if j is not None]
            lo = above[-1] + 1 if above else 0
            hi = below[0] if below else len(new)
            assert alignment.region(start, size, len(new)) == (lo, max(lo, hi))


@given(lines, lines)
@example(["}", "}", "{"], ["  }", "{", "}"])  # a common prefix once whitespace is collapsed (found by hypothesis)
def test_without_a_common_prefix_the_runs_are_patience_diff_itself(old: list[str], new: list[str]) -> None:
    if old and new and normalise(old[0]) == normalise(new[0]):  # lines compare with whitespace collapsed
        old = ["unique head", *old]
    alignment = align(lines_of(old), lines_of(new))
    survived, rewritten = _brute_force(old, new)
    assert [alignment.survived(i) for i in range(len(old))] == survived
    assert [alignment.rewritten(i) for i in range(len(old))] == rewritten


def test_whitespace_is_collapsed_once_per_text() -> None:
    view = lines_of(["  a \t b  ", "", "\tc"])
    assert view.lines == ("a b", "", "c")
    assert view.text == "\na b\n\nc\n"
    assert view.find(["", "c"], 0) == 1
    assert view.find(["c"], 2) == 2
    assert view.find(["d"], 0) is None


# Items that come in pairs (a keyword-argument list rewritten from ``{k: k}`` to ``k=k``) take the
# compiled patience diff past its recursion depth: it panics on a dozen items.
PAIRED_OLD = ["ws_ping_timeout", "ws_ping_timeout", "ws_per_message_deflate", "ws_per_message_deflate", "lifespan",
              "lifespan", "env_file", "env_file", ",", "log_config", "log_config", "is"]  # fmt: skip
PAIRED_NEW = ["ws_ping_timeout", "=", "ws_ping_timeout", "ws_per_message_deflate", "=", "ws_per_message_deflate",
              "lifespan", "=", "lifespan", ",", "env_file", "=", "env_file", ",", "log_config", "if", "log_config",
              "is"]  # fmt: skip


def test_a_diff_the_compiled_matcher_gives_up_on_is_made_by_difflib() -> None:
    opcodes = diff_opcodes(PAIRED_OLD, PAIRED_NEW)
    rebuilt = []
    for tag, i1, i2, j1, j2 in opcodes:
        rebuilt += PAIRED_OLD[i1:i2] if tag == "equal" else PAIRED_NEW[j1:j2]
    assert rebuilt == PAIRED_NEW
    assert opcodes[0] == ("equal", 0, 1, 0, 1)


def test_a_file_of_paired_lines_is_aligned_and_its_citation_checked(build: Build) -> None:
    b = HistoryBuilder()
    b.write("kw.py", "\n".join(PAIRED_OLD) + "\n").commit("old", label="old")
    b.write("kw.py", "\n".join(PAIRED_NEW) + "\n").commit("new", label="new")
    built = build(b)
    codebase = GitCodebase(built.path, built.commits["new"])
    check = verify_citation(codebase, Citation("kw.py", 5, commit=built.commits["old"]))
    assert (check.status, check.line, check.text) == (S.MOVED, 7, "lifespan")
