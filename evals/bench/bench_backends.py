"""The stores side by side: retrieval recall as the pool grows, and what store() and recent() cost.

Run:  python evals/bench/bench_backends.py [--markdown FILE]     (about a minute)

Retrieval: one repository holds a memory a task needs among N - 1 others (N = 10, 100,
1,000), all stored at random times; the task's prompt names what it needs. For each pool
size, 200 seeded draws: is the needed memory among the first k handed (k = 5, 10, 20)?
Recency (the reference store's recent()) against relevance (the ranked store's search(),
BM25 fused with recency). The seeds call recency blunt; this says by how much.

Cost: store() and recent() per call on each backend with 1,000 memories in the repository.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, UlidIds, open_store
from memstore.store import MemoryStore

TOPICS = [
    "retry",
    "batch",
    "quota",
    "cache",
    "page",
    "upload",
    "session",
    "export",
    "report",
    "queue",
    "token",
    "locale",
    "billing",
    "search",
    "audit",
    "webhook",
    "theme",
    "backup",
    "mailer",
    "invoice",
]
KS = (5, 10, 20)
ACTOR = Actor("dev")


def _draft(n: int) -> MemoryDraft:
    topic = TOPICS[n % len(TOPICS)]
    name = f"{topic.upper()}_LIMIT_{n}"
    return MemoryDraft(
        "acme/app",
        Kind.FACT,
        f"{name} synchronization",
        f"{name} must match between services/{topic}{n}/config.py and web/src/{topic}{n}.ts.",
        [f"services/{topic}{n}/config.py:3", f"web/src/{topic}{n}.ts:2"],
        "Clients and servers disagree otherwise.",
    )


def _fill(uri: str, size: int, rng: random.Random) -> tuple[MemoryStore, dict[int, str]]:
    clock = FakeClock()
    store = open_store(uri, access=AccessPolicy().grant("dev", "*", Access.WRITE), clock=clock, ids=UlidIds(1))
    ids = {}
    for n in rng.sample(range(size), size):  # stored in random order over the last weeks
        clock.advance(timedelta(minutes=rng.randrange(1, 60)))
        ids[n] = store.store(_draft(n), actor=ACTOR, surface=Surface.CODE_REVIEW).id
    return store, ids


def recall(uri: str, size: int, draws: int, seed: int) -> dict[int, float]:
    rng = random.Random(seed)
    store, ids = _fill(uri, size, rng)
    hits = dict.fromkeys(KS, 0)
    for _ in range(draws):
        needed = rng.randrange(size)
        prompt = f"Raise {TOPICS[needed % len(TOPICS)].upper()}_LIMIT_{needed} to 500 everywhere."
        if hasattr(store, "search"):
            handed = store.search("acme/app", prompt, actor=ACTOR, surface=Surface.CODING_AGENT, limit=max(KS))
        else:
            handed = store.recent("acme/app", actor=ACTOR, surface=Surface.CODING_AGENT, limit=max(KS))
        order = [m.id for m in handed]
        for k in KS:
            hits[k] += ids[needed] in order[:k]
    return {k: hits[k] / draws for k in KS}


def cost(uri: str, calls: int) -> tuple[float, float]:
    rng = random.Random(3)
    store, _ = _fill(uri, 1000, rng)
    start = time.perf_counter()
    for n in range(calls):
        store.store(_draft(2000 + n), actor=ACTOR, surface=Surface.CODE_REVIEW)
    per_store = (time.perf_counter() - start) / calls * 1000
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        store.recent("acme/app", actor=ACTOR, surface=Surface.CODING_AGENT, limit=50)
        samples.append((time.perf_counter() - start) * 1000)
    return per_store, statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000", help="pool sizes (default: %(default)s)")
    parser.add_argument("--draws", type=int, default=200, help="tasks drawn per pool size (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=100, help="calls timed per backend (default: %(default)s)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables to this file")
    args = parser.parse_args(argv)
    lines = [
        "## Retrieval: needed_recall_at_k as the pool grows",
        "",
        "| memories in the repository | retrieval | k = 5 | k = 10 | k = 20 |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            for label, uri in (
                ("recency (sqlite)", f"sqlite:///{tmp}/r{size}.db"),
                ("relevance (ranked)", f"ranked:///{tmp}/k{size}.db"),
            ):
                found = recall(uri, size, args.draws, seed=size)
                lines.append(f"| {size:,} | {label} | " + " | ".join(f"{found[k]:.3f}" for k in KS) + " |")
        lines += [
            "",
            f"## Cost per call with 1,000 memories in the repository ({args.calls} calls)",
            "",
            "| backend | store() ms | recent() ms (median) |",
            "|---|---|---|",
        ]
        for label, uri in (
            ("sqlite", f"sqlite:///{tmp}/c.db"),
            ("ranked", f"ranked:///{tmp}/c2.db"),
            ("agentmem", f"agentmem:///{tmp}/mem"),
            ("memory", "memory://"),
            ("naive (negative control)", "naive://"),
        ):
            per_store, per_recent = cost(uri, args.calls)
            lines.append(f"| {label} | {per_store:.3f} | {per_recent:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
