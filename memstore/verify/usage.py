"""The names a package's modules read: what a claim that a name is "no longer used" is checked on.

Such a claim is about the whole package, not the cited lines, so checking it means parsing every
module of the package. That cost grows with the package (18 MB of generated modules once took two
minutes and 2.3 GB), so the scan is bounded: past `SCAN_FILES` modules or `SCAN_BYTES` of source
it stops, and the claim is not checked (the scan says why) rather than judged on part of the
package. A scan is kept per repository and commit, since the code at a commit never changes: the
memories verified against one commit share it.
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from dataclasses import dataclass

from memstore.verify.codebase import Codebase, GitCodebase

__all__ = ["SCAN_BYTES", "SCAN_FILES", "PackageReads", "package_of", "package_reads"]

SCAN_FILES = 1_000  # Python modules of one package scanned at most
SCAN_BYTES = 4 * 1024 * 1024  # their source, in UTF-8 bytes: a few seconds of parsing at worst
_KEPT = 32  # scans kept: (git directory, commit, package) -> what it found


@dataclass(frozen=True)
class PackageReads:
    """What a scan of one package found.

    Attributes:
        package: the package (its top folder, ``src/`` aside).
        names: every name its modules read (a load of a name, any attribute).
        unchecked: why the scan stopped short of the whole package ("" when it read it all).
    """

    package: str
    names: frozenset[str] = frozenset()
    unchecked: str = ""


_SCANS: OrderedDict[tuple[str, str, str], PackageReads] = OrderedDict()
_LOCK = threading.Lock()


def package_of(path: str) -> str:
    """The package a file belongs to: its top folder, under ``src/`` or not."""
    return path.removeprefix("src/").split("/")[0]


def package_reads(path: str, codebase: Codebase) -> PackageReads:
    """The names read by the modules of the package ``path`` belongs to, scanned within the bounds
    (and kept per commit for a `GitCodebase`, whose code at a commit never changes)."""
    package = package_of(path)
    key = None
    if isinstance(codebase, GitCodebase) and codebase.commit is not None:
        key = (str(codebase.repo.git_dir), codebase.commit, package)
        with _LOCK:
            if key in _SCANS:
                _SCANS.move_to_end(key)
                return _SCANS[key]
    found = _scan(package, codebase)
    if key is not None:
        with _LOCK:
            _SCANS[key] = found
            while len(_SCANS) > _KEPT:
                _SCANS.popitem(last=False)
    return found


def _scan(package: str, codebase: Codebase) -> PackageReads:
    modules = [p for p in codebase.paths() if p.endswith(".py") and package_of(p) == package]
    if len(modules) > SCAN_FILES:
        return PackageReads(
            package, unchecked=f"{package} has {len(modules):,} modules, past the {SCAN_FILES:,} scanned"
        )
    names: set[str] = set()
    size = 0
    for module in modules:
        read = codebase.read(module)
        if not read.ok:
            continue
        source = "\n".join(read.lines)
        size += len(source.encode()) + 1
        if size > SCAN_BYTES:
            return PackageReads(package, unchecked=f"{package} has more than the {SCAN_BYTES:,} bytes of code scanned")
        names |= _names_read(source, read.key)
    return PackageReads(package, frozenset(names))


_BY_CONTENT: dict[str, frozenset[str]] = {}  # file content key -> the names its code reads (across commits)


def _names_read(source: str, key: str) -> frozenset[str]:
    """The names a module's code reads. Its tree is parsed here and dropped, not kept with the
    trees the judges share (`memstore.verify.pycode`): a package's trees would fill memory."""
    found = _BY_CONTENT.get(key) if key else None
    if found is None:
        try:
            tree: ast.Module | None = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        found = frozenset(
            n.id if isinstance(n, ast.Name) else n.attr
            for n in (ast.walk(tree) if tree is not None else ())
            if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or isinstance(n, ast.Attribute)
        )
        if key:
            if len(_BY_CONTENT) > 5_000:
                _BY_CONTENT.clear()
            _BY_CONTENT[key] = found
    return found
