"""memstore.errors draws the package's whole exception hierarchy, and the drawing is the code:
every exception class of the package is drawn, under the class it derives from, and the
hierarchy in docs/store.md is the same drawing."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import click

import memstore.errors
from memstore.commands._shared import CommandError

ROOT = Path(__file__).parent.parent
DRAWING = re.compile(r"^```(?:text)?\n(MemstoreError\n.*?)^```", re.S | re.M)
BRANCH = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)")
ROOT_LINE = re.compile(r"^(?P<name>\w+)(?: \((?P<base>[\w.]+)\))?")
OUTSIDE = {"CommandError": CommandError}  # drawn, but kept with the command line: it must be click's


def _drawn(text: str) -> dict[str, str]:
    """Each class of the drawing in ``text`` with its parent: the class above it in the tree, or
    the base written beside a class drawn apart (``Interrupted (KeyboardInterrupt)``)."""
    found = DRAWING.search(text)
    assert found is not None, "no drawing of the hierarchy"
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in found.group(1).splitlines():
        branch = BRANCH.match(line)
        if branch:
            depth = len(branch.group("indent"))
            while stack and stack[-1][0] >= depth:
                stack.pop()
            parents[branch.group("name")] = stack[-1][1]
            stack.append((depth, branch.group("name")))
        elif line.strip():
            alone = ROOT_LINE.match(line)
            assert alone is not None, line
            parents[alone.group("name")] = (alone.group("base") or "Exception").rsplit(".", 1)[-1]
            stack = [(-1, alone.group("name"))]
    return parents


def _real() -> dict[str, str]:
    """Each exception class of memstore.errors (and the one kept outside) with its parent: its
    first base."""
    classes = {
        name: value
        for name, value in vars(memstore.errors).items()
        if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == "memstore.errors"
    }
    return {name: cls.__bases__[0].__name__ for name, cls in {**classes, **OUTSIDE}.items()}


def _exception_classes(sources: dict[str, str]) -> list[str]:
    """Every class in ``sources`` that derives from an exception (a built-in one, click's, or one
    derived so in ``sources``), as ``path:Name``."""
    known = {name for name in dir(builtins) if isinstance(getattr(builtins, name), type)}
    known = {name for name in known if issubclass(getattr(builtins, name), BaseException)} | {"ClickException"}
    classes = [
        (path, node)
        for path, text in sources.items()
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef)
    ]
    found: set[str] = set()
    while True:  # a class deriving from one found is one too
        more = {f"{path}:{node.name}" for path, node in classes if _derives(node, known)}
        if more <= found:
            return sorted(found)
        found |= more
        known |= {name.rsplit(":", 1)[1] for name in more}


def _derives(node: ast.ClassDef, known: set[str]) -> bool:
    return any(ast.unparse(base).rsplit(".", 1)[-1] in known for base in node.bases)


def test_the_drawing_is_the_hierarchy() -> None:
    assert _drawn(memstore.errors.__doc__ or "") == _real()


def test_every_exception_class_of_the_package_is_in_memstore_errors() -> None:
    sources = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in ROOT.glob("memstore/**/*.py")}
    elsewhere = [f for f in _exception_classes(sources) if not f.startswith("memstore/errors.py:")]
    assert elsewhere == ["memstore/commands/_shared.py:CommandError"]


def test_a_class_that_derives_from_an_exception_is_found_however_far() -> None:
    planted = {
        "a.py": "class Oops(ValueError): pass\nclass Worse(Oops): pass\nclass Plain: pass",
        "b.py": "def f():\n    class Inner(click.ClickException): pass\nclass Far(Worse): pass",
    }
    assert _exception_classes(planted) == ["a.py:Oops", "a.py:Worse", "b.py:Far", "b.py:Inner"]


def test_a_drawing_that_misses_a_class_or_misplaces_one_is_not_the_hierarchy() -> None:
    drawing = (memstore.errors.__doc__ or "").replace(" │         └── BadShard ", " │    └── BadShard      ")
    assert _drawn(drawing)["BadShard"] == "ConfigurationError" != _real()["BadShard"]
    missing = "\n".join(line for line in (memstore.errors.__doc__ or "").splitlines() if "GateFailed" not in line)
    assert "GateFailed" not in _drawn(missing)


def test_the_store_manual_draws_the_same_hierarchy() -> None:
    manual = (ROOT / "docs" / "store.md").read_text(encoding="utf-8")
    assert _drawn(manual) == _drawn(memstore.errors.__doc__ or "")


def test_the_command_line_error_is_clicks() -> None:
    assert issubclass(CommandError, click.ClickException)
