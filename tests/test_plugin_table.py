"""The plug-in table's rules (`memstore.plugins`, `memstore.registry`): one registry and one
entry-point group per kind; memstore's own built-ins are entry points of its distribution,
declared in ``pyproject.toml`` and nowhere in the code; a third party's distribution plugs in
through the same groups. Third-party plug-ins here are real distributions (a ``dist-info`` folder
on ``sys.path``, as pip installs one), not entry-point objects handed to the registry."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.access import AccessPolicy
from memstore.backends.mcp import _parse
from memstore.backends.memory import InMemoryStore
from memstore.cli import main
from memstore.errors import ConfigurationError
from memstore.harness.compose import choose
from memstore.harness.run.boundary.agents import make_agent
from memstore.harness.run.runner.pool import Arm, RunConfig, run
from memstore.plugins import GROUPS, STORES, TABLE, listing
from memstore.registry import Registry
from memstore.store import BACKENDS, open_store
from tests.distributions import install
from tests.harness.conftest import scenario

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_KINDS = ("store", "agent", "agent scheme", "metric", "chart", "gate", "grading", "MCP tool mapping", "command")
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]

PLUGIN = """
import click

from memstore.backends.memory import open_memory
from memstore.agents.stubs import NoMemoryAgent


def open_team(uri, options):
    return open_memory("memory://", options)


class Careful(NoMemoryAgent):
    name = "careful"


def careful(params):
    return Careful(params)


@click.command(name="hello")
def hello():
    click.echo("hello from a plug-in")


def team_scheme(argument, runtime):
    return Careful({})


from memstore.backends.mcp import ServerMemory
from memstore.harness.grading.trial import TrialGrading


class TeamMemory(ServerMemory):
    name = "team-memory"


class CountingGrading(TrialGrading):
    sessions = 0

    def session(self, played):
        type(self).sessions += 1
        super().session(played)
"""


def test_one_registry_and_one_group_for_every_kind() -> None:
    assert tuple(r.kind for r in TABLE) == PLUGIN_KINDS
    assert len(GROUPS) == len(TABLE)
    assert all(r.group.startswith("memstore.") for r in TABLE)


def test_the_installed_built_ins_are_the_ones_pyproject_declares() -> None:
    """A stale install (entry points changed, ``pip install -e .`` not run again) fails here."""
    installed = {(p.group, p.name, p.value) for p in listing() if p.source == "built-in"}
    declared = {
        (group, name, value)
        for group, entries in DECLARED.items()
        if group in GROUPS
        for name, value in entries.items()
    }
    assert installed == declared
    assert {group for group, _, _ in declared} == GROUPS  # every kind has its built-ins


def test_every_built_in_loads() -> None:
    for registry in TABLE:
        for name in registry.built_ins():
            assert registry.find(name) is not None, (registry.kind, name)


def test_a_registration_comes_before_an_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BACKENDS, "registered", {})
    seen: list[str] = []

    def mine(uri: str, options: object) -> object:
        seen.append(uri)
        return open_store("memory://", access=AccessPolicy())

    with BACKENDS.registration("sqlite", mine):  # type: ignore[arg-type]
        open_store("sqlite:///nowhere.db", access=AccessPolicy())
    assert seen == ["sqlite:///nowhere.db"]
    assert BACKENDS.find("sqlite").__name__ == "open_sqlite"  # type: ignore[union-attr]


def test_a_third_party_distribution_plugs_in_through_each_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups = {
        "memstore.backends": {"team": "team_plugin:open_team"},
        "memstore.agents": {"careful": "team_plugin:careful"},
        "memstore.commands": {"hello": "team_plugin:hello"},
    }
    install(tmp_path, "team-plugin", groups, monkeypatch, modules={"team_plugin": PLUGIN})
    assert isinstance(open_store("team://x", access=AccessPolicy()), InMemoryStore)
    assert make_agent("careful").name == "careful"
    result = CliRunner().invoke(main, ["hello"])
    assert (result.exit_code, result.output) == (0, "hello from a plug-in\n")
    assert "hello" in CliRunner().invoke(main, ["--help"]).output
    rows = {(p.kind, p.name): p for p in listing()}
    assert rows["store", "team"].source == rows["agent", "careful"].source == "team-plugin"
    assert rows["store", "sqlite"].source == "built-in"


def test_a_scheme_a_tool_mapping_and_a_grading_of_another_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups = {
        "memstore.agent_schemes": {"team": "team_plugin:team_scheme"},
        "memstore.mcp_mappings": {"team-memory": "team_plugin:TeamMemory"},
        "memstore.gradings": {"counting": "team_plugin:CountingGrading"},
    }
    install(tmp_path, "team-plugin", groups, monkeypatch, modules={"team_plugin": PLUGIN})
    assert make_agent("team:anything").name == "careful"
    assert _parse("mcp:team-memory?folder=/x")[0].__name__ == "TeamMemory"
    parts = choose("counting")
    config = RunConfig(scenarios=(scenario("api-version-control"),), arms=(Arm("no-memory", "memory://"),))
    output = run(config, grading=parts.grading)
    assert len(output.sessions) == parts.grading.sessions > 0  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match=r"unknown grading 'nonesuch'; known: counting, trial"):
        choose("nonesuch")


def test_memstore_plugins_lists_every_kind_with_its_group_and_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, "team-plugin", {"memstore.backends": {"team": "team_plugin:open_team"}}, monkeypatch)
    result = CliRunner().invoke(main, ["plugins"])
    assert result.exit_code == 0, result.output
    headers = [line for line in result.output.splitlines() if not line.startswith(" ")]
    assert headers == [f"{r.kind} ({r.group})" for r in TABLE]
    rows = [line.split() for line in result.output.splitlines() if line.startswith(" ")]
    assert ["team", "team_plugin:open_team", "team-plugin"] in rows
    assert ["sqlite", "memstore.backends.sqlite:open_sqlite", "built-in"] in rows
    assert ["plugins", "memstore.commands.plugins:plugins_command", "built-in"] in rows
    # the kinds that register by decorator say what their modules registered
    assert "    registers: integrity, contract, no_harm, harm_seen, verifier, baseline\n" in result.output
    assert "    registers: rates, forest, confusion, healing\n" in result.output
    assert "    registers: task_success_rate, merge_rate," in result.output


TEAM_GATES = """
from memstore.harness.report.families import gate


@gate("cost", each_arm=True)
def cost(run, arm):
    return []
"""


def test_memstore_plugins_names_a_plugins_gate_families_and_a_module_that_cannot_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstore.plugins import CHARTS, GATES

    for registry in (GATES, CHARTS):
        registry.load()
        monkeypatch.setattr(registry, "registered", dict(registry.registered))
        monkeypatch.setattr(registry, "_loaded", False)
    groups = {"memstore.gates": {"team": "team_gates"}, "memstore.charts": {"broken": "no_such_module"}}
    install(tmp_path, "team-gates", groups, monkeypatch, {"team_gates": TEAM_GATES})
    result = CliRunner().invoke(main, ["plugins"])
    assert result.exit_code == 0, result.output
    assert "    registers: integrity, contract, no_harm, harm_seen, verifier, baseline, cost\n" in result.output
    assert re.search(r"    not loaded: .*no_such_module", result.output)


def test_a_plugin_cannot_take_a_built_in_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path, "squatter", {"memstore.backends": {"sqlite": "team_plugin:open_team"}}, monkeypatch)
    assert BACKENDS.find("sqlite").__name__ == "open_sqlite"  # type: ignore[union-attr]
    (row,) = [p for p in listing() if p.name == "sqlite" and p.source == "squatter"]
    assert row.note == "shadowed: a built-in has this name"


def test_two_plugins_of_one_name_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "a", "team-a", {"memstore.backends": {"team": "team_a:open"}}, monkeypatch)
    install(tmp_path / "b", "team-b", {"memstore.backends": {"team": "team_b:open"}}, monkeypatch)
    assert STORES.knows("team")
    with pytest.raises(ConfigurationError, match=r"store 'team' is declared by team-a \(team_a:open\) and team-b"):
        open_store("team://x", access=AccessPolicy())
    assert open_store("memory://", access=AccessPolicy()) is not None  # the other names are unharmed


def test_a_group_without_memstores_own_entries_means_memstore_is_not_installed() -> None:
    with pytest.raises(ConfigurationError, match=r"not installed .*`pip install -e \.`"):
        Registry("thing", "memstore.no_such_group").names()


def test_commands_are_never_imported_from_a_reference() -> None:
    result = CliRunner().invoke(main, ["os.path:join"])
    assert result.exit_code == 2
    assert re.search(r"No such command 'os\.path:join'", result.output)


def test_no_module_of_the_package_names_a_built_in() -> None:
    """The built-ins are declared in pyproject.toml only: no string in the code is one's reference."""
    values = {value for group, entries in DECLARED.items() if group in GROUPS for value in entries.values()}
    found = []
    for path in sorted((ROOT / "memstore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in values:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert found == []
