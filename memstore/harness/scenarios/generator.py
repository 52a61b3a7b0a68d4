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
``coverage`` of the settings has a memory of where it is kept; each fact is worded in one of
the ways agents word it, `memstore.harness.scenarios.wordings`), and in a share ``flood_share``
of the repositories
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
from memstore.harness.scenarios.generated_memories import memory_pool
from memstore.harness.scenarios.scenario import (
    Check,
    Edit,
    Finding,
    Intent,
    IntentAction,
    PullRequestSpec,
    Scenario,
    Step,
    Task,
)
from memstore.harness.scenarios.synthetic import Repo, Setting, history_of, new_repo, with_value
from memstore.model import Surface

__all__ = ["DISCOVERABLE", "HIDDEN", "generate"]

DISCOVERABLE, HIDDEN = "discoverable", "not discoverable"  # a task's stratum (grading data)
_CHECK_COMMAND = ("{python}", "tests/check_limits.py")  # the repository's own test, run on the merge


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
    memories = memory_pool(repo, {**p, "_head": head}, learned, spike)
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
