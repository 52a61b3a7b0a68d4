"""One module per command group of the ``memstore`` CLI, plus what they share."""
