"""The fork server behind ``mcp:memstore``: a ``memstore mcp`` server per launcher, on its stdio."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.mcp.forkserver import ForkServer


def _initialize(process: subprocess.Popen[bytes]) -> dict[str, object]:
    """One MCP request written to the launcher's stdin, its answer read from its stdout."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    answer: dict[str, object] = json.loads(process.stdout.readline())
    return answer


def test_a_launcher_is_a_memstore_mcp_server_and_ends_with_its_client(tmp_path: Path) -> None:
    server = ForkServer.shared()
    argv = server.argv(["mcp", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "ana", "--name", "acme/api"])
    with (tmp_path / "stderr").open("wb") as stderr:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        answer = _initialize(process)
        assert answer["id"] == 1
        assert answer["result"]["serverInfo"]["name"] == "memstore"  # type: ignore[index]
        process.stdin.close()  # type: ignore[union-attr]  # the client hangs up: the fork ends, then the launcher
        assert process.wait(timeout=30) == 0
    assert ForkServer.shared() is server  # one per process, still serving


def test_a_fork_that_fails_says_why_on_the_launchers_stderr(tmp_path: Path) -> None:
    argv = ForkServer.shared().argv(["mcp", "--store", "nosuch:", "--as", "ana", "--name", "acme/api"])
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=30, check=False)
    assert b"unknown store URI 'nosuch:'" in done.stderr


def test_the_fork_server_takes_nothing_it_cannot_use_and_keeps_serving(tmp_path: Path) -> None:
    server = ForkServer.shared()
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as bad:  # a command line, no descriptors
        bad.connect(server.socket)
        bad.send(json.dumps(["mcp"]).encode())
        assert bad.recv(1) == b""  # closed on us
    test_a_launcher_is_a_memstore_mcp_server_and_ends_with_its_client(tmp_path)


def test_its_socket_is_its_users_alone() -> None:
    folder = Path(ForkServer.shared().socket).parent
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_it_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    """Killed, not asked: the parent's end of the fork server's input closes, and it ends."""
    script = (
        "import os, signal; from memstore.mcp.forkserver import ForkServer; "
        "print(ForkServer.shared().process.pid, flush=True); os.kill(os.getpid(), signal.SIGKILL)"
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, check=False)
    assert child.returncode == -9
    pid = int(child.stdout)
    for _ in range(100):
        if not os.path.exists(f"/proc/{pid}") or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]:
            return
        subprocess.run(["sleep", "0.1"], check=True)
    pytest.fail(f"the fork server {pid} outlived its parent")


def test_the_clock_is_given_one_way_only(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memstore.cli import main

    (tmp_path / "clock").write_text("2026-01-15T09:00:00+00:00\n")
    args = ["mcp", "--store", f"sqlite:///{tmp_path / 'm.db'}", "--as", "ana", "--name", "acme/api"]
    now = ["--now", "2026-01-15T09:00:00+00:00"]
    both = CliRunner().invoke(main, [*args, *now, "--clock-file", str(tmp_path / "clock")])
    assert both.exit_code == 2
    assert "give the clock as --now or as --clock-file, not both" in both.output
    (tmp_path / "clock").write_text("tomorrow\n")
    bad = CliRunner().invoke(main, [*args, "--clock-file", str(tmp_path / "clock")])
    assert bad.exit_code == 2
    assert "'tomorrow' is not an ISO 8601 time" in bad.output
