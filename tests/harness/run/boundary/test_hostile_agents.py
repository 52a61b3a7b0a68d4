"""A hostile or broken agent costs its own session, never the run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from click.testing import CliRunner

from memstore.agents.stubs import NoMemoryAgent
from memstore.cli import main
from memstore.errors import ConfigurationError
from memstore.harness.run.boundary.agents import make_agent
from memstore.harness.run.boundary.command import validate_result
from memstore.harness.run.isolation.sandbox import AgentRuntime, SandboxMode
from memstore.harness.run.runner.pool import Arm, RunConfig, check_config
from tests.harness.conftest import run_arms, scenario

UNBOXED = AgentRuntime(sandbox=SandboxMode.OFF)
WRITE = "import json, os\njson.dump({result}, open(os.environ['MEMSTORE_RESULT'], 'w'))\n"
STORE = {"op": "store", "subject": "s", "fact": "f", "citations": ["README.md:1"]}

SCHEMA_BREAKERS = {
    "ops as a string": {"memory_ops": "use"},
    "ops as a number": {"memory_ops": 5},
    "an op that is a number": {"memory_ops": [1]},
    "citations as a number": {"memory_ops": [{**STORE, "citations": 5}]},
    "supersedes as a list": {"memory_ops": [{**STORE, "supersedes": ["x"]}]},
    "findings as a number": {"findings": 5},
    "an unknown op": {"memory_ops": [{"op": "delete", "id": "mem_x"}]},
    "an unknown key": {"answer": "x", "verdicts": []},
}


def _agent(tmp_path: Path, source: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text(source)
    return f"command:{sys.executable} {script}"


def _errors(output: object, arm: str) -> list[str]:
    return [e.detail for e in output.events if e.kind == "agent_error" and e.arm == arm]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", list(SCHEMA_BREAKERS))
def test_a_result_that_breaks_the_schema_fails_its_session_only(tmp_path: Path, name: str) -> None:
    agent = _agent(tmp_path, WRITE.format(result=repr(SCHEMA_BREAKERS[name])))
    arms = [Arm(agent, "memory://"), Arm("jit-verify", "memory://")]
    output = run_arms(["api-version-moved"], arms)
    (reason,) = _errors(output, arms[0].name)
    assert reason.startswith("result.json does not match the schema: ")
    assert {s.arm for s in output.sessions} == {arms[0].name, arms[1].name}  # every arm has its results
    assert output.failures == []
    assert not any(e.kind == "store" for e in output.events if e.arm == arms[0].name)  # nothing applied


@pytest.mark.parametrize(
    ("content", "denied"),
    [
        ({**STORE, "subject": "bad \ud800"}, "store: subject: must be valid Unicode"),
        ({**STORE, "citations": ["README.md:" + "9" * 4900]}, "store: citations[0]: citation: must look like"),
        ({**STORE, "citations": [".git/config:1"]}, "store: citations[0]: path: the path must not point into git"),
    ],
)
def test_a_memory_the_store_refuses_is_a_refusal_not_a_crash(
    tmp_path: Path, content: dict[str, object], denied: str
) -> None:
    text = json.dumps({"memory_ops": [content]})  # lone surrogates survive as \\ud800 escapes
    agent = _agent(tmp_path, f"import os\nopen(os.environ['MEMSTORE_RESULT'], 'w').write({text!r})\n")
    output = run_arms(["api-version-moved"], [Arm(agent, "sqlite:")])
    assert _errors(output, Arm(agent, "sqlite:").name) == []
    details = [e.detail for e in output.events if e.kind == "denied"]
    assert len(details) == 1
    assert details[0].startswith(denied)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import os\nos.mkfifo(os.environ['MEMSTORE_RESULT'])\n", "no readable result: result.json is not a regular"),
        ("import os\nos.symlink('/dev/zero', os.environ['MEMSTORE_RESULT'])\n", "no readable result: "),
        ("import os\nopen(os.environ['MEMSTORE_RESULT'], 'w').write('[' * 200000)\n", "no readable result: "),
        ("import os\nopen(os.environ['MEMSTORE_RESULT'], 'w').write('{not json')\n", "no readable result: "),
        ("import sys\nsys.stderr.buffer.write(b'\\xff\\xfe')\nsys.exit(4)\n", "exit status 4: \ufffd\ufffd"),
        ("import sys\nfor _ in range(50): sys.stdout.write('x' * 1_000_000)\n", "no result: the agent wrote no "),
    ],
    ids=["fifo", "symlink", "nested", "not-json", "non-utf8-stderr", "50MB-stdout"],
)
def test_a_broken_agent_fails_its_own_session(tmp_path: Path, source: str, reason: str) -> None:
    agent = _agent(tmp_path, source)
    arms = [Arm(agent, "memory://"), Arm("no-memory", "memory://")]
    started = time.monotonic()
    output = run_arms(["api-version-moved"], arms)
    assert time.monotonic() - started < 60
    assert any(r.startswith(reason) for r in _errors(output, arms[0].name)), _errors(output, arms[0].name)
    assert [s.agent_error for s in output.sessions] == [True, False]


def test_an_agent_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    agent = _agent(tmp_path, "import subprocess, time\nsubprocess.Popen(['sleep', '300'])\ntime.sleep(300)\n")
    started = time.monotonic()
    output = run_arms(["api-version-moved"], [Arm(agent, "memory://")], runtime=AgentRuntime(timeout=2.0))
    assert time.monotonic() - started < 30
    infra = [e.detail for e in output.events if e.kind == "infra_error"]
    assert infra == ["timed out after 2 s"]  # an infrastructure failure: the session counts as not run
    (session,) = output.sessions
    assert session.infra_error is True
    assert session.outcome.task_success is None


ESCAPER = """
import os, subprocess, sys, time
escaped = [subprocess.Popen(["setsid", "sleep", "300"]).pid]  # a session of its own
read, write = os.pipe()
if os.fork() == 0:  # a daemon: forked twice, its parent gone, reparented away from the agent
    os.setsid()
    if os.fork() == 0:
        os.write(write, str(os.getpid()).encode())
        time.sleep(300)
    os._exit(0)
os.close(write)
escaped.append(int(os.read(read, 20)))
os.wait()
open(sys.argv[1], "w").write(" ".join(map(str, escaped)))
if sys.argv[2] == "hang":
    time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead
            return stat.read().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("ending", ["exits", "hang"])
def test_without_the_sandbox_a_setsid_child_and_a_daemon_die_with_the_session(tmp_path: Path, ending: str) -> None:
    """Without bubblewrap (no pid namespace) the agent's process group is not all it left: a child
    in a session of its own and a double-forked daemon are killed too, whether the agent exits or
    is killed at its timeout."""
    pids = tmp_path / "escaped"
    agent = _agent(tmp_path, ESCAPER) + f" {pids} {ending}"
    started = time.monotonic()
    try:
        output = run_arms(["api-version-moved"], [Arm(agent, "memory://")], runtime=AgentRuntime(
            sandbox=SandboxMode.OFF, timeout=5.0))  # fmt: skip
        escaped = [int(p) for p in pids.read_text().split()]
        assert len(escaped) == 2
        assert [pid for pid in escaped if _alive(pid)] == []
    finally:
        for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert time.monotonic() - started < 60
    assert len(output.sessions) == 1


T = TypeVar("T")
WRITER = """
import os, sys
count, size = int(sys.argv[1]), int(sys.argv[2])
os.makedirs("junk", exist_ok=True)
line = b"x" * 99 + b"\\n"
for n in range(count):
    with open(f"junk/{n}.txt", "wb") as f:
        f.write(line * (size // 100))
open(os.environ["MEMSTORE_RESULT"], "w").write("{}")
"""


def _peak_growth_kib(work: Callable[[], T]) -> tuple[T, int]:
    """What ``work`` returns, and how far this process's peak resident memory rose above what it
    held when it began (``VmHWM`` reset through ``clear_refs``)."""
    Path("/proc/self/clear_refs").write_text("5")
    status = Path("/proc/self/status")
    before = int(status.read_text().split("VmRSS:")[1].split()[0])
    done = work()
    return done, int(status.read_text().split("VmHWM:")[1].split()[0]) - before


@pytest.mark.parametrize(
    ("count", "size", "reason"),
    [
        (100, 1024 * 1024, "wrote more than 16,777,216 bytes into its working copy (the session's write budget)"),
        (10_001, 100, "wrote more than 10,000 files into its working copy (the session's write budget)"),
    ],
    ids=["100MB", "10001-files"],
)
def test_an_agent_writing_past_its_budget_is_an_agent_error_and_nothing_of_it_is_read(
    tmp_path: Path, count: int, size: int, reason: str
) -> None:
    """100 MB (or 10,001 files) written into the working copy: the session is an agent error with
    the reason, the change is dropped unread (not committed, diffed or checked), the run takes
    seconds and the harness's peak memory grows by less than 48 MiB (it read a 100 MB diff)."""
    agent = _agent(tmp_path, WRITER) + f" {count} {size}"
    started = time.monotonic()
    output, grown = _peak_growth_kib(lambda: run_arms(["api-version-moved"], [Arm(agent, "memory://")]))
    assert time.monotonic() - started < 60
    assert grown < 48 * 1024, grown
    errors = _errors(output, Arm(agent, "memory://").name)
    assert [e.split(";")[0] for e in errors] == [reason]
    assert [(s.agent_error, s.outcome.merged) for s in output.sessions] == [(True, False)]


def test_one_file_past_the_budget_is_cut_where_the_budget_ends(tmp_path: Path) -> None:
    """No file of the agent grows past 16 MiB and a byte (RLIMIT_FSIZE: the write fails, EFBIG,
    where SIGXFSZ is ignored as Python ignores it), so a single 100 MB file is past the budget
    too, and discarded."""
    agent = _agent(tmp_path, WRITER) + f" 1 {100 * 1024 * 1024}"
    output = run_arms(["api-version-moved"], [Arm(agent, "memory://")])
    errors = _errors(output, Arm(agent, "memory://").name)
    assert errors[0].startswith("exit status 1: ")
    assert errors[0].endswith("OSError: [Errno 27] File too large\n")
    assert errors[-1].startswith("wrote more than 16,777,216 bytes into its working copy")
    assert [(s.agent_error, s.outcome.merged) for s in output.sessions] == [(True, False)]


def test_what_a_session_past_its_budget_wrote_is_gone_before_the_next_session(tmp_path: Path) -> None:
    """A review session writes 100 MB (nothing of a review is committed, but the tree is the next
    session's): the coding session after it finds the working copy as the repository has it."""
    seen = tmp_path / "seen"
    source = WRITER.replace(
        "count, size =",
        f"task = __import__('json').load(open(os.environ['MEMSTORE_TASK']))['task']\n"
        f"if task['surface'] != 'code_review':\n"
        f"    open({str(seen)!r}, 'w').write(' '.join(sorted(os.listdir('.'))))\n"
        f"    open(os.environ['MEMSTORE_RESULT'], 'w').write('{{}}')\n"
        f"    sys.exit(0)\n"
        f"count, size =",
    )
    agent = _agent(tmp_path, source) + f" 100 {1024 * 1024}"
    output = run_arms(["files-change-together"], [Arm(agent, "memory://")], runtime=UNBOXED)  # it writes `seen`
    errors = _errors(output, Arm(agent, "memory://").name)
    assert [e.split(";")[0] for e in errors] == [
        "wrote more than 16,777,216 bytes into its working copy (the session's write budget)"
    ]
    listed = seen.read_text().split()
    assert ".git" in listed
    assert "junk" not in listed
    assert [(s.surface, s.agent_error) for s in output.sessions] == [
        ("code_review", True),
        ("coding_agent", False),
    ]


def test_an_in_process_agent_that_raises_fails_its_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.harness.run.boundary import agents

    class Crashing(NoMemoryAgent):
        name = "crashing"

        def work(self, session: object) -> None:
            raise RuntimeError("boom")

    monkeypatch.setitem(agents.AGENTS.registered, "crashing", lambda config: Crashing(config))
    output = run_arms(["api-version-moved"], [Arm("crashing", "memory://")])
    assert _errors(output, "crashing/memory") == ["the agent raised RuntimeError: boom"]


def test_a_unit_that_cannot_run_is_a_failure_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstore.harness.run.play import loop as trial

    def broken(scenario: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(trial, "_template", broken)
    output = run_arms(["api-version-moved"], [Arm("no-memory", "memory://")])
    assert output.sessions == []
    (failure,) = output.failures
    assert failure.error == "OSError: disk on fire"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("command:", "'command:' needs a command line"),
        ("command:   ", "'command:' needs a command line"),
        ("command:'unbalanced", "cannot read the agent command"),
        ("command:no-such-program-anywhere x", "is not on PATH"),
        ("command:./missing.py", "is not an executable file"),
    ],
)
def test_agent_commands_that_cannot_run_are_refused_up_front(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        make_agent(spec)


def test_relative_paths_in_a_command_are_relative_to_where_eval_started(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text("print('hi')\n")
    runtime = AgentRuntime(base_dir=tmp_path, sandbox=SandboxMode.OFF)  # python3 may be a shim the sandbox hides
    agent = make_agent("command:python3 my_agent.py --model x", runtime=runtime)
    assert agent.argv[1:] == [str(tmp_path / "my_agent.py"), "--model", "x"]  # type: ignore[attr-defined]
    assert Path(agent.argv[0]).is_absolute()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("sqlite:///tmp/{bogus}.db", "unknown placeholder"),
        ("sqlite:///tmp/{trial.db", "use {scenario}"),
        ("sqlite:///nonexistent/dir/x.db", "names one store for every trial"),
        ("sqlite:///nonexistent/dir/{trial}.db", "the folder /nonexistent/dir does not exist"),
        ("agentmem:///some/dir", "names one store for every trial"),
    ],
)
def test_store_uris_are_used_as_given_or_refused(uri: str, message: str) -> None:
    config = RunConfig(scenarios=(scenario("api-version-moved"),), arms=(Arm("no-memory", uri),))
    with pytest.raises(ConfigurationError, match=message):
        check_config(config)


def test_the_schema_accepts_the_documented_result() -> None:
    result = {
        "answer": "42",
        "findings": [{"path": "a.py", "note": "n", "line": 3}],
        "memory_ops": [
            {"op": "use", "id": "mem_1"},
            {"op": "refuse", "id": "mem_2", "reason": "r"},
            {"op": "store", "subject": "s", "fact": "f", "citations": ["a.py:1"], "supersedes": None},
        ],
    }
    assert validate_result(result) is None
    assert validate_result([]) == "the result: [] is not of type 'object'"


def test_eval_keeps_every_arm_when_one_agent_fails_every_session(tmp_path: Path) -> None:
    agent = tmp_path / "my_agent.py"
    agent.write_text("raise SystemExit(1)\n")
    result = CliRunner().invoke(
        main,
        ["eval", str(Path("scenarios/api-version-moved.yaml").resolve()), "--agent", "no-memory", "--agent",
         f"command:{sys.executable} {agent}", "--out", str(tmp_path / "run"), "--workers", "1"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the run measured nothing for that arm
    assert "\u2717 command:" in result.output
    assert "sessions without an agent error > 0: agent errors in 1 of 1 sessions (every one)" in result.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert len(results["arms"]) == 2
    assert (tmp_path / "run" / "report.html").exists()


@pytest.mark.slow
def test_an_agent_that_kills_its_worker_costs_only_its_own_units(tmp_path: Path) -> None:
    worker = "int(open(f'/proc/{os.getppid()}/stat').read().rsplit(') ', 1)[1].split()[1])"  # above its supervisor
    agent = _agent(tmp_path, f"import os, signal\nos.kill({worker}, signal.SIGKILL)\n")
    arms = [Arm(agent, "memory://"), Arm("no-memory", "memory://")]
    # Outside the sandbox (inside it, the agent's pid namespace has no worker to kill)
    output = run_arms(["api-version-moved", "api-version-control"], arms, workers=2, runtime=UNBOXED)
    assert sorted((f.arm, f.scenario) for f in output.failures) == [
        (arms[0].name, "api-version-control"),
        (arms[0].name, "api-version-moved"),
    ]
    assert all(f.error.startswith("the worker process running this unit died") for f in output.failures)
    assert sorted((s.arm, s.scenario) for s in output.sessions) == [
        ("no-memory/memory", "api-version-control"),
        ("no-memory/memory", "api-version-moved"),
    ]
