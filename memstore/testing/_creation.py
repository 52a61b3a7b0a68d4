"""Conformance: what ``store()`` accepts, rejects and returns."""

from __future__ import annotations

from datetime import UTC

import pytest

from memstore.clock import FakeClock
from memstore.errors import ValidationError
from memstore.model import Citation, Kind, MemoryDraft, Status, Surface
from memstore.store import MemoryStore
from memstore.testing._world import API, READER, WRITER, ConformanceBase, draft

_BAD_DRAFTS = {
    "empty subject": (draft(subject=""), "subject"),
    "blank subject": (draft(subject="   "), "subject"),
    "subject over 200": (draft(subject="s" * 201), "subject"),
    "empty fact": (draft(fact=""), "fact"),
    "fact over 4000": (draft(fact="f" * 4001), "fact"),
    "reason over 4000": (draft(reason="r" * 4001), "reason"),
    "fact without citation": (draft(citations=()), "citations"),
    "21 citations": (draft(citations=tuple(f"a.py:{i}" for i in range(1, 22))), "citations"),
    "absolute path": (draft(citations=("/etc/passwd:1",)), "citations[0]"),
    "dot-dot segment": (draft(citations=("src/../../secret:1",)), "citations[0]"),
    "backslash": (draft(citations=("src\\a.py:1",)), "citations[0]"),
    "NUL": (draft(citations=("src/a\x00.py:1",)), "citations[0]"),
    "empty path": (draft(citations=(":3",)), "citations[0]"),
    "line zero": (draft(citations=("a.py:0",)), "citations[0]"),
    "no line": (draft(citations=("a.py",)), "citations[0]"),
    "bad repo": (draft(repo="not-a-repo"), "repo"),
}


class CreationTests(ConformanceBase):
    """``store()``: validation, defaults, and what comes back."""

    def test_store_returns_the_stored_memory(self, store: MemoryStore, clock: FakeClock) -> None:
        memory = store.store(draft(), actor=WRITER, surface=Surface.CODE_REVIEW)
        assert memory.repo == API
        assert memory.kind is Kind.FACT
        assert memory.subject == "API version synchronization"
        assert memory.author == "wes"
        assert memory.surface is Surface.CODE_REVIEW
        assert memory.status is Status.ACTIVE
        assert memory.supersedes is None
        assert memory.created_at == memory.refreshed_at == clock.now()
        assert memory.created_at.tzinfo is not None
        assert memory.created_at.utcoffset() == UTC.utcoffset(None)

    def test_string_citations_are_parsed(self, store: MemoryStore) -> None:
        memory = self.fact(store)
        assert memory.citations == (
            Citation("src/client/sdk/constants.ts", 12),
            Citation("server/routes/api.go", 8),
        )

    def test_citation_objects_keep_snippet_and_commit(self, store: MemoryStore) -> None:
        cited = Citation("docs/api-reference.md", 37, 40, snippet="Version: v2.1.4", commit="a1b2c3d4")
        memory = store.store(draft(citations=(cited,)), actor=WRITER, surface=Surface.CLI)  # type: ignore[arg-type]
        assert store.get(memory.id, actor=WRITER).citations == (cited,)

    def test_ids_are_unique(self, store: MemoryStore) -> None:
        ids = {self.fact(store).id for _ in range(50)}
        assert len(ids) == 50

    @pytest.mark.parametrize("case", sorted(_BAD_DRAFTS))
    def test_bad_draft_is_rejected_naming_the_field(self, store: MemoryStore, case: str) -> None:
        bad, field = _BAD_DRAFTS[case]
        with pytest.raises(ValidationError) as caught:
            store.store(bad, actor=WRITER, surface=Surface.CODING_AGENT)
        assert caught.value.field == field
        assert str(caught.value).startswith(field)
        assert store.recent(API, actor=WRITER, surface=Surface.CLI) == []

    def test_limits_are_inclusive(self, store: MemoryStore) -> None:
        memory = store.store(
            draft(
                subject="s" * 200,
                fact="f" * 4000,
                reason="r" * 4000,
                citations=tuple(f"a.py:{i}" for i in range(1, 21)),
            ),
            actor=WRITER,
            surface=Surface.CODING_AGENT,
        )
        assert len(memory.citations) == 20
        assert len(store.get(memory.id, actor=WRITER).fact) == 4000

    def test_preference_needs_no_citation(self, store: MemoryStore) -> None:
        self.need(store, "preferences")
        memory = store.store(
            MemoryDraft(API, Kind.PREFERENCE, "Tone", "Prefers terse review comments."),
            actor=READER,
            surface=Surface.CLI,
        )
        assert memory.citations == ()
        assert memory.kind is Kind.PREFERENCE

    def test_recent_limit_is_validated(self, store: MemoryStore) -> None:
        with pytest.raises(ValidationError) as caught:
            store.recent(API, actor=WRITER, surface=Surface.CLI, limit=0)
        assert caught.value.field == "limit"

    def test_text_round_trips_exactly(self, store: MemoryStore) -> None:
        text = "Ünïcödé — quotes \"x\" 'y' `z`\nsecond line\ttab; DROP TABLE memories; --"
        memory = store.store(draft(fact=text, reason=text), actor=WRITER, surface=Surface.CLI)
        again = store.get(memory.id, actor=WRITER)
        assert (again.fact, again.reason) == (text, text)
        assert again == memory
