"""Run folders from elsewhere: a tampered shard, manifest or table is a one-line error, never an
internal error; ``--resume`` runs a bad shard's unit again; ``merge`` refuses it; a gzip bomb
is refused before it is decompressed whole."""

from __future__ import annotations

import gzip
import json
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.records import TABLES
from memstore.harness.run.isolation.process import gunzip_bounded
from memstore.harness.runfolder import results, shards
from memstore.harness.runfolder.shards import SHARD_CAP, BadShard, check_shard

ROOT = Path(__file__).parents[1]
OPTIONS = [str(ROOT / "scenarios" / "api-version-control.yaml"), str(ROOT / "scenarios" / "api-docs-deleted.yaml")]


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("made") / "run"
    code, output = _cli("eval", *OPTIONS, "--out", str(out))
    assert code == 3, output  # a small run: undecided
    return out


@pytest.fixture
def copy(made: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(made, target)
    return target


def _shards(folder: Path) -> list[Path]:
    return sorted((folder / "shards").glob("*.json.gz"))


def _bomb(size: int = 1024**3) -> bytes:
    """About a megabyte of gzip (one member, one deflate stream) that expands to ``size`` bytes of
    spaces. A megabyte of spaces is compressed once, ending in a full flush, which leaves the
    compressor as it began: every further megabyte compresses to the same bytes, so they are
    repeated rather than compressed again (seconds instead of a minute for gigabytes)."""
    block = b" " * (1024 * 1024)
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    again = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    blocks, crc = size // len(block), 0
    for _ in range(blocks):
        crc = zlib.crc32(block, crc)
    end = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # the last, empty, deflate block
    trailer = struct.pack("<II", crc, (blocks * len(block)) & 0xFFFFFFFF)
    return first + again * (blocks - 1) + end + trailer


def test_a_shard_of_another_unit_renamed_over_one_is_run_again_and_refused_by_merge(copy: Path, made: Path) -> None:
    first, second = _shards(copy)[:2]
    shutil.copyfile(second, first)  # the name says one unit, the content another
    with pytest.raises(BadShard, match="not the unit its name says"):
        check_shard(first, first.name.removesuffix(".json.gz"))
    code, output = _cli("merge", str(copy), "--out", str(copy.parent / "merged"))
    assert code == 2
    assert "a bad shard" in output
    assert "not the unit its name says" in output
    assert "Internal error" not in output
    (copy / "results.json").unlink()
    code, output = _cli("eval", "--resume", str(copy))
    assert code == 3, output  # a small run: undecided
    assert (copy / "results.json").read_bytes() == (made / "results.json").read_bytes()  # the unit ran again


@pytest.mark.parametrize(
    "content",
    [
        {"engine": "ENGINE", "unit": "UNIT", "sessions": "not a list"},
        {"engine": "ENGINE", "unit": "UNIT", "sessions": [["a", "row", "as", "a", "list"]]},
        {"engine": "ENGINE", "unit": "UNIT", "events": [{"kind": {"nested": "object"}}]},
        ["not", "an", "object"],
    ],
)
def test_a_shard_with_wrong_types_is_refused_and_run_again(copy: Path, made: Path, content: object) -> None:
    shard = _shards(copy)[0]
    real = json.loads(gzip.decompress(shard.read_bytes()))
    text = json.dumps(content).replace("ENGINE", real["engine"]).replace("UNIT", real["unit"])
    shard.write_bytes(gzip.compress(text.encode()))
    code, output = _cli("merge", str(copy), "--out", str(copy.parent / "merged"))
    assert (code, "Internal error" in output) == (2, False), output
    assert "a bad shard" in output
    code, output = _cli("eval", "--resume", str(copy))
    assert code == 3, output  # a small run: undecided
    assert (copy / "results.json").read_bytes() == (made / "results.json").read_bytes()


def test_a_gzip_bomb_shard_is_refused_without_expanding_it(copy: Path) -> None:
    shard = _shards(copy)[0]
    shard.write_bytes(_bomb(2 * SHARD_CAP))  # 512 MiB of spaces in about half a megabyte
    with pytest.raises(BadShard, match="decompresses to more than"):
        check_shard(shard, shard.name.removesuffix(".json.gz"))
    code, output = _cli("merge", str(copy), "--out", str(copy.parent / "merged"))
    assert code == 2
    assert "decompresses to more than" in output


def test_a_gzip_bomb_table_is_a_one_line_error_for_report(copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the tables' cap (2 GiB) lowered to 256 MiB, so that refusing the bomb does not first
    # inflate 2 GiB of spaces: the check and its message are the same at any cap
    monkeypatch.setattr(results, "TABLE_CAP", 256 * 1024**2)
    (copy / "events.csv.gz").write_bytes(_bomb(512 * 1024**2))
    code, output = _cli("report", str(copy))
    assert code == 2, output
    assert "decompresses to more than" in output
    assert "Internal error" not in output


def test_the_bomb_is_a_valid_gzip_file_of_the_size_it_says() -> None:
    assert gzip.decompress(_bomb(8 * 1024**2)) == b" " * (8 * 1024**2)
    assert len(_bomb(2 * 1024**3)) < 4 * 1024**2


def test_bounded_gunzip_reads_what_is_within_bounds() -> None:
    data = gzip.compress(b"a" * 1000) + gzip.compress(b"b" * 10)  # two members
    assert gunzip_bounded(data, 1010) == b"a" * 1000 + b"b" * 10
    with pytest.raises(ValueError, match="more than the 1,009 bytes"):
        gunzip_bounded(data, 1009)
    with pytest.raises(ValueError, match="truncated"):
        gunzip_bounded(data[:20], 10_000)
    with pytest.raises(ValueError, match="not gzip"):
        gunzip_bounded(b"plain text", 10_000)


@pytest.mark.parametrize(
    ("field", "value"),
    [("trials", "two"), ("trials", True), ("seed", 1.5), ("stores", "sqlite:"), ("agents", [1, 2]),
     ("max_cost", "cheap"), ("agent_sandbox", 3)],
)  # fmt: skip
def test_a_manifest_with_wrong_types_is_a_one_line_error(copy: Path, field: str, value: object) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["recipe"][field] = value
    (copy / "manifest.json").write_text(json.dumps(manifest))
    for command in (["eval", "--resume", str(copy)], ["merge", str(copy), "--out", str(copy.parent / "m")]):
        code, output = _cli(*command)
        assert code == 2, output
        assert f"recipe.{field} must be" in output
        assert "Internal error" not in output


@pytest.mark.parametrize("manifest", ['{"recipe": {"trials": 0}}', "[1, 2]", "{", '{"engine": 5}'])
def test_a_manifest_that_is_not_one_is_a_one_line_error(copy: Path, manifest: str) -> None:
    (copy / "manifest.json").write_text(manifest)
    code, output = _cli("eval", "--resume", str(copy))
    assert code == 2, output
    assert "Internal error" not in output
    assert len(output.strip().splitlines()) <= 2


# `memstore` with one of its resources limited: RLIMIT_AS (bytes of memory) or RLIMIT_FSIZE
# (bytes a file may grow to, past which a write fails with EFBIG, as on a full disk).
LIMITED = """
import resource, signal, sys
limit = getattr(resource, sys.argv[1])
resource.setrlimit(limit, (int(sys.argv[2]), int(sys.argv[2])))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
from memstore.cli import main
sys.argv = ["memstore", *sys.argv[3:]]
main()
"""


def _limited(resource: str, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LIMITED, resource, str(limit), *args], capture_output=True, text=True, check=False
    )


def test_a_shard_a_real_unit_could_not_hold_is_refused_before_it_exhausts_memory(copy: Path) -> None:
    """200 MiB of shard (within the 256 MiB once allowed) merged in 700 MB of memory."""
    _shards(copy)[0].write_bytes(_bomb(200 * 1024**2))
    done = _limited("RLIMIT_AS", 700 * 1024**2, "merge", str(copy), "--out", str(copy.parent / "merged"))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {copy}: a bad shard ({_shards(copy)[0].name}: decompresses to more than the ")
    assert line.endswith(f" {SHARD_CAP:,} bytes allowed); not merging it")


def test_running_out_of_memory_reading_a_shard_is_an_error_about_that_shard(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = _shards(copy)[0]

    def exhausted(data: bytes) -> object:
        raise MemoryError

    monkeypatch.setattr(shards.json, "loads", exhausted)
    with pytest.raises(BadShard, match=f"^{shard.name}: too large to read in the memory left$"):
        check_shard(shard, shard.name.removesuffix(".json.gz"))


def test_a_results_file_that_cannot_be_written_is_left_whole_and_the_run_exits_4(tmp_path: Path) -> None:
    """A write that fails half-way (as on a full disk) leaves results.json as it was, and says so in
    one line: the machine failed the run, it was not misused (exit 2 is for usage errors). The
    store is in memory, so that resuming writes nothing but the run folder's own files."""
    run = tmp_path / "run"
    code, output = _cli("eval", OPTIONS[0], "--agent", "no-memory", "--store", "memory://", "--out", str(run))
    assert code == 3, output  # one scenario: undecided
    before = (run / "results.json").read_bytes()
    limit = len(before) // 2
    assert max((run / f"{table}.csv.gz").stat().st_size for table in TABLES) < limit  # they are written first
    done = _limited("RLIMIT_FSIZE", limit, "eval", "--resume", str(run))
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"Error: could not write the run folder {run}: File too large (results.json); no file in it is cut "
        f"short, and its shards are kept: `memstore eval --resume {run}` writes it again"
    )
    assert (run / "results.json").read_bytes() == before
    assert sorted(p.name for p in run.iterdir() if p.name.endswith(".part")) == []
