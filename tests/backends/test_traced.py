"""``traced:INNER``: every store operation an OpenTelemetry span with the GenAI memory attributes,
read back from the file ``MEMSTORE_OTEL_FILE`` names (spans from a real SDK, in a process of its
own so that the tracer provider it sets up is its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memstore import AccessPolicy, Clock, MemoryStore, UlidIds, open_store
from memstore.errors import ConfigurationError
from memstore.testing import StoreConformance
from tests.extras import need

SCRIPT = """
from memstore import Access, AccessPolicy, Actor, Citation, Kind, MemoryDraft, Surface, open_store
from memstore.errors import NotFound

policy = AccessPolicy()
policy.grant("ana", "acme/api", Access.WRITE)
store = open_store("traced:sqlite:///" + __import__("sys").argv[1], access=policy)
ana, coding = Actor("ana"), Surface.CODING_AGENT
draft = MemoryDraft("acme/api", Kind.FACT, "pool", "POOL_SIZE is 20.", (Citation("app/db.py", 3),), "seen")
first = store.store(draft, actor=ana, surface=coding)
correction = __import__("dataclasses").replace(draft, fact="POOL_SIZE is 30.")
store.store(correction, actor=ana, surface=coding, supersedes=first.id)
store.recent("acme/api", actor=ana, surface=coding)
store.search("acme/api", "pool size", actor=ana, surface=coding)
try:
    store.get("mem_nosuch", actor=ana)
except NotFound:
    pass
"""


def _spans(tmp_path: Path, **env: str) -> list[dict[str, object]]:
    traced = tmp_path / "spans.jsonl"
    environment = {**os.environ, "MEMSTORE_OTEL_FILE": str(traced), **env}
    subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "m.db")], env=environment, check=True, timeout=60)
    return [json.loads(line) for line in traced.read_text(encoding="utf-8").splitlines()]


def test_each_store_operation_is_a_genai_memory_span_with_memstores_own_attributes(tmp_path: Path) -> None:
    need("opentelemetry.sdk")
    spans = _spans(tmp_path)
    store_id = f"sqlite:///{tmp_path / 'm.db'}"
    assert [(s["name"], s["attributes"]["memstore.operation"]) for s in spans] == [  # type: ignore[index]
        (f"create_memory_store {store_id}", "open"),
        (f"create_memory {store_id}", "store"),
        (f"update_memory {store_id}", "store"),
        (f"search_memory {store_id}", "recent"),
        (f"search_memory {store_id}", "search"),
        (f"search_memory {store_id}", "get"),
    ]
    created, corrected, recent, search, missing = (s["attributes"] for s in spans[1:])
    assert isinstance(created, dict)
    assert isinstance(corrected, dict)
    assert created["gen_ai.operation.name"] == "create_memory"
    assert created["gen_ai.provider.name"] == "memstore"
    assert created["gen_ai.memory.store.id"] == store_id
    assert (created["memstore.repository"], created["memstore.surface"], created["memstore.user"]) == (
        "acme/api",
        "coding_agent",
        "ana",
    )
    assert created["memstore.memory.status"] == "active"
    assert str(created["memstore.memory.expires_at"]).endswith("+00:00")
    assert corrected["memstore.memory.supersedes"] == created["gen_ai.memory.record.id"]
    assert recent["gen_ai.memory.record.count"] == 1  # type: ignore[index]  # the correction only
    assert "gen_ai.memory.query.text" not in search  # content is recorded only when asked for
    assert missing["gen_ai.memory.record.id"] == "mem_nosuch"  # type: ignore[index]
    assert [s["status"] for s in spans] == ["UNSET"] * 5 + ["ERROR"]  # NotFound: an error span, raised


def test_the_query_text_is_recorded_only_where_content_capture_is_on(tmp_path: Path) -> None:
    need("opentelemetry.sdk")
    spans = _spans(tmp_path, MEMSTORE_OTEL_CAPTURE_CONTENT="1")
    (search,) = [s for s in spans if s["attributes"]["memstore.operation"] == "search"]  # type: ignore[index]
    assert search["attributes"]["gen_ai.memory.query.text"] == "pool size"  # type: ignore[index]


def test_the_wrapper_searches_only_where_its_store_does_and_needs_a_store() -> None:
    need("opentelemetry.sdk")
    assert callable(getattr(open_store("traced:sqlite://:memory:", access=AccessPolicy()), "search", None))
    assert not callable(getattr(open_store("traced:naive://", access=AccessPolicy()), "search", None))
    with pytest.raises(ConfigurationError, match="traced: wraps a store"):
        open_store("traced:", access=AccessPolicy())


class TestTracedStore(StoreConformance):
    """The wrapper keeps every promise of the store it wraps (the conformance suite on traced:sqlite:)."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[..., MemoryStore]:
        need("opentelemetry.sdk")
        counter = iter(range(1000))

        def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
            uri = f"traced:sqlite:///{tmp_path / f's{next(counter)}.db'}"
            return open_store(uri, access=access, clock=clock, expiry=expiry, ids=UlidIds(9))

        return make


MCP_SCRIPT = """
import json, subprocess, sys
from pathlib import Path

import anyio
from mcp import Client

from memstore import Access, AccessPolicy, Actor, Surface, open_store
from memstore.mcp.server import MemoryService, build_server
from memstore.verify import GitCodebase, GitRepository, WorkingTree

folder = Path(sys.argv[1])
repo = folder / "repo"
(repo / "app").mkdir(parents=True)
(repo / "app" / "db.py").write_text("POOL_SIZE = 20\\n")
for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
    subprocess.run(["git", "-C", str(repo), *command], check=True)
policy = AccessPolicy()
policy.grant("ana", "acme/api", Access.WRITE)
store = open_store("traced:sqlite:///" + str(folder / "m.db"), access=policy)
head = GitCodebase(GitRepository(repo), "HEAD")
service = MemoryService(store, Actor("ana"), Surface.CODING_AGENT, "acme/api", head, WorkingTree(repo, history=head))


async def main() -> None:
    async with Client(build_server(service)) as client:
        stored = await client.call_tool("store_memory", {"subject": "pool", "fact": "POOL_SIZE is 20.",
                                                         "citations": ["app/db.py:1"]})
        memory_id = json.loads(stored.content[0].text)["id"]
        await client.call_tool("verify_memory", {"memory_id": memory_id})
        await client.call_tool("vote_memory", {"memory_id": memory_id, "up": True, "reason": "it held"})
        await client.call_tool("recent_memories", {})


anyio.run(main)
"""


def test_the_mcp_servers_tool_calls_are_traced_through_its_store(tmp_path: Path) -> None:
    need("opentelemetry.sdk")
    traced = tmp_path / "spans.jsonl"
    environment = {**os.environ, "MEMSTORE_OTEL_FILE": str(traced)}
    subprocess.run([sys.executable, "-c", MCP_SCRIPT, str(tmp_path)], env=environment, check=True, timeout=60)
    every = [json.loads(line) for line in traced.read_text(encoding="utf-8").splitlines()]
    spans = [s for s in every if s["attributes"].get("gen_ai.provider.name") == "memstore"]  # the MCP SDK's own too
    calls = [s["attributes"]["memstore.operation"] for s in spans]
    assert calls[:2] == ["open", "store"]
    assert "recent" in calls
    (stored,) = [s for s in spans if s["attributes"]["memstore.operation"] == "store"]
    assert stored["attributes"]["memstore.repository"] == "acme/api"
    (verified,) = [s for s in spans if s["attributes"]["memstore.operation"] == "verify"]
    assert verified["attributes"]["gen_ai.operation.name"] == "verify_memory"
    assert verified["attributes"]["memstore.verdict"] == "valid"
    assert verified["attributes"]["gen_ai.memory.record.id"] == stored["attributes"]["gen_ai.memory.record.id"]
    assert verified["attributes"]["memstore.memory.expires_at"] == stored["attributes"]["memstore.memory.expires_at"]
    (voted,) = [s for s in spans if s["attributes"]["memstore.operation"] == "vote"]
    vote = voted["attributes"]
    assert (vote["gen_ai.operation.name"], vote["memstore.vote"]) == ("update_memory", "up")
