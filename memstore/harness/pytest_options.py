"""The pytest plugin's options (``--memstore-``): what each is, its default, and how a bad value is
a usage error of one line (argparse's). Only pytest and the standard library are imported here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

__all__ = ["add_options"]


def _at_least(least: int) -> Any:
    """An option's type: a whole number of at least ``least`` (argparse reports the rest as usage)."""

    def parse(text: str) -> int:
        value = int(text) if text.lstrip("-").isdigit() else None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"a whole number of at least {least}, not {text!r}")
        return value

    return parse


_FLAG: dict[str, Any] = {"action": "store_true", "default": False}
_MANY: dict[str, Any] = {"action": "append", "default": []}
_OPTIONS: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("gates", _FLAG, "collect one test per gate of a memstore run (implied by --memstore-store and "
     "--memstore-scenarios)"),
    ("store", {**_MANY, "metavar": "URI"}, "store URI to evaluate; repeat to compare (default: sqlite:, the "
     "reference store)"),
    ("agent", {**_MANY, "metavar": "AGENT"}, "agent to run (no-memory, trusting, blind-trusting, jit-verify, "
     "command:CMD...); repeat for several (default: the four built-in agents)"),
    ("scenarios", {**_MANY, "metavar": "PATH"}, "scenario file or folder to run; repeat for several (default: "
     "the shipped library)"),
    ("sample", {"type": _at_least(0), "default": 0, "metavar": "N"}, "run about N tasks drawn from the scenarios, "
     "seeded and stratified (default: every task)"),
    ("trials", {"type": _at_least(1), "default": 1, "metavar": "N"}, "trials per scenario (default: 1)"),
    ("seed", {"type": int, "default": 0, "metavar": "S"}, "run seed (default: 0)"),
    ("workers", {"type": _at_least(1), "default": None, "metavar": "N"}, "processes (default: 2, one per 4 units: a "
     "small run runs in pytest's process)"),
    ("baseline", {"type": Path, "default": Path("reports/baseline"), "metavar": "RUN"}, "run folder (or "
     "results.json) to gate regressions against, task by task (default: reports/baseline)"),
    ("negative-control", {**_MANY, "metavar": "URI"}, "a store of --memstore-store that is built to break the "
     "store contract: its arms pass when the audit catches its breaches (no store can declare this of itself)"),
    ("strict", _FLAG, "fail the gates the sample could not decide (inconclusive, not exercised) instead of "
     "skipping them"),
    ("report", {"type": Path, "default": None, "metavar": "DIR"}, "keep the run folder and its reports here; "
     "a run of an earlier session there is replaced, never resumed, and a folder holding anything else is "
     "refused (default: a temporary folder, kept only when a gate failed)"),
)  # fmt: skip


def add_options(parser: pytest.Parser) -> None:
    """Add the plugin's options to pytest's (its ``pytest_addoption``)."""
    group = parser.getgroup("memstore", "memstore evaluation: the gates of a run as tests")
    for name, how, what in _OPTIONS:
        group.addoption(f"--memstore-{name}", help=what, **{**how, "default": _fresh(how.get("default"))})


def _fresh(default: Any) -> Any:
    """A default pytest may append to: a list of its own per option."""
    return [] if isinstance(default, list) else default
