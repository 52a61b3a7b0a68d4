"""``memstore scenarios`` as a user runs it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memstore.cli import main
from memstore.harness.scenarios.data import scenarios_dir


def test_validate_the_library() -> None:
    result = CliRunner().invoke(main, ["scenarios", "validate"])
    assert result.exit_code == 0, result.output
    files = len(list(scenarios_dir().rglob("*.yaml")))  # scenarios/mined/ included
    assert result.output == f"{files} file(s), {files - 1 + 100} scenario(s): all valid\n"


def test_validate_reports_problems_and_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = (scenarios_dir() / "api-version-contradicted.yaml").read_text()
    bad.write_text(text.replace("truth: contradicted", "truth: valid"))
    result = CliRunner().invoke(main, ["scenarios", "validate", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:33:12: at memories[1].truth: truth 'valid' does not hold: " in result.output
    assert result.output.endswith("1 problem(s) in 1 file(s)\n")


def test_list_shows_the_library() -> None:
    result = CliRunner().invoke(main, ["scenarios", "list"])
    assert result.exit_code == 0, result.output
    assert "cross-agent-logging" in result.output
    assert "generated-population (100 generated)" in result.output


def test_show_describes_a_scenario() -> None:
    result = CliRunner().invoke(main, ["scenarios", "show", "dead-branch-flood"])
    assert result.exit_code == 0, result.output
    assert "v3-notes x60: abandoned, missing at main; fact by exp, learned at v3-experiment, 2d before" in result.output
    assert "bump-version: coding_agent as dev, after 1h; needs api-sync" in result.output


def test_show_unknown_scenario() -> None:
    result = CliRunner().invoke(main, ["scenarios", "show", "api-version-mooved"])
    assert result.exit_code == 2
    assert "no scenario 'api-version-mooved'" in result.output
