"""A backstop that points at the rule (issue 33): a few seeded games of every rule set a build
compiles, played on the engine it generated, before anything is written.

The static checks (lang/total.py, ir/cost.py, the checks of the model) are the guarantee that
an engine the compiler accepts plays; this only catches what they miss. Every rule set (the
base game and each chosen variant, at every player count the rules allow) plays `games` games
from seeds 0, 1, ...: a random player on even seeds, a greedy one on odd seeds, each move
listed, played and its state's invariants checked, up to `MOVE_LIMIT` moves. An exception, a
failed invariant, a state with no legal move or a game that does not end is an
`engine-failed` error at the rule the failing step is written at (the engine's faults name it:
`StateError.at`, read from the comment the generated code keeps above each step), with the
seed, the player count and the moves that reproduce it.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.limits import PLAY_GAMES
from lisboa_rules.core.source import Span
from lisboa_rules.outputs import pycode
from lisboa_rules.sim.agents import make_agent

DEFAULT_GAMES = PLAY_GAMES  # games of each rule set at each player count: random, greedy
MOVE_LIMIT = 5_000  # a game longer than this does not end (the base game's take about 100)
SOURCE = "<generated lisboa_engine.py>"


def play_check(engine_source: str, games: int = DEFAULT_GAMES,
               names: Mapping[str, str] | None = None) -> list[Diagnostic]:
    """The problems `games` seeded games of every rule set find in the engine `engine_source`
    (the generated module's text); none when it plays them all to their end. `names`: the
    files' display paths by the stable names the engine's comments use ("rules/x.yaml")."""
    if games <= 0:
        return []
    try:
        engine = _load(engine_source)
    except (SyntaxError, ValueError):
        return []  # code that does not compile: the writer refuses it (generated-invalid)
    out: list[Diagnostic] = []
    where: set[Span | None] = set()
    for chosen, players in _tables(engine):
        for seed in range(games):
            found = _play(engine, chosen, players, seed)
            if found is not None and found.span is not None and names:
                found = replace(found, span=replace(
                    found.span, file=names.get(found.span.file, found.span.file)))
            if found is not None:
                if found.span not in where:  # one error for each rule that fails
                    where.add(found.span)
                    out.append(found)
                break  # one problem of a rule set at a player count says enough
    return out


def _load(source: str) -> types.ModuleType:
    """The engine executed in memory, its lines known to `linecache` under its own name so
    that a fault names the rule (the runtime's `_rule_at` reads them)."""
    code = pycode.compile_module(source, SOURCE)
    lines = source.splitlines(keepends=True)
    linecache.cache[SOURCE] = (len(source), None, lines, SOURCE)
    name = "_generated_backstop_engine"
    module = types.ModuleType(name)
    module.__file__ = SOURCE
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def _tables(engine: Any) -> Iterator[tuple[tuple[str, ...], int]]:
    """Each chosen set of variants with each player count it is played at, once per rule
    set the engine holds."""
    chosen = sorted({tuple(v for v in key if not engine.VARIANTS[v].players)
                     for key in engine.RULESETS})
    lo = min(rs.players_min for rs in engine.RULESETS.values())
    hi = max(rs.players_max for rs in engine.RULESETS.values())
    seen: set[tuple[tuple[str, ...], int]] = set()
    for variants in chosen:
        for players in range(lo, hi + 1):
            try:
                key = tuple(engine.variants_for(players, variants))
            except (ValueError, KeyError):
                continue
            rs = engine.RULESETS.get(key)
            if rs is None or not rs.players_min <= players <= rs.players_max:
                continue
            if (key, players) not in seen:
                seen.add((key, players))
                yield variants, players


def _play(engine: Any, chosen: tuple[str, ...], players: int, seed: int) -> Diagnostic | None:
    agent_name = "random" if seed % 2 == 0 else "greedy"
    what = (f"a {agent_name} game of {players} players, seed {seed}"
            + (f", variants {', '.join(chosen)}" if chosen else ""))
    moves: list[Any] = []

    def last_action() -> str | None:
        """Where the action of the last move is written (a failure that no step names)."""
        if not moves:
            return None
        md = g.rs.moves.get(moves[-1].kind)
        if md is None:
            return None
        line = md.moves.__code__.co_firstlineno - 1  # the comment above its generator
        found = engine._AT_RULE.search(linecache.getline(SOURCE, line))  # the runtime's
        return found.group(1) if found is not None else None

    def failed(message: str, at: str | None) -> Diagnostic:
        shown = ", ".join(str(m.to_json()) for m in moves[-3:])
        replay = (f" (reproduce: new_game({players}, {list(chosen)!r}, seed={seed}) and the "
                  f"{agent_name} agent of seed {seed}; {len(moves)} moves played"
                  + (f", the last: {shown}" if moves else "") + ")")
        return Diagnostic("engine-failed", f"{what}: {message}{replay}", _span(at))

    g: Any = None
    try:
        g = engine.new_game(players, list(chosen), seed)
        step = make_agent(agent_name, engine, seed)
        while g.phase != "over":
            if len(moves) >= MOVE_LIMIT:
                return failed(f"the game did not end in {MOVE_LIMIT:,} moves", None)
            if not engine.legal_moves(g):
                return failed(f"no legal move in the {g.phase} phase, and the game is not over",
                              last_action())
            move = step(g)
            g = engine.apply_move(g, move)
            moves.append(move)
            broken = engine.check_invariants(g)
            if broken:
                return failed(f"an invariant fails after the move: {broken[0]}",
                              last_action())
    except engine.StateError as exc:
        return failed(str(exc), exc.at)
    except Exception as exc:  # the backstop reports anything the engine raises
        return failed(f"{type(exc).__name__}: {exc}", None)
    return None


def _span(at: str | None) -> Span | None:
    """`rules/FILE:LINE` as a span at the line's start (None: no rule named)."""
    if at is None:
        return None
    path, _, line = at.rpartition(":")
    if not path or not line.isdigit():
        return None
    return Span(path, int(line), 1, int(line), 1)
