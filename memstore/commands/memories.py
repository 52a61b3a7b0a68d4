"""``memstore memories``: inspect and edit a store by hand."""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import click
from rich.table import Table

from memstore.clock import Clock, SystemClock
from memstore.commands._shared import CommandError, StoreContext, console, plain, safe, store_options
from memstore.errors import MemstoreError
from memstore.model import Citation, Kind, Memory, MemoryDraft, Surface
from memstore.store import list_every
from memstore.transfer import ImportLine, ImportProblems, check_lines, export_lines, read_lines, store_lines
from memstore.verify import GitCodebase, anchor, instructions_in

__all__ = ["memories"]

_SURFACE = click.Choice([s.value for s in Surface])
_FORMAT = click.Choice(["table", "json"])


def _age(moment: datetime, now: datetime) -> str:
    seconds = int((now - moment).total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if abs(seconds) >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def _now(ctx: StoreContext) -> datetime:
    clock: Clock = getattr(ctx.store, "clock", SystemClock())
    return clock.now()


def _expires(memory: Memory, ctx: StoreContext, now: datetime) -> str:
    """Time left in the expiry window, for stores that say what their window is."""
    expiry: timedelta | None = getattr(ctx.store, "expiry", None)
    if expiry is None:
        return "-"
    hours = int((memory.refreshed_at + expiry - now).total_seconds() // 3600)
    return f"in {hours // 24}d {hours % 24}h"


def _print_json(payload: object) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def _print_memory(memory: Memory) -> None:
    echo = click.echo
    echo(safe(f"{memory.id}  [{memory.status.value}] {memory.kind.value} in {memory.repo}"))
    echo(f"  subject:   {safe(memory.subject)}")
    echo(f"  fact:      {safe(memory.fact)}")
    for citation in memory.citations:
        echo(f"  cites:     {safe(citation)}")
    if memory.reason:
        echo(f"  reason:    {safe(memory.reason)}")
    echo(f"  author:    {safe(memory.author)} via {memory.surface.value}")
    echo(f"  created:   {memory.created_at.isoformat()}")
    echo(f"  refreshed: {memory.refreshed_at.isoformat()}")
    if memory.supersedes:
        echo(f"  corrects:  {safe(memory.supersedes)}")
    if memory.retired_reason is not None:
        echo(f"  retired:   {safe(memory.retired_reason)}")


@click.group()
def memories() -> None:
    """Inspect and edit the memories of a store by hand."""


@memories.command()
@store_options(create=True)
@click.option("--repo", required=True, help="Repository, owner/name.")
@click.option("--kind", type=click.Choice([k.value for k in Kind]), default="fact", show_default=True)
@click.option("--subject", required=True, help="The topic, e.g. 'API version synchronization'.")
@click.option("--fact", required=True, help="The claim itself.")
@click.option("--cite", "citations", multiple=True, metavar="PATH:LINE", help="A citation; repeat for more.")
@click.option("--reason", default="", help="Why it matters.")
@click.option("--surface", type=_SURFACE, default="cli", show_default=True)
@click.option("--supersedes", metavar="ID", default=None, help="Store as a correction of this memory.")
@click.option(
    "--anchor",
    "anchor_repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Record each citation's text and commit from this git repository's HEAD (refused if it is not there).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored memory as JSON.")
def add(
    ctx: StoreContext,
    repo: str,
    kind: str,
    subject: str,
    fact: str,
    citations: tuple[str, ...],
    reason: str,
    surface: str,
    supersedes: str | None,
    anchor_repo: Path | None,
    as_json: bool,
) -> None:
    """Store a memory (or, with --supersedes, a correction).

    A memory whose text carries instructions to the reader ("ignore your task", `curl ... | sh`)
    is stored, with a warning on stderr: `memstore verify` flags it and no agent should follow it.
    """
    cited: list[Citation | str] = list(citations)
    if anchor_repo is not None:
        codebase = GitCodebase(anchor_repo, "HEAD")
        cited = [anchor(codebase, Citation.parse(c)) for c in citations]
    draft = MemoryDraft(repo, Kind(kind), subject, fact, cited, reason)
    memory = ctx.store.store(draft, actor=ctx.actor, surface=Surface(surface), supersedes=supersedes)
    if as_json:
        _print_json(memory.to_dict())
    else:
        verb = f"corrected {supersedes} as" if supersedes else "stored"
        click.echo(f"{verb} {memory.id} ({memory.kind.value} in {memory.repo})")
    for found in instructions_in(memory):
        click.echo(safe(f"warning: {memory.id} carries instructions to the reader: {found}"), err=True)


@memories.command(name="list")
@store_options(read_only=True)
@click.option("--repo", required=True, help="Repository, owner/name.")
@click.option("--surface", type=_SURFACE, default="cli", show_default=True, help="Which tiers apply.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--format", "fmt", type=_FORMAT, default="table", show_default=True)
def list_(ctx: StoreContext, repo: str, surface: str, limit: int, fmt: str) -> None:
    """List the recent memories of a repository, newest first, as the agent would get them."""
    found = ctx.store.recent(repo, actor=ctx.actor, surface=Surface(surface), limit=limit)
    if fmt == "json":
        _print_json([m.to_dict() for m in found])
        return
    if not found:
        click.echo(safe(f"no memories for {repo} visible to {ctx.actor.user} on {surface}"))
        return
    now = _now(ctx)
    noun = "memory" if len(found) == 1 else "memories"
    table = Table(title=plain(f"{len(found)} {noun} of {repo} ({surface}, as {ctx.actor.user})"))
    for column in ("id", "kind", "citations", "refreshed", "expires"):
        table.add_column(column, no_wrap=True)
    for column in ("subject", "fact"):
        table.add_column(column, overflow="fold", ratio=1)
    for m in found:
        table.add_row(
            plain(m.id),
            plain(m.kind.value),
            plain("\n".join(str(c) for c in m.citations)),
            plain(_age(m.refreshed_at, now)),
            plain(_expires(m, ctx, now)),
            plain(m.subject),
            plain(m.fact if len(m.fact) <= 160 else m.fact[:159] + "…"),
        )
    console().print(table)


@memories.command()
@store_options(read_only=True)
@click.argument("memory_id")
@click.option("--history", "with_history", is_flag=True, help="Show every version, oldest first.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(ctx: StoreContext, memory_id: str, with_history: bool, fmt: str) -> None:
    """Show one memory, or its whole history."""
    found = (
        ctx.store.history(memory_id, actor=ctx.actor) if with_history else [ctx.store.get(memory_id, actor=ctx.actor)]
    )
    if fmt == "json":
        _print_json([m.to_dict() for m in found] if with_history else found[0].to_dict())
        return
    for index, memory in enumerate(found):
        if index:
            click.echo()
        _print_memory(memory)


@memories.command()
@store_options()
@click.argument("memory_id")
def refresh(ctx: StoreContext, memory_id: str) -> None:
    """Mark a memory validated and used: its 28-day window starts again."""
    memory = ctx.store.refresh(memory_id, actor=ctx.actor)
    click.echo(f"refreshed {memory.id} at {memory.refreshed_at.isoformat()}")


@memories.command()
@store_options()
@click.argument("memory_id")
@click.option("--reason", required=True, help="Why it is taken out of use.")
def retire(ctx: StoreContext, memory_id: str, reason: str) -> None:
    """Take a memory out of use without a replacement."""
    ctx.store.retire(memory_id, actor=ctx.actor, reason=reason)
    click.echo(f"retired {memory_id}")


@memories.command()
@store_options()
@click.argument("memory_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete(ctx: StoreContext, memory_id: str, yes: bool) -> None:
    """Delete a memory and every version of it."""
    memory = ctx.store.get(memory_id, actor=ctx.actor)
    if not yes and sys.stdin.isatty():
        click.confirm(safe(f"Delete {memory.id} ({memory.subject!r}) with its history?"), abort=True)
    ctx.store.delete(memory_id, actor=ctx.actor)
    click.echo(f"deleted {memory_id}")


@memories.command()
@store_options()
def sweep(ctx: StoreContext) -> None:
    """Delete every expired memory."""
    count = ctx.store.sweep()
    click.echo(f"swept {count} expired {'memory' if count == 1 else 'memories'}")


_IMPORT_CAP = 256 * 1024 * 1024


@memories.command(name="import")
@store_options(create=True)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--repo", default=None, metavar="OWNER/NAME", help="The repository of every memory (needed for mined lines)."
)
@click.option(
    "--anchor",
    "anchor_repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Anchor every citation again at this git repository's HEAD (its text and commit); a line it lacks is refused.",
)
@click.option("--surface", type=_SURFACE, default="cli", show_default=True, help="Recorded as where they were written.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check every line, and ask the store whether you may store each; store nothing.",
)
@click.option(
    "--include-false",
    is_flag=True,
    help="Import the memories a verdict benchmark file labels false too (skipped by default, with a warning).",
)
def import_(
    ctx: StoreContext,
    file: Path,
    repo: str | None,
    anchor_repo: Path | None,
    surface: str,
    dry_run: bool,
    include_false: bool,
) -> None:
    """Store the memories of FILE (JSON lines: `memstore memories export`, or the miner's
    .verdicts.jsonl). All or nothing: every line is checked first, the store is asked about each,
    and one that cannot be stored stores nothing."""
    if file.stat().st_size > _IMPORT_CAP:
        raise CommandError(f"{file} is larger than {_IMPORT_CAP // (1024 * 1024)} MiB: split it")
    try:
        codebase = GitCodebase(anchor_repo, "HEAD") if anchor_repo is not None else None
        with file.open(encoding="utf-8") as handle:
            lines = read_lines(handle, repo=repo, codebase=codebase)
        lines = _false_ones(file, lines, include_false)
        anchored = f" (citations anchored at {(codebase.commit or '')[:12]})" if codebase is not None else ""
        repos = ", ".join(sorted({found.draft.repo for found in lines})) or "-"
        if dry_run:
            asked = check_lines(ctx.store, lines, actor=ctx.actor, surface=Surface(surface))
            unasked = "" if asked else " (permissions not checked: this store cannot say without storing)"
            click.echo(safe(f"would import {len(lines)} memories into {repos}{anchored}{unasked}"))
            return
        stored = store_lines(ctx.store, lines, actor=ctx.actor, surface=Surface(surface))
    except UnicodeDecodeError as exc:
        raise CommandError(f"{file} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    except ImportProblems as exc:
        if exc.stored:
            noun = "memory" if len(exc.stored) == 1 else "memories"
            raise CommandError(
                f"{file}: stopped at a line the store refused; {len(exc.stored)} {noun} stored before it "
                f"could not be taken back: {', '.join(exc.stored)}\n{exc}"
            ) from exc
        raise CommandError(f"{file}: nothing imported; {len(exc.problems)} line(s) cannot be stored:\n{exc}") from exc
    except MemstoreError as exc:
        raise CommandError(f"{file}: nothing imported: {exc}") from exc
    click.echo(safe(f"imported {len(stored)} memories into {repos}{anchored}"))


def _false_ones(file: Path, lines: list[ImportLine], include: bool) -> list[ImportLine]:
    """The lines to import: a verdict benchmark's false memories (its deliberately wrong ones)
    only with ``--include-false``; either way a warning says how many and which labels."""
    false = [found for found in lines if found.labelled_false]
    if not false:
        return lines
    labels = ", ".join(f"{n} {label}" for label, n in Counter(f.labelled_false for f in false).most_common())
    if include:
        click.echo(safe(f"warning: {file} labels {len(false)} of these memories false ({labels}): imported"), err=True)
        return lines
    click.echo(
        safe(
            f"warning: {file} is a verdict benchmark: {len(false)} of its memories are labelled false ({labels}) "
            "and are not imported; --include-false imports them too"
        ),
        err=True,
    )
    return [found for found in lines if not found.labelled_false]


@memories.command(name="export")
@store_options(read_only=True)
@click.option("--repo", required=True, help="Repository, owner/name.")
@click.option("--surface", type=_SURFACE, default="cli", show_default=True, help="Which tiers apply.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File to write (default: standard output).",
)
def export(ctx: StoreContext, repo: str, surface: str, out: Path | None) -> None:
    """Write the live memories of a repository that you may see, as JSON lines (newest first),
    for `memstore memories import` into another store. Exit status 2 when the store could not
    list them all (it says where it stopped)."""
    listing = list_every(ctx.store, repo, actor=ctx.actor, surface=Surface(surface))
    if out is None:
        for line in export_lines(listing.memories):
            click.echo(line, nl=False)
    else:
        partial = out.with_name(f".{out.name}.part")
        with partial.open("w", encoding="utf-8") as handle:
            handle.writelines(export_lines(listing.memories))
        partial.replace(out)
        click.echo(safe(f"exported {len(listing.memories)} memories of {repo} -> {out}"))
    stopped = listing.where_stopped()
    if stopped is not None:
        raise CommandError(f"the export is incomplete: {stopped}")
