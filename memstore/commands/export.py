"""``memstore export harbor SCENARIOS --out DIR``: scenarios as other harnesses' tasks (docs/harbor.md)."""

from __future__ import annotations

from pathlib import Path

import click

from memstore.commands._shared import CommandError, safe
from memstore.harness.scenarios import ScenarioError, load_library

__all__ = ["export_group"]


@click.group(name="export")
def export_group() -> None:
    """Scenarios as other harnesses' tasks, graded there as memstore grades them."""


@export_group.command(name="harbor")
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The folder the task folders are written in (made when missing), one per scenario.",
)
@click.option("--overwrite", is_flag=True, help="Replace task folders of the same names in --out.")
@click.option(
    "--image",
    default="python:3.12-slim",
    show_default=True,
    help="The base image of the agent's and the verifiers' containers (pin it: NAME@sha256:DIGEST).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the ids of the memories handed.")
def harbor_command(scenarios: tuple[Path, ...], out: Path, overwrite: bool, image: str, seed: int) -> None:
    """Write each scenario of SCENARIOS (files or folders) as a Harbor task folder OUT/NAME: one step
    per session, the repository and the memories the store hands each step in its environment, and
    each step's grading in its tests, hidden from the agent. Nothing is written when any fails."""
    from memstore.harness.export import export_harbor  # the grading stage (pandas): only when it runs

    try:
        found = load_library(scenarios)
    except ScenarioError as exc:
        raise CommandError(f"the scenarios have problems; run `memstore scenarios validate`:\n{exc}") from exc
    written = export_harbor(found, out, overwrite=overwrite, image=image, seed=seed)
    steps = sum(len(s.tasks) for s in found)
    for path in written:
        click.echo(safe(str(path)))
    click.echo(safe(f"{len(written)} Harbor task(s), {steps} step(s), in {out}"))
