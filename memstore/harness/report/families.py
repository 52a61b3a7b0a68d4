"""The gate registry: every family of gates a run is held to, registered as metrics are.

A family is a function decorated with `@gate`, in memstore's own `memstore.harness.report.builtin_gates`
or in a module of the ``memstore.gates`` entry-point group (`memstore.plugins`), imported on
first use. Which arms a family judges it declares, never by an agent's name:

- ``each_arm``: every arm, before any other family (the integrity gates, the store contract);
- ``declares="verifies"``: each arm whose agent declares that capability in the run's metadata
  (``results.run.arms``), a negative control aside (the verifier's bars);
- neither: the run once (no harm, harm seen, the baseline).

So adding a gate is one decorated function::

    @gate("cost", each_arm=True)
    def cost_gate(run: GateRun, arm: str) -> list[Gate]: ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memstore import plugins
from memstore.harness.analysis import Comparison, RunResults
from memstore.harness.records import Role
from memstore.harness.report.gate import Gate
from memstore.registry import Registry

__all__ = ["GATES", "GateFamily", "GateRun", "declaring", "every_family", "family_gates", "gate", "gates"]


@dataclass(frozen=True)
class GateRun:
    """What a family judges: the run's results and its comparisons with a baseline (none without one)."""

    results: RunResults
    baseline: tuple[Comparison, ...] = ()


@dataclass(frozen=True)
class GateFamily:
    """A registered family of gates (see the module docstring for ``each_arm`` and ``declares``).

    ``make(run)`` for a family of the run, ``make(run, arm)`` for one of arms."""

    name: str
    make: Callable[..., list[Gate]]
    each_arm: bool = False
    declares: str = ""

    def arms(self, results: RunResults) -> list[str] | None:
        """The arms this family judges, in the run's order; None for a family of the run."""
        if self.each_arm:
            return list(results.arms)
        if self.declares:
            return declaring(results, self.declares)
        return None


GATES: Registry[GateFamily] = plugins.GATES  # the built-ins: memstore's ``memstore.gates`` entry point (`shipped`)


def gate(
    name: str, *, each_arm: bool = False, declares: str = ""
) -> Callable[[Callable[..., list[Gate]]], Callable[..., list[Gate]]]:
    """Register the decorated function as the gate family ``name`` (see the module docstring)."""
    if each_arm and declares:
        raise ValueError(f"gate family {name!r}: each arm, or the arms that declare {declares!r}, not both")

    def register(make: Callable[..., list[Gate]]) -> Callable[..., list[Gate]]:
        if name in GATES.registered:
            raise ValueError(f"gate family {name!r} is registered twice")
        GATES.registered[name] = GateFamily(name, make, each_arm, declares)
        return make

    return register


def every_family() -> list[GateFamily]:
    """Every registered family: memstore's own, then those of every ``memstore.gates`` plug-in."""
    GATES.load()
    return list(GATES.registered.values())


def family_gates(
    name: str, results: RunResults, baseline: Sequence[Comparison] = (), arm: str | None = None
) -> list[Gate] | None:
    """The gates the registered family ``name`` makes for ``arm`` (None: a family of the run); None
    when no family has that name."""
    family = next((f for f in every_family() if f.name == name), None)
    if family is None:
        return None
    run = GateRun(results, tuple(baseline))
    return family.make(run) if arm is None else family.make(run, arm)


def declaring(results: RunResults, capability: str) -> list[str]:
    """The arms whose agent declares ``capability`` (such as ``verifies``), as the run's metadata
    records it; a negative control's arms aside (its gate is that its breaches are caught)."""
    declared: dict[Any, bool] = {a.name: a.declares(capability) for a in results.run.arms}
    return [name for name, arm in results.arms.items() if declared.get(name) and arm.role is not Role.NEGATIVE_CONTROL]


def gates(
    results: RunResults, baseline: Sequence[Comparison] | None = None, families: Sequence[GateFamily] | None = None
) -> list[Gate]:
    """Every gate of a run: the families of each arm, arm by arm, then every other family in the
    order they registered (``families``: the composition's choice; every registered one by default)."""
    chosen = every_family() if families is None else list(families)
    run = GateRun(results, tuple(baseline or ()))
    found = [g for arm in results.arms for family in chosen if family.each_arm for g in family.make(run, arm)]
    for family in chosen:
        if family.each_arm:
            continue
        arms = family.arms(results)
        found += family.make(run) if arms is None else [g for arm in arms for g in family.make(run, arm)]
    return found
