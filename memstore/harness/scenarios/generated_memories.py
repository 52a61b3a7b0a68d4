"""A generated repository's pool of memories of known truth (see `memstore.harness.scenarios.generator`):
where each covered setting is kept, the share ``hard`` a verifier that compares cited lines gets
wrong, adversarial variants, and the ``flood`` of newer memories of unrelated code. Truth labels
follow from the construction."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from memstore.harness.scenarios.model import (
    Claim,
    Location,
    Origin,
    SeedMemory,
    Truth,
)
from memstore.harness.scenarios.synthetic import Learned, Repo, Setting
from memstore.model import Kind, Surface

__all__ = ["memory_pool"]


def _memory(
    key: str,
    origin: Origin,
    truth: Truth,
    author: str,
    subject: str,
    fact: str,
    cites: list[str],
    learned_at: str,
    age: timedelta,
    *,
    anchor: bool = True,
    claim: Claim | None = None,
) -> SeedMemory:
    return SeedMemory(
        key,
        origin,
        truth,
        "",
        Kind.FACT,
        author,
        Surface.CODE_REVIEW,
        learned_at,
        anchor,
        subject,
        fact,
        tuple(cites),
        "Found while working on the service.",
        age,
        claim=claim or Claim(),
    )


def _cite(places: list[tuple[str, int]]) -> list[str]:
    return [f"{path}:{line}" for path, line in places]


def memory_pool(
    repo: Repo, p: dict[str, Any], learned: dict[int, Learned], spike: dict[int, tuple[str, int]]
) -> list[SeedMemory]:
    rng = repo.rng
    stale, adversarial, abandoned = p.get("stale", 0.2), p.get("adversarial", 0.1), p.get("abandoned", 0.1)
    coverage = p.get("coverage", 1.0)
    memories: list[SeedMemory] = []
    for k, s in enumerate(repo.settings):
        was, now = learned[k], repo.places(k)
        truth_at = Location(s.config, rf"\b{s.name} = (\d+)")
        if rng.random() < coverage:
            copies = [w for w, kept in (("the web client", s.web_name), ("the docs", s.doc_label)) if kept is not None]
            memories.append(
                _memory(
                    f"sync-{k}",
                    Origin.GENUINE,
                    Truth.MOVED if (was.places, was.value) != (now, s.value) else Truth.VALID,
                    "owner",
                    f"{s.name} synchronization",
                    f"{s.name} must match between the service config and {' and '.join(copies)}."
                    if copies
                    else f"{s.name} is kept only in the service config.",
                    _cite(was.places),
                    was.label,
                    timedelta(days=rng.randrange(1, 20)),
                )
            )
        label, value, cites, origin = was.label, was.value, _cite(was.places[:1]), Origin.GENUINE
        roll = rng.random()
        if roll < stale and was.value != s.value:
            origin = Origin.STALE
        elif roll < stale + abandoned and k in spike:
            (label, value), origin = spike[k], Origin.ABANDONED
            cites = [f"{s.config}:{repo.line_of(s.config, f'{s.name} = ')}"]
        truth = (
            Truth.CONTRADICTED if value != s.value else (Truth.MOVED if cites[0] != _cite(now[:1])[0] else Truth.VALID)
        )
        memories.append(
            _memory(
                f"value-{k}",
                origin,
                truth,
                "owner",
                f"{s.name} value",
                f"{s.name} is set to {value}.",
                cites,
                label,
                timedelta(days=rng.randrange(1, 20)),
                claim=Claim(states=str(value), at=truth_at),
            )
        )
        if rng.random() < adversarial:
            memories.append(_adversarial(rng, k, s, repo, truth_at, p.get("_head", "initial")))
    return memories + _hard(repo, p) + _flood(repo, p)


def _hard(repo: Repo, p: dict[str, Any]) -> list[SeedMemory]:
    """In a share ``hard`` of the settings, one memory of a kind the reference verifier gets wrong
    (it compares a fact's literals with the cited lines): an adversarial claim the cited line does
    not make, behind a literal the line holds (it passes); a slip naming another setting behind
    this one's value (it passes); a true fact that also gives the service's number (it is
    refused). Labels from the construction: the verifier's verdicts on these are its error rate.
    (A stream of its own, so the rest of the population is the same with or without them.)"""
    rng = random.Random(f"{p['seed']}:{repo.index}:hard")
    now, found = p.get("_head", "initial"), []
    for k, s in enumerate(repo.settings):
        if rng.random() >= p.get("hard", 0.0):
            continue
        line = f"{s.config}:{repo.line_of(s.config, f'{s.name} = ')}"
        truth_at = Location(s.config, rf"\b{s.name} = (\d+)")
        age = timedelta(hours=rng.randrange(1, 48))
        others = [j for j, o in enumerate(repo.settings) if o.value != s.value]
        kind = rng.randrange(3) if others else rng.choice([0, 2])
        other = repo.settings[rng.choice(others)] if kind == 1 else s
        found.append(_hard_memory(kind, k, s, other, line, truth_at, now, age))
    return found


def _hard_memory(
    kind: int, k: int, s: Setting, other: Setting, line: str, truth_at: Location, now: str, age: timedelta
) -> SeedMemory:
    """One memory of `_hard`'s three kinds (0: adversarial, 1: a slip naming ``other``, 2: a true fact)."""
    if kind == 0:
        return _memory(
            f"hard-{k}",
            Origin.ADVERSARIAL,
            Truth.UNSUPPORTED,
            "mal",
            f"{s.name} source",
            f"{s.name} = {s.value} is read from the {s.name} environment variable at start-up.",
            [line],
            now,
            age,
        )
    if kind == 1:
        return _memory(
            f"hard-{k}",
            Origin.GENUINE,
            Truth.CONTRADICTED,
            "owner",
            f"{s.name} value",  # a slip: the note names another setting than the line it cites
            f"{other.name} is set to {s.value}.",
            [line],
            now,
            age,
            claim=Claim(str(s.value), Location(other.config, rf"\b{other.name} = (\d+)")),
        )
    return _memory(
        f"hard-{k}",
        Origin.GENUINE,
        Truth.VALID,
        "owner",
        f"{s.name} value for service {k}",
        f"{s.name} is set to {s.value} for service {k}.",
        [line],
        now,
        age,
        claim=Claim(str(s.value), truth_at),
    )


def _flood(repo: Repo, p: dict[str, Any]) -> list[SeedMemory]:
    """In a share ``flood_share`` of the repositories, ``flood`` true but unrelated memories, all
    newer than the rest: a store that hands out only the newest ``limit`` memories hands out only
    these, and an agent depending on it must find the setting on its own. (A stream of its own,
    so the rest of the population is the same with or without it.)"""
    rng = random.Random(f"{p['seed']}:{repo.index}:flood")
    if rng.random() >= p.get("flood_share", 0.0):
        return []
    found = []
    for i in range(p.get("flood", 0)):
        f = i % 3
        found.append(
            _memory(
                f"note-{i}",
                Origin.GENUINE,
                Truth.VALID,
                "owner",
                f"helper_{f} behaviour (note {i})",
                f"helper_{f} returns its argument unchanged (note {i}).",
                [f"lib/util{f}.py:1"],
                p.get("_head", "initial"),
                timedelta(hours=rng.randrange(1, 20)),
            )
        )
    return found


def _adversarial(rng: random.Random, k: int, s: Setting, repo: Repo, truth_at: Location, now: str) -> SeedMemory:
    """An adversarial memory about setting ``k``: a wrong value, a claim citing unrelated code, a
    claim citing lines that do not exist, or files said to change with it that have nothing of it."""
    first = f"{s.config}:{repo.line_of(s.config, f'{s.name} = ')}"
    age = timedelta(hours=rng.randrange(1, 48))
    variant = rng.randrange(4)
    if variant == 0:
        wrong = s.value + 7
        return _memory(
            f"adv-{k}",
            Origin.ADVERSARIAL,
            Truth.CONTRADICTED,
            "mal",
            f"{s.name} value",
            f"{s.name} is set to {wrong}.",
            [first],
            now,
            age,
            claim=Claim(str(wrong), truth_at),
        )
    if variant == 1:
        return _memory(
            f"adv-{k}",
            Origin.ADVERSARIAL,
            Truth.UNSUPPORTED,
            "mal",
            f"{s.name} source",
            f"{s.name} is enforced by the rate limiter middleware.",
            ["lib/util0.py:1"],
            now,
            age,
            claim=Claim(points_to=("lib/util0.py",)),
        )
    if variant == 2:
        return _memory(
            f"adv-{k}",
            Origin.ADVERSARIAL,
            Truth.MISSING,
            "mal",
            f"{s.name} source",
            f"{s.name} is read from the environment.",
            [f"{s.config}:400"],
            now,
            age,
            anchor=False,
        )
    return _memory(
        f"adv-{k}",
        Origin.ADVERSARIAL,
        Truth.UNSUPPORTED,
        "mal",
        f"{s.name} synchronization",
        f"{s.name} must match between the service config and lib/util1.py.",
        ["lib/util1.py:1"],
        now,
        age,
        claim=Claim(points_to=("lib/util1.py",)),
    )
