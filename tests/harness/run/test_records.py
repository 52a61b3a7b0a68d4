"""The records every table derives from: plain values only, so a row is the record's fields as
`dataclasses.asdict` would give them, and a table's columns are its record's fields in order."""

from __future__ import annotations

import typing
from dataclasses import asdict, fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore.harness.run import records
from memstore.harness.run.records import (
    EventRecord,
    FailureRecord,
    FindingRecord,
    SessionRecord,
    TrialRecord,
    columns,
    row,
)

RECORDS = (SessionRecord, TrialRecord, EventRecord, FindingRecord, FailureRecord)
PLAIN = {str, int, float, bool, type(None)}


@pytest.mark.parametrize("record", RECORDS)
def test_every_field_holds_a_plain_value(record: type) -> None:
    hints = typing.get_type_hints(record, vars(records))
    for field in fields(record):
        kinds = set(typing.get_args(hints[field.name])) or {hints[field.name]}
        assert kinds <= PLAIN, (record.__name__, field.name, hints[field.name])


def _values(record: type) -> st.SearchStrategy[object]:
    hints = typing.get_type_hints(record, vars(records))
    plain = {str: st.text(max_size=5), int: st.integers(), float: st.floats(allow_nan=False), bool: st.booleans()}
    return st.builds(
        record,
        **{
            f.name: st.one_of(
                *(
                    plain[k] if k in plain else st.none()
                    for k in (set(typing.get_args(hints[f.name])) or {hints[f.name]})
                )
            )
            for f in fields(record)
        },
    )


@pytest.mark.parametrize("record", RECORDS)
def test_a_row_is_the_records_fields_in_column_order(record: type) -> None:
    # A session record has some sixty fields: drawing one is slow by hypothesis's measure on a busy
    # machine (both cores taken by the suite), which is not what this test is about.
    @settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(_values(record))
    def check(made: object) -> None:
        assert row(made) == asdict(made)  # type: ignore[arg-type, call-overload]
        assert tuple(row(made)) == columns(record)  # type: ignore[arg-type]

    check()
