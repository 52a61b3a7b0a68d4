"""A column is read through its table's names, never by a string (docs/design.md, "How data flows").

The records package (`memstore.harness.records`) is the one place a column is spelled: each table's
columns are its record's fields, and code elsewhere reads ``sessions[SESSION.task_success]``.
This test walks every module of the package with `ast` and fails, naming FILE:LINE, on

- a string that spells a column specific enough to be one (with an underscore, or in `SPECIFIC`)
  outside the records package, but for the listed strings that mean something else (`ELSEWHERE`);
- a column specific enough to be one read as an attribute (``trials.bad_initial``, ``row.healed_seeds``)
  in a module that reads frames (imports pandas): a frame's column by attribute is a string in disguise;
- a column name read off a table's names (``SESSION.task_sucess``) that its record lacks.

The report's template reads the sessions' rows by name too: each name it reads must be a column.
Each rule is shown failing on a planted source.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from memstore.harness import records
from memstore.harness.records import TABLES, Breaches, Columns, SessionRecord, columns

PACKAGE = Path(records.__file__).resolve().parents[2]
RECORDS = Path(records.__file__).resolve().parent

COLUMNS = {name for record in TABLES.values() for name in columns(record)}
SPECIFIC = {"stratum", "origins", "tampered", "forgotten", "unsuperseded", "merged"}  # no underscore, only columns
WATCHED = {name for name in COLUMNS if "_" in name} | SPECIFIC

# Strings that spell a column and mean something else, by the module that holds them.
_MCP_ARGUMENT = "the MCP tools' argument naming a memory, not the events' column"
ELSEWHERE: dict[tuple[str, str], str] = {
    ("memstore/backends/checks.py", "memory_id"): "the argument a ValidationError names",
    ("memstore/backends/sql.py", "memory_id"): "a column of the store's votes table, not the events'",
    ("memstore/backends/mcp_memstore.py", "memory_id"): _MCP_ARGUMENT,
    ("memstore/commands/mcp.py", "memory_id"): _MCP_ARGUMENT,
    ("memstore/commands/memories.py", "memory_id"): "the CLI's argument naming a memory",
    ("memstore/harness/run/boundary/mcp_bridge.py", "memory_id"): "a line of the MCP server's events log",
    ("memstore/harness/run/play/atif.py", "memory_id"): "a memory tool's argument in an ATIF trajectory",
    ("memstore/harness/scenarios/loader.py", "stratum"): "a task's key in a scenario's YAML",
    **{
        ("memstore/agents/llm.py", name): "the model API's usage fields, read off its reply"
        for name in ("input_tokens", "output_tokens", "cache_tokens", "cost_usd")
    },
}

# The names of each table's columns the records package exports (SESSION, ..., PROMISE), with their record.
OF = {name: value.record for name, value in vars(records).items() if isinstance(value, Columns)}
_OWN = {name for name in dir(Columns) if not name.startswith("_")} | {"record", "names"}


def _reads_frames(tree: ast.Module) -> bool:
    """Whether a module imports pandas: its attribute reads may be a frame's columns."""
    return any(
        (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pandas" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pandas")
        for node in ast.walk(tree)
    )


def problems(source: str, where: str) -> list[str]:
    """FILE:LINE of each string that spells a column, each column read as a frame's attribute, and
    each column name its table lacks."""
    found = []
    tree = ast.parse(source)
    frames = _reads_frames(tree)
    for node in ast.walk(tree):
        if (
            frames
            and isinstance(node, ast.Attribute)
            and node.attr in WATCHED
            and not (isinstance(node.value, ast.Name) and node.value.id[:1].isupper())  # names, a class's method
        ):
            found.append(f"{where}:{node.lineno}: the column {node.attr!r} read as an attribute")
        if isinstance(node, ast.Constant) and node.value in WATCHED and (where, node.value) not in ELSEWHERE:
            found.append(f"{where}:{node.lineno}: the column {node.value!r} spelled as a string")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in OF:
            record = OF[node.value.id]
            if node.attr not in columns(record) and node.attr not in _OWN:
                found.append(f"{where}:{node.lineno}: {record.__name__} has no column {node.attr!r}")
    return found


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if RECORDS not in p.parents]


def test_no_module_spells_a_column_outside_the_records() -> None:
    found = [p for path in _modules() for p in problems(path.read_text(), path.relative_to(PACKAGE.parent).as_posix())]
    assert found == []


def test_every_table_and_the_promises_have_their_names() -> None:
    assert set(OF.values()) == {*TABLES.values(), Breaches}
    assert OF["SESSION"] is SessionRecord


def test_every_listed_exception_is_still_there() -> None:
    spelled = {
        (path.relative_to(PACKAGE.parent).as_posix(), node.value)
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WATCHED
    }
    assert set(ELSEWHERE) - spelled == set(), "exceptions no module needs any more: take them off ELSEWHERE"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('rate = df["task_success"].mean()\n', ["planted.py:1: the column 'task_success' spelled as a string"]),
        (
            "def f(s):\n    return s.get('needed_at_5')\n",
            ["planted.py:2: the column 'needed_at_5' spelled as a string"],
        ),
        ("ok = sessions[SESSION.task_sucess]\n", ["planted.py:1: SessionRecord has no column 'task_sucess'"]),
        ("bad = trials[TRIAL.task_success]\n", ["planted.py:1: TrialRecord has no column 'task_success'"]),
        ("ok = sessions[SESSION.task_success]\nrate = 'task_success_rate'\n", []),  # a metric's name is no column
        ("n = PROMISE.forgoten\n", ["planted.py:1: Breaches has no column 'forgoten'"]),
        (  # a frame's column read as its attribute is a string read in disguise
            "import pandas as pd\ntotal = trials[trials.arm == a].bad_initial.sum()\n",
            ["planted.py:2: the column 'bad_initial' read as an attribute"],
        ),
        (
            "from pandas import DataFrame\nfor row in t.itertuples():\n    h = row.healed_seeds\n",
            ["planted.py:3: the column 'healed_seeds' read as an attribute"],
        ),
        ("total = record.bad_initial\n", []),  # a record's field, typed, in a module that reads no frame
        ("import pandas as pd\nrun = RunFolder.merged(parts)\n", []),  # a class's method, not a column
        ("import pandas as pd\ntotal = trials[TRIAL.bad_initial].sum()\n", []),
    ],
)
def test_the_checker_flags_a_planted_string_and_a_missing_column(source: str, expected: list[str]) -> None:
    assert problems(source, "planted.py") == expected


TEMPLATES = PACKAGE / "harness" / "report" / "templates"


def test_the_reports_template_reads_only_columns_of_the_sessions() -> None:
    # Jinja's rows are dicts of the sessions table (`report.html`'s task drill-down): a name it reads
    # off a row (``t.task_success``) is a column, so renaming a field breaks here, not in a report.
    text = (TEMPLATES / "report.html.j2").read_text()
    read = set(re.findall(r"\bt\.(\w+)", text))
    assert read
    assert read - set(columns(TABLES["sessions"])) == set()
