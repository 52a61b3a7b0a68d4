"""Reading facts off code, as a coding agent would write them: constants and versions, function
defaults, where a class or function is defined, a function's parameters, a class's bases, the
versions of the dependencies a project pins; each with its line, its text and how to find it
again (Python by its syntax tree, other files by pattern). What `mining` labels."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from memstore.verify import Codebase, ReadStatus, syntax_tree

__all__ = [
    "CODE_SUFFIXES",
    "PROSE_SUFFIXES",
    "STOP_WORDS",
    "Fact",
    "Mined",
    "facts_in",
    "file_lines",
    "mined_file",
    "parsed",
]

_MAX_FILE_LINES = 20_000
_PATTERN_CONSTANT = re.compile(
    r"^\s*(?:export\s+)?(?:const\s+|final\s+|static\s+|var\s+|let\s+)*"
    r"(?P<name>[A-Z][A-Z0-9_]{2,})\s*(?::\s*[\w.\[\]]+\s*)?[:=]\s*(?P<value>\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|v?\d+(?:\.\d+)*)\s*+[;,]?\s*+$"
)


@dataclass(frozen=True)
class Fact:
    """One thing the code at --from says, with how to find it again at --to."""

    kind: str
    name: str  # the constant, function or class (qualified within its module)
    path: str
    line: int
    value: str | None  # a constant's value or a default, as written in the code
    param: str | None = None  # for a default
    body: str | None = None  # for a definition: what it does (its body, docstring aside), as a syntax tree's text
    shape: str | None = None  # for a definition: its parameters (a function) or bases (a class), as above


@dataclass(frozen=True)
class Mined:
    """A memory as an agent would have written it at ``--from``, and its truth at ``--to``."""

    key: str
    kind: str  # one of MINED_KINDS
    subject: str
    fact: str
    path: str  # cited at --from
    line: int
    snippet: str
    truth: str  # valid | moved | contradicted | missing | unsupported
    now_path: str | None = None  # where it stands at --to (still true, or changed)
    now_line: int | None = None
    old_value: str | None = None  # the value the fact states
    new_value: str | None = None  # the value at --to, for a changed value (a renamed one's new name)
    sort: str = ""  # "renamed", "near-miss", "literal" (`memstore.harness.scenarios.mined_variants`), or ""
    param: str | None = None  # the parameter a default is of
    name: str = ""  # the name of code the fact is about

    @property
    def origin(self) -> str:
        if self.sort in {"near-miss", "literal"}:
            return "adversarial"  # never true: a wrong fact behind a real citation
        return {"unsupported": "adversarial", "contradicted": "stale", "missing": "stale"}.get(self.truth, "genuine")


def file_lines(codebase: Codebase, path: str) -> tuple[str, ...] | None:
    read = codebase.read(path)
    if read.status is not ReadStatus.OK or len(read.lines) > _MAX_FILE_LINES:
        return None
    return read.lines


def parsed(lines: Sequence[str]) -> ast.Module | None:
    """The syntax tree of a file's lines; None for code Python cannot parse, or nested too deeply
    to read (`memstore.verify.pycode.syntax_tree`: the facts are read off it recursively)."""
    return syntax_tree(lines)


def _python_facts(path: str, lines: Sequence[str], cited: bool = True) -> Iterator[Fact]:
    tree = parsed(lines)
    for node in tree.body if tree is not None else ():
        yield from _node_facts(path, lines, node, "", cited)
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                yield from _node_facts(path, lines, inner, f"{node.name}.", cited)


def _literal(lines: Sequence[str], node: ast.expr, *, flags: bool = False) -> str | None:
    """The source text of a simple literal (a string or a number; with ``flags``, ``True``,
    ``False`` and ``None`` too, as a parameter's default often is)."""
    if isinstance(node, ast.Constant) and (
        (isinstance(node.value, str | int | float) and not isinstance(node.value, bool))
        or (flags and (node.value is None or isinstance(node.value, bool)))
    ):
        segment = _segment(lines, node)
        if segment is not None and len(segment) <= 60:
            return segment
    return None


def _segment(lines: Sequence[str], node: ast.expr) -> str | None:
    """The source text of a node on one line (None for one that spans lines). By hand: the
    standard library's ``ast.get_source_segment`` splits the whole file again at every call."""
    if node.end_lineno != node.lineno or node.end_col_offset is None or not 0 < node.lineno <= len(lines):
        return None
    encoded = lines[node.lineno - 1].encode("utf-8")  # the offsets count UTF-8 bytes
    return encoded[node.col_offset : node.end_col_offset].decode("utf-8", errors="replace")


_BODY_CHARS = 4_000  # of a definition's syntax tree kept to compare it with another's


def _body(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """What a definition does, its own name and docstring aside, as its syntax tree's text."""
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # the docstring
    return "\n".join(ast.dump(statement, annotate_fields=False) for statement in body)[:_BODY_CHARS]


def _shape(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """A definition's parameters (a function's) or bases (a class's), as its syntax tree's text."""
    if isinstance(node, ast.ClassDef):
        return "class " + ", ".join(ast.dump(b, annotate_fields=False) for b in node.bases)
    return "def " + ast.dump(node.args, annotate_fields=False)


def _sources(lines: Sequence[str], nodes: Sequence[ast.expr]) -> str | None:
    """The source text of simple expressions (names and attributes: a class's bases), joined."""
    parts = []
    for node in nodes:
        if not isinstance(node, ast.Name | ast.Attribute):
            return None
        segment = _segment(lines, node)
        if segment is None:
            return None
        parts.append(segment)
    return ", ".join(parts)


def _node_facts(path: str, lines: Sequence[str], node: ast.stmt, prefix: str, cited: bool) -> Iterator[Fact]:
    """The facts a statement holds, each at the line that shows it (a default at its parameter's
    line, which is the ``def`` line only in a one-line signature); ``cited``: only those whose
    line holds the whole literal, as when writing memories; otherwise all (when labelling them)."""
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and value is not None:
            name = targets[0].id
            literal = _literal(lines, value)
            if literal is not None and (name.isupper() or name.startswith("__")) and len(name) >= 3:
                yield Fact("constant", prefix + name, path, node.lineno, literal)
            elif isinstance(value, ast.Name) and not cited:  # an alias left for an old name: OLD = NEW
                yield Fact("alias", prefix + name, path, node.lineno, value.id)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if not node.name.startswith("__") or node.name == "__init__":
            yield Fact("definition", prefix + node.name, path, node.lineno, None, body=_body(node), shape=_shape(node))
        if isinstance(node, ast.ClassDef) and node.bases:
            bases = _sources(lines, node.bases)
            if bases is not None and (node.lineno == node.bases[-1].end_lineno or not cited):
                yield Fact("base", prefix + node.name, path, node.lineno, bases)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            not node.name.startswith("_") or node.name == "__init__"
        ):
            names = [a.arg for a in [*node.args.posonlyargs, *node.args.args] if a.arg not in {"self", "cls"}]
            names += [f"*{node.args.vararg.arg}"] if node.args.vararg else []
            names += [a.arg for a in node.args.kwonlyargs]
            names += [f"**{node.args.kwarg.arg}"] if node.args.kwarg else []
            if names:
                yield Fact("signature", prefix + node.name, path, node.lineno, ", ".join(names))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            positional = [*arguments.posonlyargs, *arguments.args]
            defaults = list(
                zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True)
            )
            defaults += [
                (a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None
            ]
            for argument, default in defaults:
                literal = _literal(lines, default, flags=True)
                if literal is not None and (argument.lineno == default.lineno or not cited):
                    yield Fact("default", prefix + node.name, path, default.lineno, literal, argument.arg)


# What is mined by default: source code, and the configuration that pins versions and settings.
CODE_SUFFIXES = frozenset(
    ".py .pyi .js .jsx .mjs .cjs .ts .tsx .go .rs .java .kt .kts .scala .c .h .cc .cpp .hpp .cs .rb .php "  # noqa: SIM905
    ".swift .m .lua .sh .toml .cfg .ini .json .yaml .yml".split()
)
# Prose, mined only when asked (``--prose``): docs say ``the class was`` as often as code says ``class Was``.
PROSE_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc"})
# English words a pattern reads as a name in a sentence (``class was``, ``function and``): never a name.
STOP_WORDS = frozenset(
    """a about after all also an and any are as at be been before being both but by can could did do does each
    either for from had has have here how if in into is it its may might more most must no nor not now of on
    once only or other our out over same shall should so some such than that the their them then there these
    they this those through to too under until up upon very was we were what when where whether which while who
    whom why will with within without would yet you your based called named used using defined instead itself
    new old one two first last next""".split()  # noqa: SIM905
)


def mined_file(path: str, *, prose: bool = False) -> bool:
    """Whether ``path`` is mined: code and configuration, and prose (with the examples and docs
    folders) only when asked; never tests, hidden files, lock files or assets (images, SVG, HTML, data)."""
    if path.startswith((".", "tests/", "test/")) or "/tests/" in path or path.endswith(".lock"):
        return False
    if not prose and PurePosixPath(path).parts[0] in _NOT_THE_PROJECT:
        return False
    if any(part.startswith(".") for part in PurePosixPath(path).parts):
        return False
    suffix = PurePosixPath(path).suffix.lower()
    return suffix in CODE_SUFFIXES or (prose and suffix in PROSE_SUFFIXES)


# Folders of code that is not the project's own (examples, documentation builds, benchmarks):
# memories an agent writes are about the project; these are mined only with ``prose``.
_NOT_THE_PROJECT = frozenset({"examples", "example", "docs", "doc", "benchmarks", "bench", "artwork"})
_COMMENT = re.compile(r"^\s*(?://|#|\*|/\*|--|;)")


_PATTERN_VERSION = re.compile(
    r"^\s*\"?(?P<name>version)\"?\s*[:=]\s*(?P<value>\"[^\"\n]{1,40}\"|'[^'\n]{1,40}')\s*+,?\s*+$"
)
_PATTERN_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub\s+)?(?:public\s+|private\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:class|function|interface|struct|enum|trait|fn|func)\s+(?P<name>[A-Za-z_]\w{2,})"
)


def _pattern_facts(path: str, lines: Sequence[str]) -> Iterator[Fact]:
    """What files other than Python say, by pattern: constants (``MAX_SIZE = 10``), version
    strings (``"version": "1.2.0"``) and definitions (``export class Client``, ``fn parse``)."""
    prose = PurePosixPath(path).suffix.lower() in PROSE_SUFFIXES
    for number, text in enumerate(lines, 1):
        if _COMMENT.match(text):
            continue
        match = _PATTERN_CONSTANT.match(text) or _PATTERN_VERSION.match(text)
        if match:
            yield Fact("constant", match["name"], path, number, match["value"])
            continue
        match = _PATTERN_DEFINITION.match(text)
        if match and match["name"].lower() not in STOP_WORDS and not (prose and match["name"].islower()):
            yield Fact("definition", match["name"], path, number, None)


# A pinned requirement on a line of its own: ``"click>=8.0",`` (pyproject.toml, setup.py) or
# ``    click>=8.0`` (setup.cfg): the project's name, and its version specifier as written. The runs
# of spaces after it are crossed once (possessive): split every way, they made a line of spaces cubic.
_REQUIREMENT = re.compile(
    r"""^\s*["']?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[\w,\s-]+\])?\s*"""
    r"""(?P<value>(?:[<>=!~]=?|===)\s*[\w.*+!-]+(?:\s*,\s*(?:[<>=!~]=?|===)\s*[\w.*+!-]+)*)"""
    r"""\s*+(?:;[^"'\n]*)?["']?\s*+,?\s*+(?:#.*)?$"""
)
# where a list of requirements starts: ``dependencies = [``, ``install_requires =`` and, in a
# pyproject's tables of extras and groups, any ``name = [`` whose items are requirements
_REQUIREMENTS_START = re.compile(
    r"^\s*(?:(?:dependencies|requires|install_requires|tests_require)\s*[=:]|[\w.-]+\s*=\s*\[\s*$)"
)


def _dependency_facts(path: str, lines: Sequence[str]) -> Iterator[Fact]:
    """The versions a project pins for what it depends on, in the lists that declare them
    (``dependencies = [...]``, ``install_requires = ...``), one requirement a line."""
    inside = False
    for number, text in enumerate(lines, 1):
        if _REQUIREMENTS_START.match(text):
            inside = True
            continue
        if inside and (not text.strip() or re.match(r"^\s*(?:\]|\)|\[|[A-Za-z_][\w-]*\s*[=:])", text)):
            inside = bool(text.strip()) and not re.match(r"^\s*(?:\]|\)|\[|[A-Za-z_][\w-]*\s*[=:])", text)
            continue
        match = _REQUIREMENT.match(text) if inside else None
        if match:
            yield Fact("dependency", match["name"], path, number, " ".join(match["value"].split()))


def facts_in(codebase: Codebase, path: str, *, cited: bool = True, unique: bool = True) -> list[Fact]:
    lines = file_lines(codebase, path)
    if lines is None:
        return []
    found = list(_python_facts(path, lines, cited) if path.endswith(".py") else _pattern_facts(path, lines))
    if PurePosixPath(path).name in {"pyproject.toml", "setup.cfg", "setup.py"} and "/" not in path:
        found += _dependency_facts(path, lines)
    if not unique:
        return found
    names = [(f.kind, f.name, f.param) for f in found]
    return [f for f in found if names.count((f.kind, f.name, f.param)) == 1]  # overloads, conditional defs: ambiguous
