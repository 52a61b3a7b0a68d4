"""``memstore verify``: verify every memory of a repository against its code, and optionally fix them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
from rich.progress import track
from rich.table import Table

from memstore.commands._shared import CommandError, StoreContext, console, plain, repository_name
from memstore.commands._shared import store_options as _store_options
from memstore.errors import MemstoreError
from memstore.model import Memory, Surface
from memstore.store import list_every
from memstore.verify import (
    Codebase,
    GitCodebase,
    GitRepository,
    Verdict,
    VerdictStatus,
    WorkingTree,
    verify_memories,
)

__all__ = ["verify"]

_PROGRESS_FROM = 50


def _codebase(path: Path, ref: str | None) -> Codebase:
    repo = GitRepository(path)
    if ref is not None or repo.is_bare():
        return GitCodebase(repo, ref or "HEAD")
    return WorkingTree(path, history=GitCodebase(repo, "HEAD"))


def _fix(ctx: StoreContext, memory: Memory, verdict: Verdict) -> str:
    """Store the correction, or retire what cannot be used; say what was done."""
    try:
        if verdict.usable and verdict.corrected is None:
            return ""
        if verdict.corrected is not None:
            new = ctx.store.store(verdict.corrected, actor=ctx.actor, surface=Surface.CLI, supersedes=memory.id)
            return f"corrected as {new.id}"
        why = f"it carries instructions to the reader ({_kinds(verdict)})" if verdict.instructions else verdict.reason
        ctx.store.retire(memory.id, actor=ctx.actor, reason=f"memstore verify: {why}")
        return "retired"
    except MemstoreError as exc:
        return f"not fixed: {exc}"


def _evidence(verdict: Verdict) -> list[str]:
    lines = []
    for check in verdict.checks:
        if check.status.value == "valid":
            continue
        line = f"{check.citation} {check.status.value}"
        if check.status.readable and check.where != str(check.citation):
            line += f" -> {check.where}"
        if check.snippet is not None and check.text is not None and check.snippet != check.text:
            line += f"\n  was: {check.snippet.strip()[:100]}\n  now: {check.text.strip()[:100]}"
        if check.problem:
            line += f" ({check.problem})"
        lines.append(line)
    return lines


def _kinds(verdict: Verdict) -> str:
    return ", ".join(dict.fromkeys(i.kind.value for i in verdict.instructions))


def _shown(verdict: Verdict) -> str:
    """The verdict as the table shows it: its status ("gone" where the cited code was deleted: the
    status ``missing``), and "flagged" for a memory that carries instructions."""
    status = _word(verdict)
    return f"{status}, flagged" if verdict.instructions else status


def _word(verdict: Verdict) -> str:
    return "gone" if verdict.status is VerdictStatus.MISSING else verdict.status.value


def _proposed(verdict: Verdict) -> str:
    """The correction the verifier proposes (what ``--fix`` stores), or what ``--fix`` would do instead."""
    corrected = verdict.corrected
    if corrected is not None:
        return f"{corrected.fact} ({', '.join(str(c) for c in corrected.citations)})"
    return "" if verdict.usable else "retire it"


def _flags(verdict: Verdict) -> list[str]:
    """One line per instruction to the reader the memory carries (its kind, field and text)."""
    return [f"instructions to the reader: {i}" for i in verdict.instructions]


def _why(verdict: Verdict) -> str:
    """The judge that decided and why ("values: src/a.py:3 no longer says '30': it says '60'")."""
    why = f"{verdict.judge}: {verdict.reason}" if verdict.judge else verdict.reason
    return why + (f" (uncertain: {verdict.uncertain})" if verdict.uncertain else "")


def _as_json(memory: Memory, verdict: Verdict, action: str) -> dict[str, Any]:
    corrected = verdict.corrected
    return {
        "memory": memory.to_dict(),
        "verdict": verdict.status.value,
        "usable": verdict.usable,
        "instructions": [
            {"kind": i.kind.value, "field": i.field, "text": i.text, "start": i.start, "end": i.end}
            for i in verdict.instructions
        ],
        "judge": verdict.judge or None,
        "reason": verdict.reason,
        "uncertain": verdict.uncertain or None,
        "checks": [
            {
                "citation": str(c.citation),
                "status": c.status.value,
                "where": c.where,
                "was": c.snippet,
                "now": c.text,
                "problem": c.problem or None,
            }
            for c in verdict.checks
        ],
        "contradictions": [{"claim": c.claim, "found": c.found, "where": c.where} for c in verdict.contradictions],
        "corrected": None
        if corrected is None
        else {
            "subject": corrected.subject,
            "fact": corrected.fact,
            "citations": [str(c) for c in corrected.citations],
        },
        "action": action or None,
    }


def _fixed(actions: list[str]) -> str:
    """What ``--fix`` did, in one line: "--fix: 2 corrected (stored as new versions), 1 retired"."""
    corrected = sum(a.startswith("corrected") for a in actions)
    retired = sum(a == "retired" for a in actions)
    failed = sum(a.startswith("not fixed") for a in actions)
    done = [f"{corrected} corrected (stored as new versions)"] if corrected else []
    done += [f"{retired} retired"] if retired else []
    done += [f"{failed} not fixed (the table says why)"] if failed else []
    return "--fix: " + (", ".join(done) if done else "nothing to fix")


def _nothing_of(ctx: StoreContext, repo_name: str, *, given: bool) -> None:
    """No memory of ``repo_name``: refused (exit 2), with the repositories the store holds for this user."""
    came = "--name" if given else "the repository's origin (give --name OWNER/NAME)"
    lister = getattr(ctx.store, "repositories", None)
    if lister is None:
        raise CommandError(f"no memories of {repo_name} (from {came}); this store cannot list its repositories")
    held = lister(actor=ctx.actor)
    if repo_name in held:  # it held some: retired or superseded now
        return
    where = f"it holds memories of: {', '.join(held)}" if held else "it holds no memories you may read"
    raise CommandError(f"no memories of {repo_name} (from {came}) in the store; {where}")


def _progress(items: Iterable[Memory]) -> Iterable[Memory]:
    return track(items, description="verifying", console=console(stderr=True), transient=True)


@click.command()
@click.option(
    "--repo",
    "repo_path",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The git repository (work tree or bare).",
)
@click.option("--ref", default=None, help="Verify at this ref. Default: the work tree as it is (HEAD for bare).")
@click.option("--name", default=None, help="The repository's owner/name in the store. Default: from origin.")
@click.option("--fix", is_flag=True, help="Store corrections (supersede) and retire what cannot be used.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_store_options()
def verify(ctx: StoreContext, repo_path: Path, ref: str | None, name: str | None, fix: bool, fmt: str) -> None:
    """Verify every memory of a repository against its code.

    Exit status: 0 when every memory is usable (valid or re-anchored), 1 when bad memories
    were found (contradicted, unsupported, missing), 2 on an error, or when the store could not
    list every memory (it says where it stopped).
    """
    codebase = _codebase(repo_path, ref)
    repo_name = repository_name(GitRepository(repo_path), name)
    listing = list_every(ctx.store, repo_name, actor=ctx.actor, surface=Surface.CODE_REVIEW)
    memories = list(listing.memories)
    if not memories:
        _nothing_of(ctx, repo_name, given=name is not None)
    show_progress = sys.stderr.isatty() and len(memories) >= _PROGRESS_FROM
    verdicts = verify_memories(memories, codebase, progress=_progress if show_progress else None)
    actions = [_fix(ctx, m, v) if fix else "" for m, v in zip(memories, verdicts, strict=True)]
    bad = sum(not v.usable for v in verdicts)

    if fmt == "json":
        payload = [_as_json(m, v, a) for m, v, a in zip(memories, verdicts, actions, strict=True)]
        click.echo(json.dumps({"repo": repo_name, "ref": ref, "memories": payload}, indent=2, ensure_ascii=False))
    else:
        table = Table(title=plain(f"{len(memories)} memories of {repo_name} at {ref or 'the work tree'}"))
        for column in ("memory", "verdict", "subject", "evidence and reason", "proposed correction"):
            table.add_column(column, overflow="fold", no_wrap=column in {"memory", "verdict"})
        if fix:
            table.add_column("done (--fix)", overflow="fold")
        for memory, verdict, action in zip(memories, verdicts, actions, strict=True):
            said = "\n".join([*_flags(verdict), *_evidence(verdict), _why(verdict)])
            row = [memory.id, _shown(verdict), memory.subject, said, _proposed(verdict)]
            table.add_row(*(plain(cell) for cell in [*row, *([action or "nothing to do"] if fix else [])]))
        console().print(table)
        counts = {s: sum(_word(v) == s for v in verdicts) for s in dict.fromkeys(_word(v) for v in verdicts)}
        tally = [f"{n} {s}" for s, n in counts.items()]
        if flagged := sum(bool(v.instructions) for v in verdicts):
            tally.append(f"{flagged} flagged (instructions to the reader)")
        click.echo(", ".join(tally) or f"no live memories of {repo_name} to verify")
        if fix:
            click.echo(_fixed(actions))
    stopped = listing.where_stopped()
    if stopped is not None:
        raise CommandError(f"not every memory was verified: {stopped}")
    if bad:
        sys.exit(1)
