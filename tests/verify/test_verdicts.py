"""verify_memory: the verdicts of the reference verifier, on real repositories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import (
    CitationCheck,
    Codebase,
    GitCodebase,
    Verdict,
    VerdictStatus,
    verify_memories,
    verify_memory,
)
from memstore.verify.history import HistoryBuilder
from tests.verify.conftest import Build

V = VerdictStatus
T0 = datetime(2026, 1, 5, tzinfo=UTC)

SDK = 'export const API_VERSION = "v2.1.4";\n'
GO = 'package routes\n\nconst APIVersion = "v2.1.4"\n'
DOCS = "# API reference\n\nVersion: v2.1.4\n"


def memory(
    fact: str, *citations: Citation, subject: str = "API version synchronization", kind: Kind = Kind.FACT
) -> Memory:
    return Memory(
        id="mem_test",
        repo="acme/api",
        kind=kind,
        subject=subject,
        fact=fact,
        citations=citations,
        reason="If it drifts, the integration breaks.",
        author="ana",
        surface=Surface.CODE_REVIEW,
        created_at=T0,
        refreshed_at=T0,
    )


def api_repo(build: Build, change: object | None = None) -> tuple[GitCodebase, str]:
    b = HistoryBuilder()
    b.write("src/client/sdk/constants.ts", SDK).write("server/routes/api.go", GO)
    b.write("docs/api-reference.md", DOCS).write("README.md", "# Acme API\n\nA service.\n")
    b.commit("initial", label="old")
    if change is not None:
        change(b)  # type: ignore[operator]
        b.commit("change", label="new")
    built = build(b)
    return GitCodebase(built.path, "main"), built.commits["old"]


def cites(commit: str) -> tuple[Citation, ...]:
    return (
        Citation("src/client/sdk/constants.ts", 1, commit=commit),
        Citation("server/routes/api.go", 3, commit=commit),
        Citation("docs/api-reference.md", 3, commit=commit),
    )


INVARIANT = "API version must match between client SDK, server routes, and documentation."
VALUE = 'The API version is "v2.1.4" in the client SDK, server routes, and documentation.'


def bump(b: HistoryBuilder) -> None:
    for path in ("src/client/sdk/constants.ts", "server/routes/api.go", "docs/api-reference.md"):
        b.replace(path, "v2.1.4", "v2.2.0")


def test_untouched_memory_is_valid(build: Build) -> None:
    codebase, old = api_repo(build)
    verdict = verify_memory(memory(INVARIANT, *cites(old)), codebase)
    assert verdict.status is V.VALID
    assert verdict.corrected is None
    assert [c.text for c in verdict.checks] == [SDK.strip(), 'const APIVersion = "v2.1.4"', "Version: v2.1.4"]


def test_contradicted_api_version_is_corrected_to_the_new_value(build: Build) -> None:
    codebase, old = api_repo(build, bump)
    verdict = verify_memory(memory(VALUE, *cites(old)), codebase)
    assert verdict.status is V.CONTRADICTED
    assert verdict.contradictions[0].claim == "v2.1.4"
    assert verdict.contradictions[0].found == "v2.2.0"
    assert verdict.corrected is not None
    assert verdict.corrected.fact == 'The API version is "v2.2.0" in the client SDK, server routes, and documentation.'
    assert [str(c) for c in verdict.corrected.citations] == [  # type: ignore[union-attr]
        "src/client/sdk/constants.ts:1",
        "server/routes/api.go:3",
        "docs/api-reference.md:3",
    ]
    assert verdict.corrected.citations[0].snippet == 'export const API_VERSION = "v2.2.0";'  # type: ignore[union-attr]
    assert verdict.corrected.citations[0].commit == codebase.commit  # type: ignore[union-attr]


def test_invariant_survives_a_consistent_bump_re_anchored(build: Build) -> None:
    codebase, old = api_repo(build, bump)
    verdict = verify_memory(memory(INVARIANT, *cites(old)), codebase)
    assert verdict.status is V.REANCHORED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == INVARIANT
    assert verdict.corrected.citations[2].snippet == "Version: v2.2.0"  # type: ignore[union-attr]


def test_adversarial_fact_that_contradicts_the_code(build: Build) -> None:
    codebase, old = api_repo(build)
    fake = memory('The API version is "v3.0.0" everywhere.', Citation("src/client/sdk/constants.ts", 1, commit=old))
    verdict = verify_memory(fake, codebase)
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == 'The API version is "v2.1.4" everywhere.'


def test_citation_to_irrelevant_lines_is_unsupported(build: Build) -> None:
    codebase, old = api_repo(build)
    fake = memory(
        "Database connections must be taken from `get_pool()` and returned within 30 seconds.",
        Citation("README.md", 1, commit=old),
        subject="Database connection handling",
    )
    assert verify_memory(fake, codebase).status is V.UNSUPPORTED


def test_citation_to_nonexistent_lines_is_missing(build: Build) -> None:
    codebase, _ = api_repo(build)
    fake = memory(INVARIANT, Citation("src/client/sdk/constants.ts", 90), Citation("src/nowhere.ts", 4))
    verdict = verify_memory(fake, codebase)
    assert verdict.status is V.MISSING
    assert [c.status.value for c in verdict.checks] == ["line_missing", "file_missing"]


def test_fact_citing_nothing_is_unsupported_but_a_preference_is_not_checked(build: Build) -> None:
    codebase, _ = api_repo(build)
    assert verify_memory(memory(INVARIANT), codebase).status is V.UNSUPPORTED
    pref = memory("Prefers terse review comments.", subject="Review tone", kind=Kind.PREFERENCE)
    assert verify_memory(pref, codebase).status is V.VALID


def test_moved_lines_are_re_anchored(build: Build) -> None:
    def shift(b: HistoryBuilder) -> None:
        b.insert("src/client/sdk/constants.ts", 1, "// generated header\n// do not edit\n")
        b.rename("docs/api-reference.md", "docs/reference/api.md")

    codebase, old = api_repo(build, shift)
    verdict = verify_memory(memory(INVARIANT, *cites(old)), codebase)
    assert verdict.status is V.REANCHORED
    assert [str(c) for c in verdict.corrected.citations] == [  # type: ignore[union-attr]
        "src/client/sdk/constants.ts:3",
        "server/routes/api.go:3",
        "docs/reference/api.md:3",
    ]
    assert "moved -> src/client/sdk/constants.ts:3" in verdict.reason


def test_partly_missing_citations_are_dropped(build: Build) -> None:
    codebase, old = api_repo(build, lambda b: b.remove("docs/api-reference.md"))
    verdict = verify_memory(memory(INVARIANT, *cites(old)), codebase)
    assert verdict.status is V.REANCHORED
    assert [str(c) for c in verdict.corrected.citations] == [  # type: ignore[union-attr]
        "src/client/sdk/constants.ts:1",
        "server/routes/api.go:3",
    ]


def test_memory_from_an_abandoned_branch_is_contradicted_on_main(build: Build) -> None:
    b = HistoryBuilder()
    b.write("app/config.py", "TIMEOUT_SECONDS = 30\nRETRIES = 3\n")
    b.commit("base")
    b.branch_from("spike")
    b.replace("app/config.py", "TIMEOUT_SECONDS = 30", "TIMEOUT_SECONDS = 90")
    spike = b.commit("try a longer timeout")
    b.switch("main")
    b.insert("app/config.py", 1, '"""Settings."""\n')
    b.commit("docstring")
    built = build(b)
    learned = memory(
        "Requests time out after 90 seconds (`TIMEOUT_SECONDS`).",
        Citation("app/config.py", 1, commit=built.commits[spike]),
        subject="Request timeout",
    )
    verdict = verify_memory(learned, GitCodebase(built.path, "main"))
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == "Requests time out after 30 seconds (`TIMEOUT_SECONDS`)."
    assert str(verdict.corrected.citations[0]) == "app/config.py:2"  # type: ignore[union-attr]


def test_renamed_identifier_is_contradicted_and_corrected(build: Build) -> None:
    b = HistoryBuilder()
    b.write("db/pool.py", "def create_pool(size=10):\n    return Pool(size)\n")
    first = b.commit("pool")
    b.replace("db/pool.py", "create_pool", "make_pool")
    b.commit("rename helper")
    built = build(b)
    helper = memory(
        "Database connections come from create_pool() in db/pool.py.",
        Citation("db/pool.py", 1, commit=built.commits[first]),
        subject="Database connection handling",
    )
    verdict = verify_memory(helper, GitCodebase(built.path, "main"))
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == "Database connections come from make_pool() in db/pool.py."


def test_a_number_the_code_sets_differently_is_contradicted(build: Build) -> None:
    b = HistoryBuilder()
    b.write("db/settings.py", "MAX_POOL_SIZE = 20\n")
    b.commit("settings")
    built = build(b)
    claim = memory(
        "The connection pool holds at most 10 connections.",
        Citation("db/settings.py", 1),
        subject="Connection pool size",
    )
    verdict = verify_memory(claim, GitCodebase(built.path))
    assert verdict.status is V.CONTRADICTED
    assert verdict.corrected is not None
    assert verdict.corrected.fact == "The connection pool holds at most 20 connections."


def test_harmless_edit_to_a_cited_line_is_re_anchored(build: Build) -> None:
    b = HistoryBuilder()
    b.write("log.js", "const logger = winston.createLogger({ format: fmt });\n")
    first = b.commit("logger")
    b.replace("log.js", "{ format: fmt }", "{ format: fmt, level: 'info' }")
    b.commit("level")
    built = build(b)
    convention = memory(
        "Logging uses Winston through the shared logger.",
        Citation("log.js", 1, commit=built.commits[first]),
        subject="Logging convention",
    )
    verdict = verify_memory(convention, GitCodebase(built.path))
    assert verdict.status is V.REANCHORED
    assert verdict.checks[0].status.value == "changed"


def test_a_plugged_in_verifier_decides(build: Build) -> None:
    class Sceptic:
        def judge(self, memory: Memory, checks: Sequence[CitationCheck], codebase: Codebase) -> Verdict:
            return Verdict(VerdictStatus.UNSUPPORTED, tuple(checks), reason=f"{len(checks)} checks, trust none")

    codebase, old = api_repo(build)
    verdict = verify_memory(memory(INVARIANT, *cites(old)), codebase, verifier=Sceptic())
    assert (verdict.status, verdict.reason) == (V.UNSUPPORTED, "3 checks, trust none")


def test_verify_memories_matches_one_by_one(build: Build) -> None:
    codebase, old = api_repo(build, bump)
    memories = [memory(INVARIANT, *cites(old)), memory(VALUE, *cites(old))]
    assert [v.status for v in verify_memories(memories, codebase)] == [V.REANCHORED, V.CONTRADICTED]
