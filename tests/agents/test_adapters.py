"""The Claude Code and Codex CLI adapters (adapters/), run in the sandbox against stand-ins of the
two CLIs (adapters/standins/: NOT the real programs, which need their vendors' APIs). The
stand-ins check the arguments each adapter passes, reach memory through the MCP configuration
it hands over, and answer in each CLI's documented output shape; the adapter turns that into
result.json. What is tested is the adapters' plumbing, not Claude Code or Codex."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from memstore.cli import main

ROOT = Path(__file__).parents[2]
STANDINS = ROOT / "adapters" / "standins"  # outside tests/, which a sandboxed agent cannot read


@pytest.mark.parametrize(
    ("adapter", "variable", "standin", "usage"),
    [
        ("claude_code.py", "CLAUDE_BIN", "claude", (150, 20, 50, 0.0123)),
        ("codex_cli.py", "CODEX_BIN", "codex", (300, 40, 120, 0.0)),
    ],
)
def test_the_adapter_runs_its_cli_with_memory_over_mcp(
    adapter: str, variable: str, standin: str, usage: tuple[int, int, int, float], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv(variable, str(STANDINS / standin))
    out = tmp_path / "run"
    agent = f"command:{sys.executable} {ROOT / 'adapters' / adapter}"
    result = CliRunner().invoke(
        main,
        ["eval", str(ROOT / "scenarios" / "api-version-moved.yaml"), "--agent", agent, "--agent-env", variable,
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 3, result.output  # one scenario: undecided
    session = pd.read_csv(out / "sessions.csv.gz").iloc[0]
    assert bool(session.merged) is True
    spent = (session.input_tokens, session.output_tokens, session.cache_tokens, session.cost_usd)
    assert spent == pytest.approx(usage)
    events = pd.read_csv(out / "events.csv.gz")
    assert {"verdict", "refresh"} <= set(events.kind)  # the CLI's MCP client reached the session's server
    meta = json.loads((out / session.transcript / "session.json").read_text())
    assert meta["exit_status"] == 0
    assert meta["trajectory"] is not None
