"""The reference LLM agent, end to end, driven by the scripted model endpoint (no model, no network).

The scripted endpoint is a stand-in for a language model (`memstore.testing.scripted_model`):
these tests check the agent's plumbing (tools, memory over MCP, edits, usage, transcripts,
infrastructure errors), not any model's judgement.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.errors import ConfigurationError
from memstore.harness.run.boundary.agents import make_agent
from memstore.testing.scripted_model import ScriptedModel, serve

SCRIPTS = Path(__file__).parent / "scripts"
SCENARIO = Path(__file__).parents[2] / "scenarios" / "api-version-moved.yaml"


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    model = ScriptedModel.from_file(SCRIPTS / "bump-version.json")
    with serve(model) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)  # workers inherit it; the arm's name stays 'llm:scripted'
        monkeypatch.setenv("OPENAI_API_KEY", "scripted")
        yield model


def test_memstore_eval_runs_the_llm_agent_end_to_end(endpoint: ScriptedModel, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        ["eval", str(SCENARIO), "--agent", "llm:scripted", "--agent", "llm:scripted?memory=false", "--out", str(out)],
    )
    assert result.exit_code == 3, result.output  # one scenario: undecided
    sessions = pd_sessions(out)
    memory = sessions[sessions.arm == "llm:scripted/sqlite"].iloc[0]
    assert bool(memory.merged) is True  # the change it made passed the merge check
    assert memory.input_tokens > 0
    assert memory.output_tokens > 0
    assert memory.model == "scripted"
    events = pd_events(out)
    mine = events[events.arm == "llm:scripted/sqlite"]
    assert {"verdict", "refresh", "store"} <= set(mine.kind)  # it used memory, through the MCP tools
    assert (mine.kind == "retrieve").sum() >= 1
    folder = out / memory.transcript
    trajectory = [json.loads(line) for line in (folder / "trajectory.jsonl").read_text().splitlines()]
    assert trajectory[0]["role"] == "system"
    assert trajectory[-1] == {"role": "tool", "tool_call_id": "call_7_0", "content": "finished"}
    assert json.loads((folder / "session.json").read_text())["stop"] == "finish"
    results = json.loads((out / "results.json").read_text())
    arm = results["arms"]["llm:scripted/sqlite"]
    assert arm["role"] == "treatment"
    assert arm["overall"]["input_tokens"] == int(memory.input_tokens)
    assert results["arms"]["llm:scripted?memory=false/sqlite"]["role"] == "control"
    assert "usage llm:scripted" in result.output


def test_an_endpoint_that_fails_is_an_infrastructure_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = ScriptedModel({"conversations": [{"match": "Bump the API version", "turns": [{"error": 503}]}]})
    with serve(failing) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["eval", str(SCENARIO), "--agent", "llm:scripted", "--out", str(out)])
    sessions = pd_sessions(out)
    assert bool(sessions.infra_error.iloc[0]) is True
    assert sessions.task_success.isna().all()  # not run, not failed
    events = pd_events(out)
    details = list(events[events.kind == "infra_error"].detail)
    assert len(details) == 1
    assert details[0].startswith(f"the model endpoint {url.rstrip('/')}/ failed: InternalServerError")
    assert result.exit_code == 1  # the arm measured nothing


def test_llm_options_are_checked_before_anything_runs() -> None:
    assert make_agent("llm:m?steps=5&price_in=0.4").settings.steps == 5  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match="unknown llm option 'stpes'"):
        make_agent("llm:m?stpes=5")
    with pytest.raises(ConfigurationError, match="needs a model"):
        make_agent("llm:")
    with pytest.raises(ConfigurationError, match="no prompts of version 'v9'"):
        make_agent("llm:m?prompts=v9")


def pd_sessions(out: Path):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.read_csv(out / "sessions.csv.gz")


def pd_events(out: Path):  # type: ignore[no-untyped-def]
    import pandas as pd

    return pd.read_csv(out / "events.csv.gz")
