"""The verifier reads a file as its language's own tools do (issue 43, item 7): a Python file's lines
as Python's tokenizer counts them (a lone ``\\r`` ends a line), its text as its coding header
declares; every other file as git counts lines (`memstore.verify.filetext`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstore.model import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, Verdict, anchor, verify_memory
from memstore.verify.filetext import decode, encode, text_lines
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

NOW = datetime(2026, 1, 5, tzinfo=UTC)
FILES = {
    # Python ends a line at a lone \r: TIMEOUT is on line 2 (git, counting \n only, puts RETRIES there).
    "settings.py": b'"""Settings."""\rTIMEOUT = 30\nRETRIES = 3\n',
    "client.py": b"# a\r# b\r# c\rdef connect(host, port=5432):\n    return host\n",
    "latin.py": '# -*- coding: latin-1 -*-\nx = "café"\n'.encode("latin-1"),
    # Outside Python a lone \r is a character of its line, as git and its diffs have it.
    "client.ts": b'export const A = 1;\rexport const API_VERSION = "v2";\nexport const B = 2;\n',
}


@pytest.fixture
def head(build: Build) -> GitCodebase:
    builder = HistoryBuilder()
    for path, data in FILES.items():
        builder.write(path, data)
    builder.commit("files")
    return GitCodebase(build(builder).path)


def _memory(fact: str, citation: Citation) -> Memory:
    return Memory("mem_01M92A6YCF0SR2B3Z6F5GN7Z8R", "acme/api", Kind.FACT, "s", fact, (citation,), "r", "ana",
                  Surface.CLI, NOW, NOW)  # fmt: skip


def _verify(codebase: GitCodebase, fact: str, cite: str | Citation) -> Verdict:
    citation = Citation.parse(cite) if isinstance(cite, str) else cite
    return verify_memory(_memory(fact, citation), codebase)


def test_a_lone_cr_before_the_cited_line_leaves_a_true_fact_valid(head: GitCodebase) -> None:
    verdict = _verify(head, "`TIMEOUT` is `30`.", "settings.py:2")
    # Was contradicted, with the correction "`TIMEOUT` is `3`." (RETRIES's value) for --fix to store.
    assert (verdict.status.value, verdict.corrected) == ("valid", None)
    assert [(c.where, c.text) for c in verdict.checks] == [("settings.py:2", "TIMEOUT = 30")]
    assert head.read("settings.py").lines == ('"""Settings."""', "TIMEOUT = 30", "RETRIES = 3")


def test_a_line_only_python_counts_is_there(head: GitCodebase) -> None:
    verdict = _verify(head, "`RETRIES` is `3`.", "settings.py:3")  # was missing: git counts two lines
    assert (verdict.status.value, [c.where for c in verdict.checks]) == ("valid", ["settings.py:3"])


def test_a_signature_on_a_line_past_git_s_count_is_read(head: GitCodebase) -> None:
    # Each was IndexError: the syntax tree put `connect` on line 4 of a file git reads as two lines.
    elsewhere = _verify(head, "`connect` takes `(host, port)`", "client.py:1")  # cites the comment above
    assert elsewhere.status.value == "reanchored"
    assert elsewhere.corrected is not None
    assert [str(c) for c in elsewhere.corrected.citations] == ["client.py:4"]
    assert _verify(head, "`connect` takes `(host, port)`", "client.py:4").status.value == "valid"


def test_a_latin_1_file_reads_as_its_coding_header_says(head: GitCodebase) -> None:
    assert head.read("latin.py").lines == ("# -*- coding: latin-1 -*-", 'x = "café"')
    assert _verify(head, '`x` is "café".', "latin.py:2").status.value == "valid"
    recorded = anchor(head, Citation.parse("latin.py:2"))
    assert recorded.snippet == 'x = "café"'
    wrong = _verify(head, '`x` is "tea".', recorded)
    assert wrong.status.value == "contradicted"
    assert wrong.corrected is not None
    assert wrong.corrected.fact == '`x` is "café".'  # was '`x` is "caf\ufffd".'


def test_a_lone_cr_outside_python_stays_in_its_line(head: GitCodebase) -> None:
    assert head.read("client.ts").lines == (
        'export const A = 1;\rexport const API_VERSION = "v2";',
        "export const B = 2;",
    )
    verdict = _verify(head, 'The API version is "v2".', "client.ts:1")  # was AssertionError in the tokenizer
    assert verdict.status.value == "valid"


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_python_s_line_ends_are_not_splitlines(separator: str) -> None:
    text = f"a = 1{separator}\nb = 2\rc = 3\r\nd = 4"
    assert text_lines(text, "m.py") == (f"a = 1{separator}", "b = 2", "c = 3", "d = 4")
    assert text_lines(text, "m.md") == (f"a = 1{separator}", "b = 2\rc = 3", "d = 4")


def test_a_python_file_is_decoded_by_its_bom_or_header_and_written_back_the_same() -> None:
    assert decode(b"\xef\xbb\xbfx = 1\n", "m.py") == "x = 1\n"
    assert decode("# coding: cp1252\ns = '€'\n".encode("cp1252"), "m.py") == "# coding: cp1252\ns = '€'\n"
    assert decode(b"# coding: nonesuch\ns = '\xe9'\n", "m.py") == "# coding: nonesuch\ns = '\ufffd'\n"
    assert decode(b"# coding: latin-1\n" + b"s = '\xe9'\n", "notes.txt") == "# coding: latin-1\ns = '\ufffd'\n"
    text = '# -*- coding: latin-1 -*-\nx = "café → tea"\n'
    assert encode(text, "m.py") == b'# -*- coding: latin-1 -*-\nx = "caf\xe9 \\u2192 tea"\n'
    assert encode(text, "m.txt") == text.encode()
