"""The sandbox: an agent that tries to read and write everything it should not gets nothing.

The prober runs as a command agent inside a real `memstore eval` run (bubblewrap) and reports,
in its answer and on stdout, what it could reach. What it must not reach: the run folder, the
trial's store and template, other trials, the scenario library and the run's scenario files,
the harness's environment, the network; and it must not write anywhere but its working copy
and its session folder, nor change the repository's history.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstore.harness.evaluate import evaluate
from memstore.harness.run.output import Arm
from memstore.harness.run.runner import RunConfig
from memstore.harness.run.sandbox import AgentRuntime, Network, SandboxMode, resolve_mode
from memstore.harness.scenarios.data import scenarios_dir
from tests.harness.conftest import scenario

if not resolve_mode(SandboxMode.AUTO)[0]:
    if os.environ.get("MEMSTORE_REQUIRE_SANDBOX"):  # CI installs bubblewrap: there, a skip is a failure
        raise RuntimeError(f"MEMSTORE_REQUIRE_SANDBOX is set but {resolve_mode(SandboxMode.AUTO)[1]}")
    pytestmark = pytest.mark.skip(reason="bubblewrap cannot run here")

PROBER = r"""
import glob, json, os, socket, subprocess, sys, tempfile
task = json.load(open(os.environ["MEMSTORE_TASK"]))
found = {"read": [], "wrote": [], "env": [], "network": False, "git_write": False, "killed_parent": False}
def try_read(path):
    try:
        with open(path, "rb") as f:
            f.read(16)
        found["read"].append(path)
    except OSError:
        pass
for pattern in ["../*", "../../*", "../../../*", tempfile.gettempdir() + "/memstore-*/**/*",
                "/tmp/memstore-*/**/*", "/tmp/**/*.yaml", "/tmp/**/results.json", "/tmp/**/*.db"]:
    for path in glob.glob(pattern, recursive=True)[:2000]:
        if os.path.isfile(path) and not path.startswith(("/memstore/", "/proc", "/sys", "/dev")):
            try_read(path)
for path in sys.argv[3:]:
    try_read(path)
writes = [] if sys.argv[1] == "NOWRITE" else ["/memstore/repo/../escape.txt", "/tmp/escape.txt", "/etc/escape.txt",
                                              os.path.expanduser("~/x"), *[p + "/escape.txt" for p in sys.argv[3:]]]
for path in writes:
    try:
        with open(path, "w") as f:
            f.write("x")
        if not path.startswith(("/memstore/home", "/memstore/tmp")):
            found["wrote"].append(path)
    except OSError:
        pass
try:
    with open("/memstore/repo/.git/refs/heads/main", "w") as f:
        f.write("0" * 40 + "\n")
    found["git_write"] = True
except OSError:
    pass
found["env"] = sorted(k for k in os.environ if k.startswith("SECRET"))
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    found["network"] = True
except OSError as exc:
    found["network_error"] = type(exc).__name__
try:
    os.kill(os.getppid(), 0)
    found["parent"] = os.getppid()
except OSError:
    pass
with open("README.md", "a") as f:  # the working copy is writable
    f.write("\nprobed\n")
print(json.dumps(found))
json.dump({"schema_version": 1, "answer": json.dumps(found),
           "usage": {"input_tokens": 7, "output_tokens": 3, "cost_usd": 0.001, "model": "prober"}},
          open(os.environ["MEMSTORE_RESULT"], "w"))
"""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on this machine's loopback that accepts connections (what the network probe tries)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(8)
    yield server
    server.close()


def test_an_agent_in_the_sandbox_reaches_nothing_it_should_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: socket.socket
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")  # in the harness's environment, not passed
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    library_file = next(scenarios_dir().glob("*.yaml"))
    out = tmp_path / "run"
    port = listener.getsockname()[1]
    checkout = Path(__file__).resolve().parents[2]  # memstore's own checkout: git's objects hold the library
    secrets = [checkout / ".git" / "HEAD", checkout / "reports" / "baseline" / "results.json"]
    spec = f"command:{sys.executable} {script} WRITE {port} {library_file} {out} {scenarios_dir()}"
    spec += "".join(f" {p}" for p in secrets if p.exists())
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.BWRAP, network=Network.NONE),
    )
    found = evaluate(config, out)
    sessions = found.tables["sessions"]
    assert len(sessions) >= 1
    transcript = out / sessions.transcript.iloc[0]
    probes = [json.loads((out / t / "stdout.txt").read_text()) for t in sessions.transcript]
    for probe in probes:
        assert probe["read"] == []  # no store, template, other trial, scenario file, run folder
        assert probe["wrote"] == []
        assert probe["git_write"] is False
        assert probe["env"] == []
        assert probe["network"] is False
        assert "parent" not in probe or probe["parent"] in (0, 1)  # a pid namespace of its own
    session = json.loads((transcript / "session.json").read_text())
    assert session["sandbox"].startswith("bubblewrap")
    assert session["exit_status"] == 0
    assert int(sessions.input_tokens.sum()) == 7 * len(sessions)
    assert not Path("/etc/escape.txt").exists()
    assert not (library_file.parent / "escape.txt").exists()
    assert found.results.arms[Arm(spec, "sqlite:").name].overall["input_tokens"] == 7 * len(sessions)


def test_the_same_prober_without_the_sandbox_reaches_the_run(tmp_path: Path, listener: socket.socket) -> None:
    """The probe is not blind: unsandboxed, it reads the trial's store and the scenario library."""
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    library_file = next(scenarios_dir().glob("*.yaml"))
    spec = f"command:{sys.executable} {script} NOWRITE {listener.getsockname()[1]} {library_file}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.OFF),
    )
    found = evaluate(config, tmp_path / "run")
    probe = json.loads((tmp_path / "run" / found.tables["sessions"].transcript.iloc[0] / "stdout.txt").read_text())
    assert str(library_file) in probe["read"]
    assert probe["network"] is True
    assert any(p.endswith(".db") for p in probe["read"])  # the trial's store, found under the temp dir


def test_network_host_lets_a_sandboxed_agent_reach_its_api(tmp_path: Path, listener: socket.socket) -> None:
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    spec = f"command:{sys.executable} {script} NOWRITE {listener.getsockname()[1]}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.BWRAP, network=Network.HOST),
    )
    found = evaluate(config, tmp_path / "run")
    probe = json.loads((tmp_path / "run" / found.tables["sessions"].transcript.iloc[0] / "stdout.txt").read_text())
    assert probe["network"] is True
    assert probe["read"] == []


def test_bwrap_asked_for_where_it_cannot_run_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.errors import ConfigurationError
    from memstore.harness.run import sandbox

    monkeypatch.setattr(shutil, "which", lambda name: None)
    sandbox._bwrap_works.cache_clear()
    try:
        with pytest.raises(ConfigurationError, match=r"bubblewrap \(bwrap\) is not installed"):
            resolve_mode(SandboxMode.BWRAP)
        assert resolve_mode(SandboxMode.AUTO) == (
            False,
            "no sandbox (bubblewrap (bwrap) is not installed): agents run as this user, in their working copy",
        )
    finally:
        sandbox._bwrap_works.cache_clear()
    assert os.environ.get("PATH")
