"""Helpers for harness tests: load library scenarios and run them."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode
from memstore.harness.run.runner.pool import Arm, RunConfig, RunOutput, run
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file
from memstore.harness.scenarios.scenario import Scenario


def scenario(name: str) -> Scenario:
    (found,) = load_file(scenarios_dir() / f"{name}.yaml")
    return found


def run_arms(names: list[str], arms: list[Arm], **options: object) -> RunOutput:
    config = RunConfig(scenarios=tuple(scenario(n) for n in names), arms=tuple(arms), **options)  # type: ignore[arg-type]
    return run(config, grading=TrialGrading)


@pytest.fixture
def sessions_of() -> Callable[[RunOutput], pd.DataFrame]:
    return lambda output: pd.DataFrame(output.sessions)


UNBOXED = AgentRuntime(sandbox=SandboxMode.OFF)  # the fallback, for tests of its own defences


@pytest.fixture
def fake_home() -> Iterator[Path]:
    """A home folder outside the temporary directory (which the sandbox hides anyway)."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.cwd()
    home = Path(tempfile.mkdtemp(prefix="memstore-test-home-", dir=base))
    (home / ".gitconfig").write_text("[user]\n\tname = secret\n")
    (home / ".config").mkdir()
    (home / ".config" / "token").write_text("secret-token\n")
    yield home

    shutil.rmtree(home, ignore_errors=True)
