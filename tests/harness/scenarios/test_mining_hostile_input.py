"""Mining a history whose files are hostile to a reader: nested too deeply to parse (issue 43,
item 6; the repository: `tests.deep_code`), or with line ends only Python counts (item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.scenarios.mining import mine
from memstore.verify import GitCodebase
from memstore.verify.history import HistoryBuilder
from tests.deep_code import DEEP_FOLDER, deep_repository


def test_memstore_mine_reads_past_deep_input(tmp_path: Path) -> None:
    out = tmp_path / "mined" / "deep.yaml"
    with deep_repository(tmp_path / "api") as built:
        result = CliRunner().invoke(
            main, ["mine", str(built.path), "--from", "main", "--to", "main", "--name", "acme/api", "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.with_suffix(".verdicts.jsonl").read_text().splitlines()]
    # The ordinary files give their facts; the two too deep to parse give none, and end nothing.
    assert {row["path"] for row in rows} == {"good.py", DEEP_FOLDER}
    assert {(row["path"], row["line"], row["snippet"], row["truth"]) for row in rows if not row["sort"]} == {
        ("good.py", 1, "TIMEOUT = 30", "valid"),
        (DEEP_FOLDER, 1, "TOTAL = 2", "valid"),
    }


def test_a_fact_still_true_under_a_lone_cr_is_labelled_valid(tmp_path: Path) -> None:
    builder = HistoryBuilder()
    builder.write("acme/settings.py", b'"""Settings."""\rTIMEOUT = 30\nRETRIES = 3\n')
    builder.write("acme/core.py", "MAX_RETRIES = 3\n")
    builder.commit("old", label="old")
    builder.write("acme/settings.py", b'"""Settings."""\r\nTIMEOUT = 30\nRETRIES = 3\n')  # the \r made \r\n
    builder.write("acme/core.py", "MAX_RETRIES = 5\n")
    builder.commit("new")
    built = builder.build(tmp_path / "acme")
    mined = mine(GitCodebase(built.path, built.commits["old"]), GitCodebase(built.path, "main"), fixed_wording=True)
    labelled = {(m.fact, m.line, m.snippet, m.truth, m.new_value) for m in mined if m.kind == "constant" and not m.sort}
    # Was "`TIMEOUT` is set to `3`" at line 2 ('RETRIES = 3'), labelled contradicted with the new value 30.
    assert labelled == {
        ("`TIMEOUT` is set to `30` in `acme/settings.py`.", 2, "TIMEOUT = 30", "valid", None),
        ("`RETRIES` is set to `3` in `acme/settings.py`.", 3, "RETRIES = 3", "valid", None),
        ("`MAX_RETRIES` is set to `3` in `acme/core.py`.", 1, "MAX_RETRIES = 3", "contradicted", "5"),
    }
