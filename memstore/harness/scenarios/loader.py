"""Reading scenario files: YAML checked against the JSON Schema, then against itself.

Every problem is reported with its file, line, column and field path, and all of them at
once; nothing is built from a file that has any. A file holds one scenario, or a
``generator:`` that makes a population of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memstore.access import Access
from memstore.errors import ScenarioError
from memstore.harness.scenarios.checks import schema_errors, semantic_checks
from memstore.harness.scenarios.data import scenarios_dir
from memstore.harness.scenarios.generator import generate
from memstore.harness.scenarios.scenario import (
    AnswerMatch,
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
    parse_duration,
    parse_start,
)
from memstore.harness.scenarios.source import Problem, Reporter, load_yaml
from memstore.model import Kind, Surface

__all__ = [
    "Problem",
    "ScenarioError",
    "load_file",
    "load_library",
    "read_file",
    "scenario_files",
]


def scenario_files(paths: Iterable[str | Path] = ()) -> list[Path]:
    """The ``*.yaml`` files named, or found in the folders named (the library by default)."""
    found: list[Path] = []
    for path in [Path(p) for p in paths] or [scenarios_dir()]:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*.y*ml") if p.suffix in {".yaml", ".yml"})
            if not inside:
                raise ScenarioError([Problem(str(path), 1, 1, "", "no scenario files (*.yaml, *.yml) in this folder")])
            found += inside
        else:
            found.append(path)
    return found


def _duration(value: str | None, default: str = "0s") -> Any:
    return parse_duration(value or default)


def _location(data: dict[str, Any]) -> Location:
    return Location(data["path"], data["pattern"])


def _claim(data: dict[str, Any]) -> Claim:
    return Claim(
        states=str(data.get("states", "")),
        at=_location(data["at"]) if "at" in data else None,
        points_to=tuple(data.get("points_to", ())),
        skips=tuple(data.get("skips", ())),
        instructs=tuple(data.get("instructs", ())),
    )


_INTENT_SHAPES = {  # YAML key -> (action, field holding the subject, field holding the value or target)
    "set": (IntentAction.SET, "set", "to"),
    "add": (IntentAction.ADD, "to", "add"),
    "use": (IntentAction.USE, "use", "in"),
    "ask": (IntentAction.ASK, "ask", ""),
}


def _intent(data: dict[str, Any] | None) -> Intent | None:
    if data is None:
        return None
    action, subject, other = next(shape for key, shape in _INTENT_SHAPES.items() if key in data)
    extra = str(data.get(other, "")) if other else ""
    if action is IntentAction.USE:
        return Intent(action, str(data[subject]), target=extra)
    return Intent(action, str(data[subject]), value=extra)


def _pull_request(pr: dict[str, Any]) -> PullRequestSpec:
    return PullRequestSpec(pr["branch"], pr.get("base", "main"), pr.get("title", ""), pr.get("description", ""))


def _task(t: dict[str, Any]) -> Task:
    check = t.get("check", {})
    pr = t.get("pull_request")
    return Task(
        key=t["key"],
        surface=Surface(t["surface"]),
        user=t["user"],
        prompt=t["prompt"],
        after=_duration(t.get("after")),
        intent=_intent(t.get("intent")),
        question=t.get("question", ""),
        pull_request=_pull_request(pr) if pr else None,
        needs=tuple(t.get("needs", ())),
        check=Check(
            equal=tuple(_location(e) for e in check.get("equal", ())),
            contains=tuple((c["path"], c["text"]) for c in check.get("contains", ())),
            absent=tuple((c["path"], c["text"]) for c in check.get("absent", ())),
            unchanged=tuple(check.get("unchanged", ())),
            command=tuple(check.get("command", ())),
        ),
        findings=tuple(Finding(f["path"], f.get("memory"), f.get("note", "")) for f in t.get("findings", ())),
        answer=str(t.get("answer", "")),
        match=AnswerMatch(t.get("match", "value")),
        answer_at=_location(t["answer_at"]) if "answer_at" in t else None,
        stratum=str(t.get("stratum", "")),
    )


def _parse(data: dict[str, Any], file: Path) -> Scenario:
    clock = data.get("clock", {})
    start = parse_start(clock["start"]) if "start" in clock else None
    users = {u: {r: Access[lvl.upper()] for r, lvl in grants.items()} for u, grants in data["users"].items()}
    history = []
    for step in data.get("history", []):
        op = next(k for k in ("commit", "branch", "switch", "merge", "revert", "tag") if k in step)
        edits = tuple(Edit(name, dict(args)) for edit in step.get("edits", []) for name, args in edit.items())
        history.append(Step(op, {k: v for k, v in step.items() if k != "edits"}, edits))
    memories = tuple(
        SeedMemory(
            key=m["key"],
            origin=Origin(m["origin"]),
            truth=Truth(m["truth"]),
            repo=m.get("repo", data["repo"]),
            kind=Kind(m.get("kind", "fact")),
            author=m["author"],
            surface=Surface(m.get("surface", "coding_agent")),
            learned_at=m.get("learned_at", "initial"),
            anchor=m.get("anchor", True),
            subject=m["subject"],
            fact=m["fact"],
            citations=tuple(m["citations"]),
            reason=m.get("reason", ""),
            age=_duration(m.get("age"), "1d"),
            copies=m.get("copies", 1),
            claim=_claim(m.get("claim", {})),
        )
        for m in data.get("memories", [])
    )
    tasks = [_task(t) for t in data["tasks"]]
    extra: dict[str, Any] = {}
    if start is not None:
        extra["start"] = start
    if "step" in clock:
        extra["step"] = parse_duration(clock["step"])
    if "history_span" in clock:
        extra["history_span"] = parse_duration(clock["history_span"])
    return Scenario(
        name=data["name"],
        description=data["description"].strip(),
        fixture=data["fixture"],
        repo=data["repo"],
        users=users,
        history=tuple(history),
        memories=memories,
        tasks=tuple(tasks),
        evaluate_at=data.get("evaluate_at", "main"),
        tags=tuple(data.get("tags", ())),
        source=str(file),
        **extra,
    )


def read_file(file: Path) -> tuple[list[Scenario], list[Problem]]:
    """Parse and check one file; the scenarios are empty when there are problems."""
    data, positions, problems = load_yaml(file)
    if problems:
        return [], problems
    report = Reporter(str(file), positions)
    if not isinstance(data, dict):
        report.add((), "a scenario file is a mapping with name, description, fixture, repo, users, tasks...")
        return [], report.problems
    schema_errors(data, report)
    if report.problems:
        return [], sorted(report.problems, key=lambda p: (p.line, p.column))
    if "generator" in data:
        try:
            return generate(data["name"], data["description"], data["generator"], source=str(file)), []
        except Exception as exc:  # a generator bug costs its own file, located, never the caller
            report.add(("generator",), f"the generator could not make this population: {type(exc).__name__}: {exc}")
            return [], report.problems
    semantic_checks(data, report)
    if report.problems:
        return [], report.problems
    return [_parse(data, file)], []


def load_file(file: Path) -> list[Scenario]:
    """The scenarios of one file.

    Raises:
        ScenarioError: listing every problem, when there is any.
    """
    scenarios, problems = read_file(file)
    if problems:
        raise ScenarioError(problems)
    return scenarios


def load_library(paths: Iterable[str | Path] = ()) -> list[Scenario]:
    """Every scenario of the files or folders named (the shipped library by default)."""
    problems: list[Problem] = []
    scenarios: list[Scenario] = []
    for file in scenario_files(paths):
        found, wrong = read_file(file)
        scenarios += found
        problems += wrong
    if problems:
        raise ScenarioError(problems)
    names = [s.name for s in scenarios]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(
            [
                Problem(s.source, 1, 1, "name", f"scenario name {s.name!r} is used twice")
                for s in scenarios
                if s.name in twice
            ]
        )
    return scenarios
