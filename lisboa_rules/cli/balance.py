"""`balance`: what a rule set, a variant or a house rule does to the game, from played games.

    lisboa-rules balance --games N --seed S [--players P] [--variant V]... [--agents A,B,...]
                         [--compare V2]... [--jobs J] [--dask local|tls://HOST:PORT]
                         [--dask-insecure] [--iterations K]
                         [--format text|json|html] [--out FILE] [--engine PATH | --rules DIR]

Game i is played with seed S + i by the agents (lisboa_rules/sim/agents.py), rotating one
seat per game. `--variant` and `--compare` take variant names of the rules or paths to house
rules (a variant YAML file, or a folder of them, as in examples/house-rules/): each rule set
is then played on an engine compiled afresh from the rules folder (--rules, default rules/)
with its own house rules added as options, never the other rule set's (nothing is copied:
pipeline.compile_rules takes them as `extra` files, and their errors name them). So a house
rule that applies by player count is not played on the base side, and two versions of one
house rule (even of one id) can be compared. `--compare` plays the other rule set on the same
seeds and lineups and reports the paired differences with their 95% intervals.

JSON (`--format json`; rates as fractions of 1; keys in this order):

    {"run": {"games", "players", "seed", "agents", "iterations", "horizon"},
     "rule_sets": {NAME: {"games": N, "players": P, "variants": [...],
                          "seats": [{"seat": 0, "color", "wins", "shared", "win_rate",
                                     "ci95": [LO, HI]}, ...],
                          "balance": B,
                          "agents": {AGENT: {"games", "wins", "win_rate", "ci95"}},
                          "versus": {A: {B: {"games", "wins", "win_rate", "ci95"}}},
                          "length": {"turns": F, "rounds": F, "moves": F},
                          "score": {"track": F, "total": F},
                          "sources": {SOURCE_ID: {"name", "mean", "sd", "q05", "q50", "q95"}},
                          "margin": F, "lead_changes": F,
                          "triggers": {"period": {RULE_ID: COUNT}, "game": {RULE_ID: COUNT}},
                          "never_reached": [RULE_ID, ...], "rare": [RULE_ID, ...]}},
     "compare": null | {"base", "other", "games", "seats": [{"seat", D...}], "balance",
                        "agents": {AGENT: D}, "length": {...: D}, "score": {...: D},
                        "sources": {SOURCE_ID: D}, "margin": D, "lead_changes": D,
                        "triggers": {"period": {RULE_ID: D}, "game": {RULE_ID: D}}}}

where F is {"mean", "sd", "q05", "q50", "q95"} and D is a paired difference {"base", "other",
"diff", "ci95": [LO, HI], "significant"} (other - base, seed by seed). Exit codes: 0 ok, 1 rules
or house rules with errors, 2 usage errors.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lisboa_rules.cli.common import EXIT_ERROR, EXIT_OK, Command, err, out, report
from lisboa_rules.cli.engine import (
    MAX_BALANCE_GAMES,
    EngineRefused,
    _positive,
    default_players,
    engine_file,
    exit_code,
    games_count,
    progress_bar,
    seed_range_error,
    worker_count,
)
from lisboa_rules.core.diagnostics import PROG, has_errors, suggest
from lisboa_rules.core.inputs import ENGINE
from lisboa_rules.front.loader import load_file
from lisboa_rules.outputs import files
from lisboa_rules.sim import agents as sim_agents
from lisboa_rules.sim import executors, runner
from lisboa_rules.sim import report as sim_report
from lisboa_rules.sim.engine import EngineLoadError, load_engine

HOUSE_SUFFIXES = (".yaml", ".yml")


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--games",
        type=games_count(MAX_BALANCE_GAMES),
        required=True,
        metavar="N",
        help=f"games per rule set (at most {MAX_BALANCE_GAMES:,})",
    )
    p.add_argument(
        "--seed", type=int, required=True, metavar="S", help="game i is played with seed S + i"
    )
    p.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="P",
        help="number of players (default: the most the game allows)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="V",
        help="a variant, or a house-rule file or folder (repeatable)",
    )
    p.add_argument(
        "--compare",
        action="append",
        default=None,
        metavar="V2",
        help="also play this rule set (a variant, or a house-rule file or folder; "
        "repeatable: all of them together) on the same seeds and report the "
        "paired differences; 'base' for no variant",
    )
    p.add_argument(
        "--agents",
        default="greedy",
        metavar="A,B,...",
        help=f"the agents, rotating one seat per game (of {', '.join(sim_agents.AGENTS)};"
        " default: greedy)",
    )
    p.add_argument(
        "--iterations",
        type=_positive,
        default=sim_agents.DEFAULT_ITERATIONS,
        metavar="K",
        help="MCTS iterations per move (default: %(default)s)",
    )
    p.add_argument(
        "--horizon",
        type=_positive,
        default=sim_agents.DEFAULT_HORIZON,
        metavar="M",
        help="moves an MCTS playout plays before the score estimate ends it (default: %(default)s)",
    )
    p.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="J",
        help="worker processes, or the workers of a local Dask cluster (the results do not "
        "depend on it)",
    )
    p.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="play on a Dask cluster (needs the dask extra): 'local' for a cluster of --jobs "
        "workers on this machine, on the loopback address with TLS credentials made for the "
        "run (nobody else can connect to it); or the scheduler at ADDRESS, which must be "
        "tls://HOST:PORT, with this client's credentials (CA file, certificate, key) in "
        "Dask's configuration (DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
        "..._CLIENT__CERT, ..._CLIENT__KEY): a cluster runs the jobs it is sent and this "
        "command loads the results it sends back, so whoever can reach its scheduler can run "
        "code as you",
    )
    p.add_argument(
        "--dask-insecure",
        action="store_true",
        help="allow a --dask ADDRESS without TLS (tcp://): only for a cluster that nobody "
        "else can reach; securing it is then up to you",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "html"),
        default="text",
        help="output format (default: text)",
    )
    p.add_argument(
        "--out",
        type=_out_path,
        default=None,
        metavar="FILE",
        help="write the report to FILE instead of stdout",
    )
    engine_where = p.add_mutually_exclusive_group()
    engine_where.add_argument(
        "--engine",
        type=Path,
        default=None,
        metavar="PATH",
        help="the engine: a module file or a folder holding lisboa_engine",
    )
    engine_where.add_argument(
        "--rules",
        type=Path,
        default=None,
        metavar="DIR",
        help="compile the engine from this rules folder instead",
    )


def _out_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


SYSTEM_FOLDERS = ("dev", "proc", "sys")  # no report replaces a device or a kernel file


def out_problem(path: Path) -> str | None:
    """Why the report could never be written to `path` (checked before the games are played,
    not found out after them), or None. Nothing is created. The report replaces what is at
    `path` (outputs/files.py): a symlink there is replaced, never written through, so only the
    folder must be writable."""
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return f"cannot be used: {exc.strerror}"
    if st is not None and stat.S_ISDIR(st.st_mode):
        return "is a folder: give a file name"
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return "is not a regular file (a device, FIFO or socket): give a file name"
    parent = path.parent
    if not parent.exists():
        return f"there is no folder {parent}"
    if not parent.is_dir():
        return f"{parent} is not a folder"
    parts = Path(os.path.realpath(parent)).parts
    if len(parts) > 1 and parts[1] in SYSTEM_FOLDERS:
        return (f"is in /{parts[1]}: give a file name elsewhere (without --out the report "
                "goes to stdout)")
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create a file in {parent}"
    return None


def dask_address_problem(address: str | None, insecure: bool) -> str | None:
    """Why `--dask ADDRESS` is refused, or None: a scheduler is reached over TLS, whose
    credentials authenticate both ends (without them anyone who can reach the scheduler, or
    pose as it, runs code as the user), unless --dask-insecure says the user secures it."""
    if address is None or address == "local":
        return None
    scheme = address.split("://", 1)[0].strip().lower() if "://" in address else ""
    if scheme == "tls" or (insecure and scheme in ("", "tcp")):
        return None
    if scheme not in ("", "tcp"):
        return (f"--dask {address!r}: give a tls://HOST:PORT address (or 'local'), not "
                f"{scheme}://")
    return (f"--dask {address!r} is not a TLS address: a Dask scheduler runs what it is sent "
            "and anyone who can reach it (or pose as it) could run code as you; give "
            "tls://HOST:PORT with your credentials in Dask's configuration, 'local', or "
            "--dask-insecure for a cluster nobody else can reach")


def is_house_rule(text: str) -> bool:
    """Whether a --variant/--compare value is a path (a file or folder of house rules)."""
    return "/" in text or text.endswith(HOUSE_SUFFIXES) or Path(text).is_dir()


def house_files(text: str) -> list[Path]:
    path = Path(text)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in HOUSE_SUFFIXES and p.is_file())
    return [path]


def _house_id(path: Path) -> str:
    """The id a house-rule file declares (its file name when it declares none readable: the
    compiler then says what is wrong). Read by the rules' own strict loader: its guarded read
    (a regular file of at most 1 MiB) and its nesting limit."""
    doc, _ = load_file(path)
    ident = doc.data.get("id") if doc is not None and isinstance(doc.data, dict) else None
    return ident if isinstance(ident, str) and ident else path.stem


@dataclass
class Side:
    """One rule set of the run: its name, the variants chosen for it and the house-rule files
    its engine is compiled with (only its own: the other side's never join it)."""

    name: str
    chosen: tuple[str, ...]
    house: tuple[Path, ...] = ()

    def engine_key(self) -> tuple[str, ...]:
        """Which engine plays this side: the same house files, the same engine."""
        return tuple(sorted(str(p.resolve()) for p in self.house))


class UsageError(Exception):
    pass


def _sides(args: argparse.Namespace) -> list[Side]:
    """The rule sets to play, each with the house-rule files it adds to the rules."""

    def side(option: str, values: Sequence[str]) -> Side:
        chosen: list[str] = []
        house: dict[str, Path] = {}
        for v in values:
            if v == "base":
                continue
            if not v.strip():
                raise UsageError(f"{option} needs a variant's name or a house rule's path, not "
                                 f"{v!r}")
            if not is_house_rule(v):
                chosen.append(v)
                continue
            files = house_files(v)
            if not files:
                raise UsageError(f"no house rules (*.yaml) in {v}")
            for f in files:
                if not f.is_file():
                    raise UsageError(f"cannot read {f}: no such file")
                ident = _house_id(f)
                if ident == "base":
                    raise UsageError(f"{f}: a house rule cannot be named 'base' here (balance's "
                                     "name for the rules without variants): give it another id")
                if ident in house and house[ident].resolve() != f.resolve():
                    raise UsageError(f"two house rules named {ident!r}: {house[ident]} and {f}")
                house[ident] = f
                chosen.append(ident)
        names = tuple(dict.fromkeys(chosen))
        return Side("+".join(names) or "base", names, tuple(house.values()))

    sides = [side("--variant", args.variant)]
    if args.compare is not None:
        other = side("--compare", args.compare)
        if other.name == sides[0].name:
            same = other.engine_key() == sides[0].engine_key()
            shown = ", ".join(str(p) for p in other.house)
            other.name += " (again)" if same else f" ({shown})"
        sides.append(other)
    return sides


def _house_engines(
    rules: Path, sets: Sequence[tuple[Path, ...]], stack: contextlib.ExitStack[Any]
) -> list[Path]:
    """For each set of house-rule files, the rules folder with them added as variants
    (pipeline's `extra`: nothing is copied, and their diagnostics name their own files),
    compiled to a temporary engine file (which lives as long as `stack`). The diagnostics of
    every set are printed together, each once; EngineRefused when one has errors."""
    from lisboa_rules import pipeline

    if not (rules / "game.yaml").is_file():
        raise EngineLoadError(f"no rules folder at {rules} (give --rules DIR)")
    results = [pipeline.compile_rules(rules, (), extra=files) for files in sets]
    diags = list(dict.fromkeys(d for r in results for d in r.diagnostics))
    if has_errors(diags) or any(ENGINE not in r.files for r in results):
        report(diags, "text")
        raise EngineRefused("the rules with the house rules have errors")
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lisboa-balance-")))
    paths = []
    for i, result in enumerate(results):
        folder = tmp / str(i)
        folder.mkdir()
        engine = folder / ENGINE
        files.write_new_file(engine, result.files[ENGINE].encode("utf-8"))
        paths.append(engine)
    return paths


def _engines(
    args: argparse.Namespace, sides: Sequence[Side], stack: contextlib.ExitStack[Any]
) -> list[tuple[Path, Any]]:
    """The engine (its path and module) that plays each side: the one engine of --engine,
    generated/ or --rules when no side has house rules; else one compiled from the rules
    folder per set of house-rule files (a side never plays with the other side's house rules:
    one that applies by player count would apply on both sides, and two versions of one rule
    would conflict)."""
    if not any(side.house for side in sides):
        path = stack.enter_context(engine_file(args))
        module = load_engine(path)
        return [(path, module)] * len(sides)
    keys = list(dict.fromkeys(side.engine_key() for side in sides))
    files = {side.engine_key(): side.house for side in sides}
    paths = _house_engines(args.rules or Path("rules"), [files[k] for k in keys], stack)
    loaded = {k: (p, load_engine(p)) for k, p in zip(keys, paths, strict=True)}
    return [loaded[side.engine_key()] for side in sides]


def _agents(text: str) -> tuple[str, ...]:
    names = tuple(a.strip() for a in text.split(",") if a.strip())
    if not names:
        raise UsageError("--agents needs at least one agent")
    for a in names:
        if a not in sim_agents.AGENTS:
            guess = suggest(a, sim_agents.AGENTS)
            hint = f"; did you mean '{guess}'?" if guess else ""
            raise UsageError(f"unknown agent {a!r} (known: {', '.join(sim_agents.AGENTS)}){hint}")
    return names


def run(args: argparse.Namespace) -> int:
    """Play the games and print (or write) the report."""
    try:
        agents = _agents(args.agents)
        why = seed_range_error(args.seed, args.games)
        if why is not None:
            raise UsageError(why)
        bad_out = out_problem(args.out) if args.out is not None else None
        if bad_out is not None:
            raise UsageError(f"--out {args.out}: {bad_out}")
        sides = _sides(args)
        if args.dask is not None and importlib.util.find_spec("distributed") is None:
            raise UsageError(f"--dask needs dask[distributed]: pip install '{PROG}[dask]'")
        why = dask_address_problem(args.dask, args.dask_insecure)
        if why is not None:
            raise UsageError(why)
        if any(side.house for side in sides) and args.engine is not None:
            raise UsageError(
                "house rules are compiled into an engine: give --rules DIR (or "
                "nothing, for rules/), not --engine"
            )
    except UsageError as exc:
        err(f"{PROG}: error: {exc}\n")
        return EXIT_ERROR
    try:
        with contextlib.ExitStack() as stack:
            engines = _engines(args, sides, stack)
            data, records = play(engines, args, agents, sides)
            if data is None:
                return EXIT_ERROR
    except EngineLoadError as exc:
        err(f"{PROG}: error: {exc}\n")
        return exit_code(exc)
    if args.format == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif args.format == "html":
        from lisboa_rules.sim import html

        text = html.page(data, records)
    else:
        text = sim_report.text(data)
    if args.out is not None:
        try:
            # a new file renamed over --out: a symlink there is replaced, not followed
            files.write_file_atomic(args.out, text.encode("utf-8"))
        except OSError as exc:
            err(f"{PROG}: error: cannot write {args.out}: {exc}\n")
            return EXIT_ERROR
        err(f"{PROG}: wrote {args.out}\n")
    else:
        out(text)
    return EXIT_OK


def _for_players(E: Any, side: Side, players: int) -> str | None:
    """Why a variant chosen for `side` cannot be played with `players` (one that applies by
    player count, at another count), or None."""
    for name in side.chosen:
        v = E.VARIANTS.get(name)
        counts = sorted(v.players) if v is not None and v.players else []
        if counts and players not in counts:
            listed = " or ".join(str(n) for n in counts)
            hint = f"--players {counts[0]}" if len(counts) == 1 else f"--players {listed}"
            return (f"{side.name}: {name} applies with {listed} players only, not {players}: "
                    f"play it with {hint}")
    return None


def play(
    engines: Sequence[tuple[Path, Any]],
    args: argparse.Namespace,
    agents: tuple[str, ...],
    sides: list[Side],
) -> tuple[dict[str, Any] | None, dict[str, list[runner.GameRecord]]]:
    """Play every side's games (one pass over the executor; each side on its own engine) and
    build the report's data."""
    # the most players every side's rules allow, unless --players says
    players = min(default_players(E, args.players) for _, E in engines)
    keys = []
    for side, (_, E) in zip(sides, engines, strict=True):
        why = _for_players(E, side, players)
        if why is not None:
            err(f"{PROG}: error: {why}\n")
            return None, {}
        try:
            keys.append(E.variants_for(players, side.chosen))
            E.new_game(players, side.chosen, args.seed)
            E.new_game(players, side.chosen, args.seed + args.games - 1)  # the last seed
        except ValueError as exc:
            err(f"{PROG}: error: {side.name}: {exc}\n")
            return None, {}
    same = len(sides) == 2 and engines[0][0] == engines[1][0] and keys[0] == keys[1]
    if same and not sides[1].name.endswith(" (again)"):  # (again): the control, on purpose
        shown = "+".join(keys[0]) or "no variant"
        err(f"{PROG}: note: {sides[0].name} and {sides[1].name} are the same rule set with "
            f"{players} players ({shown}): every difference will be 0\n")
    options = runner.Options(args.iterations, args.horizon)
    # on this machine (processes, or a local Dask cluster): at most one worker per CPU
    workers = worker_count(args.jobs) if args.dask in (None, "local") else args.jobs
    parts = workers if args.dask is None else max(2, workers)
    jobs = [
        job
        for side, (path, _) in zip(sides, engines, strict=True)
        for job in runner.chunks(
            str(path), players, side.chosen, args.seed, args.games, agents, options, parts
        )
    ]
    modules = {str(path): E for path, E in engines}
    bar = progress_bar(args.games * len(sides))
    tick = bar.update if bar is not None else None
    try:
        if args.dask is not None:
            address = None if args.dask == "local" else args.dask
            played = executors.run_dask(jobs, address, workers, tick)
        else:
            played = executors.run_processes(modules, jobs, workers, tick)
    except executors.DaskUnavailable as exc:
        err(f"{PROG}: error: {exc}\n")
        return None, {}
    finally:
        if bar is not None:
            bar.close()
    by_side: dict[str, list[runner.GameRecord]] = {}
    for i, side in enumerate(sides):
        by_side[side.name] = played[i * args.games : (i + 1) * args.games]
    infos = [
        sim_report.info_of(E, s.name, k)
        for s, (_, E), k in zip(sides, engines, keys, strict=True)
    ]
    return build_data(infos, args, agents, by_side), by_side


def build_data(
    infos: Sequence[sim_report.RuleSetInfo],
    args: argparse.Namespace,
    agents: tuple[str, ...],
    by_side: dict[str, list[runner.GameRecord]],
) -> dict[str, Any]:
    compare = None
    if len(infos) == 2:
        compare = sim_report.compare_data(
            infos[0], infos[1], by_side[infos[0].name], by_side[infos[1].name], agents
        )
    uses_mcts = any(a.startswith("mcts") for a in agents)
    return {
        "run": {
            "games": args.games,
            "players": len(by_side[infos[0].name][0].totals),
            "seed": args.seed,
            "agents": list(agents),
            "iterations": args.iterations if uses_mcts else None,
            "horizon": args.horizon if uses_mcts else None,
        },
        "rule_sets": {
            info.name: sim_report.rule_set_data(info, by_side[info.name], agents) for info in infos
        },
        "compare": compare,
    }


COMMANDS: dict[str, Command] = {
    "balance": Command(
        "play seeded games with agents and report win rates, scores and "
        "triggers with confidence intervals (and a paired comparison)",
        _configure,
        run,
    ),
}
