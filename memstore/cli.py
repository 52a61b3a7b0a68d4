"""The ``memstore`` command line: a thin layer over the library.

Each command opens the library object and makes one library call, and is imported only when it
runs (or when the help lists it): ``memstore mcp`` does not load the harness, nor ``memstore eval``
the MCP SDK. The commands are entry points of the ``memstore.commands`` group (`memstore.plugins`),
memstore's own declared in its ``pyproject.toml``: a package adds a command the same way.

Errors are translated here, once, for every command: memstore's own errors and the operating system's become one
line and exit status 2, and so does running out of memory (an input larger than the memory
memstore may use); a run folder the machine failed to write (`OutputError`: a full disk) is one
line and exit status 4, as the run did not finish; Ctrl-C or SIGTERM exit 130; anything else is
a bug in memstore, reported in one line (with the traceback when ``MEMSTORE_DEBUG`` is set) and
exit status 4 (3 is a run whose gates the sample could not decide: `memstore.harness.report.gate`).
"""

from __future__ import annotations

import os
from typing import Any

import click

from memstore import __version__, plugins
from memstore.commands._shared import CommandError
from memstore.errors import MemstoreError, OutputError
from memstore.registry import Registry

__all__ = ["COMMANDS", "main"]

COMMANDS: Registry[click.Command] = plugins.COMMANDS  # memstore's own: its ``memstore.commands`` entry points


class _Boundary(click.Group):
    """The command group, with the one error boundary of the command line; its commands are
    imported when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return COMMANDS.names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = COMMANDS.find(cmd_name)
        if command is not None and not isinstance(command, click.Command):
            raise click.ClickException(f"the command plug-in {cmd_name!r} is not a click command: {command!r}")
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OutputError as exc:
            click.echo(f"Error: {exc}", err=True)
            raise click.exceptions.Exit(4) from exc
        except MemstoreError as exc:
            raise CommandError(str(exc)) from exc
        except MemoryError as exc:
            raise CommandError("out of memory: an input is larger than the memory memstore may use") from exc
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
            raise click.exceptions.Exit(4) from exc


@click.group(cls=_Boundary, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memstore")
def main() -> None:
    """memstore: a memory store for coding agents, and a harness that measures any store."""
