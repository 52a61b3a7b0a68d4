"""The pytest plugin is installed and offers its options."""

from __future__ import annotations

import subprocess
import sys


def test_plugin_options_are_registered() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, check=True)
    for option in (
        "--memstore-store=URI",
        "--memstore-trials=N",
        "--memstore-seed=S",
        "--memstore-baseline=RESULTS",
        "--memstore-report=DIR",
        "--memstore-workers=N",
    ):
        assert option in done.stdout, option
