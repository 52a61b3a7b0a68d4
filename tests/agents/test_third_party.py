"""An agent this project did not write, installed from PyPI (mini-swe-agent), run end to end
through its adapter (adapters/mini_swe_agent.py) in a real `memstore eval` run, in the sandbox,
driven by the scripted model endpoint (a stand-in for a model: no model, no network).

mini-swe-agent lives in a virtual environment of its own (its dependencies are not memstore's):
`.venv-agents/` at the top of the project (`.ci/run` makes it), or the Python named by
$MEMSTORE_MINI_SWE_AGENT_PYTHON.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memstore.cli import main
from memstore.testing.scripted_model import ScriptedModel, serve

ROOT = Path(__file__).parents[2]
PYTHON = Path(os.environ.get("MEMSTORE_MINI_SWE_AGENT_PYTHON", ROOT / ".venv-agents" / "bin" / "python"))


def _installed() -> bool:
    if not PYTHON.exists():
        return False
    done = subprocess.run([PYTHON, "-c", "import minisweagent"], capture_output=True, check=False)
    return done.returncode == 0


if not _installed():
    if os.environ.get("MEMSTORE_REQUIRE_THIRD_PARTY"):  # CI installs it: there, a skip is a failure
        raise RuntimeError(f"MEMSTORE_REQUIRE_THIRD_PARTY is set but mini-swe-agent is not importable by {PYTHON}")
    pytestmark = pytest.mark.skip(reason=f"mini-swe-agent is not installed for {PYTHON}")


def test_mini_swe_agent_merges_a_change_using_memory_in_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedModel.from_file(Path(__file__).parent / "scripts" / "mini-bump-version.json")
    out = tmp_path / "run"
    agent = f"command:{PYTHON} {ROOT / 'adapters' / 'mini_swe_agent.py'}"
    with serve(model) as url:
        monkeypatch.setenv("MEMSTORE_MODEL_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "scripted")
        monkeypatch.setenv("MSWEA_MODEL_NAME", "openai/scripted")
        result = CliRunner().invoke(
            main,
            [
                "eval", str(ROOT / "scenarios" / "api-version-moved.yaml"), "--agent", agent,
                "--agent-network", "host", "--agent-env", "OPENAI_API_KEY", "--agent-env", "MEMSTORE_MODEL_BASE_URL",
                "--agent-env", "MSWEA_MODEL_NAME", "--agent-timeout", "300", "--out", str(out),
            ],
        )  # fmt: skip
    # One session cannot decide the run's statistical gates: UNDECIDED (exit 3), none failed.
    assert result.exit_code == 3, result.output
    assert "UNDECIDED: none of" in result.output
    sessions = pd.read_csv(out / "sessions.csv.gz")
    session = sessions.iloc[0]
    assert bool(session.merged) is True  # mini-swe-agent's edit passed the scenario's merge check
    assert session.input_tokens > 0
    assert session.output_tokens > 0
    events = pd.read_csv(out / "events.csv.gz")
    assert {"verdict", "refresh"} <= set(events.kind)  # it verified and refreshed the memory, over MCP
    folder = out / session.transcript
    meta = json.loads((folder / "session.json").read_text())
    assert meta["sandbox"].startswith("bubblewrap")
    assert meta["exit_status"] == 0
    assert meta["trajectory"] == "agent-trajectory.json"  # trajectory.json is the session's ATIF document
    trajectory = json.loads((folder / "agent-trajectory.json").read_text())
    assert trajectory["info"]["exit_status"] == "Submitted"
    atif = json.loads((folder / "trajectory.json").read_text())
    assert atif["schema_version"] == "ATIF-v1.7"
    assert {"verify_memory", "refresh_memory"} <= {
        call["function_name"] for step in atif["steps"] for call in step.get("tool_calls", [])
    }  # its memory calls over MCP, from the session's events
    assert [entry["turn"] for entry in model.log] == [0, 1, 2, 3]
