"""One registry class for what memstore plugs in by name; `memstore.plugins` holds one per kind.

A `Registry` turns a name into a factory, looking in this order:

1. a factory registered in this process (``@registry.register(name)``, a decorator);
2. an entry point of the registry's group (``[project.entry-points."memstore.backends"]``):
   memstore's own built-ins are entry points of its own distribution, declared in its
   ``pyproject.toml`` like any plug-in's, so no module of the package names them;
3. a ``package.module:attr`` reference written where the name goes (for the kinds that take one).

The rules of the entry points (pluggy's ``load_setuptools_entrypoints``, with names kept apart):

- memstore's own entries are its built-ins, first and in the order ``pyproject.toml`` declares
  them; other distributions' follow, sorted by name;
- a plug-in may not take a built-in's name: the built-in is used, and ``memstore plugins`` shows
  the other as shadowed;
- two plug-ins that declare one name are refused when that name is asked for, naming both;
- a group that holds none of memstore's own entries means memstore is not installed (a checkout
  on ``PYTHONPATH`` alone): refused, with the fix.

Metrics, charts and gates register themselves with a decorator when their module is imported:
their entry points name modules, and `Registry.load` imports them, once, in that order.

Runs with several workers start fresh interpreters: `portable` gives what was registered in
this process as ``module:qualname`` references, `restore` registers them again in a worker, and
a factory a fresh interpreter cannot import (a lambda, a nested function, one in ``__main__``)
is refused before the run starts.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, distributions
from typing import Any, Generic, TypeVar

from memstore.errors import ConfigurationError

__all__ = ["DISTRIBUTION", "REFERENCE", "Entries", "Registry", "import_reference", "scan_now", "source_of"]

F = TypeVar("F")
REFERENCE = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
DISTRIBUTION = "agent-memstore"  # the distribution whose entry points are the built-ins (import name: memstore)


def import_reference(reference: str, kind: str) -> Any:
    """The object that ``package.module:attr`` names (``attr`` may be dotted), a ``kind`` factory.

    A module found nowhere on the path is looked for in the current folder too (added at the end
    of ``sys.path``, where installed packages still win), as ``python -m`` would find it: a
    ``mystore.py`` beside the user works without ``PYTHONPATH=.``.

    Raises:
        ConfigurationError: when it cannot be imported, or is not callable; one line that says
            where it looked.
    """
    found = REFERENCE.match(reference)
    if found is None:
        raise ConfigurationError(f"{reference!r} is not a package.module:attr reference to a {kind} factory")
    module = found["module"]
    try:
        target: Any = _import_here(module)
    except ImportError as exc:
        if _is_missing(exc, module):
            raise ConfigurationError(
                f"cannot import {kind} module {module!r} ({reference}): no module {exc.name!r} in the current "
                f"folder ({os.getcwd()}) or on the Python path of {sys.executable}"
            ) from exc
        where = _file_of(module)
        raise ConfigurationError(f"cannot import {kind} module {module!r} ({where or reference}): {exc}") from exc
    try:
        for part in found["attr"].split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        where = getattr(sys.modules.get(module), "__file__", None) or module
        raise ConfigurationError(f"module {module!r} ({where}) has no {kind} factory {found['attr']!r}") from exc
    if not callable(target):
        raise ConfigurationError(f"{reference!r} is not callable")
    return target


def _import_here(module: str) -> Any:
    """``module``, from the path or else from the current folder."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if not _is_missing(exc, module) or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        importlib.invalidate_caches()
        return importlib.import_module(module)


def _is_missing(exc: ImportError, module: str) -> bool:
    """Whether ``exc`` says ``module`` itself (or a package above it) is not there, not a module it imports."""
    name = exc.name if isinstance(exc, ModuleNotFoundError) else None
    return name is not None and (module == name or module.startswith(f"{name}."))


def _file_of(module: str) -> str | None:
    """Where ``module``'s source is, when it was found but failed to import."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


_SCANNED: dict[tuple[tuple[str, int], ...], tuple[int, dict[str, list[EntryPoint]]]] = {}
_SCANS = [0]  # scans made: a registry's sorted entries are of one scan


def _modified(folder: str) -> int:
    try:
        return os.stat(folder or ".").st_mtime_ns
    except OSError:
        return 0


def _scan() -> tuple[int, dict[str, list[EntryPoint]]]:
    """Every installed entry point by group, with the scan's number. A scan of every distribution
    takes milliseconds: it is read again only when ``sys.path`` or one of its folders changed (a
    distribution installed, or a test's added), as `importlib.metadata` itself caches by them."""
    key = tuple((folder, _modified(folder)) for folder in sys.path)
    found = _SCANNED.get(key)
    if found is None:
        groups: dict[str, list[EntryPoint]] = {}
        seen: set[str] = set()
        for dist in distributions():  # the first of each name on sys.path, as `entry_points()` takes them
            name = _normal(dist.metadata["Name"] or "")
            if name in seen:
                continue
            seen.add(name)
            for entry in dist.entry_points:
                groups.setdefault(entry.group, []).append(entry)
        _SCANS[0] += 1
        found = (_SCANS[0], groups)
        _SCANNED.clear()
        _SCANNED[key] = found
    return found


def scan_now() -> None:
    """Scan the installed entry points now, not at the first look-up (a fork server does, so
    that its forks find every registry's entries without reading each distribution again)."""
    _scan()


def _normal(name: str) -> str:
    """A distribution's name as packaging compares them (``agent_memstore`` is ``agent-memstore``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def source_of(entry: EntryPoint) -> str:
    """Who declares ``entry``: ``built-in`` for memstore's own distribution, else that distribution's name."""
    dist = getattr(entry, "dist", None)
    name = dist.name if dist is not None else "?"
    return "built-in" if _normal(name) == DISTRIBUTION else name


@dataclass(frozen=True)
class Entries:
    """One group's entry points, the rules applied (see the module docstring).

    Attributes:
        chosen: name -> the entry point used for it (built-ins first in declared order, then the rest by name).
        clashes: name -> the plug-ins that each declare it (none of them is used).
        shadowed: plug-ins that declare a built-in's name (not used).
    """

    chosen: dict[str, EntryPoint]
    clashes: dict[str, list[EntryPoint]]
    shadowed: list[EntryPoint]


class Registry(Generic[F]):
    """Names to factories of one kind (``kind`` names it in messages: "store", "agent", ...).

    ``fold_case``: names are case-insensitive (URI schemes); ``by_module``: its entry points name
    modules that register by decorator (`load`); ``by_reference``: a ``package.module:attr``
    written where a name goes is imported (not for commands: a typo would import a module).
    """

    def __init__(
        self, kind: str, group: str, *, fold_case: bool = False, by_module: bool = False, by_reference: bool = True
    ) -> None:
        self.kind, self.group = kind, group
        self.registered: dict[str, F] = {}
        self.by_module, self.by_reference = by_module, by_reference
        self._fold = fold_case
        self._loaded = False
        self._sorted: tuple[int, Entries] | None = None  # (the scan it was sorted from, the entries)

    def _key(self, name: str) -> str:
        return name.lower() if self._fold else name

    def entries(self) -> Entries:
        """The group's entry points, by the rules of the module docstring.

        Raises:
            ConfigurationError: none of them is memstore's own (memstore is not installed).
        """
        scan, scanned = _scan()
        if self._sorted is not None and self._sorted[0] == scan:
            return self._sorted[1]
        own: dict[str, EntryPoint] = {}
        others: dict[str, list[EntryPoint]] = {}
        for entry in scanned.get(self.group, []):
            key = self._key(entry.name)
            if source_of(entry) == "built-in":
                own.setdefault(key, entry)
            else:
                others.setdefault(key, []).append(entry)
        if not own:
            raise ConfigurationError(
                f"memstore's own {self.kind} plug-ins are not installed (no entry point of the {DISTRIBUTION} "
                f"distribution in the {self.group!r} group): install memstore (`pip install -e .` in a checkout) "
                "rather than running it from a folder on PYTHONPATH"
            )
        chosen = dict(own)
        clashes, shadowed = {}, []
        for key in sorted(others):
            if key in own:
                shadowed += others[key]
            elif len({source_of(e) for e in others[key]}) > 1:
                clashes[key] = others[key]
            else:
                chosen[key] = others[key][0]
        found = Entries(chosen, clashes, shadowed)
        self._sorted = (scan, found)
        return found

    def _entry(self, key: str) -> EntryPoint | None:
        """The entry point for ``key``, None for none.

        Raises:
            ConfigurationError: two plug-ins declare it.
        """
        found = self.entries()
        if key in found.clashes:
            who = " and ".join(sorted(f"{source_of(e)} ({e.value})" for e in found.clashes[key]))
            raise ConfigurationError(
                f"the {self.kind} {key!r} is declared by {who}: uninstall one of them, or name the one you mean "
                "as 'package.module:attr'"
            )
        return found.chosen.get(key)

    def _load(self, entry: EntryPoint) -> Any:
        try:
            return entry.load()
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(
                f"the {self.kind} plug-in {entry.name!r} ({entry.value}, from {source_of(entry)}) cannot be loaded: "
                f"{exc}"
            ) from exc

    def load(self) -> None:
        """For a kind that registers itself by decorator (metrics, charts, gates): import the
        modules the entry points name, once, built-ins first; what they register is then in
        `registered`, in that order."""
        if self._loaded:
            return
        self._loaded = True
        for entry in self.entries().chosen.values():
            self._load(entry)

    def register(self, name: str) -> Callable[[F], F]:
        """A decorator registering ``factory`` as ``name``."""

        def decorate(factory: F) -> F:
            self.registered[self._key(name)] = factory
            return factory

        return decorate

    @contextmanager
    def registration(self, name: str, factory: F) -> Iterator[None]:
        """``factory`` registered as ``name`` for the ``with`` block, the previous one restored after."""
        key = self._key(name)
        before = self.registered.get(key)
        self.registered[key] = factory
        try:
            yield
        finally:
            if before is None:
                self.registered.pop(key, None)
            else:
                self.registered[key] = before

    def knows(self, name: str) -> bool:
        """Whether ``name`` is registered or an entry point's (two plug-ins' too: `find` refuses it)."""
        key = self._key(name)
        found = self.entries()
        return key in self.registered or key in found.chosen or key in found.clashes

    def built_ins(self) -> list[str]:
        """The names memstore's own distribution declares, in the order it declares them."""
        return [key for key, entry in self.entries().chosen.items() if source_of(entry) == "built-in"]

    def names(self) -> list[str]:
        """Every name this registry knows, sorted (``module:attr`` references aside)."""
        found = self.entries()
        return sorted({*self.registered, *found.chosen, *found.clashes})

    def find(self, name: str) -> F | None:
        """The factory for ``name``, or None when no source has it.

        Raises:
            ConfigurationError: two plug-ins declare it, or it cannot be imported.
        """
        key = self._key(name)
        if key in self.registered:
            return self.registered[key]
        entry = self._entry(key)
        if entry is not None:
            return self._load(entry)  # type: ignore[no-any-return]
        if self.by_reference and REFERENCE.match(name):
            return import_reference(name, self.kind)  # type: ignore[no-any-return]
        return None

    def portable(self, names: Iterable[str]) -> dict[str, str]:
        """The names among ``names`` registered in this process, as references a worker can import.

        Raises:
            ConfigurationError: for a registered factory that a fresh interpreter cannot import.
        """
        found = {}
        for name in names:
            key = self._key(name)
            factory = self.registered.get(key)
            if factory is None:
                continue
            module, qualname = getattr(factory, "__module__", ""), getattr(factory, "__qualname__", "")
            if not module or module == "__main__" or "<" in qualname or "." in qualname or not qualname:
                raise ConfigurationError(
                    f"{self.kind} {name!r} was registered with {factory!r}, which worker processes cannot import "
                    "(a lambda, a nested function, or one in __main__): register a module-level factory, name it "
                    "as 'package.module:function', or run with --workers 1"
                )
            found[key] = f"{module}:{qualname}"
        return found

    def restore(self, references: Mapping[str, str]) -> None:
        """In a worker process: register the parent's factories again from their references."""
        for name, reference in references.items():
            self.registered[self._key(name)] = import_reference(reference, self.kind)
