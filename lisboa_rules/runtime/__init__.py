"""The engine's generic runtime, real Python, joined into the generated engine (never imported by
the compiler)."""
