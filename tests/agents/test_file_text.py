"""The stub agents' tools read a file as the verifier does (issue 43, item 7): a Python file's lines
as Python counts them, its text as its coding header declares (`memstore.verify.filetext`); and a
line they write goes back in the file's own encoding."""

from __future__ import annotations

from pathlib import Path

from memstore import Access, AccessPolicy, Actor, FakeClock, Surface, open_store
from memstore.harness.run.boundary.gateway import Gateway
from memstore.harness.run.boundary.session import Hit, Tools
from memstore.harness.run.isolation.guard import StoreGuard
from memstore.verify import GitCodebase
from memstore.verify.history import HistoryBuilder
from memstore.verify.workspace import Workspace

# A form feed between sections (as the standard library has them) is a character of its line to
# Python, and so is \x1c; str.splitlines() ends a line at each.
PAGED = b"import os\n\x0c\nTIMEOUT = 30\nSEP = '\x1c'\nRETRIES = 3\n"
LATIN = '# -*- coding: latin-1 -*-\nx = "café"\n'.encode("latin-1")


def _tools(tmp_path: Path) -> tuple[Tools, Path]:
    builder = HistoryBuilder().write("paged.py", PAGED).write("latin.py", LATIN)
    builder.commit("files")
    repo = builder.build(tmp_path / "api").path
    store = open_store("memory://", access=AccessPolicy().grant("ana", "acme/api", Access.WRITE), clock=FakeClock())
    gateway = Gateway(Workspace(repo), store, Actor("ana"), Surface.CODING_AGENT, "acme/api", None, StoreGuard())
    return Tools(gateway), repo


def test_the_tools_number_lines_as_python_and_the_verifier_do(tmp_path: Path) -> None:
    tools, repo = _tools(tmp_path)
    assert tools.lines("paged.py") == ["import os", "\x0c", "TIMEOUT = 30", "SEP = '\x1c'", "RETRIES = 3"]
    assert list(GitCodebase(repo).read("paged.py").lines) == tools.lines("paged.py")
    assert tools.search("RETRIES") == [Hit("paged.py", 5, "RETRIES = 3")]  # was line 7


def test_the_tools_read_and_write_a_latin_1_file_in_latin_1(tmp_path: Path) -> None:
    tools, repo = _tools(tmp_path)
    assert tools.lines("latin.py") == ["# -*- coding: latin-1 -*-", 'x = "café"']  # was "caf\ufffd"
    assert tools.replace_line("latin.py", 2, 'x = "thé"')
    assert (repo / "latin.py").read_bytes() == '# -*- coding: latin-1 -*-\nx = "thé"\n'.encode("latin-1")
