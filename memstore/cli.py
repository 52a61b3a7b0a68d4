"""The ``memstore`` command line: a thin layer over the library.

Each command opens the library object, makes one library call, and turns library
errors into clean messages with a non-zero exit status.
"""

from __future__ import annotations

import click

from memstore import __version__
from memstore.commands.eval import eval_command
from memstore.commands.memories import memories
from memstore.commands.reports import compare, report
from memstore.commands.scenarios import scenarios
from memstore.commands.verify import verify

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memstore")
def main() -> None:
    """memstore: a memory store for coding agents, and a harness that measures any store."""


main.add_command(eval_command)
main.add_command(memories)
main.add_command(compare)
main.add_command(report)
main.add_command(scenarios)
main.add_command(verify)
