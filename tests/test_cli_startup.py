"""First contact is fast: ``memstore --help``, every command's ``--help`` and a usage error load
none of the heavy libraries (pandas, SciPy, statsmodels, NumPy, the MCP SDK, Ray, Mem0), which only
the work that needs them imports (a run's analysis, a server that starts). Asserted on what is
imported, in a fresh interpreter, and on the import time Python itself reports (``-X importtime``),
not on wall time."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pandas", "scipy", "statsmodels", "numpy", "mcp", "ray", "mem0", "qdrant_client", "jinja2")

_PROBE = """
import json, sys
from memstore.cli import main
found = []
for args in ARGS:  # one interpreter for all: a heavy import is pinned on the first command that made it
    try:
        main(args)
    except SystemExit as exit_:
        code = exit_.code
    else:
        code = 0
    found.append({"args": args, "code": code, "heavy": sorted(m for m in HEAVY if m in sys.modules)})
print(json.dumps(found), file=sys.stderr)
"""

COMMANDS = [
    *("compare", "eval", "export", "mcp", "memories", "merge", "metrics"),
    *("mine", "plugins", "report", "scenarios", "verify"),
]
PROBED = [["--help"], ["eval", "--bogus"], *([c, "--help"] for c in COMMANDS)]


def test_help_and_usage_errors_load_no_heavy_library() -> None:
    code = _PROBE.replace("ARGS", repr(PROBED)).replace("HEAVY", repr(HEAVY))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    assert [(f["args"], f["heavy"]) for f in found] == [(args, []) for args in PROBED]
    assert [f["code"] for f in found] == [0, 2, *([0] * len(COMMANDS))]


def test_every_command_is_listed_and_probed() -> None:
    listed = subprocess.run([sys.executable, "-m", "memstore", "--help"], capture_output=True, text=True, timeout=120)
    names = sorted(line.split()[0] for line in listed.stdout.split("Commands:")[1].splitlines() if line.strip())
    assert names == COMMANDS


def test_importing_the_command_line_takes_well_under_a_second() -> None:
    """``-X importtime``'s cumulative microseconds for ``memstore.cli`` (about 0.15 s on an idle
    machine; 2 s and more when every command loaded pandas and the MCP SDK)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import memstore.cli"], capture_output=True, text=True, timeout=120
    )
    line = next(row for row in done.stderr.splitlines() if row.rstrip().endswith("| memstore.cli"))
    cumulative_us = int(line.split("|")[1])
    assert cumulative_us < 1_000_000, line
