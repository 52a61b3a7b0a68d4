"""A computation of the run's tail in a forked child gives what it gives here, errors included."""

from __future__ import annotations

import os
import sys

import pytest

from memstore.harness.runfolder.forked import in_child

FORKS = sys.platform == "linux"


def _pid_and_sum(values: list[int]) -> tuple[int, int]:
    return os.getpid(), sum(values)


def test_the_value_comes_from_a_child_when_workers_allow_it_and_from_here_otherwise() -> None:
    values = list(range(1000))
    child = in_child(lambda: _pid_and_sum(values), workers=2)
    pid, total = child.result()
    assert total == 499500
    assert (pid != os.getpid()) is FORKS
    alone = in_child(lambda: _pid_and_sum(values), workers=1)
    assert alone.result() == (os.getpid(), 499500)


class Unpicklable(Exception):
    def __reduce__(self) -> object:
        raise TypeError("cannot pickle this")


def _fails(kind: type[Exception]) -> None:
    raise kind("the metric broke")


def test_an_error_in_the_child_is_raised_here() -> None:
    with pytest.raises(ValueError, match="the metric broke"):
        in_child(lambda: _fails(ValueError), workers=2).result()
    with pytest.raises((RuntimeError, Unpicklable), match="the metric broke"):
        in_child(lambda: _fails(Unpicklable), workers=2).result()


def test_a_child_whose_result_is_never_asked_for_is_stopped() -> None:
    import time

    child = in_child(lambda: time.sleep(60), workers=2)
    pid = child._pid
    child.close()
    if FORKS:
        assert pid is not None
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no such child any more
