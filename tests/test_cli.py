"""The ``memstore memories`` commands, run as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstore.cli import main

API_FACT = [
    "--repo",
    "acme/api",
    "--subject",
    "API version synchronization",
    "--fact",
    "API version must match between client SDK, server routes, and documentation.",
    "--cite",
    "src/client/sdk/constants.ts:12",
    "--cite",
    "server/routes/api.go:8",
    "--reason",
    "If it drifts, the integration fails.",
]


@pytest.fixture
def run(tmp_path: Path) -> object:
    uri = f"sqlite:///{tmp_path / 'cli.db'}"

    def invoke(*args: str, user: str = "ana", access: Path | None = None, ok: bool = True) -> Result:
        extra = ["--store", uri, "--as", user] + (["--access", str(access)] if access else [])
        group, command, *rest = args
        result = CliRunner().invoke(main, [group, command, *extra, *rest])
        assert (result.exit_code == 0) is ok, result.output
        return result

    return invoke


def _add(run, *extra: str) -> str:  # type: ignore[no-untyped-def]
    return json.loads(run("memories", "add", *API_FACT, "--json", *extra).output)["id"]  # type: ignore[no-any-return]


def test_add_then_list_as_json(run) -> None:  # type: ignore[no-untyped-def]
    memory_id = _add(run)
    listed = json.loads(run("memories", "list", "--repo", "acme/api", "--format", "json").output)
    assert [m["id"] for m in listed] == [memory_id]
    assert listed[0]["citations"] == [
        {"path": "src/client/sdk/constants.ts", "line": 12},
        {"path": "server/routes/api.go", "line": 8},
    ]
    assert listed[0]["author"] == "ana"
    assert listed[0]["surface"] == "cli"


def test_list_table_names_the_memory(run) -> None:  # type: ignore[no-untyped-def]
    memory_id = _add(run)
    output = run("memories", "list", "--repo", "acme/api").output
    assert "1 memory of acme/api (cli, as ana)" in output
    assert memory_id in output
    assert "server/routes/api.go:8" in output


def test_correction_and_history(run) -> None:  # type: ignore[no-untyped-def]
    old = _add(run)
    output = run("memories", "add", *API_FACT[:-4], "--cite", "a.py:1", "--supersedes", old).output
    assert output.startswith(f"corrected {old} as mem_")
    shown = json.loads(run("memories", "show", old, "--history", "--format", "json").output)
    assert [m["status"] for m in shown] == ["superseded", "active"]
    assert shown[1]["supersedes"] == old


def test_show_text(run) -> None:  # type: ignore[no-untyped-def]
    memory_id = _add(run)
    output = run("memories", "show", memory_id).output
    assert f"{memory_id}  [active] fact in acme/api" in output
    assert "  cites:     server/routes/api.go:8" in output


def test_retire_refresh_delete_sweep(run) -> None:  # type: ignore[no-untyped-def]
    kept, retired = _add(run), _add(run)
    assert run("memories", "refresh", kept).output.startswith(f"refreshed {kept} at ")
    assert run("memories", "retire", retired, "--reason", "cites deleted code").output == f"retired {retired}\n"
    status = json.loads(run("memories", "show", retired, "--format", "json").output)["status"]
    assert status == "retired"
    assert run("memories", "delete", kept, "--yes").output == f"deleted {kept}\n"
    assert run("memories", "list", "--repo", "acme/api", "--format", "json").output.strip() == "[]"
    assert run("memories", "sweep").output == "swept 0 expired memories\n"


def test_bad_input_is_a_clean_error_and_stores_nothing(run) -> None:  # type: ignore[no-untyped-def]
    result = run("memories", "add", *API_FACT[:-4], "--cite", "../../etc/passwd:1", ok=False)
    assert result.exit_code == 2
    assert "Error: citations[1]: path: the path must not contain '..' segments" in result.output
    assert "Traceback" not in result.output
    assert run("memories", "list", "--repo", "acme/api", "--format", "json").output.strip() == "[]"


def test_unknown_memory_is_not_found(run) -> None:  # type: ignore[no-untyped-def]
    _add(run)
    result = run("memories", "show", "mem_nope", ok=False)
    assert result.exit_code == 2
    assert result.output == "Error: memory 'mem_nope' not found\n"


def test_access_file_limits_what_a_user_sees(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    access = tmp_path / "access.toml"
    access.write_text('[users.ana]\n"acme/*" = "admin"\n\n[users.rae]\n"acme/api" = "read"\n')
    memory_id = _add(run)
    seen = run("memories", "list", "--repo", "acme/api", "--format", "json", user="rae", access=access).output
    assert [m["id"] for m in json.loads(seen)] == [memory_id]
    denied = run("memories", "add", *API_FACT, user="rae", access=access, ok=False)
    assert "needs write access to 'acme/api'" in denied.output
    hidden = run("memories", "show", memory_id, user="mallory", access=access, ok=False)
    assert hidden.output == f"Error: memory '{memory_id}' not found\n"


def test_bad_access_file_is_reported(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    access = tmp_path / "access.toml"
    access.write_text('[users.ana]\n"acme/api" = "owner"\n')
    result = run("memories", "list", "--repo", "acme/api", access=access, ok=False)
    assert "level must be none, read, write or admin, got 'owner'" in result.output


def test_unknown_store_scheme_is_reported() -> None:
    result = CliRunner().invoke(main, ["memories", "sweep", "--store", "nosuch://x", "--as", "ana"])
    assert result.exit_code == 2
    known = (
        "agentmem://, bettermemory://, facto://, mcp://, mem0://, memcite://, memory://, naive://, postgres://, "
        "postgresql://, ranked://, repomemory://, search://, sqlite://, traced://"
    )
    assert f"known schemes are {known}" in result.output


def test_foreign_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("not a database")
    result = CliRunner().invoke(main, ["memories", "sweep", "--store", f"sqlite:///{target}", "--as", "ana"])
    assert result.exit_code == 2
    assert "is not a SQLite database; refusing to touch it" in result.output
    assert target.read_text() == "not a database"
