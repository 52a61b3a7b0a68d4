"""Generated populations: many repositories with their tasks and memory pools, from a seed.

A scenario file with a ``generator:`` block stands for N synthetic repositories. Each keeps
settings (invariants) in up to three places that must agree: a Python service config and,
with the share ``copies`` each, a TypeScript module and a Markdown table
(`memstore.harness.scenarios.synthetic`). Some copies name a setting otherwise (an *alias*:
``maxAttempts3`` for ``RETRY_LIMIT_3``, share ``aliases``). The repository's own test names
an alias beside the setting with the share ``discoverable``, and a careful agent that reads
it finds the copy; an alias it does not name has nothing in the working copy that ties it to
the setting (its value is shared with unrelated *decoys*, share ``decoys``), and only a memory
that cites it finds it. Each task records its stratum (``discoverable`` when every copy can be
found from the repository, ``not discoverable`` otherwise), so that memory's effect is
reported where it comes from. A scripted history moves lines, renames files, changes values
and leaves an abandoned branch; a pool of memories of known truth follows (a share
``coverage`` of the settings has a memory of where it is kept; a share ``hard`` has one more
of a kind a verifier that compares cited lines gets wrong: a claim the line does not make
behind a literal it holds, another setting's name behind the right value, a true fact that
mentions a number the line does not hold), and in a share ``flood_share`` of the repositories
``flood`` newer memories of unrelated code bury it (so that how a store picks what to hand out
decides outcomes); tasks on all three surfaces ask to raise a setting, to review a change of
one, or to say what one is.

Truth labels follow from the construction (never from `memstore.verify`; where the reference
verifier disagrees, that is its measured error). The same seed gives the same population.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

from memstore.access import Access
from memstore.harness.scenarios.model import (
    Check,
    Claim,
    Edit,
    Finding,
    Intent,
    IntentAction,
    Location,
    Origin,
    PullRequestSpec,
    Scenario,
    SeedMemory,
    Step,
    Task,
    Truth,
)
from memstore.harness.scenarios.synthetic import Learned, Repo, Setting, history_of, new_repo, with_value
from memstore.model import Kind, Surface

__all__ = ["DISCOVERABLE", "HIDDEN", "generate"]

DISCOVERABLE, HIDDEN = "discoverable", "not discoverable"  # a task's stratum (grading data)
_CHECK_COMMAND = ("{python}", "tests/check_limits.py")  # the repository's own test, run on the merge


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


def _memories(
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
        if kind == 0:
            found.append(
                _memory(
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
            )
        elif kind == 1:
            other = repo.settings[rng.choice(others)]
            found.append(
                _memory(
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
            )
        else:
            found.append(
                _memory(
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
            )
    return found


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


def _tasks(repo: Repo, p: dict[str, Any], history: list[Step]) -> list[Task]:
    rng, count = repo.rng, len(repo.settings)
    review_share, cli_share = p.get("review_share", 0.2), p.get("cli_share", 0.2)
    kinds = []
    for _ in range(p["tasks_per_repository"]):
        roll = rng.random()
        kinds.append("review" if roll < review_share else "cli" if roll < review_share + cli_share else "coding")
    order = list(range(count))
    rng.shuffle(order)
    coding = iter(order[: kinds.count("coding")])
    # More coding tasks than settings: ask instead (a raised setting is not asked about again).
    kinds = [kind if kind != "coding" or n < len(order) else "cli" for n, kind in enumerate(kinds)]
    others = order[kinds.count("coding") :] or order
    tasks = []
    for t, kind in enumerate(kinds):
        if kind == "review":
            tasks.append(_review(repo, t, rng.choice(others), history))
        elif kind == "cli":
            k = rng.choice(others)
            name = repo.settings[k].name
            tasks.append(
                Task(
                    f"ask-{t}",
                    Surface.CLI,
                    "dev",
                    f"What is {name}?",
                    after=timedelta(minutes=30),
                    intent=Intent(IntentAction.ASK, name),
                    question=f"What is {name} set to?",
                    needs=(f"value-{k}",),
                    answer=str(repo.settings[k].value),
                    stratum=DISCOVERABLE,  # the question names the setting, whose config a search finds
                )
            )
        else:
            k = next(coding)
            s = repo.settings[k]
            raised = s.value + 100
            tasks.append(
                Task(
                    f"raise-{t}",
                    Surface.CODING_AGENT,
                    "dev",
                    f"Raise {s.name} to {raised}.",
                    after=timedelta(hours=2),
                    intent=Intent(IntentAction.SET, s.name, value=str(raised)),
                    needs=(f"sync-{k}",),
                    check=Check(
                        equal=tuple(repo.patterns(k)) if len(repo.places(k)) > 1 else (),
                        contains=((s.config, f"{s.name} = {raised}"), *repo.decoys.get(k, ())),
                        command=_CHECK_COMMAND,
                    ),
                    stratum=_stratum(s),
                )
            )
    return tasks


def _stratum(s: Setting) -> str:
    return DISCOVERABLE if s.discoverable else HIDDEN


def _review(repo: Repo, t: int, k: int, history: list[Step]) -> Task:
    """A pull request that changes setting ``k`` in the service config alone."""
    s = repo.settings[k]
    branch = f"pr-{t}"
    (path, line), *copies = repo.places(k)
    text = repo.files[path][line - 1]
    history += [
        Step("branch", {"branch": branch, "from": "main"}),
        Step(
            "commit",
            {"commit": f"Raise {s.name}", "label": f"pr{t}"},
            (Edit("replace", {"path": path, "old": text, "new": with_value(text, s.value, s.value + 5)}),),
        ),
        Step("switch", {"switch": "main"}),
    ]
    return Task(
        f"review-{t}",
        Surface.CODE_REVIEW,
        "rev",
        f"Review pull request {t}.",
        after=timedelta(hours=1),
        pull_request=PullRequestSpec(branch, "main", f"Raise {s.name}", f"Raises {s.name} in service {k}."),
        needs=(f"sync-{k}",),
        findings=tuple(Finding(copy, f"sync-{k}") for copy, _ in copies),
        stratum=_stratum(s),
    )


def _scenario(population: str, index: int, p: dict[str, Any]) -> Scenario:
    rng = random.Random(f"{p['seed']}:{index}")
    repo = new_repo(rng, index, p)
    initial = repo.text()
    history, learned, spike = history_of(repo, p)
    head = f"h{p.get('history_length', 10) - 1}" if p.get("history_length", 10) else "initial"
    memories = _memories(repo, {**p, "_head": head}, learned, spike)
    tasks = _tasks(repo, p, history)
    memories = [replace(m, repo=repo.name) for m in memories]
    users = {
        "owner": {repo.name: Access.ADMIN},
        "dev": {repo.name: Access.WRITE},
        "rev": {repo.name: Access.READ},
        "mal": {repo.name: Access.WRITE},
    }
    return Scenario(
        name=f"{population}-{index:04d}",
        description=f"Generated repository {index} of {population}.",
        fixture="",
        repo=repo.name,
        users=users,
        history=tuple(history),
        memories=tuple(memories),
        tasks=tuple(tasks),
        tags=("generated",),
        files=initial,
    )


def generate(name: str, description: str, params: dict[str, Any], *, source: str = "") -> list[Scenario]:
    """The population ``params`` describes (see scenarios/README.md, "Generated populations")."""
    population = {
        "name": name,
        "description": " ".join(description.split()),
        "parameters": dict(sorted(params.items())),
    }
    return [
        replace(_scenario(name, i, params), source=source, population=population) for i in range(params["repositories"])
    ]
