"""The pytest plugin is installed and offers its options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_plugin_options_are_registered() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, check=True)
    for option in (
        "--memstore-store=URI",
        "--memstore-trials=N",
        "--memstore-seed=S",
        "--memstore-baseline=RUN",
        "--memstore-report=DIR",
        "--memstore-workers=N",
    ):
        assert option in done.stdout, option


PROBE = """
import pathlib

def test_the_run(memstore_run):
    pathlib.Path({where!r}).write_text(str(memstore_run.folder))
    assert memstore_run.results.arms["jit-verify/sqlite"].rate("merge_rate").value == 1.0
"""


def _session(tmp_path: Path, *options: str) -> Path:
    tmp_path.mkdir()
    where = tmp_path / "folder.txt"
    (tmp_path / "test_probe.py").write_text(PROBE.format(where=str(where)))
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "api-version-control.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_probe.py"),
         "--memstore-scenarios", str(scenario), "--memstore-workers", "1", *options],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    return Path(where.read_text())


def test_the_session_run_leaves_nothing_behind_unless_kept(tmp_path: Path) -> None:
    scratch = _session(tmp_path / "one")
    assert not scratch.exists()  # the temporary run folder went with the session
    kept = _session(tmp_path / "two", "--memstore-report", str(tmp_path / "kept"))
    assert kept == tmp_path / "kept"
    assert (kept / "results.json").exists()
    assert (kept / "report.html").exists()
