"""Where the time goes: the profiles behind the benchmark rows that miss their targets.

    python3 benchmarks/profiles.py build [--reps 5] [--rules DIR] [--check]
        stage timings of `lisboa-rules build` in fresh processes (no profiler: each pipeline
        stage is wrapped with a perf_counter timer), median over the repetitions
    python3 benchmarks/profiles.py imports
        `python3 -X importtime -m lisboa_rules build --check`: the heaviest imports
    python3 benchmarks/profiles.py scoring|interp|playout [--top 15]
        cProfile of engine final_scores / interp.score / random playouts, top functions by
        own time with their share of the total
    python3 benchmarks/profiles.py scoring-variants [--reps 9]
        experiments behind the scoring proposals: the engine's scoring loop without the prose,
        with one shared Ctx, the hand-written baseline, ranking, the interpreter
    python3 benchmarks/profiles.py cprofile-build [--rules DIR] [--top 25]
        cProfile of one in-process build (imports excluded), top functions by own time
    python3 benchmarks/profiles.py compiled playout|public|scoring|greedy [--seconds 3] [--top 20]
        where the mypyc-compiled engine spends its time (cProfile sees no compiled function):
        `perf record` with DWARF call stacks of the engine's own playouts, random games
        through the public API (`legal_moves`, `apply_move`: `speed.compiled_playout`),
        `final_totals` of finished games, or greedy games; each sample is put to the nearest
        generated function on its stack (with the C helpers it was in), and each function's
        share of the samples it is on is listed too. Needs Linux `perf` and the mypyc toolchain.

Nothing here edits a file outside a temporary folder.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import json
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

# (module, attribute, stage label): wrapped where the caller looks the name up.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("lisboa_rules.front.schema", "packaged", "schema.packaged (load + check_schema, once)"),
    ("lisboa_rules.pipeline", "load_dir", "load (loader.load_dir)"),
    ("lisboa_rules.pipeline", "validate", "validate (validate.validate)"),
    ("lisboa_rules.pipeline", "merge_all", "merge (pipeline.merge_all: overlays+re-validate)"),
    ("lisboa_rules.pipeline", "apply_overlay", "  of which overlay.apply_overlay"),
    ("lisboa_rules.pipeline", "build_all", "build (pipeline.build_all)"),
    ("lisboa_rules.pipeline", "build_model", "  of which build.build_model"),
    ("lisboa_rules.pipeline", "check_steps_all", "check (pipeline.check_steps_all: steps to IR)"),
    ("lisboa_rules.pipeline", "check_all", "check (pipeline.check_all)"),
    ("lisboa_rules.pipeline", "run_checks", "  of which checks.run_checks"),
    ("lisboa_rules.pipeline", "check_callouts", "  of which checks.check_callouts"),
    ("lisboa_rules.pipeline", "lower_all", "lower (pipeline.lower_all: IR printed)"),
    ("lisboa_rules.emit", "emit_engine", "emit_engine (engine + state schema)"),
    ("lisboa_rules.emit", "build_view", "  of which emit.engine.build_view"),
    ("lisboa_rules.emit", "state_schema", "  of which emit.state_schema"),
    ("lisboa_rules.emit", "emit_schemas", "emit_schemas"),
    ("lisboa_rules.emit.reference.render", "render", "reference.render (incl. its own engine)"),
    ("lisboa_rules.emit.reference.render", "build_document", "  of which build_document"),
    ("lisboa_rules.outputs.writer", "write_outputs", "write (writer.write_outputs)"),
    ("lisboa_rules.outputs.writer", "compile_check", "  of which compile() of .py outputs"),
)


def _wrap(fn: Callable[..., Any], acc: dict[str, list[float]], label: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            acc.setdefault(label, []).append(time.perf_counter() - t0)

    return timed


def child_build(rules: str, out: str, check: bool) -> dict[str, Any]:
    """One build in this (fresh) process; stage name -> [seconds per call]."""
    t_start = T0
    from lisboa_rules.cli import main as cli

    cli.all_commands()
    t_imported = time.perf_counter()
    acc: dict[str, list[float]] = {}
    for mod_name, attr, label in STAGES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        if hasattr(mod, attr):
            setattr(mod, attr, _wrap(getattr(mod, attr), acc, label))
    # Every build runs every stage; compiled templates stay cached between runs.
    argv = ["build", "--rules", rules, "--out", out] + (["--check"] if check else [])
    rc = cli.main(argv)
    t_end = time.perf_counter()
    return {
        "rc": rc,
        "imports": t_imported - t_start,
        "build": t_end - t_imported,
        "stages": acc,
    }


def _env(tmp: Path) -> dict[str, str]:
    """Bytecode caches on, under a temporary prefix (as benchmarks/run.py measures)."""
    import os

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["LISBOA_RULES_CACHE_DIR"] = str(tmp / "cache")  # Jinja bytecode warm after the first run
    return env


def cmd_build(args: argparse.Namespace) -> None:
    runs = []
    with tempfile.TemporaryDirectory(prefix="lisboa-prof-") as t:
        out = Path(t) / "out"
        env = _env(Path(t))
        subprocess.run(  # warm the bytecode cache
            [sys.executable, __file__, "_child", args.rules, str(Path(t) / "warm"), "0"],
            cwd=ROOT, check=True, capture_output=True, env=env,
        )  # fmt: skip
        if args.check:  # an up-to-date folder first
            subprocess.run(
                [sys.executable, "-m", "lisboa_rules", "build", "--rules", args.rules, "--out",
                 str(out)],
                cwd=ROOT, check=True, capture_output=True, env=env,
            )  # fmt: skip
        for _ in range(args.reps):
            if not args.check and out.exists():
                import shutil

                shutil.rmtree(out)
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, __file__, "_child", args.rules, str(out), str(int(args.check))],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            wall = time.perf_counter() - t0
            data = json.loads(done.stdout.strip().splitlines()[-1])
            data["wall"] = wall
            runs.append(data)
    wall = statistics.median(r["wall"] for r in runs)
    imports = statistics.median(r["imports"] for r in runs)
    build = statistics.median(r["build"] for r in runs)
    print(f"{args.reps} fresh processes (with .pyc caches); medians. wall {wall * 1e3:.0f} ms "
          f"= interpreter start + imports {imports * 1e3:.0f} ms + build {build * 1e3:.0f} ms "
          "+ exit")  # fmt: skip
    print(f"{'stage':<56} {'calls':>5} {'ms':>8} {'share of wall':>14}")
    labels = [label for _, _, label in STAGES]
    print(f"{'python start + imports (until cli is ready)':<56} {'':>5} "
          f"{imports * 1e3:8.1f} {imports / wall:13.0%}")  # fmt: skip
    for label in labels:
        per_run = [sum(r["stages"].get(label, [])) for r in runs]
        calls = max(len(r["stages"].get(label, [])) for r in runs)
        if calls == 0:
            continue
        ms = statistics.median(per_run)
        print(f"{label:<56} {calls:>5} {ms * 1e3:8.1f} {ms / wall:13.0%}")


def cmd_imports(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="lisboa-prof-") as t:
        out = Path(t) / "out"
        env = _env(Path(t))
        subprocess.run([sys.executable, "-m", "lisboa_rules", "build", "--out", str(out)],
                       cwd=ROOT, check=True, capture_output=True, env=env)  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "lisboa_rules", "build", "--check",
             "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, check=False, env=env,
        )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
    total = sum(r[0] for r in rows)
    print(f"all imports: {total / 1e3:.0f} ms (self times summed)")
    print("top-level imports by cumulative time:")
    for _self_us, cum_us, depth, name in sorted(rows, key=lambda r: -r[1]):
        if depth == 0 and cum_us > 2000:
            print(f"  {name:<40} {cum_us / 1e3:7.1f} ms")
    print(f"modules with the largest own import time (top {args.top}):")
    for self_us, _, _, name in sorted(rows, key=lambda r: -r[0])[: args.top]:
        print(f"  {name:<40} {self_us / 1e3:7.1f} ms")
    third = {"yaml", "jsonschema", "jinja2", "referencing", "markupsafe", "rpds", "attrs"}
    ours = sum(r[0] for r in rows if r[3].split(".")[0] == "lisboa_rules")
    libs = sum(r[0] for r in rows if r[3].split(".")[0] in third)
    print(f"own import time: lisboa_rules.* {ours / 1e3:.0f} ms; yaml/jsonschema/jinja2 and "
          f"their dependencies {libs / 1e3:.0f} ms; the rest (stdlib) "
          f"{(total - ours - libs) / 1e3:.0f} ms")  # fmt: skip


def _profile(fn: Callable[[], Any], top: int, title: str) -> None:
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    st = pstats.Stats(pr)
    total = st.total_tt  # type: ignore[attr-defined]
    print(f"{title}: {total:.3f} s under cProfile; top {top} by own time")
    print(f"{'own %':>6} {'own s':>7} {'cum s':>7} {'calls':>9}  function")
    entries = sorted(st.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    for (file, line, name), (_, nc, tt, ct, _) in entries[:top]:
        where = f"{Path(file).name}:{line}({name})" if line else name
        print(f"{tt / total:6.1%} {tt:7.3f} {ct:7.3f} {nc:9d}  {where}")


def _engine_and_states(n: int) -> tuple[Any, list[Any]]:
    import run as bench

    E = bench.load_engine(ROOT / "generated" / "lisboa_engine.py")
    return E, bench.end_states(E, n)


def cmd_scoring(args: argparse.Namespace) -> None:
    E, games = _engine_and_states(100)

    def go() -> None:
        for _ in range(20):
            for g in games:
                E.final_scores(g)

    _profile(go, args.top, "engine final_scores, 100 end states x 20")


def cmd_interp(args: argparse.Namespace) -> None:
    from tools import interp

    E, games = _engine_and_states(100)
    model = interp.rule_sets(ROOT / "rules")[()]
    states = [E.to_json(g) for g in games]

    def go() -> None:
        for _ in range(5):
            for s in states:
                interp.score(model, s)

    _profile(go, args.top, "interp.score, 100 end states x 5")


def cmd_playout(args: argparse.Namespace) -> None:
    import run as bench

    E = bench.load_engine(ROOT / "generated" / "lisboa_engine.py")

    def go() -> None:
        for s in range(20):
            bench.play(E, 3000 + s)

    _profile(go, args.top, "20 random 4-player games (legal_moves + apply_move)")


def _compiled_child(what: str, seconds: float) -> None:
    """The workload `compiled` profiles, run for about `seconds` in this process."""
    import random

    import run as bench

    tmp = Path(tempfile.mkdtemp(prefix="lisboa-perf-"))
    engine = ROOT / "generated" / "lisboa_engine.py"
    C, how = bench._compiled_engine(engine, tmp, 3)
    if C is None:
        raise SystemExit(f"no compiled engine: {how}")
    work: Callable[[], None]
    if what == "scoring":
        E = bench.load_engine(engine)
        ends = [C.from_json(E.to_json(g)) for g in bench.end_states(E, 25, 5000)]

        def work() -> None:
            for g in ends:
                C.final_totals(g)
    elif what == "greedy":
        def work() -> None:
            g = C.new_game(3, (), 1)
            rng = random.Random(1)
            while g.phase != "over":
                g = C.apply_move(g, C.greedy_move(g, rng))
    elif what == "public":
        def work() -> None:
            for s in range(6000, 6010):
                g = C.new_game(4, (), s)
                rng = random.Random(s)
                while g.phase != "over":
                    g = C.apply_move(g, rng.choice(C.legal_moves(g)))
    else:
        def work() -> None:
            for s in range(6000, 6010):
                C.playout(C.new_game(4, (), s), random.Random(s))
    work()  # warm
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        work()


def cmd_compiled(args: argparse.Namespace) -> None:
    """perf's samples of a compiled-engine workload, put to the generated functions."""
    import shutil
    from collections import Counter, defaultdict

    import run as bench

    if shutil.which("perf") is None:
        raise SystemExit("needs Linux perf (apt-get install linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        # compiled (or found in the cache) first: the samples are the workload's alone
        C, how = bench._compiled_engine(ROOT / "generated" / "lisboa_engine.py", Path(tmp), 3)
        if C is None:
            raise SystemExit(f"no compiled engine: {how}")
        data = Path(tmp) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-F", "500", "--call-graph", "dwarf,16384",
                        "-o", str(data), sys.executable, __file__, "_compiled", args.workload,
                        str(args.seconds)], check=True)
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,sym"],
                                check=True, capture_output=True, text=True).stdout
    owner: Counter[str] = Counter()
    on_stack: Counter[str] = Counter()
    leaves: dict[str, Counter[str]] = defaultdict(Counter)
    total = 0
    for sample in script.split("\n\n"):
        frames = [f[1] for line in sample.strip().splitlines() if len(f := line.split()) > 1]
        generated = [f.removeprefix("CPyDef_") for f in frames if f.startswith("CPyDef_")]
        if not generated:
            continue
        total += 1
        owner[generated[0]] += 1
        leaves[generated[0]][frames[0].removeprefix("CPyDef_")] += 1
        on_stack.update(set(generated))
    print(f"{args.workload}: {total} samples in generated functions")
    print(f"{'own %':>6}  function  | where its samples were (% of all)")
    for name, n in owner.most_common(args.top):
        parts = ", ".join(f"{k} {v / total:.1%}" for k, v in leaves[name].most_common(5))
        print(f"{n / total:6.1%}  {name}  | {parts}")
    print(f"{'on stack':>8}  function")
    for name, n in on_stack.most_common(args.top):
        print(f"{n / total:8.1%}  {name}")


def cmd_scoring_variants(args: argparse.Namespace) -> None:
    """Experiments for the scoring proposals: what the engine's scoring would cost without the
    prose, or without a Ctx() per formula call, on the engine's own tables (no file edited)."""
    import handwritten_scoring as hand

    E, games = _engine_and_states(100)
    rs = E.RULESETS[()]
    no_ctx = E.Ctx()

    def table_numbers(g: Any, shared_ctx: bool) -> tuple[int, ...]:
        """The engine's final_scores loop, numbers only (no ScoreLine, no strings)."""
        ps = g.players
        tot = [p.wigs for p in ps]
        for src in rs.scoring:
            if src.kind == "per-player":
                for i, p in enumerate(ps):
                    tot[i] += src.formula(g, p, no_ctx if shared_ctx else E.Ctx())
            elif src.kind == "majority":
                for group in src.groups:
                    ms = [group.measure(g, p, no_ctx if shared_ctx else E.Ctx()) for p in ps]
                    ok = [src.eligible is None or src.eligible(g, p, E.Ctx(measure=m))
                          for p, m in zip(ps, ms, strict=True)]  # fmt: skip
                    for i, (w, _, _) in enumerate(
                        E.majority_awards(ms, ok, group.table, rs.majority_columns)
                    ):
                        tot[i] += w
            elif src.kind == "held":
                items = {it.id: it for it in src.items}
                for i, p in enumerate(ps):
                    for d in getattr(p, src.held):
                        dd = items[d]
                        if dd.condition is None or dd.condition(
                            g, p, no_ctx if shared_ctx else E.Ctx()
                        ):
                            tot[i] += dd.points
        return tuple(tot)

    assert all(table_numbers(g, False) == E.final_scores(g).totals for g in games)
    cands: dict[str, Callable[[Any], Any]] = {
        "engine final_scores (as generated)": E.final_scores,
        "engine tables, numbers only (no prose)": lambda g: table_numbers(g, False),
        "engine tables, numbers only, one shared Ctx": lambda g: table_numbers(g, True),
        "hand-written sheet (with prose)": lambda g: hand.score_sheet(E, g),
        "hand-written numbers only": hand.score_totals,
        "engine ranking(g, sheet) (sheet precomputed)": None,  # type: ignore[dict-item]
    }
    sheets = {id(g): E.final_scores(g) for g in games}
    cands["engine ranking(g, sheet) (sheet precomputed)"] = lambda g: E.ranking(g, sheets[id(g)])
    try:
        from tools import interp

        model = interp.rule_sets(ROOT / "rules")[()]
        states = {id(g): E.to_json(g) for g in games}
        cands["interp.score(model, state_json)"] = lambda g: interp.score(model, states[id(g)])
    except Exception as exc:  # the interpreter is not there (yet)
        print(f"(no interpreter: {exc})")
    times: dict[str, list[float]] = {k: [] for k in cands}
    for _ in range(args.reps):
        for name, fn in cands.items():
            t0 = time.perf_counter()
            for g in games:
                fn(g)
            times[name].append((time.perf_counter() - t0) / len(games))
    ref = statistics.median(times["engine final_scores (as generated)"])
    print(f"per 4-player end state, median of {args.reps} x 100 states:")
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"  {name:<48} {t * 1e6:8.1f} us  ({t / ref:5.2f} of final_scores)")


def cmd_cprofile_build(args: argparse.Namespace) -> None:
    from lisboa_rules.cli import main as cli

    cli.all_commands()
    with tempfile.TemporaryDirectory(prefix="lisboa-prof-") as t:
        _profile(
            lambda: cli.main(["build", "--rules", args.rules, "--out", str(Path(t) / "o")]),
            args.top,
            f"in-process build of {args.rules} (imports excluded)",
        )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_child":
        rules, out, check = argv[1], argv[2], argv[3] == "1"
        print(json.dumps(child_build(rules, out, check)))
        return 0
    if argv and argv[0] == "_compiled":
        _compiled_child(argv[1], float(argv[2]))
        return 0
    p = argparse.ArgumentParser(description="Profiles behind the benchmark rows.")
    sub = p.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build")
    b.add_argument("--reps", type=int, default=5)
    b.add_argument("--rules", default="rules")
    b.add_argument("--check", action="store_true", help="profile a no-op build --check")
    for name in ("imports", "scoring", "interp", "playout", "cprofile-build", "scoring-variants"):
        s = sub.add_parser(name)
        s.add_argument("--top", type=int, default=15)
        s.add_argument("--reps", type=int, default=9)
        if name == "cprofile-build":
            s.add_argument("--rules", default="rules")
    c = sub.add_parser("compiled")
    c.add_argument("workload", choices=("playout", "public", "scoring", "greedy"))
    c.add_argument("--seconds", type=float, default=3.0)
    c.add_argument("--top", type=int, default=20)
    args = p.parse_args(argv)
    {
        "compiled": cmd_compiled,
        "build": cmd_build,
        "imports": cmd_imports,
        "scoring": cmd_scoring,
        "interp": cmd_interp,
        "playout": cmd_playout,
        "cprofile-build": cmd_cprofile_build,
        "scoring-variants": cmd_scoring_variants,
    }[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
