"""The ``memstore`` command line: a thin layer over the library.

Each command opens the library object and makes one library call. Errors are translated
here, once, for every command: memstore's own errors and the operating system's become one
line and exit status 2; Ctrl-C or SIGTERM exit 130; anything else is a bug in memstore,
reported in one line (with the traceback when ``MEMSTORE_DEBUG`` is set) and exit status 3.
"""

from __future__ import annotations

import os
from typing import Any

import click

from memstore import __version__
from memstore.commands._shared import CommandError
from memstore.commands.eval import eval_command
from memstore.commands.mcp import mcp_command
from memstore.commands.memories import memories
from memstore.commands.merge import merge_command
from memstore.commands.metrics import metrics_command
from memstore.commands.mine import mine_command
from memstore.commands.reports import compare, report
from memstore.commands.scenarios import scenarios
from memstore.commands.verify import verify
from memstore.errors import MemstoreError

__all__ = ["main"]


class _Boundary(click.Group):
    """The command group, with the one error boundary of the command line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except MemstoreError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            raise CommandError(f"{exc.strerror or exc}{where}") from exc
        except KeyboardInterrupt as exc:
            click.echo("interrupted", err=True)
            raise click.exceptions.Exit(130) from exc
        except Exception as exc:
            if os.environ.get("MEMSTORE_DEBUG"):
                raise
            click.echo(
                f"Internal error: {type(exc).__name__}: {str(exc)[:300]} "
                "(a bug in memstore; run with MEMSTORE_DEBUG=1 for the traceback, and please report it)",
                err=True,
            )
            raise click.exceptions.Exit(3) from exc


@click.group(cls=_Boundary, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memstore")
def main() -> None:
    """memstore: a memory store for coding agents, and a harness that measures any store."""


main.add_command(eval_command)
main.add_command(mcp_command)
main.add_command(merge_command)
main.add_command(mine_command)
main.add_command(memories)
main.add_command(metrics_command)
main.add_command(compare)
main.add_command(report)
main.add_command(scenarios)
main.add_command(verify)
