"""``memstore mine REPO --from REF --to REF``: memories and their truth from a repository's history,
as a scenario the harness runs and a verdict benchmark file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import yaml

from memstore.commands._shared import CommandError, console, plain
from memstore.errors import MemstoreError
from memstore.harness.scenarios import MINED_KINDS, Mined, load_file, mine, mined_file, scenario_document
from memstore.harness.trees import scratch_folder
from memstore.harness.world import build_problems
from memstore.verify import GitCodebase

__all__ = ["mine_command"]


class _Literal(str):
    """Text YAML writes as a block, so a mined file reads like the code it holds."""


def _literal(dumper: yaml.SafeDumper, data: _Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|" if "\n" in data else None)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, _literal)


def _blocks(value: object) -> object:
    if isinstance(value, dict):
        return {k: _blocks(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blocks(v) for v in value]
    if isinstance(value, str) and "\n" in value and not any(line != line.rstrip() for line in value.splitlines()):
        return _Literal(value)
    return value


def _write(target: Path, document: dict[str, object]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.part")
    partial.write_text(
        yaml.dump(_blocks(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8"
    )
    partial.replace(target)


def _buildable(
    items: list[Mined], before: GitCodebase, after: GitCodebase, name: str, repo: str, refs: tuple[str, str]
) -> tuple[list[Mined], int]:
    """The memories whose claimed values the built scenario holds (the harness checks them at every
    run; never with the verifier), and how many were left out."""
    kept, dropped = list(items), 0
    with scratch_folder("memstore-mine-") as tmp:
        for _ in range(len(items) + 1):
            path = tmp / "scenario.yaml"
            _write(path, scenario_document(kept, before, after, name=name, repo=repo, refs=refs))
            problems = build_problems(load_file(path)[0])
            index = next((p[1] for p, _ in problems if len(p) >= 2 and p[0] == "memories"), None)
            if not problems:
                break
            if not isinstance(index, int):
                raise CommandError(f"the mined scenario does not build: {problems[0][1]}")
            del kept[index]
            dropped += 1
    return kept, dropped


@click.command(name="mine")
@click.argument("repo_path", metavar="REPO", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--from", "from_ref", required=True, metavar="REF", help="Where the memories are written.")
@click.option("--to", "to_ref", required=True, metavar="REF", help="Where their truth is judged.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The scenario file to write (default: scenarios/mined/<name>.yaml).")  # fmt: skip
@click.option("--name", "repo_name", default=None, metavar="OWNER/NAME", help="The repository's name in the store.")
@click.option("--kinds", default=",".join(MINED_KINDS), show_default=True, help="Which memories to write.")
@click.option("--limit", type=click.IntRange(1, 2000), default=40, show_default=True, help="Memories at most.")
@click.option("--seed", type=int, default=0, show_default=True, help="Which memories, when there are more.")
@click.option("--prose", is_flag=True, help="Mine documentation too (Markdown, reStructuredText, text), not only code "
              "and configuration.")  # fmt: skip
def mine_command(
    repo_path: Path, from_ref: str, to_ref: str, out: Path | None, repo_name: str | None, kinds: str, limit: int,
    seed: int, prose: bool,
) -> None:  # fmt: skip
    """Write memories at --from the way a coding agent writes them (constants and versions, function
    defaults, where classes and functions are defined, and adversarial variants citing unrelated
    lines; the truth classes taken in turn), label their truth at --to from the syntax trees of
    both versions (never with the verifier), and write a scenario (the cited files' history
    between the two refs, the memories, CLI questions) and a verdict benchmark file (OUT with
    .verdicts.jsonl) beside it.
    """
    chosen = tuple(k.strip() for k in kinds.split(",") if k.strip())
    unknown = sorted(set(chosen) - set(MINED_KINDS))
    if unknown:
        raise CommandError(f"--kinds: unknown {', '.join(unknown)} (known: {', '.join(MINED_KINDS)})")
    try:
        before, after = GitCodebase(repo_path, from_ref), GitCodebase(repo_path, to_ref)
    except MemstoreError as exc:
        raise CommandError(str(exc)) from exc
    items = mine(before, after, kinds=chosen, limit=limit, seed=seed, balance=True, prose=prose)
    if not items:
        what = "code, configuration or documentation" if prose else "code or configuration (--prose: documentation too)"
        raise CommandError(f"nothing to mine between {from_ref} and {to_ref}: no constants or definitions in {what}")
    slug = re.sub(r"[^a-z0-9]+", "-", f"{repo_path.resolve().name}-{from_ref}-{to_ref}".lower()).strip("-")[:60]
    name = f"mined-{slug}"
    repo = repo_name or f"mined/{repo_path.resolve().name}"
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+", repo):
        raise CommandError(f"--name {repo!r}: give OWNER/NAME")
    target = out or Path("scenarios") / "mined" / f"{name}.yaml"
    # The scenario holds what the harness can check on the repository it builds: a contradicted
    # memory there needs a value to read at --to (a constant); the benchmark file holds them all.
    kept = [m for m in items if m.truth != "contradicted" or (m.kind == "constant" and m.new_value and m.now_path)]
    unreadable = len(items) - len(kept)
    kept, dropped = _buildable(kept, before, after, name, repo, (from_ref, to_ref))
    document = scenario_document(kept, before, after, name=name, repo=repo, refs=(from_ref, to_ref))
    _write(target, document)
    bench = target.with_suffix(".verdicts.jsonl")
    bench.write_text(
        "".join(json.dumps({**item.__dict__, "commit": before.commit}) + "\n" for item in items), encoding="utf-8"
    )
    console().print(plain(f"mined {len(items)} memories ({_tally(items, 'kind')}) from {_files(before, prose)}"))
    console().print(plain(f"  the verdict benchmark file holds all {len(items)}: {_tally(items, 'truth')} -> {bench}"))
    console().print(plain(f"  the scenario holds {len(kept)}: {_tally(kept, 'truth')} -> {target}"))
    if unreadable or dropped:
        console().print(plain(_left_out(items, unreadable, dropped)))
    console().print(plain(f"check it: memstore scenarios validate {target}; read them: head {bench}"))


def _tally(items: list[Mined], field: str) -> str:
    counts: dict[str, int] = {}
    for item in items:
        counts[getattr(item, field)] = counts.get(getattr(item, field), 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _files(codebase: GitCodebase, prose: bool) -> str:
    """``41 code files (documentation left out: --prose)``: what was read."""

    paths = list(codebase.paths())
    code = sum(mined_file(p) for p in paths)
    docs = sum(mined_file(p, prose=True) for p in paths) - code
    if prose:
        return f"{code} code and {docs} documentation files"
    return f"{code} code and configuration files" + (f" ({docs} documentation files left out: --prose)" if docs else "")


def _left_out(items: list[Mined], unreadable: int, dropped: int) -> str:
    """Why memories of the benchmark file are not in the scenario, each reason with its count."""
    gone = sum(m.truth == "contradicted" and not m.new_value for m in items)
    reasons = [
        f"{gone} contradicted with nothing at --to to read a current value from (gone: a definition, a value)"
        if gone
        else "",
        f"{unreadable - gone} contradicted defaults (a session's answer is checked against constants only)"
        if unreadable > gone
        else "",
        f"{dropped} whose claimed value the built scenario's files do not hold" if dropped else "",
    ]
    return (
        f"  left out of the scenario, kept in the benchmark file: {unreadable + dropped} "
        f"({'; '.join(r for r in reasons if r)})"
    )
