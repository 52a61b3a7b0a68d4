"""A seeded, stratified sample of a library's tasks: ``memstore eval --sample N``.

A run over the whole library (the hand-written scenarios, the mined ones and a generated
population of 2,000 tasks) takes minutes; trying a store or an agent should take less. A sample
keeps every kind of evidence: ``N`` is split evenly over the kinds of scenario (hand-written,
mined, generated; a kind with fewer tasks than its share gives all of them and the rest goes to
the others), so a quick run still holds the hand-written library that tests the store's contract
rather than 2% of it. Within a kind the tasks are split into strata (where the knowledge a task
needs is, and its surface), each stratum gets its share in proportion to its size (largest
remainder, at least one task each when the share allows), and the tasks of a stratum are drawn
by a generator seeded from the run's seed, so the same seed draws the same tasks from any
checkout. A sample's overall figures weigh the kinds evenly, unlike the whole library's: the
report gives them per kind too.

A task keeps what it depends on: a task that needs what an earlier one learned
(``learned:KEY``) brings that one along, so a sample can hold a few more than ``N`` tasks. A
dropped task's wait (``after``) is added to the next kept one, so the clock (and with it expiry)
reads as it would have. Every seeded memory stays: the pool a store is tested on is unchanged.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import timedelta

from memstore.harness.scenarios.scenario import Scenario, Task

__all__ = ["QUICK", "Sample", "sample_tasks"]

QUICK = 120  # ``--quick``: tasks in a try-it-out run (about a minute on two cores)


@dataclass(frozen=True)
class Sample:
    """What a sample took: ``tasks`` of ``population`` tasks, in ``strata`` strata."""

    asked: int
    tasks: int
    population: int
    strata: int
    seed: int

    def describe(self) -> str:
        return (
            f"a sample of {self.tasks:,} of {self.population:,} tasks "
            f"(asked {self.asked:,}; split evenly over the kinds of scenario, then by stratum and surface "
            f"over {self.strata} strata; seed {self.seed})"
        )


def _stratum(scenario: Scenario, task: Task) -> tuple[str, str, str]:
    return scenario.kind, task.stratum, task.surface.value


def _shares(sizes: dict[tuple[str, str, str], int], n: int) -> dict[tuple[str, str, str], int]:
    """``n`` split over the strata in proportion to their sizes (largest remainder), at least one
    each while ``n`` allows it, never more than a stratum holds (``n`` is below their total)."""
    total = sum(sizes.values())
    order = sorted(sizes)
    floor = 1 if n >= len(order) else 0
    share = {s: max(floor, sizes[s] * n // total) for s in order}
    by_remainder = sorted(order, key=lambda s: (-(sizes[s] * n % total), -sizes[s], s))
    while sum(share.values()) < n:
        s = next(s for s in by_remainder if share[s] < sizes[s])
        share[s] += 1
        by_remainder.remove(s)
        by_remainder.append(s)
    while sum(share.values()) > n:  # the floors took more than the remainders gave
        s = max(order, key=lambda s: (share[s], s))
        share[s] -= 1
    return share


def _even(sizes: dict[str, int], n: int) -> dict[str, int]:
    """``n`` split evenly over ``sizes``' keys, none given more than it holds, what one cannot
    take going to the others (the first keys in order get the odd ones)."""
    share = dict.fromkeys(sizes, 0)
    left = n
    while left > 0:
        open_ = [k for k in sorted(sizes) if share[k] < sizes[k]]
        if not open_:
            break
        each, odd = divmod(left, len(open_))
        for i, k in enumerate(open_):
            add = min(each + (i < odd), sizes[k] - share[k])
            share[k] += add
            left -= add
    return share


def _with_dependencies(scenario: Scenario, chosen: set[str]) -> set[str]:
    """``chosen`` and every task they learn from, transitively."""
    needs = {t.key: [n.removeprefix("learned:") for n in t.needs if n.startswith("learned:")] for t in scenario.tasks}
    kept, todo = set(chosen), list(chosen)
    while todo:
        for key in needs.get(todo.pop(), ()):
            if key not in kept:
                kept.add(key)
                todo.append(key)
    return kept


def _keep(scenario: Scenario, keys: set[str]) -> Scenario:
    """The scenario with only the tasks named; a dropped task's wait moves to the next kept one."""
    tasks: list[Task] = []
    waited = timedelta(0)
    for task in scenario.tasks:
        if task.key in keys:
            tasks.append(replace(task, after=waited + task.after))
            waited = timedelta(0)
        else:
            waited += task.after
    return replace(scenario, tasks=tuple(tasks))


def sample_tasks(scenarios: list[Scenario] | tuple[Scenario, ...], n: int, seed: int) -> tuple[list[Scenario], Sample]:
    """About ``n`` tasks of ``scenarios`` (see the module docstring); the scenarios that keep at
    least one task, in their order, each with only its kept tasks.

    Raises:
        ValueError: ``n`` is not positive.
    """
    if n < 1:
        raise ValueError(f"a sample needs at least one task, not {n}")
    population = sum(len(s.tasks) for s in scenarios)
    strata: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
    for scenario in sorted(scenarios, key=lambda s: s.name):
        for task in scenario.tasks:
            strata[_stratum(scenario, task)].append((scenario.name, task.key))
    if n >= population:
        return list(scenarios), Sample(n, population, population, len(strata), seed)
    rng = random.Random(f"memstore-sample:{seed}")  # a str seed hashes the same on every machine
    chosen: dict[str, set[str]] = defaultdict(set)
    kinds = {kind: sum(len(t) for s, t in strata.items() if s[0] == kind) for kind, _, _ in strata}
    for kind, share in _even(kinds, n).items():
        within = {s: len(t) for s, t in strata.items() if s[0] == kind}
        counts = _shares(within, share) if share < kinds[kind] else within
        for stratum, count in counts.items():
            for name, key in rng.sample(strata[stratum], count):
                chosen[name].add(key)
    kept = [_keep(s, _with_dependencies(s, chosen[s.name])) for s in scenarios if chosen.get(s.name)]
    return kept, Sample(n, sum(len(s.tasks) for s in kept), population, len(strata), seed)
