"""lisboa-rules: a declarative rules-data compiler for the board game Lisboa."""

__version__ = "0.1.0"
