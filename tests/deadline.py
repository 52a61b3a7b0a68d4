"""Run a call with a deadline it cannot overrun.

A regular expression that backtracks holds the interpreter inside C code: neither an alarm nor a
thread can stop it. The call runs in a forked child instead, killed at the deadline, so a test of
a bound fails in seconds on code without the bound instead of hanging the suite.
"""

from __future__ import annotations

import gc
import multiprocessing
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TypeVar

import pytest

__all__ = ["within"]

T = TypeVar("T")


def _run(function: Callable[[], object], sender: Connection) -> None:
    # What the child inherited is never collected in it: a collection would walk (and so copy,
    # page by page) the whole heap of a test worker that ran other files first; the child's own
    # objects are collected as usual (this took the long-lines tests from 40 s to 15 s after other files).
    gc.freeze()
    try:
        sender.send((True, function()))
    except BaseException as exc:  # handed to the parent, which raises it
        sender.send((False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def within(seconds: float, function: Callable[[], T]) -> tuple[T, float]:
    """``function()``'s result and the seconds it took, computed in a forked child; the test fails
    when it does not return within ``seconds`` (the child is killed)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(function, sender), daemon=True)
    started = time.perf_counter()
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            pytest.fail(f"did not return within {seconds} s")
        ok, value = receiver.recv()
        took = time.perf_counter() - started
    finally:
        child.kill()
        child.join()
        receiver.close()
    if not ok:
        pytest.fail(f"raised in the child: {value}")
    return value, took
