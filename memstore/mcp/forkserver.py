"""A fork server for ``memstore mcp``: a server started in milliseconds instead of a second.

A store reached through memstore's own MCP server (``mcp:memstore``) needs a server for each
user, surface and repository it acts for, since a server fixes who acts when it starts. A new
``memstore mcp`` process spends about a second importing the MCP SDK. Here one process imports
it all once (``serve``), and each server is a fork of it: a launcher (``run``: this file run as
a script, the standard library only) hands the fork server its own standard input and output
over a Unix socket (``SCM_RIGHTS``) with the command line, and the fork runs the ``memstore``
program on them exactly as the command would. The program is found as the installed console
script of that name (an entry point, as the shell finds it on ``PATH``), not by importing the
command line: this room names nothing above it, and what it preloads beyond the MCP server's own
modules its caller names. An MCP client sees an ordinary stdio server: the launcher is
the process it started, and it lives until the fork ends, so closing the client's pipes ends
both.

The fork server ends when its standard input closes (its parent went away); its socket lies in a
folder only its user may enter. Written by hand: ``multiprocessing``'s fork server runs Python
functions, not a command on given descriptors.

    python -m memstore.mcp.forkserver serve SOCKET PROGRAM [MODULE...]  # the fork server (prints "ready")
    python -I -S forkserver.py run SOCKET mcp --store ...               # one server, on this process's stdio
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import sys
import threading

TYPE_CHECKING = False  # a launcher imports only what it runs with: typing, subprocess and tempfile cost it 10 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ClassVar

__all__ = ["ForkServer", "main"]

PROGRAM = "memstore"  # the console script a fork runs
SERVER = (  # what every MCP server imports, some of it only once it runs
    "memstore.mcp.server",
    "memstore.mcp.stdio",
    "memstore.mcp.http",
    "anyio._backends._asyncio",
    "anyio._core._sockets",
)
_MESSAGE = 1 << 16  # the command line's bytes at most


_START_TIMEOUT = 60.0  # seconds the fork server may take to import what it preloads


class ForkServer:
    """This process's fork server, started when first asked for (`ForkServer.shared`) and ended
    with the process. Its forks run with an environment of their own: ``PATH``, where memstore
    is imported from, and the bytecode cache; nothing else of the caller's."""

    _shared: ClassVar[dict[int, ForkServer]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, program: str = PROGRAM, preload: tuple[str, ...] = ()) -> None:
        import subprocess
        import tempfile

        base = "/tmp" if os.path.isdir("/tmp") else None  # short: a socket's path has 108 bytes
        self.folder = tempfile.mkdtemp(prefix="memstore-fork-", dir=base)
        self.socket = os.path.join(self.folder, "s")
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.folder}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "LANG", "LC_ALL"):
            if name in os.environ:
                env[name] = os.environ[name]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memstore.mcp.forkserver", "serve", self.socket, program, *SERVER, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=self.folder,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], _START_TIMEOUT)
        if not ready or self.process.stdout.readline() != b"ready\n":
            self.close()
            raise RuntimeError("the memstore fork server did not start")
        atexit.register(self.close)

    @classmethod
    def shared(cls, program: str = PROGRAM, preload: tuple[str, ...] = ()) -> ForkServer:
        """The fork server of this process (a new one in a process forked from one that had one),
        running ``program`` with ``preload`` imported beside the MCP server's modules (the first
        caller's, for as long as it serves)."""
        with cls._lock:
            found = cls._shared.get(os.getpid())
            if found is None or found.process.poll() is not None:
                found = cls._shared[os.getpid()] = cls(program, preload)
            return found

    def argv(self, args: list[str]) -> list[str]:
        """The command line that runs ``memstore ARGS`` as a fork, on its own standard streams."""
        return [sys.executable, "-I", "-S", os.path.abspath(__file__), "run", self.socket, *args]

    def close(self) -> None:
        import shutil
        import subprocess

        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _program(name: str) -> Callable[[], object]:
    """The function of the console script ``name``, as installed (the ``memstore`` command's)."""
    from importlib.metadata import entry_points

    found = entry_points(group="console_scripts", name=name)
    if not found:
        raise SystemExit(f"memstore fork server: no installed program {name!r}")
    function: Callable[[], object] = next(iter(found)).load()
    return function


def _serve(path: str, program: str, preload: list[str]) -> int:
    import importlib

    main = _program(program)
    for module in preload:  # what every server needs, imported once; the forks share it
        importlib.import_module(module)
    from memstore.registry import scan_now

    scan_now()  # the command line's registries find their entries in the forks without a scan each
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    os.write(1, b"ready\n")
    while True:
        ready, _, _ = select.select([listener.fileno(), 0], [], [])
        if 0 in ready and not os.read(0, 4096):
            return 0  # the parent closed our input: it is gone or done
        if listener.fileno() in ready:
            connection, _ = listener.accept()
            _fork(listener, connection, program, main)


def _fork(listener: socket.socket, connection: socket.socket, program: str, main: Callable[[], object]) -> None:
    """One server: the command line and three descriptors from ``connection``, run in a fork."""
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(connection, _MESSAGE, 3)
        argv = json.loads(data)
        if len(fds) != 3 or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ValueError("expected a command line and three descriptors")
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError):
            os.write(2, f"memstore fork server: a launcher sent what it cannot use: {exc}\n".encode())
        for fd in fds:
            os.close(fd)
        connection.close()
        return
    if os.fork() == 0:
        status = 1
        try:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for target, fd in enumerate(fds):  # the launcher's standard input, output and error
                os.dup2(fd, target)
                os.close(fd)
            # ``connection`` stays open to the end: the launcher waits for it to close.
            sys.argv = [program, *argv]
            try:
                main()
                status = 0
            except SystemExit as exit_:
                status = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
    for fd in fds:
        os.close(fd)
    connection.close()


def _run(path: str, argv: list[str]) -> int:
    """Hand this process's standard input and output to a fork running ``memstore ARGV``; wait
    until it ends."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.connect(path)
        socket.send_fds(connection, [json.dumps(argv).encode()], [0, 1, 2])
    except OSError as exc:
        print(f"memstore: cannot reach the fork server at {path}: {exc}", file=sys.stderr)
        return 1
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the fork alone holds the pipes now, so they close when it ends
    os.dup2(null, 1)
    os.dup2(null, 2)
    with contextlib.suppress(OSError, KeyboardInterrupt):
        while connection.recv(1):
            pass
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 3 and args[0] == "serve":
        return _serve(args[1], args[2], args[3:])
    if len(args) >= 2 and args[0] == "run":
        return _run(args[1], args[2:])
    print("usage: forkserver.py serve SOCKET PROGRAM [MODULE...] | run SOCKET ARG...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
