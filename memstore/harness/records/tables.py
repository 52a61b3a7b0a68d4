"""The tables of a run folder, each its record's fields: the one list of tables and their columns.

`TABLES` names every table with its record, in the order a run folder writes them; every other
list of tables derives from it. A table's columns are its record's fields in order, a nested
record's (`Breaches`, `Outcome`, ...) taken in its place (`columns`).

Code that reads a table reads a column through its table's names, never by a string:
``sessions[SESSION.task_success]``. `Columns` derives them from the record, so a renamed field
is an error where it is read (and `tests/test_columns.py` finds every name read, and every string
that spells a column, outside this package).

`row` turns a typed record into the plain row a shard and a CSV keep (an enum as its value, a
tuple ``";"``-joined, a value that says how it is written, such as `Chances`, as it says);
`from_row` reads one back.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any, TypeVar

from memstore.harness.records.promises import Breaches
from memstore.harness.records.rows import (
    EventRecord,
    FailureRecord,
    FindingRecord,
    Record,
    SessionRecord,
    TrialRecord,
)

__all__ = [
    "EVENT",
    "FAILURE",
    "FINDING",
    "PROMISE",
    "SESSION",
    "SHARD_TABLES",
    "TABLES",
    "TRIAL",
    "Columns",
    "columns",
    "from_row",
    "row",
]

TABLES: dict[str, type[Record]] = {  # every table of a run folder, with its record, in the order it is written
    "trials": TrialRecord,
    "sessions": SessionRecord,
    "events": EventRecord,
    "findings": FindingRecord,
    "failures": FailureRecord,
}
# A shard keeps each table's rows and what the unit's parts took, in the order shards were always written.
SHARD_TABLES = (*(name for name in TABLES if name != "failures"), "timings", "failures")

R = TypeVar("R")


_FIELDS: dict[type, tuple[tuple[str, Any], ...]] = {}
_COLUMNS: dict[type, tuple[str, ...]] = {}


def _fields(record: type) -> tuple[tuple[str, Any], ...]:
    """A record's fields, each with its type (resolved once)."""
    found = _FIELDS.get(record)
    if found is None:
        hints = typing.get_type_hints(record)
        found = _FIELDS[record] = tuple((f.name, hints[f.name]) for f in fields(record))
    return found


def _nested(kind: Any) -> bool:
    """Whether a field's type is a record nested in its place (`Breaches`, `Outcome`, ...), not a
    value written in one column (`Chances`: it says how, with ``written`` and ``read``)."""
    return isinstance(kind, type) and is_dataclass(kind) and not hasattr(kind, "written")


def columns(record: type) -> tuple[str, ...]:
    """A table's columns, in order: its record's fields, a nested record's in its place."""
    found = _COLUMNS.get(record)
    if found is None:
        names: list[str] = []
        for name, kind in _fields(record):
            names.extend(columns(kind) if _nested(kind) else (name,))
        found = _COLUMNS[record] = tuple(names)
    return found


_NESTED, _WRITTEN, _ENUM, _JOINED, _PLAIN = range(5)  # how `row` writes a value, by its type
_HOW: dict[type, int] = {}


def _how(kind: type) -> int:
    """How a value of type ``kind`` is written in a row (decided once a type: rows are hot)."""
    found = _HOW.get(kind)
    if found is None:
        if _nested(kind):
            found = _NESTED
        elif hasattr(kind, "written"):
            found = _WRITTEN
        else:
            found = _ENUM if issubclass(kind, Enum) else _JOINED if issubclass(kind, tuple) else _PLAIN
        _HOW[kind] = found
    return found


def row(record: object) -> dict[str, Any]:
    """The plain row a shard and a table keep of ``record``: a column per field (a nested record's
    fields in its place), an enum as its value (a missing one, None, as ``""``), a tuple ``";"``-joined."""
    plain: dict[str, Any] = {}
    for name, _ in _fields(type(record)):
        value = getattr(record, name)
        how = _how(type(value))
        if how == _PLAIN:
            plain[name] = "" if value is None and name in _maybe_enums(type(record)) else value
        elif how == _NESTED:
            plain.update(row(value))
        elif how == _WRITTEN:
            plain[name] = value.written()
        elif how == _ENUM:
            plain[name] = value.value
        else:
            plain[name] = ";".join(value)
    return plain


_MAYBE: dict[type, frozenset[str]] = {}


def _maybe_enum(kind: Any) -> type[Enum] | None:
    """The enum of a field declared ``SomeEnum | None``; None for any other type."""
    inner = [k for k in typing.get_args(kind) if k is not type(None)]
    if type(None) in typing.get_args(kind) and len(inner) == 1 and isinstance(inner[0], type):
        return inner[0] if issubclass(inner[0], Enum) else None
    return None


def _maybe_enums(record: type) -> frozenset[str]:
    """The fields of ``record`` declared as an enum or None (written ``""`` when None)."""
    found = _MAYBE.get(record)
    if found is None:
        found = _MAYBE[record] = frozenset(name for name, kind in _fields(record) if _maybe_enum(kind) is not None)
    return found


_READERS: dict[type, tuple[tuple[str, Any, int], ...]] = {}
_AS_IS, _READ, _MADE, _SPLIT, _INNER, _MAYBE_MADE = range(6)  # how `from_row` reads a field, by its declared type


def _readers(record: type) -> tuple[tuple[str, Any, int], ...]:
    """Each field of ``record`` with how `from_row` reads it (decided once a record type)."""
    found = _READERS.get(record)
    if found is None:
        found = _READERS[record] = tuple(
            (
                name,
                _maybe_enum(kind) or _element(kind) or kind,
                _MAYBE_MADE
                if _maybe_enum(kind) is not None
                else _INNER
                if _nested(kind)
                else _READ
                if hasattr(kind, "read")
                else _MADE
                if isinstance(kind, type) and issubclass(kind, Enum)
                else _SPLIT
                if typing.get_origin(kind) is tuple
                else _AS_IS,
            )
            for name, kind in _fields(record)
        )
    return found


def _element(kind: Any) -> type | None:
    """The type of a ``tuple[X, ...]`` field's items (``str``, or an enum read back as its own)."""
    items = typing.get_args(kind) if typing.get_origin(kind) is tuple else ()
    return items[0] if items and isinstance(items[0], type) else None


def from_row(record: type[R], plain: Mapping[str, Any]) -> R:
    """The record a plain row (`row`) was made of."""
    values: dict[str, Any] = {}
    for name, kind, how in _readers(record):
        if how == _INNER:
            values[name] = from_row(kind, plain)
            continue
        value = plain[name]
        if how == _READ:
            value = kind.read(value)
        elif how == _MADE:
            value = kind(value)
        elif how == _MAYBE_MADE:
            value = kind(value) if isinstance(value, str) and value else None
        elif how == _SPLIT:
            value = tuple(map(kind, value.split(";"))) if value else ()
        values[name] = value
    made: R = record(**values)
    return made


class Columns:
    """The column names of one table, read as attributes: ``SESSION.task_success`` is
    ``"task_success"``, and a name its record lacks is an `AttributeError` where it is read."""

    def __init__(self, record: type) -> None:
        self.record = record
        self.names = columns(record)
        self._known = frozenset(self.names)

    def __getattr__(self, name: str) -> str:
        if name.startswith("_") or name not in self._known:
            raise AttributeError(f"{self.record.__name__} has no column {name!r}")
        return name

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._known


SESSION = Columns(SessionRecord)
TRIAL = Columns(TrialRecord)
EVENT = Columns(EventRecord)
FINDING = Columns(FindingRecord)
FAILURE = Columns(FailureRecord)
PROMISE = Columns(Breaches)  # the store contract's promises, each named as its column
