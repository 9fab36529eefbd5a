"""`lisboa-rules build --watch`: build, then build again on every save, in one warm process.

The process keeps what a fresh one pays for at every build: the imports, the compiled
templates, the engine's code object, and the results of the passes whose inputs did not change
(outputs/reuse.py, kept in memory as well as in the private cache folder). Like a one-shot
build, a build runs without the cyclic garbage collector (its passes and the backstop's games
make millions of objects and free few); the watch collects once after each build instead.

After each build it polls the rules folder (and the `--house` files) every `POLL` seconds:
the path, size, mtime, ctime and inode of every rules file, standard library only (a change is
a different listing or a different stat of one file; a save that takes several writes is
waited out: the changed snapshot must hold still for `SETTLE` seconds). Each build prints what
a build prints: the located diagnostics (`path:line:col: error[code]: message`) as they are
found, or what it wrote; an error leaves the output folder as it was and the watch goes on.
Ctrl-C (SIGINT) or SIGTERM stops it with exit 0; `--max-builds N` (for scripts and tests)
stops it after N builds, with the last build's exit code.

Polling, not inotify or a library such as watchdog: a rules folder is a dozen small files, a
look at all of them costs about 0.15 ms (every 0.05 s: well under 1 % of a CPU, and a save is
seen about 0.055 s after it, settling included), it works the same on every system and
file system (network mounts and containers included, where change notifications may not
arrive), and it adds no dependency.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from lisboa_rules.cli.common import EXIT_OK, err
from lisboa_rules.core.diagnostics import PROG
from lisboa_rules.core.inputs import discover
from lisboa_rules.outputs import reuse

POLL = 0.05  # seconds between two looks at the rules
SETTLE = 0.03  # seconds a changed snapshot must hold still before the build starts

Snapshot = tuple[tuple[str, int, int, int, int], ...]


def snapshot(rules: Path, house: list[Path]) -> Snapshot:
    """What a save changes: every rules file (and house file) with its size, mtime, ctime and
    inode; a file that cannot be read is there with zeros (its build reports it)."""
    found: list[tuple[str, int, int, int, int]] = []
    try:
        paths = [*discover(rules), *house]
    except OSError:
        paths = list(house)
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            found.append((str(p), 0, 0, 0, 0))
            continue
        found.append((str(p), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(found)


class _Stop(BaseException):
    """SIGTERM: stop watching as Ctrl-C does. Not an `Exception`, as KeyboardInterrupt is
    not: raised in the middle of a build, no `except Exception` of a pass (the reference's
    engine load, the backstop's games) takes it for a fault of the rules."""


def _on_term(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def watch(args: argparse.Namespace, build: Callable[[argparse.Namespace], int]) -> int:
    """Build with `build(args)`, then again whenever the rules change, until interrupted."""
    store = reuse.Store(memory=True)
    house = [Path(h) for h in args.house]
    limit: int | None = args.max_builds
    before = signal.signal(signal.SIGTERM, _on_term) if _main_thread() else None
    code = EXIT_OK
    builds = 0
    collecting = gc.isenabled()
    gc.disable()  # as a one-shot build runs (cli/main.py): collected between builds instead
    try:
        seen = snapshot(args.rules, house)
        while True:
            started = time.perf_counter()
            with reuse.active(store):
                code = build(args)
            builds += 1
            took = time.perf_counter() - started
            err(
                f"{PROG}: built in {took:.2f} s (exit {code}); watching {args.rules}/ "
                "for changes (Ctrl-C to stop)\n"
            )
            sys.stderr.flush()
            if limit is not None and builds >= limit:
                return code
            gc.collect()  # what this build left behind, while nothing waits for it
            sys.stderr.flush()
            seen = _wait_for_change(args.rules, house, seen)
    except (KeyboardInterrupt, _Stop):
        err(f"{PROG}: stopped watching after {builds} build{'s' if builds != 1 else ''}\n")
        return EXIT_OK
    finally:
        if collecting:
            gc.enable()
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _wait_for_change(rules: Path, house: list[Path], seen: Snapshot) -> Snapshot:
    """Poll until the rules differ from `seen` and then hold still for `SETTLE`; return them."""
    while True:
        time.sleep(POLL)
        now = snapshot(rules, house)
        if now == seen:
            continue
        while True:  # a save in several writes: wait until it is over
            time.sleep(SETTLE)
            again = snapshot(rules, house)
            if again == now:
                return now
            now = again


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
