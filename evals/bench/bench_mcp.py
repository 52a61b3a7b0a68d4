"""MCP benchmark: tool-call latency over stdio at 1,000 memories, against the same call in process.

Run:  python evals/bench/bench_mcp.py            (about a minute)
      python evals/bench/bench_mcp.py --calls 50

A SQLite store holds 1,000 memories of one repository, each citing a line of a real git
repository. For ``recent_memories`` (limit 50) and ``verify_memory``, the same operation is
timed three ways: the `MemoryService` method called directly (the baseline: what the store
and verifier cost), the SDK's client against the server in process (what the protocol adds),
and the SDK's client against ``memstore mcp`` over stdio (what an agent sees). p50 and p99 in
milliseconds, and the ratio of stdio to direct.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from memstore import Access, AccessPolicy, Actor, Citation, Kind, MemoryDraft, Surface, open_store
from memstore.mcp.server import build_server
from memstore.mcp.service import MemoryService
from memstore.verify import GitCodebase, WorkingTree, anchor
from memstore.verify.git import GitRepository

MEMORIES = 1_000


def _repository(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    for f in range(20):
        lines = [f'export const SETTING_{f}_{i} = "{i}";' for i in range(60)]
        (repo / "src" / f"settings{f}.ts").write_text("\n".join(lines) + "\n")
    who = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), *who, "commit", "-q", "-m", "settings"], check=True)
    return repo


def _fill(uri: str, repo: Path) -> list[str]:
    policy = AccessPolicy().grant("ana", "acme/api", Access.WRITE)
    store = open_store(uri, access=policy)
    head = GitCodebase(GitRepository(repo), "HEAD")
    ids = []
    for n in range(MEMORIES):
        f, i = n % 20, n % 60
        citation = anchor(head, Citation.parse(f"src/settings{f}.ts:{i + 1}"))
        draft = MemoryDraft("acme/api", Kind.FACT, f"SETTING_{f}_{i}", f'SETTING_{f}_{i} is "{i}".', [citation], "b")
        ids.append(store.store(draft, actor=Actor("ana"), surface=Surface.CLI).id)
    return ids


def _service(uri: str, repo: Path) -> MemoryService:
    store = open_store(uri, access=AccessPolicy().grant("ana", "acme/api", Access.WRITE))
    head = GitCodebase(GitRepository(repo), "HEAD")
    return MemoryService(store, Actor("ana"), Surface.CODING_AGENT, "acme/api", head, WorkingTree(repo, history=head))


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _timed(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repository(Path(tmp))
        uri = f"sqlite:///{Path(tmp) / 'memories.db'}"
        ids = _fill(uri, repo)
        service = _service(uri, repo)
        targets = [ids[(n * 37) % len(ids)] for n in range(calls)]
        results: dict[str, dict[str, list[float]]] = {"recent_memories": {}, "verify_memory": {}}

        async def direct() -> None:
            async def recent() -> None:
                service.recent_memories(50)

            results["recent_memories"]["direct"] = await _timed(recent, calls)
            it = iter(targets)

            async def verify() -> None:
                service.verify_memory(next(it))

            results["verify_memory"]["direct"] = await _timed(verify, calls)

        async def over(client: Client, how: str) -> None:
            async def recent() -> None:
                await client.call_tool("recent_memories", {"limit": 50})

            results["recent_memories"][how] = await _timed(recent, calls)
            it = iter(targets)

            async def verify() -> None:
                await client.call_tool("verify_memory", {"memory_id": next(it)})

            results["verify_memory"][how] = await _timed(verify, calls)

        async def everything() -> None:
            await direct()
            async with Client(build_server(service)) as client:
                await over(client, "in-process client")
            args = ["-m", "memstore", "mcp", "--store", uri, "--as", "ana", "--repo", str(repo), "--name", "acme/api"]
            async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
                await over(client, "stdio")

        anyio.run(everything)
    print(f"memstore MCP tool-call latency ({MEMORIES:,} memories in a SQLite store, {calls} calls each, ms)")
    for tool, by_way in results.items():
        base = _stats(by_way["direct"])
        for way, samples in by_way.items():
            p50, p99 = _stats(samples)
            ratio = f"   {p50 / base[0]:5.1f}x direct" if way != "direct" else ""
            print(f"  {tool:16} {way:18} p50 {p50:8.2f}   p99 {p99:8.2f}{ratio}")


if __name__ == "__main__":
    main()
