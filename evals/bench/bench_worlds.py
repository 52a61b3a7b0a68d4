"""World-building benchmark: a 1,000-commit history, and 1,000 trial worlds of one scenario.

Run:  python evals/bench/bench_worlds.py          (about a minute)

  history:  1,000 commits (each edits a file, some rename) written by HistoryBuilder through
            one git fast-import run, against GitPython committing one commit at a time (the
            baseline, timed on --baseline-commits and reported per commit and scaled to 1,000);
  worlds:   1,000 trials of the api-version-moved scenario from one built template: a copy of
            the repository plus a new store seeded with the scenario's memories, with the
            in-memory store and with a SQLite file per trial.
Targets (issue 4): the 1,000-commit history in at most 2 s; a trial world in at most 20 ms median.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from memstore import AccessPolicy, Clock, MemoryStore, open_store
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file
from memstore.harness.world import build_template
from memstore.verify.history import HistoryBuilder


def scripted(commits: int) -> HistoryBuilder:
    b = HistoryBuilder()
    for f in range(50):
        b.write(f"src/mod{f}.py", "".join(f"line {n} of module {f}\n" for n in range(40)))
    b.commit("initial")
    for c in range(1, commits):
        f = c % 50
        if c % 97 == 0:
            b.rename(f"src/mod{f}.py", f"src/moved{c}.py")
            b.write(f"src/mod{f}.py", "".join(f"recreated {c} line {n}\n" for n in range(40)))
        else:
            b.insert(f"src/mod{f}.py", 1 + c % 30, f"change {c}\n")
        b.commit(f"change {c}")
    return b


def bench_history(workdir: Path, commits: int, baseline_commits: int) -> None:
    start = time.perf_counter()
    builder = scripted(commits)
    built = builder.build(workdir / "fast")
    fast = time.perf_counter() - start
    assert len(built.commits) == commits

    import git  # GitPython: the baseline only

    repo = git.Repo.init(workdir / "slow", initial_branch="main")
    files = builder.files("c1")
    start = time.perf_counter()
    for path, data in files.items():
        target = workdir / "slow" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    repo.index.add(list(files))
    repo.index.commit("initial")
    for c in range(2, baseline_commits + 1):
        label = f"c{c}"
        before, after = builder.files(f"c{c - 1}"), builder.files(label)
        for path in set(before) - set(after):
            repo.index.remove([path], working_tree=True)
        changed = [p for p, d in after.items() if before.get(p) != d]
        for path in changed:
            (workdir / "slow" / path).write_bytes(after[path])
        repo.index.add(changed)
        repo.index.commit(f"change {c}")
    slow_per_commit = (time.perf_counter() - start) / baseline_commits
    projected = slow_per_commit * commits
    print(f"history of {commits:,} commits")
    print(f"  HistoryBuilder + git fast-import: {fast:8.2f} s   (target <= 2 s: {'MET' if fast <= 2 else 'MISSED'})")
    print(
        f"  GitPython, a commit at a time:    {slow_per_commit * 1000:8.1f} ms per commit on {baseline_commits} "
        f"commits; {projected:.1f} s for {commits:,}; fast-import is {projected / fast:.0f}x faster"
    )


def bench_worlds(workdir: Path, trials: int) -> None:
    (scenario,) = load_file(scenarios_dir() / "api-version-moved.yaml")
    start = time.perf_counter()
    template = build_template(scenario, workdir / "template")
    print(f"\ntrial worlds of {scenario.name} (template built once in {(time.perf_counter() - start) * 1000:.0f} ms)")

    def memory(access: AccessPolicy, clock: Clock) -> MemoryStore:
        return open_store("memory://", access=access, clock=clock)

    for name, factory_for in (
        ("memory://", lambda n: memory),
        ("sqlite file", lambda n: lambda a, c: open_store(f"sqlite:///{workdir / f'w{n}.db'}", access=a, clock=c)),
    ):
        samples = []
        for n in range(trials):
            start = time.perf_counter()
            world = template.instantiate(workdir / f"{name[:6]}-{n}", factory_for(n))
            samples.append((time.perf_counter() - start) * 1000)
            assert world.seeded
        ordered = sorted(samples)
        median = statistics.median(ordered)
        verdict = "MET" if median <= 20 else "MISSED"
        p95 = ordered[int(len(ordered) * 0.95)]
        print(
            f"  {name:<12} {trials:,} worlds: median {median:6.2f} ms, p95 {p95:6.2f} ms"
            f"   (target median <= 20 ms: {verdict})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=1_000, help="(default: %(default)s)")
    parser.add_argument("--baseline-commits", type=int, default=200, help="(default: %(default)s)")
    parser.add_argument("--trials", type=int, default=1_000, help="(default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memstore-bench-worlds-") as tmp:
        bench_history(Path(tmp), args.commits, min(args.baseline_commits, args.commits))
        bench_worlds(Path(tmp), args.trials)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
