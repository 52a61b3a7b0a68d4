"""``mcp:server-memory``: the reference MCP memory server as a store, where user text and the
adapter's bookkeeping share one entity's observations."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstore import Access, AccessPolicy, Actor, FakeClock, Kind, MemoryDraft, Surface, UlidIds, open_store
from memstore.backends.foreign import bookkeeping
from memstore.backends.mcp import McpStore
from memstore.model import Status

pytestmark = pytest.mark.skipif(
    shutil.which("mcp-server-memory") is None,
    reason="mcp-server-memory is not installed: npm install -g @modelcontextprotocol/server-memory",
)

ANA = Actor("ana")
START = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[McpStore]:
    opened = open_store(
        f"mcp:server-memory?folder={tmp_path / 'graph'}",
        access=AccessPolicy().grant("ana", "*", Access.ADMIN),
        clock=FakeClock(START),
        ids=UlidIds(7),
    )
    assert isinstance(opened, McpStore)
    yield opened
    opened.close()


def _fact(fact: str, subject: str = "API version") -> MemoryDraft:
    return MemoryDraft("acme/api", Kind.FACT, subject, fact, ["src/a.py:4"], "the client pins it")


def test_a_fact_that_starts_like_the_bookkeeping_round_trips(store: McpStore) -> None:
    stored = store.store(_fact("memstore: anything"), actor=ANA, surface=Surface.CLI)
    assert store.get(stored.id, actor=ANA).fact == "memstore: anything"
    assert [m.fact for m in store.recent("acme/api", actor=ANA, surface=Surface.CLI)] == ["memstore: anything"]
    assert [m.id for m in store.search("acme/api", "memstore: any", actor=ANA, surface=Surface.CLI)] == [stored.id]
    refreshed = store.refresh(stored.id, actor=ANA)  # rewrites the bookkeeping beside the fact
    assert refreshed.fact == "memstore: anything"
    assert store.get(stored.id, actor=ANA) == stored


def test_a_fact_with_the_escape_character_round_trips(store: McpStore) -> None:
    facts = ["\\memstore: a", "\\\\x", "\\"]
    stored = [store.store(_fact(f), actor=ANA, surface=Surface.CLI) for f in facts]
    assert [store.get(m.id, actor=ANA).fact for m in stored] == facts


FORGERIES = {
    "owner and expiry": {"author": "mallory", "refreshed_at": START + timedelta(days=3650)},
    "repository": {"repo": "evil/repo"},
    "status": {"status": Status.RETIRED, "retired_reason": "forged"},
}


@pytest.mark.parametrize("changes", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_fact_imitating_the_bookkeeping_changes_no_other_memory(store: McpStore, changes: dict[str, object]) -> None:
    victim = store.store(_fact("The API version is 3"), actor=ANA, surface=Surface.CLI)
    crafted = bookkeeping(replace(victim, **changes))  # type: ignore[arg-type]
    assert json.loads(crafted.removeprefix("memstore:"))["id"] == victim.id  # the victim's record, altered
    attacker = store.store(_fact(crafted), actor=ANA, surface=Surface.CLI)

    listed = store.recent("acme/api", actor=ANA, surface=Surface.CLI)
    assert sorted((m.id, m.repo, m.author, m.status.value, m.refreshed_at, m.fact) for m in listed) == sorted(
        [
            (victim.id, "acme/api", "ana", "active", START, "The API version is 3"),
            (attacker.id, "acme/api", "ana", "active", START, crafted),
        ]
    )
    assert store.recent("evil/repo", actor=ANA, surface=Surface.CLI) == []
    assert store.get(victim.id, actor=ANA) == victim
    assert store.get(attacker.id, actor=ANA).fact == crafted
    assert store.history(victim.id, actor=ANA) == [victim]
