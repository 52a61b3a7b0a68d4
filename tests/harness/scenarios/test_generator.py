"""Generated populations: deterministic, sized as asked, labels that hold."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from memstore import open_store
from memstore.harness.scenarios.generator import generate
from memstore.harness.scenarios.scenario import Truth
from memstore.harness.world import build_template
from memstore.verify import verify_memory

SCHEMA = Path(__file__).parents[3] / "scenarios" / "schema.json"
PARAMS = {
    "seed": 5,
    "repositories": 4,
    "tasks_per_repository": 10,
    "invariants_per_repository": 6,
    "history_length": 12,
    "stale": 0.4,
    "adversarial": 0.5,
    "abandoned": 0.3,
}


def test_population_size_and_names() -> None:
    population = generate("pop", "", PARAMS)
    assert [s.name for s in population] == ["pop-0000", "pop-0001", "pop-0002", "pop-0003"]
    assert sum(len(s.tasks) for s in population) == 40
    assert {t.surface.value for s in population for t in s.tasks} == {"coding_agent", "code_review", "cli"}


def test_same_seed_same_population() -> None:
    assert generate("pop", "", PARAMS) == generate("pop", "", PARAMS)
    assert generate("pop", "", PARAMS) != generate("pop", "", {**PARAMS, "seed": 6})


def test_coding_tasks_raise_distinct_settings_and_say_only_what_a_ticket_says() -> None:
    for scenario in generate("pop", "", PARAMS):
        coding = [t for t in scenario.tasks if t.surface.value == "coding_agent"]
        subjects = [t.intent.subject for t in coding if t.intent is not None]
        assert len(subjects) == len(coding) == len(set(subjects))
        for task in coding:
            assert task.intent is not None
            assert task.intent.action.value == "set"
            assert task.prompt == f"Raise {task.intent.subject} to {task.intent.value}."
            assert task.check.command == ("{python}", "tests/check_limits.py")  # the repository's own test


def test_the_repository_test_passes_on_main_and_fails_when_a_place_is_missed(tmp_path: Path) -> None:
    import subprocess
    import sys

    (scenario,) = generate("pop", "", {**PARAMS, "repositories": 1})
    template = build_template(scenario, tmp_path / "t")
    work = tmp_path / "w"
    subprocess.run(["git", "clone", "-q", str(template.path), str(work)], check=True)
    passed = subprocess.run([sys.executable, "tests/check_limits.py"], cwd=work, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout
    assert passed.stdout.strip() == f"{PARAMS['invariants_per_repository']} limits agree"
    config = work / "services/svc0/config.py"
    config.write_text(re.sub(r"= (\d+)", lambda m: f"= {int(m[1]) + 1}", config.read_text(), count=1))
    failed = subprocess.run([sys.executable, "tests/check_limits.py"], cwd=work, capture_output=True, text=True)
    assert failed.returncode == 1
    assert failed.stdout.startswith("RETRY_LIMIT_0: {")


def test_labels_hold_and_the_reference_verifier_mostly_agrees(tmp_path: Path) -> None:
    seen: Counter[Truth] = Counter()
    agree = 0
    for scenario in generate("pop", "", PARAMS):
        template = build_template(scenario, tmp_path / scenario.name)  # raises if a label is wrong
        world = template.instantiate(
            tmp_path / f"{scenario.name}-w", lambda a, c: open_store("memory://", access=a, clock=c)
        )
        for key, memories in world.seeded.items():
            truth = scenario.memory(key).truth
            seen[truth] += 1
            agree += verify_memory(memories[0], template.codebase()).status.usable is truth.usable
    assert set(seen) == set(Truth)
    # The labels come from the construction, never from the verifier: where it disagrees (on some
    # wordings), that is its measured error, reported by a run; it is no test's business to hide it.
    assert agree / sum(seen.values()) >= 0.9


HIDDEN = {**PARAMS, "copies": 0.8, "aliases": 0.7, "discoverable": 0.3, "decoys": 1.0, "repositories": 3}


def test_a_copy_the_repository_does_not_name_has_no_hint_and_decoys_hold_the_same_value(tmp_path: Path) -> None:
    strata: Counter[str] = Counter()
    for scenario in generate("pop", "", HIDDEN):
        codebase = build_template(scenario, tmp_path / scenario.name).codebase()
        table = "\n".join(codebase.read("tests/check_limits.py").lines)
        constants = codebase.read("web/src/constants.ts").lines[1:]
        names = re.findall(r"export const (\w+) = (\d+);", "\n".join(constants))
        assert names
        assert all(not re.search(r"\d", name) for name, _ in names)
        assert all(name not in table for name, _ in names)  # the repository's test names none of them
        values = Counter(value for _, value in names)
        assert any(n >= 2 for n in values.values())  # a hidden copy and its decoy, or two decoys, agree
        for task in scenario.tasks:
            strata[task.stratum] += 1
            if task.surface.value == "coding_agent" and task.stratum == "not discoverable":
                assert len(task.check.equal) >= 2  # every copy must agree
                assert task.check.contains[1:]  # and no decoy may change
    assert strata["not discoverable"] > 0
    assert strata["discoverable"] > 0
    assert "" not in strata


def test_memories_come_in_several_wordings_and_none_is_planted_for_the_verifier() -> None:
    facts: dict[str, set[str]] = {"value": set(), "sync": set()}
    for scenario in generate("pop", "", {**PARAMS, "repositories": 3}):
        for memory in scenario.memories:
            assert not memory.key.startswith("hard-")
            kind = memory.key.split("-")[0]
            if kind in facts:
                name = memory.subject.split()[0]
                facts[kind].add(re.sub(r"\d+", "N", memory.fact.replace(name, "NAME")))
    assert len(facts["value"]) >= 4  # "NAME is set to N.", "The service config sets NAME to N.", ...
    assert len(facts["sync"]) >= 3
    generator = json.loads(SCHEMA.read_text())["properties"]["generator"]["properties"]
    assert "hard" not in generator
    assert "stale" in generator
