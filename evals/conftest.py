"""The evaluation suite of this repository: the gates the pytest plugin ships, one test per gate
(`memstore.harness.report.suite`), on a seeded sample of the default library, gated against the
committed sample baseline (reports/sample-baseline).

The sample is ``memstore eval --quick``'s: the hand-written and mined scenarios whole and a
seeded, stratified slice of the generated population, 120 tasks in about half a minute. It
decides every gate but the regression gates (evals/test_regression.py holds it to that); on 120
tasks a few of those stay inconclusive, skipped with the reason, unless a run is significantly
worse. The hand-written library kills every store mutant through the contract gate of the
promise it breaks (tests/testing/test_mutants.py), so a broken store fails here too.

The whole library (2,044 tasks, minutes) is not run here: ``.ci/run`` runs it with
``memstore eval --baseline reports/baseline`` and holds it to reports/baseline byte for byte
(evals/check_baseline.py). Options given on the command line win: ``--memstore-scenarios`` or
``--memstore-sample`` run what they name, ``--memstore-baseline`` gates against what it names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.harness.pytest_plugin import enable_gates
from memstore.harness.scenarios.sample import QUICK

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = QUICK  # tasks; seed 0 (the plugin's default)
SAMPLE_BASELINE = ROOT / "reports" / "sample-baseline"


def pytest_configure(config: pytest.Config) -> None:
    enable_gates(config)
    if config.getoption("--memstore-scenarios") or config.getoption("--memstore-sample"):
        return
    config.option.memstore_sample = SAMPLE
    if config.getoption("--memstore-baseline") == Path("reports/baseline"):  # the plugin's default
        config.option.memstore_baseline = SAMPLE_BASELINE
