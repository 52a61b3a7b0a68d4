"""The files of a Harbor task, as text: its configuration, each step's instruction, the
environment's and each verifier's image, the step's setup hook, test script and solution.

Nothing here reads grading data: an instruction is what memstore shows an agent (`TaskView`'s
parts), the memories are what the store handed, and the grading document comes ready-made from
the grading stage (`memstore.harness.grading.expected_outcome`), to be written in ``tests/`` only.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

import tomli_w

from memstore import __version__
from memstore.harness.scenarios import Scenario, Task
from memstore.model import Memory, Surface

__all__ = [
    "APP",
    "IMAGE",
    "MEMORY",
    "OUT",
    "StepFiles",
    "agent_dockerfile",
    "instruction",
    "memory_json",
    "memory_markdown",
    "setup_script",
    "solution_script",
    "task_toml",
    "test_script",
    "verifier_dockerfile",
]

APP = "/app"  # the repository, the agent's working directory
MEMORY = "/memstore/memory"  # what the store handed each step, and the agent's notes
OUT = "/memstore/out"  # each step's reports (an answer, findings), one folder per step
IMAGE = "python:3.12-slim"  # the agent's and the verifier's base image: Python for the checks, git added
AGENT_USER = "agent"
STEP_TIMEOUT = 600.0  # seconds an agent may work on one step (memstore's default agent timeout)
BASE_TAG = "memstore/before/{step}"  # the commit a step began at: what it changed is read from there
_GIT = "apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*"


@dataclass(frozen=True)
class StepFiles:
    """One step of a task: its name (a folder under ``steps/``) and the memstore task it plays."""

    name: str
    task: Task
    handed: tuple[Memory, ...]


def task_toml(scenario: Scenario, steps: list[StepFiles]) -> str:
    """``task.toml``: a multi-step task, one step per session, each graded in a container of its own
    (the verifier never shares the agent's), its repository and reports carried there as artifacts."""
    config: dict[str, Any] = {
        "schema_version": "1.4",
        "multi_step_reward_strategy": "mean",
        "artifacts": [APP, OUT],
        "task": {
            "name": f"memstore/{scenario.name}",
            "version": "1.0.0",
            "description": " ".join(scenario.description.split()),
            "keywords": ["memstore", "memory", scenario.kind],
        },
        "steps": [{"name": step.name} for step in steps],
        "metadata": {
            "memstore": {
                "version": __version__,
                "scenario": scenario.name,
                "kind": scenario.kind,
                "repo": scenario.repo,
                "tasks": [step.task.key for step in steps],
            }
        },
        "verifier": {"timeout_sec": 600.0, "environment_mode": "separate"},
        "agent": {"timeout_sec": STEP_TIMEOUT, "user": AGENT_USER},
        "environment": {"build_timeout_sec": 900.0},
    }
    return tomli_w.dumps(config)


def _memories(count: int) -> str:
    return "1 memory" if count == 1 else f"{count} memories"


def _memory_text(memory: Memory) -> str:
    cited = ", ".join(str(c) for c in memory.citations) or "nothing"
    lines = [f"## {memory.subject.strip()}", "", memory.fact.strip(), ""]
    if memory.reason.strip():
        lines += [f"Why: {memory.reason.strip()}", ""]
    learned = memory.surface.value.replace("_", " ")
    lines += [
        f"- id `{memory.id}`: a {memory.kind.value}, stored from {learned} by {memory.author} on "
        f"{memory.created_at.date().isoformat()}",
        f"- cites {cited}",
        "",
    ]
    return "\n".join(lines)


def memory_markdown(step: StepFiles) -> str:
    """The memories handed to ``step``, as a page to read (newest first, as the store returned them)."""
    head = f"# Memories for {step.task.key}\n\n{_memories(len(step.handed))}, newest first.\n\n"
    return head + "\n".join(_memory_text(m) for m in step.handed)


def memory_json(step: StepFiles) -> str:
    """The memories handed to ``step``, as memstore hands them to an out-of-process agent."""
    return json.dumps([m.to_dict() for m in step.handed], indent=2, sort_keys=True) + "\n"


def _surface_text(scenario: Scenario, step: StepFiles, changed: tuple[str, ...]) -> list[str]:
    task, out = step.task, f"{OUT}/{step.name}"
    if task.surface is Surface.CODING_AGENT:
        return [
            f"Make the change in the repository at {APP}, on its checked-out branch `main`; keep every place",
            "that must agree in agreement, and change nothing else. Committing is up to you: the change is",
            "read off the working tree once you finish.",
        ]
    if task.surface is Surface.CODE_REVIEW:
        pr = task.pull_request
        assert pr is not None  # a review task names its pull request (the loader checks)
        return [
            f"Review the pull request **{pr.title or task.prompt}** (branch `{pr.branch}` into `{pr.base}`).",
            *([pr.description] if pr.description else []),
            f"Changed files: {', '.join(f'`{path}`' for path in changed) or '(none)'}. Its diff:",
            f"`git -C {APP} diff {pr.base}...{pr.branch}`. Do not edit files.",
            "",
            f"Report each file the pull request gets wrong in `{out}/findings.json`, a JSON list of",
            '`{"path": "PATH", "note": "WHY"}` (paths relative to the repository); write `[]` when it is right.',
        ]
    return [
        f"Question: {task.question or task.prompt}",
        "",
        f"Do not edit files. Write your answer, as short as the question allows, to `{out}/answer.txt`.",
    ]


def instruction(scenario: Scenario, step: StepFiles, changed: tuple[str, ...]) -> str:
    """``instruction.md`` of a step: what memstore shows an agent for the task (its prompt, ticket,
    pull request or question), where its memories are, and where its reports go."""
    task = step.task
    lines = [f"# {task.prompt}", "", f"You are working in the git repository {scenario.repo} for {task.user}.", ""]
    if task.intent is not None:
        lines += [f"Ticket: {task.intent.describe()}.", ""]
    lines += _surface_text(scenario, step, changed)
    lines += [
        "",
        "## Memory",
        "",
        f"The team's memory store returned {_memories(len(step.handed))} for this task, stored earlier by people",
        f"and agents working on this repository: `{MEMORY}/{step.name}.md` (the same as JSON:",
        f"`{MEMORY}/{step.name}.json`). `{MEMORY}/notes.md` is yours: what you write there stays for the",
        "later tasks of this scenario.",
        "",
    ]
    return "\n".join(lines)


def agent_dockerfile(scenario: Scenario, steps: list[StepFiles], image: str = IMAGE) -> str:
    """The agent's image: the scenario's repository (every branch and tag) at `APP`, the memories
    handed to each step under `MEMORY`, a folder per step for its reports; owned by the agent's user."""
    outs = " ".join(shlex.quote(f"{OUT}/{step.name}") for step in steps)
    return "\n".join(
        [
            f"# memstore {__version__}: the world of the scenario {scenario.name} (repository {scenario.repo}).",
            f"FROM {image}",
            f"RUN {_GIT}",
            f"RUN useradd --create-home --shell /bin/bash {AGENT_USER} \\",
            f" && git config --system user.name {AGENT_USER} \\",
            f" && git config --system user.email {AGENT_USER}@example.com",
            "COPY repo.bundle /tmp/repo.bundle",
            f"RUN git init -q -b main {APP} \\",
            f" && git -C {APP} fetch -q --update-head-ok /tmp/repo.bundle 'refs/*:refs/*' \\",
            f" && git -C {APP} checkout -q -f main && rm /tmp/repo.bundle",
            f"COPY memory/ {MEMORY}/",
            f"RUN touch {MEMORY}/notes.md && mkdir -p {outs} \\",
            f" && chown -R {AGENT_USER}:{AGENT_USER} {APP} /memstore",
            f"WORKDIR {APP}",
            "",
        ]
    )


def verifier_dockerfile(regex_pin: str, image: str = IMAGE) -> str:
    """A step's verifier image: Python, git and the pattern library memstore grades with; the
    step's tests (the grader, its document, the test script) baked in at ``/tests``."""
    return "\n".join(
        [
            f"FROM {image}",
            f"RUN {_GIT}",
            f"RUN pip install --no-cache-dir {regex_pin}",
            f"WORKDIR {APP}",
            "COPY . /tests/",
            "",
        ]
    )


def setup_script(step: StepFiles) -> str:
    """The step's setup hook (run in `APP` before the agent starts): what earlier steps left is
    committed, ``main`` checked out, and the commit tagged as where this step began."""
    tag = BASE_TAG.format(step=step.name)
    return "\n".join(
        [
            "#!/bin/bash",
            f"# memstore: where step {step.name} begins; the grader reads what the step changed from {tag}.",
            "set -euo pipefail",
            'rm -f -- "$0"',
            f"cd {APP}",
            "git add -A",
            "if ! git diff --cached --quiet; then",
            f'  git commit -q -m "memstore: the work before step {step.name}"',
            "fi",
            "git checkout -q main",
            f"git tag -f {tag} >/dev/null",
            "",
        ]
    )


def test_script(step: StepFiles) -> str:
    """The step's test script: the portable grader on what the agent left, writing the reward."""
    argv = [
        "python3", "/tests/grade.py", "--expected", "/tests/expected.json", "--repo", APP,
        "--outputs", f"{OUT}/{step.name}", "--base", BASE_TAG.format(step=step.name), "--verifier", "/logs/verifier",
    ]  # fmt: skip
    return f"#!/bin/bash\n# memstore: grade step {step.name} as memstore grades the session.\n{shlex.join(argv)}\n"


def solution_script(step: StepFiles, expected: dict[str, Any]) -> str | None:
    """A reference solution for the oracle agent, where one follows from the grading data: a
    question's answer, a review's findings. None for a change (a merge check is not a patch)."""
    out = f"{OUT}/{step.name}"
    if step.task.surface is Surface.CODE_REVIEW:
        findings = json.dumps([{"path": path, "note": "reference finding"} for path in expected["findings"]])
        body = f"printf '%s\\n' {shlex.quote(findings)} > {out}/findings.json"
    elif step.task.surface is Surface.CLI and expected["answer_at"] is None:
        body = f"printf '%s\\n' {shlex.quote(expected['answer'])} > {out}/answer.txt"
    elif step.task.surface is Surface.CLI:
        where = expected["answer_at"]
        program = (
            "import re, sys; found = re.search(sys.argv[1], open(sys.argv[2]).read()); "
            "print(found.group(1) if found else '')"
        )
        reading = shlex.join(["python3", "-c", program, where["pattern"], f"{APP}/{where['path']}"])
        body = f"{reading} > {out}/answer.txt"
    else:
        return None
    return f"#!/bin/bash\n# memstore: the reference outcome of step {step.name}.\n{body}\n"
