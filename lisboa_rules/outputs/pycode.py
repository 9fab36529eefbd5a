"""Compiling generated Python once per process, and knowing that a text compiles.

The reference runs the generated engine (its worked examples are scored by it), the backstop
plays it, and the writer must make sure every `*.py` output compiles: the same source would
be compiled three times. The code object of the last sources compiled is kept (by the
source's hash and the file name it is compiled under), so each is compiled once per process.
A source that compiled is also remembered by hash, in this process and, when a build files
its results (outputs/reuse.py: the `compiles` entries, by the text's digest), in the private
cache folder, so the writer's check is free for it. `build --check` has no store: its writer
compiles every module it did not compile itself.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from types import CodeType

from lisboa_rules.outputs import reuse

_COMPILED: set[str] = set()  # sha256 of sources compiled without error in this process
_CODE: OrderedDict[tuple[str, str], CodeType] = OrderedDict()  # (sha256, file name) -> code
_KEEP = 4  # code objects kept (an engine's is a few MB)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compile_module(text: str, filename: str) -> CodeType:
    """compile() a module's source (raises SyntaxError/ValueError like compile) and remember
    that it compiles; the same source under the same file name is compiled once. Code objects
    are immutable: every caller may run the one returned in a module of its own."""
    digest = _digest(text)
    code = _CODE.get((digest, filename))
    if code is None:
        code = compile(text, filename, "exec", dont_inherit=True)
        _CODE[(digest, filename)] = code
        while len(_CODE) > _KEEP:
            _CODE.popitem(last=False)
    _CODE.move_to_end((digest, filename))
    _COMPILED.add(digest)
    store = reuse.current()
    if store is not None:
        store.put("compiles", reuse.key("compiles", digest), True)
    return code


def known_to_compile(text: str) -> bool:
    """Whether this exact source already compiled in this process, or (while a build files
    its results: reuse.current()) in a build that filed it."""
    digest = _digest(text)
    if digest in _COMPILED:
        return True
    store = reuse.current()
    return store is not None and store.get("compiles", reuse.key("compiles", digest)) is True
