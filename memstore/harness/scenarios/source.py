"""Reading a scenario file's YAML safely, with the position of every value.

Bounded: a file too large, nested too deep, or whose aliases expand without end is a
located problem, never a hang or a crash. Every problem is a `Problem` with the file, line,
column and field path a person can find it by.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["FieldPath", "Positions", "Problem", "Reporter", "dotted", "load_yaml"]

FieldPath = tuple[str | int, ...]
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64  # nested collections; the deepest scenario needs about eight
MAX_NODES = 200_000  # values, counting each use of an alias in full


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


def dotted(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class Positions:
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


class Reporter:
    def __init__(self, file: str, positions: Positions) -> None:
        self.file, self.positions, self.problems = file, positions, []  # type: ignore[var-annotated]

    def add(self, path: FieldPath, message: str, *, key: bool = False) -> None:
        line, column = self.positions.at(path, key=key)
        self.problems.append(Problem(self.file, line, column, dotted(path), message))


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where PyYAML was built with it


class _Loader(_SafeLoader):  # type: ignore[misc]
    """YAML's safe loader (libyaml's, about ten times faster, where PyYAML has it), with dates
    left as the strings they were written as (the scenario checks parse them, with their own
    error messages)."""


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
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    return _mark(token.start_mark)
            elif isinstance(token, _CLOSE):
                depth -= 1
    except yaml.YAMLError as exc:  # libyaml's scanner stops at its own bound, deeper than ours
        if "maximum nesting depth" in str(exc):
            return _mark(getattr(exc, "problem_mark", None))
        raise
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


def load_yaml(file: Path) -> tuple[Any, Positions, list[Problem]]:
    """Parse a YAML file in bounded time and memory; its problems located, nothing half-read."""

    def problem(message: str, where: tuple[int, int] = (1, 1)) -> tuple[Any, Positions, list[Problem]]:
        return None, Positions(None), [Problem(str(file), where[0], where[1], "", message)]

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
    return data, Positions(node), []
