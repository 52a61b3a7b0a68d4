"""A store or agent of one's own, in the folder one works in, plugs in as ``module:attr`` without
``PYTHONPATH=.``, on the command line and under the pytest plugin; a reference that cannot be
loaded is one line that says where it looked. Run as a user runs them: the installed console
scripts (not ``python -m``, which would put the folder on the path itself), from a scratch folder
outside the checkout, with no ``PYTHONPATH``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIO = ROOT / "scenarios" / "expiry-and-refresh.yaml"

MYSTORE = """\
from memstore.backends import StoreOptions
from memstore.backends.sqlite import SqliteStore


def open_store(uri: str, options: StoreOptions) -> SqliteStore:
    return SqliteStore(":memory:", options)
"""

MYAGENT = """\
from memstore.agents.stubs import NoMemoryAgent


class MyAgent(NoMemoryAgent):
    name = "my-agent"
"""


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "mystore.py").write_text(MYSTORE)
    (tmp_path / "myagent.py").write_text(MYAGENT)
    return tmp_path


def test_a_store_and_an_agent_in_the_current_folder_run(folder: Path) -> None:
    arms = ["--store", "mystore:open_store", "--agent", "myagent:MyAgent", "--agent", "jit-verify"]
    done = _run([str(BIN / "memstore"), "eval", str(SCENARIO), *arms, "--out", "run", "--no-fail"], folder)
    assert done.returncode == 0, done.stderr
    assert (folder / "run" / "results.json").is_file()
    assert "myagent:MyAgent/mystore:open_store" in (folder / "run" / "report.md").read_text()


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("nosuch:open_store", "no module 'nosuch' in the current folder ({folder}) or on the Python path of"),
        ("mystore:open_stor", "module 'mystore' ({folder}/mystore.py) has no store factory 'open_stor'"),
    ],
)
def test_a_reference_that_cannot_load_is_one_line_that_says_where_it_looked(
    folder: Path, reference: str, says: str
) -> None:
    done = _run([str(BIN / "memstore"), "eval", str(SCENARIO), "--store", reference, "--out", "run"], folder)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert says.format(folder=folder.resolve()) in lines[0]
    assert not (folder / "run").exists()


def test_the_pytest_plugin_finds_the_store_in_the_current_folder(folder: Path) -> None:
    pytest_bin = str(BIN / "pytest")
    base = [pytest_bin, "-p", "no:cacheprovider", "-q", "--memstore-scenarios", str(SCENARIO)]
    good = _run([*base, "--memstore-store", "mystore:open_store"], folder)
    assert good.returncode == 0, good.stdout[-2000:]
    assert " passed" in good.stdout.splitlines()[-1]
    bad = _run([*base, "--memstore-store", "nosuch:open_store"], folder)
    assert bad.returncode != 0
    assert "INTERNALERROR" not in bad.stdout + bad.stderr
    errors = [line for line in (bad.stdout + bad.stderr).splitlines() if line.startswith("ERROR: memstore:")]
    said = (
        f"ERROR: memstore: cannot import store module 'nosuch' (nosuch:open_store): no module 'nosuch' in the "
        f"current folder ({folder.resolve()}) or on the Python path of {BIN}/python"
    )
    assert len(errors) == 1
    assert errors[0].startswith(said), errors
