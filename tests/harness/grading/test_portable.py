"""The portable grader (an exported task's verifier, on the standard library alone) grades as
memstore grades: the same values read and compared, the same answers right, the same merge checks
passed, the same outcomes; and, copied out and run with nothing of memstore or the `regex`
package importable, it writes reward 1 for the right outcome and 0 for a wrong one."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstore.harness.grading import expected_outcome, portable, portable_grader
from memstore.harness.grading.answers import answer_is_right
from memstore.harness.grading.merge_checks import check_change
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode
from memstore.harness.scenarios import AnswerMatch, Location, Task, load_library, normalise, values_in
from memstore.harness.scenarios.scenario import Check, Finding
from memstore.model import Surface
from memstore.verify.workspace import Workspace

ROOT = Path(__file__).parents[3]
UNBOXED = AgentRuntime(sandbox=SandboxMode.OFF)
WORDS = st.text(alphabet=st.sampled_from(list("0123456789.v dayshoursminweekms`'\"-_xyzABC,")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(WORDS)
def test_values_are_read_as_memstore_reads_them(text: str) -> None:
    assert portable.normalise(text) == normalise(text)
    assert portable.values_in(text) == values_in(text)


@settings(max_examples=300, deadline=None)
@given(WORDS, WORDS, st.sampled_from(list(AnswerMatch)))
def test_any_answer_is_graded_as_memstore_grades_it(answer: str, expected: str, match: AnswerMatch) -> None:
    assert portable.answer_is_right(answer, expected, match.value) == answer_is_right(answer, expected, match)


def _library_answers() -> list[tuple[str, str, AnswerMatch]]:
    scenarios = [s for s in load_library([ROOT / "scenarios"]) if s.files is None]  # hand-written and mined
    tasks = [t for s in scenarios for t in s.tasks if t.surface is Surface.CLI and t.answer]
    given = ["", "I do not know", "v0.0.1", "10", "20", "30 days", "45d", "vitest run", "`jest --coverage`"]
    return sorted({(g, t.answer, t.match) for t in tasks for g in [*given, t.answer, f"It is {t.answer}."]})


@pytest.mark.parametrize(("answer", "expected", "match"), _library_answers())
def test_every_answer_of_the_library_is_graded_as_memstore_grades_it(
    answer: str, expected: str, match: AnswerMatch
) -> None:
    assert portable.answer_is_right(answer, expected, match.value) == answer_is_right(answer, expected, match)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text('VERSION = "v1.0"\n')
    (root / "b.md").write_text("Version: v1.0\n")
    (root / "c.txt").write_text("keep\n")
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", "-C", str(root), *argv], check=True)
    return root


CHECK = Check(
    equal=(Location("a.py", r'VERSION = "(v[0-9.]+)"'), Location("b.md", r"Version: (v[0-9.]+)")),
    contains=(("a.py", 'VERSION = "v2.0"'),),
    absent=(("b.md", "v1.0"),),
    unchanged=("c.txt",),
    command=("{python}", "-c", "import sys; sys.exit('v2.0' not in open('a.py').read())"),
)
TASK = Task("bump", Surface.CODING_AGENT, "dev", "Bump the version to v2.0.", check=CHECK)
EDITS = {
    "right": {"a.py": 'VERSION = "v2.0"\n', "b.md": "Version: v2.0\n"},
    "disagree": {"a.py": 'VERSION = "v2.0"\n'},
    "absent": {"a.py": 'VERSION = "v2.0"\n', "b.md": "Version: v2.0 (was v1.0)\n"},
    "unchanged": {"a.py": 'VERSION = "v2.0"\n', "b.md": "Version: v2.0\n", "c.txt": "changed\n"},
    "contains": {"a.py": 'VERSION = "v2.0" # \n', "b.md": "Version: v2.0\n"},
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_a_merge_check_passes_where_memstore_passes_it(repo: Path, case: str) -> None:
    for path, text in EDITS[case].items():
        (repo / path).write_text(text)
    touched = portable.touched_files(repo, "main")
    assert touched == set(EDITS[case])
    check = expected_outcome(TASK)["check"]
    passed, why = portable.check_passes(repo, check, touched)
    assert passed == check_change(Workspace(repo), TASK, touched, UNBOXED)
    assert passed == (case in {"right", "contains"})
    command_fails = dataclasses.replace(
        TASK, check=dataclasses.replace(CHECK, command=("{python}", "-c", "raise SystemExit(3)"))
    )
    assert portable.check_passes(repo, expected_outcome(command_fails)["check"], touched)[0] is False
    assert check_change(Workspace(repo), command_fails, touched, UNBOXED) is False
    assert why


def _grade(tmp_path: Path, expected: dict[str, object], repo: Path, outputs: Path) -> dict[str, object]:
    """The grader copied out, run with nothing of memstore or `regex` importable (``-I -S``)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    grader, document, verifier = tmp_path / "grade.py", tmp_path / "expected.json", tmp_path / "verifier"
    grader.write_text(portable_grader())
    document.write_text(json.dumps(expected))
    argv = [sys.executable, "-I", "-S", str(grader), "--expected", str(document), "--repo", str(repo),
            "--outputs", str(outputs), "--base", "main", "--verifier", str(verifier)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    graded: dict[str, object] = json.loads((verifier / "grading.json").read_text())
    assert (verifier / "reward.txt").read_text() == f"{graded['reward']:g}\n"
    return graded


def test_copied_out_it_rewards_the_right_change_and_not_a_wrong_one(repo: Path, tmp_path: Path) -> None:
    expected = expected_outcome(TASK)
    assert _grade(tmp_path / "idle", expected, repo, tmp_path)["reward"] == 0.0  # nothing changed
    (repo / "a.py").write_text('VERSION = "v2.0"\n')
    assert _grade(tmp_path / "half", expected, repo, tmp_path)["reward"] == 0.0
    (repo / "b.md").write_text("Version: v2.0\n")
    assert _grade(tmp_path / "whole", expected, repo, tmp_path) == {
        "reward": 1.0, "surface": "coding_agent", "task": "bump", "why": "the change passes its check",
    }  # fmt: skip


def test_copied_out_it_grades_findings_and_answers(repo: Path, tmp_path: Path) -> None:
    review = Task("review", Surface.CODE_REVIEW, "rev", "Review it.", findings=(Finding("b.md"),))
    outputs = tmp_path / "out"
    outputs.mkdir()
    (outputs / "findings.json").write_text(json.dumps([{"path": f"{repo}/b.md", "note": "stale"}]))
    assert _grade(tmp_path / "r1", expected_outcome(review), repo, outputs)["reward"] == 1.0
    (outputs / "findings.json").write_text('["b.md", "a.py"]')
    assert _grade(tmp_path / "r2", expected_outcome(review), repo, outputs)["reward"] == 0.0
    ask = Task("ask", Surface.CLI, "ops", "Which version?", answer_at=Location("a.py", r'VERSION = "(v[0-9.]+)"'))
    (outputs / "answer.txt").write_text("It is 1.0.\n")
    assert _grade(tmp_path / "a1", expected_outcome(ask), repo, outputs)["reward"] == 1.0
    (outputs / "answer.txt").write_text("v1.0 or v2.0\n")
    assert _grade(tmp_path / "a2", expected_outcome(ask), repo, outputs)["reward"] == 0.0
    (outputs / "answer.txt").unlink()
    assert _grade(tmp_path / "a3", expected_outcome(ask), repo, outputs)["reward"] == 0.0


def test_the_document_holds_the_grading_data_of_its_surface_alone() -> None:
    assert set(expected_outcome(TASK)) == {"version", "task", "surface", "check"}
    ask = Task("ask", Surface.CLI, "ops", "How many?", answer="20", match=AnswerMatch.CONTAINS)
    assert expected_outcome(ask) == {
        "version": 1, "task": "ask", "surface": "cli", "answer": "20", "match": "contains", "answer_at": None,
    }  # fmt: skip
