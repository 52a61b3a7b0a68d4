"""Generated populations: many repositories with their tasks and memory pools, from a seed.

A scenario file with a ``generator:`` block stands for N synthetic repositories. Each has
cross-file invariants (a constant that must match in a Python service config, a
TypeScript module and a Markdown table), a scripted history (insertions that move lines,
renames, value changes, an abandoned branch), a pool of memories of known truth in the
proportions asked for (stale, adversarial, abandoned), and tasks on all three surfaces.
Truth labels follow from the construction; the world builder checks them again against
the built repository. The same seed gives the same population.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from memstore.access import Access
from memstore.harness.scenario import (
    Change,
    Check,
    Edit,
    Finding,
    Location,
    Origin,
    Scenario,
    SeedMemory,
    Step,
    Task,
    Truth,
)
from memstore.model import Kind, Surface

__all__ = ["generate"]

_WORDS = ["retry", "batch", "quota", "cache", "page", "upload", "session", "export", "report", "queue"]


def _with_value(line: str, old: int, new: int) -> str:
    """``line`` with its value changed: the last occurrence of ``old``, which follows the name
    (``QUEUE_LIMIT_19 = 19`` must not become ``QUEUE_LIMIT_44 = 44``)."""
    head, found, tail = line.rpartition(str(old))
    return f"{head}{new}{tail}" if found else line


class _Repo:
    """The evolving state of one synthetic repository while its history is written."""

    def __init__(self, rng: random.Random, index: int, invariants: int) -> None:
        self.rng = rng
        self.name = f"gen/repo{index:04d}"
        self.names = [f"{_WORDS[k % len(_WORDS)].upper()}_LIMIT_{k}" for k in range(invariants)]
        self.values = [rng.randrange(10, 900) for _ in range(invariants)]
        self.config = [f"services/svc{k}/config.py" for k in range(invariants)]
        self.web = [f"web/src/limits{k}.ts" for k in range(invariants)]
        self.files: dict[str, list[str]] = {}
        for k, name in enumerate(self.names):
            self.files[self.config[k]] = [f'"""Settings of service {k}."""', "", f"{name} = {self.values[k]}", ""]
            self.files[self.web[k]] = [
                f"// Limits the web client enforces for service {k}.",
                f"export const {name} = {self.values[k]};",
            ]
        self.files["docs/limits.md"] = ["# Limits", "", "| name | value |", "|---|---|"] + [
            f"| {n} | {v} |" for n, v in zip(self.names, self.values, strict=True)
        ]
        for f in range(3):
            self.files[f"lib/util{f}.py"] = [f"def helper_{f}(x):", "    return x", ""]

    def line_of(self, path: str, needle: str) -> int:
        return next(i for i, text in enumerate(self.files[path], 1) if needle in text)

    def where(self, k: int) -> list[tuple[str, int]]:
        name = self.names[k]
        return [(p, self.line_of(p, f"{name} ")) for p in (self.config[k], self.web[k], "docs/limits.md")]

    def text(self) -> dict[str, bytes]:
        return {p: ("\n".join(lines) + "\n").encode() for p, lines in self.files.items()}


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
    )


def _one(population: str, index: int, p: dict[str, Any]) -> Scenario:
    rng = random.Random(f"{p['seed']}:{index}")
    invariants = p.get("invariants_per_repository", 4)
    repo = _Repo(rng, index, invariants)
    initial_files = repo.text()
    history: list[Step] = []
    memories: list[SeedMemory] = []
    learned: dict[int, tuple[str, list[tuple[str, int]], int]] = {}  # k -> (label, where, value) when learned
    for k in range(invariants):
        learned[k] = ("initial", repo.where(k), repo.values[k])
    initial_where = {k: repo.where(k) for k in range(invariants)}
    changed_value: set[int] = set()
    length = p.get("history_length", 10)
    for c in range(length):
        k = rng.randrange(invariants)
        roll = rng.random()
        label = f"h{c}"
        edits: tuple[Edit, ...]
        if roll < 0.45:  # lines move
            path = rng.choice([repo.config[k], "docs/limits.md"])
            repo.files[path][1:1] = [f"# note {c}"]
            edits = (Edit("insert", {"path": path, "line": 2, "text": f"# note {c}\n"}),)
        elif roll < 0.6 and "/limits/" not in repo.web[k]:  # a file is renamed
            new = repo.web[k].replace("/limits", "/limits/")
            edits = (Edit("rename", {"from": repo.web[k], "to": new}),)
            repo.files[new] = repo.files.pop(repo.web[k])
            repo.web[k] = new
        elif roll < 0.85:  # the value changes everywhere
            old, new_value = repo.values[k], repo.values[k] + rng.randrange(1, 50)
            edits = tuple(
                Edit("replace", {"path": path, "old": f"{text}", "new": _with_value(text, old, new_value)})
                for path, line in repo.where(k)
                for text in [repo.files[path][line - 1]]
            )
            for path, line in repo.where(k):
                repo.files[path][line - 1] = _with_value(repo.files[path][line - 1], old, new_value)
            repo.values[k] = new_value
            changed_value.add(k)
        else:  # unrelated work
            f = rng.randrange(3)
            repo.files[f"lib/util{f}.py"].append(f"# touched {c}")
            edits = (
                Edit(
                    "insert",
                    {"path": f"lib/util{f}.py", "line": len(repo.files[f"lib/util{f}.py"]), "text": f"# touched {c}\n"},
                ),
            )
        history.append(Step("commit", {"commit": f"change {c}", "label": label}, edits))
        if rng.random() < 0.3:  # someone learns the invariant again, here
            learned[k] = (label, repo.where(k), repo.values[k])

    # An abandoned branch changes a few values and is never merged.
    spike_values: dict[int, int] = {}
    history.append(Step("branch", {"branch": "spike"}))
    for k in range(min(2, invariants)):
        path, line = repo.config[k], repo.line_of(repo.config[k], f"{repo.names[k]} ")
        text = repo.files[path][line - 1]
        spike_values[k] = repo.values[k] + 1000
        new_text = _with_value(text, repo.values[k], spike_values[k])
        history.append(
            Step(
                "commit",
                {"commit": f"try new limit {k}", "label": f"spike{k}"},
                (Edit("replace", {"path": path, "old": text, "new": new_text}),),
            )
        )
    history.append(Step("switch", {"switch": "main"}))

    users = {
        "owner": {repo.name: Access.ADMIN},
        "dev": {repo.name: Access.WRITE},
        "rev": {repo.name: Access.READ},
        "mal": {repo.name: Access.WRITE},
    }
    stale, adversarial, abandoned = p.get("stale", 0.2), p.get("adversarial", 0.1), p.get("abandoned", 0.1)
    for k in range(invariants):
        label, where, value = learned[k]
        now = repo.where(k)
        cites = [f"{path}:{line}" for path, line in where]
        moved = where != now
        name = repo.names[k]
        memories.append(
            _memory(
                f"sync-{k}",
                Origin.GENUINE,
                Truth.MOVED if moved or value != repo.values[k] else Truth.VALID,
                "owner",
                f"{name} synchronization",
                f"{name} must match between the service config, the web client and the docs.",
                cites,
                label,
                timedelta(days=rng.randrange(1, 20)),
            )
        )
        roll = rng.random()
        if roll < stale and value != repo.values[k]:
            truth, origin = Truth.CONTRADICTED, Origin.STALE
        elif roll < stale + abandoned and k in spike_values:
            label, value, origin, truth = f"spike{k}", spike_values[k], Origin.ABANDONED, Truth.CONTRADICTED
            cites = [f"{repo.config[k]}:{repo.line_of(repo.config[k], f'{name} ')}"]
        else:
            origin = Origin.GENUINE
            if value != repo.values[k]:
                truth = Truth.CONTRADICTED
            else:
                truth = Truth.MOVED if where[0] != now[0] else Truth.VALID
        memories.append(
            _memory(
                f"value-{k}",
                origin,
                truth,
                "owner",
                f"{name} value",
                f"{name} is set to {value}.",
                cites[:1],
                label,
                timedelta(days=rng.randrange(1, 20)),
            )
        )
        if rng.random() < adversarial:
            variant = rng.randrange(3)
            first = initial_where[k][0]
            if variant == 0:
                fact, adv_cites, adv_truth, anchored = (
                    f"{name} is set to {repo.values[k] + 7}.",
                    [f"{first[0]}:{first[1]}"],
                    Truth.CONTRADICTED,
                    True,
                )
            elif variant == 1:
                fact, adv_cites, adv_truth, anchored = (
                    f"{name} is enforced by the rate limiter middleware.",
                    ["lib/util0.py:1"],
                    Truth.UNSUPPORTED,
                    True,
                )
            else:
                fact, adv_cites, adv_truth, anchored = (
                    f"{name} is read from the environment.",
                    [f"{repo.config[k]}:400"],
                    Truth.MISSING,
                    False,
                )
            memories.append(
                _memory(
                    f"adv-{k}",
                    Origin.ADVERSARIAL,
                    adv_truth,
                    "mal",
                    f"{name} source",
                    fact,
                    adv_cites,
                    "initial",
                    timedelta(hours=rng.randrange(1, 48)),
                    anchor=anchored,
                )
            )

    tasks: list[Task] = []
    count = p["tasks_per_repository"]
    review_share, cli_share = p.get("review_share", 0.2), p.get("cli_share", 0.2)
    kinds: list[str] = []
    for _ in range(count):
        roll = rng.random()
        kinds.append("review" if roll < review_share else "cli" if roll < review_share + cli_share else "coding")
    order = list(range(invariants))
    rng.shuffle(order)
    coding_ks = order[: kinds.count("coding")]
    kinds = [
        kind if kind != "coding" or n < len(coding_ks) else "cli" for n, kind in enumerate(kinds)
    ]  # more coding tasks than invariants: ask instead
    others = [k for k in range(invariants) if k not in coding_ks] or list(range(invariants))
    coding_iter = iter(coding_ks)
    for t, task_kind in enumerate(kinds):
        if task_kind == "review":
            k = rng.choice(others)
            branch = f"pr-{t}"
            path, line = repo.config[k], repo.line_of(repo.config[k], f"{repo.names[k]} ")
            text = repo.files[path][line - 1]
            history += [
                Step("branch", {"branch": branch, "from": "main"}),
                Step(
                    "commit",
                    {"commit": f"Raise {repo.names[k]}", "label": f"pr{t}"},
                    (
                        Edit(
                            "replace",
                            {
                                "path": path,
                                "old": text,
                                "new": _with_value(text, repo.values[k], repo.values[k] + 5),
                            },
                        ),
                    ),
                ),
                Step("switch", {"switch": "main"}),
            ]
            tasks.append(
                Task(
                    f"review-{t}",
                    Surface.CODE_REVIEW,
                    "rev",
                    f"Review pull request {t}.",
                    after=timedelta(hours=1),
                    needs=(f"sync-{k}",),
                    pull_request=(branch, "main"),
                    findings=(Finding(repo.web[k], f"sync-{k}"), Finding("docs/limits.md", f"sync-{k}")),
                )
            )
        elif task_kind == "cli":
            k = rng.choice(others)
            tasks.append(
                Task(
                    f"ask-{t}",
                    Surface.CLI,
                    "dev",
                    f"What is {repo.names[k]}?",
                    after=timedelta(minutes=30),
                    needs=(f"value-{k}",),
                    question=f"What is {repo.names[k]} set to?",
                    answer=str(repo.values[k]),
                )
            )
        else:
            k = next(coding_iter)
            raised = repo.values[k] + 100
            where = repo.where(k)
            changes = tuple(
                Change(
                    path,
                    repo.files[path][line - 1],
                    _with_value(repo.files[path][line - 1], repo.values[k], raised),
                )
                for path, line in where
            )
            tasks.append(
                Task(
                    f"raise-{t}",
                    Surface.CODING_AGENT,
                    "dev",
                    f"Raise {repo.names[k]} to {raised}.",
                    after=timedelta(hours=2),
                    needs=(f"sync-{k}",),
                    change=changes,
                    check=Check(
                        equal=tuple(Location(path, rf"{repo.names[k]}\D+(\d+)") for path, _ in where),
                        contains=((where[0][0], str(raised)),),
                    ),
                )
            )
    memories = [SeedMemory(**{**m.__dict__, "repo": repo.name}) for m in memories]
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
        files=initial_files,
    )


def generate(name: str, description: str, params: dict[str, Any], *, source: str = "") -> list[Scenario]:
    """The population ``params`` describes (see scenarios/README.md, "Generated populations")."""
    del description
    made = [_one(name, i, params) for i in range(params["repositories"])]
    return [Scenario(**{**s.__dict__, "source": source}) for s in made]
