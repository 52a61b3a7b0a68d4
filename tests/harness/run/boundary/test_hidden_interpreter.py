"""A command agent whose interpreter the sandbox hides (a pyenv or asdf shim, any Python under a
home folder) is refused before the run, in one line that says what is hidden and what to use
instead; an agent that fails every session is one line per cause in the summary, not one per
session. Run as a user runs them: the installed ``memstore`` from a scratch folder outside the
checkout, the README's toy agent beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.harness.run.isolation.sandbox import SandboxMode, hidden_folder, resolve_mode

ROOT = Path(__file__).resolve().parents[4]
BIN = Path(sys.executable).parent
SCENARIOS = [str(ROOT / "scenarios" / f"{n}.yaml") for n in ("api-version-control", "api-version-moved")]

if not resolve_mode(SandboxMode.AUTO)[0]:
    if os.environ.get("MEMSTORE_REQUIRE_SANDBOX"):  # CI installs bubblewrap: there, a skip is a failure
        raise RuntimeError(f"MEMSTORE_REQUIRE_SANDBOX is set but {resolve_mode(SandboxMode.AUTO)[1]}")
    pytestmark = pytest.mark.skip(reason="bubblewrap cannot run here: without a sandbox nothing is hidden")

SHIM = """\
#!/bin/sh
# a version manager's shim: it runs a helper of its own, in the home folder
exec "$HOME/.pyenv/libexec/pyenv" exec python3 "$@"
"""


def _toy_agent() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("# my_agent.py")
    return readme[start : readme.index("```", start)]


@pytest.fixture
def user(tmp_path: Path, fake_home: Path) -> tuple[Path, dict[str, str]]:
    """A scratch folder with the toy agent, and an environment whose ``python3`` is a shim in the home."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_agent.py").write_text(_toy_agent(), encoding="utf-8")
    shims = fake_home / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    (shims / "python3").write_text(SHIM)
    (shims / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(fake_home), PATH=f"{shims}{os.pathsep}{env.get('PATH', '')}")
    return work, env


def _eval(work: Path, env: dict[str, str], agent: str, out: str) -> subprocess.CompletedProcess[str]:
    argv = [str(BIN / "memstore"), "eval", *SCENARIOS, "--agent", agent, "--agent", "no-memory", "--out", out]
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)


def test_a_shim_in_the_home_folder_is_refused_before_the_run_saying_what_to_use(
    user: tuple[Path, dict[str, str]], fake_home: Path
) -> None:
    work, env = user
    done = _eval(work, env, "command:python3 my_agent.py", "my-run")
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    shim = fake_home / ".pyenv" / "shims" / "python3"
    assert line.startswith(f"Error: the agent 'python3 my_agent.py' runs {shim}, in {fake_home.resolve()}, which")
    assert "the sandbox hides" in line
    assert "--agent-sandbox off" in line
    assert f"this run's own Python ({sys.executable})" in line
    assert not (work / "my-run").exists()  # nothing started, nothing written
    # what it suggests works: this run's own Python
    fixed = _eval(work, env, f"command:{sys.executable} my_agent.py", "fixed")
    assert fixed.returncode in (0, 3), fixed.stdout[-2000:] + fixed.stderr[-2000:]
    assert "agent error in" not in fixed.stdout


def test_an_agent_that_fails_every_session_is_one_line_per_cause(user: tuple[Path, dict[str, str]]) -> None:
    work, env = user
    done = _eval(work, env, "command:sh -c 'echo no model configured >&2; exit 3'", "broken")
    errors = [line for line in done.stdout.splitlines() if "agent error in" in line]
    assert errors == [
        "command:sh -c 'echo no model configured >&2; exit 3'/sqlite: agent error in 2 session(s): "
        "exit status 3: no model configured"
    ], done.stdout


def test_what_the_sandbox_hides_and_shows(fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(fake_home))
    assert hidden_folder(fake_home / ".pyenv" / "shims" / "python3") == fake_home.resolve()
    assert hidden_folder(Path(sys.executable)) is None  # this run's own Python stays readable
    assert hidden_folder(Path("/usr/bin/env")) is None
    assert hidden_folder(Path("/root/.pyenv/shims/python3")) == Path("/root").resolve()  # root's home, always
