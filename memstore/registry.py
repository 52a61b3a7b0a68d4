"""One registry for what memstore plugs in by name: store backends, agents, metrics and charts.

Backends and agents are factories found by name; metrics and charts register themselves with a
decorator (`memstore.harness.analysis.registry.metric`, `memstore.harness.report.charts.chart`)
when their module is imported, so their registries import the built-in modules and every module
of their entry-point group (``memstore.metrics``, ``memstore.charts``) on first use (`Registry.load`).

A `Registry` turns a name into a factory, looking in this order:

1. a factory registered in this process (``@registry.register(name)``, a decorator);
2. a built-in, named by its ``module:attr`` reference (imported when first asked for, so a
   built-in costs nothing until it is used and no import edge runs back up the stages);
3. an entry point in the registry's group (``[project.entry-points."memstore.backends"]``);
4. a ``package.module:attr`` reference written where the name goes.

Runs with several workers start fresh interpreters: `portable` gives what was registered in
this process as ``module:qualname`` references, `restore` registers them again in a worker, and
a factory a fresh interpreter cannot import (a lambda, a nested function, one in ``__main__``)
is refused before the run starts.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from memstore.errors import ConfigurationError

__all__ = ["REFERENCE", "Registry", "import_reference"]

F = TypeVar("F")
REFERENCE = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")


def import_reference(reference: str, kind: str) -> Any:
    """The object that ``package.module:attr`` names (``attr`` may be dotted), a ``kind`` factory.

    Raises:
        ConfigurationError: when it cannot be imported, or is not callable.
    """
    found = REFERENCE.match(reference)
    if found is None:
        raise ConfigurationError(f"{reference!r} is not a package.module:attr reference to a {kind} factory")
    try:
        target: Any = importlib.import_module(found["module"])
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {kind} module {found['module']!r} ({reference}): {exc}") from exc
    try:
        for part in found["attr"].split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise ConfigurationError(f"module {found['module']!r} has no {kind} factory {found['attr']!r}") from exc
    if not callable(target):
        raise ConfigurationError(f"{reference!r} is not callable")
    return target


class Registry(Generic[F]):
    """Names to factories of one kind (``kind`` names it in messages: "store", "agent", ...)."""

    def __init__(
        self,
        kind: str,
        group: str,
        built_in: Mapping[str, str],
        *,
        fold_case: bool = False,
        modules: tuple[str, ...] = (),
    ) -> None:
        self.kind, self.group, self.built_in = kind, group, dict(built_in)
        self.registered: dict[str, F] = {}
        self._fold = fold_case
        self._modules = modules  # for kinds that register by decorator: the built-in modules to import
        self._loaded = False

    def load(self) -> None:
        """For a kind that registers itself by decorator (metrics, charts): import the built-in
        modules, then every module the entry-point group names, once; what they register is then
        in `registered`, in that order."""
        if self._loaded:
            return
        self._loaded = True
        for module in self._modules:
            importlib.import_module(module)
        for entry in sorted(self._entry_points().values(), key=lambda ep: ep.name):
            try:
                entry.load()
            except (ImportError, AttributeError) as exc:
                raise ConfigurationError(
                    f"the {self.kind} plug-in {entry.name!r} ({entry.value}) cannot be loaded: {exc}"
                ) from exc

    def _key(self, name: str) -> str:
        return name.lower() if self._fold else name

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

    def _entry_points(self) -> dict[str, Any]:
        return {self._key(ep.name): ep for ep in entry_points(group=self.group)}

    def knows(self, name: str) -> bool:
        """Whether ``name`` is registered, built in or an entry point (the entry points, the slow
        part, looked at last)."""
        key = self._key(name)
        return key in self.registered or key in self.built_in or key in self._entry_points()

    def names(self) -> list[str]:
        """Every name this registry knows, sorted (``module:attr`` references aside)."""
        return sorted({*self.built_in, *self.registered, *self._entry_points()})

    def find(self, name: str) -> F | None:
        """The factory for ``name``, or None when no source has it."""
        key = self._key(name)
        if key in self.registered:
            return self.registered[key]
        if key in self.built_in:
            return import_reference(self.built_in[key], self.kind)  # type: ignore[no-any-return]
        plugins = self._entry_points()
        if key in plugins:
            return plugins[key].load()  # type: ignore[no-any-return]
        if REFERENCE.match(name):
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
            if factory is None or key in self.built_in:
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
