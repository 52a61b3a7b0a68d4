"""Where the shipped data lives (the scenario library, its schema, the fixture codebases), and
the fingerprint of a set of scenarios with the fixtures they build from.

In a checkout they are the top-level ``scenarios/`` and ``fixtures/`` folders; an installed
wheel carries copies under ``memstore/_data/``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from memstore.harness.scenarios.scenario import Scenario

__all__ = ["data_dir", "fixture_files", "fixtures_dir", "scenario_set_hash", "scenarios_dir"]

_PACKAGE = Path(__file__).resolve().parents[2]  # memstore/


def data_dir(name: str) -> Path:
    """The shipped folder ``name`` (``scenarios``, ``fixtures``, ``templates``)."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"memstore's {name}/ folder is missing from this installation")


def scenarios_dir() -> Path:
    return data_dir("scenarios")


def fixtures_dir() -> Path:
    return data_dir("fixtures")


def fixture_files(name: str) -> dict[str, bytes]:
    """Every file of ``fixtures/<name>/``, by repository-relative path."""
    root = fixtures_dir() / name
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def scenario_set_hash(scenarios: tuple[Scenario, ...]) -> str:
    """A fingerprint of the scenarios a run used: two runs compare only if these match."""
    digest = hashlib.sha256()
    fixtures = sorted({s.fixture for s in scenarios if s.files is None})
    for name in fixtures:  # a fixture's code is part of what a scenario measures
        digest.update(repr((name, sorted(fixture_files(name).items()))).encode())
    for scenario in sorted(scenarios, key=lambda s: s.name):
        digest.update(
            repr(
                (
                    scenario.name,
                    scenario.repo,
                    scenario.history,
                    scenario.memories,
                    scenario.tasks,
                    scenario.evaluate_at,
                    scenario.start,
                    sorted((scenario.files or {}).items()),
                    scenario.fixture,
                )
            ).encode()
        )
    return digest.hexdigest()[:16]
