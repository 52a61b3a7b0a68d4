"""``memstore metrics``: every metric a run reports, what it counts and how arms are compared on it."""

from __future__ import annotations

import click

__all__ = ["metrics_command"]


@click.command(name="metrics")
def metrics_command() -> None:
    """List every metric as a Markdown table: its name, what it counts, which way is better,
    and the test two arms of a run are compared with (docs/metrics.md is this output)."""
    from memstore.harness.analysis import metric_table  # pandas: only when it runs

    click.echo(metric_table(), nl=False)
