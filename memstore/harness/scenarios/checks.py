"""Checking a scenario file's data: against the JSON Schema, then against itself.

Every reference resolves (users, memories, labels, branches), every citation parses, every
pattern compiles, times and durations make sense. (Whether the history applies and the claimed
values hold is checked by building the scenario: `memstore.harness.world.check_labels`.)
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
import regex

from memstore.errors import ValidationError
from memstore.harness.scenarios.data import fixtures_dir, scenarios_dir
from memstore.harness.scenarios.scenario import parse_duration, parse_start
from memstore.harness.scenarios.source import FieldPath, Reporter
from memstore.model import Citation, clean_path

__all__ = ["schema_errors", "semantic_checks"]


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((scenarios_dir() / "schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def schema_errors(data: Any, report: Reporter) -> None:
    for error in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        _report_schema_error(error, report)


def _report_schema_error(error: jsonschema.ValidationError, report: Reporter) -> None:
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


def _time_checks(data: dict[str, Any], report: Reporter) -> None:
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


def semantic_checks(data: dict[str, Any], report: Reporter) -> None:
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


def _history_names(data: dict[str, Any], report: Reporter) -> tuple[set[str], set[str]]:
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


def _pattern_check(pattern: str, where: FieldPath, report: Reporter) -> None:
    try:
        if regex.compile(pattern).groups < 1:
            report.add(where, "the pattern needs a (group) around the value")
    except regex.error as exc:
        report.add(where, f"not a regular expression: {exc}")


def _path_check(path: str, where: FieldPath, report: Reporter) -> None:
    try:
        clean_path(path)
    except ValidationError as exc:
        report.add(where, str(exc))


def _memory_checks(data: dict[str, Any], report: Reporter, refs: set[str]) -> set[str]:
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
        said = " ".join(str(memory.get(name, "")) for name in ("subject", "fact", "reason"))
        for j, planted in enumerate(claim.get("instructs", [])):
            if planted not in said:
                report.add(
                    (*where, "claim", "instructs", j), f"{planted!r} is not in the memory's subject, fact or reason"
                )
    return keys


def _task_checks(data: dict[str, Any], report: Reporter, keys: set[str], branches: set[str]) -> None:
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
