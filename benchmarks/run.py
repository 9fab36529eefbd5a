"""Benchmarks of the compiler and the generated engine, side by side, in one run.

    python3 benchmarks/run.py [--quick | --tiny] [--out benchmarks/results.json]
                              [--sections build,scoring,playout,scaling,simulate]

Every row times two things in the same run, interleaved (A, B, A, B, ... with the order
alternating), several repetitions after a warm-up, and reports the medians and their ratio
against the issue's target. Timings use time.perf_counter. The table is printed and written as
JSON (see benchmarks/README.md for what each row means). Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import itertools
import json
import math
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import handwritten_scoring as hand  # noqa: E402
import scale_rules  # noqa: E402

from lisboa_rules.cli.watch import POLL as WATCH_POLL  # noqa: E402
from lisboa_rules.cli.watch import SETTLE as WATCH_SETTLE  # noqa: E402

SCHEMA = "lisboa-rules-benchmarks/1"
SECTIONS = ("build", "scoring", "playout", "oracle", "compiled", "speed", "views", "scaling",
            "simulate", "balance")
FROZEN = ROOT / "tests" / "oracle" / "frozen_engine.py"  # the engine before issue 14
BASELINE_IMPORTS = "import yaml, jsonschema, jinja2"
# What no build can go below, whatever the compiler does: the two libraries a valid build
# imports (jsonschema only speaks for invalid rules), one libyaml parse of every rules file
# (without positions), and compile() of the engine the build writes (--check proves generated/
# by compiling it). Timed as a fresh process from the repository root, as the build rows are.
FLOOR_CODE = (
    "import pathlib, yaml, jinja2\n"
    "for p in sorted(pathlib.Path('rules').rglob('*.yaml')):\n"
    "    yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)\n"
    "compile(pathlib.Path('generated/lisboa_engine.py').read_bytes(), 'lisboa_engine.py', 'exec')"
)
PLAYERS = 4


@dataclass(frozen=True)
class Mode:
    """Sizes and repetitions of one kind of run."""

    name: str
    build_reps: int
    states: int  # random 4-player end states for the scoring rows
    score_reps: int
    playout_games: int  # games per repetition in the playout rows
    playout_reps: int
    scales: tuple[int, ...]
    scale_reps: tuple[int, ...]  # repetitions per scale
    scale_timeout: float  # seconds for one scaled build
    sim_games: int
    sim_reps: int
    warmup: int
    no_pyc_rows: bool = True
    burn_loop: int = 3_000_000  # iterations of the control busy loop (about 0.3 s)


MODES = {
    "full": Mode("full", 7, 200, 15, 20, 5, (1, 10, 100), (5, 3, 1), 1800.0, 400, 3, 1),
    "quick": Mode("quick", 3, 50, 5, 5, 3, (1, 5, 20), (3, 2, 1), 600.0, 120, 2, 1),
    "tiny": Mode(
        "tiny", 1, 4, 1, 1, 1, (1, 2), (1, 1), 300.0, 2, 1, 0, no_pyc_rows=False, burn_loop=10_000
    ),
}


# --- measuring ------------------------------------------------------------------------------


@dataclass
class Side:
    """One side of a comparison: what was timed, its samples and their median."""

    label: str
    unit: str  # "s" (a duration per item, lower is better) or "/s" (a rate, higher is better)
    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)  # child CPU seconds (processes only)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "unit": self.unit,
            "median": self.median,
            "min": min(self.samples) if self.samples else None,
            "max": max(self.samples) if self.samples else None,
            "samples": self.samples,
            "cpu_median": statistics.median(self.cpu_samples) if self.cpu_samples else None,
            "cpu_samples": self.cpu_samples,
        }


@dataclass
class Row:
    """A comparison A vs B with a ratio and the issue's target for it."""

    id: str
    section: str
    title: str
    a: Side
    b: Side
    ratio_means: str  # how the ratio is computed, in words
    target_op: str | None = None  # "<=" or ">=" (None: informational row)
    target: float | None = None
    status: str = "ok"  # ok | pending | error | timeout
    note: str = ""
    ratio_fn: Callable[[float, float], float] = field(default=lambda a, b: a / b, repr=False)

    @property
    def ratio(self) -> float | None:
        a, b = self.a.median, self.b.median
        if self.status != "ok" or a is None or b is None or b == 0:
            return None
        return self.ratio_fn(a, b)

    @property
    def paired_ratio(self) -> float | None:
        """The median of the per-repetition ratios (A and B of one round were timed together)."""
        a, b = self.a.samples, self.b.samples
        if self.status != "ok" or not a or len(a) != len(b) or 0 in b:
            return None
        return statistics.median(self.ratio_fn(x, y) for x, y in zip(a, b, strict=True))

    @property
    def cpu_ratio(self) -> float | None:
        """The same ratio on the CPU time of the child processes (less sensitive to load)."""
        a, b = self.a.cpu_samples, self.b.cpu_samples
        if self.status != "ok" or not a or not b or statistics.median(b) == 0:
            return None
        return self.ratio_fn(statistics.median(a), statistics.median(b))

    @property
    def met(self) -> bool | None:
        r = self.ratio
        if r is None or self.target is None:
            return None
        return r <= self.target if self.target_op == "<=" else r >= self.target

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "section": self.section,
            "title": self.title,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "ratio": self.ratio,
            "ratio_means": self.ratio_means,
            "paired_ratio_median": self.paired_ratio,
            "cpu_ratio": self.cpu_ratio,
            "target": None if self.target is None else {"op": self.target_op, "value": self.target},
            "met": self.met,
            "status": self.status,
            "note": self.note,
        }


def interleaved(
    fns: Sequence[Callable[[], float | None]], reps: int, warmup: int
) -> list[list[float]]:
    """Run each function reps times (after warmup rounds), alternating their order each round.

    A function returns None to have its wall time recorded, or a number it measured itself."""
    samples: list[list[float]] = [[] for _ in fns]
    for r in range(warmup + reps):
        order = list(range(len(fns))) if r % 2 == 0 else list(reversed(range(len(fns))))
        for k in order:
            gc.collect()
            t0 = time.perf_counter()
            got = fns[k]()
            dt = time.perf_counter() - t0
            if r >= warmup:
                samples[k].append(dt if got is None else got)
    return samples


# Child processes either keep bytecode caches (as an installed package does: pip writes .pyc
# files at install time), written under a temporary PYTHONPYCACHEPREFIX so the working tree
# gets no __pycache__, or compile every module of the project from source at each start (what
# PYTHONDONTWRITEBYTECODE=1, set in some containers, does). Site-packages keep their own .pyc
# files in the second case, so only the project's modules pay for compiling.
PYCACHE_DIR: Path | None = None
# The compiled-template cache (lisboa_rules/outputs/cache.py) of the child processes: a folder
# of the run's own, so every run starts empty (the warm-up round fills it) and ~/.cache is
# left alone.
BUILD_CACHE_DIR: Path | None = None


def child_env(bytecode: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    if BUILD_CACHE_DIR is not None:
        env["LISBOA_RULES_CACHE_DIR"] = str(BUILD_CACHE_DIR)
    if bytecode and PYCACHE_DIR is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE_DIR)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


LAST_CPU: list[float] = [0.0]  # CPU seconds (user + system) of the last run_quiet child


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_quiet(
    cmd: Sequence[str], timeout: float | None = None, bytecode: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a command from the repository root; raise with its stderr when it fails."""
    cpu0 = _children_cpu()
    done = subprocess.run(
        list(cmd),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=child_env(bytecode),
    )
    LAST_CPU[0] = _children_cpu() - cpu0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return done


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "lisboa_rules", *args]


# --- machine ----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """Where the numbers come from."""
    cpu = ""
    with_cpuinfo = Path("/proc/cpuinfo")
    if with_cpuinfo.exists():
        for line in with_cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    cpu = cpu or platform.processor() or platform.machine()
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        nproc = os.cpu_count() or 0
    info: dict[str, Any] = {
        "nproc": nproc,
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average_start": _loadavg(),
    }
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        info["git_head"] = head.stdout.strip() or None
        info["git_dirty"] = bool(dirty.stdout.strip()) if dirty.returncode == 0 else None
    except OSError:
        info["git_head"] = None
        info["git_dirty"] = None
    return info


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


# --- the engine, the interpreter, random games ------------------------------------------------


def load_engine(path: Path, name: str = "lisboa_engine_bench") -> ModuleType:
    """Import the generated engine from its file, as a game app would (as module `name`)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


OLD_RULES = ROOT / "tests" / "oracle" / "before-the-church.yaml"  # the rules of the old engines
_OLD_RULES_ENGINE: list[ModuleType] = []


def old_rules_engine(tmp: Path) -> ModuleType:
    """This compiler's engine of the rules the older engines play (no starting Plan, no Church
    track, réis paid before Influence: the house rule tests/oracle/before-the-church.yaml folded
    in), built once: the rows against those engines replay the same games in both, so both must
    play the same rules. It runs this commit's compiler and runtime."""
    if not _OLD_RULES_ENGINE:
        out = tmp / "old-rules"
        run_quiet(cli("build", "--no-cache", "--house", str(OLD_RULES), "--variant",
                      OLD_RULES.stem, "--out", str(out)))
        _OLD_RULES_ENGINE.append(load_engine(out / "lisboa_engine.py", "lisboa_engine_old_rules"))
    return _OLD_RULES_ENGINE[0]


def to_old(E: ModuleType, g: Any) -> dict[str, Any]:
    """A state of `old_rules_engine` as the older engines save it (without the folded variant
    a save of these rules names, and without the Church track's fields, empty in those rules)."""
    data: dict[str, Any] = E.to_json(g)
    data["variants"] = [v for v in data["variants"] if v != OLD_RULES.stem]
    for key in ("church", "cardinal", "clergy_bag", "clergy_given_up"):
        data.pop(key, None)
    for p in data["players"]:
        p.pop("clergy", None)
    return data


def load_interp() -> tuple[ModuleType | None, str]:
    """The reference interpreter, or None and why it cannot be used."""
    path = ROOT / "tools" / "interp.py"
    if not path.exists():
        return None, "tools/interp.py does not exist yet"
    try:
        from tools import interp
    except Exception as exc:  # a file being written may not import yet
        return None, f"tools.interp does not import: {type(exc).__name__}: {exc}"
    missing = [n for n in ("rule_sets", "score", "ranking") if not hasattr(interp, n)]
    if missing:
        return None, f"tools.interp lacks {', '.join(missing)}"
    return interp, ""


def play(E: ModuleType, seed: int, each: Callable[[Any], None] | None = None,
         record: list[dict[str, Any]] | None = None) -> Any:
    """One random 4-player game, as `lisboa-rules simulate` plays it; `each` sees every state,
    `record` gets every move (as JSON)."""
    g = E.new_game(PLAYERS, (), seed)
    rng = random.Random(f"moves:{seed}")
    if each is not None:
        each(g)
    while g.phase != "over":
        move = rng.choice(E.legal_moves(g))
        if record is not None:
            record.append(move.to_json())
        g = E.apply_move(g, move)
        if each is not None:
            each(g)
    return g


def end_states(E: ModuleType, n: int, seed0: int = 1000) -> list[Any]:
    return [play(E, seed0 + i) for i in range(n)]


# --- build ------------------------------------------------------------------------------------


class WatchProcess:
    """A warm `lisboa-rules build --watch` process on a copy of rules/ (issue 36), its stderr
    read line by line: `edit(value)` saves a new starting réis and returns the seconds from
    the save to the line that says the build is written (the polling included: what a
    designer waits), with the CPU seconds the process spent meanwhile in LAST_CPU."""

    def __init__(self, rules: Path, out: Path) -> None:
        import queue
        import threading

        self.game = rules / "game.yaml"
        self.text = self.game.read_text(encoding="utf-8")
        self.proc = subprocess.Popen(
            cli("build", "--watch", "--rules", str(rules), "--out", str(out)), cwd=ROOT,
            env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._built()  # the first build

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def _built(self) -> str:
        import queue

        said: list[str] = []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            said.append(line)
            if " built in " in line:
                if "(exit 0)" not in line:
                    raise RuntimeError(f"build --watch failed: {''.join(said)}")
                return line
        raise RuntimeError(f"build --watch did not build: {''.join(said)}")

    def _cpu(self) -> float:
        """The watch process's CPU seconds, with those of the workers it forked and waited
        for (the backstop's games: sim/backstop.py)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
        return ticks / os.sysconf("SC_CLK_TCK")

    def edit(self, value: int) -> float:
        cpu0 = self._cpu()
        t0 = time.perf_counter()
        self.game.write_text(self.text.replace("\n  reis: 10\n", f"\n  reis: {value}\n", 1),
                             encoding="utf-8")
        self._built()
        took = time.perf_counter() - t0
        LAST_CPU[0] = self._cpu() - cpu0
        return took

    def stop(self) -> None:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def bench_build(mode: Mode, tmp: Path) -> list[Row]:
    """Builds in fresh processes (and one warm `--watch` process), against the bare imports.
    A build reuses the results of passes whose inputs did not change (outputs/reuse.py), in
    the run's own cache folder (filled by the warm-up) with Jinja's compiled templates;
    `--check` reuses nothing. The edit rows change a number to a value never built before at
    every run, so no result keyed by the content of the edited file can be reused."""
    out_full = tmp / "build-full"
    out_check = tmp / "build-check"
    out_noop = tmp / "build-noop"
    rules_edit = tmp / "rules-edit"
    out_edit = tmp / "build-edit"
    rules_watch = tmp / "rules-watch"
    shutil.copytree(ROOT / "rules", rules_edit)
    shutil.copytree(ROOT / "rules", rules_watch)
    game = rules_edit / "game.yaml"
    game_text = game.read_text(encoding="utf-8")
    if "\n  reis: 10\n" not in game_text:
        raise RuntimeError("rules/game.yaml no longer has `  reis: 10` (the number edited)")
    for out in (out_check, out_noop):
        run_quiet(cli("build", "--out", str(out)))  # up-to-date folders
    run_quiet(cli("build", "--rules", str(rules_edit), "--out", str(out_edit)))
    base_cmd = [sys.executable, "-c", BASELINE_IMPORTS]

    def baseline(bytecode: bool) -> Callable[[], None]:
        def run() -> None:
            run_quiet(base_cmd, bytecode=bytecode)

        return run

    def build_into_empty(*flags: str, bytecode: bool = True) -> None:
        if out_full.exists():
            shutil.rmtree(out_full)
        run_quiet(cli("build", *flags, "--out", str(out_full)), bytecode=bytecode)

    def full(bytecode: bool) -> Callable[[], None]:
        return lambda: build_into_empty(bytecode=bytecode)

    def check(bytecode: bool) -> Callable[[], None]:
        def run() -> None:
            run_quiet(cli("build", "--check", "--out", str(out_check)), bytecode=bytecode)

        return run

    def noop() -> None:
        run_quiet(cli("build", "--out", str(out_noop)))

    edits = [0]

    def edit_then_build() -> None:
        # The starting réis go 11, 13, 15, ... (the watch row takes the even values: the two
        # copies of rules/ make the same engine for the same value): every run changes the
        # engine and the reference to a text never built before (no result keyed by them can
        # be reused), and the build rewrites them.
        edits[0] += 1
        value = 9 + 2 * edits[0]
        game.write_text(game_text.replace("\n  reis: 10\n", f"\n  reis: {value}\n", 1),
                        encoding="utf-8")
        run_quiet(cli("build", "--rules", str(rules_edit), "--out", str(out_edit)))

    watcher = WatchProcess(rules_watch, tmp / "build-watch")
    watch_edits = [0]

    def watch_edit() -> float:
        # the same edit, saved under a warm `build --watch`: from the save to the outputs
        # written (its polling included)
        watch_edits[0] += 1
        return watcher.edit(10 + 2 * watch_edits[0])

    machines = [0]

    def first_on_machine() -> None:
        # A machine that never built: no compiled templates anywhere (a cache folder of its
        # own, empty, found through XDG_CACHE_HOME as on a user's machine), an empty folder.
        machines[0] += 1
        home = tmp / f"first-machine-{machines[0]}"
        out = home / "out"
        env = child_env()
        env.pop("LISBOA_RULES_CACHE_DIR", None)
        env["XDG_CACHE_HOME"] = str(home / "cache")
        cpu0 = _children_cpu()
        done = subprocess.run(cli("build", "--out", str(out)), cwd=ROOT, capture_output=True,
                              text=True, check=False, env=env)
        LAST_CPU[0] = _children_cpu() - cpu0
        if done.returncode != 0 or not (home / "cache" / "lisboa-rules").is_dir():
            raise RuntimeError(f"first build exited {done.returncode} (or left no cache "
                               f"folder): {done.stderr.strip()}")
        shutil.rmtree(home)

    def floor() -> None:
        run_quiet([sys.executable, "-c", FLOOR_CODE])

    fns = [baseline(True), full(True), check(True), noop, edit_then_build,
           lambda: build_into_empty("--no-cache"), first_on_machine]
    if mode.no_pyc_rows:
        fns += [baseline(False), full(False), check(False)]
    fns.append(floor)
    at_floor = len(fns) - 1
    fns.append(watch_edit)
    at_watch = len(fns) - 1

    def validate(*flags: str) -> Callable[[], None]:
        return lambda: run_quiet(cli("validate", *flags))

    # the backstop's games (issue 33): validate with its default games, and with none
    from lisboa_rules.sim.backstop import DEFAULT_GAMES

    fns += [validate("--play", str(DEFAULT_GAMES)), validate("--play", "0")]
    at_play = len(fns) - 2
    cpu: list[list[float]] = [[] for _ in fns]
    # The warm-up fills the compiled-template cache (and the .pyc cache).
    warm = max(1, mode.warmup) if mode.no_pyc_rows else mode.warmup
    rounds = [0]

    def with_cpu(k: int, fn: Callable[[], float | None]) -> Callable[[], float | None]:
        def run() -> float | None:
            got = fn()
            if rounds[0] >= warm * len(fns):
                cpu[k].append(LAST_CPU[0])
            rounds[0] += 1
            return got if isinstance(got, float) else None  # a time it measured itself

        return run

    try:
        samples = interleaved([with_cpu(k, f) for k, f in enumerate(fns)], mode.build_reps, warm)
    finally:
        watcher.stop()
    files = sorted(str(p.relative_to(out_full)) for p in out_full.rglob("*") if p.is_file())
    base_label = f"python3 -c '{BASELINE_IMPORTS}' (fresh process)"
    listing = (
        f"{len(files)} output files: " + ", ".join(files[:5]) + (", ..." if len(files) > 5 else "")
    )
    every_stage = ("the same rules at every run: load, the four rule sets' analysis and the "
                   "byte-for-byte comparison run; the documents' validation, lower, emit, the "
                   "backstop's games and the engine's compile check are reused from the "
                   "private cache folder (outputs/reuse.py), with the compiled templates")
    check_stages = ("every pass runs (--check reuses nothing): load, validate, four rule sets, "
                    "emit, the backstop's games, compile() of the engine and the byte-for-byte "
                    "comparison; compiled templates come from the private cache folder")
    rows = [
        Row(
            "build.full",
            "build",
            "First build (all outputs, all variants, into an empty folder) vs importing the "
            "three libraries",
            Side("lisboa-rules build --out EMPTY_DIR (fresh process)", "s", samples[1], cpu[1]),
            Side(base_label, "s", samples[0], cpu[0]),
            "A / B (times)",
            "<=",
            2.0,
            note=listing + "; both with .pyc caches, as after pip install; " + every_stage
            + "; the writer writes every file",
        ),
        Row(
            "build.check",
            "build",
            "build --check on an up-to-date folder vs importing the three libraries",
            Side(
                "lisboa-rules build --check --out UP_TO_DATE_DIR (fresh process)",
                "s",
                samples[2],
                cpu[2],
            ),
            Side(base_label, "s", list(samples[0]), list(cpu[0])),
            "A / B (times)",
            "<=",
            2.0,
            note="both with .pyc caches; " + check_stages + "; nothing is written",
        ),
        Row(
            "build.noop",
            "build",
            "No-op build (the folder is up to date) vs importing the three libraries",
            Side("lisboa-rules build --out UP_TO_DATE_DIR (fresh process)", "s", samples[3],
                 cpu[3]),
            Side(base_label, "s", list(samples[0]), list(cpu[0])),
            "A / B (times)",
            "<=",
            2.0,
            note=every_stage + "; no file is touched (mtimes stay)",
        ),
        Row(
            "build.edit_one_number",
            "build",
            "Edit one number (the starting réis), then build, vs importing the three libraries",
            Side("edit rules/game.yaml; lisboa-rules build --out DIR (fresh process)", "s",
                 samples[4], cpu[4]),
            Side(base_label, "s", list(samples[0]), list(cpu[0])),
            "A / B (times)",
            "<=",
            3.0,
            note="the designer's loop (issue 36's target; issue 17's was 2x): a copy of rules/ "
            "with the starting réis set to a value never built before at every run (11, 13, "
            "...): every pass that reads game.yaml runs (the other files' validation is "
            "reused), the backstop's default games included; the engine and the reference are "
            "rewritten in one durable swap",
        ),
        Row(
            "build.full_no_cache",
            "build",
            "First build with no compiled templates (--no-cache) vs importing the three "
            "libraries",
            Side("lisboa-rules build --no-cache --out EMPTY_DIR (fresh process)", "s",
                 samples[5], cpu[5]),
            Side(base_label, "s", list(samples[0]), list(cpu[0])),
            "A / B (times)",
            note="informational: every stage, and every template compiled, as on a machine "
            "that never built (or whose cache folder is not private)",
        ),
        Row(
            "build.first_on_machine",
            "build",
            "First build on a machine (empty cache folder, empty output folder) vs importing "
            "the three libraries",
            Side("XDG_CACHE_HOME=EMPTY lisboa-rules build --out EMPTY_DIR (fresh process)", "s",
                 samples[6], cpu[6]),
            Side(base_label, "s", list(samples[0]), list(cpu[0])),
            "A / B (times)",
            "<=",
            2.0,
            note="a new cache folder at every run (found through XDG_CACHE_HOME, created 0700 "
            "by the build): every template compiled and written to it; both with .pyc caches",
        ),
    ]
    rows.append(Row(
        "build.watch_edit",
        "build",
        "Edit one number under a warm `build --watch`: save -> outputs written, vs importing "
        "the three libraries",
        Side("lisboa-rules build --watch (one process): save rules/game.yaml, wait for "
             "'built in' (warm)", "s", samples[at_watch], cpu[at_watch]),
        Side(base_label, "s", list(samples[0]), list(cpu[0])),
        "A / B (times)",
        "<=",
        1.0,
        note="issue 36: the same edit as build.edit_one_number (a value never built before: "
        "12, 14, ...) "
        "saved while one `build --watch` process runs; A is the wall time from the save to "
        f"its 'built in' line, the polling (every {WATCH_POLL} s, then {WATCH_SETTLE} s to "
        "settle) included, and its CPU the watch process's own with its workers' (/proc); "
        "imports, templates, the engine's code and "
        "the unchanged passes' results are warm in memory; the backstop's default games run",
    ))
    rows.append(Row(
        "build.floor",
        "build",
        "What no build goes below (yaml and jinja2 imported, rules/ parsed by libyaml, the "
        "engine compile()d) vs importing the three libraries",
        Side("python3 -c 'import yaml, jinja2; parse rules/*.yaml; compile(the engine)' "
             "(fresh process)", "s", samples[at_floor], cpu[at_floor]),
        Side(base_label, "s", list(samples[0]), list(cpu[0])),
        "A / B (times)",
        note="informational: the part of every build row above that no compiler can save; "
        "the 2x target leaves (2 - this ratio) x the imports for everything else a build does "
        "(the compiler's own imports, positions, validation, four rule sets, the engine's text, "
        "the reference, the comparison with the folder)",
    ))
    rows.append(Row(
        "build.backstop_games",
        "build",
        "validate with the backstop's default games (--play 2: a random and a greedy game of "
        "every rule set at every player count) vs validate with none (--play 0)",
        Side("lisboa-rules validate (fresh process)", "s", samples[at_play], cpu[at_play]),
        Side("lisboa-rules validate --play 0 (fresh process)", "s", samples[at_play + 1],
             cpu[at_play + 1]),
        "A / B (times)",
        note="informational: the cost of the default --play; every build and validate pays it",
    ))
    if mode.no_pyc_rows:
        why = (
            "informational: PYTHONDONTWRITEBYTECODE=1, so every lisboa_rules module is compiled "
            "from source at each start (the libraries keep their installed .pyc)"
        )
        rows += [
            Row(
                "build.full_no_pyc",
                "build",
                "First build vs the imports, without bytecode caches for the project",
                Side("lisboa-rules build --out EMPTY_DIR, no .pyc", "s", samples[8], cpu[8]),
                Side(base_label + ", no .pyc", "s", samples[7], cpu[7]),
                "A / B (times)",
                note=why,
            ),
            Row(
                "build.check_no_pyc",
                "build",
                "build --check vs the imports, without bytecode caches for the project",
                Side(
                    "lisboa-rules build --check --out UP_TO_DATE_DIR, no .pyc",
                    "s",
                    samples[9],
                    cpu[9],
                ),
                Side(base_label + ", no .pyc", "s", list(samples[7]), list(cpu[7])),
                "A / B (times)",
                note=why,
            ),
        ]
    return rows


# --- scoring ------------------------------------------------------------------------------------


def per_item(fn: Callable[[Any], Any], items: Sequence[Any]) -> Callable[[], float]:
    """A sample: the time of fn over all items, divided by their number (seconds per item)."""

    def run() -> float:
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        return (time.perf_counter() - t0) / len(items)

    return run


def bench_scoring(
    mode: Mode, E: ModuleType, interp: ModuleType | None, why: str, models: dict[Any, Any]
) -> tuple[list[Row], dict[str, Any]]:
    games = end_states(E, mode.states)
    states = [E.to_json(g) for g in games]
    pairs = list(zip(games, states, strict=True))
    checks: dict[str, Any] = {"states": len(games)}
    # Agreement first: the rows compare implementations that compute the same thing.
    sheets = [E.final_scores(g) for g in games]
    checks["handwritten_sheet_equal"] = all(
        hand.score_sheet(E, g) == s for g, s in zip(games, sheets, strict=True)
    )
    checks["handwritten_numbers_equal"] = all(
        hand.score_totals(g) == (tuple(tuple(ln.points for ln in ls) for ls in s.lines), s.totals)
        for g, s in zip(games, sheets, strict=True)
    )
    model = models.get(()) if interp is not None else None
    if interp is not None and model is not None:
        got = [interp.score(model, s) for s in states]
        checks["interp_totals_equal"] = all(
            a.totals == b.totals for a, b in zip(got, sheets, strict=True)
        )
        checks["interp_places_equal"] = all(
            tuple(interp.ranking(model, s, sc).places) == tuple(E.ranking(g, sh).places)
            for g, s, sc, sh in zip(games, states, got, sheets, strict=True)
        )
    eng = per_item(E.final_scores, games)
    eng_rank = per_item(lambda g: E.ranking(g, E.final_scores(g)), games)
    hand_sheet = per_item(lambda g: hand.score_sheet(E, g), games)
    hand_numbers = per_item(hand.score_totals, games)
    fns: list[Callable[[], float | None]] = [eng, eng_rank, hand_sheet, hand_numbers]
    if interp is not None and model is not None:
        fns += [
            per_item(lambda s: interp.score(model, s), states),
            per_item(lambda s: interp.ranking(model, s, interp.score(model, s)), states),
            per_item(lambda gs: E.final_scores(E.from_json(gs[1])), pairs),
        ]
    samples = interleaved(fns, mode.score_reps, mode.warmup)
    eng_label = "engine final_scores(game)"
    faster = "B / A (how many times faster A is)"
    rows = [
        Row(
            "scoring.vs_handwritten",
            "scoring",
            "Final scoring, generated engine vs hand-written straight-line code (same ScoreSheet)",
            Side(eng_label, "s", samples[0]),
            Side("benchmarks/handwritten_scoring.score_sheet(E, game)", "s", samples[2]),
            "A / B (times)",
            "<=",
            1.25,
            note="per 4-player end state; both build the same ScoreSheet, explanations included"
            + ("" if checks["handwritten_sheet_equal"] else "; WARNING: sheets differ"),
        ),
        Row(
            "scoring.vs_handwritten_numbers",
            "scoring",
            "Final scoring, engine (with explanations) vs hand-written numbers only",
            Side(eng_label, "s", list(samples[0])),
            Side("benchmarks/handwritten_scoring.score_totals(game)", "s", samples[3]),
            "A / B (times)",
            note="informational: the price of the explanation strings and of table-driven code",
        ),
    ]
    if interp is not None and model is not None:
        rows += [
            Row(
                "scoring.vs_interp",
                "scoring",
                "Final scoring, generated engine vs the reference interpreter",
                Side(eng_label, "s", list(samples[0])),
                Side("interp.score(model, state_json)", "s", samples[4]),
                faster,
                ">=",
                5.0,
                note="each on its own input: the engine on a Game, the interpreter on the JSON "
                "state (to_json not timed)",
                ratio_fn=lambda a, b: b / a,
            ),
            Row(
                "scoring.vs_interp_ranked",
                "scoring",
                "Final scoring + ranking, engine vs interpreter",
                Side("engine ranking(game, final_scores(game))", "s", samples[1]),
                Side("interp.ranking(model, s, interp.score(model, s))", "s", samples[5]),
                faster,
                note="informational",
                ratio_fn=lambda a, b: b / a,
            ),
            Row(
                "scoring.vs_interp_from_json",
                "scoring",
                "Final scoring from the JSON state, engine (from_json + final_scores) vs "
                "interpreter",
                Side("engine final_scores(from_json(state_json))", "s", samples[6]),
                Side("interp.score(model, state_json)", "s", list(samples[4])),
                faster,
                note="informational: the engine pays for reading (and checking) the saved game",
                ratio_fn=lambda a, b: b / a,
            ),
        ]
    else:
        rows.append(
            pending_row(
                "scoring.vs_interp",
                "scoring",
                "Final scoring, generated engine vs the reference interpreter",
                Side(eng_label, "s", list(samples[0])),
                "interp.score(model, state_json)",
                faster,
                ">=",
                5.0,
                why,
            )
        )
    return rows, checks


def pending_row(
    rid: str,
    section: str,
    title: str,
    a: Side,
    b_label: str,
    means: str,
    op: str | None,
    target: float | None,
    why: str,
) -> Row:
    return Row(rid, section, title, a, Side(b_label, a.unit), means, op, target, "pending", why)


# --- playouts ---------------------------------------------------------------------------------


def bench_playout(
    mode: Mode, E: ModuleType, interp: ModuleType | None, why: str, models: dict[Any, Any]
) -> list[Row]:
    seeds = list(range(2000, 2000 + mode.playout_games))
    nobles = [n.id for n in E.RULESETS[()].nobles]
    model = models.get(()) if interp is not None else None

    def engine_eval(g: Any) -> None:
        a = g.actor
        for n in nobles:
            E.wigs_due(g, a, E.visit_cost(g, a, n))
        E.final_scores(g)

    def rate(
        each: Callable[[Any], None] | None, final: Callable[[Any], Any]
    ) -> Callable[[], float]:
        def run() -> float:
            t0 = time.perf_counter()
            for s in seeds:
                final(play(E, s, each))
            return len(seeds) / (time.perf_counter() - t0)

        return run

    def engine_final(g: Any) -> Any:
        return E.ranking(g, E.final_scores(g))

    fns: list[Callable[[], float | None]] = [
        rate(None, engine_final),
        rate(engine_eval, engine_final),
    ]
    step_states: list[tuple[Any, Any]] = []
    if interp is not None and model is not None:
        it = interp

        def interp_eval(g: Any) -> None:
            s = E.to_json(g)
            a = g.actor
            for n in nobles:
                it.wigs_due(model, s, a, it.visit_cost(model, s, a, n))
            it.score(model, s)

        def interp_final(g: Any) -> Any:
            s = E.to_json(g)
            return it.ranking(model, s, it.score(model, s))

        fns.append(rate(interp_eval, interp_final))
        # The same per-step evaluation on recorded states, without playing or converting.
        for s in seeds:
            play(E, s, lambda g: step_states.append((g, E.to_json(g))))

        def eval_engine_only() -> float:
            t0 = time.perf_counter()
            for g, _ in step_states:
                a = g.actor
                for n in nobles:
                    E.wigs_due(g, a, E.visit_cost(g, a, n))
                E.final_scores(g)
            return (time.perf_counter() - t0) / len(step_states)

        def eval_interp_only() -> float:
            t0 = time.perf_counter()
            for g, s in step_states:
                a = g.actor
                for n in nobles:
                    it.wigs_due(model, s, a, it.visit_cost(model, s, a, n))
                it.score(model, s)
            return (time.perf_counter() - t0) / len(step_states)

        fns += [eval_engine_only, eval_interp_only]
    samples = interleaved(fns, mode.playout_reps, mode.warmup)
    step = (
        f"after every move: the visit cost of each Noble ({', '.join(nobles)}) for the player "
        "to move, the wigs due for it, and the full score of the state"
    )
    rows = [
        Row(
            "playout.engine",
            "playout",
            "Random 4-player games per second, generated engine alone (informational)",
            Side(
                "engine: legal_moves + apply_move to the end, final_scores + ranking",
                "/s",
                samples[0],
            ),
            Side("engine, plus the per-step evaluation below", "/s", samples[1]),
            "A / B (rates)",
            note="what `simulate` does; B shows what the per-step evaluation adds",
        )
    ]
    if interp is not None and model is not None:
        rows += [
            Row(
                "playout.vs_interp",
                "playout",
                "Random games per second with the rules evaluated at every step: engine vs "
                "interpreter",
                Side("engine plays; engine evaluates each step", "/s", list(samples[1])),
                Side(
                    "engine plays; interpreter evaluates each step (on to_json(state))",
                    "/s",
                    samples[2],
                ),
                "A / B (rates)",
                ">=",
                3.0,
                note="the interpreter cannot play (it scores, costs and checks triggers), so both "
                f"sides play with the engine and differ only in who evaluates {step}; the "
                "interpreter's side includes to_json of each state (its input); game end: "
                "ranking",
                ratio_fn=lambda a, b: a / b,
            ),
            Row(
                "playout.eval_only",
                "playout",
                "The same per-step evaluation on recorded states (no play, no to_json)",
                Side("engine evaluation of one state", "s", samples[3]),
                Side("interpreter evaluation of one state", "s", samples[4]),
                "B / A (how many times faster A is)",
                note=f"informational; {len(step_states)} states from {len(seeds)} games",
                ratio_fn=lambda a, b: b / a,
            ),
        ]
    else:
        rows.append(
            pending_row(
                "playout.vs_interp",
                "playout",
                "Random games per second with the rules evaluated at every step: engine vs "
                "interpreter",
                Side("engine plays; engine evaluates each step", "/s", list(samples[1])),
                "engine plays; interpreter evaluates each step",
                "A / B (rates)",
                ">=",
                3.0,
                why,
            )
        )
    return rows


# --- against the frozen engine (issue 14) ------------------------------------------------------


def bench_oracle(mode: Mode, E: ModuleType, tmp: Path) -> list[Row]:
    """The engine against the frozen copy of the one main generated before the game's
    structure became data (tests/oracle/): random playouts and final scoring, side by side.
    This engine plays the frozen copy's rules (no starting Plan: `old_rules_engine`)."""
    old = load_engine(FROZEN)
    E = old_rules_engine(tmp)
    seeds = list(range(3000, 3000 + mode.playout_games))
    # The engines list the same moves, not always in the same order: the games are played once
    # (random moves of this engine's lists) and replayed by both, so both time the same games.
    scripts: list[list[dict[str, Any]]] = []
    ends_new = []
    for s in seeds:
        seq: list[dict[str, Any]] = []
        ends_new.append(play(E, s, None, seq))
        scripts.append(seq)
    ends_old = [old.from_json(to_old(E, g)) for g in ends_new]

    def playouts(M: ModuleType) -> Callable[[], float]:
        moves = [[M.Move.from_json(m) for m in seq] for seq in scripts]

        def run() -> float:
            t0 = time.perf_counter()
            for s, seq in zip(seeds, moves, strict=True):
                g = M.new_game(PLAYERS, (), s)
                for m in seq:
                    M.legal_moves(g)
                    g = M.apply_move(g, m)
            return len(seeds) / (time.perf_counter() - t0)

        return run

    def scoring(M: ModuleType, ends: list[Any]) -> Callable[[], float]:
        def run() -> float:
            t0 = time.perf_counter()
            for _ in range(20):
                for g in ends:
                    M.ranking(g, M.final_scores(g))
            return 20 * len(ends) / (time.perf_counter() - t0)

        return run

    samples = interleaved(
        [playouts(E), playouts(old), scoring(E, ends_new), scoring(old, ends_old)],
        mode.playout_reps,
        mode.warmup,
    )
    return [
        Row(
            "oracle.playout",
            "oracle",
            "Random games per second: this engine vs the frozen one (before issue 14)",
            Side("this engine (the frozen copy's rules: no starting Plan): legal_moves + "
                 "apply_move to the end", "/s", samples[0]),
            Side("frozen engine (tests/oracle/frozen_engine.py), the same games", "/s", samples[1]),
            "A / B (rates)",
            ">=",
            1.0,
            note="the same games: played once, replayed move by move by both engines",
            ratio_fn=lambda a, b: a / b,
        ),
        Row(
            "oracle.scoring",
            "oracle",
            "Final scoring and ranking per second: this engine vs the frozen one",
            Side("this engine: final_scores + ranking of finished games", "/s", samples[2]),
            Side("frozen engine, the same finished games (read with from_json)", "/s",
                 samples[3]),
            "A / B (rates)",
            ">=",
            1.0,
            ratio_fn=lambda a, b: a / b,
        ),
    ]


# --- the compiled engine and move generation (issue 17) -----------------------------------------


# The generated engine on main when issue 17 was filed (the parent of the merge that began it):
# its targets are against this engine, so the row stays the same comparison as main moves on.
ISSUE17_BASE = "38ab52af29ad7e75cd33e8d49a68eaa9a54be87c"


def _main_engine(tmp: Path) -> tuple[ModuleType, str]:
    """The generated engine issue 17 started from (`git show ISSUE17_BASE:...`), copied now;
    main's when git does not have that commit (a shallow clone); the frozen engine when git has
    neither."""
    for rev, label in (
        (ISSUE17_BASE, f"issue 17's starting engine (git show {ISSUE17_BASE[:7]})"),
        ("main", "main's engine (git show main:generated/lisboa_engine.py)"),
    ):
        module = _engine_at(rev, tmp, "lisboa_engine_main")
        if module is not None:
            return module, label
    return (load_engine(FROZEN, "lisboa_engine_main"),
            "the frozen engine (tests/oracle/frozen_engine.py: git has neither)")


def _compiled_engine(engine: Path, tmp: Path, level: int) -> tuple[ModuleType | None, str]:
    """The engine compiled with mypyc (`lisboa-rules compile`; kept in the user's cache folder,
    as the compiled engine's test keeps it), or None and why not."""
    from lisboa_rules.cli import compile as compile_cli

    missing = compile_cli.missing_tools()
    if missing:
        return None, "needs " + ", ".join(missing)
    try:
        done = compile_cli.compile_engine(engine.read_bytes(), tmp / "compiled", level,
                                          cache_root=compile_cli.user_cache_root())
    except compile_cli.CompileError as exc:
        return None, str(exc).splitlines()[0]
    name = compile_cli.MODULE
    saved = sys.modules.pop(name, None)
    try:
        spec = importlib.util.spec_from_file_location(name, done.path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
        if saved is not None:
            sys.modules[name] = saved
    how = "from the cache" if done.cached else f"compiled in {done.seconds:.0f} s"
    return module, f"mypyc level {level}, {how}"


def _scripts(E: ModuleType, players: int, seeds: Sequence[int]) -> list[list[dict[str, Any]]]:
    """Random games of `E`, as the moves made (JSON), to replay in every engine."""
    out = []
    for s in seeds:
        g = E.new_game(players, (), s)
        rng = random.Random(f"moves:{players}:{s}")
        seq = []
        while g.phase != "over":
            move = rng.choice(E.legal_moves(g))
            seq.append(move.to_json())
            g = E.apply_move(g, move)
        out.append(seq)
    return out


def _replay(M: ModuleType, players: int, seeds: Sequence[int],
            scripts: list[list[dict[str, Any]]]) -> Callable[[], float]:
    """Games per second of `M` replaying the scripts: legal_moves then apply_move at every
    state, as a random playout does."""
    moves = [[M.Move.from_json(m) for m in seq] for seq in scripts]

    def run() -> float:
        t0 = time.perf_counter()
        for s, seq in zip(seeds, moves, strict=True):
            g = M.new_game(players, (), s)
            for m in seq:
                M.legal_moves(g)
                g = M.apply_move(g, m)
        return len(seeds) / (time.perf_counter() - t0)

    return run


def _listing(M: ModuleType, states: list[Any]) -> Callable[[], float]:
    """States per second through `legal_moves` alone."""
    def run() -> float:
        t0 = time.perf_counter()
        for g in states:
            M.legal_moves(g)
        return len(states) / (time.perf_counter() - t0)

    return run


def _scoring(M: ModuleType, ends: list[Any]) -> Callable[[], float]:
    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(20):
            for g in ends:
                M.ranking(g, M.final_scores(g))
        return 20 * len(ends) / (time.perf_counter() - t0)

    return run


def _peak_memory(M: ModuleType, players: int, seed: int) -> float:
    """Peak bytes allocated (tracemalloc) while `M` plays one random game."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        g = M.new_game(players, (), seed)
        rng = random.Random(f"memory:{seed}")
        while g.phase != "over":
            g = M.apply_move(g, rng.choice(M.legal_moves(g)))
        M.ranking(g, M.final_scores(g))
        return float(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


# The compiled engine, once the compiled section has made it (the balance section measures its
# scoring of a greedy move's candidates too).
COMPILED: list[ModuleType | None] = [None]
COMPILED_WHY: list[str] = []  # why it could not be compiled, once the compiled section tried


def bench_compiled(mode: Mode, E: ModuleType, engine: Path, tmp: Path) -> list[Row]:
    """Move generation against main's engine, and the engine compiled with mypyc against the
    pure one (issue 17): random playouts, legal_moves alone, final scoring, each player count,
    peak memory; each pair timed side by side, alternating."""
    rows: list[Row] = []
    seeds = list(range(4000, 4000 + mode.playout_games))
    old, old_label = _main_engine(tmp)
    pure = E
    E = old_rules_engine(tmp)  # the rules of issue 17's starting engine: no starting Plan
    scripts = _scripts(E, PLAYERS, seeds)
    got = interleaved([_replay(E, PLAYERS, seeds, scripts), _replay(old, PLAYERS, seeds, scripts)],
                      mode.playout_reps, mode.warmup)
    rows.append(Row(
        "moves.playout_vs_main", "compiled",
        "Random games per second: this engine (pure Python) vs the one issue 17 started from",
        Side("this engine (its rules then: no starting Plan): legal_moves + apply_move at "
             "every state", "/s", got[0]),
        Side(old_label, "/s", got[1]),
        "A / B (rates)", ">=", 1.4,
        note="the same games: played once, replayed move by move by both engines",
    ))
    states: list[Any] = []
    for s, seq in zip(seeds, scripts, strict=True):
        g = E.new_game(PLAYERS, (), s)
        for m in seq:
            states.append(g)
            g = E.apply_move(g, E.Move.from_json(m))
    old_states = [old.from_json(to_old(E, g)) for g in states]
    got = interleaved([_listing(E, states), _listing(old, old_states)], mode.playout_reps,
                      mode.warmup)
    rows.append(Row(
        "moves.legal_moves_vs_main", "compiled",
        "States listed per second (legal_moves alone): this engine vs main's",
        Side("this engine: legal_moves of every state of the games", "/s", got[0]),
        Side(old_label + ", the same states", "/s", got[1]),
        "A / B (rates)",
    ))
    # the compiled engine against the pure one: generated/'s rules, games of their own
    E = pure
    scripts = _scripts(E, PLAYERS, seeds)
    states = []
    for s, seq in zip(seeds, scripts, strict=True):
        g = E.new_game(PLAYERS, (), s)
        for m in seq:
            states.append(g)
            g = E.apply_move(g, E.Move.from_json(m))
    # level 3, the engine users get; level 0 (the same C code, compiled in a minute, the one
    # tests/engine/test_compiled_engine.py keeps) for the smoke test's --tiny
    C, how = _compiled_engine(engine, tmp, 0 if mode.name == "tiny" else 3)
    titles = {
        "compiled.playout": ("Random games per second: compiled (mypyc) vs pure engine", 4.0),
        "compiled.legal_moves": ("States listed per second: compiled vs pure", None),
        "compiled.scoring": ("Final scoring and ranking per second: compiled vs pure", 2.5),
        **{f"compiled.players{n}": (f"Random {n}-player games per second: compiled vs pure",
                                    None) for n in (2, 3, 4)},
    }
    if C is None:
        COMPILED_WHY.append(how)
        for rid, (title, target) in titles.items():
            rows.append(Row(rid, "compiled", title, Side("compiled engine", "/s"),
                            Side("pure engine", "/s"), "A / B (rates)",
                            ">=" if target else None, target, status="pending", note=how))
        return rows
    COMPILED[0] = C
    c_states = [C.from_json(E.to_json(g)) for g in states]
    ends = end_states(E, mode.states // 4 or 1, 5000)
    c_ends = [C.from_json(E.to_json(g)) for g in ends]
    got = interleaved(
        [_replay(C, PLAYERS, seeds, scripts), _replay(E, PLAYERS, seeds, scripts),
         _listing(C, c_states), _listing(E, states), _scoring(C, c_ends), _scoring(E, ends)],
        mode.playout_reps, mode.warmup,
    )
    for k, rid in enumerate(("compiled.playout", "compiled.legal_moves", "compiled.scoring")):
        title, target = titles[rid]
        rows.append(Row(rid, "compiled", title,
                        Side(f"compiled engine ({how})", "/s", got[2 * k]),
                        Side("pure engine (generated/lisboa_engine.py)", "/s", got[2 * k + 1]),
                        "A / B (rates)", ">=" if target else None, target,
                        note="the same games, states and finished games in both engines"))
    for n in (2, 3, 4):
        n_scripts = _scripts(E, n, seeds)
        got = interleaved([_replay(C, n, seeds, n_scripts), _replay(E, n, seeds, n_scripts)],
                          mode.playout_reps, mode.warmup)
        title, _ = titles[f"compiled.players{n}"]
        rows.append(Row(f"compiled.players{n}", "compiled", title,
                        Side("compiled engine", "/s", got[0]), Side("pure engine", "/s", got[1]),
                        "A / B (rates)"))
    peaks = interleaved([lambda: _peak_memory(C, PLAYERS, 4100),
                         lambda: _peak_memory(E, PLAYERS, 4100)], max(1, mode.playout_reps // 2), 0)
    rows.append(Row(
        "compiled.peak_memory", "compiled",
        "Peak memory of one random 4-player game (tracemalloc): compiled vs pure",
        Side("compiled engine", "B", peaks[0]), Side("pure engine", "B", peaks[1]),
        "A / B (bytes)", ratio_fn=lambda a, b: a / b,
    ))
    return rows


# --- speed: the engine against today's (issue 36) ---------------------------------------------

# The engine of the last commit before issue 36 ("today's pure engine" of its targets).
ISSUE36_BASE = "08590d2"


def _totals(M: ModuleType, ends: list[Any]) -> Callable[[], float]:
    """Finished games scored per second through `final_totals` alone (what the agents call)."""
    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(20):
            for g in ends:
                M.final_totals(g)
        return 20 * len(ends) / (time.perf_counter() - t0)

    return run


def bench_speed(mode: Mode, E: ModuleType, engine: Path, tmp: Path) -> list[Row]:
    """Issue 36's engine targets: the compiled engine and this pure one against the pure engine
    of the commit before the issue, on random playouts (moves per second, each engine its own
    games of the same seeds) and final scoring (the same finished games)."""
    seeds = list(range(6000, 6000 + mode.playout_games))
    today = _engine_at(ISSUE36_BASE, tmp, "lisboa_engine_before_speed")
    label = f"today's pure engine (git show {ISSUE36_BASE}), the same seeds"
    if today is None:  # a shallow clone: the frozen engine (before issue 14) stands in
        today = load_engine(FROZEN, "lisboa_engine_frozen_speed")
        label = (f"the frozen engine (tests/oracle/frozen_engine.py: git has no commit "
                 f"{ISSUE36_BASE}), the same seeds")
    rows: list[Row] = []
    got = interleaved([_random_games(E, PLAYERS, seeds), _random_games(today, PLAYERS, seeds)],
                      mode.playout_reps, mode.warmup)
    rows.append(Row(
        "speed.pure_playout", "speed",
        "Random playout moves per second: this pure engine vs today's pure engine (issue 36)",
        Side("this engine (generated/lisboa_engine.py): legal_moves + apply_move to the end",
             "/s", got[0]),
        Side(label, "/s", got[1]),
        "A / B (rates)", ">=", 1.3,
        note="each engine plays its own random games of the same seeds",
    ))
    if callable(getattr(E, "playout", None)):
        got = interleaved([_engine_playouts(E, PLAYERS, seeds),
                           _random_games(today, PLAYERS, seeds)],
                          mode.playout_reps, mode.warmup)
        rows.append(Row(
            "speed.engine_playout", "speed",
            "Random playout moves per second: this pure engine's own playout (what its bots "
            "play on) vs today's pure engine (issue 36)",
            Side("this engine: playout(game, rng) to the end (the same games)", "/s", got[0]),
            Side(label + ": legal_moves + apply_move", "/s", got[1]),
            "A / B (rates)", ">=", 1.3,
            note="the same random games of the same seeds, checked by their winners; "
                 "speed.pure_playout is the checked public path",
        ))
    C = COMPILED[0]
    how = "the compiled section's"
    if C is None:
        C, how = _compiled_engine(engine, tmp, 0 if mode.name == "tiny" else 3)
    titles = (("speed.compiled_playout", "Random playout moves per second: compiled (mypyc) vs "
               "today's pure engine"),
              ("speed.compiled_scoring", "Finished games scored per second (final_totals): "
               "compiled vs today's pure engine"))
    if C is None:
        for rid, title in titles:
            rows.append(Row(rid, "speed", title, Side("compiled engine", "/s"),
                            Side(label, "/s"), "A / B (rates)", ">=", 6.0, status="pending",
                            note=how))
        return rows
    ends = end_states(E, mode.states // 4 or 1, 5000)
    c_ends = [C.from_json(E.to_json(g)) for g in ends]
    t_ends = [today.from_json(E.to_json(g)) for g in ends]
    got = interleaved([_random_games(C, PLAYERS, seeds), _random_games(today, PLAYERS, seeds),
                       _totals(C, c_ends), _totals(today, t_ends)],
                      mode.playout_reps, mode.warmup)
    for k, (rid, title) in enumerate(titles):
        rows.append(Row(rid, "speed", title,
                        Side(f"compiled engine (mypyc, {how})", "/s", got[2 * k]),
                        Side(label, "/s", got[2 * k + 1]),
                        "A / B (rates)", ">=", 6.0,
                        note="the same seeds (playouts) and the same finished games (scoring)"))
    if callable(getattr(C, "playout", None)):
        got = interleaved([_engine_playouts(C, PLAYERS, seeds),
                           _random_games(today, PLAYERS, seeds)],
                          mode.playout_reps, mode.warmup)
        rows.append(Row(
            "speed.compiled_engine_playout", "speed",
            "Random playout moves per second: the compiled engine's own playout (what its bots "
            "play on) vs today's pure engine",
            Side(f"compiled engine (mypyc, {how}): playout(game, rng) to the end", "/s",
                 got[0]),
            Side(label + ": legal_moves + apply_move", "/s", got[1]),
            "A / B (rates)", ">=", 6.0,
            note="the same random games of the same seeds, checked by their winners",
        ))
    return rows


# --- scaling ----------------------------------------------------------------------------------


# --- views, choices and events (issue 35) --------------------------------------------------------


# The engine of the last commit before issue 35's views (the Church track's branch, whose rules
# play as today's): random playouts of this engine must be no slower than of that one.
ISSUE35_BASE = "b3b25b6"


def _engine_at(rev: str, tmp: Path, name: str) -> ModuleType | None:
    """generated/lisboa_engine.py of commit `rev`, imported as `name` (None: git lacks it)."""
    try:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:generated/lisboa_engine.py"],
            capture_output=True, text=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = tmp / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return load_engine(path, name)


def _random_games(M: ModuleType, players: int, seeds: Sequence[int],
                  start: Callable[[Any], Any] = lambda g: g) -> Callable[[], float]:
    """Moves per second of `M` in random games: legal_moves then apply_move of a seeded
    choice, to the end (per move: two engines whose games differ in length compare fairly)."""
    def run() -> float:
        t0 = time.perf_counter()
        moves = 0
        for s in seeds:
            rng = random.Random(s)
            g = start(M.new_game(players, (), s))
            while g.phase != "over":
                g = M.apply_move(g, rng.choice(M.legal_moves(g)))
                moves += 1
        return moves / (time.perf_counter() - t0)

    return run


def _engine_playouts(M: ModuleType, players: int, seeds: Sequence[int]) -> Callable[[], float]:
    """Moves per second of `M.playout` (the engine's own loop, which its bots' searches play
    on) over the random games `_random_games` plays: the same draws of the same generators,
    so the same games (their moves counted and their winners checked once, untimed)."""
    moves = 0
    for s in seeds:
        rng = random.Random(s)
        g = M.new_game(players, (), s)
        while g.phase != "over":
            g = M.apply_move(g, rng.choice(M.legal_moves(g)))
            moves += 1
        first = M.ranking(g).places[0]
        want = [1.0 / len(first) if seat in first else 0.0 for seat in range(players)]
        got = M.playout(M.new_game(players, (), s), random.Random(s))
        if got != want:
            raise AssertionError(f"playout of seed {s} is not the public path's game: {got}")

    def run() -> float:
        t0 = time.perf_counter()
        for s in seeds:
            M.playout(M.new_game(players, (), s), random.Random(s))
        return moves / (time.perf_counter() - t0)

    return run


def bench_views(mode: Mode, E: ModuleType, tmp: Path) -> list[Row]:
    """Views, choices and events cost nothing unused: random playouts against the engine before
    them; what recording events costs; what building every move choice by choice costs."""
    rows: list[Row] = []
    seeds = list(range(5000, 5000 + mode.playout_games))
    old = _engine_at(ISSUE35_BASE, tmp, "lisboa_engine_before_views")
    before = f"the engine before views (git show {ISSUE35_BASE}), the same seeds"
    if old is None:  # a shallow clone: the frozen engine (before issue 14) stands in
        old = load_engine(FROZEN, "lisboa_engine_frozen_views")
        before = (f"the frozen engine (tests/oracle/frozen_engine.py: git has no commit "
                  f"{ISSUE35_BASE}), the same seeds")
    got = interleaved([_random_games(E, PLAYERS, seeds), _random_games(old, PLAYERS, seeds)],
                      mode.playout_reps, mode.warmup)
    rows.append(Row(
        "views.playout_vs_before", "views",
        "Random playout moves per second: this engine vs the one before views (issue 35)",
        Side("this engine: legal_moves + apply_move to the end (views, options and events "
             "unused)", "/s", got[0]),
        Side(before, "/s", got[1]),
        "A / B (rates)", ">=", 0.95,
        note="each engine plays its own random games of the same seeds (the rules have "
             "been refined since: the games differ a little)",
    ))
    got = interleaved([_random_games(E, PLAYERS, seeds, E.record),
                       _random_games(E, PLAYERS, seeds)], mode.playout_reps, mode.warmup)
    rows.append(Row(
        "events.record", "views",
        "Random playout moves per second: recording what happens (record, for events) vs not",
        Side("this engine, playing on record(game)", "/s", got[0]),
        Side("this engine, the same games not recorded", "/s", got[1]),
        "A / B (rates)",
    ))
    return rows


def bench_scaling(mode: Mode, tmp: Path) -> tuple[list[Row], dict[str, Any]]:
    rules = ROOT / "rules"
    times: dict[int, list[float]] = {}
    sizes: dict[int, tuple[int, int]] = {}
    status: dict[int, str] = {}
    cpus: dict[int, list[float]] = {}
    for k, reps in zip(mode.scales, mode.scale_reps, strict=True):
        d = scale_rules.make_scaled_rules(rules, tmp / f"rules-x{k}", k)
        sizes[k] = scale_rules.count_items((d / "components.yaml").read_text(encoding="utf-8"))
        out = tmp / f"out-x{k}"
        # --no-cache: every repetition runs the whole pipeline (a cache hit would time nothing)
        cmd = cli("build", "--no-cache", "--rules", str(d), "--out", str(out))
        times[k] = []
        cpus[k] = []
        status[k] = "ok"
        for _ in range(reps):
            if out.exists():
                shutil.rmtree(out)
            gc.collect()
            t0 = time.perf_counter()
            try:
                run_quiet(cmd, timeout=mode.scale_timeout)
            except subprocess.TimeoutExpired:
                status[k] = "timeout"
                break
            except RuntimeError as exc:
                status[k] = "error: " + str(exc)[-300:]
                break
            times[k].append(time.perf_counter() - t0)
            cpus[k].append(LAST_CPU[0])
        if status[k] != "ok":
            break  # larger scales would only take longer
    base = mode.scales[0]
    rows: list[Row] = []
    for k in mode.scales:
        st = status.get(k, "skipped")
        rows.append(
            Row(
                f"scaling.build_x{k}",
                "scaling",
                f"Full build with the rules scaled {k}x ({sizes.get(k, ('?', '?'))[0]} cards, "
                f"{sizes.get(k, ('?', '?'))[1]} Decrees) vs 1x",
                Side(f"build, rules x{k} (fresh process)", "s", times.get(k, []), cpus.get(k, [])),
                Side(
                    f"build, rules x{base} (fresh process)",
                    "s",
                    list(times.get(base, [])),
                    list(cpus.get(base, [])),
                ),
                "A / B (times)",
                "<=",
                float(k) / base,
                status="ok" if st == "ok" else ("timeout" if st == "timeout" else "error"),
                note=""
                if st == "ok"
                else (f"stopped after {mode.scale_timeout:.0f} s" if st == "timeout" else st),
            )
        )
    med = {k: statistics.median(v) for k, v in times.items() if v and status.get(k) == "ok"}
    ks = [k for k in mode.scales if k in med]
    steps = []
    for lo, hi in itertools.pairwise(ks):
        marginal = (med[hi] - med[lo]) / (hi - lo)
        exponent = math.log(med[hi] / med[lo]) / math.log(hi / lo)
        steps.append(
            {"from": lo, "to": hi, "seconds_per_extra_copy": marginal, "local_exponent": exponent}
        )
    linear: bool | None = None
    marginal_ratio: float | None = None
    if len(ks) == len(mode.scales) and len(steps) >= 2:
        # No worse than linear: between the two largest scales (where the fixed cost of a build
        # no longer hides the growth) time grows at most like size^1.1, and time(k) <= k *
        # time(1). A quadratic term shows as an exponent near 2 (the overlay bug gave 2.1).
        linear = steps[-1]["local_exponent"] <= 1.1 and all(
            med[k] <= med[base] * k / base for k in ks
        )
        # Informational: how the cost of one more copy changes from the first to the last step.
        # Linear stages that walk a bigger heap (deepcopy, dict splits) raise it by about 25%:
        # caches and memory, not an algorithm.
        first = steps[0]["seconds_per_extra_copy"]
        marginal_ratio = steps[-1]["seconds_per_extra_copy"] / max(first, 1e-9)
    elif len(ks) < len(mode.scales):
        linear = False  # a scale timed out or failed
    summary = {
        "scales": list(mode.scales),
        "sizes": {str(k): {"cards": v[0], "decrees": v[1]} for k, v in sizes.items()},
        "median_build_s": {str(k): v for k, v in med.items()},
        "status": {str(k): v for k, v in status.items()},
        "steps": steps,
        "linear": linear,
        "marginal_cost_ratio": marginal_ratio,
        "rule": "linear when the local exponent log(t2/t1)/log(k2/k1) between the two largest "
        "scales is at most 1.1 and build(k) <= k x build(1) for every k; marginal_cost_ratio "
        "(seconds per extra copy at the last step / at the first step) is informational",
    }
    return rows, summary


# --- simulate --jobs ----------------------------------------------------------------------------


def bench_simulate(mode: Mode, engine: Path) -> list[Row]:
    title = "lisboa-rules simulate: games per second, --jobs 2 vs --jobs 1"
    help_text = subprocess.run(
        cli("simulate", "--help"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    if help_text.returncode != 0 or "--jobs" not in help_text.stdout:
        why = (
            "the simulate command is missing"
            if help_text.returncode != 0
            else "simulate has no --jobs option yet"
        )
        return [
            pending_row(
                "simulate.jobs",
                "simulate",
                title,
                Side("simulate --jobs 2", "/s"),
                "simulate --jobs 1",
                "A / B (rates)",
                ">=",
                1.7,
                why,
            )
        ]
    outputs: dict[int, str] = {}

    def sim(jobs: int) -> Callable[[], float]:
        cmd = cli(
            "simulate",
            "--games",
            str(mode.sim_games),
            "--seed",
            "0",
            "--players",
            str(PLAYERS),
            "--jobs",
            str(jobs),
            "--engine",
            str(engine),
            "--format",
            "json",
        )

        def run() -> float:
            t0 = time.perf_counter()
            done = run_quiet(cmd)
            dt = time.perf_counter() - t0
            outputs[jobs] = done.stdout
            return mode.sim_games / dt

        return run

    # Control: the speedup this machine gives two CPU-bound processes right now (other load,
    # or CPU shares per session, can leave less than 2 CPUs to this run).
    burn = [sys.executable, "-c", f"sum(i * i for i in range({mode.burn_loop}))"]

    def burners(n: int) -> Callable[[], float]:
        def run() -> float:
            t0 = time.perf_counter()
            procs = [subprocess.Popen(burn, env=child_env()) for _ in range(n)]
            for proc in procs:
                proc.wait()
            return n / (time.perf_counter() - t0)

        return run

    samples = interleaved([sim(2), sim(1), burners(2), burners(1)], mode.sim_reps, mode.warmup)
    same = outputs.get(1) == outputs.get(2)
    return [
        Row(
            "simulate.jobs",
            "simulate",
            title,
            Side(f"simulate --games {mode.sim_games} --jobs 2 (fresh process)", "/s", samples[0]),
            Side(f"simulate --games {mode.sim_games} --jobs 1 (fresh process)", "/s", samples[1]),
            "A / B (rates)",
            ">=",
            1.7,
            note=(
                "same summary with 1 and 2 jobs"
                if same
                else "WARNING: the summaries of --jobs 1 and --jobs 2 differ"
            )
            + f"; wall time includes process start and engine import; {os.cpu_count()} CPUs; "
            "compare with simulate.control",
        ),
        Row(
            "simulate.control",
            "simulate",
            "Control: two CPU-bound processes at once vs one (the most --jobs 2 can gain here)",
            Side("2 concurrent python3 busy loops, per second", "/s", samples[2]),
            Side("1 python3 busy loop, per second", "/s", samples[3]),
            "A / B (rates)",
            note="informational: about 2x on an idle 2-CPU machine; about 1x when other "
            "sessions keep the CPUs busy",
        ),
    ]


# --- balance (issues 16, 36): the agents' speed ----------------------------------------------

# Per mode: greedy games timed (3 players, 2 jobs; the time is scaled to 10,000 games), their
# repetitions, the states of a game MCTS chooses a move in, and the greedy games played in
# process by the engine's loops and by the agents' own.
BALANCE_SIZES = {"full": (200, 5, 12, 6), "quick": (60, 1, 6, 3), "tiny": (4, 1, 1, 1)}
BALANCE_GAMES = 10_000  # the issue's figure: 10,000 three-player greedy games in 60 s on 2 jobs
# issue 36's budgets, for the compiled engine: 10,000 greedy games on 2 processes, one honest
# MCTS move of 200 iterations
BUDGET_GREEDY_10K = 60.0
BUDGET_MCTS_MOVE = 0.25
INNER_LOOPS = ("random_move", "greedy_move", "mcts_move", "redeal", "playout")


class _OwnLoops:
    """An engine without its inner loops (issue 36): the agents run their own loops on it, as
    on an engine made before them (the same moves for the same seed, tests/sim/
    test_inner_loops.py)."""

    def __init__(self, engine: ModuleType) -> None:
        self.engine = engine

    def __getattr__(self, name: str) -> Any:
        if name in INNER_LOOPS:
            raise AttributeError(name)
        return getattr(self.engine, name)


def bench_balance(mode: Mode, E: ModuleType, engine: Path, tmp: Path) -> list[Row]:
    """`lisboa-rules balance`'s agents: 10,000 three-player greedy games on 2 jobs (timed on a
    sample and scaled), and one MCTS move of 200 iterations; each against issue 36's budget,
    with the compiled engine (the compiled section's, or compiled here; the pure engine when
    none can be). The note says where a greedy move's time goes per candidate: making the
    state after it (`successors`, or `apply_move` for an engine without it) and scoring it
    (`final_totals`, or `final_scores`), as the agent does. Two rows measure what moving the
    agents' inner loops into the engine gave (pure engine): a greedy game's CPU and one MCTS
    move, the engine's loops vs the agents' own."""
    from lisboa_rules.sim import executors, make_agent, runner
    from lisboa_rules.sim.agents import DEFAULT_HORIZON

    games, reps, mcts_states, loop_games = BALANCE_SIZES[mode.name]
    jobs = runner.chunks(str(engine), 3, (), 0, games, ("greedy",), runner.Options(), 2)
    C = COMPILED[0]
    how = "the compiled section's"
    if C is None and COMPILED_WHY:
        how = COMPILED_WHY[0]
    elif C is None:
        C, how = _compiled_engine(engine, tmp, 0 if mode.name == "tiny" else 3)
        COMPILED[0] = C
    M = E if C is None else C
    which = f"compiled engine ({how})" if C is not None else f"pure engine (not compiled: {how})"

    cpu: list[float] = []

    def greedy() -> float:
        c0 = _children_cpu()
        t0 = time.perf_counter()
        executors.run_processes(M, jobs, 2)
        wall = time.perf_counter() - t0
        # the workers' CPU seconds over 2: the wall time on two idle cores
        cpu.append((_children_cpu() - c0) / 2 * BALANCE_GAMES / games)
        return wall * BALANCE_GAMES / games

    budget_greedy = [BUDGET_GREEDY_10K]
    samples = interleaved([greedy], reps, 0)[0]
    # where a greedy decision's time goes: every candidate is applied, then scored
    # (with the engine's `successors`, as the agent plays: each candidate's state made once)
    states = [s for s in end_states_of_play(E, 3, 7) if E.legal_moves(s)][::9]
    apply_s = score_s = 0.0
    candidates = 0
    has_successors = callable(getattr(E, "successors", None))
    score = getattr(E, "final_totals", E.final_scores)
    for g in states:
        if has_successors:
            t0 = time.perf_counter()
            afters = [after for _m, after in E.successors(g)]
            apply_s += time.perf_counter() - t0
        else:
            afters = []
            for m in E.legal_moves(g):
                t0 = time.perf_counter()
                afters.append(E.apply_move(g, m))
                apply_s += time.perf_counter() - t0
        for after in afters:
            t1 = time.perf_counter()
            score(after)
            score_s += time.perf_counter() - t1
            candidates += 1
    made = "successors" if has_successors else "apply_move"
    # the budget of one candidate: 60 s on 2 cores over every candidate of 10,000 games
    per_game = _candidates_per_game(E, 3, 2)
    budget = 60.0 * 2 / (BALANCE_GAMES * per_game)
    scored = [a for g in states[:40] for _m, a in E.successors(g)] if has_successors else []
    score_alone = _per_state(score, scored, reps + 2) if scored else []
    floor_rows = []
    if score_alone:
        budget_note = (f"the budget: 60 s x 2 cores / (10,000 games x {per_game:,.0f} candidates a "
                       "game, counted in 2 seeded greedy 3-player games)")
        floor_rows.append(Row(
            "balance.greedy_candidate",
            "balance",
            "Scoring one candidate of a greedy move (final_totals of the state after it, no move "
            "made) vs the 10,000-game budget of one candidate",
            Side(f"{score.__name__} of {len(scored)} candidates' states, pure engine", "s",
                 score_alone),
            Side("the budget of one candidate", "s", [budget] * len(score_alone)),
            "A / B (times)",
            note="informational: above 1, the candidates' scoring alone, before any move is made, "
            "spends more than the whole budget; " + budget_note,
        ))
        C = COMPILED[0]
        if C is not None:
            c_scored = [C.from_json(E.to_json(a)) for a in scored]
            c_alone = _per_state(C.final_totals, c_scored, reps + 2)
            floor_rows.append(Row(
                "balance.greedy_candidate_compiled",
                "balance",
                "The same with the mypyc-compiled engine vs the budget of one candidate",
                Side(f"final_totals of the same {len(scored)} states, compiled engine", "s",
                     c_alone),
                Side("the budget of one candidate", "s", [budget] * len(c_alone)),
                "A / B (times)",
                note=f"informational: the {which}; " + budget_note,
            ))
    per = f"{1e6 * apply_s / candidates:.0f} us {made} + {1e6 * score_s / candidates:.0f} us "
    per += f"{score.__name__} per candidate move, {candidates / len(states):.1f} candidates a move"
    # MCTS: one move of 200 iterations in each of a fixed set of positions: states with a
    # choice, spread over one seeded random game (the same positions on every run)
    picks = [g for g in end_states_of_play(E, 3, 11) if len(E.legal_moves(g)) > 1]
    step = max(1, len(picks) // mcts_states)
    chosen = picks[::step][:mcts_states]
    mcts_wall: list[float] = []
    mcts_cpu: list[float] = []
    for k, g in enumerate(chosen):
        agent = make_agent("mcts", M, k, iterations=200)
        state = g if M is E else M.from_json(E.to_json(g))
        c0, t0 = time.process_time(), time.perf_counter()
        agent(state)
        mcts_wall.append(time.perf_counter() - t0)
        mcts_cpu.append(time.process_time() - c0)
    loop_rows = _loop_rows(E, chosen, loop_games, reps)
    totals = "final_totals" if hasattr(E, "final_totals") else "final_scores(...).totals"
    projected = f"projected from {games} games"
    mcts_label = (f"mcts, 200 iterations, horizon {DEFAULT_HORIZON}, {len(chosen)} positions, "
                  + which)
    mcts_note = (f"per position, wall s: {', '.join(f'{t:.2f}' for t in mcts_wall)}; CPU s: "
                 f"{', '.join(f'{t:.2f}' for t in mcts_cpu)}; the positions: every "
                 f"{step}th state with a choice of one seeded random 3-player game (seed 11)")
    return [
        Row(
            "balance.greedy_10k",
            "balance",
            f"10,000 three-player greedy games on 2 jobs ({projected}: timed on {games}, "
            "scaled) vs the 60 s budget",
            Side(
                f"{games} greedy games x {BALANCE_GAMES // games}, run_processes(2), {which}",
                "s",
                samples,
                cpu[-len(samples) :],
            ),
            Side("the issue's budget", "s", budget_greedy * len(samples), budget_greedy),
            "A / B (times)",
            "<=",
            1.0,
            note=f"PROJECTED, not 10,000 games played; {per}; the agents score with {totals}; "
            "cpu ratio: the workers' CPU seconds / 2 (two idle cores); "
            f"{os.cpu_count()} CPUs (see simulate.control for what 2 jobs gain)",
        ),
        Row(
            "balance.mcts_move",
            "balance",
            f"One honest MCTS move, 200 iterations (random playouts of {DEFAULT_HORIZON} moves), "
            f"the median over the positions, vs the {BUDGET_MCTS_MOVE} s budget",
            Side(mcts_label, "s", mcts_wall, mcts_cpu),
            Side("the issue's budget", "s", [BUDGET_MCTS_MOVE] * len(mcts_wall),
                 [BUDGET_MCTS_MOVE] * len(mcts_wall)),
            "A / B (times)",
            "<=",
            1.0,
            note=mcts_note,
        ),
        Row(
            "balance.mcts_move_max",
            "balance",
            f"One MCTS move, 200 iterations: the slowest of the positions vs the "
            f"{BUDGET_MCTS_MOVE} s budget of the median",
            Side(mcts_label + ", the slowest", "s", [max(mcts_wall)], [max(mcts_cpu)]),
            Side("the issue's budget", "s", [BUDGET_MCTS_MOVE], [BUDGET_MCTS_MOVE]),
            "A / B (times)",
            note="informational (the budget is the median's); cpu: the slowest position's CPU "
            "seconds (the machine's other work excluded)",
        ),
        *loop_rows,
        *floor_rows,
    ]


def _loop_rows(E: ModuleType, positions: list[Any], games: int, reps: int) -> list[Row]:
    """The agents' inner loops in the engine (issue 36) vs the agents' own loops, both on the
    pure engine (the same moves for the same seeds): the CPU seconds of a seeded 3-player greedy
    game, and of one MCTS move of 200 iterations over the MCTS rows' positions."""
    from lisboa_rules.sim import make_agent
    from lisboa_rules.sim.runner import Options, play_game

    if not callable(getattr(E, "mcts_move", None)):
        return []
    own = _OwnLoops(E)

    def greedy_games(engine: Any) -> Callable[[], float]:
        def run() -> float:
            c0 = time.process_time()
            for seed in range(games):
                play_game(engine, 3, (), seed, seed, ("greedy",), Options())
            return (time.process_time() - c0) / games

        return run

    def mcts_moves(engine: Any) -> Callable[[], float]:
        def run() -> float:
            spent = []
            for k, g in enumerate(positions):
                agent = make_agent("mcts", engine, k, iterations=200)
                c0 = time.process_time()
                agent(g)
                spent.append(time.process_time() - c0)
            return statistics.median(spent)

        return run

    greedy = interleaved([greedy_games(E), greedy_games(own)], reps + 1, 0)
    mcts = interleaved([mcts_moves(E), mcts_moves(own)], reps + 1, 0)
    return [
        Row(
            "balance.greedy_game_loops",
            "balance",
            "One greedy 3-player game, CPU seconds: the engine's greedy_move vs the agent's own "
            "loop (view, determinize, successors), pure engine",
            Side(f"greedy_move (redeal, one ply), {games} seeded games", "s", greedy[0]),
            Side("the agent's own loop, the same games and moves", "s", greedy[1]),
            "A / B (times)",
            note="informational: what moving the loop into the engine gave (issue 36); the "
            "same moves for the same seeds",
        ),
        Row(
            "balance.mcts_move_loops",
            "balance",
            "One MCTS move of 200 iterations, CPU seconds (median over the positions): the "
            "engine's mcts_move vs the agent's own loop, pure engine",
            Side(f"mcts_move, {len(positions)} positions", "s", mcts[0]),
            Side("the agent's own loop, the same positions and moves", "s", mcts[1]),
            "A / B (times)",
            note="informational: what moving the loop into the engine gave (issue 36); the "
            "same moves for the same seeds",
        ),
    ]


def _per_state(fn: Callable[[Any], Any], states: Sequence[Any], reps: int) -> list[float]:
    """Seconds per state of `fn` over `states`, one sample per repetition (after a warm-up)."""
    out = []
    for r in range(reps + 1):
        gc.collect()
        t0 = time.perf_counter()
        for g in states:
            fn(g)
        if r:
            out.append((time.perf_counter() - t0) / len(states))
    return out


def _candidates_per_game(E: ModuleType, players: int, games: int) -> float:
    """The candidate moves a greedy game scores, on average over `games` seeded games: every
    state the greedy agent is given in which it has more than one move to choose from."""
    from lisboa_rules.sim import make_agent

    total = 0
    for seed in range(games):
        g = E.new_game(players, (), seed)
        bots = [make_agent("greedy", E, f"{seed}:{seat}") for seat in range(players)]
        while g.phase != "over":
            n = len(E.legal_moves(g))
            total += n if n > 1 else 0
            g = E.apply_move(g, bots[g.actor](g))
    return total / games


def end_states_of_play(E: ModuleType, players: int, seed: int) -> list[Any]:
    """Every state of one random game (the states agents choose in)."""
    rng = random.Random(seed)
    g = E.new_game(players, (), seed)
    out = []
    while g.phase != "over":
        out.append(g)
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    return out


# --- output -------------------------------------------------------------------------------------


def _num(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    if unit == "/s":
        return f"{x:,.1f}/s"
    if unit == "B":
        return f"{x / 1e6:.1f} MB" if x >= 1e6 else f"{x / 1e3:,.0f} kB"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.1f} us"


def table(rows: Sequence[Row]) -> str:
    head = ("row", "A (median)", "B (median)", "ratio", "target", "met", "cpu ratio")
    body = []
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        target = "-" if r.target is None else f"{r.target_op} {r.target:g}x"
        met = {True: "yes", False: "NO", None: "-"}[r.met]
        if r.status != "ok":
            met = r.status
        cpu = "-" if r.cpu_ratio is None else f"{r.cpu_ratio:.2f}x"
        body.append(
            (r.id, _num(r.a.median, r.a.unit), _num(r.b.median, r.b.unit), ratio, target, met, cpu)
        )
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip()
        for x in [head, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


# the page of the docs whose Performance table `--readme` writes (it was README.md's section)
PERFORMANCE_PAGE = ROOT / "docs" / "explanation" / "performance.md"
README_BEGIN = "<!-- the table below is `python3 benchmarks/run.py --readme`: do not edit it -->"
README_END = "<!-- end of the table of benchmarks/results.json -->"


def _md(text: str) -> str:
    """A cell of a Markdown table: pipes and newlines would end the cell or the row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(result: dict[str, Any]) -> str:
    """The Markdown table of a results.json: the docs' Performance table is this text."""
    m = result["machine"]
    loads = [x[0] if x else "?" for x in (m.get("load_average_start"), m.get("load_average_end"))]
    lines = [
        f"`{result['command']}` ({result['mode']}, {result['seconds']} s), "
        f"{result['created'][:10]}, commit {str(m.get('git_head'))[:7]}"
        f"{' with local changes' if m.get('git_dirty') else ''}: {m['nproc']} CPUs, "
        f"{m['cpu_model']}, Python {m['python']}, 1-minute load {loads[0]} -> {loads[1]}"
        f"{' (busy: the ratios are noisy)' if m.get('busy') else ''}. Each ratio is the median "
        "of alternating runs of its two sides.",
        "",
        "| row | what is compared | A (median) | B (median) | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        a, b = r["a"], r["b"]
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        tgt = r["target"]
        target = "-" if tgt is None else f"{tgt['op']} {tgt['value']:g}x"
        met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
        if r["status"] != "ok":
            met = r["status"]
        what = f"{r['title']}: A = {a['label']}; B = {b['label']}"
        cells = [
            f"`{r['id']}`",
            what,
            _num(a["median"], a["unit"]),
            _num(b["median"], b["unit"]),
            ratio,
            target,
            met,
        ]
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def update_readme(readme: Path, result: dict[str, Any]) -> bool:
    """Put markdown(result) between the README's markers; True if the file changed."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"{readme}: the benchmark table's markers are missing")
    new = text[: start + len(README_BEGIN)] + "\n\n" + markdown(result) + "\n" + text[end:]
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def readme_table(readme: Path) -> str:
    """The text between the README's markers (what update_readme wrote)."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        return ""
    return text[start + len(README_BEGIN) : end].strip("\n") + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repetitions, scales 1/5/20")
    size.add_argument("--tiny", action="store_true", help="smallest sizes (the smoke test)")
    p.add_argument("--out", type=Path, default=HERE / "results.json", help="JSON output file")
    p.add_argument(
        "--readme",
        action="store_true",
        help="run nothing: write the table of the --out file into the docs' Performance page "
        "(docs/explanation/performance.md)",
    )
    p.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {', '.join(SECTIONS)}",
    )
    p.add_argument(
        "--engine",
        type=Path,
        default=ROOT / "generated" / "lisboa_engine.py",
        help="the generated engine to measure",
    )
    p.add_argument(
        "--interp-wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait up to this long for tools/interp.py to appear",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.readme:
        result = json.loads(args.out.read_text(encoding="utf-8"))
        changed = update_readme(PERFORMANCE_PAGE, result)
        print(f"{PERFORMANCE_PAGE.relative_to(ROOT)}: {'updated' if changed else 'already'} "
              f"the table of {args.out}")
        return 0
    mode = MODES["tiny" if args.tiny else "quick" if args.quick else "full"]
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        print(f"run.py: unknown section(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    info = machine()
    rows: list[Row] = []
    extra: dict[str, Any] = {}
    E = load_engine(args.engine.resolve())
    deadline = time.monotonic() + args.interp_wait
    interp, why = load_interp()
    while interp is None and time.monotonic() < deadline:
        time.sleep(10)
        interp, why = load_interp()
    models: dict[Any, Any] = {}
    if interp is not None and ({"scoring", "playout"} & set(sections)):
        try:
            models = interp.rule_sets(ROOT / "rules")
        except Exception as exc:
            interp, why = None, f"interp.rule_sets failed: {type(exc).__name__}: {exc}"
    global PYCACHE_DIR, BUILD_CACHE_DIR
    with tempfile.TemporaryDirectory(prefix="lisboa-bench-") as t:
        tmp = Path(t)
        PYCACHE_DIR = tmp / "pycache"
        BUILD_CACHE_DIR = tmp / "build-cache"
        for section in SECTIONS:
            if section not in sections:
                continue
            print(f"[{section}] ...", file=sys.stderr, flush=True)
            if section == "build":
                rows += bench_build(mode, tmp)
            elif section == "scoring":
                got, checks = bench_scoring(mode, E, interp, why, models)
                rows += got
                extra["checks"] = checks
            elif section == "playout":
                rows += bench_playout(mode, E, interp, why, models)
            elif section == "oracle":
                rows += bench_oracle(mode, E, tmp)
            elif section == "compiled":
                rows += bench_compiled(mode, E, args.engine.resolve(), tmp)
            elif section == "speed":
                rows += bench_speed(mode, E, args.engine.resolve(), tmp)
            elif section == "views":
                rows += bench_views(mode, E, tmp)
            elif section == "scaling":
                got, summary = bench_scaling(mode, tmp)
                rows += got
                extra["scaling"] = summary
            elif section == "simulate":
                rows += bench_simulate(mode, args.engine.resolve())
            elif section == "balance":
                rows += bench_balance(mode, E, args.engine.resolve(), tmp)
    info["load_average_end"] = _loadavg()
    loads = [x[0] for x in (info["load_average_start"], info["load_average_end"]) if x]
    info["busy"] = bool(loads) and max(loads) > 0.75 * max(1, info["nproc"])
    result = {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": mode.name,
        "command": " ".join(["python3", "benchmarks/run.py", *(argv or sys.argv[1:])]),
        "settings": dict(mode.__dict__.items()),
        "machine": info,
        "engine": str(args.engine),
        "rows": [r.to_json() for r in rows],
        **extra,
        "seconds": round(time.perf_counter() - started, 1),
    }
    text = table(rows)
    print(text, end="")
    if "scaling" in extra:
        sc = extra["scaling"]
        exps = ", ".join(f"{st['from']}x->{st['to']}x {st['local_exponent']:.2f}"
                         for st in sc["steps"])
        print(f"scaling no worse than linear: {sc['linear']} (local exponents {exps})")
    if "checks" in extra:
        print("agreement: " + ", ".join(f"{k}={v}" for k, v in extra["checks"].items()))
    m = info
    print(
        f"machine: {m['nproc']} CPUs, {m['cpu_model']}, Python {m['python']}, load "
        f"{m['load_average_start']} -> {m['load_average_end']}"
    )
    if m["busy"]:
        print(
            "WARNING: the machine was busy (1-minute load above 0.75 per CPU): other processes "
            "competed for the CPUs, so the medians are inflated and the ratios noisy"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
