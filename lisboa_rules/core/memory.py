"""Pausing Python's cyclic garbage collector around work that makes no reference cycles.

A build and a simulated game allocate many objects and free them by reference counting; the
cyclic collector still walks every live object each time enough allocations have piled up,
which made big rule sets superlinear to build and costs a greedy game about a fifth of its
time (the states an agent compares are all alive while it compares them). Neither makes
cycles, so pausing the collector loses nothing: it is restored afterwards, and callers that
work many times in one process (tests, the fuzzer, a game app) still collect their cycles.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block, as it was after (nesting is fine)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
