"""What code says of a name, read off it the way a person reads it: for Python, its syntax tree
(a constant's or a class attribute's value, a parameter's default, a function's parameters, a
class's bases); for a project's metadata, the pin of a requirement. The verifier compares what a
fact states (`memstore.verify.stated`) with this, so a fact is valid only when the code says
what it says, not when its citation merely still stands.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memstore.verify.claims import code_form
from memstore.verify.stated import Stated, What

__all__ = [
    "MAX_SYNTAX_DEPTH",
    "TOO_DEEP",
    "Said",
    "agrees",
    "assigned_names",
    "names",
    "owner_scope",
    "owner_scopes",
    "said_of",
    "syntax_tree",
    "too_deep",
]


@dataclass(frozen=True)
class Said:
    """What the code says of the thing a fact names: the value as written there (None: it names
    the thing and gives it no value, a parameter with no default), and its line."""

    value: str | None
    line: int  # 1-based


# Levels of syntax read. Real code stays under 70 (the deepest of 13,000 files of packages and the
# standard library: 63), and 200 levels leave the recursive readers of trees far from their limit.
MAX_SYNTAX_DEPTH = 200
TOO_DEEP = f"too deeply nested to parse (more than {MAX_SYNTAX_DEPTH} levels of syntax)"

_TREES: dict[str, tuple[ast.Module | None, bool]] = {}  # file content key -> (its tree or None, too deep)


def syntax_tree(lines: Sequence[str], key: str = "") -> ast.Module | None:
    """The file's syntax tree, kept by content key; None for code Python cannot parse, or that
    nests more than `MAX_SYNTAX_DEPTH` levels deep (`too_deep`)."""
    return _parsed(lines, key)[0]


def too_deep(lines: Sequence[str], key: str = "") -> bool:
    """Whether the file's syntax nests more than `MAX_SYNTAX_DEPTH` levels deep (a 1,200-term
    expression, a 1,000-branch ``elif`` chain). Such a tree is never handed out: the standard
    library's readers of trees (``ast.dump``, ``ast.literal_eval``) and the judges' own recurse
    once per level, and would raise RecursionError a few hundred levels further down."""
    return _parsed(lines, key)[1]


def _parsed(lines: Sequence[str], key: str) -> tuple[ast.Module | None, bool]:
    if key and key in _TREES:
        return _TREES[key]
    found: tuple[ast.Module | None, bool]
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError):
        found = (None, False)
    except (RecursionError, MemoryError):  # the parser's own bound, a few thousand levels down
        found = (None, True)
    else:
        found = (tree, False) if _within(tree, MAX_SYNTAX_DEPTH) else (None, True)
    if key:
        if len(_TREES) > 2_000:
            _TREES.clear()
        _TREES[key] = found
    return found


def _within(tree: ast.AST, depth: int) -> bool:
    """Whether ``tree`` is at most ``depth`` levels deep (itself the first), read a level at a time."""
    level = [tree]
    for _ in range(depth):
        level = [child for node in level for child in ast.iter_child_nodes(node)]
        if not level:
            return True
    return False


def _segment(lines: Sequence[str], node: ast.AST) -> str | None:
    """The source of a node on one line (offsets count UTF-8 bytes); None across lines."""
    line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    start, stop = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if line is None or line != end or start is None or stop is None or not 0 < line <= len(lines):
        return None
    text: str = lines[line - 1].encode("utf-8")[start:stop].decode("utf-8", errors="replace")
    return text


def owner_scopes(tree: ast.Module, owner: str) -> list[list[ast.stmt]]:
    """The statements of the module (owner "") or of each of its classes named ``owner``."""
    if not owner:
        return [tree.body]
    return [n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]


def owner_scope(tree: ast.Module, owner: str) -> list[ast.stmt] | None:
    """The statements of the module (owner "") or of its class ``owner``; None when absent or ambiguous."""
    found = owner_scopes(tree, owner)
    return found[0] if len(found) == 1 else None


def _one(nodes: list[ast.stmt]) -> ast.stmt | None:
    return nodes[0] if len(nodes) == 1 else None


def _definition(tree: ast.Module, name: str, kinds: tuple[type, ...]) -> ast.stmt | None:
    owner, _, short = name.rpartition(".")
    scope = owner_scope(tree, owner)
    if scope is None:
        return None
    return _one([n for n in scope if isinstance(n, kinds) and getattr(n, "name", None) == short])


def said_of(stated: Stated, lines: Sequence[str], key: str = "", path: str = "") -> Said | None:
    """What the code of one file says of the thing ``stated`` names, or None when the file does
    not say it (not defined there, ambiguous, not Python)."""
    if stated.what is What.REQUIREMENT:
        return _requirement(stated, lines)
    if not path.endswith((".py", ".pyi")):
        return None
    tree = syntax_tree(lines, key)
    if tree is None:
        return None
    if stated.what is What.VALUE:
        owner, _, short = stated.name.rpartition(".")
        scope = owner_scope(tree, owner)
        if scope is None:
            return None
        assigned = _one([n for n in scope if isinstance(n, ast.Assign | ast.AnnAssign) and _targets(n) == [short]])
        value = getattr(assigned, "value", None)
        text = _segment(lines, value) if value is not None else None
        return Said(text, assigned.lineno) if assigned is not None and text is not None else None
    if stated.what is What.BASES:
        cls = _definition(tree, stated.name, (ast.ClassDef,))
        if not isinstance(cls, ast.ClassDef):
            return None
        bases = [_segment(lines, b) for b in cls.bases]
        return None if any(b is None for b in bases) else Said(", ".join(b for b in bases if b), cls.lineno)
    function = _definition(tree, stated.name, (ast.FunctionDef, ast.AsyncFunctionDef))
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if stated.what is What.PARAMETERS:
        return Said(", ".join(_parameter_names(function)), function.lineno)
    return _default(function, stated.param or "", lines)


def names(stated: Stated, lines: Sequence[str], key: str = "", path: str = "") -> bool:
    """Whether the file names what ``stated`` is about at all: defines the function, class or
    constant (once or more), or pins the requirement."""
    if said_of(stated, lines, key, path) is not None:
        return True
    if stated.what is What.REQUIREMENT or not path.endswith((".py", ".pyi")):
        return False
    tree = syntax_tree(lines, key)
    if tree is None:
        return False
    owner, _, short = stated.name.rpartition(".")
    nodes = [node for scope in owner_scopes(tree, owner) for node in scope]
    assigned = [node for node in nodes if isinstance(node, ast.Assign | ast.AnnAssign)]
    return any(getattr(n, "name", None) == short for n in nodes) or any(short in _targets(n) for n in assigned)


def assigned_names(lines: Sequence[str], key: str, path: str, owner: str = "") -> dict[str, str]:
    """Every name the module (or its class ``owner``) assigns a one-line value, with that value."""
    tree = syntax_tree(lines, key) if path.endswith((".py", ".pyi")) else None
    scope = owner_scope(tree, owner) if tree is not None else None
    found: dict[str, str] = {}
    for node in scope or ():
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and _targets(node):
            text = _segment(lines, node.value)
            if text is not None:
                found[_targets(node)[0]] = text
    return found


def _targets(node: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)] if len(targets) == 1 else []


def _parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args] if a.arg not in {"self", "cls"}]
    names += [f"*{arguments.vararg.arg}"] if arguments.vararg else []
    names += [a.arg for a in arguments.kwonlyargs]
    names += [f"**{arguments.kwarg.arg}"] if arguments.kwarg else []
    return names


def _default(function: ast.FunctionDef | ast.AsyncFunctionDef, param: str, lines: Sequence[str]) -> Said | None:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs: list[tuple[ast.arg, ast.expr | None]] = [(a, None) for a in positional]
    for index, value in enumerate(arguments.defaults, len(positional) - len(arguments.defaults)):
        pairs[index] = (positional[index], value)
    pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    found = [(a, d) for a, d in pairs if a.arg == param.lstrip("*")]
    if len(found) != 1:
        return None
    argument, given = found[0]
    if given is None:
        return Said(None, argument.lineno)  # the parameter is there, and takes no default
    text = _segment(lines, given)
    return Said(text, given.lineno) if text is not None else None


_REQUIREMENT = re.compile(
    r"""^\s*["']?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[\w,\s-]+\])?\s*"""
    r"""(?P<spec>(?:[<>=!~]=?|===)\s*[\w.*+!-]+(?:\s*,\s*(?:[<>=!~]=?|===)\s*[\w.*+!-]+)*)"""
)


def _requirement(stated: Stated, lines: Sequence[str]) -> Said | None:
    """The pin of the named requirement in a project's metadata: one line that names it."""
    want = _canonical(stated.name)
    found = [
        Said(" ".join(match["spec"].split()), number)
        for number, text in enumerate(lines, 1)
        if (match := _REQUIREMENT.match(text)) and _canonical(match["name"]) == want
    ]
    return found[0] if len(found) == 1 else None


def _canonical(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


def agrees(stated: Stated, said: Said) -> bool:
    """Whether what the code says is what the fact states."""
    if said.value is None:
        return False
    if stated.what is What.PARAMETERS:
        return _names(stated.value) == _names(said.value)
    if stated.what is What.REQUIREMENT:
        return sorted(map(code_form, stated.value.split(","))) == sorted(map(code_form, said.value.split(",")))
    if stated.what is What.BASES:
        return [code_form(b) for b in stated.value.split(",")] == [code_form(b) for b in said.value.split(",")]
    return _literal(stated.value) == _literal(said.value)


def _names(parameters: str) -> list[str]:
    """Parameter names in order (annotations, defaults and ``self`` aside)."""
    names = []
    for part in _top_level(parameters):
        match = re.match(r"\s*(\*{0,2}[A-Za-z_]\w*)", part)
        if match and match.group(1) not in {"self", "cls", "/", "*"}:
            names.append(match.group(1))
    return names


def _top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current] if current.strip() else parts


def _literal(text: str) -> str:
    """A value as Python reads it (``'a'`` and ``"a"``, ``0x1F`` and ``31`` alike; a string as its
    text, so ``v2.1`` stated without quotes is the code's ``"v2.1"``); else its code form."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        form = code_form(text).strip('"')
        if form.startswith("(") and form.endswith(")") and "," in form:
            form = form[1:-1]  # a tuple with its parentheses or without is one tuple
        return form
    return value if isinstance(value, str) else repr(value)
