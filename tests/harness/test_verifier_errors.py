"""Labels are independent of the verifier: a memory the reference verifier judges wrongly still
builds into its scenario, and the run measures the error (detection below 1, false invalidation
above 0) instead of refusing the scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.harness.analysis.run_results import Rate
from memstore.harness.evaluate import evaluate
from memstore.harness.run.runner.pool import RunConfig, iter_arms
from memstore.harness.scenarios.loader import load_file
from memstore.harness.world import check_labels

SCENARIO = """\
name: verifier-errors
description: Two memories the reference verifier gets wrong, labelled by their author.
fixture: empty
repo: acme/limits
users:
  ana: {acme/limits: admin}
  mal: {acme/limits: write}
  dev: {acme/limits: write}
history:
  - commit: Settings
    label: settings
    edits:
      - write:
          path: services/svc3/config.py
          text: "\\"\\"\\"Settings of service 3.\\"\\"\\"\\n\\nRETRY_LIMIT = 40\\n"
      - write:
          path: setup.cfg
          text: "[metadata]\\nname = limits\\n\\n[flake8]\\nmax-line-length = 99\\n"
  - commit: Move the flake8 settings into their own file
    label: flake8
    edits:
      - write:
          path: setup.cfg
          text: "[metadata]\\nname = limits\\n"
      - write:
          path: .flake8
          text: "[flake8]\\nmax-line-length = 99\\n"
memories:
  - key: every-service
    origin: adversarial
    truth: unsupported  # the line sets service 3's limit; nothing applies it to other services
    author: mal
    surface: coding_agent
    learned_at: settings
    subject: RETRY_LIMIT scope
    fact: RETRY_LIMIT = 40 caps the retries of every service, not just service 3.
    citations: [services/svc3/config.py:3]
    reason: Seen in the config.
    age: 1d
  - key: line-length
    origin: genuine
    truth: moved  # still true: the setting moved from setup.cfg into .flake8
    author: ana
    surface: coding_agent
    learned_at: settings
    subject: flake8 line length
    fact: flake8 lets lines run to 99 characters in this repository.
    citations: [setup.cfg:5]
    reason: Seen in the config.
    age: 1d
  - key: service-value
    origin: genuine
    truth: valid  # true, and the cited line is where it is kept
    author: ana
    surface: coding_agent
    learned_at: settings
    subject: RETRY_LIMIT value
    fact: RETRY_LIMIT is set to 40 for service 3.
    citations: [services/svc3/config.py:3]
    reason: Seen in the config.
    age: 1d
    claim:
      states: "40"
      at: {path: services/svc3/config.py, pattern: 'RETRY_LIMIT = (\\d+)'}
tasks:
  - key: ask
    surface: cli
    user: dev
    after: 1h
    prompt: What is RETRY_LIMIT set to?
    intent: {ask: RETRY_LIMIT}
    question: What is RETRY_LIMIT set to?
    answer: "40"
    needs: [service-value]
"""


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("verifier-errors") / "verifier-errors.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_a_scenario_whose_labels_the_verifier_disputes_builds(scenario_file: Path) -> None:
    assert check_labels(load_file(scenario_file)) == []


def test_the_run_reports_the_verifiers_miss_and_its_false_invalidation(scenario_file: Path, tmp_path: Path) -> None:
    config = RunConfig(
        scenarios=tuple(load_file(scenario_file)), arms=tuple(iter_arms(["no-memory", "jit-verify"], ["sqlite:"]))
    )
    run = evaluate(config, tmp_path / "run")
    arm = run.results.arms["jit-verify/sqlite"]
    assert arm.overall["detection_recall"] == Rate(0, 1)  # the adversarial claim passed verification
    assert arm.overall["false_invalidation_rate"] == Rate(1, 2)  # the setting that moved files was refused
    assert arm.per_group["hand-written"]["detection_recall"] == Rate(0, 1)
    report = (tmp_path / "run" / "report.md").read_text()
    # the report says so, in the group table: detection 0 of 1, false invalidation 1 of 2
    assert (
        "| jit-verify/sqlite | hand-written | 1 | 1.000 | 1.000 | +0.0 [-79.3, +79.3] | 1 | underpowered | "
        "0.000 (0/1) | 0.500 (1/2) |" in report
    )
