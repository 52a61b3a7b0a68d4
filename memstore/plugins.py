"""The plug-in table: every kind of thing memstore plugs in, with its entry-point group.

One `Registry` per kind, all here, so a reader finds every way in at once and ``memstore
plugins`` lists them. memstore's own built-ins are entry points of its own distribution
(``pyproject.toml``), declared there by the package that owns them, exactly as a third party's
are: no module names a built-in, and a plug-in installed with pip is found the same way.

=================  ==========================  =====================================================
kind               entry-point group           an entry names
=================  ==========================  =====================================================
store              ``memstore.backends``       ``factory(uri, options) -> MemoryStore`` for a scheme
agent              ``memstore.agents``         ``factory(params) -> Agent``
agent scheme       ``memstore.agent_schemes``  ``factory(argument, runtime) -> Agent`` for ``scheme:``
metric             ``memstore.metrics``        a module whose ``@metric`` functions register
chart              ``memstore.charts``         a module whose ``@chart`` functions register
gate               ``memstore.gates``          a module whose ``@gate`` families register
grading            ``memstore.gradings``       a trial's grading (``run.play.handoff.Grading``)
MCP tool mapping   ``memstore.mcp_mappings``   a ``ToolMapping`` class for ``mcp:NAME``
command            ``memstore.commands``       a click command of the ``memstore`` program
=================  ==========================  =====================================================

Each kind's own module binds its registry under a typed name (`memstore.store.BACKENDS`,
`memstore.harness.run.boundary.agents.AGENTS`, ...), next to the protocol its factories follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

from memstore.registry import Registry, source_of

__all__ = [
    "AGENTS",
    "AGENT_SCHEMES",
    "CHARTS",
    "COMMANDS",
    "GATES",
    "GRADINGS",
    "GROUPS",
    "MCP_MAPPINGS",
    "METRICS",
    "STORES",
    "TABLE",
    "Plugin",
    "listing",
]

STORES: Registry[Any] = Registry("store", "memstore.backends", fold_case=True)
AGENTS: Registry[Any] = Registry("agent", "memstore.agents")
AGENT_SCHEMES: Registry[Any] = Registry("agent scheme", "memstore.agent_schemes")
METRICS: Registry[Any] = Registry("metric", "memstore.metrics", by_module=True, by_reference=False)
CHARTS: Registry[Any] = Registry("chart", "memstore.charts", by_module=True, by_reference=False)
GATES: Registry[Any] = Registry("gate", "memstore.gates", by_module=True, by_reference=False)
GRADINGS: Registry[Any] = Registry("grading", "memstore.gradings")
MCP_MAPPINGS: Registry[Any] = Registry("MCP tool mapping", "memstore.mcp_mappings")
COMMANDS: Registry[Any] = Registry("command", "memstore.commands", by_reference=False)

TABLE: tuple[Registry[Any], ...] = (
    STORES,
    AGENTS,
    AGENT_SCHEMES,
    METRICS,
    CHARTS,
    GATES,
    GRADINGS,
    MCP_MAPPINGS,
    COMMANDS,
)
GROUPS = frozenset(registry.group for registry in TABLE)


@dataclass(frozen=True)
class Plugin:
    """One row of ``memstore plugins``: a plug-in of one kind, where it comes from, and whether it is used.

    Attributes:
        kind: what it is ("store", "agent", ...).
        group: the entry-point group it is declared in.
        name: its name (a store's scheme, an agent's name, a command's name...).
        value: what the entry point names (``package.module:attr``, or a module).
        source: ``built-in`` (memstore's own), ``registered`` (in this process), or the distribution's name.
        note: why it is not used, if it is not ("" when it is).
    """

    kind: str
    group: str
    name: str
    value: str
    source: str
    note: str = ""


def listing(table: tuple[Registry[Any], ...] = TABLE) -> list[Plugin]:
    """Every plug-in of every kind: the entry points in the order each registry uses them, those
    it leaves unused with the reason, then what was registered in this process."""
    found = []
    for registry in table:
        entries = registry.entries()
        found += [_row(registry, e) for e in entries.chosen.values()]
        found += [_row(registry, e, "shadowed: a built-in has this name") for e in entries.shadowed]
        found += [
            _row(registry, e, "refused: another plug-in has this name") for es in entries.clashes.values() for e in es
        ]
        found += [
            Plugin(registry.kind, registry.group, name, _where(factory), "registered")
            for name, factory in registry.registered.items()
            if not registry.by_module
        ]
    return found


def _row(registry: Registry[Any], entry: EntryPoint, note: str = "") -> Plugin:
    return Plugin(registry.kind, registry.group, entry.name, entry.value, source_of(entry), note)


def _where(factory: object) -> str:
    return f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}"
