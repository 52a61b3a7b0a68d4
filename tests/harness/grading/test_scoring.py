"""Scoring from actions: stale use found by comparing what an agent did with each bad memory's
error, outcomes from the change, findings and answer, healing checked against the code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstore import open_store
from memstore.access import Access, AccessPolicy, Actor
from memstore.clock import FakeClock
from memstore.harness.grading.actions import Actions, parse_diff
from memstore.harness.grading.scoring import healed, outcome, stale_uses, states
from memstore.harness.records import Outcome
from memstore.harness.scenarios.scenario import Check, Claim, Finding, Location, Origin, SeedMemory, Task, Truth
from memstore.model import Citation, Kind, Memory, MemoryDraft, Status, Surface

NOW = datetime(2026, 1, 1, tzinfo=UTC)


NO_CLAIM = Claim()


def _seed(key: str, truth: Truth, claim: Claim = NO_CLAIM, origin: Origin = Origin.STALE) -> SeedMemory:
    return SeedMemory(
        key, origin, truth, "acme/api", Kind.FACT, "ana", Surface.CODE_REVIEW, "initial", True,
        "API version", "The API version is v2.0.0.", ("a.ts:3",), "r", timedelta(days=1), claim=claim,
    )  # fmt: skip


def _memory(memory_id: str, *citations: str) -> Memory:
    return Memory(
        id=memory_id, repo="acme/api", kind=Kind.FACT, subject="API version", fact="The API version is v2.0.0.",
        citations=tuple(Citation.parse(c) for c in citations), reason="r", author="ana",
        surface=Surface.CODE_REVIEW, created_at=NOW, refreshed_at=NOW, supersedes=None, status=Status.ACTIVE,
    )  # fmt: skip


CODING = Task("bump", Surface.CODING_AGENT, "dev", "Bump it.", needs=("sync",),
              check=Check(contains=(("a.ts", "v2.2.0"), ("docs.md", "v2.2.0"))))  # fmt: skip
VERSION = Location("a.ts", r'V = "(v[0-9.]+)"')


def test_a_stale_value_written_said_or_flagged_is_a_stale_use() -> None:
    contradicted = _seed("value", Truth.CONTRADICTED, Claim(states="v2.0.0", at=VERSION))
    handed, truth = [_memory("m1", "a.ts:3")], {"m1": contradicted}
    wrote = Actions(frozenset({"a.ts"}), added=(("a.ts", 3, 'V = "v2.0.0"'),))
    said = Actions(answer="It is 2.0.0.")
    flagged = Actions(findings=(("a.ts", "should be v2.0.0"),))
    clean = Actions(frozenset({"a.ts"}), added=(("a.ts", 3, 'V = "v2.2.0"'),), answer="v2.2.0")
    cli = Task("ask", Surface.CLI, "dev", "Which?")
    assert stale_uses(CODING, wrote, handed, truth) == ["m1"]
    assert stale_uses(cli, said, handed, truth) == ["m1"]
    assert stale_uses(cli, flagged, handed, truth) == ["m1"]
    assert stale_uses(CODING, clean, handed, truth) == []
    assert stale_uses(CODING, wrote, handed, {}) == []  # a lapsed label is not judged


def test_a_use_event_is_not_an_action() -> None:
    """Only what was done counts: a memory handed and 'used' with nothing following is no stale use."""
    contradicted = _seed("value", Truth.CONTRADICTED, Claim(states="v2.0.0", at=VERSION))
    assert stale_uses(CODING, Actions(), [_memory("m1", "a.ts:3")], {"m1": contradicted}) == []


def test_a_skipped_file_the_change_needed_is_a_stale_use() -> None:
    adversarial = _seed("never", Truth.UNSUPPORTED, Claim(skips=("docs.md",)), Origin.ADVERSARIAL)
    handed, truth = [_memory("m2", "docs.md:1")], {"m2": adversarial}
    assert stale_uses(CODING, Actions(frozenset({"a.ts"})), handed, truth) == ["m2"]
    assert stale_uses(CODING, Actions(frozenset({"a.ts", "docs.md"})), handed, truth) == []


def test_editing_or_flagging_a_file_a_memory_wrongly_points_to_is_a_stale_use() -> None:
    unsupported = _seed("points", Truth.UNSUPPORTED, Claim(points_to=("lib/util.py",)), Origin.ADVERSARIAL)
    handed, truth = [_memory("m3", "lib/util.py:1")], {"m3": unsupported}
    assert stale_uses(CODING, Actions(frozenset({"lib/util.py", "a.ts"})), handed, truth) == ["m3"]
    assert stale_uses(CODING, Actions(findings=(("lib/util.py", ""),)), handed, truth) == ["m3"]
    assert stale_uses(CODING, Actions(frozenset({"a.ts"})), handed, truth) == []


def test_a_moved_memory_misleads_when_its_stale_line_is_edited_and_the_true_one_is_not() -> None:
    moved = _seed("sync", Truth.MOVED, origin=Origin.GENUINE)
    handed, truth = [_memory("m4", "a.ts:3", "docs.md:5")], {"m4": moved}
    moved_to = {"m4": [("a.ts", 5), ("docs.md", 5)]}  # a.ts's cited line now stands at 5
    wrong = Actions(frozenset({"a.ts"}), removed=(("a.ts", 3, "// a comment"),))
    right = Actions(frozenset({"a.ts"}), removed=(("a.ts", 5, 'V = "v2.1.0"'),))
    both = Actions(frozenset({"a.ts"}), removed=(("a.ts", 3, "x"), ("a.ts", 5, "y")))
    assert stale_uses(CODING, wrong, handed, truth, moved_to) == ["m4"]
    assert stale_uses(CODING, right, handed, truth, moved_to) == []
    assert stale_uses(CODING, both, handed, truth, moved_to) == []
    # its docs citation was renamed: acting on the memory but leaving the file it now lives in untouched
    renamed = {"m4": [("a.ts", 3), ("docs/new.md", 5)]}
    assert stale_uses(CODING, Actions(frozenset({"a.ts"})), handed, truth, renamed) == ["m4"]
    assert stale_uses(CODING, Actions(frozenset({"a.ts", "docs/new.md"})), handed, truth, renamed) == []
    assert stale_uses(CODING, Actions(frozenset({"b.ts"})), handed, truth, renamed) == []  # it never acted on it
    other = Task("other", Surface.CODING_AGENT, "dev", "Other.", needs=("something-else",))
    assert stale_uses(other, wrong, handed, truth, moved_to) == []  # a memory the task did not need


def test_outcomes_per_surface() -> None:
    assert outcome(CODING, Actions(), True) == Outcome(merged=True, task_success=True)
    review = Task("r", Surface.CODE_REVIEW, "rev", "Review.", findings=(Finding("b.ts"), Finding("c.md")))
    partial = outcome(review, Actions(findings=(("b.ts", ""), ("z.ts", ""))), None)
    assert partial == Outcome(findings=2, correct_findings=1, expected_findings=2, task_success=False)
    exact = outcome(review, Actions(findings=(("b.ts", ""), ("c.md", ""))), None)
    assert exact.task_success is True
    cli = Task("q", Surface.CLI, "dev", "How long?", answer="30d")
    assert outcome(cli, Actions(answer="30 days"), None) == Outcome(answer_correct=True, task_success=True)
    # an answer read off the code at the end of the session wins over the scenario's constant
    assert outcome(cli, Actions(answer="14 days"), None, expected_answer="14d").answer_correct is True


def test_the_diff_is_read_the_same_for_every_agent() -> None:
    diff = (
        "diff --git a/a.ts b/a.ts\nindex 1..2 100644\n--- a/a.ts\n+++ b/a.ts\n@@ -3 +3 @@\n"
        '-V = "v2.1.0"\n+V = "v2.2.0"\n'
        "diff --git a/old.md b/new.md\nsimilarity index 90%\nrename from old.md\nrename to new.md\n"
        "--- a/old.md\n+++ b/new.md\n@@ -1,0 +2 @@\n+added\n"
    )
    touched, added, removed = parse_diff(diff)
    assert touched == {"a.ts", "old.md", "new.md"}
    assert added == (("a.ts", 3, 'V = "v2.2.0"'), ("new.md", 2, "added"))
    assert removed == (("a.ts", 3, 'V = "v2.1.0"'),)


def test_states_reads_values_as_values() -> None:
    assert states("kept for 14 days", "14d")
    assert not states("kept for 140 days", "14d")
    assert states("borrow with `borrow_connection()`", "borrow_connection()")
    assert not states("borrow with get_connection()", "borrow_connection()")


def test_healing_needs_a_correction_that_is_true() -> None:
    """A bad memory is healed when retired, or superseded by a version stating the value the
    code holds; not when superseded by another wrong value, nor by one that keeps the stale one."""
    access = AccessPolicy()
    access.grant("ana", "acme/api", Access.ADMIN)
    store = open_store("memory://", access=access, clock=FakeClock(NOW))
    actor = Actor("ana")

    def put(fact: str, supersedes: str | None = None) -> str:
        draft = MemoryDraft("acme/api", Kind.FACT, "API version", fact, ("a.ts:3",), "r")
        return store.store(draft, actor=actor, surface=Surface.CODE_REVIEW, supersedes=supersedes).id

    claim = Claim(states="v2.0.0", at=VERSION)
    bad = {i: _seed(f"k{i}", Truth.CONTRADICTED, claim) for i in (put("v2.0.0"), put("v2.0.0"), put("v2.0.0"),
                                                                 put("v2.0.0"))}  # fmt: skip
    retired, right, wrong, stale = bad
    store.retire(retired, actor=actor, reason="nothing behind it")
    put("The API version is v2.1.0.", supersedes=right)
    put("The API version is v9.9.9.", supersedes=wrong)
    put("The API version is v2.1.0 (it was v2.0.0).", supersedes=stale)
    result = healed(store, bad, [lambda where: "v2.1.0"])
    assert result == sorted([retired, right])  # the retired one and the true correction
