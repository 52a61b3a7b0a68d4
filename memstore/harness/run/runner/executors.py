"""Executors: where the units of a run execute.

An executor runs batches of units (positions in the run's list) and hands each finished unit's
rows to ``finish`` as it comes; it returns the positions it lost to a dead worker. The run
writes shards and assembles results in unit order, so the executor decides speed only, never
bytes: the same seed gives the same ``results.json`` on every executor.

- ``local`` (the default): a pool of processes on this machine, forked by a fork server
  (`memstore.harness.run.runner.pool`).
- ``ray``: a local Ray instance with ``--workers`` CPUs, or a cluster: ``ray://HOST:PORT``, or
  ``RAY_ADDRESS`` in the environment (``pip install 'agent-memstore[ray]'``). The units are put in
  Ray's object store once and every task reads them from there; the registrations of custom
  agents and stores made in this process, and the run's grading, travel with each task; Ctrl-C
  cancels what is pending.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from memstore import backends
from memstore.errors import ConfigurationError
from memstore.harness.run.boundary import agents
from memstore.harness.run.output import RunOutput, Unit
from memstore.harness.run.play.handoff import GradingFactory
from memstore.harness.run.play.loop import run_unit

__all__ = ["Finish", "RayExecutor", "Registrations", "check_executor", "ray_address"]

Finish = Callable[[int, RunOutput], None]
Registrations = tuple[dict[str, str], dict[str, str]]


def check_executor(spec: str) -> None:
    """Refuse an executor that cannot be used, before anything runs.

    Raises:
        ConfigurationError: for an unknown executor, or Ray asked for without Ray installed.
    """
    if spec == "local":
        return
    if spec != "ray" and not spec.startswith("ray://"):
        raise ConfigurationError(f"unknown executor {spec!r}; known: local, ray, ray://HOST:PORT")
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError("--executor ray needs Ray: pip install 'agent-memstore[ray]'") from exc


def ray_address(spec: str) -> str | None:
    """The cluster to attach to: the address in ``ray://HOST:PORT``, else ``RAY_ADDRESS``, else None
    (a local instance is started)."""
    if spec.startswith("ray://"):
        return spec
    return os.environ.get("RAY_ADDRESS") or None


def _batch(
    work: Sequence[Unit], batch: list[int], registered: Registrations, grading: GradingFactory
) -> list[RunOutput]:
    """A Ray task: the units of one batch, run in a Ray worker process."""

    agents.restore_registrations(registered[0])
    backends.restore_registrations(registered[1])
    return [run_unit(work[position], grading) for position in batch]


class RayExecutor:
    """Run batches as Ray tasks (see the module docstring)."""

    name = "ray"

    def __init__(self, spec: str, workers: int) -> None:
        self.address = ray_address(spec)
        self.workers = workers

    def run(
        self,
        work: Sequence[Unit],
        batches: list[list[int]],
        finish: Finish,
        registered: Registrations,
        grading: GradingFactory,
    ) -> list[int]:
        import ray

        started_here = not ray.is_initialized()
        if started_here:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if self.address is None:
                options["num_cpus"] = self.workers
            ray.init(address=self.address, **options)
        task = ray.remote(max_retries=0)(_batch)
        shared: Any = ray.put(list(work))  # shipped once: every task reads the units from the object store
        pending = {task.remote(shared, batch, registered, grading): batch for batch in batches}
        lost: list[int] = []
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    batch = pending.pop(ref)
                    try:
                        outputs = ray.get(ref)
                    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError):
                        lost += batch
                        continue
                    for position, output in zip(batch, outputs, strict=True):
                        finish(position, output)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
        finally:
            if started_here:
                ray.shutdown()
        return lost
