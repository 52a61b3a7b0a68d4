"""Agents plug in as stores do: module:factory specs, a `memstore.agents` entry point, and
registrations that reach spawn workers (or are refused before the run, with the fix)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memstore.errors import ConfigurationError
from memstore.harness.analysis.run_results import Role
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.boundary import agents
from memstore.harness.run.boundary.agents import make_agent, register_agent
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, check_config, iter_arms, run
from tests.harness.conftest import scenario

AGENT_MODULE = """
from memstore.harness.analysis.run_results import Role
from memstore.agents.stubs import NoMemoryAgent


class Careful(NoMemoryAgent):
    name = "careful"
    role = Role.TREATMENT


def make(config):
    return Careful(config)
"""


@pytest.fixture
def agent_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "my_agents"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(AGENT_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_agents:make"


def test_a_module_factory_spec_is_an_agent_in_every_worker(agent_module: str) -> None:
    config = RunConfig(
        scenarios=(scenario("api-version-control"),), arms=(Arm(agent_module, "sqlite:"),), trials=2, workers=2
    )
    check_config(config)
    output = run(config, grading=TrialGrading)
    assert output.failures == []
    assert [s.outcome.merged for s in output.sessions] == [True, True]  # it explores like the no-memory stub
    assert {s.role for s in output.sessions} == {"treatment"}


def test_an_entry_point_names_an_agent(tmp_path: Path, agent_module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "my_agents-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agents\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[memstore.agents]\ncareful = {agent_module}\n")
    assert make_agent("careful").name == "careful"
    output = run(
        RunConfig(scenarios=(scenario("api-version-control"),), arms=(Arm("careful", "sqlite:"),), workers=2),
        grading=TrialGrading,
    )
    assert [s.agent for s in output.sessions] == ["careful"]


def test_a_registration_made_here_reaches_spawn_workers(agent_module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import my_agents  # type: ignore[import-not-found]

    monkeypatch.setitem(agents.AGENTS.registered, "mine", my_agents.make)
    config = RunConfig(scenarios=(scenario("api-version-control"),), arms=(Arm("mine", "sqlite:"),), workers=2)
    check_config(config)
    output = run(config, grading=TrialGrading)
    assert output.failures == []
    assert [s.arm for s in output.sessions] == ["mine/sqlite"]


def test_a_registration_workers_cannot_import_is_refused_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.agents.stubs import NoMemoryAgent

    monkeypatch.setitem(agents.AGENTS.registered, "local", lambda config: NoMemoryAgent(config))
    config = RunConfig(scenarios=(scenario("api-version-control"),), arms=(Arm("local", "sqlite:"),), workers=2)
    with pytest.raises(ConfigurationError, match=r"worker processes cannot import .* or run with --workers 1"):
        check_config(config)
    one = RunConfig(scenarios=config.scenarios, arms=config.arms, workers=1)
    check_config(one)  # in one process it is fine
    assert run(one, grading=TrialGrading).failures == []


def test_register_agent_is_a_decorator_and_roles_are_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.agents.stubs import TrustingAgent

    monkeypatch.setattr(agents.AGENTS, "registered", {})

    @register_agent("believer")
    def believer(config: object) -> TrustingAgent:
        return TrustingAgent()

    assert make_agent("believer").name == "trusting"
    assert agents.agent_role(make_agent("believer")) is Role.HARM_PROBE
    assert agents.agent_role(make_agent("no-memory")) is Role.CONTROL
    # the control runs once, whatever it is called: its role says it reads no store
    assert [a.name for a in iter_arms(["no-memory", "jit-verify"], ["sqlite:", "memory://"])] == [
        "no-memory/sqlite",
        "jit-verify/sqlite",
        "jit-verify/memory",
    ]


def test_unknown_agents_name_the_ways_to_plug_one_in() -> None:
    known = r"known: blind-trusting, jit-verify, no-memory, trusting, command:CMD, package\.module"
    with pytest.raises(ConfigurationError, match=known):
        make_agent("clever")
    with pytest.raises(ConfigurationError, match=r"cannot import agent module .no_such_module. \(no_such_module:"):
        make_agent("no_such_module:make")


def test_a_store_registered_here_reaches_spawn_workers_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore import backends
    from memstore.backends.memory import open_memory

    monkeypatch.setitem(backends.BACKENDS.registered, "mine", open_memory)
    config = RunConfig(scenarios=(scenario("api-version-control"),), arms=(Arm("jit-verify", "mine://"),), workers=2)
    check_config(config)
    output = run(config, grading=TrialGrading)
    assert output.failures == []
    assert [s.store for s in output.sessions] == ["mine"]
    monkeypatch.setitem(backends.BACKENDS.registered, "local", lambda uri, options: open_memory(uri, options))
    refused = RunConfig(scenarios=config.scenarios, arms=(Arm("jit-verify", "local://"),), workers=2)
    with pytest.raises(ConfigurationError, match="store 'local' was registered with"):
        check_config(refused)
