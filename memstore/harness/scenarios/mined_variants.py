"""Memories that were never true, behind citations that are: what a verifier that only checks
that a citation still stands lets through. Each is written from a genuine memory the miner
labelled (a constant or a default still true at ``--to``), and labelled from the syntax trees,
never by the verifier:

- a **near miss** (``near-miss``): the same sentence with a value near the code's but not equal
  (a number one off or doubled, a version with its last part bumped, a flag turned over, a
  name spelled another way, a parameter left out, a pin moved): ``contradicted``, the code's
  value recorded as the one a correction must state;
- a **claim the line does not make** (``literal``): the cited line's own name and literal, with
  something said of them that the syntax tree refutes: read from the environment (the tree
  assigns a literal), set only on one platform (the assignment is unconditional), deprecated
  and unused (the package reads it), ignored by its function (the body uses it), or guarded by
  a ``ValueError`` (the body raises none): ``unsupported``.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable
from dataclasses import replace

from memstore.harness.scenarios.mined_facts import Mined, file_lines, parsed
from memstore.harness.scenarios.wordings import say
from memstore.verify import Codebase

__all__ = ["literal_claims", "near_miss", "near_misses"]


def near_miss(value: str, kind: str, rng: random.Random) -> str | None:
    """A value near ``value`` (as written in code) but not equal to it, or None for one with no
    near neighbour worth saying (``None``, an empty string, a long text)."""
    quote = value[0] if value[:1] in {'"', "'"} and value[-1:] == value[:1] else ""
    inner = value[1:-1] if quote else value
    if kind == "signature":
        names = [n.strip() for n in value.split(",")]
        return ", ".join(names[:-1]) if len(names) >= 2 else None  # a parameter left out
    if kind == "dependency":
        bumped = _bump(value)
        return bumped if bumped != value else None
    if inner in {"True", "False"} and not quote:
        return "False" if inner == "True" else "True"
    if re.fullmatch(r"-?\d+", inner):
        number = int(inner)
        wrong = number + 1 if abs(number) < 2 or rng.random() < 0.5 else number * 2
        return f"{quote}{wrong}{quote}"
    if re.fullmatch(r"-?\d+\.\d+", inner):
        return f"{quote}{float(inner) * 2:g}{quote}" if float(inner) else None
    if re.fullmatch(r"v?\d+(?:\.\d+)+\w*", inner):
        return f"{quote}{_bump(inner)}{quote}"
    if quote and re.fullmatch(r"[-\w.]{2,40}", inner):
        if "_" in inner:
            other = inner.replace("_", "-")
        elif "-" in inner:
            other = inner.replace("-", "_")
        elif inner[-1].isdigit():
            other = _bump(inner)
        else:
            other = inner + "s"
        return f"{quote}{other}{quote}"
    return None


def _bump(text: str) -> str:
    """The last number in ``text`` plus one (``>=8.0`` -> ``>=8.1``; ``1.2.3`` -> ``1.2.4``)."""
    numbers = list(re.finditer(r"\d+", text))
    if not numbers:
        return text
    last = numbers[-1]
    return f"{text[: last.start()]}{int(last.group()) + 1}{text[last.end() :]}"


def near_misses(genuine: list[Mined], count: int, rng: random.Random) -> list[Mined]:
    """Up to ``count`` near misses (see the module docstring) of memories still true at --to."""
    kinds = {"constant", "default", "signature", "dependency"}
    sources = [m for m in genuine if m.truth in {"valid", "moved"} and m.old_value and m.kind in kinds]
    found = []
    for source in rng.sample(sources, min(len(sources), 3 * count)):
        assert source.old_value is not None
        wrong = near_miss(source.old_value, source.kind, rng)
        said = _said(source)
        if wrong is None or said is None:
            continue
        start, end = said
        found.append(
            replace(
                source,
                key=f"near-{source.key}",
                fact=source.fact[:start]
                + source.fact[start:end].replace(source.old_value, wrong, 1)
                + source.fact[end:],
                truth="contradicted",
                now_path=source.now_path or source.path,
                now_line=source.now_line or source.line,
                old_value=wrong,
                new_value=source.old_value,  # the code's value, at --from and at --to
                sort="near-miss",
            )
        )
        if len(found) == count:
            break
    return found


def _said(source: Mined) -> tuple[int, int] | None:
    """Where the fact states its value, in whichever wording it has: in backticks, in brackets (a
    signature), after its project's name (a pin), or as a word of its own."""
    assert source.old_value is not None
    value, fact = source.old_value, source.fact
    for form in (f"`{value}`", f"`({value})`", f"({value})", f"{source.name}{value}"):
        at = fact.find(form)
        if at >= 0:
            return at, at + len(form)
    match = re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", fact)
    return match.span() if match else None


def literal_claims(
    genuine: list[Mined], after: Codebase, count: int, rng: random.Random, *, fixed: bool = False
) -> list[Mined]:
    """Up to ``count`` claims the cited line does not make (see the module docstring), each
    refuted by the syntax trees at --to (where the memory's source still stands)."""
    sources = [m for m in genuine if m.truth in {"valid", "moved"} and m.kind in {"constant", "default"}]
    found = []
    trees: dict[str, ast.Module | None] = {}
    for source in rng.sample(sources, len(sources)):
        tree = _tree(after, source.now_path or source.path, trees)
        name = source.name or source.subject.split(" ")[0]
        templates = _CONSTANT_CLAIMS if source.kind == "constant" else _DEFAULT_CLAIMS
        for template in rng.sample(templates, len(templates)):
            said = template(source, name, tree, after, fixed)
            if said is not None:
                literal = replace(source, key=f"literal-{source.key}", fact=said, truth="unsupported", sort="literal")
                found.append(replace(literal, now_path=None, now_line=None, new_value=None))
                break
        if len(found) == count:
            break
    return found


def _tree(codebase: Codebase, path: str, cache: dict[str, ast.Module | None]) -> ast.Module | None:
    if path not in cache:
        lines = file_lines(codebase, path) if path.endswith(".py") else None
        cache[path] = parsed(lines) if lines is not None else None
    return cache[path]


def _function(tree: ast.Module | None, qualified: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function (or method, ``Owner.name``) of that name at the top of a module."""
    if tree is None:
        return None
    owner, _, name = qualified.rpartition(".")
    scope: list[ast.stmt] = tree.body
    if owner:
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        scope = cls.body if cls is not None else []
    found = [n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    return found[0] if len(found) == 1 else None


def _reads(node: ast.AST, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.Attribute) and n.attr == name)
        for n in ast.walk(node)
    )


ClaimMaker = Callable[[Mined, str, "ast.Module | None", Codebase, bool], "str | None"]


def _claim(kind: str, source: Mined, name: str, param: str | None = None, *, fixed: bool = False) -> str:
    fields = {"name": name, "value": source.old_value or "", "param": param or ""}
    return say(kind, source.key, fields, fixed=fixed)


def _from_environment(source: Mined, name: str, tree: ast.Module | None, after: Codebase, fixed: bool) -> str | None:
    # the miner reads constants only from assignments of literals at the top of a module or class
    return _claim("claim: environment", source, name, fixed=fixed)


def _one_platform(source: Mined, name: str, tree: ast.Module | None, after: Codebase, fixed: bool) -> str | None:
    # an assignment at the top of a module or class body is made on every platform
    return _claim("claim: platform", source, name, fixed=fixed)


def _deprecated(source: Mined, name: str, tree: ast.Module | None, after: Codebase, fixed: bool) -> str | None:
    short = name.rpartition(".")[2]
    path = source.now_path or source.path
    package = path.removeprefix("src/").split("/")[0]
    for other in after.paths():
        in_package = other.endswith(".py") and other.removeprefix("src/").split("/")[0] == package
        if in_package and short in _names_read(after, other):
            return _claim("claim: deprecated", source, name, fixed=fixed)
    return None  # nothing reads it: it may well be unused


_READ: dict[tuple[str, str], frozenset[str]] = {}  # (commit, path) -> the names its code reads


def _names_read(codebase: Codebase, path: str) -> frozenset[str]:
    key = (str(getattr(codebase, "commit", None) or id(codebase)), path)
    if key not in _READ:
        module = _tree(codebase, path, {})
        found = set()
        for n in ast.walk(module) if module is not None else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                found.add(n.id)
            elif isinstance(n, ast.Attribute):
                found.add(n.attr)
        if len(_READ) > 4096:
            _READ.clear()
        _READ[key] = frozenset(found)
    return _READ[key]


def _ignored(source: Mined, name: str, tree: ast.Module | None, after: Codebase, fixed: bool) -> str | None:
    function = _function(tree, name)
    param = source.param
    if function is None or param is None or not any(_reads(s, param) for s in function.body):
        return None
    return _claim("claim: ignores", source, name, param, fixed=fixed)


def _guarded(source: Mined, name: str, tree: ast.Module | None, after: Codebase, fixed: bool) -> str | None:
    function = _function(tree, name)
    param = source.param
    if function is None or param is None:
        return None
    raises = [
        n
        for n in ast.walk(function)
        if isinstance(n, ast.Raise) and n.exc is not None and "ValueError" in ast.dump(n.exc)
    ]
    if raises:
        return None
    return _claim("claim: raises", source, name, param, fixed=fixed)


_CONSTANT_CLAIMS: list[ClaimMaker] = [_from_environment, _one_platform, _deprecated]
_DEFAULT_CLAIMS: list[ClaimMaker] = [_ignored, _guarded]
