"""Mining a repository with a line of a megabyte: the miner's patterns cross it once (issue 43, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.harness.scenarios.mined_facts import facts_in
from memstore.verify import GitCodebase
from memstore.verify.codebase import MAX_FILE_BYTES
from memstore.verify.history import HistoryBuilder
from tests.deadline import within

SPACES = " " * (MAX_FILE_BYTES - 1024)  # a run the old patterns split every way before failing at its end

FILES = {
    "pyproject.toml": (
        f'[project]\ndependencies = [\n    "click>=8.0",\n    "rich>=13"{SPACES}!\n]\n',
        [("dependency", "click", 3, ">=8.0")],
    ),
    "app.js": (
        f'const MAX_SIZE = 10\nconst LIMIT = 5{SPACES[::2]}!\nversion: "1.0"{SPACES[::2]}!\n',
        [("constant", "MAX_SIZE", 1, "10")],
    ),
}


@pytest.mark.parametrize("path", list(FILES))
def test_the_miner_reads_a_file_with_a_megabyte_line_in_bounded_time(tmp_path: Path, path: str) -> None:
    text, expected = FILES[path]
    builder = HistoryBuilder()
    builder.write(path, text)
    builder.commit("the project")
    built = builder.build(tmp_path / "repo", bare=True)

    def mine() -> list[tuple[str, str, int, str | None]]:
        return [(f.kind, f.name, f.line, f.value) for f in facts_in(GitCodebase(built.path, "main"), path)]

    found, took = within(20, mine)  # the requirement pattern was cubic in the spaces: hours
    assert found == expected
    assert took < 5
