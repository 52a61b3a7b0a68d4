"""The hand-written verdict benchmark (evals/bench/memories/): its shape is the one issue 41 asks
for, a malformed memory stops the load with where and why, and the scorer reads a value in a fact
as a person would."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

BENCH = Path(__file__).parent.parent / "evals" / "bench"
sys.path.insert(0, str(BENCH))

import handwritten  # noqa: E402
from score_handwritten import said  # noqa: E402

USED_BEFORE = {
    "click", "requests", "attrs", "jinja2", "pyparsing", "httpx", "platformdirs", "starlette", "flask", "pluggy",
    "cachetools", "markupsafe", "wheel", "tomli", "packaging", "urllib3", "itsdangerous", "chardet",
    "humanize", "more-itertools", "marshmallow",
}  # fmt: skip


def test_the_benchmark_has_600_memories_on_six_new_projects_a_third_held_out() -> None:
    projects = handwritten.projects()
    memories = {name: handwritten.load(p) for name, p in projects.items()}
    assert len(projects) == 9
    assert not {p.package for p in projects.values()} & USED_BEFORE
    assert sum(len(m) for m in memories.values()) == 769
    assert all(len(m) >= 80 for m in memories.values())
    held_out = [name for name, p in projects.items() if p.split == "holdout"]
    assert held_out == ["uvicorn", "structlog", "dotenv"]
    assert all(len(set(m.facts)) == 3 for group in memories.values() for m in group)


def test_the_mix_of_classes_is_at_least_the_one_asked_for() -> None:
    counts = Counter(m.kind for p in handwritten.projects().values() for m in handwritten.load(p))
    total = sum(counts.values())
    for kinds, share in handwritten.MIX.items():
        names = kinds if isinstance(kinds, tuple) else (kinds,)
        assert sum(counts[k] for k in names) / total >= share, names


def test_a_malformed_memory_stops_the_load_with_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = '{"id": "x-1", "class": "valid", "subject": "s", "facts": ["a", "b", "c"], "citations": ["a.py:1"]}'
    twice = '{"id": "x-2", "class": "valid", "subject": "s", "facts": ["a", "a", "c"], "citations": ["a.py:1"]}'
    (tmp_path / "x.jsonl").write_text(good + "\n" + twice + "\n")
    monkeypatch.setattr(handwritten, "HERE", tmp_path)
    project = handwritten.Project("x", "pypi", "x", "1", "2", "tune")
    with pytest.raises(SystemExit, match=r"x\.jsonl:2: facts must be three different wordings"):
        handwritten.load(project)
    (tmp_path / "x.jsonl").write_text(good + "\n" + good + "\n")
    with pytest.raises(SystemExit, match=r"x\.jsonl:2: id 'x-1' is used twice"):
        handwritten.load(project)


def test_a_value_is_said_as_a_whole_token() -> None:
    assert said("The timeout is 30 seconds.", "30")
    assert not said("The timeout is 300 seconds.", "30")
    assert said("It logs at ERROR level.", "error")  # a word, in any case
    assert not said("It logs at ERRORS level.", "error")
    assert said("Set `mode='w'` to write.", "'w'")
    assert said("It needs python_requires >=3.8.", ">=3.8")
    assert said("It needs Python 3.8 or newer.", ">=3.8")  # a pin, by its version
    assert not said("It needs Python 3.9 or newer.", ">=3.8")


@given(st.from_regex(r"[a-z_]{3,12}", fullmatch=True), st.from_regex(r"[A-Za-z ]{0,20}", fullmatch=True))
def test_a_name_written_in_backticks_is_said(name: str, prose: str) -> None:
    assert said(f"{prose} `{name}` {prose}", name)
