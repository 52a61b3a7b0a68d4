"""Reading scenario files: YAML checked against the JSON Schema, then against itself.

Every problem is reported with its file, line, column and field path, and all of them at
once; nothing is built from a file that has any. A file holds one scenario, or a
``generator:`` that makes a population of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import regex
import yaml

from memstore.access import Access
from memstore.errors import ScenarioError, ValidationError
from memstore.harness.scenarios.data import fixtures_dir, scenarios_dir
from memstore.harness.scenarios.model import (
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
from memstore.model import Citation, Kind, Surface, clean_path

__all__ = [
    "Problem",
    "ScenarioError",
    "check_labels",
    "load_file",
    "load_library",
    "read_file",
    "scenario_files",
    "validate_file",
]

FieldPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario file, where a person can find it."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.path}:" if self.path else ""
        return f"{self.file}:{self.line}:{self.column}:{where} {self.message}"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((scenarios_dir() / "schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Positions:
    """Line and column of every value (and mapping key) of a YAML document."""

    def __init__(self, node: yaml.Node | None) -> None:
        self.values: dict[FieldPath, tuple[int, int]] = {}
        self.keys: dict[FieldPath, tuple[int, int]] = {}
        if node is not None:
            self._walk(node, ())

    def _walk(self, node: yaml.Node, path: FieldPath) -> None:
        self.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = key.value
                self.keys[(*path, name)] = (key.start_mark.line + 1, key.start_mark.column + 1)
                self._walk(value, (*path, name))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*path, index))

    def at(self, path: FieldPath, *, key: bool = False) -> tuple[int, int]:
        if key and path in self.keys:
            return self.keys[path]
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, (1, 1))


class _Reporter:
    def __init__(self, file: str, positions: _Positions) -> None:
        self.file, self.positions, self.problems = file, positions, []  # type: ignore[var-annotated]

    def add(self, path: FieldPath, message: str, *, key: bool = False) -> None:
        line, column = self.positions.at(path, key=key)
        self.problems.append(Problem(self.file, line, column, _dotted(path), message))


def _schema_errors(data: Any, report: _Reporter) -> None:
    for error in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        _report_schema_error(error, report)


def _report_schema_error(error: jsonschema.ValidationError, report: _Reporter) -> None:
    path: FieldPath = tuple(error.absolute_path)
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "oneOf" and isinstance(error.instance, dict) and error.context:
        # Report the errors of the branch the author meant: the one whose first required key is present.
        branches: list[dict[str, Any]] = list(error.validator_value)  # type: ignore[arg-type]
        for index, branch in enumerate(branches):
            required = branch.get("required", [])
            if required and required[0] in error.instance:
                for sub in error.context:
                    if sub.relative_schema_path and sub.relative_schema_path[0] == index:
                        _report_schema_error(sub, report)
                return
        if path:
            ops = sorted({b["required"][0] for b in branches if b.get("required")})
            report.add(path, f"expected exactly one of {', '.join(ops)}")
            return
    if error.validator == "additionalProperties":
        allowed = set(schema.get("properties", {}))
        for name in sorted(set(error.instance) - allowed):  # type: ignore[arg-type]
            hint = f"; allowed here: {', '.join(sorted(allowed))}" if allowed else ""
            report.add((*path, name), f"unknown key {name!r}{hint}", key=True)
        return
    if error.validator == "required":
        report.add(path, error.message.replace("is a required property", "is required"))
        return
    if error.validator == "pattern" and "description" in schema:
        report.add(path, f"{error.instance!r} is not {schema['description']}")
        return
    report.add(path, error.message)


MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64  # nested collections; the deepest scenario needs about eight
MAX_NODES = 200_000  # values, counting each use of an alias in full


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, with dates left as the strings they were written as (the scenario
    checks parse them, with their own error messages)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_KEY_TAGS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"}  # a string, or YAML's merge key "<<"
_OPEN = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_CLOSE = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _mark(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where the nesting passes `MAX_DEPTH`, found by the (non-recursive) scanner, which stops
    there: a file of fifty thousand ``[`` costs as much as one of sixty-five."""
    depth = 0
    for token in yaml.scan(text, Loader=_Loader):
        if isinstance(token, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                return _mark(token.start_mark)
        elif isinstance(token, _CLOSE):
            depth -= 1
    return None


def _graph_problem(root: yaml.Node) -> tuple[str, tuple[int, int]] | None:
    """What is wrong with the node graph itself: an alias that contains itself, a document that
    aliases expand past `MAX_NODES` values (a "billion laughs"), a key that is not a string."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # iterative depth-first walk, each node once: linear in the file, not in its expansion
        node, done = stack.pop()
        if done:
            on_path.discard(id(node))
            children = _children(node)
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_NODES:
                return f"aliases expand this document past {MAX_NODES:,} values", _mark(node.start_mark)
            continue
        if id(node) in sizes:
            continue
        if id(node) in on_path:
            return "an alias refers to a collection that contains it", _mark(node.start_mark)
        if isinstance(node, yaml.MappingNode):
            for key, _ in node.value:
                if not (isinstance(key, yaml.ScalarNode) and key.tag in _KEY_TAGS):
                    return "keys must be strings (quote this one)", _mark(key.start_mark)
        on_path.add(id(node))
        stack.append((node, True))
        stack += [(child, False) for child in _children(node) if id(child) not in sizes]
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _load_yaml(file: Path) -> tuple[Any, _Positions, list[Problem]]:
    """Parse a YAML file in bounded time and memory; its problems located, nothing half-read."""

    def problem(message: str, where: tuple[int, int] = (1, 1)) -> tuple[Any, _Positions, list[Problem]]:
        return None, _Positions(None), [Problem(str(file), where[0], where[1], "", message)]

    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return problem(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; a scenario file is far smaller")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return problem(f"cannot read: {exc}")
    try:
        deep = _too_deep(text)
        if deep is not None:
            return problem(f"nested more than {MAX_DEPTH} levels deep", deep)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            wrong = _graph_problem(node) if node is not None else None
            if wrong is not None:
                return problem(*wrong)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        return problem(f"not valid YAML: {exc}", _mark(getattr(exc, "problem_mark", None)))
    except RecursionError:  # pragma: no cover - the depth check comes first
        return problem(f"nested more than {MAX_DEPTH} levels deep")
    return data, _Positions(node), []


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


def _time_checks(data: dict[str, Any], report: _Reporter) -> None:
    """Dates and durations that the schema's patterns let through but that mean nothing."""
    clock = data.get("clock", {})
    fields: list[tuple[FieldPath, Any, Any]] = [(("clock", "start"), clock.get("start"), parse_start)]
    fields += [(("clock", name), clock.get(name), parse_duration) for name in ("step", "history_span")]
    fields += [(("memories", i, "age"), m.get("age"), parse_duration) for i, m in enumerate(data.get("memories", []))]
    fields += [(("tasks", i, "after"), t.get("after"), parse_duration) for i, t in enumerate(data["tasks"])]
    for path, value, parse in fields:
        if value is None:
            continue
        try:
            parse(value)
        except ValueError as exc:
            report.add(path, str(exc))


def _semantic_checks(data: dict[str, Any], report: _Reporter) -> None:
    """What the schema cannot say: references between parts, citations, fixtures, times, patterns."""
    _time_checks(data, report)
    if not (fixtures_dir() / data["fixture"]).is_dir():
        known = ", ".join(sorted(p.name for p in fixtures_dir().iterdir() if p.is_dir()))
        report.add(("fixture",), f"no fixture {data['fixture']!r} (known: {known})")
    labels, branches = _history_names(data, report)
    keys = _memory_checks(data, report, labels | branches)
    _task_checks(data, report, keys, branches)
    evaluate_at = data.get("evaluate_at", "main")
    if evaluate_at not in labels | branches:
        report.add(("evaluate_at",), f"{evaluate_at!r} is neither a commit label nor a branch of the history")


def _history_names(data: dict[str, Any], report: _Reporter) -> tuple[set[str], set[str]]:
    """The commit labels (and tags) and the branches the history makes."""
    labels, branches = {"initial"}, {"main"}
    for i, step in enumerate(data.get("history", [])):
        if "label" in step:
            if step["label"] in labels:
                report.add(("history", i, "label"), f"label {step['label']!r} is used twice")
            labels.add(step["label"])
        if "branch" in step and "commit" not in step:
            branches.add(step["branch"])
        if "tag" in step:
            labels.add(step["tag"])
    return labels, branches


def _pattern_check(pattern: str, where: FieldPath, report: _Reporter) -> None:
    try:
        if regex.compile(pattern).groups < 1:
            report.add(where, "the pattern needs a (group) around the value")
    except regex.error as exc:
        report.add(where, f"not a regular expression: {exc}")


def _path_check(path: str, where: FieldPath, report: _Reporter) -> None:
    try:
        clean_path(path)
    except ValidationError as exc:
        report.add(where, str(exc))


def _memory_checks(data: dict[str, Any], report: _Reporter, refs: set[str]) -> set[str]:
    """The memories' references, citations and claims; their keys."""
    users = set(data["users"])
    keys: set[str] = set()
    for i, memory in enumerate(data.get("memories", [])):
        where = ("memories", i)
        if memory["key"] in keys:
            report.add((*where, "key"), f"memory key {memory['key']!r} is used twice")
        keys.add(memory["key"])
        if memory["author"] not in users:
            report.add((*where, "author"), f"unknown user {memory['author']!r}; add it under users")
        learned = memory.get("learned_at", "initial")
        if learned not in refs:
            report.add((*where, "learned_at"), f"{learned!r} is neither a commit label nor a branch of the history")
        if memory.get("kind", "fact") == "fact" and not memory["citations"] and memory["truth"] != "unsupported":
            report.add((*where, "citations"), "a fact citing nothing can only be 'unsupported'")
        for j, cited in enumerate(memory["citations"]):
            try:
                Citation.parse(cited)
            except ValidationError as exc:
                report.add((*where, "citations", j), str(exc))
        claim = memory.get("claim", {})
        if memory["truth"] == "contradicted" and not ("states" in claim and "at" in claim):
            report.add((*where, "truth"), "a contradicted memory needs claim.states and claim.at (where truth is read)")
        if "at" in claim:
            _pattern_check(claim["at"]["pattern"], (*where, "claim", "at", "pattern"), report)
            _path_check(claim["at"]["path"], (*where, "claim", "at", "path"), report)
        for field_name in ("points_to", "skips"):
            for j, path in enumerate(claim.get(field_name, [])):
                _path_check(path, (*where, "claim", field_name, j), report)
    return keys


def _task_checks(data: dict[str, Any], report: _Reporter, keys: set[str], branches: set[str]) -> None:
    """The tasks' users, needs, findings, checks and pull requests."""
    users = set(data["users"])
    earlier: set[str] = set()
    for i, task in enumerate(data["tasks"]):
        where = ("tasks", i)
        if task["key"] in earlier:
            report.add((*where, "key"), f"task key {task['key']!r} is used twice")
        if task["user"] not in users:
            report.add((*where, "user"), f"unknown user {task['user']!r}; add it under users")
        for j, need in enumerate(task.get("needs", [])):
            learned = need.removeprefix("learned:")
            if need.startswith("learned:") and learned not in earlier:
                report.add((*where, "needs", j), f"no earlier task {learned!r} to have learned it")
            elif not need.startswith("learned:") and need not in keys:
                report.add((*where, "needs", j), f"no memory {need!r} (a seeded key, or learned:TASK)")
        for j, finding in enumerate(task.get("findings", [])):
            _path_check(finding["path"], (*where, "findings", j, "path"), report)
            if finding.get("memory") is not None and finding["memory"] not in keys:
                report.add((*where, "findings", j, "memory"), f"no memory {finding['memory']!r}")
        check = task.get("check", {})
        for j, equal in enumerate(check.get("equal", [])):
            _pattern_check(equal["pattern"], (*where, "check", "equal", j, "pattern"), report)
        for name in ("equal", "contains", "absent"):
            for j, item in enumerate(check.get(name, [])):
                _path_check(item["path"], (*where, "check", name, j, "path"), report)
        for j, path in enumerate(check.get("unchanged", [])):
            _path_check(path, (*where, "check", "unchanged", j), report)
        if task["surface"] == "cli" and not ("answer" in task or "answer_at" in task):
            report.add(where, "a CLI task needs answer (the expected answer) or answer_at (where to read it)")
        if "answer_at" in task:
            _pattern_check(task["answer_at"]["pattern"], (*where, "answer_at", "pattern"), report)
        if task.get("match") == "regex":
            _pattern_check(f"({task.get('answer', '')})", (*where, "answer"), report)
        pr = task.get("pull_request")
        if pr and pr["branch"] not in branches:
            report.add((*where, "pull_request", "branch"), f"no branch {pr['branch']!r} in the history")
        earlier.add(task["key"])


def read_file(file: Path) -> tuple[list[Scenario], list[Problem]]:
    """Parse and check one file; the scenarios are empty when there are problems."""
    data, positions, problems = _load_yaml(file)
    if problems:
        return [], problems
    report = _Reporter(str(file), positions)
    if not isinstance(data, dict):
        report.add((), "a scenario file is a mapping with name, description, fixture, repo, users, tasks...")
        return [], report.problems
    _schema_errors(data, report)
    if report.problems:
        return [], sorted(report.problems, key=lambda p: (p.line, p.column))
    if "generator" in data:
        from memstore.harness.scenarios.generator import generate

        try:
            return generate(data["name"], data["description"], data["generator"], source=str(file)), []
        except Exception as exc:  # a generator bug costs its own file, located, never the caller
            report.add(("generator",), f"the generator could not make this population: {type(exc).__name__}: {exc}")
            return [], report.problems
    _semantic_checks(data, report)
    if report.problems:
        return [], report.problems
    return [_parse(data, file)], []


def check_labels(scenarios: Iterable[Scenario], *, progress: Callable[[int, int], None] | None = None) -> list[Problem]:
    """Build each hand-written scenario in a scratch folder and check that its history applies
    and its truth labels hold there; every problem, located in the scenario's file. (Generated
    scenarios are labelled by construction, and checked again whenever a trial builds one.)"""
    from memstore.harness.world import build_problems

    chosen = [s for s in scenarios if s.files is None]
    problems: list[Problem] = []
    for done, scenario in enumerate(chosen, 1):
        found = build_problems(scenario)
        if found:
            positions = _load_yaml(Path(scenario.source))[1] if scenario.source else _Positions(None)
            report = _Reporter(scenario.source or scenario.name, positions)
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
