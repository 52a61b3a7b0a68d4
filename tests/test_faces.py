"""Every stage has a face: its public names re-exported from its ``__init__`` with a sorted
``__all__``, its modules inside (httpx's ``test_exported_members.py``, docs/design.md "Faces").

A module of another room imports a stage through its face (``from memstore.harness.grading import
TrialGrading``), never one of its modules; inside a stage, modules import each other directly, so
that a face never waits on itself. Tests may import insides. A face exports no name that one of
its own modules also bears: importing that module later would rebind the package's attribute.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memstore"

# The stages and core packages, each with a face; a module outside one imports only its face.
STAGES = (
    "memstore.verify",
    "memstore.mcp",
    "memstore.backends",
    "memstore.harness.scenarios",
    "memstore.harness.run",
    "memstore.harness.grading",
    "memstore.harness.analysis",
    "memstore.harness.runfolder",
    "memstore.harness.report",
    "memstore.agents",
    "memstore.testing",
)
# Faces within a stage (its own rooms); inside the stage their modules are imported directly.
INNER_FACES = (
    "memstore.harness.run.isolation",
    "memstore.harness.run.boundary",
    "memstore.harness.run.play",
    "memstore.harness.run.runner",
)
FACES = STAGES + INNER_FACES

# Modules still imported by name from other rooms, on their way behind a face: none (a unit and what
# it gives back, the last, are the run stage's face's now). The list can only shrink.
MOVING: tuple[str, ...] = ()


def sort_key(name: str) -> tuple[int, str]:
    """``__all__``'s order (ruff's RUF022, isort's): CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement reaches into (a ``from`` import's module, and each
    name after it, which may be a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _stage_of(name: str) -> str | None:
    return next((s for s in STAGES if name == s or name.startswith(s + ".")), None)


def _known_module(name: str) -> bool:
    parts = name.split(".")[1:]
    return PACKAGE.joinpath(*parts).with_suffix(".py").is_file() or PACKAGE.joinpath(*parts, "__init__.py").is_file()


def inside_imports(module: str, source: str, is_package: bool = False) -> list[tuple[int, str]]:
    """The imports of ``module`` that reach past another stage's face: (line, the module reached)."""
    own = _stage_of(module)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for name in _imported(module, is_package, node):
            stage = _stage_of(name)
            if stage is None or stage == own or name == stage or not _known_module(name):
                continue
            if not any(name == m or name.startswith(m + ".") for m in MOVING):
                found.append((node.lineno, name))
    return sorted(set(found))


def test_every_stage_is_a_package_with_a_face() -> None:
    for face in FACES:
        assert PACKAGE.joinpath(*face.split(".")[1:], "__init__.py").is_file(), face


def test_the_modules_still_imported_by_name_are_there() -> None:
    # once they have moved, take them off MOVING: the list can only shrink
    assert [m for m in MOVING if not _known_module(m)] == []


@pytest.mark.parametrize("face", FACES)
def test_a_face_lists_its_names_sorted_and_each_exists(face: str) -> None:
    module = importlib.import_module(face)
    names = list(module.__all__)
    assert names == sorted(names, key=sort_key)
    assert len(set(names)) == len(names)
    assert [n for n in names if not hasattr(module, n)] == []


@pytest.mark.parametrize("face", FACES)
def test_a_face_exports_no_name_of_its_own_modules(face: str) -> None:
    module = importlib.import_module(face)
    inner = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert sorted(inner & set(module.__all__)) == []


def test_no_module_reaches_past_another_stage_s_face() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for line, name in inside_imports(module, path.read_text(encoding="utf-8"), path.name == "__init__.py"):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    assert found == []


def test_the_checker_sees_an_import_past_a_face() -> None:
    planted = "from memstore.harness.grading.scoring import score\nimport memstore.verify.git\n"
    assert inside_imports("memstore.harness.report.x", planted) == [
        (1, "memstore.harness.grading.scoring"),
        (2, "memstore.verify.git"),
    ]
    # a face, a module of the importer's own stage, a relative import inside it: no finding
    fine = "from memstore.harness.grading import TrialGrading\nfrom memstore.harness.report import gates\n"
    assert inside_imports("memstore.harness.report.x", fine) == []
    assert inside_imports("memstore.harness.report.x", "from .gates import Gate\n") == []
    # a module imported through its package by name (``from memstore.verify import git``) is reached too
    assert inside_imports("memstore.harness.world", "from memstore.verify import git\n") == [(1, "memstore.verify.git")]
