"""The evaluation suite of this repository: the gates the pytest plugin ships, on the default
library (`memstore.harness.report.suite`), one test per gate, gated against reports/baseline."""

from __future__ import annotations

import pytest

from memstore.harness.pytest_plugin import enable_gates


def pytest_configure(config: pytest.Config) -> None:
    enable_gates(config)
