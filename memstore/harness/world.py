"""Worlds: a scenario built into a real git repository and a seeded store.

A `Template` is built once per scenario (fixture + scripted history through git
fast-import, memories anchored at the commits they were learned at, truth labels
checked against the built repository). Each trial gets its own `World` from it: a copy
of the repository, a new store seeded with the memories at their ages, a fake clock,
and the users' access levels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from memstore.access import AccessPolicy, Actor
from memstore.clock import Clock, FakeClock
from memstore.errors import BuildError, MemstoreError, ValidationError
from memstore.harness.scenarios import (
    Edit,
    Positions,
    Problem,
    Reporter,
    Scenario,
    SeedMemory,
    Step,
    Truth,
    fixture_files,
    load_yaml,
    read_file,
    read_value,
    same_value,
)
from memstore.harness.trees import copy_tree, fingerprint, make_read_only, scratch_folder
from memstore.model import Citation, Memory, MemoryDraft
from memstore.store import MemoryStore
from memstore.verify import GitCodebase, GitRepository, HistoryBuilder, Hunk, anchor, map_line

__all__ = [
    "StoreFactory",
    "Template",
    "World",
    "build_problems",
    "build_template",
    "check_labels",
    "fixture_files",
    "validate_file",
]

StoreFactory = Callable[[AccessPolicy, Clock], MemoryStore]
FieldPath = tuple[str | int, ...]


def _apply(builder: HistoryBuilder, edit: Edit) -> None:
    a = edit.args
    if edit.op == "write":
        builder.write(a["path"], a["text"])
    elif edit.op == "insert":
        builder.insert(a["path"], a["line"], a["text"])
    elif edit.op == "delete":
        first, _, last = str(a["lines"]).partition("-")
        builder.delete_lines(a["path"], int(first), int(last or first))
    elif edit.op == "replace":
        builder.replace(a["path"], a["old"], a["new"], a.get("count", 1))
    elif edit.op == "rename":
        builder.rename(a["from"], a["to"])
    elif edit.op == "remove":
        builder.remove(a["path"])
    else:  # pragma: no cover - the schema allows no other
        raise ValidationError("op", f"unknown edit {edit.op!r}")


def _play(builder: HistoryBuilder, index: int, step: Step) -> None:
    a = step.args
    try:
        if step.op == "commit":
            if "branch" in a and a["branch"] != builder.branch:
                builder.switch(a["branch"])
            for j, edit in enumerate(step.edits):
                try:
                    _apply(builder, edit)
                except ValidationError as exc:
                    raise BuildError(("history", index, "edits", j), str(exc)) from exc
            author = a.get("author")
            who = (author, f"{author}@example.com") if author else None
            builder.commit(a["commit"], label=a.get("label"), author=who)
        elif step.op == "branch":
            builder.branch_from(a["branch"], at=a.get("from"))
        elif step.op == "switch":
            builder.switch(a["switch"])
        elif step.op == "merge":
            builder.merge(a["merge"], a.get("message"), label=a.get("label"))
        elif step.op == "revert":
            builder.revert(a["revert"], a.get("message"), label=a.get("label"))
        elif step.op == "tag":
            builder.tag(a["tag"], a.get("at"))
    except ValidationError as exc:
        raise BuildError(("history", index), str(exc)) from exc
    except KeyError as exc:
        raise BuildError(("history", index), f"unknown commit label or branch {exc.args[0]!r}") from exc


@dataclass(frozen=True)
class Seed:
    """A seeded memory ready to store: its spec, its draft (citations anchored), when it is stored."""

    spec: SeedMemory
    draft: MemoryDraft
    stored_at: datetime


@dataclass
class Template:
    """A scenario built once: the repository, its commits, the anchored memories.

    A template is shared by every trial of its scenario in a process, so once built it is
    sealed (`seal`): made read-only, and fingerprinted so that a change made behind the
    harness's back (by an agent with write access to it) is noticed (`intact`) before another
    trial copies it.
    """

    scenario: Scenario
    path: Path
    commits: dict[str, str]
    evaluate_at: str  # commit id
    seeds: list[Seed] = field(default_factory=list)
    fingerprint: str = ""
    _true_lines: dict[str, list[tuple[str, int] | None]] | None = field(default=None, repr=False, compare=False)
    _repo: GitRepository | None = field(default=None, repr=False, compare=False)

    @property
    def repo(self) -> GitRepository:
        """The template's repository (a world's, its copy, starts from what this one read)."""
        if self._repo is None:
            self._repo = GitRepository(self.path)
        return self._repo

    def codebase(self, ref: str | None = None) -> GitCodebase:
        return GitCodebase(self.repo, ref or self.evaluate_at)

    def true_lines(self) -> dict[str, list[tuple[str, int] | None]]:
        """Where git's own diff puts each seeded citation at the evaluation ref (for re-anchoring
        accuracy): seeded key -> one (path, line) per citation, None where the line is gone.
        Computed once per template, in one diff of each commit the citations were made at."""
        if self._true_lines is None:
            repo = self.repo
            commits = dict.fromkeys(c.commit for c in self._cited() if c.commit)
            found = repo.hunks_between((commit, self.evaluate_at) for commit in commits)
            diffs = {commit: found[(commit, self.evaluate_at)] for commit in commits}
            truth: dict[str, list[tuple[str, int] | None]] = {}
            for seed in self.seeds:
                truth[seed.spec.key] = [_true_line(c, diffs) for c in seed.draft.citations if not isinstance(c, str)]
            self._true_lines = truth
        return self._true_lines

    def _cited(self) -> list[Citation]:
        return [c for seed in self.seeds for c in seed.draft.citations if not isinstance(c, str)]

    def seal(self) -> None:
        """Make the template read-only and remember its fingerprint."""
        make_read_only(self.path)
        self.fingerprint = fingerprint(self.path)

    def intact(self) -> bool:
        """Whether the template is as it was sealed (always true for one never sealed)."""
        return not self.fingerprint or fingerprint(self.path) == self.fingerprint

    def instantiate(self, dest: Path, store_factory: StoreFactory) -> World:
        """A fresh world for one trial: a copy of the repository and a new, seeded store."""
        copy_tree(self.path, dest)
        scenario = self.scenario
        access = AccessPolicy()
        for user, grants in scenario.users.items():
            for repo, level in grants.items():
                access.grant(user, repo, level)
        first = min([s.stored_at for s in self.seeds], default=scenario.start)
        clock = FakeClock(min(first, scenario.start))
        store = store_factory(access, clock)
        seeded: dict[str, list[Memory]] = {}
        drafts: dict[str, MemoryDraft] = {}
        refused: dict[str, str] = {}
        for seed in sorted(self.seeds, key=lambda s: s.stored_at):
            clock.set(seed.stored_at)
            try:
                made = store.store(seed.draft, actor=Actor(seed.spec.author), surface=seed.spec.surface)
            except MemstoreError as exc:  # a store that validates refuses some adversarial input
                refused[seed.spec.key] = f"{type(exc).__name__}: {exc}"
                continue
            seeded.setdefault(seed.spec.key, []).append(made)
            drafts[made.id] = seed.draft
        clock.set(scenario.start)
        return World(self, dest, store, clock, access, seeded, refused, drafts)


@dataclass
class World:
    """One trial's world. ``truth`` is for the metrics only: agents never see it."""

    template: Template
    path: Path
    store: MemoryStore
    clock: FakeClock
    access: AccessPolicy
    seeded: dict[str, list[Memory]]
    refused: dict[str, str] = field(default_factory=dict)  # seeds the store would not take, and why
    drafts: dict[str, MemoryDraft] = field(default_factory=dict)  # what each seeded memory was stored from

    @property
    def scenario(self) -> Scenario:
        return self.template.scenario

    def truth(self) -> dict[str, SeedMemory]:
        """The seeded memories' specs by stored memory id."""
        return {m.id: self.scenario.memory(key) for key, ms in self.seeded.items() for m in ms}


def _variant(spec: SeedMemory, n: int) -> tuple[str, str]:
    if spec.copies == 1:
        return spec.subject, spec.fact
    return f"{spec.subject} ({n + 1})", f"{spec.fact} (note {n + 1})"


def _true_line(cited: Citation, diffs: dict[str, dict[str, tuple[str, list[Hunk]]]]) -> tuple[str, int] | None:
    if cited.commit is None:
        return None
    moved = diffs[cited.commit].get(cited.path)
    if moved is None:
        return (cited.path, cited.line)
    new_path, hunks = moved
    new_line = map_line(hunks, cited.line, rewritten=True) if new_path else None
    return (new_path, new_line) if new_line is not None else None


def _seeds(scenario: Scenario, repo: GitRepository, commits: dict[str, str]) -> list[Seed]:
    seeds = []
    codebases: dict[str, GitCodebase] = {}
    for i, spec in enumerate(scenario.memories):
        citations: list[Citation] = []
        for j, text in enumerate(spec.citations):
            cited = Citation.parse(text)
            if spec.anchor:
                ref = commits.get(spec.learned_at, spec.learned_at)
                if ref not in codebases:
                    codebases[ref] = GitCodebase(repo, ref)
                try:
                    cited = anchor(codebases[ref], cited)
                except ValidationError as exc:
                    raise BuildError(
                        ("memories", i, "citations", j),
                        f"{exc} at {spec.learned_at!r} (set anchor: false to seed a citation to nothing)",
                    ) from exc
            citations.append(cited)
        for n in range(spec.copies):
            subject, fact = _variant(spec, n)
            draft = MemoryDraft(spec.repo, spec.kind, subject, fact, citations, spec.reason)
            seeds.append(Seed(spec, draft, scenario.start - spec.age + timedelta(seconds=n)))
    return seeds


def _check_labels(scenario: Scenario, seeds: list[Seed], codebase: GitCodebase) -> None:
    """The truth labels that the scenario's own data can confirm: a value a memory claims is
    read off the built repository where the author says it is kept (scenarios/README.md).

    Never with `memstore.verify`: a label the reference verifier would judge otherwise is its
    measured error (detection below 1, false invalidation above 0), not a build error."""
    done: set[str] = set()
    for i, spec in enumerate(scenario.memories):
        if spec.key in done:
            continue
        done.add(spec.key)
        if spec.repo == scenario.repo and any(s.spec is spec and s.draft.citations for s in seeds):
            _check_claim(scenario, i, spec, codebase)


def _check_claim(scenario: Scenario, index: int, spec: SeedMemory, codebase: GitCodebase) -> None:
    """A claimed value is checked against the code: false for a contradicted memory, true for a usable one."""
    if spec.claim.at is None or not spec.claim.states:
        return
    value = read_value(codebase, spec.claim.at)
    where = f"{spec.claim.at.path} ({spec.claim.at.pattern})"
    if value is None:
        raise BuildError(("memories", index, "claim", "at"), f"no value found at {where} at {scenario.evaluate_at!r}")
    holds = same_value(value, spec.claim.states)
    if holds != spec.truth.usable and spec.truth in {Truth.VALID, Truth.MOVED, Truth.CONTRADICTED}:
        raise BuildError(
            ("memories", index, "truth"),
            f"truth {spec.truth.value!r} does not hold: {where} says {value!r} and the claim states "
            f"{spec.claim.states!r}",
        )


def build_template(scenario: Scenario, dest: Path) -> Template:
    """Build ``scenario``'s repository at ``dest`` and anchor its memories.

    Raises:
        BuildError: naming the field of the scenario to blame.
    """
    builder = HistoryBuilder(start=scenario.start - scenario.history_span, step=scenario.step)
    files = scenario.files if scenario.files is not None else fixture_files(scenario.fixture)
    for path, data in files.items():
        builder.write(path, data)
    builder.commit("Initial import", label="initial")
    for index, step in enumerate(scenario.history):
        _play(builder, index, step)
    built = builder.build(dest)
    commits = dict(built.commits)
    evaluate_at = commits.get(scenario.evaluate_at)
    repo = GitRepository(dest)
    if evaluate_at is None:
        codebase = GitCodebase(repo, scenario.evaluate_at)
        assert codebase.commit is not None
        evaluate_at = codebase.commit
    template = Template(scenario, dest, commits, evaluate_at, _repo=repo)
    template.seeds = _seeds(scenario, repo, commits)
    _check_labels(scenario, template.seeds, template.codebase())
    return template


def build_problems(scenario: Scenario) -> list[tuple[FieldPath, str]]:
    """Build ``scenario`` in a scratch folder and report what keeps it from building."""
    with scratch_folder("memstore-check-") as tmp:
        try:
            build_template(scenario, tmp / "repo")
        except BuildError as exc:
            return [(exc.path, str(exc))]
        except MemstoreError as exc:
            return [((), str(exc))]
    return []


def check_labels(scenarios: Iterable[Scenario], *, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Build each hand-written scenario in a scratch folder and check that its history applies,
    its citations can be anchored and the values its memories claim hold there (never with the
    verifier: scenarios/README.md, "Where truth labels come from"); every problem, located in
    the scenario's file. (Generated scenarios are labelled by construction, and checked again
    whenever a trial builds one.)"""
    chosen = [s for s in scenarios if s.files is None]
    problems: list[Problem] = []
    for done, scenario in enumerate(chosen, 1):
        found = build_problems(scenario)
        if found:
            positions = load_yaml(Path(scenario.source))[1] if scenario.source else Positions(None)
            report = Reporter(scenario.source or scenario.name, positions)
            for path, message in found:
                report.add(path, message)
            problems += report.problems
        if progress:
            progress(done, len(chosen))
    return problems


def validate_file(file: Path) -> list[Problem]:
    """Every problem of one scenario file, its truth labels checked on the built repository
    (empty when it is fine)."""
    scenarios, problems = read_file(file)
    return problems or check_labels(scenarios)
