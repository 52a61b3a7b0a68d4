"""PostgreSQL against SQLite: recent() p50/p99 and store() throughput at 10k and 100k memories.

Run:  MEMSTORE_TEST_POSTGRES_URL=postgresql://user:pass@127.0.0.1/db python evals/bench/bench_postgres.py
      (about two minutes; each size in a fresh schema, dropped after)

The same population (bench_store.py's: 1,000 repositories, 50 users, refreshed over 27 days,
5% preferences) is loaded into a SQLite file and a PostgreSQL schema on this machine; then
recent(limit=50) on random repositories, and store() one transaction per call. The ratio is
PostgreSQL / SQLite: what a server (a network round trip per statement, even on loopback)
costs against an embedded file, in exchange for one store that several machines share.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_store import REPOS, USERS, _percentiles, _policy, _population

from memstore import Actor, FakeClock, Kind, MemoryDraft, Surface, UlidIds, open_store


def _timed_recent(store: object, queries: int, rng: random.Random) -> tuple[float, float]:
    samples = []
    for _ in range(queries):
        repo = rng.choice(REPOS)
        actor = Actor(rng.choice(USERS))
        start = time.perf_counter()
        store.recent(repo, actor=actor, surface=Surface.CODING_AGENT, limit=50)  # type: ignore[attr-defined]
        samples.append((time.perf_counter() - start) * 1000)
    return _percentiles(samples)


def _throughput(store: object, count: int) -> float:
    actor = Actor(USERS[0])
    drafts = [
        MemoryDraft(REPOS[i % 1000], Kind.FACT, f"s{i}", f"fact {i}", [f"src/a{i % 50}.py:{i % 300 + 1}"], "why")
        for i in range(count)
    ]
    start = time.perf_counter()
    for draft in drafts:
        store.store(draft, actor=actor, surface=Surface.CODING_AGENT)  # type: ignore[attr-defined]
    return count / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--stores", type=int, default=1000, help="store() calls for the throughput figure")
    args = parser.parse_args(argv)
    url = os.environ.get("MEMSTORE_TEST_POSTGRES_URL")
    if not url:
        print("set MEMSTORE_TEST_POSTGRES_URL=postgresql://user:pass@host/db", file=sys.stderr)
        return 2
    import psycopg

    rng = random.Random(5)
    print(f"{'memories':>10} {'backend':<11} {'recent p50 ms':>14} {'p99 ms':>8} {'store() /s':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            clock = FakeClock()
            population = _population(size, clock, rng)
            schema = f"bench_{uuid.uuid4().hex[:12]}"
            joiner = "&" if "?" in url else "?"
            stores = {
                "sqlite": open_store(f"sqlite:///{Path(tmp) / f'{size}.db'}", access=_policy(), clock=clock,
                                     ids=UlidIds(1)),
                "postgresql": open_store(f"{url}{joiner}schema={schema}", access=_policy(), clock=clock,
                                         ids=UlidIds(1)),
            }  # fmt: skip
            try:
                figures = {}
                for name, store in stores.items():
                    for start in range(0, size, 20_000):
                        store.insert_many(population[start : start + 20_000])  # type: ignore[attr-defined]
                    _timed_recent(store, 50, random.Random(1))  # warm
                    p50, p99 = _timed_recent(store, args.queries, random.Random(2))
                    rate = _throughput(store, args.stores)
                    figures[name] = (p50, p99, rate)
                    print(f"{size:>10,} {name:<11} {p50:>14.3f} {p99:>8.3f} {rate:>11,.0f}")
                (sp50, sp99, srate), (pp50, pp99, prate) = figures["sqlite"], figures["postgresql"]
                print(f"{'':>10} {'pg/sqlite':<11} {pp50 / sp50:>13.1f}x {pp99 / sp99:>7.1f}x {prate / srate:>10.2f}x")
            finally:
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
