"""`score` and `simulate`: the generated engine at work, from the command line.

Both commands load the engine module from a file (generated/lisboa_engine.py by default, or
`--engine PATH`; PATH may also be a folder that holds `lisboa_engine`, as source or as a
compiled extension module), or compile it afresh from a rules folder (`--rules DIR`), and use
only its public API, as a game app would. On a terminal, simulate shows a progress bar (tqdm).

    lisboa-rules score STATE.json [--format text|json]
    lisboa-rules simulate --games N --seed S [--players P] [--variant V]... [--jobs J]

Exit codes follow cli.py: 0 ok, 1 a bad saved game or rules with errors, 2 usage errors and
files that cannot be read.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lisboa_rules.cli.common import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Command, err, out, report
from lisboa_rules.core.diagnostics import PROG, has_errors
from lisboa_rules.core.inputs import ENGINE, discover, read_regular
from lisboa_rules.core.limits import INT64_MAX, INT64_MIN
from lisboa_rules.sim import executors, runner
from lisboa_rules.sim.engine import EngineLoadError, load_engine
from lisboa_rules.sim.summary import Summary, summary_data

DEFAULT_ENGINE = Path("generated") / ENGINE


class EngineRefused(EngineLoadError):
    """An engine the command will not use: older than the rules beside it, or compiled from
    rules with errors (a finding: exit 1; any other EngineLoadError exits 2)."""


def exit_code(exc: EngineLoadError) -> int:
    """The exit code of a command that could not load its engine."""
    return EXIT_FINDINGS if isinstance(exc, EngineRefused) else EXIT_ERROR


@contextlib.contextmanager
def engine_file(args: argparse.Namespace) -> Iterator[Path]:
    """The engine file to use: --engine, the generated one, or one compiled from --rules
    (written to a temporary folder that lives as long as the command)."""
    if args.rules is None:
        explicit = args.engine is not None
        path = args.engine if explicit else DEFAULT_ENGINE
        stale = stale_engine(path)
        if stale is not None:
            if not explicit:
                raise EngineRefused(stale)
            err(f"{PROG}: warning: {stale}\n")
        yield path
        return
    from lisboa_rules import pipeline  # only when building, not at start-up
    from lisboa_rules.outputs import files

    result = pipeline.compile_rules(args.rules, ())
    if has_errors(result.diagnostics) or ENGINE not in result.files:
        report(result.diagnostics, "text")
        raise EngineRefused(f"the rules in {args.rules} have errors")
    with tempfile.TemporaryDirectory(prefix="lisboa-engine-") as tmp:
        path = Path(tmp) / ENGINE
        files.write_new_file(path, result.files[ENGINE].encode("utf-8"))
        yield path


INPUTS_LINE = "# Inputs (sha256): "


def rules_digest(rules_dir: Path) -> str | None:
    """The hash a build of `rules_dir` records in the engine's DO-NOT-EDIT header (the same
    as pipeline.Compiled.digest); None when a rules file cannot be read."""
    lines = []
    try:
        for path in discover(rules_dir):
            data = read_regular(path)
            if data is None:
                return None
            rel = path.relative_to(rules_dir).as_posix()
            lines.append((f"rules/{rel}", hashlib.sha256(data).hexdigest()))
    except OSError:
        return None
    text = "\n".join(f"{p} {h}" for p, h in sorted(lines))
    return hashlib.sha256(text.encode()).hexdigest()


def stale_engine(engine: Path) -> str | None:
    """Why the engine file was not built from the rules folder beside its output folder
    (`<project>/generated/lisboa_engine.py` and `<project>/rules/`), or None when it was, or
    when there is no such rules folder or the engine records no inputs."""
    if engine.is_dir():
        engine = engine / ENGINE
    rules_dir = engine.resolve().parent.parent / "rules"
    if not engine.is_file() or not rules_dir.is_dir():
        return None
    try:
        with engine.open(encoding="utf-8", errors="replace") as fh:
            head = [fh.readline() for _ in range(10)]
    except OSError:
        return None
    recorded = next((ln[len(INPUTS_LINE):].strip() for ln in head
                     if ln.startswith(INPUTS_LINE)), None)
    if recorded is None:
        return None
    if rules_digest(rules_dir) == recorded:
        return None
    shown = engine.parent
    return (f"{shown.as_posix()}/ is older than {(shown.parent / 'rules').as_posix()}/: run "
            f"{PROG} build (the engine was built from other rules files)")


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="output format (default: text)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--engine", type=Path, default=None, metavar="PATH",
                       help="the engine to use: a module file, or a folder that holds "
                       f"lisboa_engine (source or compiled) (default: {DEFAULT_ENGINE})")
    where.add_argument("--rules", type=Path, default=None, metavar="DIR",
                       help="compile the engine from this rules folder instead")


# --- score ----------------------------------------------------------------------------------

# The most `score` reads of a saved game (the engine's own limit, `max_save_size()`, is
# far smaller: this only keeps a huge file or a device out of the memory).
MAX_SAVE_BYTES = 8 << 20


def _configure_score(p: argparse.ArgumentParser) -> None:
    p.add_argument("state", type=Path, metavar="STATE.json", help="a saved game")
    _add_engine_options(p)


def run_score(args: argparse.Namespace) -> int:
    """Print a saved game's score sheet, with explanations, and the ranking."""
    try:
        # a FIFO or a device must not block or fill the memory: a regular file, size-capped
        raw = read_regular(args.state, MAX_SAVE_BYTES)
        if raw is None:
            err(f"{PROG}: error: cannot read {args.state}: not a regular file\n")
            return EXIT_ERROR
        if len(raw) > MAX_SAVE_BYTES:
            err(f"{PROG}: error: {args.state}: larger than {MAX_SAVE_BYTES} bytes: not a saved "
                "game\n")
            return EXIT_FINDINGS
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        err(f"{PROG}: error: cannot read {args.state}: {exc}\n")
        return EXIT_ERROR
    try:
        with engine_file(args) as path:
            E = load_engine(path)
            try:
                game = E.loads(text)
            except E.StateError as exc:
                err(f"{PROG}: error: {args.state}: {exc}\n")
                return EXIT_FINDINGS
            sheet = E.final_scores(game)
            rank = E.ranking(game, sheet)
    except EngineLoadError as exc:
        err(f"{PROG}: error: {exc}\n")
        return exit_code(exc)
    data = score_data(game, sheet, rank)
    if args.format == "json":
        out(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out(score_text(data))
    return EXIT_OK


def places_of(rank: Any) -> list[int]:
    """Per seat, its place counted as in sport: two sharing 1st are both 1st, then 3rd."""
    place: dict[int, int] = {}
    ahead = 0
    for group in rank.places:
        for seat in group:
            place[seat] = ahead + 1
        ahead += len(group)
    return [place[s] for s in sorted(place)]


def score_data(game: Any, sheet: Any, rank: Any) -> dict[str, Any]:
    """The score sheet and the ranking as plain data."""
    places = places_of(rank)
    colors = list(sheet.colors)
    return {
        "over": game.phase == "over",
        "phase": game.phase,
        "round": game.round,
        "period": game.period,
        "players": sheet.to_json()["players"],
        "ranking": {
            "order": [
                {"place": places[s], "color": colors[s], "total": sheet.totals[s],
                 "shared": len(group) > 1, "keys": list(rank.keys[s])}
                for group in rank.places for s in group
            ],
            "tiebreakers": list(rank.names),
        },
    }


def score_text(data: dict[str, Any]) -> str:
    """The score sheet as text."""
    lines = []
    if not data["over"]:
        lines.append(f"note: the game is not over ({data['phase']}, round {data['round']}); "
                     "these are the scores as they stand")
    for p in data["players"]:
        lines.append(f"{p['color']}: {p['total']} wigs")
        lines.append(f"  {p['track']:>3}  wigs on the track")
        for s in p["sources"]:
            lines.append(f"  {s['wigs']:>3}  {s['explanation']}")
    lines.append("")
    lines.append("Ranking (" + ", then ".join(data["ranking"]["tiebreakers"]) + "):")
    for r in data["ranking"]["order"]:
        shared = " (shared)" if r["shared"] else ""
        lines.append(f"  {_ordinal(r['place'])}  {r['color']}  {r['total']} wigs{shared}")
    return "\n".join(lines) + "\n"


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


# --- simulate ---------------------------------------------------------------------------------


def _configure_simulate(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=games_count(MAX_SIMULATE_GAMES), required=True, metavar="N",
                   help=f"how many games to play (at most {MAX_SIMULATE_GAMES:,})")
    p.add_argument("--seed", type=int, required=True, metavar="S",
                   help="game i is played with seed S + i")
    p.add_argument("--players", type=int, default=None, metavar="P",
                   help="number of players (default: the most the game allows)")
    p.add_argument("--variant", action="append", default=[], metavar="V",
                   help="a variant chosen at setup (repeatable)")
    p.add_argument("--jobs", type=_positive, default=1, metavar="J",
                   help="worker processes (the results do not depend on it)")
    _add_engine_options(p)


def default_players(E: Any, players: int | None) -> int:
    """`--players`, or the most players the game allows when it is not given (0 is given:
    the engine refuses it)."""
    return players if players is not None else max(rs.players_max for rs in E.RULESETS.values())


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


# The most games one run plays: `simulate` keeps a few numbers per game, `balance` every game's
# record (about 3 kB at 4 players) for its quantiles and paired differences. A larger count is
# refused before anything is listed or played (it was a MemoryError after filling the memory).
MAX_SIMULATE_GAMES = 1_000_000
MAX_BALANCE_GAMES = 100_000


def games_count(limit: int) -> Callable[[str], int]:
    """The argparse type of `--games`: a whole number from 1 to `limit`."""

    def parse(text: str) -> int:
        value = _positive(text)
        if value > limit:
            shown = f"{value:,}" if len(text) <= 30 else f"a number of {len(text.strip())} digits"
            raise argparse.ArgumentTypeError(f"at most {limit:,} games in one run, not {shown}")
        return value

    return parse


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def worker_count(jobs: int) -> int:
    """The worker processes for `--jobs`: at most one per CPU (more only compete for them, and
    each is a process of its own), with a note when fewer than asked. The results do not
    depend on it."""
    cpus = available_cpus()
    if jobs <= cpus:
        return jobs
    err(f"{PROG}: note: --jobs {jobs} is more than the {cpus} CPUs here: playing on {cpus} "
        "worker processes (the results are the same)\n")
    return cpus


SEED_MIN, SEED_MAX = INT64_MIN, INT64_MAX  # the engine's seeds: signed 64-bit, as a save keeps them


def seed_range_error(seed: int, games: int) -> str | None:
    """Why games `seed` .. `seed + games - 1` cannot all be played (a seed outside the engine's
    signed 64-bit range), or None."""
    last = seed + games - 1
    if not SEED_MIN <= seed <= SEED_MAX:
        return f"--seed {seed}: a seed is a signed 64-bit integer (-2**63 to 2**63 - 1)"
    if last > SEED_MAX:
        return (f"--seed {seed} with --games {games}: the last game's seed, {last}, is past the "
                "signed 64-bit range of seeds (-2**63 to 2**63 - 1)")
    return None


def run_simulate(args: argparse.Namespace) -> int:
    """Play seeded random games to the end and print a summary."""
    why = seed_range_error(args.seed, args.games)
    if why is not None:
        err(f"{PROG}: error: {why}\n")
        return EXIT_ERROR
    try:
        with engine_file(args) as path:
            E = load_engine(path)
            players = default_players(E, args.players)
            try:
                variants = E.variants_for(players, args.variant)
                E.new_game(players, args.variant, args.seed)
                E.new_game(players, args.variant, args.seed + args.games - 1)  # the last seed
            except ValueError as exc:
                err(f"{PROG}: error: {exc}\n")
                return EXIT_ERROR
            chosen = tuple(v for v in variants if not E.VARIANTS[v].players)
            jobs = worker_count(args.jobs)
            summary = simulate(E, path, players, chosen, args.seed, args.games, jobs)
            data = summary_data(E, summary, players, variants, args.seed)
    except EngineLoadError as exc:
        err(f"{PROG}: error: {exc}\n")
        return exit_code(exc)
    if args.format == "json":
        out(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out(summary_text(data))
    return EXIT_OK


def simulate(E: Any, path: Path, players: int, variants: tuple[str, ...], seed: int,
             games: int, jobs: int) -> Summary:
    """Play the random games (in `jobs` processes when more than 1: sim/executors.py) and sum
    them up in seed order, with a progress bar on a terminal."""
    summary = Summary.of_players(players)
    options = runner.Options(one_generator=True, leads=False)
    chunks = runner.chunks(str(path), players, variants, seed, games, ("random",), options, jobs)
    progress = progress_bar(games)

    def take(records: list[runner.GameRecord]) -> None:
        summary.add_all(records)
        if progress is not None:
            progress.update(len(records))

    try:
        executors.play_processes(E, chunks, jobs, take)
    finally:
        if progress is not None:
            progress.close()
    return summary


def progress_bar(total: int, unit: str = "games") -> Any:
    """A progress bar with the rate and the time left, on stderr, when stderr is a terminal
    (tqdm); None otherwise. `bar.update(n)` moves it, `bar.close()` ends its line."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, unit=unit[:-1] if unit.endswith("s") else unit, file=sys.stderr,
                dynamic_ncols=True, leave=True)


def summary_text(d: dict[str, Any]) -> str:
    """The summary as text."""
    variants = ", ".join(d["variants"]) or "none"
    ln = d["length"]
    lines = [
        f"{d['games']} games, {d['players']} players, variants: {variants}, seeds "
        f"{d['seed']}..{d['seed'] + d['games'] - 1}",
        "",
        "Game length:",
        f"  turns   mean {ln['turns']['mean']}  min {ln['turns']['min']}  "
        f"max {ln['turns']['max']}",
        f"  rounds  mean {ln['rounds']['mean']}  min {ln['rounds']['min']}  "
        f"max {ln['rounds']['max']}",
        f"  moves   mean {ln['moves']}",
        "",
        "Average wigs per player:",
        f"  {d['score_per_player']['track']:>7}  on the track",
    ]
    for src in d["score_per_player"]["sources"].values():
        lines.append(f"  {src['mean']:>7}  {src['name']}")
    lines.append(f"  {d['score_per_player']['total']:>7}  total")
    lines.append("")
    for kind, label in (("period", "End of the period"), ("game", "End of the game")):
        lines.append(f"{label} triggered by:")
        for t, n in d["triggers"][kind].items():
            lines.append(f"  {n:>6}  {t}")
    lines.append("")
    lines.append("Wins by seat (shared first places counted for each player sharing):")
    for w in d["wins"]:
        lines.append(f"  seat {w['seat']} {w['color']:<7} {w['wins']:>6} wins "
                     f"({w['shared']} shared)")
    return "\n".join(lines) + "\n"


COMMANDS: dict[str, Command] = {
    "score": Command("print a saved game's score sheet with explanations and the ranking",
                     _configure_score, run_score),
    "simulate": Command("play seeded random games to the end and summarise them",
                        _configure_simulate, run_simulate),
}
