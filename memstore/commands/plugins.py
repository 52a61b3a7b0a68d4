"""``memstore plugins``: every kind memstore plugs in, its entry-point group, and each plug-in with its source."""

from __future__ import annotations

import click

from memstore.commands._shared import safe
from memstore.plugins import TABLE, listing

__all__ = ["plugins_command"]


@click.command(name="plugins")
def plugins_command() -> None:
    """List every plug-in of every kind (stores, agents, agent schemes, metrics, charts, gates,
    gradings, MCP tool mappings, commands): its entry-point group, its name, what it names, and
    where it comes from (built-in: memstore's own; else the distribution that declares it). A
    plug-in that is not used says why."""
    rows = listing()
    for registry in TABLE:
        click.echo(f"{registry.kind} ({registry.group})")
        mine = [r for r in rows if r.kind == registry.kind]
        width = max((len(r.name) for r in mine), default=0)
        value = max((len(r.value) for r in mine), default=0)
        for row in mine:
            note = f"  {row.note}" if row.note else ""
            click.echo(safe(f"  {row.name:<{width}}  {row.value:<{value}}  {row.source}{note}"))
