"""The house's layers: no import cycle anywhere in the package, and every room of it imports one
way (docs/design.md, "Rooms"): the core, verify, transfer, mcp, the backends, the harness's stages
(its leaves, the records, scenarios, world, run, grading, analysis, runfolder, report, sequential, evaluate, the
pytest plugin), the agents, testing, and the commands on top, each importing only the rooms below it.
The run stage is rooms of its own: its records, isolation, a unit's output, the agent boundary, the
trial loop (play), the runner, and its face on top.

Every import counts: at module level, inside a function, under ``TYPE_CHECKING``. So does a
string that names a module of the package: a ``"package.module:attr"`` reference is an import all
the same (a built-in found by name), and a dotted module name may not climb either (within its
room it may name a package of templates or prompts). An entry-point group's name
(``"memstore.agents"``) names a group of the plug-in table, not a module.

`KNOWN_CLIMBS` and `LAZY` are the debts still in the code, listed one by one so that the list
can only shrink: a new climb or a new import inside a function fails here, and so does a listed
one that is gone (take it off the list).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from memstore import plugins

PACKAGE = Path(__file__).resolve().parents[1] / "memstore"

# The rooms, from the ground up; a module imports (or names) only modules of its own room or below.
ROOMS: tuple[tuple[str, ...], ...] = (
    (  # the core: the memory model, the store protocol, the registry class and the plug-in table
        "memstore",
        "memstore.errors",
        "memstore.ids",
        "memstore.clock",
        "memstore.registry",
        "memstore.uri",
        "memstore.plugins",
        "memstore.validation",
        "memstore.model",
        "memstore.access",
        "memstore.uri",
        "memstore.store",
    ),
    ("memstore.verify",),
    ("memstore.transfer",),
    ("memstore.mcp",),
    ("memstore.backends",),
    ("memstore.harness.stats", "memstore.harness.trees"),  # the harness's leaves: any stage may use them
    ("memstore.harness.records",),  # the typed spine every stage reads: records, promises, tables, format
    ("memstore.harness.scenarios",),
    ("memstore.harness.world",),
    ("memstore.harness.run.isolation",),  # the run stage, from the ground up: sandbox, processes, scratch
    ("memstore.harness.run.output",),  # what a unit is and what it gives back
    ("memstore.harness.run.boundary",),  # what an agent is handed, the agents registry, the command adapter
    ("memstore.harness.run.play",),  # the trial loop, its hand-off to the grading, the store audit
    ("memstore.harness.run.runner",),  # what to run, the pool, the executors
    ("memstore.harness.run",),  # the run stage's face
    ("memstore.harness.grading",),
    ("memstore.harness.export",),  # scenarios as other harnesses' tasks (Harbor), graded there as here
    ("memstore.harness.analysis",),
    ("memstore.harness.runfolder",),
    ("memstore.harness.report",),
    ("memstore.harness.compose",),
    ("memstore.harness.sequential",),
    ("memstore.harness.evaluate",),
    ("memstore.harness.pytest_run",),
    ("memstore.harness.pytest_options",),  # the plugin's options: pytest and the standard library alone
    ("memstore.harness.pytest_plugin",),
    ("memstore.agents",),
    ("memstore.testing",),
    ("memstore.inspect",),  # the scenarios as an inspect_ai task, and inspect logs compared (over the harness)
    ("memstore.commands", "memstore.cli", "memstore.__main__"),
)
LEAVES = ("memstore.harness.stats", "memstore.harness.trees")  # import nothing of the harness

# Imports and names from a lower room to a higher one, still to be turned around: none.
KNOWN_CLIMBS: set[tuple[str, str]] = set()

# Imports of memstore modules inside functions, each a deliberate choice for what it costs.
_PLUGIN = "memstore.harness.pytest_plugin"  # loaded by every pytest run where memstore is installed:
_PLUGIN_NEEDS = (  # the harness only once its options are used (each stage through its face)
    "pytest_run",
    "report",
    "run",
    "runfolder",
    "scenarios",
)
LAZY: set[tuple[str, str]] = {
    *((_PLUGIN, f"memstore.harness.{name}") for name in _PLUGIN_NEEDS),
    # the MCP SDK, only for a session that asks for MCP
    ("memstore.harness.run.boundary.session", "memstore.mcp"),
    # the fork server's scan of the plug-in table: its launcher (the same file, run as a script)
    # imports the standard library alone
    ("memstore.mcp.forkserver", "memstore.registry"),
    # pandas and the statistics, only for a command that runs (its --help and usage errors load
    # neither: tests/test_cli_startup.py)
    *(("memstore.commands.eval", f"memstore.harness.{name}") for name in ("evaluate", "report")),
    *(("memstore.commands.merge", f"memstore.harness.{name}") for name in ("evaluate", "report")),
    ("memstore.commands.export", "memstore.harness.export"),
    ("memstore.commands.metrics", "memstore.harness.analysis"),
    ("memstore.commands.reports", "memstore.harness.report"),
    ("memstore.commands.reports", "memstore.inspect"),  # inspect eval logs compared, only for `memstore compare`
}

GROUPS = plugins.GROUPS  # entry-point groups: "memstore.agents" is a group of the plug-in table, not an import


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _resolve(name: str, module: str, modules: dict[str, Path]) -> str | None:
    """The package module ``name`` loads (the longest of its prefixes that is one), None for none or itself."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name if name and name != module else None


def _targets(module: str, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """The memstore modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if modules[module].name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix for a in node.names]
    return [found for name in names if (found := _resolve(name, module, modules)) is not None]


_NAMED = re.compile(r"^memstore(?:\.[A-Za-z_]\w*)+(?P<attr>:[A-Za-z_][\w.]*)?$")


def named(module: str, source: str, modules: dict[str, Path] | None = None) -> tuple[set[str], set[str]]:
    """The package modules a module's strings name: by ``"package.module:attr"`` (a reference, as an
    import is), and by a dotted module name (an entry-point group's name aside; a package of
    templates or prompts is named so in its own room)."""
    modules = MODULES if modules is None else modules
    references, names = set(), set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        found = _NAMED.match(node.value)
        if found is None or node.value in GROUPS:
            continue
        target = _resolve(node.value.partition(":")[0], module, modules)
        if target is not None:
            (references if found["attr"] else names).add(target)
    return references, names


def edges_of(module: str, source: str, modules: dict[str, Path] | None = None) -> tuple[set[str], set[str], set[str]]:
    """What one module imports or names by reference, what else its strings name, and what it
    imports inside a function (of the package's modules)."""
    modules = MODULES if modules is None else modules
    tree = ast.parse(source)
    edges, names = named(module, source, modules)
    inside: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            edges.update(_targets(module, node, modules))
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    inside.update(_targets(module, node, modules))
    return edges, names, inside


def _imports() -> tuple[dict[str, set[str]], set[tuple[str, str]], dict[str, set[str]]]:
    """Every module's imports and references of other memstore modules, the imports made inside a
    function, and every module's imports, references and names together."""
    edges: dict[str, set[str]] = {}
    inside: set[tuple[str, str]] = set()
    every: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        edges[module], names, lazy = edges_of(module, path.read_text(encoding="utf-8"))
        every[module] = edges[module] | names
        inside.update((module, target) for target in lazy)
    return edges, inside, every


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
                    work.append((child, iter(sorted(edges.get(child, ())))))
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


def room_of(module: str) -> int | None:
    """The position of ``module``'s room in `ROOMS` (its longest member that holds it), None for none."""
    best: tuple[int, int] | None = None
    for position, room in enumerate(ROOMS):
        for member in room:
            holds = module == member or (member != "memstore" and module.startswith(member + "."))
            if holds and (best is None or len(member) > best[1]):
                best = (position, len(member))
    return None if best is None else best[0]


def climbs(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The imports and names that run from a room to a higher one."""
    found = set()
    for module, targets in edges.items():
        low = room_of(module)
        for target in targets:
            high = room_of(target)
            if low is not None and high is not None and high > low:
                found.add((module, target))
    return found


def _without_debts(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    return {m: {t for t in targets if (m, t) not in KNOWN_CLIMBS} for m, targets in edges.items()}


def test_no_import_cycle_anywhere_in_the_package() -> None:
    assert _cycles(_without_debts(_GRAPH()[0])) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_is_in_a_room() -> None:
    assert [m for m in MODULES if room_of(m) is None] == []
    assert [member for room in ROOMS for member in room if member not in MODULES] == []


def test_the_rooms_import_one_way() -> None:
    found = climbs(_GRAPH()[2])
    assert found - KNOWN_CLIMBS == set(), "new imports (or names) that climb a room"
    assert KNOWN_CLIMBS - found == set(), "climbs that are gone: take them off KNOWN_CLIMBS"


def _planted(tmp_path: Path, module: str, source: str) -> dict[str, set[str]]:
    """The edges of a module planted in a copy of the package's module list (its source in ``tmp_path``)."""
    path = tmp_path / (module.rpartition(".")[2] + ".py")
    path.write_text(source, encoding="utf-8")
    modules = {**MODULES, module: path}
    edges, names, _ = edges_of(module, path.read_text(encoding="utf-8"), modules)
    return {module: edges | names}


def test_a_string_that_names_a_higher_room_is_a_climb(tmp_path: Path) -> None:
    module = "memstore.harness.run.planted"
    source = 'GRADING = "memstore.harness.grading.trial:TrialGrading"\nSTUBS = "memstore.agents.stubs"\n'
    assert climbs(_planted(tmp_path, module, source)) == {
        (module, "memstore.harness.grading.trial"),
        (module, "memstore.agents.stubs"),
    }
    # a group of the plug-in table, a lower room's name, a sentence that mentions a module: no climb
    harmless = 'GROUP = "memstore.agents"\nDOWN = "memstore.store:open_store"\nTEXT = "see memstore.cli:main"\n'
    assert climbs(_planted(tmp_path, module, harmless)) == set()


def test_an_import_from_a_higher_room_is_a_climb(tmp_path: Path) -> None:
    planted = _planted(tmp_path, "memstore.verify.planted", "def f():\n    from memstore.commands import eval\n")
    assert climbs(planted) == {("memstore.verify.planted", "memstore.commands.eval")}
    upward = _planted(tmp_path, "memstore.backends.planted", "import memstore.harness.world\n")
    assert climbs(upward) == {("memstore.backends.planted", "memstore.harness.world")}
    assert climbs(_planted(tmp_path, "memstore.testing.planted", "import memstore.agents.stubs\n")) == set()


def test_statistics_is_a_leaf() -> None:
    for leaf in LEAVES:
        assert {t for t in _GRAPH()[0][leaf] if t.startswith("memstore.harness")} == set()


def test_the_records_import_only_the_core() -> None:
    # the spine from grading to report: any stage may read it because it reads no stage
    core = set(ROOMS[0])
    for module in (m for m in MODULES if m.startswith("memstore.harness.records")):
        outside = {t for t in _GRAPH()[0][module] if not t.startswith("memstore.harness.records")}
        assert outside <= core, (module, outside - core)


def test_imports_inside_functions_are_the_listed_ones() -> None:
    assert set() == _GRAPH()[1] - LAZY, "new imports inside functions: import at the top (or list a deliberate one)"
    assert set() == LAZY - _GRAPH()[1], "lazy imports that are gone: take them off LAZY"


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
