"""Hostile scenario files: each is a located error in bounded time and memory, and nothing is built."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import read_file
from tests.verify.test_lines import finishes_within

BASE = (scenarios_dir() / "api-version-moved.yaml").read_text()

LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)

BOMBS = {
    "billion laughs": (LAUGHS + BASE, "aliases expand this document past 200,000 values"),
    "an alias inside itself": ("loop: &loop [*loop]\n" + BASE, "an alias refers to a collection that contains it"),
    "50,000 nested [": ("deep: " + "[" * 50_000 + "]" * 50_000 + "\n" + BASE, "nested more than 64 levels deep"),
    "3,000 nested mappings": ("deep: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n" + BASE, "nested more than 64 levels"),
    "an integer key among strings": (
        BASE.replace("users:\n", "users:\n  1: {acme/api: admin}\n"),
        "keys must be strings",
    ),
    "a boolean key": (BASE.replace("users:\n", "users:\n  yes: {acme/api: admin}\n"), "keys must be strings"),
    "a start that is not a date": (BASE + "clock:\n  start: not-a-date\n", "at clock.start: not a date and time"),
    "a start without a time zone": (BASE + "clock:\n  start: 2026-02-02T09:00:00\n", "has no time zone"),
    "an unquoted start": (BASE + "clock:\n  start: 2026-02-02 09:00:00\n", "has no time zone"),
    "after of a billion weeks": (
        BASE.replace("after: 2h", "after: 999999999999w"),
        "at tasks[0].after: not a duration",
    ),
    "an age past a century": (BASE.replace("age: 6d", "age: 99999w"), "longer than the 36,500 days"),
    "a huge file": ("x" * (5 * 1024 * 1024), "larger than 4 MiB"),
    "not UTF-8": (b"name: \xff\xfe\n", "cannot read"),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_hostile_file_is_a_located_problem(tmp_path: Path, name: str) -> None:
    content, message = BOMBS[name]
    file = tmp_path / "bomb.yaml"
    if isinstance(content, bytes):
        file.write_bytes(content)
    else:
        file.write_text(content)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with finishes_within(10):
        scenarios, problems = read_file(file)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert scenarios == []
    assert problems, name
    assert any(message in str(p) for p in problems), [str(p) for p in problems]
    assert all(str(p).startswith(f"{file}:") and p.line >= 1 and p.column >= 1 for p in problems)
    assert grown_mb < 200


def test_deep_mappings_are_refused_at_their_line(tmp_path: Path) -> None:
    file = tmp_path / "deep.yaml"
    file.write_text("".join(f"{' ' * i}k{i}:\n" for i in range(100)) + " " * 100 + "x: 1\n")
    _, problems = read_file(file)
    (problem,) = problems
    assert (problem.line, problem.message) == (65, "nested more than 64 levels deep")


def test_yaml_merge_keys_still_work(tmp_path: Path) -> None:
    file = tmp_path / "merge.yaml"
    text = BASE.replace(
        "users:\n  ana: {acme/api: admin}", "users:\n  ana: &admin {acme/api: admin}\n  root:\n    <<: *admin"
    )
    file.write_text(text)
    scenarios, problems = read_file(file)
    assert problems == []
    assert scenarios[0].users["root"] == scenarios[0].users["ana"]


def test_a_generator_that_names_values_inside_names_still_builds(tmp_path: Path) -> None:
    # With 12 or more invariants a name such as QUEUE_LIMIT_19 could hold its own value (19);
    # changing the value once rewrote the name, and the generator stopped with StopIteration.
    file = tmp_path / "population.yaml"
    file.write_text(
        "name: big\ndescription: d\ngenerator:\n  seed: 15\n  repositories: 20\n  tasks_per_repository: 20\n"
        "  invariants_per_repository: 50\n  history_length: 25\n  stale: 0.25\n  adversarial: 0.15\n"
        "  abandoned: 0.15\n"
    )
    scenarios, problems = read_file(file)
    assert problems == []
    assert len(scenarios) == 20
