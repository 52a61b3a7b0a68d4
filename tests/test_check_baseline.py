"""evals/check_baseline.py, the byte check ``.ci/run`` makes of the whole library's run against
reports/baseline: here on copies of the committed sample baseline, one byte changed at a time."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from evals.check_baseline import main

SAMPLE = Path(__file__).resolve().parents[1] / "reports" / "sample-baseline"


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A baseline folder named as the committed one, and a run holding the same files."""
    baseline, run = tmp_path / "reports" / "sample-baseline", tmp_path / "run"
    for folder in (baseline, run):
        folder.mkdir(parents=True)
        for name in ("results.json", "sessions.csv.gz"):
            shutil.copy(SAMPLE / name, folder / name)
    return run, baseline


def test_a_run_with_the_baselines_bytes_passes(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run, baseline = folders
    monkeypatch.chdir(baseline.parents[1])
    assert main([str(run), "reports/sample-baseline"]) == 0
    said = capsys.readouterr().out
    assert said == f"{run}: results.json and sessions.csv.gz are the bytes of reports/sample-baseline\n"


def test_a_changed_figure_is_named_with_its_file_its_place_and_how_to_regenerate(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run, baseline = folders
    results = json.loads((run / "results.json").read_text())
    results["run"]["seed"] = 7
    (run / "results.json").write_text(json.dumps(results))
    monkeypatch.chdir(baseline.parents[1])
    assert main([str(run), "reports/sample-baseline"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "results.json differs from reports/sample-baseline/results.json: run.seed: 0 in the baseline, 7 in the run"
    )
    assert err[1].endswith(
        "regenerate reports/sample-baseline (reports/README.md): memstore eval --quick --out /tmp/sample && "
        "cp /tmp/sample/results.json /tmp/sample/sessions.csv.gz reports/sample-baseline/"
    )


def test_a_changed_session_is_named_by_its_row(folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    run, baseline = folders
    rows = gzip.decompress((run / "sessions.csv.gz").read_bytes()).decode().splitlines(keepends=True)
    rows[3] = rows[3].replace(",sqlite,", ",SQLITE,", 1)
    (run / "sessions.csv.gz").write_bytes(gzip.compress("".join(rows).encode(), mtime=0))
    assert main([str(run), str(baseline)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"sessions.csv.gz differs from {baseline}/sessions.csv.gz: line 4: ")
    assert "SQLITE" in err[0]
    assert err[1].endswith(f"copy results.json and sessions.csv.gz of a fresh run into {baseline}")


def test_a_missing_file_is_exit_2(folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    run, baseline = folders
    (run / "sessions.csv.gz").unlink()
    assert main([str(run), str(baseline)]) == 2
    assert capsys.readouterr().err.startswith(f"sessions.csv.gz: missing: {run}/sessions.csv.gz\n")
