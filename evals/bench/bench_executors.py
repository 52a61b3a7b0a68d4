"""Executors: the same run on the local process pool and on Ray, and how it scales from 1 to 2 workers.

Run:  python evals/bench/bench_executors.py                              (the default population)
      python evals/bench/bench_executors.py --scenarios scenarios/api-version-moved.yaml --trials 20

Each configuration is one `memstore eval` in a fresh process (Ray's start-up included, as a
user pays it), on the same scenarios and seed; the results are compared byte for byte (they
must be equal). Ratios: local 2 workers / local 1 worker (scaling here), Ray 2 / local 2 (Ray's
overhead at equal workers). To extrapolate to a cluster: with per-session cost s (seconds, from
the 1-worker run) and Ray's fixed start-up r (Ray 2 minus local 2, at this size), N CPUs take
about r + sessions * s / N while units outnumber CPUs (a unit is one trial of one scenario in one
arm: it never splits).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _run(args: list[str], out: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memstore", "eval", *args, "--out", str(out)], capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"memstore eval failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", nargs="*", default=[str(ROOT / "scenarios" / "generated-population.yaml")])
    parser.add_argument("--trials", type=int, default=1)
    args = parser.parse_args(argv)
    base = [*args.scenarios, "--trials", str(args.trials), "--agent", "jit-verify", "--agent", "no-memory"]
    configs = [("local", 1), ("local", 2), ("ray", 2)]
    times, outs = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for executor, workers in configs:
            out = Path(tmp) / f"{executor}-{workers}"
            times[(executor, workers)] = _run([*base, "--workers", str(workers), "--executor", executor], out)
            outs[(executor, workers)] = (out / "results.json").read_bytes()
        sessions = sum(1 for _ in (Path(tmp) / "local-1").glob("shards/*"))
    same = len(set(outs.values())) == 1
    for (executor, workers), seconds in times.items():
        print(f"  {executor:<6} {workers} worker(s)  {seconds:8.1f} s")
    print(f"  units: {sessions}; results.json identical across executors and worker counts: {same}")
    print(f"  scaling, local 2 / local 1:         {times[('local', 1)] / times[('local', 2)]:.2f}x faster")
    print(f"  overhead, ray 2 / local 2:          {times[('ray', 2)] / times[('local', 2)]:.2f}x the time")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
