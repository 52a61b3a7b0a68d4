"""Running an agent's process with every resource bounded: time, output, and what it leaves behind.

A command agent is a program the harness did not write. It may hang, print without end,
leave a background child holding its pipes (in its process group, in a session of its own, or
a daemon forked twice), or hand back a FIFO where a file should be. Here it runs below a
supervisor (`memstore.harness.run.isolation.reaper`, a child subreaper) in a process group of its own: as
soon as it exits, and at the deadline, every process descended from it is killed, wherever it
went, then the whole group (a program in a pid namespace of its own, as bubblewrap makes one,
needs no supervisor: every process in the namespace dies with it); its standard output and
error are drained by one select loop that keeps only the last `OUTPUT_CAP` bytes of each; and
its result file is read only if it is a regular file, and only up to a size. Whatever it does,
the harness gets an answer within the timeout plus a short grace, and never holds more than a
few megabytes for it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OUTPUT_CAP", "RESULT_CAP", "Finished", "gunzip_bounded", "read_bounded", "run_bounded"]

OUTPUT_CAP = 1024 * 1024  # bytes of stdout and of stderr kept (the tail)
RESULT_CAP = 8 * 1024 * 1024  # a result file larger than this is refused unread
_GRACE = 1.0  # seconds to drain the pipes after the process exits, before they are abandoned
# The agent is killed if the process that started it dies first (a worker killed with its run):
# util-linux's setpriv sets the parent-death signal, which survives the exec into the agent.
_SETPRIV = shutil.which("setpriv")
_DIE_WITH_PARENT = [_SETPRIV, "--pdeathsig", "KILL", "--"] if _SETPRIV and sys.platform == "linux" else []
_REAPER = [sys.executable, "-I", "-S", str(Path(__file__).with_name("reaper.py"))]
_PRLIMIT = shutil.which("prlimit")  # util-linux, as setpriv: sets a limit and becomes the program
_STOP_GRACE = 5.0  # seconds the supervisor has to kill what is below it before its group is killed
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended.

    Attributes:
        returncode: its exit status; negative for a signal (``-9`` when it was killed).
        timed_out: whether it was killed at the deadline.
        stdout: the last `OUTPUT_CAP` bytes it wrote to standard output.
        stderr: likewise for standard error.
        stdout_bytes: how many bytes it wrote to standard output in all.
        stderr_bytes: likewise for standard error.
        seconds: wall time from start to the end of draining.
    """

    returncode: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    seconds: float

    def stderr_tail(self, chars: int = 300) -> str:
        """The end of standard error as text a person can read (undecodable bytes replaced)."""
        return self.stderr[-4 * chars :].decode("utf-8", errors="replace")[-chars:]


class _Tail:
    """The last ``cap`` bytes of a stream, and how many bytes it carried."""

    def __init__(self, cap: int) -> None:
        self.cap, self.total, self.data = cap, 0, bytearray()

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > self.cap:
            del self.data[: len(self.data) - self.cap]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process's whole group: background children die with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ask the supervisor to kill every process below it (it then kills itself), give it
    `_STOP_GRACE` seconds, then kill its group."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_STOP_GRACE)
    _kill_group(process)


def _startable(program: str, cwd: str | Path, env: Mapping[str, str]) -> None:
    """Raise as `subprocess.Popen` would for a program that cannot be found: the supervisor
    starts it, and could only report its absence as an exit status."""
    if "/" in program:
        path = os.path.join(cwd, program)
        found = os.path.isfile(path) and os.access(path, os.X_OK)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory: {program!r}", program)


def run_bounded(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    env: Mapping[str, str],
    timeout: float,
    output_cap: int = OUTPUT_CAP,
    max_file_bytes: int | None = None,
    pid_namespace: bool = False,
) -> Finished:
    """Run ``argv`` to completion or to ``timeout`` seconds, whichever comes first; with
    ``max_file_bytes``, no file it writes may grow past that many bytes (``RLIMIT_FSIZE``).
    ``pid_namespace`` says that ``argv`` is a program that ends every process below it when it
    ends, and dies with this one (bubblewrap with ``--unshare-pid`` and ``--die-with-parent``).

    Raises:
        OSError: when the program cannot be started at all.
    """
    _startable(argv[0], cwd, env)
    started = time.monotonic()
    process = subprocess.Popen(
        _supervised(argv, max_file_bytes, pid_namespace),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so the group can be killed as one
    )
    assert process.stdout is not None
    assert process.stderr is not None
    stdout_tail, stderr_tail = _Tail(output_cap), _Tail(output_cap)
    timed_out = _drain(
        process, {process.stdout.fileno(): stdout_tail, process.stderr.fileno(): stderr_tail}, started + timeout
    )
    if process.poll() is None:
        _stop(process)
    returncode = process.wait()
    process.stdout.close()
    process.stderr.close()
    return Finished(
        returncode=returncode,
        timed_out=timed_out,
        stdout=bytes(stdout_tail.data),
        stderr=bytes(stderr_tail.data),
        stdout_bytes=stdout_tail.total,
        stderr_bytes=stderr_tail.total,
        seconds=time.monotonic() - started,
    )


def _supervised(argv: Sequence[str], max_file_bytes: int | None, pid_namespace: bool) -> list[str]:
    """``argv`` below what bounds it: the supervisor (started with the parent-death signal), or,
    for a program in a pid namespace of its own, only ``prlimit`` for the file size. The
    supervisor is a Python started per run (about 40 ms of CPU a check, more than the check's
    own Python), and a namespace already does its work: its processes cannot leave it, and all
    of them are killed when its first one ends."""
    if pid_namespace and (max_file_bytes is None or _PRLIMIT is not None):
        limit = [] if max_file_bytes is None else [str(_PRLIMIT), f"--fsize={max_file_bytes}", "--"]
        return [*limit, *argv]
    limit = [] if max_file_bytes is None else [f"--fsize={max_file_bytes}"]
    return [*_DIE_WITH_PARENT, *_REAPER, *limit, *argv]


def _drain(process: subprocess.Popen[bytes], tails: dict[int, _Tail], deadline: float) -> bool:
    """Read the process's pipes into their tails until it exits (its group killed then) or the
    deadline passes (what is below it and its group killed, and True returned); stop listening a grace period after
    either, whatever still holds a pipe."""
    timed_out, exited_at = False, None
    with selectors.DefaultSelector() as selector:
        for fd in tails:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
                _kill_group(process)  # a child left behind holding the pipes goes too
            if exited_at is None and now >= deadline:
                timed_out = True
                _stop(process)  # every process below the supervisor, then its group
                exited_at = time.monotonic()
            if exited_at is not None and now >= exited_at + _GRACE:
                break  # something outside the group still holds a pipe: stop listening
            wait = (exited_at + _GRACE if exited_at is not None else deadline) - now
            for key, _ in selector.select(timeout=max(0.0, min(wait, 0.1))):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if chunk:
                    tails[fd].add(chunk)
                else:
                    selector.unregister(fd)
    return timed_out


def read_bounded(path: Path, *, cap: int = RESULT_CAP) -> bytes:
    """The contents of ``path`` if it is a regular file of at most ``cap`` bytes.

    Never blocks and never follows a symbolic link: a FIFO, a device, a directory, a link or an
    oversized file is refused.

    Raises:
        OSError: saying why the file cannot be read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if info.st_size > cap:
            raise OSError(f"{path.name} is {info.st_size:,} bytes, more than the {cap:,} allowed")
        chunks, size = [], 0
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise OSError(f"{path.name} grew past the {cap:,} bytes allowed")
        return b"".join(chunks)
    finally:
        os.close(fd)


def gunzip_bounded(data: bytes, cap: int) -> bytes:
    """``data`` (gzip, one or more members) decompressed, refused once it passes ``cap`` bytes:
    a file from elsewhere cannot make a small download a huge allocation (a gzip bomb).

    Raises:
        ValueError: not gzip, truncated, or larger than ``cap`` once decompressed.
    """
    out, rest = bytearray(), data
    while rest:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflate.decompress(rest, cap + 1 - len(out))
        except zlib.error as exc:
            raise ValueError(f"not gzip data: {exc}") from exc
        if len(out) > cap or inflate.unconsumed_tail:
            raise ValueError(f"decompresses to more than the {cap:,} bytes allowed")
        if not inflate.eof:
            raise ValueError("truncated gzip data")
        rest = inflate.unused_data
    return bytes(out)
