"""Shared by every stage: source positions, diagnostics, the code registry, input discovery."""
