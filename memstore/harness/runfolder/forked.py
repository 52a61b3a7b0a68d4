"""One computation of a run's tail in a forked child, beside the parent's own.

When the units are done, the run's tail (metrics per arm and scenario, comparisons, tables,
reports) runs in the main process while the cores the workers used stand idle. `in_child`
starts a function in a child forked from this process (so it reads the tables already in
memory, with nothing pickled on the way in) and gives back a handle whose `Child.result` waits
for its value (pickled on the way out) or raises its error. The value is the one the function
returns in this process: nothing the child does is seen by the parent but that value.

Only on Linux, where ``fork`` is safe for this: elsewhere, and when the run was given one
worker, the function runs in this process when its result is asked for.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Child", "in_child"]

T = TypeVar("T")


class Child(Generic[T]):
    """A function running in a forked child (or, where none is forked, to be run here)."""

    def __init__(self, function: Callable[[], T], fork: bool) -> None:
        self._function = function
        self._pid: int | None = None
        self._pipe: int | None = None
        if fork:
            self._start()

    def _start(self) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, hand the value over, leave without running the parent's exit code
            os.close(read)
            try:
                try:
                    data = pickle.dumps((True, self._function()))
                except BaseException as exc:  # every error goes to the parent
                    try:
                        data = pickle.dumps((False, exc))
                    except Exception:
                        data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
                with os.fdopen(write, "wb") as out:
                    out.write(data)
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._pipe = pid, read

    def result(self) -> T:
        """The function's value (waiting for the child), or its error raised here."""
        if self._pipe is None:
            return self._function()
        pipe, pid, self._pipe, self._pid = self._pipe, self._pid, None, None
        assert pid is not None
        with os.fdopen(pipe, "rb") as source:
            data = source.read()
        os.waitpid(pid, 0)
        if not data:
            raise RuntimeError("the child computing part of the run's results died")
        ok, value = pickle.loads(data)  # our own child's bytes, through our own pipe
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the child if its result was never asked for."""
        if self._pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, 9)
                os.waitpid(self._pid, 0)
            if self._pipe is not None:
                os.close(self._pipe)
            self._pid = self._pipe = None


def in_child(function: Callable[[], T], *, workers: int) -> Child[T]:
    """``function`` started in a forked child where that can help (Linux, more than one worker)."""
    return Child(function, fork=workers > 1 and sys.platform == "linux" and hasattr(os, "fork"))
