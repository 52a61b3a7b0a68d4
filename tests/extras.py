"""Tests of what an optional extra brings (Mem0, Ray): skipped, saying which extra and how to install
it, where it is missing; a failure where CI installs every extra (``MEMSTORE_REQUIRE_THIRD_PARTY=1``)."""

from __future__ import annotations

import importlib.util
import os

import pytest

EXTRAS = {
    "mem0": "mem0",
    "ray": "ray",
    "agentic_memory": "memcite",
    "repo_memory": "repo-memory",
    "bettermemory": "bettermemory",
    "facto": "facto",
    "opentelemetry.sdk": "otel",
    "inspect_ai": "inspect",
}  # module -> the extra that installs it


def missing(module: str) -> str | None:
    """Why ``module`` cannot be used here, or None."""
    if importlib.util.find_spec(module) is not None:
        return None
    extra = EXTRAS[module]
    return f"needs the {extra!r} extra ({module} is not installed): pip install -e '.[{extra}]' (CI installs '.[all]')"


def need(*modules: str) -> None:
    """Skip the test (fail it under ``MEMSTORE_REQUIRE_THIRD_PARTY=1``) unless every module is installed."""
    for module in modules:
        reason = missing(module)
        if reason is not None:
            if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
                pytest.fail(reason)
            pytest.skip(reason)
