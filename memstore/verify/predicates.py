"""Claims a fact makes of code beyond its value, checked against the code they are about.

An adversarial memory can quote a cited line's own name and literal and say something of them
the line does not say: that the value is read from the environment, set on one platform only,
deprecated and unused; that a function ignores a parameter, or raises an error unless it has a
value. Its literals all stand in the code, so a verifier that compares literals passes it. Each
claim here names the evidence code would have to show, and looks for it where the claim is about
(the assignment of the name, the function's body, the package's modules):

- read from the environment: the value is not a literal (``os.environ``, ``getenv``);
- only on a platform: the assignment is under a condition that tests the platform;
- deprecated or no longer used: nothing in the package reads the name (a scan bounded in size,
  `memstore.verify.usage`: past its bound the claim is not checked, and the finding says so);
- ``f`` ignores ``p``: ``f``'s body never reads ``p``;
- ``f`` raises ``E`` (unless, when): ``f``'s body raises ``E``.

Where the code shows the opposite, the claim is refuted and the memory is unsupported. A claim
about code the cited files do not define is not judged here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memstore.verify.codebase import Codebase
from memstore.verify.pycode import owner_scope, owner_scopes, syntax_tree
from memstore.verify.usage import package_reads

__all__ = ["Finding", "refuted_claim"]

Found = tuple[ast.Assign | ast.AnnAssign, list[ast.expr], str]  # an assignment, its conditions, its file

_ENVIRONMENT = re.compile(r"(?i)\b(?:read|taken|loaded|comes?|set) from (?:the )?environment\b|\benvironment variable")
_PLATFORM = re.compile(
    r"(?i)\bonly on (?P<os>windows|linux|macos|mac|posix|unix)\b|\bon (?P<os2>windows|linux|macos) only\b"
)
_UNUSED = re.compile(r"(?i)\bdeprecated\b.*\b(?:no longer|not|never) (?:used|read)\b|\bno longer used\b|\bis unused\b")
_IGNORES = re.compile(r"`(?P<function>[A-Za-z_][\w.]*)` (?:ignores|never reads|never uses) `(?P<param>[A-Za-z_]\w*)`")
_RAISES = re.compile(r"`(?P<function>[A-Za-z_][\w.]*)` raises `(?P<error>[A-Za-z_]\w*(?:Error|Exception|Warning))`")
_NAMED = re.compile(r"`(?P<name>[A-Za-z_][\w.]*)`")


@dataclass(frozen=True)
class Finding:
    """What the code shows of a claim a fact makes of it.

    Attributes:
        reason: a sentence: why the code refutes the claim, or why the claim was not checked.
        refuted: True when the code refutes it; False when the evidence lies past what the
            verifier reads (the claim is then neither refuted nor borne out).
    """

    reason: str
    refuted: bool = True


def refuted_claim(fact: str, paths: Sequence[str], codebase: Codebase) -> Finding | None:
    """The code's refutation of a claim ``fact`` makes of what the files ``paths`` define, or of a
    claim it could not check; None when it refutes none (or the fact makes none of these claims)."""
    for found in _IGNORES.finditer(fact):
        function = _function(found["function"], paths, codebase)
        if function is not None and _reads(function.body, found["param"]):
            return Finding(f"{found['function']} reads {found['param']}: it does not ignore it")
    for found in _RAISES.finditer(fact):
        function = _function(found["function"], paths, codebase)
        if function is not None and not _raises(function, found["error"]):
            return Finding(f"{found['function']} raises no {found['error']}")
    named = _NAMED.match(fact.strip())
    if named is None:
        return None
    if (_ENVIRONMENT.search(fact) or _PLATFORM.search(fact)) and _literal_in_text(named["name"], paths, codebase):
        return Finding(f"{named['name']} is set to a literal, on every platform")  # a configuration file's setting
    assigned = _assignment(named["name"], paths, codebase)
    if assigned is None:
        return None
    statement, conditions, path = assigned
    if _ENVIRONMENT.search(fact) and isinstance(statement.value, ast.Constant):
        return Finding(f"{named['name']} is assigned a literal, not read from the environment")
    if _PLATFORM.search(fact) and not any(_tests_platform(c) for c in conditions):
        return Finding(f"{named['name']} is assigned on every platform")
    if _UNUSED.search(fact):
        reads = package_reads(path, codebase)
        if reads.unchecked:
            return Finding(f"that {named['name']} is no longer used was not checked: {reads.unchecked}", refuted=False)
        if named["name"].rpartition(".")[2] in reads.names:
            return Finding(f"{named['name']} is still read by the package")
    return None


def _literal_in_text(name: str, paths: Sequence[str], codebase: Codebase) -> bool:
    """Whether a cited file that is not Python sets ``name`` to a literal on a line of its own, at
    the top of the file's structure (no condition of its own around it: a setting)."""
    setting = re.compile(  # possessive: a run of spaces is crossed once, not split every way (quadratic)
        rf"\s*+{re.escape(name)}\s*+[:=]\s*+(?:\"[^\"]*+\"|'[^']*+'|-?\d[\w.]*+|true|false)\s*+,?\s*+(?:#.*)?$"
    )
    return any(
        not path.endswith((".py", ".pyi")) and any(setting.match(line) for line in codebase.read(path).lines)
        for path in dict.fromkeys(paths)
    )


def _trees(paths: Sequence[str], codebase: Codebase) -> Iterable[tuple[str, ast.Module]]:
    for path in dict.fromkeys(paths):
        if path.endswith((".py", ".pyi")):
            read = codebase.read(path)
            tree = syntax_tree(read.lines, read.key) if read.ok else None
            if tree is not None:
                yield path, tree


def _function(name: str, paths: Sequence[str], codebase: Codebase) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    owner, _, short = name.rpartition(".")
    found = []
    for _, tree in _trees(paths, codebase):
        nodes = [n for scope in owner_scopes(tree, owner) for n in scope]
        found += [n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == short]
    return found[0] if len(found) == 1 else None


def _assignment(name: str, paths: Sequence[str], codebase: Codebase) -> Found | None:
    """The one assignment of ``name`` (``Owner.NAME`` in a class) in the files, with the conditions
    of the ``if`` statements it sits under, and its file."""
    owner, _, short = name.rpartition(".")
    found: list[Found] = []
    for path, tree in _trees(paths, codebase):
        found += [(a, c, path) for a, c in _assignments_in(owner_scope(tree, owner) or [], short, [])]
    return found[0] if len(found) == 1 else None


def _assignments_in(
    body: list[ast.stmt], name: str, conditions: list[ast.expr]
) -> Iterable[tuple[ast.Assign, list[ast.expr]]]:
    for node in body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            yield node, conditions  # type: ignore[misc]  # an annotated assignment reads the same
        elif isinstance(node, ast.If):
            yield from _assignments_in(node.body, name, [*conditions, node.test])
            yield from _assignments_in(node.orelse, name, [*conditions, node.test])
        elif isinstance(node, ast.Try):
            yield from _assignments_in(node.body, name, conditions)


def _tests_platform(condition: ast.expr) -> bool:
    text = ast.dump(condition).lower()
    return any(word in text for word in ("platform", "'nt'", "os.name", "win32", "darwin", "'linux", "windows"))


def _reads(body: Iterable[ast.stmt], name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)) for s in body for n in ast.walk(s)
    )


def _raises(function: ast.FunctionDef | ast.AsyncFunctionDef, error: str) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if (isinstance(raised, ast.Name) and raised.id == error) or (
                isinstance(raised, ast.Attribute) and raised.attr == error
            ):
                return True
    return False
