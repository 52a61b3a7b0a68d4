"""The logs of inspect evals of memstore's task (`tests.inspect.scripted`), written once for the tests;
skipped, saying which extra to install, without inspect-ai."""

from __future__ import annotations

from typing import Any

import pytest

from tests.extras import need
from tests.inspect.scripted import model_log


@pytest.fixture(scope="session", autouse=True)
def _inspect_ai() -> None:
    need("inspect_ai")


@pytest.fixture(scope="session")
def model_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The logs of the mock model working every session right, and wrong."""
    root = tmp_path_factory.mktemp("inspect-logs")
    return {name: model_log(root / name, right) for name, right in (("right", True), ("wrong", False))}
