"""Where the shipped data lives: the scenario library, its schema, the fixture codebases.

In a checkout they are the top-level ``scenarios/`` and ``fixtures/`` folders; an installed
wheel carries copies under ``memstore/_data/``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_dir", "fixtures_dir", "scenarios_dir"]

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
