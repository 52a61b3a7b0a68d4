"""bettermemory's staleness judgement as a verifier (`memstore.backends.bettermemory.BettermemoryVerifier`),
on a small real git history: what it keeps, what it puts out of use, and what it cannot see."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, Verdict, VerdictStatus, verify_memory
from memstore.verify.history import HistoryBuilder
from tests.extras import need

SETTINGS = """\
POOL_SIZE = 20
RETRIES = 3


def connect(host):
    return host
"""


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    """Each memory's verdict at the newer commit: RETRIES changed, connect()'s body edited (a
    line above moved everything down), app/old.py deleted."""
    need("bettermemory")
    from memstore.backends.bettermemory import BettermemoryVerifier

    b = HistoryBuilder().write("app/settings.py", SETTINGS).write("app/old.py", "LEGACY_TIMEOUT = 30\n")
    b.write("README.md", "The service.\n").commit("start", label="old")
    changed = SETTINGS.replace("RETRIES = 3", "RETRIES = 5").replace("return host", "return host.strip()")
    b.write("app/settings.py", "# settings\n" + changed).remove("app/old.py").commit("change", label="new")
    built = b.build(tmp_path_factory.mktemp("bm") / "repo")
    now, old = GitCodebase(built.path, built.commits["new"]), built.commits["old"]
    at = datetime(2026, 1, 5, tzinfo=UTC)
    cases = {
        "unchanged constant": ("`POOL_SIZE` is 20.", "app/settings.py", 1),
        "changed constant": ("`RETRIES` is 3.", "app/settings.py", 2),
        "unchanged function": ("`connect()` is defined in the settings module.", "app/settings.py", 5),
        "edited body line": ("`connect()` returns the host as given.", "app/settings.py", 6),
        "deleted file": ("`LEGACY_TIMEOUT` is 30.", "app/old.py", 1),
        "untouched file": ("The README says what the service is.", "README.md", 1),
    }
    verifier = BettermemoryVerifier()
    return {
        name: verify_memory(
            Memory(
                id="mem_t", repo="acme/api", kind=Kind.FACT, subject="settings", fact=fact,
                citations=(Citation(path, line, commit=old),), reason="r", author="ana",
                surface=Surface.CODING_AGENT, created_at=at, refreshed_at=at,
            ),
            now,
            verifier=verifier,
        )
        for name, (fact, path, line) in cases.items()
    }  # fmt: skip


def test_an_unchanged_citation_is_fresh(judged: dict[str, Verdict]) -> None:
    for name in ("unchanged constant", "unchanged function", "untouched file"):
        assert judged[name].status is VerdictStatus.VALID, name
        assert judged[name].reason == "bettermemory: fresh"
        assert judged[name].uncertain == ""


def test_a_changed_constant_fails_its_literal_claim(judged: dict[str, Verdict]) -> None:
    """RETRIES=3 was declared (the cited line at the citation's commit); the commit touched that
    binding, so the verdict asks for a spot-check, and memory_verify's claim gate finds 5."""
    verdict = judged["changed constant"]
    assert verdict.status is VerdictStatus.CONTRADICTED
    assert [c.claim for c in verdict.contradictions] == ["app/settings.py::RETRIES=3"]
    assert "currently `5`, not `3`" in verdict.reason
    assert verdict.corrected is None  # bettermemory leaves the rewrite to the agent


def test_a_deleted_file_fails_its_path_claim(judged: dict[str, Verdict]) -> None:
    verdict = judged["deleted file"]
    assert verdict.status is VerdictStatus.MISSING
    assert "app/old.py" in [c.claim for c in verdict.contradictions]


def test_an_edited_line_inside_a_function_stays_fresh(judged: dict[str, Verdict]) -> None:
    """Declaring a claim on a file narrows its commit-drift alarm to the claimed bindings: a
    changed body line under a path claim is no drift to bettermemory (by design), nor is a moved line."""
    assert judged["edited body line"].status is VerdictStatus.VALID
    assert judged["unchanged constant"].corrected is None  # moved down a line: never re-anchored


def test_the_memory_store_keeps_its_citations_in_the_body(tmp_path: Path) -> None:
    """bettermemory's memories cite code in their body; the adapter reads them back from there."""
    need("bettermemory")
    from memstore import Access, AccessPolicy, Actor, MemoryDraft, open_store

    store = open_store(f"bettermemory:///{tmp_path}", access=AccessPolicy().grant("ana", "*", Access.ADMIN))
    draft = MemoryDraft("acme/api", Kind.FACT, "Pool", "The pool keeps 20 connections.", ["app/db.py:3-4"], "why")
    memory = store.store(draft, actor=Actor("ana"), surface=Surface.CLI)
    [file] = (tmp_path / "acme%2Fapi" / ".claude-memory").glob("*.md")
    assert file.read_text(encoding="utf-8").endswith("\n---\n\nThe pool keeps 20 connections.\n\n`app/db.py:3-4`")
    assert [str(c) for c in store.get(memory.id, actor=Actor("ana")).citations] == ["app/db.py:3-4"]
