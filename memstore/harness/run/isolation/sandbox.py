"""Where an out-of-process agent runs: a bubblewrap sandbox, or a reported weaker fallback.

An agent under evaluation is a program the harness did not write. In the sandbox
(`bubblewrap <https://github.com/containers/bubblewrap>`_, Debian's ``bubblewrap``) it sees:

- its working copy, mounted at ``/memstore/repo``: the only tree it can write. The
  repository's ``.git`` is mounted read-only (the harness commits what it changed);
- its session folder at ``/memstore/session`` (the task file, where the result goes, and any
  trajectory it keeps), a private ``$HOME`` and ``$TMPDIR``;
- the rest of the machine's file system read-only, with the run's own things replaced by
  empty folders: the temporary directories (``$TMPDIR``, ``/tmp`` and the scratch base, which is
  ``/dev/shm`` where the machine has room in memory: every scratch folder of memstore,
  templates, trials, stores, other workers' and runs', the relays' sockets), the run
  folder, the scenario library and the scenario files of the run, and the home folders of
  the invoking user, of root and of ``/home``
  (what the agent's program itself needs stays readable: the files its command names, this
  Python and memstore);
- no network unless the run says ``--agent-network host`` (an LLM agent needs its API);
- an environment scrubbed to `ALLOWED_ENV`, the documented ``MEMSTORE_*`` variables and the
  names given with ``--agent-env``;
- its memory over MCP through a relay: the ``memstore mcp`` server runs outside, beside the
  store, and the agent reaches it only through a socket in its session folder.

Where bubblewrap is missing or cannot make namespaces, ``--agent-sandbox auto`` falls back to
running the agent directly, in its working copy, with the same scrubbed environment, timeout,
output cap and kill of every process it started (`memstore.harness.run.isolation.reaper`). That is
weaker (a process of the same user can read what that user can read), and it is reported as such
in the run's summary and report.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path

from memstore.errors import ConfigurationError
from memstore.harness.run.isolation.process import Finished, run_bounded
from memstore.harness.run.isolation.scratch import scratch, scratch_base
from memstore.harness.run.isolation.writes import MAX_FILE_BYTES

__all__ = [
    "ALLOWED_ENV",
    "DEFAULT_TIMEOUT",
    "INSIDE_RELAY",
    "INSIDE_REPO",
    "INSIDE_SESSION",
    "AgentRuntime",
    "Network",
    "Relay",
    "SandboxMode",
    "agent_environment",
    "hidden_folder",
    "resolve_mode",
    "run_isolated",
    "wrap",
]

DEFAULT_TIMEOUT = 600.0
ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR")
INSIDE_REPO = "/memstore/repo"
INSIDE_SESSION = "/memstore/session"
INSIDE_RELAY = "/memstore/relay"
_SOCKETS = Path("/tmp") if Path("/tmp").is_dir() else Path(tempfile.gettempdir())  # short: sockets have 108 bytes


class SandboxMode(StrEnum):
    AUTO = "auto"  # bubblewrap where it works, the fallback otherwise
    BWRAP = "bwrap"  # bubblewrap or refuse to run
    OFF = "off"  # the fallback, on purpose


class Network(StrEnum):
    NONE = "none"
    HOST = "host"


@dataclass(frozen=True)
class AgentRuntime:
    """How out-of-process agents are run (the same for every session of a run).

    Attributes:
        timeout: seconds a session may take before its process group is killed.
        base_dir: what relative paths in an agent's command are relative to.
        sandbox: ``auto``, ``bwrap`` or ``off``.
        network: ``none`` (no network at all) or ``host``.
        env: names of variables of the harness's environment passed to the agent.
        hidden: paths an agent must not read (the run folder, the scenario files).
        transcripts: where each session's transcript is written (None: not kept).
    """

    timeout: float = DEFAULT_TIMEOUT
    base_dir: Path = field(default_factory=Path.cwd)
    sandbox: SandboxMode = SandboxMode.AUTO
    network: Network = Network.NONE
    env: tuple[str, ...] = ()
    hidden: tuple[Path, ...] = ()
    transcripts: Path | None = None

    def with_timeout(self, timeout: float) -> AgentRuntime:
        from dataclasses import replace

        return replace(self, timeout=timeout)


@cache
def _bwrap_works() -> str | None:
    """Why bubblewrap cannot be used here, or None when it can."""
    program = shutil.which("bwrap")
    if program is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot run: {exc}"
    if done.returncode != 0:
        return f"bubblewrap cannot make namespaces here: {done.stderr.decode(errors='replace').strip()[:200]}"
    return None


def resolve_mode(requested: SandboxMode) -> tuple[bool, str]:
    """Whether agents run in bubblewrap, and a sentence saying how they run.

    Raises:
        ConfigurationError: when ``bwrap`` was asked for and cannot be used.
    """
    if requested is SandboxMode.OFF:
        return False, "no sandbox (--agent-sandbox off): agents run as this user, in their working copy"
    problem = _bwrap_works()
    if problem is None:
        return True, "bubblewrap: working copy writable, run folder, stores, templates and scenarios hidden"
    if requested is SandboxMode.BWRAP:
        raise ConfigurationError(f"--agent-sandbox bwrap: {problem} (Debian: apt-get install bubblewrap)")
    return False, f"no sandbox ({problem}): agents run as this user, in their working copy"


def agent_environment(names: Sequence[str], extra: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: `ALLOWED_ENV` and ``names`` from this one, then ``extra``."""
    keep = {*ALLOWED_ENV, *names}
    return {**{k: v for k, v in os.environ.items() if k in keep}, **extra}


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """``paths`` without those inside another of them, in their order (linear in their number:
    a machine may hold thousands of scratch folders)."""
    given = set(paths)
    return [p for p in paths if not any(parent in given for parent in p.parents)]


def _homes() -> list[Path]:
    """The home folders of this machine's people: the invoking user's (``$HOME`` and the password
    database's), root's and every folder of ``/home`` (keys, tokens, shell profiles, ``.gitconfig``)."""
    found = {Path("/root"), Path(os.path.expanduser("~"))}
    if os.environ.get("HOME"):
        found.add(Path(os.environ["HOME"]))
    with contextlib.suppress(OSError):
        found |= {p for p in Path("/home").iterdir() if p.is_dir() and not p.is_symlink()}
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        found.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return sorted(p for p in found if p.is_absolute() and p.is_dir() and p.resolve() != Path("/"))


def _root() -> list[str]:
    """bubblewrap, then the machine read-only, folder by folder, under a root of its own."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    args = [bwrap]
    for entry in sorted(os.listdir("/")):
        top = Path("/") / entry
        if entry in {"proc", "dev", "memstore"}:
            continue
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    return [*args, "--dev", "/dev", "--proc", "/proc"]


@cache
def hidden_folder(path: Path) -> Path | None:
    """The home folder that hides ``path`` (as given, or where its links lead) from a sandboxed
    agent, or None where the agent can read it (outside every home, or in this Python's and
    memstore's own folders, which stay readable)."""
    homes = [h.resolve() for h in _homes()]
    for where in dict.fromkeys((path.absolute(), path.resolve())):
        if any(where.is_relative_to(r) for r in _runtime_folders()):
            continue
        found = next((h for h in homes if where.is_relative_to(h)), None)
        if found is not None:
            return found
    return None


def _runtime_folders() -> tuple[Path, ...]:
    """This Python's and memstore's folders (the one that holds the package; the same for the whole process)."""
    return tuple({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(__file__).resolve().parents[4]})


def wrap(
    argv: Sequence[str],
    *,
    workdir: Path,
    session_dir: Path,
    relay_dir: Path | None,
    runtime: AgentRuntime,
    env: Mapping[str, str],
) -> list[str]:
    """``argv`` as bubblewrap runs it: see the module docstring for what it sees."""
    args = _root()
    # The temporary directories whole (every scratch folder of memstore, this run's, its workers'
    # and other runs', and the relays' sockets are there): a folder globbed one by one could be
    # gone by the time bubblewrap mounts over it, and the run would fail for it.
    temps = [Path(tempfile.gettempdir()).resolve(), scratch_base().resolve(), _SOCKETS.resolve()]
    every = list(dict.fromkeys(p.resolve() for p in [*temps, *_homes(), *runtime.hidden]))
    hide = _outermost(every)
    # What the agent needs to run stays readable even where it lies in a hidden folder: its
    # program and script, this Python and memstore (the MCP relay); what they hold is hidden again.
    needed = set(_runtime_folders())
    files = [Path(a).resolve() for a in argv if os.path.isabs(a) and os.path.isfile(a)]
    needed |= set(files[:2])  # not every file its arguments name
    exposed = sorted(p for p in needed if any(p.is_relative_to(h) for h in hide))
    again = [h for h in every if any(h.is_relative_to(p) for p in exposed)]
    args += _hiding(hide)
    for path in exposed:
        args += ["--ro-bind", str(path), str(path)]
    args += _hiding(again)
    args += [arg for path in [*hide, *again] if path.is_dir() for arg in ("--remount-ro", str(path))]
    args += ["--bind", str(workdir), INSIDE_REPO]
    if (workdir / ".git").exists():
        args += ["--ro-bind", str(workdir / ".git"), f"{INSIDE_REPO}/.git"]
    if relay_dir is not None:
        args += ["--bind", str(relay_dir), INSIDE_RELAY]
    args += ["--bind", str(session_dir), INSIDE_SESSION, "--tmpfs", "/memstore/home", "--tmpfs", "/memstore/tmp"]
    args += ["--remount-ro", "/", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if runtime.network is Network.HOST:
        args += ["--share-net"]
    args += ["--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    args += ["--chdir", INSIDE_REPO, "--", *argv]
    return args


def run_isolated(
    argv: Sequence[str], *, workdir: Path, runtime: AgentRuntime, timeout: float, env: Mapping[str, str] = {}
) -> Finished:
    """Run a program that executes what an agent wrote (a scenario's check command, a test suite
    importing the agent's modules) the way the agent ran: in bubblewrap when the run's sandbox
    gives it (never with the network), else directly; either way with the scrubbed environment,
    a private ``$HOME`` and ``$TMPDIR``, every process it started killed at ``timeout``.

    Raises:
        OSError: when the program cannot be started.
    """
    from dataclasses import replace

    sandboxed = resolve_mode(runtime.sandbox)[0]  # bwrap asked for and missing: ConfigurationError
    with tempfile.TemporaryDirectory(dir=scratch("run"), prefix="check-") as folder:
        home = Path(folder) / "home"
        home.mkdir()
        extra = (
            {"HOME": "/memstore/home", "TMPDIR": "/memstore/tmp"}
            if sandboxed
            else {"HOME": str(home), "TMPDIR": str(home)}
        )
        scrubbed = agent_environment((), {**extra, **env})
        command = list(argv)
        if sandboxed:
            quiet = replace(runtime, network=Network.NONE)
            command = wrap(
                command, workdir=workdir, session_dir=Path(folder), relay_dir=None, runtime=quiet, env=scrubbed
            )
        return run_bounded(
            command, cwd=workdir, env=scrubbed, timeout=timeout, max_file_bytes=MAX_FILE_BYTES, pid_namespace=sandboxed
        )


def _hiding(paths: Sequence[Path]) -> list[str]:
    """bubblewrap arguments that put an empty folder over each folder, and nothing over each file."""
    args: list[str] = []
    for path in paths:
        if path.is_dir() and path != Path("/"):
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


class Relay:
    """The outside end of the MCP relay: a Unix socket in a folder of its own (short enough for a
    socket's name, hidden from every other sandbox); each connection to it gets its own
    ``memstore mcp`` server process (outside the sandbox, beside the store), the connection as
    its standard input and output."""

    # Servers running at once: an agent opening them without end waits for none. Each holds at
    # most one request being read and `memstore.mcp.stdio.MAX_PENDING_BYTES` of requests waiting
    # for their answers (4 MiB each): what the relay's servers buffer for an agent is bounded.
    MAX_SERVERS = 8

    def __init__(self, server_argv: Sequence[str]) -> None:
        self.server_argv = list(server_argv)
        self.path = Path(tempfile.mkdtemp(prefix=f"memstore-relay-{os.getpid()}-", dir=_SOCKETS)) / "mcp.sock"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        self._listener.listen(4)
        self._listener.settimeout(0.2)
        self._servers: list[subprocess.Popen[bytes]] = []
        self._thread = threading.Thread(target=self._serve, name="mcp-relay", daemon=True)
        self._closed = False

    def _serve(self) -> None:
        while not self._closed:
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(None)
            self._servers = [s for s in self._servers if s.poll() is None]
            if self._closed or len(self._servers) >= self.MAX_SERVERS:
                connection.close()
                continue
            with contextlib.suppress(OSError), connection:  # the server holds the socket now, not the relay:
                self._servers.append(  # when it exits the agent's end reads the end of the stream
                    subprocess.Popen(
                        self.server_argv,
                        stdin=connection.fileno(),
                        stdout=connection.fileno(),
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )

    @contextlib.contextmanager
    def running(self) -> Iterator[Relay]:
        """Serve connections until the block ends (or `close`); then remove the socket's folder."""
        self._thread.start()
        try:
            yield self
        finally:
            self.close()
            shutil.rmtree(self.path.parent, ignore_errors=True)

    def close(self) -> None:
        """Stop listening; let each server finish what it was asked (its input has ended), then go."""
        if self._closed:
            return
        self._closed = True
        self._thread.join(timeout=5)
        self._listener.close()
        for server in self._servers:
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
