"""One compile per distinct rule set per test session (per xdist worker): a memo of
`pipeline.compile_rules` (and of `check_rules`, validate's passes, made from it), for the
suite only, keyed by a digest of everything a compile reads.

Most tests build the rules to look at one thing of the result, and many build the same rules
(the real rules/, a house rule, each with the same options) over and over: about 0.35 s of
analysis and 0.3 s of emitting each time. The product's own reuse (outputs/reuse.py) is off
in the suite with the cache folder; this memo is the test suite's, and it is used only where a
compile cannot differ from the one it remembers:

- the key holds the path and bytes of every file under the rules folder and of every house
  rule, their modes, the arguments, the working directory and every `LISBOA_*` variable; a
  folder holding anything but regular files and folders (a FIFO, a symlink, a device: the
  hostile-input tests) is never memoized, nor is a file too large to read cheaply;
- the template cache is off (a test of the cache sees every compile it makes);
- nothing is monkeypatched at the time but environment variables (a test that breaks a stage
  to see the error compiles for real);
- each caller gets its own copy of the files and diagnostics (the compiled model is shared:
  nothing in the suite changes it).

`--no-build-memo` (or LISBOA_BUILD_MEMO=off) turns it off, to check that the suite passes
without it; the session's hits and misses are printed at the end of the run (-v).
"""

from __future__ import annotations

import hashlib
import os
import stat
import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

MAX_BYTES = 4 * 1024 * 1024  # a rules folder larger than this is compiled every time
KEEP = 24  # the rule sets remembered, the most recently used (a worker's memory stays small)

STATS = {"hits": 0, "misses": 0, "bypassed": 0}


_PATCHERS: weakref.WeakSet[Any] = weakref.WeakSet()  # every MonkeyPatch that set something


def _watch(monkeypatch_class: Any) -> None:
    """Remember every MonkeyPatch (the fixture's or one of `MonkeyPatch.context()`) that sets
    or deletes an attribute or an item."""
    for method in ("setattr", "delattr", "setitem", "delitem"):
        real = getattr(monkeypatch_class, method)

        def watched(self: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            _PATCHERS.add(self)
            return _real(self, *args, **kwargs)

        setattr(monkeypatch_class, method, watched)


def _pytests_own(target: Any) -> bool:
    """An object of pytest's own that it patches for a session (its temporary folders)."""
    module = target.__name__ if isinstance(target, types.ModuleType) else type(target).__module__
    return str(module).startswith("_pytest.")


def _patched() -> bool:
    """Whether anything is patched now: an attribute, or an item of anything but os.environ
    (the variables the key holds)."""
    for mp in list(_PATCHERS):
        if any(not _pytests_own(target) for target, _, _ in getattr(mp, "_setattr", [(0,) * 3])):
            return True
        if any(target is not os.environ for target, _, _ in getattr(mp, "_setitem", ())):
            return True
    return False


def _add_tree(h: Any, root: Path, budget: list[int]) -> bool:
    """Add every file under `root` (sorted) to `h`; False when it holds anything else."""
    try:
        st = os.lstat(root)
    except OSError:
        return False
    h.update(os.fsencode(root) + f"\0{st.st_mode}\0".encode())
    if stat.S_ISREG(st.st_mode):
        budget[0] -= st.st_size
        if budget[0] < 0:
            return False
        try:
            h.update(root.read_bytes())
        except OSError:
            return False
        return True
    if not stat.S_ISDIR(st.st_mode):
        return False
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return False
    return all(_add_tree(h, root / n, budget) for n in names)


def key(rules_dir: Path, variants: Sequence[str], order: Sequence[Path] | None,
        extra: Sequence[Path]) -> str | None:
    """The digest of what a compile reads, or None when it must compile for real."""
    h = hashlib.sha256()
    h.update(repr((os.getcwd(), tuple(variants), None if order is None else tuple(map(str, order)),
                   sorted((k, v) for k, v in os.environ.items() if k.startswith("LISBOA_"))
                   )).encode("utf-8", "surrogateescape"))
    budget = [MAX_BYTES]
    for root in (Path(rules_dir), *map(Path, extra), *map(Path, order or ())):
        if not _add_tree(h, Path(os.path.abspath(root)), budget):
            return None
    return h.hexdigest()


def install(pipeline: Any, cache: Any, monkeypatch_class: Any) -> Callable[[], None]:
    """Put the memo in place of `pipeline.compile_rules`; returns the undo."""
    _watch(monkeypatch_class)
    real = pipeline.compile_rules
    memo: OrderedDict[str, Any] = OrderedDict()

    def compile_rules(rules_dir: Path, variants: Sequence[str] = (),
                      order: Sequence[Path] | None = None, extra: Sequence[Path] = (),
                      on_engine: Callable[[str], None] | None = None) -> Any:
        """`on_engine` is called when the compile is made, not when it is remembered (as the
        product's own reuse of the outputs does)."""
        k = None
        if cache.cache_dir() is None and not _patched():
            k = key(rules_dir, variants, order, extra)
        if k is None:
            STATS["bypassed"] += 1
            return real(rules_dir, variants, order, extra, on_engine)
        found = memo.get(k)
        if found is None:
            STATS["misses"] += 1
            found = memo[k] = real(rules_dir, variants, order, extra, on_engine)
            while len(memo) > KEEP:
                memo.popitem(last=False)
        else:
            STATS["hits"] += 1
            memo.move_to_end(k)
        return replace(found, files=dict(found.files), diagnostics=list(found.diagnostics))

    real_check = pipeline.check_rules

    def check_rules(rules_dir: Path, variants: Sequence[str] = (),
                    order: Sequence[Path] | None = None, extra: Sequence[Path] = (),
                    engine: bool = False) -> Any:
        """validate's passes: the memoized compile without its files but the engine's (the
        same passes, the same diagnostics: tests/cli/test_validate_passes.py compares them)."""
        if (cache.cache_dir() is not None or _patched()
                or key(rules_dir, variants, order, extra) is None):
            return real_check(rules_dir, variants, order, extra, engine)
        found = compile_rules(rules_dir, variants, order, extra)
        files = {n: found.files[n] for n in ("lisboa_engine.py",) if engine and n in found.files}
        return replace(found, files=files)

    pipeline.compile_rules = compile_rules
    pipeline.check_rules = check_rules

    def undo() -> None:
        pipeline.compile_rules = real
        pipeline.check_rules = real_check

    return undo
