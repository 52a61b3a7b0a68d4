"""The records every table derives from: typed until written, then one plain row each.

A table's columns are its record's fields in order, a nested record's (`Breaches`, `Outcome`,
...) in its place; `row` writes an enum as its value and a tuple ``";"``-joined, and `from_row`
reads the record back."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.harness.records import (
    CONTRACT_COLUMNS,
    PROMISES,
    SESSION,
    TABLES,
    Breaches,
    Chances,
    EventKind,
    EventRecord,
    FailureRecord,
    FindingRecord,
    Label,
    Origin,
    Role,
    SessionRecord,
    TrialRecord,
    Truth,
    columns,
    from_row,
    row,
)
from memstore.model import Surface

PLAIN = (str, int, float, bool, type(None))
_IDS = st.text(alphabet="abc-#0123456789", min_size=1, max_size=6)  # no ";": a list is written ";"-joined
_LISTS = st.lists(_IDS, max_size=3).map(tuple)
_ORIGINS = st.lists(st.sampled_from(Origin), max_size=3, unique=True).map(lambda found: tuple(sorted(found)))
_TUPLES = {
    SessionRecord: dict.fromkeys(("origins", "misled_origins"), _ORIGINS),
    TrialRecord: dict.fromkeys(("bad_ids", "healed_ids", "bad_seeds", "healed_seeds"), _LISTS),
}


_CHANCES = st.dictionaries(st.sampled_from(CONTRACT_COLUMNS), st.integers(0, 9)).map(Chances.of)


def _records(record: type) -> st.SearchStrategy[object]:
    chances = {"contract_chances": _CHANCES} if record is SessionRecord else {}
    return st.builds(record, **_TUPLES.get(record, {}), **chances)


def test_the_tables_are_the_records_in_the_order_a_run_folder_writes_them() -> None:
    assert {
        "trials": TrialRecord,
        "sessions": SessionRecord,
        "events": EventRecord,
        "findings": FindingRecord,
        "failures": FailureRecord,
    } == TABLES


def test_a_nested_record_gives_its_columns_in_its_place() -> None:
    names = columns(SessionRecord)
    start = names.index("expiry_violations") + 1
    assert names[start : start + len(CONTRACT_COLUMNS)] == CONTRACT_COLUMNS
    assert names[start + len(CONTRACT_COLUMNS)] == "contract_chances"
    assert names[-6:] == ("input_tokens", "output_tokens", "cache_tokens", "cost_usd", "model", "transcript")
    assert len(names) == 60
    assert len(set(names)) == 60


def test_the_promises_are_the_fields_of_breaches() -> None:
    assert CONTRACT_COLUMNS == tuple(f.name for f in fields(Breaches)) == tuple(p.metric for p in PROMISES)
    assert PROMISES[0].label == "forgot"
    assert PROMISES[0].chance.startswith("a recent() list")
    assert Breaches(scope_leaks=2, get_leaks=1, expired_returned=3).leaks == 3
    assert Breaches(scope_leaks=2, get_leaks=1, expired_returned=3).expiry_violations == 3


def test_a_column_name_is_read_off_the_record() -> None:
    assert SESSION.task_success == "task_success"
    assert SESSION.forgotten == "forgotten"  # a nested record's column
    assert "needed_at_5" in SESSION
    assert "contract" not in SESSION
    with pytest.raises(AttributeError, match="SessionRecord has no column 'task_sucess'"):
        _ = SESSION.task_sucess


def test_the_chances_are_one_column_written_by_promise_name() -> None:
    chances = Chances.of({"get_leaks": 5, "forgotten": 3, "scope_leaks": 0})
    assert chances.written() == "forgotten=3;get_leaks=5"  # by name, those with none left out
    assert Chances.read("forgotten=3;get_leaks=5") == chances
    assert Chances.read(float("nan")) == Chances.read("") == Chances()  # an empty cell of a table read back
    assert "counts" not in columns(SessionRecord)


def test_an_enum_is_written_as_its_value_and_a_tuple_joined() -> None:
    event = EventRecord(
        *("a/sqlite", "a", "sqlite", "s", 0, "t1", Surface.CODING_AGENT, "u", 3),
        *(EventKind.RETIRE, "m1", "", None, None, ""),
    )
    assert row(event)["kind"] == "retire"
    assert type(row(event)["kind"]) is str
    assert (row(event)["surface"], row(event)["origin"], row(event)["truth"]) == ("coding_agent", "", "")
    trial = TrialRecord("a", "a", "s", "x", 0, "x#0", 2, 3, 0, 2, 1, ("m1", "m2"), ("m2",), ("K1", "K2#1"), ("K2#1",))
    assert row(trial)["bad_ids"] == "m1;m2"
    assert row(trial)["healed_seeds"] == "K2#1"
    assert from_row(TrialRecord, row(trial) | {"healed_ids": ""}).healed_ids == ()


@pytest.mark.parametrize("record", list(TABLES.values()))
def test_a_row_is_plain_in_column_order_and_reads_back(record: type) -> None:
    # A session record has some sixty fields: drawing one is slow by hypothesis's measure on a busy
    # machine (both cores taken by the suite), which is not what this test is about.
    @settings(suppress_health_check=[HealthCheck.too_slow], deadline=None, max_examples=30)
    @given(_records(record))
    def check(made: object) -> None:
        plain = row(made)
        assert tuple(plain) == columns(record)
        assert all(isinstance(v, PLAIN) for v in plain.values())
        assert from_row(record, plain) == made

    check()


def test_an_enum_reads_back_as_its_enum() -> None:
    plain = dict.fromkeys(columns(SessionRecord), 0) | {"role": "harm-probe", "surface": "cli", "origins": ""}
    session = from_row(SessionRecord, plain)
    assert session.role is Role.HARM_PROBE
    assert session.surface is Surface.CLI
    assert session.origins == ()
    handed = from_row(SessionRecord, plain | {"origins": "adversarial;stale", "misled_origins": "stale"})
    assert handed.origins == (Origin.ADVERSARIAL, Origin.STALE)
    assert type(handed.misled_origins[0]) is Origin
    assert row(handed)["origins"] == "adversarial;stale"


def test_an_event_is_typed_until_written_and_a_missing_label_is_an_empty_column() -> None:
    # an event outside any session, of no seeded memory: no surface, origin or label (None, written "")
    plain = dict.fromkeys(columns(EventRecord), "") | {"trial": 0, "seq": 1, "kind": "tampered"}
    outside = from_row(EventRecord, plain)
    assert (outside.surface, outside.origin, outside.truth) == (None, None, None)
    assert row(outside) == plain
    seeded = from_row(EventRecord, plain | {"surface": "cli", "origin": "stale", "truth": "lapsed", "kind": "misled"})
    assert (seeded.surface, seeded.origin, seeded.truth) == (Surface.CLI, Origin.STALE, Label.LAPSED)
    assert (Label.LAPSED.usable, Label.LAPSED.bad) == (False, False)
    assert (Label.of(Truth.MOVED).usable, Label.of(Truth.MISSING).bad) == (True, True)
    assert from_row(EventRecord, plain | {"origin": float("nan")}).origin is None  # pandas reads an empty cell as NaN
