"""The supervisor between the harness and an agent's process: when the agent ends, so does every
process it started, wherever it went.

    python -I -S reaper.py [--fsize=BYTES] PROGRAM ARG...

The harness kills an agent's process group, but a process can leave the group: ``setsid`` puts
it in a session of its own, and a daemon forks twice so that its parent is gone and it is
reparented to init. In bubblewrap the agent's pid namespace ends with it and takes them all;
without bubblewrap this supervisor does the same. It runs PROGRAM as its child and is a *child
subreaper* (``PR_SET_CHILD_SUBREAPER``, Linux 3.4): a process below it whose parent dies is
reparented to it, not to init, so every process descended from the agent stays below it and is
found by walking ``/proc``'s parent ids. When PROGRAM exits, or when this process is sent
SIGTERM (the harness's timeout), every process below it is killed with SIGKILL and reaped,
again until none is left; then it exits as PROGRAM did (SIGKILL itself when stopped).

What escapes it: nothing that stays a process of this machine's pid namespace, unless the agent
kills this supervisor first (a process of the same user may); then the harness's group kill is
all that is left, as before. ``--fsize`` sets ``RLIMIT_FSIZE`` for PROGRAM: a write past it fails
(``SIGXFSZ`` kills the writer).

Run as a script, with the standard library only, so it starts in milliseconds (the fork
server's launcher is the same). Written by hand: no maintained library supervises a process tree
through a subreaper.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_KILL_FOR = 10.0  # seconds spent killing what is below before giving up on a process that will not die


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the harness's group kill is all
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _below(root: int) -> list[int]:
    """Every process descended from ``root``, from ``/proc``'s parent ids."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    parent = int(stat.read().rsplit(b") ", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> None:
    """Collect every child of this process that has ended (an orphan reparented here too)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def kill_below() -> None:
    """SIGKILL every process below this one and reap them, until none is left (a process killed
    mid-fork may leave a child, which comes here): at most `_KILL_FOR` seconds."""
    deadline = time.monotonic() + _KILL_FOR
    while (found := _below(os.getpid())) and time.monotonic() < deadline:
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
        _reap()


def _stop(signum: int, frame: object) -> None:
    kill_below()
    os.kill(os.getpid(), signal.SIGKILL)


def _exec(program: list[str], parent: int, fsize: int | None) -> None:
    """In the child: die with this supervisor, limit file size, become PROGRAM."""
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the supervisor died before the line above
            os._exit(1)
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        os.execvp(program[0], program)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.write(2, f"memstore: cannot run {program[0]}: {exc}\n".encode(errors="replace"))
    os._exit(127)


def main(argv: list[str]) -> int:
    fsize = None
    if argv and argv[0].startswith("--fsize="):
        fsize, argv = int(argv[0].removeprefix("--fsize=")), argv[1:]
    if not argv:
        print("usage: reaper.py [--fsize=BYTES] PROGRAM ARG...", file=sys.stderr)
        return 2
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # it may re-raise its child's fatal signal
    me = os.getpid()
    child = os.fork()
    if child == 0:
        _exec(argv, me, fsize)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _stop)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans reparented here are reaped as they end
        if pid == child:
            break
    kill_below()
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(me, os.WTERMSIG(status))
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
