"""``python -m memstore``: the command line, as the ``memstore`` script."""

from memstore.cli import main

main()
