"""Reading facts off code, as a coding agent would write them: constants and versions, function
defaults, where a class or function is defined; each with its line, its text and how to find
it again (Python by its syntax tree, other files by pattern). What `mining` labels."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from memstore.verify.codebase import Codebase, ReadStatus

__all__ = ["CODE_SUFFIXES", "PROSE_SUFFIXES", "STOP_WORDS", "Fact", "facts_in", "file_lines", "mined_file"]

_MAX_FILE_LINES = 20_000
_PATTERN_CONSTANT = re.compile(
    r"^\s*(?:export\s+)?(?:const\s+|final\s+|static\s+|var\s+|let\s+)*"
    r"(?P<name>[A-Z][A-Z0-9_]{2,})\s*(?::\s*[\w.\[\]]+\s*)?[:=]\s*(?P<value>\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|v?\d+(?:\.\d+)*)\s*[;,]?\s*$"
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


def file_lines(codebase: Codebase, path: str) -> tuple[str, ...] | None:
    read = codebase.read(path)
    if read.status is not ReadStatus.OK or len(read.lines) > _MAX_FILE_LINES:
        return None
    return read.lines


def _python_facts(path: str, lines: Sequence[str], cited: bool = True) -> Iterator[Fact]:
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return
    for node in tree.body:
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
        segment = ast.get_source_segment("\n".join(lines), node)
        if segment is not None and "\n" not in segment and len(segment) <= 60:
            return segment
    return None


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
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if not node.name.startswith("__") or node.name == "__init__":
            yield Fact("definition", prefix + node.name, path, node.lineno, None)
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
    r"^\s*\"?(?P<name>version)\"?\s*[:=]\s*(?P<value>\"[^\"\n]{1,40}\"|'[^'\n]{1,40}')\s*,?\s*$"
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


def facts_in(codebase: Codebase, path: str, *, cited: bool = True, unique: bool = True) -> list[Fact]:
    lines = file_lines(codebase, path)
    if lines is None:
        return []
    found = list(_python_facts(path, lines, cited) if path.endswith(".py") else _pattern_facts(path, lines))
    if not unique:
        return found
    names = [(f.kind, f.name, f.param) for f in found]
    return [f for f in found if names.count((f.kind, f.name, f.param)) == 1]  # overloads, conditional defs: ambiguous
