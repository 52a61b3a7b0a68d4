"""Other projects' stores (``memcite:``, ``mem0:``, ``mcp:``, ``repomemory:``) through the conformance suite.

What a store does not claim is skipped as not applicable; a promise it claims and breaks is a
finding about that store (docs/stores.md, "Findings"), marked here as an expected failure that
must keep failing (``strict``): a fixed store turns it into a test to update, never a silent pass.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memstore import AccessPolicy, Clock, MemoryStore, UlidIds, open_store
from memstore.testing import StoreConformance
from tests.extras import need

# What each adapter's store breaks of the promises it claims (docs/stores.md, "Findings").
FINDINGS: dict[str, dict[str, str]] = {
    "bettermemory": {
        "test_ids_are_unique": "bettermemory's de-duplication refuses the same text stored again",
        "test_recent_is_newest_refreshed_first": "bettermemory refuses a one-word fact citing another's paths",
        "test_recent_ties_are_broken_by_created_at_then_id": "bettermemory refuses a short fact citing the same paths",
        "test_recent_honours_the_limit": "bettermemory refuses a two-word fact citing another's paths",
    },
    "memcite": {
        "test_ids_are_unique": "memcite returns the memory it has when the same text is stored again",
        "test_memory_lives_until_the_window_ends": "memcite's get() returns a memory past its ttl",
        "test_expired_memory_cannot_be_refreshed": "memcite's get() returns a memory past its ttl",
        "test_refresh_restarts_the_window": "memcite's ttl runs from creation: use does not renew it",
    },
    "facto": {},
    "mcp:server-memory": {},
    "repomemory": {
        "test_string_citations_are_parsed": "repo-memory keeps one file per fact: a second citation is dropped",
        "test_limits_are_inclusive": "repo-memory keeps one file per fact: a second citation is dropped",
    },
    "mem0": {
        "test_memory_lives_until_the_window_ends": "mem0's get() returns a memory past its expiration date",
        "test_expired_memory_cannot_be_refreshed": "mem0's get() returns a memory past its expiration date",
        "test_preference_never_reaches_code_review": "mem0 knows no surfaces: a preference reaches code review",
        "test_code_review_cannot_store_a_preference": "mem0 knows no surfaces: code review stores preferences",
        "test_nobody_else_sees_a_preference": "mem0's get() by id is not scoped: anyone reads a preference",
    },
}


@pytest.fixture(params=sorted(FINDINGS))
def adapter(request: pytest.FixtureRequest) -> str:
    name = str(request.param)
    if name == "mcp:server-memory" and shutil.which("mcp-server-memory") is None:
        if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
            pytest.fail("mcp-server-memory is not installed: npm install -g @modelcontextprotocol/server-memory")
        pytest.skip("mcp-server-memory is not installed: npm install -g @modelcontextprotocol/server-memory")
    modules = {
        "bettermemory": "bettermemory",
        "facto": "facto",
        "mem0": "mem0",
        "memcite": "agentic_memory",
        "repomemory": "repo_memory",
    }
    if name in modules:
        need(modules[name])
    test = getattr(request.node, "originalname", request.node.name)
    if test in FINDINGS[name]:
        request.applymarker(pytest.mark.xfail(strict=True, reason=FINDINGS[name][test]))
    return name


class TestForeignStores(StoreConformance):
    @pytest.fixture
    def store_factory(self, adapter: str, tmp_path: Path) -> Callable[..., MemoryStore]:
        counter = iter(range(1000))

        def make(access: AccessPolicy, clock: Clock, expiry: timedelta) -> MemoryStore:
            where = tmp_path / f"s{next(counter)}"
            uri = f"{adapter}?folder={where}" if adapter.startswith("mcp:") else f"{adapter}:///{where}"
            return open_store(uri, access=access, clock=clock, expiry=expiry, ids=UlidIds(9))

        return make


def test_a_run_on_another_projects_store_says_what_was_emulated_and_what_poisoned_it(tmp_path: Path) -> None:
    """The run's metadata and report.md name what memcite did itself and what was done around it,
    and the poisoning table counts the adversarial memories each store handed and what they did."""
    need("agentic_memory")
    from memstore.harness.evaluate import evaluate
    from memstore.harness.run.runner.pool import RunConfig, iter_arms
    from memstore.harness.scenarios.data import scenarios_dir
    from memstore.harness.scenarios.loader import load_library

    config = RunConfig(
        scenarios=tuple(load_library([scenarios_dir() / "adversarial-memories.yaml"])),
        arms=tuple(iter_arms(["no-memory", "trusting", "jit-verify"], ["sqlite:", "memcite:"])),
        workers=1,
    )
    evaluate(config, tmp_path / "run")
    run = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))["run"]
    assert sorted(run["store_profiles"]) == ["memcite:"]
    assert run["store_profiles"]["memcite:"]["emulated"]["expiry"].startswith("memcite's ttl judged on the store's")
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "- memcite: does itself: citations: FileRef evidence" in report
    poisoning = report.split("## Poisoning", 1)[1].split("\n\n")[1].splitlines()
    assert poisoning[2:] == [
        "| jit-verify/memcite | 4 | 2.00 | 1.000 [0.510, 1.000] 4/4 | 0.000 [0.000, 0.793] 0/1 |",
        "| jit-verify/sqlite | 4 | 2.00 | 1.000 [0.510, 1.000] 4/4 | 0.000 [0.000, 0.793] 0/1 |",
        "| trusting/memcite | 8 | 4.00 | 0.000 [0.000, 0.324] 0/8 | 1.000 [0.342, 1.000] 2/2 |",
        "| trusting/sqlite | 8 | 4.00 | 0.000 [0.000, 0.324] 0/8 | 1.000 [0.342, 1.000] 2/2 |",
    ]
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert '<ul id="store-profiles"><li>memcite: does itself: citations:' in page
    assert "<tr><td>trusting/memcite</td><td>8</td><td>4.00</td>" in page


def test_a_memcite_correction_in_the_same_words_is_a_version_of_its_own(tmp_path: Path) -> None:
    """A re-anchored memory keeps its words and moves its citation: memcite's own de-duplication
    would hand back the memory being corrected (and then fail to link it to itself)."""
    need("agentic_memory")
    from memstore import Access, Actor, Kind, MemoryDraft, Surface

    store = open_store(f"memcite:///{tmp_path}", access=AccessPolicy().grant("ana", "*", Access.ADMIN))
    ana = Actor("ana")
    old = store.store(
        MemoryDraft("acme/api", Kind.FACT, "API version", "The API version is 3", ["src/a.py:4"], "why"),
        actor=ana,
        surface=Surface.CLI,
    )
    moved = MemoryDraft("acme/api", Kind.FACT, "API version", "The API version is 3", ["src/a.py:9"], "why")
    new = store.store(moved, actor=ana, surface=Surface.CLI, supersedes=old.id)
    assert new.id != old.id
    assert [str(c) for c in new.citations] == ["src/a.py:9"]
    assert [m.id for m in store.history(new.id, actor=ana)] == [old.id, new.id]
    assert [m.id for m in store.recent("acme/api", actor=ana, surface=Surface.CLI)] == [new.id]
    again = store.store(moved, actor=ana, surface=Surface.CLI)  # a new memory in the same words: memcite's
    assert again.id == new.id  # de-duplication hands back the one it has


def test_mem0_runs_with_telemetry_off_a_closed_endpoint_and_a_stand_in_embedder(tmp_path: Path) -> None:
    need("mem0")
    import mem0.memory.main
    import mem0.memory.telemetry

    from memstore.backends.mem0 import DIMENSIONS, HashedWords, Mem0Store

    store = open_store(f"mem0:///{tmp_path}", access=AccessPolicy())
    assert isinstance(store, Mem0Store)
    engine = store._mem()
    assert mem0.memory.telemetry.MEM0_TELEMETRY is False
    assert mem0.memory.main.MEM0_TELEMETRY is False
    assert isinstance(engine.embedding_model, HashedWords)
    assert engine.llm.config.openai_base_url == "http://127.0.0.1:9/v1"  # nothing listens there
    assert not (Path.home() / ".mem0").exists() or os.environ.get("MEM0_DIR")
    embed = HashedWords().embed
    one, same, near, far = (embed(t) for t in ("pool_size is 10", "pool_size is 10", "the pool size", "retry after"))
    assert one == same
    assert len(one) == DIMENSIONS
    assert abs(sum(v * v for v in one) - 1.0) < 1e-9
    similarity = [sum(a * b for a, b in zip(one, other, strict=True)) for other in (near, far)]
    assert similarity[0] > 0.3 > similarity[1]
    store.close()


def test_memcites_own_validate_as_a_verifier_passes_a_wrong_fact_behind_an_unchanged_line(tmp_path: Path) -> None:
    """memcite's evidence check, measured as memstore's verifier is: an unchanged line is valid to
    it whatever the fact says (memstore's verifier reads the fact: contradicted); a moved line is
    found by its snapshot, a changed one is stale, a deleted file is gone."""
    need("agentic_memory")
    from datetime import UTC, datetime

    from memstore import Citation, Kind, Memory, Surface
    from memstore.backends.memcite import MemciteVerifier
    from memstore.verify import GitCodebase, VerdictStatus, verify_memory
    from memstore.verify.history import HistoryBuilder

    settings = "POOL_SIZE = 20  # connections the service keeps open\nRETRIES = 3\n"
    b = HistoryBuilder().write("app/settings.py", settings).write("app/old.py", "LEGACY_TIMEOUT = 30\n")
    b.commit("start", label="old")
    b.write("app/settings.py", "# settings\n" + settings.replace("RETRIES = 3", "RETRIES = 5"))
    b.remove("app/old.py")
    b.commit("change", label="new")
    built = b.build(tmp_path / "repo")
    now = GitCodebase(built.path, built.commits["new"])
    old = built.commits["old"]

    def memory(fact: str, path: str, line: int) -> Memory:
        at = datetime(2026, 1, 5, tzinfo=UTC)
        return Memory(
            id="mem_t", repo="acme/api", kind=Kind.FACT, subject="settings", fact=fact,
            citations=(Citation(path, line, commit=old),), reason="r", author="ana",
            surface=Surface.CODING_AGENT, created_at=at, refreshed_at=at,
        )  # fmt: skip

    wrong = memory("The pool keeps at most `10` connections (`POOL_SIZE`).", "app/settings.py", 1)
    assert verify_memory(wrong, now, verifier=MemciteVerifier()).status is VerdictStatus.REANCHORED
    assert verify_memory(wrong, now).status is VerdictStatus.CONTRADICTED
    moved = verify_memory(memory("`POOL_SIZE` is 20.", "app/settings.py", 1), now, verifier=MemciteVerifier())
    assert moved.corrected is not None
    assert [str(c) for c in moved.corrected.citations] == ["app/settings.py:2"]
    changed = verify_memory(memory("`RETRIES` is 3.", "app/settings.py", 2), now, verifier=MemciteVerifier())
    assert changed.status is VerdictStatus.CONTRADICTED
    assert changed.corrected is None  # memcite says stale, and reads no new value
    gone = verify_memory(memory("`LEGACY_TIMEOUT` is 30.", "app/old.py", 1), now, verifier=MemciteVerifier())
    assert gone.status is VerdictStatus.MISSING


def test_factos_trust_light_as_a_verifier_flags_every_memory_of_a_touched_file(tmp_path: Path) -> None:
    """Facto's rule, one area a cited file: a file a commit touched since puts every memory citing
    it out of use, whatever it says (and gives no correction); an untouched file keeps its memories."""
    need("facto")
    from datetime import UTC, datetime

    from memstore import Citation, Kind, Memory, Surface
    from memstore.backends.facto import FactoVerifier
    from memstore.verify import GitCodebase, VerdictStatus, verify_memory
    from memstore.verify.history import HistoryBuilder

    settings = "POOL_SIZE = 20\nRETRIES = 3\n"
    b = HistoryBuilder().write("app/settings.py", settings).write("app/old.py", "LEGACY = 30\n")
    b.write("app/keep.py", "NAME = 'api'\n").commit("start", label="old")
    b.write("app/settings.py", settings.replace("RETRIES = 3", "RETRIES = 5")).remove("app/old.py")
    b.commit("change", label="new")
    built = b.build(tmp_path / "repo")
    now, old = GitCodebase(built.path, built.commits["new"]), built.commits["old"]

    def verdict(fact: str, path: str, line: int, commit: str | None = old) -> VerdictStatus:
        at = datetime(2026, 1, 5, tzinfo=UTC)
        memory = Memory(
            id="mem_t", repo="acme/api", kind=Kind.FACT, subject="settings", fact=fact,
            citations=(Citation(path, line, commit=commit),), reason="r", author="ana",
            surface=Surface.CODING_AGENT, created_at=at, refreshed_at=at,
        )  # fmt: skip
        return verify_memory(memory, now, verifier=FactoVerifier()).status

    assert verdict("`POOL_SIZE` is 20.", "app/settings.py", 1) is VerdictStatus.CONTRADICTED  # still true
    assert verdict("`RETRIES` is 3.", "app/settings.py", 2) is VerdictStatus.CONTRADICTED
    assert verdict("`LEGACY` is 30.", "app/old.py", 1) is VerdictStatus.CONTRADICTED  # gone: no other outcome
    assert verdict("`NAME` is 'api'.", "app/keep.py", 1) is VerdictStatus.VALID
    assert verdict("`NAME` is 'web'.", "app/keep.py", 1) is VerdictStatus.VALID  # reads no fact
    assert verdict("`RETRIES` is 3.", "app/settings.py", 2, commit=None) is VerdictStatus.VALID  # not anchored
