"""Memories as people write them, judged by what the code says: one test per kind of failure the
verifier had on hand-written memories (issue 41), each from realistic code (a small HTTP server's
sources and configuration across two releases) and in the words a person would use, in two or
three wordings that must get one verdict."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import GitCodebase, Verdict, VerdictStatus, verify_memory
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

V = VerdictStatus
T0 = datetime(2026, 1, 5, tzinfo=UTC)

BODY_OLD = """\
class ChunkedReader:
    def __init__(self, req, unreader):
        self.req = req
        self.parser = self.parse_chunked(unreader)

    def read(self, size):
        if not isinstance(size, int):
            raise TypeError("size must be an integral type")
        if size < 0:
            raise ValueError("Size must be positive.")
        return self.parser.read(size)


class LengthReader:
    def __init__(self, unreader, length):
        self.unreader = unreader
        self.length = length

    def read(self, size):
        if not isinstance(size, int):
            raise TypeError("size must be an integral type")
        if size < 0:
            raise ValueError("Size must be positive.")
        return self.unreader.read(size)
"""

BODY_NEW = BODY_OLD.replace(
    """        self.parser = self.parse_chunked(unreader)

    def read(self, size):
        if not isinstance(size, int):
            raise TypeError("size must be an integral type")""",
    """        self.parser = self.parse_chunked(unreader)
        self.buffered = 0

    def read(self, size):
        if not isinstance(size, int):
            raise TypeError("size must be an integer type")""",
)

MAIN_OLD = '''\
import os
import sys

DEFAULT_PORT = 8000
HOMEPAGE = "http://example.org/server/"
FORMATS = ["json", "yaml", "toml"]


def find_config(filename=".env", usecwd=False):
    """Look for the file, starting from the caller's directory."""
    def _is_interactive():
        main = __import__("__main__", None, None, fromlist=["__file__"])
        return not hasattr(main, "__file__")

    if usecwd or _is_interactive():
        path = os.getcwd()
    else:
        path = os.path.dirname(sys.argv[0])
    return os.path.join(path, filename)


def serve(host, port=DEFAULT_PORT, *, reload=False):
    if port < 1:
        raise ValueError("port must be positive")
    return (host, port, reload)


def session_factory(pool):
    return pool.connect(timeout=30).session(autocommit=False)
'''

MAIN_NEW = (
    MAIN_OLD.replace(
        """        main = __import__("__main__", None, None, fromlist=["__file__"])
        return not hasattr(main, "__file__")""",
        """        try:
            main = __import__("__main__", None, None, fromlist=["__file__"])
        except ModuleNotFoundError:
            return False
        return not hasattr(main, "__file__")""",
    )
    .replace('HOMEPAGE = "http://example.org/server/"', 'HOMEPAGE = "https://example.org/server/"')
    .replace('FORMATS = ["json", "yaml", "toml"]', 'FORMATS = ["json", "yaml", "toml", "ini"]')
    .replace(
        '        raise ValueError("port must be positive")',
        '        message = "port must be positive"\n        raise ValueError(message)',
    )
    .replace(
        "    return pool.connect(timeout=30).session(autocommit=False)",
        "    return (\n        pool.connect(timeout=30)\n        .session(autocommit=False)\n    )",
    )
)

SERVE_SIGNATURE_OLD = """\
def run(
    app,
    host="127.0.0.1",
    port=8000,
    workers=1,
):
    return app, host, port, workers
"""
SERVE_SIGNATURE_NEW = """\
def run(
    app,
    host="127.0.0.1",
    port=8000,
    workers=1,
    timeout_graceful_shutdown=None,
):
    return app, host, port, workers
"""

ARBITER_OLD = """\
import time


class Arbiter:
    def murder_workers(self):
        for worker in self.workers:
            if time.time() - worker.tmp.last_update() <= self.timeout:
                continue
            worker.kill()


if __name__ == "__main__":
    Arbiter().run()


def serve_forever(arbiter, options):
    buf_size = options.pop("buf_size", 256)
    try:
        arbiter.loop(buf_size)
    except Exception:
        arbiter.log.info("Unhandled exception in main loop", exc_info=True)
        raise
"""
ARBITER_NEW = (
    ARBITER_OLD.replace("time.time()", "time.monotonic()")
    .replace('if __name__ == "__main__":\n    Arbiter().run()', "def main():\n    return run_forever(Arbiter())")
    .replace("arbiter.log.info(", "arbiter.log.error(")
)

CI_OLD = """\
# Continuous integration settings
name: tests
cache: true
python: "3.11"
retries: 2
"""
CONFIG_OLD = """\
[server]
keepalive = 5
backlog = 2048
"""


@pytest.fixture
def judge(build: Build) -> Callable[..., list[Verdict]]:
    """``judge(fact, *citations, subject=...)``: verify each wording of a fact written at the old
    release against the new one, citing ``path:line`` of the old release."""
    b = HistoryBuilder()
    b.write("server/body.py", BODY_OLD).write("server/main.py", MAIN_OLD).write("server/run.py", SERVE_SIGNATURE_OLD)
    b.write("server/arbiter.py", ARBITER_OLD).write("server/settings.py", '"""Settings."""\n\nRETRY_LIMIT = 40\n')
    b.write(".ci.yml", CI_OLD).write("setup.cfg", CONFIG_OLD).commit("1.0", label="old")
    b.write("server/body.py", BODY_NEW).write("server/main.py", MAIN_NEW).write("server/run.py", SERVE_SIGNATURE_NEW)
    b.write("server/arbiter.py", ARBITER_NEW).write("server/limits.py", '"""Limits."""\n\nRETRY_LIMIT = 40\n')
    b.write("server/settings.py", '"""Settings."""\n\nfrom server.limits import RETRY_LIMIT  # noqa: F401\n')
    b.commit("1.1", label="new")
    built = build(b)
    old, new = GitCodebase(built.path, built.commits["old"]), GitCodebase(built.path, built.commits["new"])

    def verdicts(*facts: str, cites: tuple[str, ...], subject: str = "what the code does") -> list[Verdict]:
        citations = []
        for cite in cites:
            c = Citation.parse(cite)
            lines = old.read(c.path).lines
            citations.append(
                Citation(
                    c.path,
                    c.line,
                    c.end_line,
                    snippet="\n".join(lines[c.line - 1 : c.last_line]),
                    commit=built.commits["old"],
                )
            )
        memories = [
            Memory(
                id=f"mem_{n:026d}",
                repo="acme/server",
                kind=Kind.FACT,
                subject=subject,
                fact=fact,
                citations=tuple(citations),
                reason="Relied on it.",
                author="agent",
                surface=Surface.CODING_AGENT,
                created_at=T0,
                refreshed_at=T0,
            )
            for n, fact in enumerate(facts)
        ]
        return [verify_memory(m, new) for m in memories]

    return verdicts


def statuses(verdicts: list[Verdict]) -> set[VerdictStatus]:
    return {v.status for v in verdicts}


# 1. A thing named by a qualified name is what the lines inside its definition are about.
def test_a_qualified_name_is_about_the_lines_of_its_definition(judge: Callable[..., list[Verdict]]) -> None:
    found = judge(
        "`server.body.LengthReader.read` refuses a size that is not an int with a TypeError.",
        "LengthReader.read raises TypeError when size is not an integer.",
        cites=("server/body.py:20-21",),
    )
    assert statuses(found) == {V.REANCHORED}  # the class's lines moved down, nothing about it changed


# 2. A statement split over lines, or a message moved to a variable on the line before, still says it.
def test_a_rewrapped_statement_or_a_message_moved_to_a_variable_still_says_the_fact(
    judge: Callable[..., list[Verdict]],
) -> None:
    message = judge(
        'serve() raises ValueError("port must be positive") for a port below 1.',
        "A port under 1 makes `serve` fail with ValueError: port must be positive.",
        cites=("server/main.py:23-24",),
    )
    chained = judge(
        "session_factory connects with a 30 second timeout and opens a session with autocommit off.",
        "`session_factory` calls `pool.connect(timeout=30).session(autocommit=False)`.",
        cites=("server/main.py:29",),
    )
    assert {v.status.usable for v in message + chained} == {True}


# 3. A citation is followed into the definition it was in, not onto the same lines of a neighbour.
def test_a_citation_is_not_followed_onto_the_same_lines_of_a_neighbouring_function(
    judge: Callable[..., list[Verdict]],
) -> None:
    found = judge(
        'ChunkedReader.read raises TypeError("size must be an integral type") for a non-int size.',
        'The chunked reader\'s type check message reads exactly "size must be an integral type".',
        cites=("server/body.py:7-8",),
    )
    assert statuses(found) == {V.CONTRADICTED}
    assert all(v.checks[0].line == 8 for v in found)  # ChunkedReader.read, where the message changed
    assert all("size must be an integer type" in v.corrected.fact for v in found if v.corrected)


# 4. Behaviour changed around an unchanged cited line: a try/except added.
def test_a_guard_added_around_an_unchanged_line_contradicts_a_fact_that_says_there_is_none(
    judge: Callable[..., list[Verdict]],
) -> None:
    found = judge(
        "`_is_interactive()` imports `__main__` with no try/except, so an import error reaches the caller.",
        "If importing __main__ fails, _is_interactive doesn't catch it: there is no exception handling around it.",
        cites=("server/main.py:12-13",),
    )
    assert statuses(found) == {V.CONTRADICTED}


# 5. Changed values outside one sentence shape: a URL, a list that grew, a signature that gained a parameter.
def test_changed_values_in_free_words_are_contradicted(judge: Callable[..., list[Verdict]]) -> None:
    url = judge(
        "The server's homepage constant points to http://example.org/server/ (plain http).",
        "HOMEPAGE is `http://example.org/server/`.",
        cites=("server/main.py:5",),
    )
    listed = judge(
        "FORMATS lists exactly three formats: json, yaml and toml.",
        "The supported formats are json, yaml and toml, and nothing else.",
        cites=("server/main.py:6",),
    )
    signature = judge(
        "run() takes only app, host, port and workers.",
        "The parameters of `run` are exactly (app, host, port, workers).",
        cites=("server/run.py:1-6",),
    )
    assert statuses(url + listed + signature) == {V.CONTRADICTED}
    assert all("https://example.org/server/" in v.corrected.fact for v in url if v.corrected)
    assert all(v.corrected is not None for v in url)


# 6. Near misses in free words: a number one off, a flag flipped in YAML, an item left out.
def test_near_misses_in_free_words_are_contradicted_and_corrected(judge: Callable[..., list[Verdict]]) -> None:
    number = judge(
        "The backlog in setup.cfg is 2047 connections.",
        "setup.cfg sets backlog to 2047.",
        cites=("setup.cfg:3",),
    )
    flag = judge(
        "CI runs with the cache turned off (cache: false in .ci.yml).",
        "The CI configuration sets cache to false.",
        cites=(".ci.yml:3",),
    )
    port = judge(
        "serve() defaults to port 8080.",
        "Unless you pass a port, `serve` listens on 8080.",
        cites=("server/main.py:4",),
    )
    assert statuses(number + flag + port) == {V.CONTRADICTED}
    assert all(
        v.corrected is not None and "2048" in v.corrected.fact and "2047" not in v.corrected.fact for v in number
    )
    assert all(v.corrected is not None and "8000" in v.corrected.fact for v in port)


# 7. Claims the cited line does not make, in free words.
def test_claims_the_code_does_not_make_are_unsupported(judge: Callable[..., list[Verdict]]) -> None:
    environment = judge(
        "The default port is read from the SERVER_PORT environment variable, falling back to 8000.",
        "Set SERVER_PORT in the environment to change DEFAULT_PORT.",
        cites=("server/main.py:4",),
    )
    cached = judge(
        "find_config caches the path it finds, so repeated calls are cheap.",
        cites=("server/main.py:9-19",),
    )
    assert statuses(environment + cached) == {V.UNSUPPORTED}


# 8. A correction states the code's whole value, never the stale one, never a value cut short.
def test_a_correction_states_the_whole_current_value_and_never_the_stale_one(
    judge: Callable[..., list[Verdict]],
) -> None:
    found = judge(
        "`ChunkedReader.read` rejects non-int sizes with the message 'size must be an integral type'.",
        cites=("server/body.py:7-8",),
    )
    assert [v.status for v in found] == [V.CONTRADICTED]
    fact = found[0].corrected.fact if found[0].corrected else ""
    assert "'size must be an integer type'" in fact
    assert "integral" not in fact


def test_a_call_the_change_replaced_is_corrected_with_the_call_that_took_its_place(
    judge: Callable[..., list[Verdict]],
) -> None:
    found = judge(
        "Worker timeouts use wall-clock time: the arbiter subtracts the last heartbeat from time.time().",
        "The arbiter compares `time.time() - worker.tmp.last_update()` with the timeout.",
        cites=("server/arbiter.py:7",),
    )
    assert [v.status for v in found] == [V.CONTRADICTED, V.CONTRADICTED]
    facts = [v.corrected.fact if v.corrected else "" for v in found]
    assert facts == [
        "Worker timeouts use wall-clock time: the arbiter subtracts the last heartbeat from time.monotonic().",
        "The arbiter compares `time.monotonic() - worker.tmp.last_update()` with the timeout.",
    ]
    assert [str(c) for c in found[0].corrected.citations] == ["server/arbiter.py:7"]  # type: ignore[union-attr]


def test_no_correction_is_spliced_from_code_that_took_another_shape(judge: Callable[..., list[Verdict]]) -> None:
    """The module's ``__main__`` block became a function: nothing stands where ``Arbiter().run()``
    stood, so there is no value to put in its place, and the verdict says so."""
    found = judge(
        "server/arbiter.py can be run as a script: its __main__ block calls `Arbiter().run()`.",
        cites=("server/arbiter.py:12-13",),
    )
    assert [v.status for v in found] == [V.CONTRADICTED]
    assert found[0].corrected is None
    assert found[0].uncertain != ""


def test_a_word_the_change_replaced_contradicts_the_fact_and_is_corrected_in_its_case(
    judge: Callable[..., list[Verdict]],
) -> None:
    found = judge(
        'When the main loop fails, serve_forever logs "Unhandled exception in main loop" at INFO level.',
        "serve_forever reports a crash of the loop with `arbiter.log.info(...)` and the traceback.",
        cites=("server/arbiter.py:20-22",),
    )
    assert [v.status for v in found] == [V.CONTRADICTED, V.CONTRADICTED]
    assert [v.corrected.fact if v.corrected else "" for v in found] == [
        'When the main loop fails, serve_forever logs "Unhandled exception in main loop" at ERROR level.',
        "serve_forever reports a crash of the loop with `arbiter.log.error(...)` and the traceback.",
    ]


def test_a_fallback_of_a_lookup_is_the_default_a_fact_states(judge: Callable[..., list[Verdict]]) -> None:
    found = judge(
        "serve_forever reads the loop in 512-byte chunks unless buf_size is given.",
        "The buf_size option defaults to 512.",
        cites=("server/arbiter.py:17",),
    )
    assert [v.status for v in found] == [V.CONTRADICTED, V.CONTRADICTED]
    assert [v.corrected.fact if v.corrected else "" for v in found] == [
        "serve_forever reads the loop in 256-byte chunks unless buf_size is given.",
        "The buf_size option defaults to 256.",
    ]


def test_a_number_that_labels_a_noun_is_no_value_of_the_code(judge: Callable[..., list[Verdict]]) -> None:
    """ "server 2" names a server; the value the fact states is the other number, in digits or words."""
    found = judge(
        "DEFAULT_PORT is set to 8000 for server 2.",
        "Server 2 listens on DEFAULT_PORT, eight thousand by default.",
        "DEFAULT_PORT is 8001 for server 2.",
        cites=("server/main.py:4",),
    )
    assert [v.status for v in found] == [V.VALID, V.VALID, V.CONTRADICTED]
    assert found[2].corrected is not None
    assert found[2].corrected.fact == "DEFAULT_PORT is 8000 for server 2."


def test_a_value_moved_into_a_module_the_file_imports_still_stands(judge: Callable[..., list[Verdict]]) -> None:
    found = judge(
        "RETRY_LIMIT is set to 40.",
        "The server retries at most 40 times (RETRY_LIMIT).",
        "RETRY_LIMIT is 41.",
        "RETRY_LIMIT is defined in server/settings.py.",
        cites=("server/settings.py:3",),
    )
    assert [v.status for v in found] == [V.REANCHORED, V.REANCHORED, V.CONTRADICTED, V.CONTRADICTED]
    assert found[2].corrected is not None
    assert found[2].corrected.fact == "RETRY_LIMIT is 40."


GO_OLD = 'package config\n\nimport "time"\n\nconst DefaultTimeout = 30 * time.Second\n'
TOML_OLD = '[tool.black]\nline-length = 100\ntarget-version = ["py311"]\n'
JSON_OLD = '{\n  "name": "acme-server",\n  "version": "1.4.0",\n  "private": true\n}\n'
MARKDOWN_OLD = "# Usage\n\nThe server listens on port `8080` unless `PORT` is set.\n"


@pytest.fixture
def judge_files(build: Build) -> Callable[..., list[Verdict]]:
    """Like `judge`, on configuration and code in other languages: Go, TOML, JSON and Markdown."""
    b = HistoryBuilder()
    b.write("config/config.go", GO_OLD).write("pyproject.toml", TOML_OLD).write("package.json", JSON_OLD)
    b.write("docs/usage.md", MARKDOWN_OLD).commit("1.0", label="old")
    b.write("config/config.go", GO_OLD.replace("30 * time.Second", "45 * time.Second"))
    b.write("pyproject.toml", TOML_OLD.replace("line-length = 100", "line-length = 88"))
    b.write("package.json", JSON_OLD.replace('"1.4.0"', '"1.5.0"'))
    b.write("docs/usage.md", MARKDOWN_OLD).commit("1.1", label="new")
    built = build(b)
    old, new = GitCodebase(built.path, built.commits["old"]), GitCodebase(built.path, built.commits["new"])

    def verdicts(*facts: str, cites: tuple[str, ...]) -> list[Verdict]:
        citations = []
        for cite in cites:
            c = Citation.parse(cite)
            snippet = "\n".join(old.read(c.path).lines[c.line - 1 : c.last_line])
            citations.append(Citation(c.path, c.line, c.end_line, snippet=snippet, commit=built.commits["old"]))
        return [
            verify_memory(
                Memory(id=f"mem_{n:026d}", repo="acme/server", kind=Kind.FACT, subject="settings", fact=fact,
                       citations=tuple(citations), reason="Relied on it.", author="agent",
                       surface=Surface.CODING_AGENT, created_at=T0, refreshed_at=T0),
                new,
            )
            for n, fact in enumerate(facts)
        ]  # fmt: skip

    return verdicts


def test_values_in_go_toml_json_and_markdown(judge_files: Callable[..., list[Verdict]]) -> None:
    def fixed(found: list[Verdict]) -> list[str]:
        return [v.corrected.fact if v.corrected else "" for v in found]

    go = judge_files("Requests time out after 30 seconds (DefaultTimeout).", cites=("config/config.go:5",))
    assert [v.status for v in go] == [V.CONTRADICTED]
    assert fixed(go) == ["Requests time out after 45 seconds (DefaultTimeout)."]
    toml = judge_files(
        "black wraps lines at 100 columns.", "Line length is 120 for black.", cites=("pyproject.toml:2",)
    )
    assert [v.status for v in toml] == [V.CONTRADICTED, V.CONTRADICTED]
    assert fixed(toml) == ["black wraps lines at 88 columns.", "Line length is 88 for black."]
    package = judge_files("The package is at version 1.4.0.", cites=("package.json:3",))
    assert fixed(package) == ["The package is at version 1.5.0."]
    docs = judge_files(
        "The usage guide says the server listens on 8080.",
        "The usage guide says the server listens on port 8000.",
        cites=("docs/usage.md:3",),
    )
    assert [v.status for v in docs] == [V.VALID, V.CONTRADICTED]
    assert fixed(docs)[1] == "The usage guide says the server listens on port 8080."
