"""The command line: one module per command group and the helpers they share."""
