"""The house's layers: no import cycle anywhere in the package, and the harness's stages import one
way (docs/design.md, "Stages"): scenarios -> world -> run -> grading -> analysis -> runfolder ->
report -> evaluate, each importing only the stages below it.

Every import counts: at module level, inside a function, under ``TYPE_CHECKING``. A built-in
found by name through a registry (``"package.module:attr"``) is not an import.

`KNOWN_CLIMBS` and `LAZY` are the debts still in the code, listed one by one so that the list
can only shrink: a new climb or a new import inside a function fails here, and so does a listed
one that is gone (take it off the list).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memstore"

STAGES = (
    "memstore.harness.scenarios",
    "memstore.harness.world",
    "memstore.harness.run",
    "memstore.harness.grading",
    "memstore.harness.analysis",
    "memstore.harness.runfolder",
    "memstore.harness.report",
    "memstore.harness.evaluate",
    "memstore.harness.pytest_run",
    "memstore.harness.pytest_plugin",
)
LEAVES = ("memstore.harness.stats", "memstore.harness.trees")  # import nothing of the harness; any stage may use them

# Imports from a lower stage to a higher one, still to be turned around: none.
KNOWN_CLIMBS: set[tuple[str, str]] = set()

# Imports of memstore modules inside functions, each a deliberate choice for what it costs.
_PLUGIN = "memstore.harness.pytest_plugin"  # loaded by every pytest run where memstore is installed:
_PLUGIN_NEEDS = (  # the harness only once its options are used
    "runfolder.results",
    "pytest_run",
    "report.suite",
    "run.agents",
    "run.runner",
    "scenarios.data",
    "scenarios.loader",
    "scenarios.sample",
)
LAZY: set[tuple[str, str]] = {
    *((_PLUGIN, f"memstore.harness.{name}") for name in _PLUGIN_NEEDS),
    ("memstore.harness.run.boundary", "memstore.mcp.server"),  # the MCP SDK, only for a session that asks for MCP
    ("memstore.harness.run.boundary", "memstore.mcp.service"),
    # a fork of the fork server runs the command line; the module itself is run as a script that
    # must import nothing but the standard library (its launcher)
    ("memstore.mcp.forkserver", "memstore.cli"),
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The memstore modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if MODULES[module].name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    found = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


def _imports() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """Every module's imports of other memstore modules, and those made inside a function."""
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    inside: set[tuple[str, str]] = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges[module].update(_targets(module, node))
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        inside.update((module, target) for target in _targets(module, node))
    return edges, inside


_GRAPH = functools.cache(_imports)  # parsed on first use, not when the module is collected (in every worker)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def stage_of(module: str) -> int | None:
    """The position of ``module``'s stage in `STAGES`, None for a module outside them."""
    for position, stage in enumerate(STAGES):
        if module == stage or module.startswith(stage + "."):
            return position
    return None


def climbs(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The imports that run from a stage to a higher one."""
    found = set()
    for module, targets in edges.items():
        low = stage_of(module)
        for target in targets:
            high = stage_of(target)
            if low is not None and high is not None and high > low:
                found.add((module, target))
    return found


def test_no_import_cycle_anywhere_in_the_package() -> None:
    assert _cycles(_GRAPH()[0]) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_stages_import_one_way() -> None:
    found = climbs(_GRAPH()[0])
    assert found - KNOWN_CLIMBS == set(), "new imports that climb a stage"
    assert KNOWN_CLIMBS - found == set(), "climbs that are gone: take them off KNOWN_CLIMBS"


def test_a_climb_is_seen() -> None:
    edges = {"memstore.harness.world": {"memstore.harness.report.gates"}, "memstore.harness.report.gates": set()}
    assert climbs(edges) == {("memstore.harness.world", "memstore.harness.report.gates")}
    assert climbs({"memstore.harness.report.gates": {"memstore.harness.world"}}) == set()


def test_statistics_is_a_leaf() -> None:
    for leaf in LEAVES:
        assert {t for t in _GRAPH()[0][leaf] if t.startswith("memstore.harness")} == set()


def test_imports_inside_functions_are_the_listed_ones() -> None:
    assert set() == _GRAPH()[1] - LAZY, "new imports inside functions: import at the top (or list a deliberate one)"
    assert set() == LAZY - _GRAPH()[1], "lazy imports that are gone: take them off LAZY"


def test_every_stage_exists() -> None:
    for stage in STAGES:
        assert stage in MODULES, stage


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def too_long(source: str, name: str) -> list[str]:
    """What in ``source`` (the module ``name``) is over the size limits: the module itself past
    `MAX_MODULE_LINES` lines, a function or method past `MAX_FUNCTION_LINES` (decorators aside,
    its docstring in)."""
    found = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{name}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_module_over_400_lines_and_no_function_over_60() -> None:
    found = [p for m, path in MODULES.items() for p in too_long(path.read_text(encoding="utf-8"), m)]
    assert found == []


def test_the_size_check_sees_a_long_module_and_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    assert too_long(f"def f():\n{body}\n", "m") == ["m:1 f: 62 lines"]
    assert too_long("x = 1\n" * 401, "m") == ["m: 401 lines"]
    assert too_long("def f():\n    return 1\n", "m") == []
