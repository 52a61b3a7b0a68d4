"""Harbor in a virtual environment of its own (it needs Python 3.12 or newer; memstore runs on 3.11),
driven as a separate process: what a test validates exported tasks and ATIF trajectories against.

`.venv-harbor/` at the top of the project (`.ci/run` makes it: ``python3.12 -m venv .venv-harbor &&
.venv-harbor/bin/pip install harbor==0.25.0``), or the Python named by ``$MEMSTORE_HARBOR_PYTHON``.
Where it is missing a test skips, saying so; under ``MEMSTORE_REQUIRE_THIRD_PARTY=1`` (CI) it fails.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[1]
PYTHON = Path(os.environ.get("MEMSTORE_HARBOR_PYTHON", ROOT / ".venv-harbor" / "bin" / "python"))
VERSION = "0.25.0"


@functools.cache
def _installed() -> str | None:
    """Harbor's version in its environment, or None."""
    if not PYTHON.exists():
        return None
    done = subprocess.run(
        [PYTHON, "-c", "import importlib.metadata as m; print(m.version('harbor'))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def harbor_python() -> Path:
    """The Python of Harbor's environment; the test skips (fails in CI) where there is none."""
    if _installed() == VERSION:
        return PYTHON
    reason = (
        f"harbor {VERSION} is not installed for {PYTHON} (found: {_installed()}); make it with "
        f"`python3.12 -m venv .venv-harbor && .venv-harbor/bin/pip install harbor=={VERSION}` (.ci/run does)"
    )
    if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def run_harbor(script: str, *args: str) -> Any:
    """Run ``script`` in Harbor's Python with ``args``; what it printed last, as JSON."""
    done = subprocess.run(
        [harbor_python(), "-c", script, *args], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
