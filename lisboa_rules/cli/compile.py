"""`lisboa-rules compile --out DIR`: the engine of the rules, compiled with mypyc, for game apps
and simulation sweeps.

The engine is the one `build` writes to generated/lisboa_engine.py (the same rules, the same
variants, the same code): mypyc compiles that module to a C extension, written to DIR as
`lisboa_engine<suffix>` (importable as `lisboa_engine`, with the same API and the same results;
tests/engine/test_compiled_engine.py plays seeded games in lockstep with the pure engine). The
pure-Python engine stays the default; this one is opt-in. It needs mypy (which brings mypyc), a C
compiler and Python's headers (Debian: build-essential, python3-dev).

Compiling takes a minute or more, so the extension is kept in the user's cache folder
(outputs/cache.py: $LISBOA_RULES_CACHE_DIR, $XDG_CACHE_HOME/lisboa-rules or
~/.cache/lisboa-rules; `--no-cache` or the variable set to "off" turns it off), under
`mypyc/`, named by a hash of everything the extension depends on: the engine's source, the
optimisation level, the versions of mypy and Python and the extension suffix; the eight most
recently used are kept, older ones removed (`KEEP_CACHED`). An extension is
code that the process runs, so it is read only from a private folder of the user's own and only
from a regular file of theirs (the checks of outputs/cache.py, on open descriptors).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lisboa_rules.cli.common import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Command,
    add_rules_options,
    err,
    report,
)
from lisboa_rules.core.diagnostics import PROG, has_errors

MODULE = "lisboa_engine"
ENGINE = f"{MODULE}.py"  # the engine among build's outputs
CACHE_FOLDER = "mypyc"  # inside the cache folder of outputs/cache.py
MAX_EXTENSION = 512 << 20  # bytes; the compiled engine is about 10 MiB
KEEP_CACHED = 8  # compiled engines kept in the cache, the most recently used (5-10 MiB each)
OPT_LEVELS = (0, 1, 2, 3)


class CompileError(Exception):
    """Why the engine could not be compiled (what is missing, or mypyc's own words)."""


@dataclass(frozen=True)
class Compiled:
    path: Path  # the extension written to the output folder
    seconds: float  # time spent compiling (0 when it came from the cache)
    cached: bool  # read from the cache


def extension_suffix() -> str:
    """The file suffix of a C extension of this Python (`.cpython-311-x86_64-linux-gnu.so`)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def missing_tools() -> list[str]:
    """What compiling needs and this machine lacks (empty: everything is there)."""
    missing = []
    # mypyc ships inside mypy's distribution and imports it (a lone mypyc folder is no use)
    if importlib.util.find_spec("mypyc") is None or importlib.util.find_spec("mypy") is None:
        missing.append("mypyc (pip install mypy)")
    if importlib.util.find_spec("setuptools") is None:  # mypyc builds the extension with it
        missing.append("setuptools (pip install setuptools)")
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None and shutil.which("cc") is None and shutil.which("gcc") is None:
        missing.append(f"a C compiler ({cc}; Debian: build-essential)")
    include = sysconfig.get_paths().get("include", "")
    if not include or not (Path(include) / "Python.h").is_file():
        missing.append(f"Python's headers ({include}/Python.h; Debian: python3-dev)")
    return missing


def cache_key(source: bytes, opt_level: int) -> str:
    """The name of the extension in the cache: what it is made from, hashed."""
    import mypy.version

    h = hashlib.sha256()
    for part in (
        source,
        str(opt_level).encode(),
        mypy.version.__version__.encode(),
        sys.version.encode(),
        extension_suffix().encode(),
    ):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return f"{MODULE}-{h.hexdigest()[:40]}{extension_suffix()}"


def user_cache_root() -> Path | None:
    """The cache folder of outputs/cache.py, or the user's own (~/.cache/lisboa-rules) where
    that cache is turned off: the test suite and the benchmarks turn the build's cache off but
    keep the compiled engine, which takes minutes to make."""
    from lisboa_rules.outputs import cache

    found = cache.cache_dir()
    if found is not None:
        return found
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "lisboa-rules"
    home = os.path.expanduser("~")
    return None if home == "~" else Path(home) / ".cache" / "lisboa-rules"


def _cache_folder(root: Path | None) -> int | None:
    """A descriptor of the private cache folder of compiled engines under `root` (default: the
    cache folder of outputs/cache.py), or None (caching off or a folder that fails the
    checks)."""
    from lisboa_rules.outputs import cache

    root = root or cache.cache_dir()
    if root is None:
        return None
    return cache.open_folder(root / CACHE_FOLDER)


def is_cached(source: bytes, opt_level: int, cache_root: Path | None = None) -> bool:
    """Whether an engine of this source compiled at this level is in the cache (under
    `cache_root`, default the user's cache folder), so `compile_engine` would only copy it."""
    from lisboa_rules.outputs import cache

    folder = _cache_folder(cache_root or user_cache_root())
    if folder is None:
        return False
    try:
        name = cache_key(source, opt_level)
        return cache.read_private(folder, name, MAX_EXTENSION) is not None
    finally:
        os.close(folder)


def _is_cached_engine(name: str) -> bool:
    """A name `cache_key` gives (`lisboa_engine-<40 hex digits><suffix>`)."""
    stem = name.removeprefix(f"{MODULE}-").removesuffix(extension_suffix())
    return (
        name.startswith(f"{MODULE}-")
        and name.endswith(extension_suffix())
        and len(stem) == 40
        and all(c in "0123456789abcdef" for c in stem)
    )


def _evict(folder: int, keep: int = KEEP_CACHED) -> list[str]:
    """Remove all but the `keep` most recently used compiled engines from the cache folder
    (used: written or read, see `compile_engine`); best effort, other files are left alone.
    Without it every edit of the rules compiled left 5-10 MiB in the user's cache for good."""
    found: list[tuple[float, str]] = []
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if _is_cached_engine(name):
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                    found.append((st.st_mtime, name))
    found.sort(reverse=True)
    gone = []
    for _, name in found[keep:]:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder)
            gone.append(name)
    return gone


def run_mypyc(source: bytes, opt_level: int) -> bytes:
    """The engine compiled: the bytes of the extension mypyc makes of `source`."""
    from lisboa_rules.outputs import files

    missing = missing_tools()
    if missing:
        raise CompileError("compiling the engine needs " + ", ".join(missing))
    with tempfile.TemporaryDirectory(prefix="lisboa-compile-") as tmp:
        work = Path(tmp)
        files.write_new_file(work / ENGINE, source)
        env = {**os.environ, "MYPYC_OPT_LEVEL": str(opt_level), "MYPYC_DEBUG_LEVEL": "0"}
        env.pop("PYTHONPATH", None)  # the module is compiled alone, against the standard library
        done = subprocess.run(
            [sys.executable, "-m", "mypyc", ENGINE],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        built = work / f"{MODULE}{extension_suffix()}"
        if done.returncode != 0 or not built.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            raise CompileError(f"mypyc failed (exit {done.returncode}):\n{tail}")
        return built.read_bytes()


def compile_engine(
    source: bytes,
    out_dir: Path,
    opt_level: int = 3,
    use_cache: bool = True,
    cache_root: Path | None = None,
) -> Compiled:
    """Compile an engine's source into `out_dir` (as `lisboa_engine<suffix>`), or copy it from
    the cache (under `cache_root`, default the user's cache folder) when the same source was
    compiled the same way before."""
    from lisboa_rules.outputs import cache, files

    if opt_level not in OPT_LEVELS:
        raise CompileError(f"the optimisation level is one of {OPT_LEVELS}, not {opt_level}")
    name = cache_key(source, opt_level)
    folder = _cache_folder(cache_root) if use_cache else None
    data = None if folder is None else cache.read_private(folder, name, MAX_EXTENSION)
    seconds = 0.0
    cached = data is not None
    try:
        if data is None:
            start = time.perf_counter()
            data = run_mypyc(source, opt_level)
            seconds = time.perf_counter() - start
            if folder is not None:
                cache.write_private(folder, name, data)
        elif folder is not None:  # used now: the last to be evicted
            with contextlib.suppress(OSError):
                os.utime(name, dir_fd=folder, follow_symlinks=False)
        if folder is not None:
            _evict(folder)
    finally:
        if folder is not None:
            os.close(folder)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{MODULE}{extension_suffix()}"
    # A temporary file of a random name, made O_EXCL | O_NOFOLLOW, made executable on its
    # descriptor and renamed over the target: a symlink planted in a shared folder (at the
    # target's name or any other) is never written through. A process that has the old
    # extension loaded keeps its copy.
    files.write_file_atomic(target, data, 0o755)
    return Compiled(target, seconds, cached)


def _configure(p: argparse.ArgumentParser) -> None:
    """Add the compile options."""
    add_rules_options(p)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help=f"where to write the compiled engine ({MODULE}{extension_suffix()})",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="apply a variant from rules/variants/ (repeatable), as build does",
    )
    p.add_argument(
        "--opt-level",
        type=int,
        choices=OPT_LEVELS,
        default=3,
        metavar="N",
        help="mypyc's optimisation level, 0-3 (default 3: the fastest engine; 0 compiles fastest)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="compile even when the same engine is in the cache (and keep it out)",
    )


def run_compile(args: argparse.Namespace) -> int:
    """Build the engine of the rules and compile it into --out."""
    from lisboa_rules import pipeline

    result = pipeline.compile_rules(args.rules, tuple(args.variant))
    if has_errors(result.diagnostics):
        report(result.diagnostics, args.format)
        return EXIT_FINDINGS
    report(result.diagnostics, args.format)
    data = result.files[ENGINE].encode("utf-8")
    try:
        done = compile_engine(data, args.out, args.opt_level, not args.no_cache)
    except CompileError as exc:
        err(f"{PROG}: error: {exc}\n")
        return EXIT_ERROR
    except OSError as exc:
        err(f"{PROG}: error: cannot write into {args.out}: {exc}\n")
        return EXIT_ERROR
    how = "from the cache" if done.cached else f"compiled in {done.seconds:.0f} s"
    err(f"{PROG}: wrote {done.path} ({how}); import it as {MODULE} with {args.out} on sys.path\n")
    return EXIT_OK


COMMANDS: dict[str, Command] = {
    "compile": Command(
        "compile the engine with mypyc into a C extension (opt-in, faster)", _configure, run_compile
    ),
}
