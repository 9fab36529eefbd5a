"""Compiling generated Python once per process.

The reference runs the generated engine (its worked examples are scored by it) and the writer
must make sure every `*.py` output compiles: the same source would be compiled twice. Sources
that compiled are remembered by hash, so the writer's check is free for them.
"""

from __future__ import annotations

import hashlib
from types import CodeType

_COMPILED: set[str] = set()  # sha256 of sources compiled without error in this process


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compile_module(text: str, filename: str) -> CodeType:
    """compile() a module's source (raises SyntaxError/ValueError like compile) and remember
    that it compiles."""
    code = compile(text, filename, "exec", dont_inherit=True)
    _COMPILED.add(_digest(text))
    return code


def known_to_compile(text: str) -> bool:
    """Whether this exact source already compiled in this process."""
    return _digest(text) in _COMPILED
