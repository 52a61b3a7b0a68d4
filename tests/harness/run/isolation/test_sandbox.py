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
from typing import Any

import pytest

from memstore.harness.evaluate import evaluate
from memstore.harness.run.isolation.sandbox import AgentRuntime, Network, SandboxMode, resolve_mode
from memstore.harness.run.output import Arm
from memstore.harness.run.runner.pool import RunConfig
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.loader import load_file
from memstore.harness.scenarios.scenario import Scenario
from tests.harness.conftest import scenario
from tests.harness.run.isolation.test_escapes import CHECKED

if not resolve_mode(SandboxMode.AUTO)[0]:
    if os.environ.get("MEMSTORE_REQUIRE_SANDBOX"):  # CI installs bubblewrap: there, a skip is a failure
        raise RuntimeError(f"MEMSTORE_REQUIRE_SANDBOX is set but {resolve_mode(SandboxMode.AUTO)[1]}")
    pytestmark = pytest.mark.skip(reason="bubblewrap cannot run here")

PROBER = r"""
import glob, json, os, socket, subprocess, sys, tempfile
task = json.load(open(os.environ["MEMSTORE_TASK"]))
found = {"read": [], "wrote": [], "env": [], "network": False, "git_write": False, "killed_parent": False}
def try_read(path):
    if os.path.abspath(path) == os.path.abspath(sys.argv[0]):
        return  # its own script, which the sandbox shows it wherever it lies
    try:
        with open(path, "rb") as f:
            f.read(16)
        found["read"].append(path)
    except OSError:
        pass
def below(top, suffix="", cap=2000):
    # What glob(TOP/**/*SUFFIX) lists (hidden names skipped), without its recursion, which a
    # tree a thousand folders deep (another test's, in the temporary folder) ends in RecursionError.
    found, pending, seen = [], glob.glob(top), 0
    while pending and len(found) < cap and seen < 200_000:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.name.endswith(suffix):
                    found.append(entry.path)
            except OSError:
                pass
    return found
candidates = [path for pattern in ["../*", "../../*", "../../../*"] for path in glob.glob(pattern)[:2000]]
for top, suffix in [(tempfile.gettempdir() + "/memstore-*", ""), ("/tmp/memstore-*", ""), ("/tmp", ".yaml"),
                    ("/tmp", "results.json"), ("/tmp", ".db"),
                    ("/dev/shm/memstore-*", "")]:  # the scratch base where the machine has room in memory
    candidates += below(top, suffix)
for path in candidates:
    outside = path.startswith("/dev/shm/") or not path.startswith(("/memstore/", "/proc", "/sys", "/dev"))
    if os.path.isfile(path) and outside:
        try_read(path)
marker_dir, targets = sys.argv[3], sys.argv[4:]
for path in targets:
    try_read(path)
homes = [os.path.dirname(os.path.dirname(p)) for p in targets if "/.config/" in p]
for home in ["/root", *glob.glob("/home/*"), *homes]:
    for path in glob.glob(home + "/.*"):  # a home's dotfiles: profiles, .gitconfig, .npmrc
        if os.path.isfile(path):
            try_read(path)
for path in [*glob.glob("/memstore/session/*"), *below("/tmp", ".jsonl"), *below("/memstore")]:  # the MCP server's log
    if "events" in os.path.basename(path) and os.path.isfile(path):
        found["read"].append(path)
# Code the harness would run outside: a nested repository's fsmonitor, and a module a check imports.
os.makedirs("vendor/x", exist_ok=True)
open("vendor/x/lib.py", "w").write("y = 2\n")
who = ["-c", "user.name=a", "-c", "user.email=a@example.com"]
for command in (["init", "-q"], ["add", "-A"], [*who, "commit", "-qm", "v"],
                ["config", "core.fsmonitor", f"sh -c 'echo fsmonitor >> {marker_dir}/git-ran'"]):
    subprocess.run(["git", "-C", "vendor/x", *command], capture_output=True)
subprocess.run(["git", "config", "core.fsmonitor", f"sh -c 'echo fsmonitor >> {marker_dir}/git-ran'"],
               capture_output=True)  # the working copy's own configuration (its .git is read-only in bubblewrap)
open("probe.py", "w").write(
    "import os, glob\n"
    f"seen = [k for k in os.environ if k.startswith('SECRET')] + [p for p in {targets!r} if os.access(p, os.R_OK)]\n"
    f"if seen: open({marker_dir!r} + '/check-saw', 'w').write(repr(seen))\n"
)
writes = [] if sys.argv[1] == "NOWRITE" else ["/memstore/repo/../escape.txt", "/tmp/escape.txt", "/etc/escape.txt",
                                              os.path.expanduser("~/x"), *[p + "/escape.txt" for p in targets]]
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


def _probe(transcript: Path) -> dict[str, Any]:
    """What the prober printed in a session's transcript (its error output, when it printed nothing)."""
    stdout = (transcript / "stdout.txt").read_text()
    assert stdout, f"the prober printed nothing: {(transcript / 'stderr.txt').read_text()[-2000:]}"
    return json.loads(stdout)  # type: ignore[no-any-return]


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    """Where code the harness runs outside the sandbox would leave its mark (nothing, if all holds)."""
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


@pytest.fixture
def check_scenario(tmp_path: Path) -> Scenario:
    """A coding task whose merge check imports the module the prober writes."""
    path = tmp_path / "check.yaml"
    path.write_text(CHECKED)
    (found,) = load_file(path)
    return found


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port on this machine's loopback that accepts connections (what the network probe tries)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen(8)
    yield server
    server.close()


def test_an_agent_in_the_sandbox_reaches_nothing_it_should_not(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listener: socket.socket,
    fake_home: Path,
    markers: Path,
    check_scenario: Scenario,
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")  # in the harness's environment, not passed
    monkeypatch.setenv("HOME", str(fake_home))  # the invoking user's home, with a token in it
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    library_file = next(scenarios_dir().glob("*.yaml"))
    out = tmp_path / "run"
    port = listener.getsockname()[1]
    checkout = Path(__file__).resolve().parents[4]  # memstore's own checkout: git's objects hold the library
    secrets = [checkout / ".git" / "HEAD", checkout / "reports" / "baseline" / "results.json"]
    secrets += [checkout / "tests" / "harness" / "test_agents.py"]  # the outcomes expected of the library
    secrets += [fake_home / ".gitconfig", fake_home / ".config" / "token"]
    spec = f"command:{sys.executable} {script} WRITE {port} {markers} {library_file} {out} {scenarios_dir()}"
    spec += "".join(f" {p}" for p in secrets if p.exists())
    config = RunConfig(
        scenarios=(scenario("api-version-control"), check_scenario),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.BWRAP, network=Network.NONE),
    )
    found = evaluate(config, out)
    sessions = found.tables["sessions"]
    assert len(sessions) >= 1
    transcript = out / sessions.transcript.iloc[0]
    probes = [_probe(out / t) for t in sessions.transcript]
    # A checkout in the temporary folder shows its fixture codebases (what working copies are
    # built from, no grading data); nothing else of it, wherever it is.
    fixtures = str(checkout / "fixtures") + "/"
    for probe in probes:
        assert [
            p for p in probe["read"] if not p.startswith(fixtures)
        ] == []  # no store, template, trial, scenario, run
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
    assert sorted(p.name for p in markers.iterdir()) == []  # no planted git config ran, no check saw a secret
    assert any("a nested repository's vendor/x/.git was removed" in d for d in found.tables["events"].detail)
    assert found.results.arms[Arm(spec, "sqlite:").name].overall["input_tokens"] == 7 * len(sessions)


def test_the_same_prober_without_the_defences_reaches_the_run(
    tmp_path: Path,
    listener: socket.socket,
    monkeypatch: pytest.MonkeyPatch,
    fake_home: Path,
    markers: Path,
    check_scenario: Scenario,
) -> None:
    """The probe is not blind: unsandboxed, with the harness's git unhardened and the check run
    as it once was (the harness's environment, no isolation), it reads the trial's store, the
    scenario library and the home's secrets, its git plant runs and its check sees the secret."""
    from memstore.harness.grading import merge_checks as checks
    from memstore.harness.run.isolation.process import run_bounded
    from memstore.verify import git as git_module
    from memstore.verify import workspace as workspace_module
    from memstore.verify.workspace import Workspace

    def bare_argv(where: str | Path, *args: str) -> list[str]:
        return ["git", "-C", str(where), *(a for a in args if a != "--ignore-submodules=all")]

    def as_once(argv: list[str], *, workdir: Path, runtime: object, timeout: float, env: dict[str, str]) -> object:
        return run_bounded(argv, cwd=workdir, env={**os.environ, **env}, timeout=timeout)

    monkeypatch.setattr(git_module, "git_argv", bare_argv)
    monkeypatch.setattr(workspace_module, "git_argv", bare_argv)
    monkeypatch.setattr(Workspace, "secure", lambda self: [])
    monkeypatch.setattr(checks, "run_isolated", as_once)
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("HOME", str(fake_home))
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    library_file = next(scenarios_dir().glob("*.yaml"))
    token = fake_home / ".config" / "token"
    spec = f"command:{sys.executable} {script} NOWRITE {listener.getsockname()[1]} {markers} {library_file} {token}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"), check_scenario),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.OFF),
    )
    found = evaluate(config, tmp_path / "run")
    probe = _probe(tmp_path / "run" / found.tables["sessions"].transcript.iloc[0])
    assert str(library_file) in probe["read"]
    assert probe["network"] is True
    assert any(p.endswith(".db") for p in probe["read"])  # the trial's store, found in the scratch base
    assert str(token) in probe["read"]
    assert str(fake_home / ".gitconfig") in probe["read"]
    assert sorted(p.name for p in markers.iterdir()) == ["check-saw", "git-ran"]


def test_network_host_lets_a_sandboxed_agent_reach_its_api(tmp_path: Path, listener: socket.socket) -> None:
    script = tmp_path / "prober.py"
    script.write_text(PROBER)
    spec = f"command:{sys.executable} {script} NOWRITE {listener.getsockname()[1]} {tmp_path}"
    config = RunConfig(
        scenarios=(scenario("api-version-control"),),
        arms=(Arm(spec, "sqlite:"),),
        runtime=AgentRuntime(sandbox=SandboxMode.BWRAP, network=Network.HOST),
    )
    found = evaluate(config, tmp_path / "run")
    probe = _probe(tmp_path / "run" / found.tables["sessions"].transcript.iloc[0])
    assert probe["network"] is True
    fixtures = str(Path(__file__).resolve().parents[4] / "fixtures") + "/"  # a checkout in /tmp shows them
    assert [p for p in probe["read"] if not p.startswith(fixtures)] == []


def test_bwrap_asked_for_where_it_cannot_run_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.errors import ConfigurationError
    from memstore.harness.run.isolation import sandbox

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


def test_a_scratch_folder_gone_before_the_sandbox_starts_does_not_stop_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary directories are hidden whole, not folder by folder: another run's scratch
    folder that is removed between the arguments and bubblewrap's start (as other workers and
    runs come and go) cannot make the agent fail to start. (It did, now and then, when a private
    ``$TMPDIR`` left ``/tmp``'s folders to be listed one by one.)"""
    import subprocess
    import tempfile

    from memstore.harness.run.isolation import sandbox

    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    going = Path(tempfile.mkdtemp(prefix="memstore-run-gone-", dir=sandbox._SOCKETS))
    session = tmp_path / "session"
    session.mkdir()
    argv = sandbox.wrap(
        ["/bin/true"], workdir=tmp_path, session_dir=session, relay_dir=None, runtime=AgentRuntime(), env={}
    )
    going.rmdir()
    assert str(going) not in argv  # not named: inside a folder hidden whole
    hidden = [Path(argv[i + 1]) for i, arg in enumerate(argv) if arg == "--tmpfs"]
    assert sandbox._SOCKETS.resolve() in hidden  # and $TMPDIR with it, inside it here
    assert any(private.resolve().is_relative_to(h) for h in hidden)
    assert subprocess.run(argv, capture_output=True, check=False).returncode == 0


def test_the_prober_reports_past_a_folder_deeper_than_pythons_stack(tmp_path: Path) -> None:
    """Another test's tree 1,100 folders deep in the temporary folder (the suite's own deep-input
    tests make them, and under ``-n 2`` they run beside this module) does not silence the probe:
    its walk does not recurse. (``glob('**')`` recursed once per level: RecursionError, the prober
    died before printing, and the unsandboxed test read an empty stdout as JSON.)"""
    import subprocess
    import tempfile

    from memstore.harness.trees import remove_tree

    deep = Path(tempfile.mkdtemp(prefix="memstore-deep-", dir=tempfile.gettempdir()))
    try:
        leaf = deep
        for _ in range(1100):
            leaf = leaf / "d"
            leaf.mkdir()
        (leaf / "f.yaml").write_text("x: 1\n")
        work = tmp_path / "work"
        work.mkdir()
        script = tmp_path / "prober.py"
        script.write_text(PROBER)
        env = {**os.environ, "MEMSTORE_TASK": str(tmp_path / "task.json"), "MEMSTORE_RESULT": str(tmp_path / "r.json")}
        (tmp_path / "task.json").write_text("{}")
        markers = tmp_path / "markers"
        markers.mkdir()
        argv = [sys.executable, str(script), "NOWRITE", "1", str(markers)]
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=300, check=False)
    finally:
        remove_tree(deep)
    assert (done.returncode, done.stderr[-300:]) == (0, b"")
    probe = json.loads(done.stdout)
    assert str(leaf / "f.yaml") in probe["read"]  # found at the bottom, as a scenario file would be
