"""The same commit and seed give the same bytes from any checkout: another folder, another
``PYTHONHASHSEED``, another worker count, a machine under load; and they are the committed ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memstore

SOURCE = Path(memstore.__file__).resolve().parents[1]
SAMPLE = ("scenarios/api-version-moved.yaml", "scenarios/db-pool-contradicted.yaml")
POPULATION = "evals/populations/determinism-sample.yaml"
COMMITTED = SOURCE / "reports" / "determinism-sample"
FILES = ("results.json", "sessions.csv.gz", "events.csv.gz", "trials.csv.gz", "findings.csv.gz")

pytestmark = pytest.mark.skipif(
    not (SOURCE / POPULATION).is_file(), reason="runs from memstore's own checkout (it copies the source)"
)


def _checkout(dest: Path) -> Path:
    """A copy of the source (the package, its data and the sample) in another folder."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("memstore", "scenarios", "fixtures"):
        shutil.copytree(SOURCE / part, dest / part, ignore=skip)
    (dest / "evals" / "populations").mkdir(parents=True)
    shutil.copy(SOURCE / POPULATION, dest / POPULATION)
    return dest


def _eval(checkout: Path, out: Path, *, hash_seed: str, workers: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": hash_seed}
    used = subprocess.run(
        [sys.executable, "-c", "import memstore; print(memstore.__file__)"],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
    )
    assert used.stdout.strip() == str(checkout / "memstore" / "__init__.py")  # this copy, not the installed one
    args = [*SAMPLE, POPULATION, "--out", str(out), "--workers", str(workers), "--no-fail"]
    done = subprocess.run(
        [sys.executable, "-m", "memstore", "eval", *args], env=env, cwd=checkout, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.ci  # two runs from two checkouts, one under load: .ci/run's `pytest -m ci` step
def test_two_checkouts_one_under_load_write_the_same_bytes_as_the_committed_sample(tmp_path: Path) -> None:
    one = _checkout(tmp_path / "one" / "memstore-checkout")
    two = _checkout(tmp_path / "elsewhere" / "deeper" / "second")
    _eval(one, tmp_path / "a", hash_seed="1", workers=2)
    busy = "import os\nos.nice(10)\nwhile True: pass"  # contention, niced so the rest of the suite still runs
    load = [subprocess.Popen([sys.executable, "-c", busy]) for _ in range(2)]
    try:
        _eval(two, tmp_path / "b", hash_seed="4242", workers=1)
    finally:
        for process in load:
            process.kill()
            process.wait()
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
        assert (tmp_path / "a" / name).read_bytes() == (COMMITTED / name).read_bytes(), (
            f"{name} differs from reports/determinism-sample/: regenerate it with "
            f"`memstore eval {' '.join(SAMPLE)} {POPULATION} --out reports/determinism-sample --overwrite`"
        )
