"""The typed model, its builder, the semantic checks and the compiled rule sets."""
