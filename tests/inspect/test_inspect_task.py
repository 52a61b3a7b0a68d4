"""memstore's inspect task (``memstore.inspect``), run offline with inspect's mock model: samples from
scenarios, sessions worked by a solver, scores graded by memstore from the world after the sample ran."""

from __future__ import annotations

import json
from datetime import timedelta
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from memstore.harness.grading import TrialGrading
from memstore.harness.records import row
from memstore.harness.run import AgentRuntime, run_unit
from memstore.harness.run.output import Arm, Unit
from memstore.harness.scenarios import load_library, scenarios_dir
from memstore.inspect import deferred
from tests.inspect.scripted import EPOCHS, run, scripted

pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")


def _scores(log: Any) -> dict[tuple[str, int], float]:
    return {(str(s.id), s.epoch): s.scores["memstore_scorer"].value for s in log.samples}


def _rows(log: Any, sample: str, table: str, epoch: int = 1) -> list[dict[str, Any]]:
    found = next(s for s in log.samples if s.id == sample and s.epoch == epoch)
    rows: list[dict[str, Any]] = found.scores["memstore_scorer"].metadata["memstore"][table]
    return rows


def test_a_model_that_works_right_scores_1_and_one_that_works_wrong_0(model_logs: dict[str, Any]) -> None:
    right, wrong = model_logs["right"], model_logs["wrong"]
    samples = ("api-version-moved", "jest-to-vitest", "logging-abandoned-branch")
    assert (right.status, wrong.status) == ("success", "success")
    assert _scores(right) == {(s, e): 1.0 for s in samples for e in range(1, EPOCHS + 1)}
    assert _scores(wrong) == {(s, e): 0.0 for s in samples for e in range(1, EPOCHS + 1)}
    assert right.results.scores[0].metrics["mean"].value == 1.0
    # graded from the world: the bump merged (its check passed on the commit), each answer read
    assert [r["merged"] for r in _rows(right, "api-version-moved", "sessions")] == [True]
    assert [r["merged"] for r in _rows(wrong, "api-version-moved", "sessions")] == [False]
    kinds = [(e["kind"], e["detail"]) for e in _rows(right, "jest-to-vitest", "events") if e["kind"] == "answer"]
    assert kinds == [("answer", "vitest run --coverage"), ("answer", "vi.fn")]
    assert _rows(right, "jest-to-vitest", "sessions")[0]["input_tokens"] == 200  # two model calls of 100


def test_each_session_is_a_conversation_of_its_own_and_the_sample_keeps_them_all(model_logs: dict[str, Any]) -> None:
    sample = next(s for s in model_logs["right"].samples if s.id == "jest-to-vitest" and s.epoch == 1)
    roles = [m.role for m in sample.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"] * 2
    calls = [c.function for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
    assert calls == ["search_memories", "finish"] * 2  # a memory tool of memstore's MCP server, then finish
    assert sample.target == ""


def test_built_in_agents_play_and_are_graded_as_memstore_eval_grades_them(tmp_path: Path) -> None:
    """By the task's registered name, as ``inspect eval memstore/memstore_task -T agent=...`` runs it."""
    scenarios = "api-version-moved,jest-to-vitest"
    logs = {
        agent: run(tmp_path / agent, "memstore/memstore_task", task_args={"scenarios": scenarios, "agent": agent})
        for agent in ("jit-verify", "blind-trusting")
    }
    assert _scores(logs["jit-verify"]) == {("api-version-moved", 1): 1.0, ("jest-to-vitest", 1): 1.0}
    assert _scores(logs["blind-trusting"]) == {("api-version-moved", 1): 0.0, ("jest-to-vitest", 1): 0.0}
    library = {s.name: s for s in load_library([scenarios_dir()])}
    for agent, log in logs.items():
        for name in ("api-version-moved", "jest-to-vitest"):
            unit = Unit(library[name], 0, Arm(agent, "sqlite:"), 0, 50, timedelta(days=28), AgentRuntime())
            out = run_unit(unit, TrialGrading)
            for table in ("sessions", "trials", "events", "findings"):
                assert _rows(log, name, table) == [row(r) for r in getattr(out, table)], (agent, name, table)


def test_the_task_is_registered_for_inspect_by_an_entry_point() -> None:
    found = {e.name: e.value for e in entry_points(group="inspect_ai")}
    assert found["memstore"] == "memstore.inspect.task"


def test_no_grading_data_is_in_a_sample() -> None:
    """What a solver and the model start from (input, target, metadata) holds what an agent sees,
    and none of the answers, checks, expected findings or labels."""
    from memstore.inspect.samples import load_scenarios, scenario_sample

    for scenario in load_scenarios("jest-to-vitest,api-version-moved,api-version-review,adversarial-memories"):
        sample = scenario_sample(scenario)
        shown = json.dumps([sample.input, sample.target, sample.metadata])
        hidden = [t.answer for t in scenario.tasks if t.answer] + [f.path for t in scenario.tasks for f in t.findings]
        hidden += [text for t in scenario.tasks for _, text in t.check.contains]
        hidden += [f'"{m.truth.value}"' for m in scenario.memories] + [m.key for m in scenario.memories]
        assert hidden, scenario.name
        assert [h for h in hidden if h in shown] == [], scenario.name
        assert scenario.tasks[0].prompt in str(sample.input)


def test_the_grading_reads_the_world_only_after_every_session_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import get_model

    from memstore.inspect import memstore_task

    happened: list[str] = []
    graded = deferred._Replayed.__init__

    def grading(self: Any, *args: Any) -> None:
        happened.append("graded")
        graded(self, *args)

    monkeypatch.setattr(deferred._Replayed, "__init__", grading)
    model = scripted(True)

    def respond(*args: Any) -> Any:
        happened.append("model")
        return model(*args)

    log = run(tmp_path, memstore_task(scenarios="jest-to-vitest"), get_model("mockllm/model", custom_outputs=respond))
    assert _scores(log) == {("jest-to-vitest", 1): 1.0}
    assert happened == ["model"] * 4 + ["graded"]  # two sessions of two calls each, then the scorer


def test_the_scorer_grades_only_what_its_solver_played(tmp_path: Path) -> None:
    from inspect_ai.solver import system_message

    from memstore.inspect import memstore_task

    replaced = system_message("A plan of its own, as inspect's --solver gives it.")
    log = run(tmp_path, memstore_task(scenarios="jest-to-vitest"), solver=replaced, fail_on_error=False)
    (sample,) = log.samples
    assert "has no trial to grade" in sample.error.message
    assert "memstore_task(session_solver=...)" in sample.error.message


def test_an_unknown_scenario_is_refused_saying_what_may_be_named() -> None:
    from memstore.errors import ConfigurationError
    from memstore.inspect.samples import load_scenarios

    with pytest.raises(ConfigurationError, match=r"no scenario file or shipped scenario named 'jest-to-vitets'"):
        load_scenarios("jest-to-vitets")


def test_a_model_that_fails_ends_its_session_as_an_infrastructure_error_and_the_sample_goes_on(tmp_path: Path) -> None:
    """The model raising mid-session is not the agent's fault: the session ends, recorded as an
    infrastructure error with the model's words, and the sample's later sessions still run."""
    from inspect_ai.model import get_model

    from memstore.inspect import memstore_task

    calls = [0]
    right = scripted(True)

    def failing_first(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        calls[0] += 1
        if calls[0] == 1:
            raise RuntimeError("the endpoint is down")
        return right(messages, tools, tool_choice, config)

    model = get_model("mockllm/model", custom_outputs=failing_first)
    log = run(tmp_path, memstore_task(scenarios="jest-to-vitest"), model)
    sessions = _rows(log, "jest-to-vitest", "sessions")
    assert [(s["infra_error"], s["task_success"]) for s in sessions] == [
        (True, None),
        (False, True),
    ]  # an infra error is not scored
    errors = [e["detail"] for e in _rows(log, "jest-to-vitest", "events") if e["kind"] == "infra_error"]
    assert errors == ["the model failed: RuntimeError: the endpoint is down"]
