"""Metrics on small tables whose figures were worked out by hand."""

from __future__ import annotations

import pandas as pd

from memstore.harness.analysis.metric_registry import REGISTRY
from memstore.harness.analysis.metrics import Slice, compute, control_arm, memory_pairs, paired_with_control, rate
from memstore.harness.analysis.run_results import ArmResult, Rate
from memstore.harness.records import SessionRecord, columns

ROLES = {"no-memory": "control", "trusting": "harm-probe"}  # as those agents declare them


def _session(task: str, surface: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(columns(SessionRecord))
    row.update(
        arm="a/memory",
        agent="a",
        store="memory",
        role="treatment",
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
        moved_given=0,
        moved_reanchored=0,
        stale_use=False,
        origins="genuine",
        misled_origins="",
    )
    row.update(values)
    if row["task_success"] is None:  # the review r1 missed findings: not a success
        row["task_success"] = bool(row["merged"] or row["answer_correct"])
    return row


def _event(task: str, kind: str, memory: str, truth: str = "", origin: str = "") -> dict[str, object]:
    return {
        "arm": "a/memory",
        "scenario": "s",
        "trial": 0,
        "task": task,
        "kind": kind,
        "memory_id": memory,
        "seed": memory if truth else "",
        "truth": truth,
        "origin": origin,
        "detail": "",
    }


SESSIONS = pd.DataFrame(
    [
        _session(
            "c1", "coding_agent", merged=True, needed_at_5=True, needed_at_50=True, moved_given=1, moved_reanchored=1
        ),
        _session(
            "c2",
            "coding_agent",
            merged=False,
            needed_at_5=False,
            needed_at_50=True,
            stale_use=True,
            origins="abandoned;genuine",
            misled_origins="abandoned",
        ),
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
        # c2 is handed the abandoned m3, says it uses it, and an action repeats its error (misled,
        # found by the harness); and the valid m2, which it refuses (a false invalidation)
        _event("c2", "retrieve", "m3", "missing", "abandoned"),
        _event("c2", "use", "m3"),
        _event("c2", "misled", "m3"),
        _event("c2", "retrieve", "m2", "valid", "genuine"),
        _event("c2", "refuse", "m2"),
        # r1 is handed m4 (adversarial, unsupported) and ignores it; m5 was made in the run (no label)
        _event("r1", "retrieve", "m4", "unsupported", "adversarial"),
        _event("r1", "retrieve", "m5"),
        # q1 is handed m6, says it uses it, and nothing repeats its error: "use" alone counts for nothing
        _event("q1", "retrieve", "m6", "contradicted", "stale"),
        _event("q1", "use", "m6"),
        # a label that lapsed (the trial's merges changed what m7 cites) is neither bad nor usable
        _event("q1", "retrieve", "m7", "lapsed", "genuine"),
        _event("q1", "refuse", "m7"),
    ]
)
TRIALS = pd.DataFrame([{"arm": "a/memory", "scenario": "s", "trial": 0, "healed": 1, "bad_initial": 3}])


def _metrics() -> ArmResult:
    return compute({"sessions": SESSIONS, "events": EVENTS, "trials": TRIALS, "findings": pd.DataFrame()})["a/memory"]


def test_rates_keep_their_counts() -> None:
    assert rate(1, 3) == Rate(1, 3)
    assert Rate(1, 3).value == 0.333333
    assert rate(0, 0) is None


def test_session_metrics_by_hand() -> None:
    overall = _metrics().overall
    assert overall["merge_rate"] == Rate(2, 3)
    assert overall["review_precision"] == Rate(3, 4)
    assert overall["review_recall"] == Rate(3, 6)
    assert overall["answer_accuracy"] == Rate(1, 1)
    assert overall["stale_use_rate"] == Rate(1, 5)
    assert overall["task_success_rate"] == Rate(3, 5)
    assert overall["reanchor_accuracy"] == Rate(1, 2)
    assert overall["self_heal_rate"] == Rate(1, 3)
    assert overall["needed_recall_at_5"] == Rate(1, 2)
    assert overall["needed_recall_at_50"] == Rate(2, 2)
    assert (overall["leaks"], overall["expiry_violations"]) == (1, 2)
    assert (overall["injected_chars"], overall["verify_reads"]) == (100.0, 3.0)


def test_memory_metrics_by_hand() -> None:
    overall = _metrics().overall
    # bad pairs: (c1,m1) refused, (c2,m3) misled, (r1,m4) ignored, (q1,m6) "used" -> detection 1/4
    assert overall["detection_recall"] == Rate(1, 4)
    assert "bad_use_rate" not in overall
    # usable pairs: (c1,m2) used, (c2,m2) refused -> false invalidation 1/2 (the lapsed m7 is not counted)
    assert overall["false_invalidation_rate"] == Rate(1, 2)


def test_per_origin() -> None:
    per_origin = _metrics().per_origin
    assert set(per_origin) == {"abandoned", "adversarial", "genuine", "stale"}
    assert per_origin["stale"]["detection_recall"] == Rate(1, 2)  # m1 refused, m6 not
    assert per_origin["abandoned"]["detection_recall"] == Rate(0, 1)
    assert per_origin["genuine"]["false_invalidation_rate"] == Rate(1, 2)


def test_memory_pairs_mark_what_the_harness_found_not_what_the_agent_said() -> None:
    pairs = memory_pairs(EVENTS).set_index(["task", "memory_id"])
    assert bool(pairs.loc[("c2", "m3"), "misled"]) is True
    assert bool(pairs.loc[("q1", "m6"), "misled"]) is False  # a "use" event is not an action
    assert bool(pairs.loc[("c1", "m1"), "refused"]) is True


def test_instructions_flagged_counts_the_planted_memories_a_verdict_flagged() -> None:
    def verdict(task: str, memory: str, said: str) -> dict[str, object]:
        return {**_event(task, "verdict", memory), "detail": said}

    events = pd.DataFrame(
        [
            # c1 is handed two memories planted with instructions: its verdict flags p1; p2 it never verifies
            _event("c1", "retrieve", "p1", "unsupported", "adversarial"),
            verdict("c1", "p1", "valid flagged:override,pipe-to-shell"),
            _event("c1", "planted", "p1"),
            _event("c1", "retrieve", "p2", "unsupported", "adversarial"),
            _event("c1", "planted", "p2"),
            # a genuine memory flagged is no planted one: it counts on neither side
            _event("c1", "retrieve", "m2", "valid", "genuine"),
            verdict("c1", "m2", "valid flagged:fetch"),
            # c2 is handed p1 again, and its verdict says valid without a flag
            _event("c2", "retrieve", "p1", "unsupported", "adversarial"),
            verdict("c2", "p1", "valid"),
            _event("c2", "planted", "p1"),
        ]
    )
    tables = {"sessions": SESSIONS, "events": events, "trials": TRIALS, "findings": pd.DataFrame()}
    assert compute(tables)["a/memory"].overall["instructions_flagged_rate"] == Rate(1, 3)
    assert _metrics().overall["instructions_flagged_rate"] is None  # nothing planted: nothing to count


def _paired(arm: str, agent: str, outcomes: list[bool], **columns: list[str]) -> list[dict[str, object]]:
    rows = []
    for i, ok in enumerate(outcomes):
        row = _session(f"t{i}", "cli", answer_correct=ok, task_success=ok)
        row.update(arm=arm, agent=agent, store="sqlite", role=ROLES.get(agent, "treatment"))
        for name, values in columns.items():
            row[name] = values[i]
        rows.append(row)
    return rows


def test_harm_and_rescue_pair_each_arm_with_the_no_memory_control() -> None:
    control = _paired("no-memory/sqlite", "no-memory", [True, True, True, False, False, True])
    trusting = _paired(
        "trusting/sqlite",
        "trusting",
        [False, False, True, True, False, True],
        origins=["stale;genuine", "adversarial", "stale", "genuine", "", "adversarial"],
        misled_origins=["stale", "", "", "", "", ""],
    )
    sessions = pd.DataFrame(control + trusting)
    empty = pd.DataFrame(columns=["arm", "scenario", "trial", "task", "kind", "memory_id", "seed", "truth", "origin"])
    trials = pd.DataFrame(columns=["arm", "scenario", "trial", "healed", "bad_initial"])
    found = compute({"sessions": sessions, "events": empty, "trials": trials, "findings": pd.DataFrame()})
    overall = found["trusting/sqlite"].overall
    # harmed: t0, t1 (control right, trusting wrong); rescued: t3
    assert overall["harm_rate"] == Rate(2, 6)
    assert overall["rescue_rate"] == Rate(1, 6)
    assert found["no-memory/sqlite"].overall["harm_rate"] is None  # the control is not paired with itself
    assert control_arm(sessions, "trusting/sqlite") == "no-memory/sqlite"


def test_harm_per_origin_counts_only_harm_that_repeated_a_memory_of_that_origin() -> None:
    control = _paired("no-memory/sqlite", "no-memory", [True, True, True, False])
    trusting = _paired(
        "trusting/sqlite",
        "trusting",
        [False, False, True, True],
        origins=["stale;genuine", "adversarial;stale", "stale", "genuine"],
        misled_origins=["stale", "", "", ""],
    )
    sessions = pd.DataFrame(control + trusting)
    paired = paired_with_control(sessions, "trusting/sqlite")
    assert len(paired) == 4
    empty = pd.DataFrame()

    def per_origin(origin: str, name: str) -> object:
        found = Slice(sessions, empty, empty, paired, empty, origin=origin)
        return REGISTRY[name].compute(found)

    # stale: handed in t0, t1, t2; harm in t0 (misled by a stale memory); t1's harm was not a stale memory's error
    assert per_origin("stale", "harm_rate") == Rate(1, 3)
    assert per_origin("stale", "rescue_rate") == Rate(0, 3)
    # adversarial: handed in t1 only; its harm repeated no adversarial memory
    assert per_origin("adversarial", "harm_rate") == Rate(0, 1)
    # genuine: handed in t0 and t3; t3 was rescued
    assert per_origin("genuine", "rescue_rate") == Rate(1, 2)
