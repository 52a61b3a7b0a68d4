"""Generated populations: many repositories with their tasks and memory pools, from a seed.

A scenario file with a ``generator:`` block stands for N synthetic repositories. Each keeps
settings (invariants) in three places that must agree: a Python service config, a TypeScript
module and a Markdown table. Some places name a setting differently from the config (an
*alias*: ``maxAttempts3`` for ``RETRY_LIMIT_3``, "Upload attempts" in the docs), with the
share ``aliases``: an agent that searches for the setting's name does not find those places,
and only a memory that cites them (or a lucky reader) does. So what an agent finds without
memory depends on the repository. A scripted history moves lines, renames files, changes
values and leaves an abandoned branch; a pool of memories of known truth follows (a share
``coverage`` of the settings has a memory of where it is kept); tasks on all three surfaces
ask to raise a setting, to review a change of one, or to say what one is.

Truth labels follow from the construction, and the world builder checks them again against
the built repository. The same seed gives the same population.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
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
from memstore.model import Kind, Surface

__all__ = ["generate"]

_WORDS = ["retry", "batch", "quota", "cache", "page", "upload", "session", "export", "report", "queue"]
_ALIASES = ["max_attempts", "burst_size", "daily_cap", "keep_items", "per_page", "chunk_count", "idle_limit"]
_LABELS = ["Attempts allowed", "Burst allowed", "Daily allowance", "Items kept", "Rows shown", "Chunks sent"]


_CHECK_COMMAND = ("{python}", "tests/check_limits.py")  # the repository's own test, run on the merge


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass
class _Setting:
    """One setting and the three places it is kept."""

    name: str  # RETRY_LIMIT_3, as the service config names it
    value: int
    web_name: str  # the same name, or an alias
    doc_label: str  # the same name, or a label in words
    config: str
    web: str

    @property
    def web_aliased(self) -> bool:
        return self.web_name != self.name

    @property
    def doc_aliased(self) -> bool:
        return self.doc_label != self.name


@dataclass
class _Repo:
    """The evolving state of one synthetic repository while its history is written."""

    rng: random.Random
    index: int
    settings: list[_Setting] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"gen/repo{self.index:04d}"

    def line_of(self, path: str, needle: str) -> int:
        return next(i for i, text in enumerate(self.files[path], 1) if needle in text)

    def places(self, k: int) -> list[tuple[str, int]]:
        """(path, line) of the three places setting ``k`` is kept, now."""
        s = self.settings[k]
        return [
            (s.config, self.line_of(s.config, f"{s.name} = ")),
            (s.web, self.line_of(s.web, f" {s.web_name} = ")),
            ("docs/limits.md", self.line_of("docs/limits.md", f"| {s.doc_label} |")),
        ]

    def patterns(self, k: int) -> list[Location]:
        """Where the check reads each place's value."""
        s = self.settings[k]
        return [
            Location(s.config, rf"\b{s.name} = (\d+)"),
            Location(s.web, rf"\b{s.web_name} = (\d+);"),
            Location("docs/limits.md", rf"\| {re.escape(s.doc_label)} \| (\d+) \|"),
        ]

    def set_value(self, k: int, new: int) -> tuple[Edit, ...]:
        """Change setting ``k`` everywhere it is kept; the edits that do it."""
        edits = []
        for path, line in self.places(k):
            old_text = self.files[path][line - 1]
            new_text = _with_value(old_text, self.settings[k].value, new)
            edits.append(Edit("replace", {"path": path, "old": old_text, "new": new_text}))
            self.files[path][line - 1] = new_text
        self.settings[k].value = new
        return tuple(edits)

    def text(self) -> dict[str, bytes]:
        return {p: ("\n".join(lines) + "\n").encode() for p, lines in self.files.items()}


def _with_value(line: str, old: int, new: int) -> str:
    """``line`` with its value changed: the last occurrence of ``old``, which follows the name
    (``QUEUE_LIMIT_19 = 19`` must not become ``QUEUE_LIMIT_44 = 44``)."""
    head, found, tail = line.rpartition(str(old))
    return f"{head}{new}{tail}" if found else line


def _new_repo(rng: random.Random, index: int, p: dict[str, Any]) -> _Repo:
    repo = _Repo(rng, index)
    aliases = p.get("aliases", 0.3)
    for k in range(p.get("invariants_per_repository", 4)):
        name = f"{_WORDS[k % len(_WORDS)].upper()}_LIMIT_{k}"
        web_name = f"{_camel(_ALIASES[rng.randrange(len(_ALIASES))])}{k}" if rng.random() < aliases else name
        doc_label = f"{_LABELS[rng.randrange(len(_LABELS))]} (service {k})" if rng.random() < aliases else name
        repo.settings.append(
            _Setting(
                name, rng.randrange(10, 900), web_name, doc_label, f"services/svc{k}/config.py", f"web/src/limits{k}.ts"
            )
        )
    for k, s in enumerate(repo.settings):
        repo.files[s.config] = [f'"""Settings of service {k}."""', "", f"{s.name} = {s.value}", ""]
        repo.files[s.web] = [
            f"// Limits the web client enforces for service {k}.",
            f"export const {s.web_name} = {s.value};",
        ]
    repo.files["docs/limits.md"] = ["# Limits", "", "| name | value |", "|---|---|"] + [
        f"| {s.doc_label} | {s.value} |" for s in repo.settings
    ]
    for f in range(3):
        repo.files[f"lib/util{f}.py"] = [f"def helper_{f}(x):", "    return x", ""]
    repo.files["tests/check_limits.py"] = _check_script(repo.settings)
    return repo


def _check_script(settings: list[_Setting]) -> list[str]:
    """The repository's own test: a standard-library script that fails when a setting differs
    between the service config, the web client and the docs (the merge check runs it)."""
    table = [f"    ({k}, {s.name!r}, {s.web_name!r}, {s.doc_label!r})," for k, s in enumerate(settings)]
    return [
        '"""Every limit must be the same in the service config, the web client and the docs."""',
        "",
        "import pathlib",
        "import re",
        "import sys",
        "",
        "ROOT = pathlib.Path(__file__).resolve().parent.parent",
        "LIMITS = [  # (service, config name, web client name, docs label)",
        *table,
        "]",
        "",
        "",
        "def value(paths, pattern):",
        "    for path in paths:",
        "        if (ROOT / path).is_file():",
        "            found = re.search(pattern, (ROOT / path).read_text(), re.MULTILINE)",
        "            return found.group(1) if found else None",
        "    return None",
        "",
        "",
        "def main():",
        "    failures = []",
        "    for k, name, web_name, label in LIMITS:",
        "        kept = {",
        '            "config": value([f"services/svc{k}/config.py"], rf"^{name} = (\\d+)$"),',
        '            "web": value([f"web/src/limits{k}.ts", f"web/src/limits/{k}.ts"], rf"\\b{web_name} = (\\d+);"),',
        '            "docs": value(["docs/limits.md"], rf"^\\| {re.escape(label)} \\| (\\d+) \\|$"),',
        "        }",
        "        if None in kept.values() or len(set(kept.values())) > 1:",
        '            failures.append(f"{name}: {kept}")',
        '    print("\\n".join(failures) or f"{len(LIMITS)} limits agree")',
        "    return 1 if failures else 0",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(main())",
        "",
    ]


@dataclass
class _Learned:
    """What someone learned about setting ``k`` at a commit: where it was kept and its value."""

    label: str
    places: list[tuple[str, int]]
    value: int


def _history(repo: _Repo, p: dict[str, Any]) -> tuple[list[Step], dict[int, _Learned], dict[int, tuple[str, int]]]:
    """The scripted history; what was learned of each setting and when; the abandoned branch's values."""
    rng, count = repo.rng, len(repo.settings)
    learned = {k: _Learned("initial", repo.places(k), repo.settings[k].value) for k in range(count)}
    history: list[Step] = []
    for c in range(p.get("history_length", 10)):
        k, roll, label = rng.randrange(count), rng.random(), f"h{c}"
        s = repo.settings[k]
        edits: tuple[Edit, ...]
        if roll < 0.45:  # lines move
            path = rng.choice([s.config, "docs/limits.md"])
            repo.files[path][1:1] = [f"# note {c}"]
            edits = (Edit("insert", {"path": path, "line": 2, "text": f"# note {c}\n"}),)
        elif roll < 0.6 and "/limits/" not in s.web:  # a file is renamed
            new = s.web.replace("/limits", "/limits/")
            edits = (Edit("rename", {"from": s.web, "to": new}),)
            repo.files[new] = repo.files.pop(s.web)
            s.web = new
        elif roll < 0.85:  # the value changes everywhere
            edits = repo.set_value(k, s.value + rng.randrange(1, 50))
        else:  # unrelated work
            f = rng.randrange(3)
            path = f"lib/util{f}.py"
            repo.files[path].append(f"# touched {c}")
            edits = (Edit("insert", {"path": path, "line": len(repo.files[path]), "text": f"# touched {c}\n"}),)
        history.append(Step("commit", {"commit": f"change {c}", "label": label}, edits))
        if rng.random() < 0.3:  # someone learns the setting again, here
            learned[k] = _Learned(label, repo.places(k), s.value)
    spike: dict[int, tuple[str, int]] = {}  # an abandoned branch changes a few values and is never merged
    history.append(Step("branch", {"branch": "spike"}))
    for k in range(min(2, count)):
        s = repo.settings[k]
        path, line = s.config, repo.line_of(s.config, f"{s.name} = ")
        text = repo.files[path][line - 1]
        spike[k] = (f"spike{k}", s.value + 1000)
        new_text = _with_value(text, s.value, s.value + 1000)
        history.append(
            Step(
                "commit",
                {"commit": f"try new limit {k}", "label": f"spike{k}"},
                (Edit("replace", {"path": path, "old": text, "new": new_text}),),
            )
        )
    history.append(Step("switch", {"switch": "main"}))
    return history, learned, spike


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
    repo: _Repo, p: dict[str, Any], learned: dict[int, _Learned], spike: dict[int, tuple[str, int]]
) -> list[SeedMemory]:
    rng = repo.rng
    stale, adversarial, abandoned = p.get("stale", 0.2), p.get("adversarial", 0.1), p.get("abandoned", 0.1)
    coverage = p.get("coverage", 1.0)
    memories: list[SeedMemory] = []
    for k, s in enumerate(repo.settings):
        was, now = learned[k], repo.places(k)
        truth_at = Location(s.config, rf"\b{s.name} = (\d+)")
        if rng.random() < coverage:
            memories.append(
                _memory(
                    f"sync-{k}",
                    Origin.GENUINE,
                    Truth.MOVED if (was.places, was.value) != (now, s.value) else Truth.VALID,
                    "owner",
                    f"{s.name} synchronization",
                    f"{s.name} must match between the service config, the web client and the docs.",
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
    return memories


def _adversarial(rng: random.Random, k: int, s: _Setting, repo: _Repo, truth_at: Location, now: str) -> SeedMemory:
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


def _tasks(repo: _Repo, p: dict[str, Any], history: list[Step]) -> list[Task]:
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
                    check=Check(contains=((s.config, f"{s.name} = {raised}"),), command=_CHECK_COMMAND),
                )
            )
    return tasks


def _review(repo: _Repo, t: int, k: int, history: list[Step]) -> Task:
    """A pull request that changes setting ``k`` in the service config alone."""
    s = repo.settings[k]
    branch = f"pr-{t}"
    path, line = repo.places(k)[0]
    text = repo.files[path][line - 1]
    history += [
        Step("branch", {"branch": branch, "from": "main"}),
        Step(
            "commit",
            {"commit": f"Raise {s.name}", "label": f"pr{t}"},
            (Edit("replace", {"path": path, "old": text, "new": _with_value(text, s.value, s.value + 5)}),),
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
        findings=(Finding(s.web, f"sync-{k}"), Finding("docs/limits.md", f"sync-{k}")),
    )


def _one(population: str, index: int, p: dict[str, Any]) -> Scenario:
    rng = random.Random(f"{p['seed']}:{index}")
    repo = _new_repo(rng, index, p)
    initial = repo.text()
    history, learned, spike = _history(repo, p)
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
    return [replace(_one(name, i, params), source=source, population=population) for i in range(params["repositories"])]
