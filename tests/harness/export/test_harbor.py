"""`memstore export harbor`: scenarios as Harbor tasks. Each folder is loaded by Harbor's own task
models and passes its linter (Harbor in its own environment: tests/harbor_env.py); nothing of the
grading data reaches what an agent reads; and each step's grader, run here on a working copy made
as the task's image makes it, gives 1 for the outcome memstore calls right and 0 otherwise."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.errors import ConfigurationError, MemstoreError
from memstore.harness.export import export_harbor
from memstore.harness.scenarios import Location, Scenario, load_file
from memstore.harness.scenarios.scenario import Check, Claim, Finding
from tests.harbor_env import harbor_python, run_harbor

ROOT = Path(__file__).parents[3]
SCENARIOS = ["api-version-moved", "cross-agent-logging", "db-pool-contradicted"]
DIGEST = "python:3.12-slim@sha256:" + "0" * 64  # a pinned image, as --image takes one (never pulled here)

VALIDATE = """
import json, sys, warnings
from pathlib import Path
from harbor.lint import lint_task
from harbor.lint.models import DEFAULT_RULES
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_step_verifier_mode

found = {}
for folder in sys.argv[1:]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated field is a finding too
        task = Task(folder)
    steps = task.config.steps or []
    found[Path(folder).name] = {
        "name": task.name,
        "steps": [step.name for step in steps],
        "instructions": [bool(task.step_instruction(step.name).strip()) for step in steps],
        "modes": sorted({resolve_step_verifier_mode(task.config, step).value for step in steps}),
        "strategy": task.config.multi_step_reward_strategy.value,
        "valid": Task.is_valid_dir(folder),
        "default": [f.model_dump(mode="json") for f in lint_task(Path(folder), selected_rules=set(DEFAULT_RULES))],
        "all": sorted({f.rule.value for f in lint_task(Path(folder))}),
    }
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor")
    scenarios = [ROOT / "scenarios" / f"{name}.yaml" for name in SCENARIOS]
    result = CliRunner().invoke(main, ["export", "harbor", *map(str, scenarios), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"3 Harbor task(s), 6 step(s), in {out}" in result.output
    return out


def test_harbor_loads_every_task_and_its_linter_finds_nothing(exported: Path) -> None:
    found = run_harbor(VALIDATE, *(str(exported / name) for name in SCENARIOS))
    assert found["cross-agent-logging"]["steps"] == ["01-review-retention", "02-set-retention", "03-ask-retention"]
    for name in SCENARIOS:
        task = found[name]
        assert task["name"] == f"memstore/{name}"
        assert task["valid"] is True
        assert all(task["instructions"])
        assert task["modes"] == ["separate"]  # the verifier never shares the agent's container
        assert task["strategy"] == "mean"
        assert task["default"] == []
        assert task["all"] == ["unpinned-image"]  # every rule but the one the default image cannot meet


def test_with_a_pinned_image_every_rule_of_the_linter_passes(tmp_path: Path) -> None:
    scenarios = load_file(ROOT / "scenarios" / "api-version-moved.yaml")
    export_harbor(scenarios, tmp_path, image=DIGEST)
    found = run_harbor(VALIDATE, str(tmp_path / "api-version-moved"))
    assert found["api-version-moved"]["all"] == []
    lint = [str(harbor_python().parent / "harbor"), "lint", "--select", "ALL", str(tmp_path / "api-version-moved")]
    done = subprocess.run(lint, capture_output=True, text=True, check=False)  # Harbor's own command, too
    assert done.returncode == 0, done.stdout + done.stderr


def _canaried(scenario: Scenario) -> Scenario:
    """``scenario`` with every grading field a canary: the checks, findings, answers, needs and
    strata of its tasks, the keys and claims of its memories."""
    check = Check(
        equal=(Location("CANARY-equal.txt", "CANARY-(equal)"),),
        contains=(("CANARY-contains.txt", "CANARY-contains"),),
        absent=(("CANARY-absent.txt", "CANARY-absent"),),
        unchanged=("CANARY-unchanged.txt",),
        command=("CANARY-command",),
    )
    tasks = tuple(
        dataclasses.replace(
            task,
            needs=(f"CANARY-need-{n}",),
            check=check,
            findings=(Finding(f"CANARY-finding-{n}.txt", None, "CANARY-note"),),
            answer=f"CANARY-answer-{n}",
            answer_at=Location("CANARY-at.txt", "CANARY-(at)") if n % 2 else None,
            stratum="CANARY-stratum",
        )
        for n, task in enumerate(scenario.tasks)
    )
    claim = Claim(states="CANARY-states", points_to=("CANARY-points.txt",), skips=("CANARY-skips.txt",))
    memories = tuple(
        dataclasses.replace(m, key=f"canary-key-{n}", claim=claim) for n, m in enumerate(scenario.memories)
    )
    return dataclasses.replace(scenario, tasks=tasks, memories=memories)


def _agent_visible(task: Path) -> list[Path]:
    """What an agent can read: the instructions, the environment (its image), the setup hooks."""
    return sorted(
        p
        for p in task.rglob("*")
        if p.is_file() and not {"tests", "solution"} & set(p.relative_to(task).parts) and p.name != "task.toml"
    )


def test_no_grading_data_reaches_what_an_agent_reads(tmp_path: Path) -> None:
    scenarios = [_canaried(s) for name in SCENARIOS for s in load_file(ROOT / "scenarios" / f"{name}.yaml")]
    export_harbor(scenarios, tmp_path)
    for scenario in scenarios:
        task = tmp_path / scenario.name
        visible = _agent_visible(task)
        assert {p.relative_to(task).as_posix() for p in visible} >= {"environment/Dockerfile", "README.md"}
        for path in [*visible, task / "task.toml"]:
            assert b"CANARY" not in path.read_bytes(), path
            assert b"canary-key" not in path.read_bytes(), path
        for memories in (task / "environment" / "memory").glob("*.json"):
            for memory in json.loads(memories.read_text()):
                assert set(memory) == {
                    "author", "citations", "created_at", "fact", "id", "kind", "reason", "refreshed_at", "repo",
                    "retired_reason", "status", "subject", "supersedes", "surface",
                }  # fmt: skip
        graded = [json.loads(p.read_text()) for p in sorted(task.glob("steps/*/tests/expected.json"))]
        assert len(graded) == len(scenario.tasks)
        assert all("CANARY" in json.dumps(document) for document in graded)  # the grading data is there, in tests/


def test_the_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    scenarios = load_file(ROOT / "scenarios" / "cross-agent-logging.yaml")
    export_harbor(scenarios, tmp_path / "a", seed=3)
    export_harbor(scenarios, tmp_path / "b", seed=3)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_bad_requests_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    scenarios = load_file(ROOT / "scenarios" / "api-version-moved.yaml")
    with pytest.raises(ConfigurationError, match="no scenarios"):
        export_harbor([], tmp_path)
    with pytest.raises(ConfigurationError, match="two scenarios are named api-version-moved"):
        export_harbor([*scenarios, *scenarios], tmp_path)
    with pytest.raises(ConfigurationError, match="not an image name"):
        export_harbor(scenarios, tmp_path, image="python\nRUN curl x")
    assert list(tmp_path.iterdir()) == []
    export_harbor(scenarios, tmp_path)
    with pytest.raises(ConfigurationError, match="pass --overwrite"):
        export_harbor(scenarios, tmp_path)
    broken = dataclasses.replace(scenarios[0], name="broken", evaluate_at="no-such-ref")
    with pytest.raises(MemstoreError, match="no-such-ref"):
        export_harbor([scenarios[0], broken], tmp_path, overwrite=True)
    with pytest.raises(MemstoreError, match="no-such-ref"):
        export_harbor([broken], tmp_path / "new")
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api-version-moved"]  # no staging folder left, no half task
    result = CliRunner().invoke(main, ["export", "harbor", str(ROOT / "scenarios" / "api-version-moved.yaml"),
                                       "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2
    assert "pass --overwrite" in result.output


# -- the graders, on a working copy made as the task's image makes it ------------------------------


class Trial:
    """One task played here: its repository as the image builds it, each step's setup hook, its
    reports, and its step's test script run with the container's paths mapped to local ones."""

    def __init__(self, task: Path, root: Path) -> None:
        self.task, self.app, self.out = task, root / "app", root / "out"
        bundle = task / "environment" / "repo.bundle"
        for argv in (
            ["init", "-q", "-b", "main", str(self.app)],
            ["-C", str(self.app), "fetch", "-q", "--update-head-ok", str(bundle), "refs/*:refs/*"],
            ["-C", str(self.app), "checkout", "-q", "-f", "main"],
            ["-C", str(self.app), "config", "user.name", "agent"],
            ["-C", str(self.app), "config", "user.email", "agent@example.com"],
        ):
            subprocess.run(["git", *argv], check=True, capture_output=True)

    def begin(self, step: str) -> Path:
        """Run the step's setup hook; the folder its reports go in."""
        hook = self.task / "steps" / step / "workdir" / "setup.sh"
        copy = self.app / "setup.sh"
        copy.write_text(hook.read_text().replace("cd /app\n", f"cd {shlex.quote(str(self.app))}\n"))
        subprocess.run(["bash", str(copy)], check=True, capture_output=True, cwd=self.app)
        assert not copy.exists()  # the hook leaves nothing of itself in the repository
        (self.out / step).mkdir(parents=True, exist_ok=True)
        return self.out / step

    def reward(self, step: str) -> float:
        """The step's test script, run as the verifier runs it; the reward it wrote."""
        tests = self.task / "steps" / step / "tests"
        argv = shlex.split((tests / "test.sh").read_text().splitlines()[-1])
        verifier = self.out.parent / "verifier" / step
        mapped = {"/app": str(self.app), f"/memstore/out/{step}": str(self.out / step), "/logs/verifier": str(verifier)}
        argv = [mapped.get(a, str(tests / a.removeprefix("/tests/")) if a.startswith("/tests/") else a) for a in argv]
        done = subprocess.run([sys.executable if argv[0] == "python3" else argv[0], *argv[1:]], capture_output=True,
                              text=True, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return float((verifier / "reward.txt").read_text())

    def edit(self, path: str, old: str, new: str) -> None:
        target = self.app / path
        assert old in target.read_text()
        target.write_text(target.read_text().replace(old, new))


def test_the_graders_of_a_three_step_task_give_one_to_right_and_zero_to_wrong(exported: Path, tmp_path: Path) -> None:
    right = Trial(exported / "cross-agent-logging", tmp_path / "right")
    wrong = Trial(exported / "cross-agent-logging", tmp_path / "wrong")
    review, change, question = "01-review-retention", "02-set-retention", "03-ask-retention"
    (right.begin(review) / "findings.json").write_text('[{"path": "docs/operations.md", "note": "states 14d"}]')
    (wrong.begin(review) / "findings.json").write_text('["docs/operations.md", "README.md"]')  # one too many
    assert (right.reward(review), wrong.reward(review)) == (1.0, 0.0)
    right.begin(change)
    wrong.begin(change)
    right.edit("src/logger.js", 'maxFiles: "14d"', 'maxFiles: "45d"')
    right.edit("docs/operations.md", "Log files kept: 14d", "Log files kept: 45d")
    wrong.edit("src/logger.js", 'maxFiles: "14d"', 'maxFiles: "45d"')  # the guide left behind
    assert (right.reward(change), wrong.reward(change)) == (1.0, 0.0)
    (right.begin(question) / "answer.txt").write_text("45 days\n")  # read off the code as the step left it
    (wrong.begin(question) / "answer.txt").write_text("45 days, it was 14d\n")  # two values: it does not say which
    assert (right.reward(question), wrong.reward(question)) == (1.0, 0.0)


def test_a_change_that_is_right_merges_and_one_that_touches_too_little_or_nothing_does_not(
    exported: Path, tmp_path: Path
) -> None:
    task, step = exported / "api-version-moved", "01-bump-version"
    right, partial, idle = (Trial(task, tmp_path / n) for n in ("right", "partial", "idle"))
    for trial in (right, partial, idle):
        trial.begin(step)
    for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
        right.edit(path, "v2.1.4", "v2.2.0")
    partial.edit("src/client/sdk/constants.ts", "v2.1.4", "v2.2.0")
    assert [t.reward(step) for t in (right, partial, idle)] == [1.0, 0.0, 0.0]


def test_the_reference_solutions_earn_their_steps(exported: Path, tmp_path: Path) -> None:
    trial = Trial(exported / "db-pool-contradicted", tmp_path / "oracle")
    step = "01-pool-capacity"
    trial.begin(step)
    solve = (exported / "db-pool-contradicted" / "steps" / step / "solution" / "solve.sh").read_text()
    subprocess.run(["bash", "-c", solve.replace("/memstore/out", str(trial.out))], check=True)
    assert (trial.out / step / "answer.txt").read_text() == "20\n"
    assert trial.reward(step) == 1.0
    assert not (
        exported / "db-pool-contradicted" / "steps" / "02-fix-invoices" / "solution"
    ).exists()  # a change has none
