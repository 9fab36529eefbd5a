"""`balance`: what a rule set, a variant or a house rule does to the game, from played games.

    lisboa-rules balance --games N --seed S [--players P] [--variant V]... [--agents A,B,...]
                         [--compare V2]... [--jobs J] [--dask ADDRESS] [--iterations K]
                         [--format text|json|html] [--out FILE] [--engine PATH | --rules DIR]

Game i is played with seed S + i by the agents (lisboa_rules/sim/agents.py), rotating one
seat per game. `--variant` and `--compare` take variant names of the rules or paths to house
rules (a variant YAML file, or a folder of them, as in examples/house-rules/): the engine is
then compiled afresh from the rules folder (--rules, default rules/) with the house rules added
as options (nothing is copied: pipeline.compile_rules takes them as `extra` files, and their
errors name them). `--compare` plays the other rule set on the same seeds and lineups and
reports the paired differences with their 95% intervals.

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
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lisboa_rules.cli.common import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Command, err, out, report
from lisboa_rules.cli.engine import (
    EngineLoadError,
    _positive,
    default_players,
    engine_file,
    load_engine,
    progress_bar,
)
from lisboa_rules.core.diagnostics import PROG, has_errors, suggest
from lisboa_rules.core.inputs import ENGINE
from lisboa_rules.sim import agents as sim_agents
from lisboa_rules.sim import executors, runner
from lisboa_rules.sim import report as sim_report

HOUSE_SUFFIXES = (".yaml", ".yml")


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=_positive, required=True, metavar="N", help="games per rule set")
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
        help="play on the Dask scheduler at ADDRESS, or 'local' for a local "
        "cluster of --jobs workers (needs the dask extra)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "html"),
        default="text",
        help="output format (default: text)",
    )
    p.add_argument(
        "--out",
        type=Path,
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
    compiler then says what is wrong)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return path.stem
    ident = doc.get("id") if isinstance(doc, dict) else None
    return ident if isinstance(ident, str) and ident else path.stem


@dataclass
class Side:
    """One rule set of the run: its name and the variants chosen for it."""

    name: str
    chosen: tuple[str, ...]


class UsageError(Exception):
    pass


def _sides(args: argparse.Namespace) -> tuple[list[Side], dict[str, Path]]:
    """The rule sets to play, and the house-rule files to add to the rules (id -> file)."""
    house: dict[str, Path] = {}

    def names(values: Sequence[str]) -> tuple[str, ...]:
        chosen: list[str] = []
        for v in values:
            if v == "base":
                continue
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
                if ident in house and house[ident].resolve() != f.resolve():
                    raise UsageError(f"two house rules named {ident!r}: {house[ident]} and {f}")
                house[ident] = f
                chosen.append(ident)
        return tuple(dict.fromkeys(chosen))

    base = names(args.variant)
    sides = [Side("+".join(base) or "base", base)]
    if args.compare is not None:
        other = names(args.compare)
        name = "+".join(other) or "base"
        if name == sides[0].name:
            name += " (again)"
        sides.append(Side(name, other))
    return sides, house


@contextlib.contextmanager
def _house_engine(rules: Path, house: dict[str, Path]) -> Iterator[Path]:
    """The rules folder with the house rules added as variants (pipeline's `extra`: nothing
    is copied, and their diagnostics name their own files), compiled to a temporary engine
    file (which lives as long as the command)."""
    from lisboa_rules import pipeline

    if not (rules / "game.yaml").is_file():
        raise EngineLoadError(f"no rules folder at {rules} (give --rules DIR)")
    result = pipeline.compile_rules(rules, (), extra=tuple(house.values()))
    if has_errors(result.diagnostics) or ENGINE not in result.files:
        report(result.diagnostics, "text")
        raise EngineLoadError("the rules with the house rules have errors", EXIT_FINDINGS)
    with tempfile.TemporaryDirectory(prefix="lisboa-balance-") as tmp:
        engine = Path(tmp) / ENGINE
        engine.write_text(result.files[ENGINE], encoding="utf-8")
        yield engine


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
        sides, house = _sides(args)
        if args.dask is not None and importlib.util.find_spec("distributed") is None:
            raise UsageError(f"--dask needs dask[distributed]: pip install '{PROG}[dask]'")
        if house and args.engine is not None:
            raise UsageError(
                "house rules are compiled into an engine: give --rules DIR (or "
                "nothing, for rules/), not --engine"
            )
    except UsageError as exc:
        err(f"{PROG}: error: {exc}\n")
        return EXIT_ERROR
    try:
        where = _house_engine(args.rules or Path("rules"), house) if house else engine_file(args)
        with where as path:
            E = load_engine(path)
            data, records = play(E, path, args, agents, sides)
            if data is None:
                return EXIT_ERROR
    except EngineLoadError as exc:
        err(f"{PROG}: error: {exc}\n")
        return exc.code
    if args.format == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif args.format == "html":
        from lisboa_rules.sim import html

        text = html.page(data, records)
    else:
        text = sim_report.text(data)
    if args.out is not None:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as exc:
            err(f"{PROG}: error: cannot write {args.out}: {exc}\n")
            return EXIT_ERROR
        err(f"{PROG}: wrote {args.out}\n")
    else:
        out(text)
    return EXIT_OK


def play(
    E: Any, path: Path, args: argparse.Namespace, agents: tuple[str, ...], sides: list[Side]
) -> tuple[dict[str, Any] | None, dict[str, list[runner.GameRecord]]]:
    """Play every side's games (one pass over the executor) and build the report's data."""
    players = default_players(E, args.players)
    keys = []
    for side in sides:
        try:
            keys.append(E.variants_for(players, side.chosen))
            E.new_game(players, side.chosen, args.seed)
            E.new_game(players, side.chosen, args.seed + args.games - 1)  # the last seed
        except ValueError as exc:
            err(f"{PROG}: error: {side.name}: {exc}\n")
            return None, {}
    options = runner.Options(args.iterations, args.horizon)
    parts = args.jobs if args.dask is None else max(2, args.jobs)
    jobs = [
        job
        for side in sides
        for job in runner.chunks(
            str(path), players, side.chosen, args.seed, args.games, agents, options, parts
        )
    ]
    bar = progress_bar(args.games * len(sides))
    tick = bar.update if bar is not None else None
    try:
        if args.dask is not None:
            address = None if args.dask == "local" else args.dask
            played = executors.run_dask(jobs, address, args.jobs, tick)
        else:
            played = executors.run_processes(E, jobs, args.jobs, tick)
    finally:
        if bar is not None:
            bar.close()
    by_side: dict[str, list[runner.GameRecord]] = {}
    for i, side in enumerate(sides):
        by_side[side.name] = played[i * args.games : (i + 1) * args.games]
    return build_data(E, args, agents, sides, keys, by_side), by_side


def build_data(
    E: Any,
    args: argparse.Namespace,
    agents: tuple[str, ...],
    sides: list[Side],
    keys: list[tuple[str, ...]],
    by_side: dict[str, list[runner.GameRecord]],
) -> dict[str, Any]:
    infos = [sim_report.info_of(E, s.name, k) for s, k in zip(sides, keys, strict=True)]
    compare = None
    if len(sides) == 2:
        compare = sim_report.compare_data(
            infos[0], infos[1], by_side[sides[0].name], by_side[sides[1].name], agents
        )
    uses_mcts = any(a.startswith("mcts") for a in agents)
    return {
        "run": {
            "games": args.games,
            "players": len(by_side[sides[0].name][0].totals),
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
