"""``memstore plugins``: every kind memstore plugs in, its entry-point group, and each plug-in with its source."""

from __future__ import annotations

import textwrap

import click

from memstore.commands._shared import safe
from memstore.errors import MemstoreError
from memstore.plugins import TABLE, listing
from memstore.registry import Registry

__all__ = ["plugins_command"]


@click.command(name="plugins")
def plugins_command() -> None:
    """List every plug-in of every kind (stores, agents, agent schemes, metrics, charts, gates,
    gradings, MCP tool mappings, commands): its entry-point group, its name, what it names, and
    where it comes from (built-in: memstore's own; else the distribution that declares it). A
    plug-in that is not used says why. For the kinds whose modules register by decorator (metrics,
    charts, gate families), what those modules register, by name."""
    rows = listing()
    for registry in TABLE:
        click.echo(f"{registry.kind} ({registry.group})")
        mine = [r for r in rows if r.kind == registry.kind]
        width = max((len(r.name) for r in mine), default=0)
        value = max((len(r.value) for r in mine), default=0)
        for row in mine:
            note = f"  {row.note}" if row.note else ""
            click.echo(safe(f"  {row.name:<{width}}  {row.value:<{value}}  {row.source}{note}"))
        if registry.by_module:
            click.echo(safe(_registered(registry)))


def _registered(registry: Registry[object]) -> str:
    """The names the modules of a decorator kind register, wrapped (or why they could not be loaded)."""
    try:
        registry.load()
    except MemstoreError as exc:
        return f"    not loaded: {exc}"
    names = ", ".join(registry.registered) or "nothing"
    return textwrap.fill(f"registers: {names}", width=100, initial_indent="    ", subsequent_indent="      ")
