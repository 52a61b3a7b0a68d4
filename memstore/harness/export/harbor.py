"""Scenarios as Harbor tasks (``memstore export harbor``): each scenario one multi-step task.

Harbor (the ``harbor`` package) runs agents on task folders. A scenario becomes one task whose
steps are its sessions, in order::

    NAME/
      task.toml                       the steps; each verified in a container of its own; reward: their mean
      README.md                       what the task is, for people
      environment/Dockerfile          the agent's image: the repository at /app, the memories under /memstore
      environment/repo.bundle         the scenario's repository, every branch and tag
      environment/memory/STEP.md      what the store hands each step (and STEP.json, as memstore hands it)
      steps/STEP/instruction.md       the task as memstore shows it to an agent
      steps/STEP/workdir/setup.sh     the setup hook: earlier work committed, main checked out, the start tagged
      steps/STEP/tests/               the verifier's image, test.sh, the portable grader and its grading data
      steps/STEP/solution/solve.sh    a reference outcome, where the grading data gives one (answers, findings)

What a step is handed is what memstore's reference store (``memory:``) hands that session in a
trial where no agent writes: the seeded memories at their ages, each user's access, scope and
expiry applied, newest first. Grading data stays in ``tests/``, which Harbor copies into the
verifier's container only, after the agent's session: the instruction, the environment and its
image carry none (tests/harness/export/test_harbor.py looks).

Nothing is half-written: every task is made in a staging folder inside OUT, and renamed into
place only once all of them are made.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from memstore.access import Actor
from memstore.errors import ConfigurationError
from memstore.harness.export import harbor_files as files
from memstore.harness.export.harbor_files import StepFiles
from memstore.harness.grading import expected_outcome, portable_grader
from memstore.harness.scenarios import Scenario
from memstore.harness.trees import scratch_folder
from memstore.harness.world import Template, build_template
from memstore.ids import UlidIds
from memstore.model import Surface
from memstore.store import open_store
from memstore.verify import Workspace, remove_tree

__all__ = ["HANDED_LIMIT", "export_harbor", "step_name"]

HANDED_LIMIT = 50  # memories handed to a session at most (`memstore eval`'s default --limit)


def step_name(index: int, key: str) -> str:
    """A step's folder name: its place in the scenario and its task's key (``01-bump-version``)."""
    return f"{index + 1:02d}-{re.sub(r'[^A-Za-z0-9._-]+', '_', key).strip('._')[:80] or 'task'}"


def export_harbor(
    scenarios: Sequence[Scenario], out: Path, *, overwrite: bool = False, image: str = files.IMAGE, seed: int = 0
) -> list[Path]:
    """Write each scenario as a Harbor task folder ``OUT/NAME``; the folders written.

    ``image`` is the base image of the agent's and the verifiers' containers (a tag, or pinned
    with ``@sha256:``); ``seed`` seeds the handed memories' ids.

    Raises:
        ConfigurationError: no scenarios, two of one name, an image that is not one, ``out`` not a
            folder, or a task folder that is there already (without ``overwrite``); nothing is written then.
        BuildError, RepositoryError: a scenario that cannot be built (nothing is written).
    """
    _check_request(scenarios, out, overwrite=overwrite, image=image)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".memstore-export-"))
    try:
        for scenario in scenarios:
            _write_task(scenario, staging / scenario.name, image, seed)
    except BaseException:
        remove_tree(staging)
        if made:
            out.rmdir()  # a folder made for the export goes with it: nothing is left of a failed one
        raise
    targets = [out / scenario.name for scenario in scenarios]
    try:
        for target in targets:
            if target.is_dir() and not target.is_symlink():
                remove_tree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            (staging / target.name).rename(target)
    finally:
        remove_tree(staging)
    return targets


def _check_request(scenarios: Sequence[Scenario], out: Path, *, overwrite: bool, image: str) -> None:
    """Refuse, before anything is written, an export that cannot be made as asked (`export_harbor`)."""
    if not scenarios:
        raise ConfigurationError("there are no scenarios to export")
    names = [s.name for s in scenarios]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigurationError(f"two scenarios are named {', '.join(twice)}: a task folder is named by its scenario")
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/:@-]*", image) is None:
        raise ConfigurationError(f"{image[:80]!r} is not an image name (such as python:3.12-slim, or one @sha256:...)")
    if out.exists() and not out.is_dir():
        raise ConfigurationError(f"{out} is not a folder")
    there = [name for name in names if (out / name).exists() or (out / name).is_symlink()]
    if there and not overwrite:
        raise ConfigurationError(f"{out} holds {', '.join(there)} already; pass --overwrite to replace them")


def _handed(template: Template, where: Path, seed: int) -> list[StepFiles]:
    """Each session's step: what the reference store hands it when the session begins."""
    scenario = template.scenario
    ids = UlidIds(f"{seed}|{scenario.name}|harbor")
    world = template.instantiate(
        where, lambda access, clock: open_store("memory:", access=access, clock=clock, ids=ids)
    )
    steps = []
    for index, task in enumerate(scenario.tasks):
        world.clock.advance(task.after)
        handed = world.store.recent(scenario.repo, actor=Actor(task.user), surface=task.surface, limit=HANDED_LIMIT)
        steps.append(StepFiles(step_name(index, task.key), task, tuple(handed)))
    return steps


def _write(path: Path, text: str, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755 if executable else 0o644)


def _write_task(scenario: Scenario, folder: Path, image: str, seed: int) -> None:
    """One scenario's task folder at ``folder``, built in a scratch folder of its own."""
    with scratch_folder("memstore-export-") as scratch:
        template = build_template(scenario, scratch / "repo")
        try:
            steps = _handed(template, scratch / "world", seed)
            environment = folder / "environment"
            environment.mkdir(parents=True)
            bundle = (environment / "repo.bundle").resolve()
            template.repo.run("-c", "pack.threads=1", "bundle", "create", "-q", str(bundle), "--all")
            bundle.chmod(0o644)
            changed = _changed_files(template, steps)
        finally:
            template.repo.close()
    _write(environment / "Dockerfile", files.agent_dockerfile(scenario, steps, image))
    for step in steps:
        _write(environment / "memory" / f"{step.name}.md", files.memory_markdown(step))
        _write(environment / "memory" / f"{step.name}.json", files.memory_json(step))
        _write_step(scenario, folder / "steps" / step.name, step, changed.get(step.name, ()), image)
    _write(folder / "task.toml", files.task_toml(scenario, steps))
    _write(folder / "README.md", _readme(scenario, steps))


def _changed_files(template: Template, steps: list[StepFiles]) -> dict[str, tuple[str, ...]]:
    """The files each review step's pull request changes (as memstore's task view lists them)."""
    found: dict[str, tuple[str, ...]] = {}
    workspace = Workspace(template.path, copied_from=template.repo)
    try:
        for step in steps:
            pr = step.task.pull_request
            if step.task.surface is Surface.CODE_REVIEW and pr is not None:
                found[step.name] = tuple(workspace.changed(pr.base, pr.branch))
    finally:
        workspace.close()
    return found


def _write_step(scenario: Scenario, folder: Path, step: StepFiles, changed: tuple[str, ...], image: str) -> None:
    expected = expected_outcome(step.task)
    _write(folder / "instruction.md", files.instruction(scenario, step, changed))
    _write(folder / "workdir" / "setup.sh", files.setup_script(step), executable=True)
    tests = folder / "tests"
    _write(tests / "Dockerfile", files.verifier_dockerfile(f"regex=={importlib.metadata.version('regex')}", image))
    _write(tests / "test.sh", files.test_script(step), executable=True)
    _write(tests / "grade.py", portable_grader())
    _write(tests / "expected.json", _json(expected))
    solution = files.solution_script(step, expected)
    if solution is not None:
        _write(folder / "solution" / "solve.sh", solution, executable=True)


def _json(document: dict[str, object]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _readme(scenario: Scenario, steps: list[StepFiles]) -> str:
    listed = "\n".join(f"{n}. `{s.name}`: {s.task.surface.value.replace('_', ' ')}" for n, s in enumerate(steps, 1))
    return (
        f"# memstore/{scenario.name}\n\n{' '.join(scenario.description.split())}\n\n"
        f"A memstore scenario ({scenario.kind}) as a Harbor task: one step per session, in order.\n\n{listed}\n\n"
        "Each step's reward is 1 when the session went right as memstore grades it (the change passes its\n"
        "merge check, the answer is right, the findings are the expected ones), else 0; the task's reward is\n"
        "their mean. Made by `memstore export harbor`; see memstore's docs/harbor.md.\n"
    )
