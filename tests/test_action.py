"""The GitHub Action (``action.yml``), its steps run here as a runner runs them.

A composite action's ``run`` steps are bash scripts that read their inputs from the environment;
this runs them in order with ``bash``, with ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` files
and each ``${{ ... }}`` of a step's ``env`` worked out as the runner would. The steps that use
other actions (setup-python, upload-artifact) need GitHub's runner and are checked as declared;
the install step runs with a stand-in ``python`` that records what pip was asked to install
(memstore is installed here).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from memstore.harness.scenarios.data import scenarios_dir

ROOT = Path(__file__).resolve().parents[1]
LEAK = str(scenarios_dir() / "other-repo-no-leak.yaml")
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _action() -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return found


def _run(inputs: dict[str, str], folder: Path) -> tuple[list[int], str]:
    """Each run step of the action but the install, in order, as a runner runs them: the exit
    status of each and the job summary they wrote."""
    action = _action()
    given = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in action["inputs"].items()}
    outputs: dict[str, dict[str, str]] = {}
    summary, statuses = folder / "summary.md", list[int]()

    def value(expression: str) -> str:
        kind, _, rest = expression.partition(".")
        if kind == "inputs":
            return given[rest]
        if kind == "github" and rest == "action_path":
            return str(ROOT)
        step, _, name = rest.partition(".outputs.")
        return outputs.get(step, {}).get(name, "")

    for step in action["runs"]["steps"]:
        if "run" not in step or step.get("id") == "install":
            continue
        output = folder / f"output-{len(statuses)}"
        output.write_text("")
        env = {**os.environ, "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        env |= {k: _EXPRESSION.sub(lambda m: value(m.group(1)), str(v)) for k, v in step.get("env", {}).items()}
        done = subprocess.run(["bash", "-c", step["run"]], cwd=folder, env=env, check=False, timeout=300)
        statuses.append(done.returncode)
        pairs = (line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        outputs[step.get("id", "")] = dict(pairs)
    return statuses, summary.read_text(encoding="utf-8") if summary.exists() else ""


def test_the_action_installs_uploads_and_passes_inputs_through_the_environment_only() -> None:
    action = _action()
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    assert [s.get("uses", "").split("@")[0] for s in steps if "uses" in s] == [
        "actions/setup-python",
        "actions/upload-artifact",
    ]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"].startswith("always()")  # a failed run's folder is uploaded too
    for step in steps:  # an input spliced into a script could run as code: none is
        assert "${{" not in step.get("run", "")


@pytest.mark.slow
def test_an_undecided_run_fails_the_job_unless_accepted_and_the_summary_is_the_report(tmp_path: Path) -> None:
    inputs = {"scenarios": LEAK, "agents": "jit-verify", "out": "run"}
    statuses, summary = _run(inputs, tmp_path)
    assert statuses == [0, 3]  # the eval step records the status; the last step exits with it
    assert summary == (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert summary.startswith("# memstore eval")
    assert "UNDECIDED" in summary
    statuses, _ = _run({**inputs, "accept-undecided": "true", "out": "again"}, tmp_path)
    assert statuses == [0, 0]


@pytest.mark.slow
def test_a_broken_store_fails_the_job_whatever_is_accepted(tmp_path: Path) -> None:
    inputs = {
        "scenarios": LEAK,
        "stores": "sqlite:\nmutant:other-repositories:sqlite:",
        "agents": "jit-verify",
        "accept-undecided": "true",
    }
    statuses, summary = _run(inputs, tmp_path)
    assert statuses == [0, 1]
    assert "FAIL" in summary
    assert "✗ jit-verify/other-repositories(sqlite)" in summary
    assert (tmp_path / "memstore-run" / "results.json").is_file()


@pytest.mark.parametrize(
    ("package", "asked"),
    [
        ("", ["-m", "pip", "install", "--quiet", f"{ROOT}[dev]"]),
        (".\nagent-memstore @ git+https://example.org/m.git\n", [
            "-m", "pip", "install", "--quiet", ".", "agent-memstore @ git+https://example.org/m.git",
        ]),
    ],
)  # fmt: skip
def test_the_install_step_installs_the_actions_checkout_or_each_requirement_given(
    tmp_path: Path, package: str, asked: list[str]
) -> None:
    """The install step, run with a stand-in ``python`` first on the PATH (a stand-in: it records its
    arguments, one a line, and installs nothing)."""
    (tmp_path / "bin").mkdir()
    stand_in = tmp_path / "bin" / "python"
    stand_in.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path / "asked"}\n')
    stand_in.chmod(0o755)
    (install,) = [s for s in _action()["runs"]["steps"] if s.get("id") == "install"]
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env |= {"MEMSTORE_PACKAGE": package, "MEMSTORE_ACTION_PATH": str(ROOT)}
    subprocess.run(["bash", "-c", install["run"]], cwd=tmp_path, env=env, check=True, timeout=60)
    assert (tmp_path / "asked").read_text().splitlines() == asked
