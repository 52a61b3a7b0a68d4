"""The runner: arms x scenarios x trials, paired by seed, on a pool of processes.

An arm is (agent, store). Every arm runs the same tasks with the same seeds: a trial's
seed is derived from the run seed and the trial's identity (scenario, trial number), and
the agents draw their chances from streams of that seed, so outcomes pair up task by
task. A trial is one world (`memstore.harness.run.play.loop`). Units of work go to a local pool
of processes; their rows come back and are sorted, so the tables do not depend on the pool.

A unit that fails is a failure row, not a crash. A worker process that dies (killed by an
agent, out of memory) costs only the unit it was running: the units it took down with it run
again one at a time, and the one that kills its worker again is recorded as lost. A SIGTERM or
Ctrl-C stops the workers and removes the scratch space before it propagates.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.util
import os
import select
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from memstore import backends
from memstore.errors import CostCapReached, Interrupted
from memstore.harness.records import SHARD_TABLES, FailureRecord, Role
from memstore.harness.run.boundary import agents
from memstore.harness.run.boundary.agents import agent_role, make_agent
from memstore.harness.run.isolation.scratch import clean_stale, release_all
from memstore.harness.run.output import Arm, RunOutput, Unit
from memstore.harness.run.play.handoff import GradingFactory
from memstore.harness.run.play.loop import forget_templates, run_unit
from memstore.harness.run.runner.config import RunConfig
from memstore.harness.run.runner.declarations import Declared, check_config, declared, registrations
from memstore.harness.run.runner.executors import RayExecutor, Registrations

__all__ = [
    "Arm",
    "Declared",
    "Interrupted",
    "RunConfig",
    "RunOutput",
    "check_config",
    "declared",
    "fitted_workers",
    "iter_arms",
    "run",
    "units",
]


UNITS_PER_WORKER = 4
"""The first pool of a process starts the fork server (about 0.5 s of CPU: a fresh interpreter
importing the engine), a hand-written scenario's unit takes 0.1-0.3 s: a worker is worth starting
for four units or more."""


def fitted_workers(config: RunConfig) -> int:
    """The workers a run of the local executor has work for: at most ``config.workers``, one per
    `UNITS_PER_WORKER` units, and 1 (the units run in this process) for a small run."""
    if config.executor != "local":
        return config.workers
    return max(1, min(config.workers, len(config.scenarios) * config.trials * len(config.arms) // UNITS_PER_WORKER))


def units(config: RunConfig) -> list[Unit]:
    """Every (scenario, trial, arm) of a run, in the order its rows are kept."""
    return [
        Unit(
            scenario,
            trial,
            arm,
            config.seed,
            config.limit,
            config.expiry,
            config.runtime_for(arm.agent),
        )
        for scenario in config.scenarios
        for trial in range(config.trials)
        for arm in config.arms
    ]


@contextlib.contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into `Interrupted` in the main thread, so clean-up runs as for Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Interrupted(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_WORK: list[Unit] = []  # in a pool's worker: the run's units, handed over once when it started
_GRADING: list[GradingFactory] = []  # in a pool's worker: the run's grading, handed over with them


def _start_worker(
    parent: int, registered: Registrations, work: list[Unit], grading: GradingFactory, environ: dict[str, str]
) -> None:
    """Worker start-up: take the run's environment (the fork server's is the one it started
    with), register the parent's agents and stores, keep the run's units (batches then name them
    by position: a scenario is pickled once per worker, not once per unit) and its grading, and
    die with the run."""
    global _WORK
    os.environ.clear()
    os.environ.update(environ)
    agents.restore_registrations(registered[0])
    backends.restore_registrations(registered[1])
    _WORK = work
    _GRADING[:] = [grading]
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    """Die when the process that started the run dies, however it dies.

    A worker is a child of the fork server, which dies with the run's process; Linux's
    parent-death signal kills the worker when the fork server goes. A watchdog thread waiting
    on the run process's pidfd covers the rest (a run that dies while the fork server lives on,
    a server another process started). Ctrl-C is the parent's to handle: workers ignore it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    try:
        handle = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)
    except OSError:  # no pidfds here: poll the parent's id instead
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])  # readable once the process has exited
        else:
            while _alive(parent):
                time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="memstore-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_FORKSERVER: list[multiprocessing.context.BaseContext] = []  # this process's pool context, once chosen


def _context(preload: Callable[[], Sequence[str]] = list) -> multiprocessing.context.BaseContext:
    """The fork server's context, its server importing what ``preload()`` names when it starts (the first
    pool of this process decides); spawn where this platform has no fork server, or no folder
    short enough for its socket."""
    if not _FORKSERVER:
        if "forkserver" not in multiprocessing.get_all_start_methods() or not _short_temp():
            _FORKSERVER.append(multiprocessing.get_context("spawn"))
        else:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__, *preload()])
            _FORKSERVER.append(context)
    return _FORKSERVER[0]


def _preload(work: Sequence[Unit], grading: GradingFactory) -> list[str]:
    """What every worker of a run imports, for the fork server to import once: the modules of
    the grading and of the agents the run hands down (found from them, never named here)."""
    found = [getattr(grading, "__module__", "")]
    for spec in sorted({unit.arm.agent for unit in work}):
        if not spec.startswith("command:"):
            with contextlib.suppress(Exception):
                found.append(type(make_agent(spec)).__module__)
    return [name for name in dict.fromkeys(found) if name in sys.modules]


def _short_temp() -> bool:
    """Whether multiprocessing's temporary folder, where the fork server's socket goes, leaves
    room for a socket's path (108 bytes); made in ``/tmp`` when ``$TMPDIR`` is deep."""
    saved = tempfile.tempdir
    try:
        if len(os.fsencode(tempfile.gettempdir())) > 48 and os.access("/tmp", os.W_OK | os.X_OK):
            tempfile.tempdir = "/tmp"
        return len(os.fsencode(multiprocessing.util.get_temp_dir())) <= 80
    finally:
        tempfile.tempdir = saved


def _run_batch(batch: list[int]) -> list[RunOutput]:
    return [run_unit(_WORK[position], _GRADING[0]) for position in batch]


def _not_run(unit: Unit, why: str) -> RunOutput:
    out = RunOutput()
    out.failures.append(FailureRecord(**unit.key(), error=why, where=""))
    return out


def _lost(unit: Unit) -> RunOutput:
    return _not_run(unit, "the worker process running this unit died (killed, or out of memory)")


class _Pool:
    """A process pool whose workers die with the run, and can be killed at once.

    Workers are forked by multiprocessing's fork server (a fresh interpreter, started once per
    process, with the engine imported): a pool starts in milliseconds, where a spawned
    interpreter per worker took about 0.6 s, paid again by every run and every look of a
    sequential run. Never forked from this process: a forked worker would share its git
    readers, scratch folder and threads.
    """

    def __init__(self, workers: int, registered: Registrations, work: list[Unit], grading: GradingFactory) -> None:
        self.executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=_context(lambda: _preload(work, grading)),
            initializer=_start_worker,
            initargs=(os.getpid(), registered, work, grading, dict(os.environ)),
        )

    def kill(self) -> None:
        processes = list(getattr(self.executor, "_processes", {}).values())
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()
        self.executor.shutdown(wait=True, cancel_futures=True)


def _in_pool(
    work: list[Unit],
    batches: list[list[int]],
    workers: int,
    finish: Callable[[int, RunOutput], None],
    registered: Registrations,
    grading: GradingFactory,
) -> list[int]:
    """Run ``batches`` (positions in ``work``) on a pool; the positions lost when a worker died."""
    lost: list[int] = []
    pool = _Pool(workers, registered, work, grading)
    try:
        futures: dict[Future[list[RunOutput]], list[int]] = {
            pool.executor.submit(_run_batch, batch): batch for batch in batches
        }
        while futures:
            finished, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in finished:
                batch = futures.pop(future)
                try:
                    outputs = future.result()
                except BrokenProcessPool:
                    lost += batch
                    continue
                for position, output in zip(batch, outputs, strict=True):
                    finish(position, output)
    except BaseException:
        pool.kill()
        raise
    pool.executor.shutdown(wait=True)
    return lost


def _executor(config: RunConfig, grading: GradingFactory) -> Callable[..., list[int]]:
    """How batches run: ``execute(work, batches, finish, registered, workers) -> lost positions``."""
    if config.executor == "local":
        return lambda work, batches, finish, registered, workers: _in_pool(
            work, batches, workers, finish, registered, grading
        )
    ray = RayExecutor(config.executor, config.workers)
    return lambda work, batches, finish, registered, workers: ray.run(work, batches, finish, registered, grading)


def run(
    config: RunConfig,
    progress: Callable[[int, int], None] | None = None,
    *,
    grading: GradingFactory,
    done: Callable[[Unit], RunOutput | None] | None = None,
    keep: Callable[[Unit, RunOutput], None] | None = None,
    part: tuple[int, int] | None = None,
) -> RunOutput:
    """Run every unit of ``config``, each trial graded by what ``grading`` makes (`handoff`: the
    composition root chooses it); ``progress(done, total)`` is called as units finish.

    ``done(unit)`` gives the rows of a unit that already ran (it is not run again), or None;
    ``keep(unit, rows)`` is called as each unit finishes: the run folder's shards
    (`memstore.harness.runfolder.shards.run_in_folder`) use both, so an interrupted run resumes
    where it stopped. ``part=(k, n)`` runs only the k-th of n interleaved parts (for several
    machines; `memstore merge` assembles them). Failures are rows, not crashes.
    """
    clean_stale()
    work = units(config)
    results: list[RunOutput | None] = [None] * len(work)
    mine = [i for i in range(len(work)) if part is None or i % part[1] == part[0] - 1]
    if done is not None:
        for position in mine:
            results[position] = done(work[position])
    todo = [i for i in mine if results[i] is None]
    finished, spent = len(mine) - len(todo), 0.0

    def finish(position: int, output: RunOutput) -> None:
        nonlocal finished, spent
        if keep is not None:
            keep(work[position], output)
        results[position] = output
        finished += 1
        spent += sum(session.spent.cost_usd for session in output.sessions)
        if progress:
            progress(finished, len(mine))
        if config.max_cost is not None and spent >= config.max_cost and finished < len(mine):
            raise CostCapReached(spent)

    if progress:
        progress(finished, len(mine))
    try:
        with _stop_on_sigterm():
            _execute(config, work, todo, finish, grading)
    except CostCapReached as reached:
        forget_templates()
        release_all()
        for position in mine:
            if results[position] is None:
                results[position] = _not_run(
                    work[position], f"not run: --max-cost reached (${reached.spent:.2f} spent)"
                )
    except BaseException:
        forget_templates()
        release_all()  # interrupted: nothing of this run stays behind
        raise
    finally:
        clean_stale()  # the folders of workers that were killed
    return merge_outputs([r for r in results if r is not None])


def _execute(
    config: RunConfig,
    work: list[Unit],
    todo: list[int],
    finish: Callable[[int, RunOutput], None],
    grading: GradingFactory,
) -> None:
    """Run the units at ``todo``: here, one by one, or in batches on the run's executor."""
    if config.workers <= 1 and config.executor == "local":
        for position in todo:
            finish(position, run_unit(work[position], grading))
        return
    if not todo:
        return
    # Contiguous batches keep one scenario's trials in one process, so its template is built once there.
    size = max(1, len(todo) // (config.workers * 8))
    batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    registered = registrations(config)
    execute = _executor(config, grading)
    lost = execute(work, batches, finish, registered, config.workers)
    for position in sorted(lost):  # again, alone: a death now names its unit
        if execute(work, [[position]], finish, registered, 1):
            finish(position, _lost(work[position]))


def merge_outputs(results: Sequence[RunOutput]) -> RunOutput:
    """One output from the outputs of units, in their order; events numbered in that order."""
    merged = RunOutput()
    for result in results:
        for name in SHARD_TABLES:
            getattr(merged, name).extend(getattr(result, name))
    merged.events = [event.numbered(position) for position, event in enumerate(merged.events)]
    return merged


def iter_arms(specs: Sequence[str], stores: Sequence[str], negative: Sequence[str] = ()) -> Iterator[Arm]:
    """Every agent with every store (a control only once: it reads no store); an arm on a store
    of ``negative`` is a negative control (the person running says which stores are)."""
    controls = {
        spec for spec in specs if not spec.startswith("command:") and agent_role(make_agent(spec)) is Role.CONTROL
    }
    for store in stores:
        for spec in specs:
            if spec in controls and store != stores[0]:
                continue
            yield Arm(spec, store, negative_control=store in negative)
