"""A hostile command agent in a real run: nothing it writes runs outside its sandbox.

Each test runs `memstore eval`'s engine with a command agent that tries one escape the harness
once allowed (the merge check running its code with the harness's environment; a nested
repository whose configuration the harness's git runs; the MCP server's log as a symlink or a
forged record), and checks from outside the run that it got nothing, and that the run says so.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from memstore.harness.evaluate import Evaluation, evaluate
from memstore.harness.grading.trial import TrialGrading
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode, resolve_mode
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig, run
from memstore.harness.scenarios.loader import load_file
from memstore.harness.scenarios.scenario import Scenario
from tests.harness.conftest import scenario

needs_bwrap = pytest.mark.skipif(not resolve_mode(SandboxMode.AUTO)[0], reason="bubblewrap cannot run here")

CHECKED = """\
name: check-runs-agent-code
description: A coding task whose merge check imports a module the agent writes.
fixture: empty
repo: acme/probe
users:
  dev: {acme/probe: write}
tasks:
  - key: write-probe
    surface: coding_agent
    user: dev
    after: 1h
    prompt: Add probe.py.
    intent: {add: probe, to: repository}
    check:
      command: ["{python}", "-c", "import probe"]
"""

# What the agent writes: a module whose import (in the merge check) looks for the harness's
# secrets and reports what it found in a file outside the working copy, exiting non-zero when
# it found any (so the task merges only if the check saw nothing).
PROBE = """
import json, os
seen = {{"env": sorted(k for k in os.environ if k.startswith("SECRET")), "home": os.environ.get("HOME"), "read": []}}
for path in {paths!r}:
    try:
        open(path, "rb").read(1)
        seen["read"].append(path)
    except OSError:
        pass
try:
    with open({report!r}, "w") as f:
        json.dump(seen, f)
except OSError:
    pass
raise SystemExit(1 if seen["env"] or seen["read"] else 0)
"""

AGENT = """
import json, os, sys
open("probe.py", "w").write(open(sys.argv[1]).read())
json.dump({}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


@pytest.fixture
def probe_scenario(tmp_path: Path) -> Scenario:
    path = tmp_path / "check.yaml"
    path.write_text(CHECKED)
    (found,) = load_file(path)
    return found


def _check_probe(tmp_path: Path, fake_home: Path, run_folder: Path) -> tuple[Path, Path, list[str]]:
    report = tmp_path / "check-saw.json"
    paths = [str(fake_home / ".gitconfig"), str(fake_home / ".config" / "token"), str(run_folder / "manifest.json")]
    probe = tmp_path / "probe_module.py"
    probe.write_text(PROBE.format(paths=paths, report=str(report)))
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    return agent, probe, paths


def _run_check_probe(
    tmp_path: Path, scenario: Scenario, home: Path, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxMode
) -> Evaluation:
    """A run whose agent writes the probe module its merge check imports, with a secret in the
    harness's environment and a token in the invoking user's home."""
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("HOME", str(home))
    out = tmp_path / "run"
    agent, probe, _ = _check_probe(tmp_path, home, out)
    spec = f"command:{sys.executable} {agent} {probe}"
    config = RunConfig(scenarios=(scenario,), arms=(Arm(spec, "sqlite:"),), runtime=AgentRuntime(sandbox=sandbox))
    return evaluate(config, out)


@needs_bwrap
def test_the_merge_check_runs_the_agents_code_in_the_sandbox(
    tmp_path: Path, probe_scenario: Scenario, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _run_check_probe(tmp_path, probe_scenario, fake_home, monkeypatch, SandboxMode.BWRAP)
    sessions = found.tables["sessions"]
    assert list(sessions.merged) == [True]  # the check saw no secret, so it passed
    assert not (tmp_path / "check-saw.json").exists()  # and could not write outside the sandbox


def test_without_bubblewrap_the_check_still_gets_the_agents_environment_only(
    tmp_path: Path, probe_scenario: Scenario, fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run_check_probe(tmp_path, probe_scenario, fake_home, monkeypatch, SandboxMode.OFF)
    saw = json.loads((tmp_path / "check-saw.json").read_text())
    assert saw["env"] == []  # the harness's environment is not the check's
    assert saw["home"] != str(fake_home)  # a private home, as the agent had


NESTED = """
import json, os, subprocess, sys
marker = sys.argv[1]
os.makedirs("vendor/x", exist_ok=True)
open("vendor/x/lib.py", "w").write("y = 2\\n")
subprocess.run(["git", "init", "-q", "vendor/x"], check=True)
subprocess.run(["git", "-C", "vendor/x", "add", "-A"], check=True)
who = ["-c", "user.name=a", "-c", "user.email=a@example.com"]
subprocess.run(["git", "-C", "vendor/x", *who, "commit", "-qm", "vendored"], check=True)
subprocess.run(["git", "-C", "vendor/x", "config", "core.fsmonitor", f"sh -c 'echo ran >> {marker}'"], check=True)
open("README.md", "a").write("\\nedited\\n")
json.dump({}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


@pytest.mark.parametrize("sandbox", [SandboxMode.BWRAP, SandboxMode.OFF])
def test_a_nested_repository_the_agent_planted_never_runs_and_is_tampering(
    tmp_path: Path, sandbox: SandboxMode
) -> None:
    if sandbox is SandboxMode.BWRAP and not resolve_mode(SandboxMode.AUTO)[0]:
        pytest.skip("bubblewrap cannot run here")
    agent = tmp_path / "nested.py"
    agent.write_text(NESTED)
    marker = tmp_path / "marker"
    spec = f"command:{sys.executable} {agent} {marker}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=sandbox),
    )
    output = run(config, grading=TrialGrading)
    assert not marker.exists()
    tampered = [e.detail for e in output.events if e.kind == "tampered"]
    assert "a nested repository's vendor/x/.git was removed" in tampered


MCP_LOG = """
import asyncio, json, os, sys
from pathlib import Path
task = json.load(open(os.environ["MEMSTORE_TASK"]))
session = Path(os.environ["MEMSTORE_SESSION_DIR"])
target = sys.argv[1]
for name in ("mcp-events.jsonl", "events.jsonl"):  # where the server's log was, and any name like it
    try:
        (session / name).symlink_to(target)
    except OSError:
        pass
forged = {"kind": "retire", "memory_id": task["memories"][0]["id"] if task["memories"] else "mem_x",
          "detail": "forged", "memories": []}
for path in session.glob("*.jsonl"):
    try:
        with open(path, "a") as f:
            f.write(json.dumps(forged) + "\\n")
    except OSError:
        pass

async def main():
    from mcp import Client, StdioServerParameters
    spec = task["mcp"]["mcpServers"]["memstore"]
    async with Client(StdioServerParameters(command=spec["command"], args=spec["args"])) as client:
        await client.call_tool("recent_memories", {"limit": 5})
asyncio.run(main())
json.dump({}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


@needs_bwrap
def test_the_mcp_servers_log_is_out_of_the_agents_reach(tmp_path: Path) -> None:
    agent = tmp_path / "mcp_log.py"
    agent.write_text(MCP_LOG)
    profile = tmp_path / "profile"
    profile.write_text("# a shell profile\n")
    spec = f"command:{sys.executable} {agent} {profile}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.BWRAP),
    )
    output = run(config, grading=TrialGrading)
    assert profile.read_text() == "# a shell profile\n"  # the server never appended through a link
    assert not [e for e in output.events if e.detail == "forged"]  # nor was a forged line replayed
    assert any(e.detail == "mcp recent" for e in output.events)  # the real log was read
    assert os.environ.get("HOME")


FILTER = """
import json, os, subprocess, sys
task = json.load(open(os.environ["MEMSTORE_TASK"]))
if task["task"]["surface"] != "coding_agent":  # plant in a session that commits nothing
    marker = sys.argv[1]
    run = lambda *a: subprocess.run(["git", *a], check=True, capture_output=True)
    run("config", "filter.evil.smudge", f"sh -c 'echo smudge >> {marker}; cat'")
    run("config", "filter.evil.clean", f"sh -c 'echo clean >> {marker}; cat'")
    open(".gitattributes", "w").write("* filter=evil\\n")
json.dump({}, open(os.environ["MEMSTORE_RESULT"], "w"))
"""


def test_what_a_review_session_plants_is_undone_before_the_next_session_touches_git(tmp_path: Path) -> None:
    """Without the sandbox an agent can write the working copy's .git/config; a review session
    commits nothing, so what it planted is undone as it ends, before the next session's checkout."""
    agent = tmp_path / "filter.py"
    agent.write_text(FILTER)
    marker = tmp_path / "marker"
    spec = f"command:{sys.executable} {agent} {marker}"
    config = RunConfig(
        scenarios=(scenario("files-change-together"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.OFF),
    )
    output = run(config, grading=TrialGrading)
    assert not marker.exists(), marker.read_text()
    tampered = [e for e in output.events if e.kind == "tampered"]
    assert [e.task for e in tampered] == ["review-pr-8"]  # counted in the session that planted it
    assert tampered[0].detail == "the repository's .git/config was changed; it was put back"
    assert sum(int(s.tampered) for s in output.sessions) == 1
