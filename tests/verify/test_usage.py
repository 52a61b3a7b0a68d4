"""A claim that a name is no longer used: the package scan behind it is bounded and kept per commit."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstore import Citation, Kind, Memory, Surface
from memstore.verify import FileRead, GitCodebase, Verdict, VerdictStatus, verify_memory
from memstore.verify.codebase import MAX_FILE_BYTES
from memstore.verify.history import BuiltRepository, HistoryBuilder
from memstore.verify.usage import SCAN_BYTES, SCAN_FILES
from tests.deadline import within
from tests.verify.conftest import Build

T0 = datetime(2025, 1, 1, tzinfo=UTC)
SETTINGS = "OLD_LIMIT = 5\nOLD_TIMEOUT = 30\n"
USES = "from pkg.settings import OLD_LIMIT, OLD_TIMEOUT\n\n\ndef limits():\n    return OLD_LIMIT, OLD_TIMEOUT\n"


class Counting(GitCodebase):
    """A codebase that records the files it is asked for (the package scan reads through it)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.reads: list[str] = []

    def read(self, path: str) -> FileRead:
        self.reads.append(path)
        return super().read(path)


def _package(build: Build, generated: dict[str, str]) -> BuiltRepository:
    """``pkg/settings.py`` defines two constants that ``pkg/uses.py`` reads, beside ``generated`` modules."""
    b = HistoryBuilder()
    b.write("pkg/__init__.py", "").write("pkg/settings.py", SETTINGS).write("pkg/uses.py", USES)
    for path, text in generated.items():
        b.write(path, text)
    b.commit("the package", label="c")
    return build(b, bare=True)


def _unused(built: BuiltRepository, name: str, line: int) -> Memory:
    return Memory(
        id="mem_test", repo="acme/pkg", kind=Kind.FACT, subject="settings",
        fact=f"`{name}` is deprecated and no longer used.",
        citations=(Citation("pkg/settings.py", line, commit=built.commits["c"]),), reason="Seen in a change.",
        author="ana", surface=Surface.CODING_AGENT, created_at=T0, refreshed_at=T0,
    )  # fmt: skip


def _verify(built: BuiltRepository, memory: Memory) -> tuple[Verdict, list[str]]:
    codebase = Counting(built.path, built.commits["c"])
    return verify_memory(memory, codebase), codebase.reads


def _module(index: int, size: int) -> str:
    line = f"VALUE_{index} = {'1' * 40}\n"
    return line * (size // len(line) + 1)


@pytest.mark.parametrize(
    "generated",
    [
        pytest.param({f"pkg/generated/m{i:04}.py": _module(i, 256 * 1024) for i in range(20)}, id="bytes"),
        pytest.param({f"pkg/generated/m{i:04}.py": f"X{i} = {i}\n" for i in range(SCAN_FILES)}, id="files"),
    ],
)
def test_a_no_longer_used_claim_past_the_scan_bound_is_not_checked(build: Build, generated: dict[str, str]) -> None:
    assert sum(len(t) for t in generated.values()) > SCAN_BYTES or len(generated) > SCAN_FILES - 3
    built = _package(build, generated)
    (verdict, reads), took = within(60, lambda: _verify(built, _unused(built, "OLD_LIMIT", 1)))
    assert took < 10
    assert verdict.judge != "refuted"  # `pkg/uses.py` reads it, but the scan never got there: no guess
    assert "not checked" in verdict.uncertain
    assert "OLD_LIMIT" in verdict.uncertain
    read = sum(len(generated.get(path, "")) for path in reads)
    assert read <= SCAN_BYTES + MAX_FILE_BYTES  # the budget and the one file that crossed it, not the package


def test_a_no_longer_used_claim_within_the_bound_is_refuted_by_a_module_that_reads_it(build: Build) -> None:
    built = _package(build, {"pkg/generated/m0.py": _module(0, 4096)})
    verdict, _ = _verify(built, _unused(built, "OLD_LIMIT", 1))
    assert (verdict.status, verdict.judge) == (VerdictStatus.UNSUPPORTED, "refuted")
    assert verdict.reason == "the code refutes the fact: OLD_LIMIT is still read by the package"


def test_the_package_scan_is_kept_per_commit_so_a_second_claim_reads_no_module_again(build: Build) -> None:
    built = _package(build, {f"pkg/generated/m{i}.py": _module(i, 4096) for i in range(5)})
    first, first_reads = _verify(built, _unused(built, "OLD_LIMIT", 1))
    second, second_reads = _verify(built, _unused(built, "OLD_TIMEOUT", 2))  # another codebase, the same commit
    assert [v.judge for v in (first, second)] == ["refuted", "refuted"]
    assert "pkg/uses.py" in first_reads
    assert [p for p in second_reads if p.startswith("pkg/generated/") or p == "pkg/uses.py"] == []
