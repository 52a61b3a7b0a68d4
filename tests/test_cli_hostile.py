"""The command line under bad input: one line, the right exit status, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstore.cli import main
from memstore.verify.history import HistoryBuilder

MOVED = str(Path(__file__).resolve().parents[1] / "scenarios" / "api-version-moved.yaml")


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
    subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env={**env, "GIT_COMMITTER_EMAIL": "a@x"}
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    builder = HistoryBuilder()
    builder.write("src/routes.py", 'ROUTES = re.compile("[/]")\nPREFIX = "/api"\n')
    builder.commit("initial")
    return builder.build(tmp_path / "api").path


def _add(store: str, *extra: str, subject: str = "Routes live under [/api]") -> str:
    result = _cli("memories", "add", "--store", store, "--as", "ana", "--repo", "acme/api", "--subject", subject,
                  "--fact", "The [bold]prefix[/bold] is `/api` :thumbs_up:", "--json", *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stderr  # a warning quotes what it saw, escaped
    assert "\u202e" not in result.stderr
    return json.loads(result.stdout)["id"]  # type: ignore[no-any-return]


def test_markup_in_data_is_shown_as_written(tmp_path: Path, repo: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    _add(store, "--cite", "src/routes.py:1-2", "--anchor", str(repo))
    listed = _cli("memories", "list", "--store", store, "--as", "ana", "--repo", "acme/api")
    assert listed.exit_code == 0, listed.output
    assert "Routes live under [/api]" in listed.output
    assert "[bold]prefix[/bold]" in listed.output
    assert ":thumbs_up:" in listed.output
    verified = _cli("verify", "--store", store, "--as", "ana", "--repo", str(repo), "--name", "acme/api")
    assert verified.exit_code == 0, verified.output  # 0: the memory holds (1 would mean bad memories)
    assert "Routes live under [/api]" in verified.output


def test_control_characters_in_data_never_reach_the_terminal(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    memory_id = _add(store, "--cite", "a.py:1", subject="clear \x1b[2J screen \u202e reversed")
    shown = _cli("memories", "show", memory_id, "--store", store, "--as", "ana")
    listed = _cli("memories", "list", "--store", store, "--as", "ana", "--repo", "acme/api")
    for output in (shown.output, listed.output):
        assert "\x1b" not in output
        assert "\u202e" not in output
    assert "clear \\x1b[2J screen \\u202e reversed" in shown.output


def test_a_hidden_character_in_a_new_memory_is_a_warning_that_shows_it_escaped(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    added = _cli("memories", "add", "--store", store, "--as", "ana", "--repo", "acme/api", "--subject",
                 "clear \u202e reversed", "--fact", "The prefix is `/api`.", "--cite", "a.py:1", "--json")  # fmt: skip
    assert added.exit_code == 0, added.output
    memory_id = json.loads(added.stdout)["id"]
    assert (
        added.stderr == f"warning: {memory_id} carries instructions to the reader: hidden in the subject: '\\u202e'\n"
    )


def test_reading_a_mistyped_store_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _cli("memories", "list", "--store", "sqlite:typo.db", "--as", "ana", "--repo", "acme/api")
    assert result.exit_code == 2
    assert result.output.startswith("Error: there is no store at typo.db")
    assert not (tmp_path / "typo.db").exists()


def test_the_repository_name_is_never_guessed(tmp_path: Path, repo: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    _add(store, "--cite", "src/routes.py:1-2", "--anchor", str(repo))
    _git(repo, "remote", "add", "origin", "/srv/git/acme+api")  # a URL that names no owner/name
    refused = _cli("verify", "--store", store, "--as", "ana", "--repo", str(repo))
    assert refused.exit_code == 2
    assert "cannot tell the owner/name" in refused.output
    assert "pass --name OWNER/NAME" in refused.output
    _git(repo, "remote", "set-url", "origin", "git@github.com:acme/api.git")
    named = _cli("verify", "--store", store, "--as", "ana", "--repo", str(repo))
    assert "repository acme/api (from the origin remote" in named.output
    assert "1 valid" in named.output


def test_a_staged_rename_is_not_retired_by_fix(tmp_path: Path, repo: Path) -> None:
    store = f"sqlite:///{tmp_path / 'm.db'}"
    memory_id = _add(store, "--cite", "src/routes.py:2", "--anchor", str(repo))
    _git(repo, "mv", "src/routes.py", "src/urls.py")  # staged, not committed
    fixed = _cli("verify", "--store", store, "--as", "ana", "--repo", str(repo), "--name", "acme/api", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "reanchored" in fixed.output
    history = _cli("memories", "show", memory_id, "--history", "--store", store, "--as", "ana", "--format", "json")
    versions = json.loads(history.output)
    assert [v["status"] for v in versions] == ["superseded", "active"]
    assert versions[-1]["citations"][0]["path"] == "src/urls.py"


def test_eval_refuses_a_folder_that_holds_something(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = _cli("eval", MOVED, "--agent", "no-memory", "--out", str(out))
    assert refused.exit_code == 2
    assert "is not empty; pass --resume" in refused.output
    still = _cli("eval", MOVED, "--agent", "no-memory", "--out", str(out), "--overwrite")
    assert still.exit_code == 2
    assert "does not look like a run folder" in still.output
    assert (out / "notes.txt").read_text() == "mine"


def test_eval_overwrites_a_run_folder_only_when_told(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _cli("eval", MOVED, "--agent", "no-memory", "--out", str(out), "--workers", "1").exit_code == 3
    assert _cli("eval", MOVED, "--agent", "no-memory", "--out", str(out)).exit_code == 2
    again = _cli("eval", MOVED, "--agent", "jit-verify", "--out", str(out), "--overwrite", "--workers", "1")
    assert again.exit_code == 3, again.output  # one scenario: undecided
    assert list(json.loads((out / "results.json").read_text())["arms"]) == ["jit-verify/sqlite"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "command:"], "Error: 'command:' needs a command line"),
        (["--store", "sqlite:///x/{bogus}.db"], "unknown placeholder(s) bogus"),
        (["--store", "sqlite:///nonexistent/dir/x.db"], "names one store for every trial"),
        (["--agent-timeout", "soon"], "give SECONDS or AGENT=SECONDS"),
        (["--agent-timeout", "clever=3"], "--agent-timeout names agent(s) not in this run: clever"),
        (["--baseline", MOVED], "cannot read results from"),
    ],
)
def test_eval_refuses_bad_configuration_before_running(tmp_path: Path, args: list[str], message: str) -> None:
    result = _cli("eval", MOVED, "--out", str(tmp_path / "run"), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_compare_into_a_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _cli("eval", MOVED, "--agent", "no-memory", "--out", str(out), "--workers", "1").exit_code == 3
    result = _cli("compare", str(out), str(out), "--out", "/nonexistent/dir/x.md")
    assert result.exit_code == 2
    assert result.output == "Error: No such file or directory (/nonexistent/dir/x.md)\n"


def test_one_arm_and_one_surface_still_get_their_reports(tmp_path: Path) -> None:
    scenario = str(Path(MOVED).with_name("read-only-writer.yaml"))
    result = _cli("eval", scenario, "--agent", "no-memory", "--out", str(tmp_path / "run"), "--workers", "1")
    assert result.exit_code == 3, result.output
    assert {"report.html", "report.md", "junit.xml"} <= {p.name for p in (tmp_path / "run").iterdir()}


def test_an_internal_error_is_one_line_unless_debugging(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from memstore.commands import memories

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(memories, "_print_json", broken)
    store = f"sqlite:///{tmp_path / 'm.db'}"
    result = _cli("memories", "add", "--store", store, "--as", "ana", "--repo", "acme/api", "--subject", "s",
                  "--fact", "f", "--cite", "a.py:1", "--json")  # fmt: skip
    assert result.exit_code == 4  # 3 is a run its sample could not decide
    assert result.output.startswith("Internal error: ZeroDivisionError: oops (a bug in memstore")


@pytest.mark.parametrize("content", ["[]", '{"run": {}}', '{"run": {"seed": 0}, "arms": []}', "{", "[" * 100_000])
def test_a_results_file_that_is_not_one_is_a_one_line_error(tmp_path: Path, content: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text(content)
    for args in (["compare", str(run), str(run)], ["report", str(run)]):
        result = _cli(*args)
        assert result.exit_code == 2, result.output
        assert result.output.startswith("Error: ")
        assert len(result.output.splitlines()) == 1


def test_a_folder_without_scenarios_is_an_error_not_an_empty_run(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for args in (["scenarios", "validate", str(tmp_path / "empty")], ["eval", str(tmp_path / "empty")]):
        result = _cli(*args)
        assert result.exit_code == 2
        assert "no scenario files (*.yaml, *.yml) in this folder" in result.output


def test_agent_timeouts_take_seconds_for_all_or_one_agent() -> None:
    from memstore.harness.runfolder.recipe import parse_timeouts as _timeouts

    assert _timeouts(()) == (600.0, ())
    assert _timeouts(("30", "command:python a.py=5")) == (30.0, (("command:python a.py", 5.0),))
