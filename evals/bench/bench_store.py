"""Store benchmark: store() throughput, recent() latency at 10k/100k/1M memories, sweep() time.

Run:  python evals/bench/bench_store.py            (all sizes; about two minutes)
      python evals/bench/bench_store.py --sizes 10000,100000 --quick

Baselines, measured in the same run on the same data:
  store():  the same INSERT done by raw sqlite3 with the same pragmas (library overhead);
  recent(): the same SQL forced to scan the table (``NOT INDEXED``): what the indices buy.
Targets (issue 2): recent() p50 <= 2 ms at 1M memories; >= 5,000 store() calls/s on SQLite.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from memstore import (
    Access,
    AccessPolicy,
    Actor,
    Citation,
    FakeClock,
    Kind,
    Memory,
    MemoryDraft,
    NotFound,
    Surface,
    UlidIds,
    open_store,
)
from memstore.backends.memory import InMemoryStore
from memstore.backends.rows import micros
from memstore.backends.sqlite import SqliteStore

REPOS = [f"org{i // 50}/repo{i}" for i in range(1_000)]
USERS = [f"user{i}" for i in range(50)]


def _policy() -> AccessPolicy:
    policy = AccessPolicy()
    for user in USERS:
        policy.grant(user, "*", Access.WRITE)
    return policy


def _population(n: int, clock: FakeClock, rng: random.Random) -> list[Memory]:
    """``n`` live memories over 1,000 repositories, refreshed across the last 27 days; 5% preferences."""
    ids = UlidIds(rng.random())
    now = clock.now()
    made = []
    for i in range(n):
        at = now - timedelta(seconds=rng.randrange(27 * 86_400))
        kind = Kind.PREFERENCE if rng.random() < 0.05 else Kind.FACT
        made.append(
            Memory(
                id=ids(at),
                repo=REPOS[i % len(REPOS)],
                kind=kind,
                subject=f"subject {i}",
                fact=f"Fact number {i} about the code, with a few words of detail.",
                citations=tuple(Citation(f"src/mod{j}/file{i % 97}.py", 1 + (i * 7 + j) % 400) for j in range(3)),
                reason="So that the next agent does not have to rediscover it.",
                author=USERS[i % len(USERS)],
                surface=Surface.CODING_AGENT,
                created_at=at,
                refreshed_at=at,
            )
        )
    return made


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def bench_store_throughput(workdir: Path, count: int) -> None:
    clock = FakeClock()
    actor = Actor(USERS[0])
    store = open_store(f"sqlite:///{workdir / 'throughput.db'}", access=_policy(), clock=clock, ids=UlidIds(1))
    drafts = [
        MemoryDraft(REPOS[i % 1000], Kind.FACT, f"s{i}", f"fact {i}", [f"src/a{i % 50}.py:{i % 300 + 1}"], "why")
        for i in range(count)
    ]
    start = time.perf_counter()
    for draft in drafts:
        store.store(draft, actor=actor, surface=Surface.CODING_AGENT)
    library = count / (time.perf_counter() - start)

    raw = sqlite3.connect(workdir / "raw.db", isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute("PRAGMA synchronous = NORMAL")
    raw.execute("CREATE TABLE t (id TEXT PRIMARY KEY, repo TEXT, subject TEXT, fact TEXT, citations TEXT, at INTEGER)")
    start = time.perf_counter()
    for i, draft in enumerate(drafts):
        raw.execute("BEGIN IMMEDIATE")
        raw.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", (f"id{i}", draft.repo, draft.subject, draft.fact, "[]", i)
        )
        raw.execute("COMMIT")
    baseline = count / (time.perf_counter() - start)

    memory = open_store("memory://", access=_policy(), clock=clock, ids=UlidIds(1))
    start = time.perf_counter()
    for draft in drafts:
        memory.store(draft, actor=actor, surface=Surface.CODING_AGENT)
    in_memory = count / (time.perf_counter() - start)

    print(f"\nstore(), one transaction per call, {count:,} calls")
    print(
        f"  sqlite backend        {library:>10,.0f} /s   (target >= 5,000/s: {'MET' if library >= 5000 else 'MISSED'})"
    )
    print(f"  raw sqlite3 baseline  {baseline:>10,.0f} /s   library/raw = {library / baseline:.2f}")
    print(f"  memory backend        {in_memory:>10,.0f} /s")


def bench_recent(workdir: Path, sizes: list[int], queries: int, rng: random.Random) -> None:
    print(f"\nrecent(limit=50), {queries:,} queries on random repositories; sweep() of the 5% oldest")
    print(
        f"  {'memories':>10} {'backend':<8} {'p50 ms':>8} {'p99 ms':>8}   "
        f"{'scan p50 ms':>11} {'index speed-up':>14}   {'sweep':>16}"
    )
    for size in sizes:
        clock = FakeClock()
        population = _population(size, clock, rng)
        sqlite_store = open_store(f"sqlite:///{workdir / f'recent-{size}.db'}", access=_policy(), clock=clock)
        assert isinstance(sqlite_store, SqliteStore)
        for start in range(0, size, 50_000):
            sqlite_store.insert_many(population[start : start + 50_000])
        memory_store = open_store("memory://", access=_policy(), clock=clock)
        assert isinstance(memory_store, InMemoryStore)
        for item in population:
            memory_store._insert(item)
        asks = [(REPOS[rng.randrange(len(REPOS))], Actor(USERS[rng.randrange(len(USERS))])) for _ in range(queries)]

        scan = _scan_baseline(sqlite_store, asks[: max(20, queries // 50)], clock)
        for name, store in (("sqlite", sqlite_store), ("memory", memory_store)):
            samples = []
            for repo, actor in asks:
                start = time.perf_counter()
                got = store.recent(repo, actor=actor, surface=Surface.CODING_AGENT, limit=50)
                samples.append((time.perf_counter() - start) * 1000)
                assert len(got) == 50 or size < 50_000
            p50, p99 = _percentiles(samples)
            extra = f"{scan:>11.2f} {scan / p50:>13.0f}x" if name == "sqlite" else f"{'':>11} {'':>14}"
            sweep_ms = _sweep_time(store, clock) if name == "sqlite" or size <= 1_000_000 else None
            sweep_text = f"{sweep_ms[1]:>7,} in {sweep_ms[0]:>6.0f} ms" if sweep_ms else ""
            print(f"  {size:>10,} {name:<8} {p50:>8.3f} {p99:>8.3f}   {extra}   {sweep_text}")
            if size >= 1_000_000 and name == "sqlite":
                verdict = "MET" if p50 <= 2.0 else "MISSED"
                print(f"  {'':>10} target recent() p50 <= 2 ms at 1M on sqlite: {verdict}")
        sqlite_store.close()


def _scan_baseline(store: SqliteStore, asks: list[tuple[str, Actor]], clock: FakeClock) -> float:
    """The facts query of recent() without its index: the table scan a store without indices does."""
    conn = sqlite3.connect(store.path)
    cutoff = micros(clock.now() - timedelta(days=28))
    samples = []
    for repo, _ in asks:
        start = time.perf_counter()
        conn.execute(
            "SELECT * FROM memories NOT INDEXED WHERE repo = ? AND status = 'active' AND kind = 'fact' "
            "AND refreshed_at > ? ORDER BY refreshed_at DESC, created_at DESC, id DESC LIMIT 50",
            (repo, cutoff),
        ).fetchall()
        samples.append((time.perf_counter() - start) * 1000)
    conn.close()
    return statistics.median(samples)


def _sweep_time(store: SqliteStore | InMemoryStore, clock: FakeClock) -> tuple[float, int]:
    """Time a sweep that finds the oldest 5% expired (a private clock 2.35 days ahead)."""
    shifted = FakeClock(clock.now() + timedelta(days=28 - 27 * 0.95))
    saved = store.clock
    store.clock = shifted
    try:
        start = time.perf_counter()
        deleted = store.sweep()
        return (time.perf_counter() - start) * 1000, deleted
    finally:
        store.clock = saved


def bench_hidden_get(workdir: Path, count: int = 2_000, rounds: int = 7) -> None:
    """get() of a memory the actor may not see against get() of an id that does not exist: an
    error that took longer for one than the other would tell what the actor may not know."""
    store = open_store(f"sqlite:///{workdir / 'hidden.db'}", access=_policy())
    owner = Actor(USERS[0])
    ids = [
        store.store(
            MemoryDraft(REPOS[0], Kind.FACT, f"s{n}", "f" * 500, [f"a.py:{n + 1}"] * 5, "r" * 300),
            actor=owner,
            surface=Surface.CLI,
        ).id
        for n in range(count)
    ]
    missing = [f"mem_{n:026d}" for n in range(count)]
    stranger = Actor("stranger")

    def per_call(names: list[str]) -> float:
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            for name in names:
                with contextlib.suppress(NotFound):
                    store.get(name, actor=stranger)
            best = min(best, time.perf_counter() - start)
        return best / len(names) * 1e6

    hidden, absent = per_call(ids), per_call(missing)
    print(f"\nget() that must answer 'not found', {count:,} ids, best of {rounds}")
    print(f"  hidden (exists, not visible)  {hidden:>7.1f} us")
    print(f"  missing (no such id)          {absent:>7.1f} us   hidden/missing = {hidden / absent:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="population sizes (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=2_000, help="recent() calls per size (default: %(default)s)")
    parser.add_argument("--stores", type=int, default=20_000, help="store() calls timed (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=2026, help="population seed (default: %(default)s)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    print(f"memstore store benchmark (python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version})")
    with tempfile.TemporaryDirectory(prefix="memstore-bench-") as tmp:
        bench_store_throughput(Path(tmp), args.stores)
        bench_recent(Path(tmp), [int(s) for s in args.sizes.split(",")], args.queries, rng)
        bench_hidden_get(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
