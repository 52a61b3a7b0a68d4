"""Helpers for verification tests: build a repository from a script."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memstore.verify.history import BuiltRepository, HistoryBuilder

Build = Callable[..., BuiltRepository]


@pytest.fixture
def build(tmp_path: Path) -> Build:
    """``build(builder, bare=False)`` writes the builder's history under tmp_path."""
    count = iter(range(100))

    def make(builder: HistoryBuilder, *, bare: bool = False) -> BuiltRepository:
        return builder.build(tmp_path / f"repo{next(count)}", bare=bare)

    return make


def braces(functions: int = 6) -> str:
    """A file full of short, repeated lines: ``}``, ``return None``, ``argument.``."""
    return "".join(f"def f{i}(argument):\n    argument.\n    return None\n}}\n" for i in range(functions))
