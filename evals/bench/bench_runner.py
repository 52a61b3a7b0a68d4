"""Runner throughput: sessions per second on the scenario library and on a 2,000-task population.

Run:  python evals/bench/bench_runner.py        (about two minutes)

Both runs use the three stub agents (no-memory, trusting, jit-verify) on the SQLite store,
one trial, with --workers processes; every coding session makes real commits and merges.
Baseline: the same population on one worker, in the same run (--skip-baseline to omit).
Target (issue 5): the 2,000-task population in three arms in at most 3 minutes with 2 workers.
"""

from __future__ import annotations

import argparse
import time

from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.runner.pool import Arm, RunConfig, run
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file, load_library

ARMS = tuple(Arm(agent, "sqlite:") for agent in ("no-memory", "trusting", "jit-verify"))


def timed(label: str, config: RunConfig) -> float:
    start = time.perf_counter()
    output = run(config, grading=TrialGrading)
    seconds = time.perf_counter() - start
    sessions = len(output.sessions)
    tasks = sum(len(s.tasks) for s in config.scenarios)
    print(
        f"  {label:<44} {tasks:>6,} tasks x {len(config.arms)} arms = {sessions:>6,} sessions "
        f"in {seconds:7.1f} s: {sessions / seconds:7.1f} sessions/s"
    )
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="(default: %(default)s)")
    parser.add_argument("--repositories", type=int, default=100, help="generated repositories (default: %(default)s)")
    parser.add_argument("--skip-baseline", action="store_true", help="do not time the one-worker baseline")
    args = parser.parse_args(argv)
    library = tuple(s for s in load_library() if s.files is None)
    population = tuple(load_file(scenarios_dir() / "generated-population.yaml"))[: args.repositories]
    print("memstore runner throughput (three stub agents, SQLite store, one trial)")
    timed(f"scenario library, {args.workers} workers", RunConfig(library, ARMS, workers=args.workers))
    seconds = timed(f"generated population, {args.workers} workers", RunConfig(population, ARMS, workers=args.workers))
    if not args.skip_baseline:
        single = timed("generated population, 1 worker (baseline)", RunConfig(population, ARMS, workers=1))
        print(f"  speed-up with {args.workers} workers: {single / seconds:.2f}x")
    if args.repositories == 100:
        verdict = "MET" if seconds <= 180 else "MISSED"
        print(f"  target: 2,000 tasks x 3 arms in <= 180 s with 2 workers: {seconds:.1f} s {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
