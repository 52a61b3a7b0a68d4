"""Metrics on small tables whose figures were worked out by hand."""

from __future__ import annotations

import pandas as pd

from memstore.harness.metrics import compute, rate
from memstore.harness.runner import SESSION_COLUMNS


def _session(task: str, surface: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(SESSION_COLUMNS)
    row.update(
        arm="a/memory",
        agent="a",
        store="memory",
        scenario="s",
        trial=0,
        task=task,
        surface=surface,
        user="u",
        index=0,
        handed=2,
        injected_chars=100,
        verify_reads=3,
        leaks=0,
        expiry_violations=0,
        bad_given=0,
        bad_refused=0,
        usable_given=0,
        usable_refused=0,
        moved_given=0,
        moved_reanchored=0,
        stale_use=False,
    )
    row.update(values)
    return row


def _event(task: str, kind: str, memory: str, truth: str = "", origin: str = "") -> dict[str, object]:
    return {
        "arm": "a/memory",
        "scenario": "s",
        "trial": 0,
        "task": task,
        "kind": kind,
        "memory_id": memory,
        "truth": truth,
        "origin": origin,
        "detail": "",
    }


SESSIONS = pd.DataFrame(
    [
        _session(
            "c1", "coding_agent", merged=True, needed_at_5=True, needed_at_50=True, moved_given=1, moved_reanchored=1
        ),
        _session("c2", "coding_agent", merged=False, needed_at_5=False, needed_at_50=True, stale_use=True),
        _session("c3", "coding_agent", merged=True, leaks=1),
        _session("r1", "code_review", findings=4, correct_findings=3, expected_findings=6, moved_given=1),
        _session("q1", "cli", answer_correct=True, expiry_violations=2),
    ]
)
EVENTS = pd.DataFrame(
    [
        # c1 is handed a bad (stale) memory and a valid one; it refuses the bad one
        _event("c1", "retrieve", "m1", "contradicted", "stale"),
        _event("c1", "retrieve", "m2", "valid", "genuine"),
        _event("c1", "refuse", "m1"),
        _event("c1", "retire", "m1"),
        _event("c1", "use", "m2"),
        # c2 is handed the abandoned m3 and uses it; and the valid m2, which it refuses (a false invalidation)
        _event("c2", "retrieve", "m3", "missing", "abandoned"),
        _event("c2", "use", "m3"),
        _event("c2", "retrieve", "m2", "valid", "genuine"),
        _event("c2", "refuse", "m2"),
        # r1 is handed m4 (adversarial, unsupported) and ignores it; m5 was made in the run (no label)
        _event("r1", "retrieve", "m4", "unsupported", "adversarial"),
        _event("r1", "retrieve", "m5"),
    ]
)
TRIALS = pd.DataFrame([{"arm": "a/memory", "scenario": "s", "trial": 0, "healed": 1, "bad_initial": 3}])


def _metrics() -> dict[str, object]:
    return compute({"sessions": SESSIONS, "events": EVENTS, "trials": TRIALS, "findings": pd.DataFrame()})["a/memory"]


def test_rates_keep_their_counts() -> None:
    assert rate(1, 3) == {"value": 0.333333, "k": 1, "n": 3}
    assert rate(0, 0) is None


def test_session_metrics_by_hand() -> None:
    overall = _metrics()["overall"]
    assert overall["merge_rate"] == {"value": 0.666667, "k": 2, "n": 3}
    assert overall["review_precision"] == {"value": 0.75, "k": 3, "n": 4}
    assert overall["review_recall"] == {"value": 0.5, "k": 3, "n": 6}
    assert overall["answer_accuracy"] == {"value": 1.0, "k": 1, "n": 1}
    assert overall["stale_use_rate"] == {"value": 0.2, "k": 1, "n": 5}
    assert overall["reanchor_accuracy"] == {"value": 0.5, "k": 1, "n": 2}
    assert overall["self_heal_rate"] == {"value": 0.333333, "k": 1, "n": 3}
    assert overall["needed_recall_at_5"] == {"value": 0.5, "k": 1, "n": 2}
    assert overall["needed_recall_at_50"] == {"value": 1.0, "k": 2, "n": 2}
    assert (overall["leaks"], overall["expiry_violations"]) == (1, 2)
    assert (overall["injected_chars"], overall["verify_reads"]) == (100.0, 3.0)


def test_memory_metrics_by_hand() -> None:
    overall = _metrics()["overall"]
    # bad pairs: (c1,m1) refused, (c2,m3) used, (r1,m4) ignored -> detection 1/3, bad use 1/3
    assert overall["detection_recall"] == {"value": 0.333333, "k": 1, "n": 3}
    assert overall["bad_use_rate"] == {"value": 0.333333, "k": 1, "n": 3}
    # usable pairs: (c1,m2) used, (c2,m2) refused -> false invalidation 1/2
    assert overall["false_invalidation_rate"] == {"value": 0.5, "k": 1, "n": 2}


def test_per_origin() -> None:
    per_origin = _metrics()["per_origin"]
    assert set(per_origin) == {"abandoned", "adversarial", "genuine", "stale"}
    assert per_origin["stale"]["detection_recall"] == {"value": 1.0, "k": 1, "n": 1}
    assert per_origin["abandoned"]["bad_use_rate"] == {"value": 1.0, "k": 1, "n": 1}
    assert per_origin["genuine"]["false_invalidation_rate"] == {"value": 0.5, "k": 1, "n": 2}
