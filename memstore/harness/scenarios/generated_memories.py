"""A generated repository's pool of memories of known truth (see `memstore.harness.scenarios.generator`):
where each covered setting is kept, its value (current, stale or from an abandoned branch),
adversarial variants, and the ``flood`` of newer memories of unrelated code. Truth labels follow
from the construction; each fact is worded in one of the ways agents word it
(`memstore.harness.scenarios.wordings`), so a verifier's errors on them come from the wording,
not from memories planted for it to get wrong."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from memstore.harness.scenarios.scenario import (
    Claim,
    Location,
    Origin,
    SeedMemory,
    Truth,
)
from memstore.harness.scenarios.synthetic import Learned, Repo, Setting
from memstore.harness.scenarios.wordings import say, words_of
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


def _say(kind: str, repo: Repo, key: str, s: Setting, **fields: str) -> str:
    """A fact about setting ``s`` in one of the wordings of ``kind``, chosen by the memory's key."""
    return say(kind, f"{repo.index}:{key}", {"name": s.name, "words": words_of(s.name), **fields})


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
                    _say(
                        "kept together" if copies else "kept alone", repo, f"sync-{k}", s, copies=" and ".join(copies)
                    ),
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
                _say("setting", repo, f"value-{k}", s, value=str(value)),
                cites,
                label,
                timedelta(days=rng.randrange(1, 20)),
                claim=Claim(states=str(value), at=truth_at),
            )
        )
        if rng.random() < adversarial:
            memories.append(_adversarial(rng, k, s, repo, truth_at, p.get("_head", "initial")))
    return memories + _flood(repo, p)


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
                say("helper note", f"{repo.index}:note-{i}", {"name": f"helper_{f}", "note": f"note {i}"}),
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
            _say("setting", repo, f"adv-{k}", s, value=str(wrong)),
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
            _say("enforced elsewhere", repo, f"adv-{k}", s),
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
            _say("read from the environment", repo, f"adv-{k}", s),
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
        _say("kept together", repo, f"adv-{k}", s, copies="lib/util1.py"),
        ["lib/util1.py:1"],
        now,
        age,
        claim=Claim(points_to=("lib/util1.py",)),
    )
