"""Playing seeded games with agents, and what each game leaves for the report.

Game `i` of a run is played with seed `S + i` by the lineup `lineup(agents, players, i)`: the
agents rotate one seat per game, so over `len(agents)` games each agent sits in each seat once.
Each seat's agent is seeded with the game's seed and the seat, so a game's moves depend on
nothing but (engine, rule set, players, agents, seed): not on the order, the process or the
machine that plays it. `GameRecord` is plain data (it crosses processes and the network).

`simulate`'s games are random games of another draw: one generator per game, seeded
`moves:S+i`, draws every seat's moves (`Options(one_generator=True)`), as it always has.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lisboa_rules.core.memory import cyclic_gc_paused
from lisboa_rules.sim.agents import (
    DEFAULT_HORIZON,
    DEFAULT_ITERATIONS,
    OVER,
    Agent,
    RandomAgent,
    make_agent,
    totals_of,
)


@dataclass(frozen=True)
class Options:
    """What an agent needs besides its name (MCTS's budget), and how the seats draw."""

    iterations: int = DEFAULT_ITERATIONS
    horizon: int | None = DEFAULT_HORIZON
    # every seat's moves drawn by one random generator per game, seeded `moves:SEED`, instead
    # of an agent per seat (`random` agents only): the games `simulate` plays
    one_generator: bool = False
    # follow the leader (the score estimate at the end of each turn) for `lead_changes`, which
    # is 0 without it: about 6% of a random game's time, and `simulate` reports no leaders
    leads: bool = True


@dataclass
class GameRecord:
    """What one game contributes to the report."""

    index: int  # the game's number in the run (its seed is the run's seed + index)
    seed: int
    lineup: tuple[str, ...]  # the agent in each seat
    moves: int
    turns: int
    rounds: int
    track: list[int]  # per seat: points on the score track at the end
    sources: list[dict[str, int]]  # per seat: points per scoring source
    totals: list[int]
    fired: list[str]  # the end triggers that fired, in order
    first: list[int]  # the seats sharing first place (after the tie-breakers)
    places: list[int]  # per seat: its place, counted as in sport (1, 1, 3)
    margin: int  # the winner's total minus the next best (0 when first place is shared)
    lead_changes: int  # times the leader (by the score estimate at the end of a turn) changed
    # (0 when the game was played without following it: Options.leads)


def lineup(agents: Sequence[str], players: int, index: int) -> tuple[str, ...]:
    """The agent in each seat of game `index`: the list rotates one seat per game."""
    return tuple(agents[(seat + index) % len(agents)] for seat in range(players))


def play_game(
    engine: Any,
    players: int,
    variants: Sequence[str],
    seed: int,
    index: int,
    agents: Sequence[str],
    options: Options = Options(),
) -> GameRecord:
    """Play one game to the end and record it (the cyclic garbage collector paused while it
    plays: an engine's states make no cycles, and the collector walking the states an agent
    compares cost a greedy game about a fifth of its time)."""
    with cyclic_gc_paused():
        return _play_game(engine, players, variants, seed, index, agents, options)


def _play_game(
    engine: Any,
    players: int,
    variants: Sequence[str],
    seed: int,
    index: int,
    agents: Sequence[str],
    options: Options,
) -> GameRecord:
    E = engine
    names = lineup(agents, players, index)
    bots: Sequence[Agent]
    if options.one_generator:
        bots = _one_generator(E, names, seed)
    else:
        bots = [
            make_agent(n, E, f"{seed}:{seat}", iterations=options.iterations,
                       horizon=options.horizon)
            for seat, n in enumerate(names)
        ]
    g = E.new_game(players, tuple(variants), seed)
    moves = 0
    leader: int | None = None
    changes = 0
    turns = g.turns
    estimate = totals_of(E)
    leads = options.leads
    while g.phase != OVER:
        g = E.apply_move(g, bots[g.actor](g))
        moves += 1
        if leads and g.turns != turns:  # a turn ended: who leads now?
            turns = g.turns
            totals = estimate(g)
            top = max(totals)
            leaders = [i for i, t in enumerate(totals) if t == top]
            if len(leaders) == 1 and leaders[0] != leader:
                if leader is not None:
                    changes += 1
                leader = leaders[0]
    sheet = E.final_scores(g)
    rank = E.ranking(g, sheet)
    first = list(rank.places[0])
    places = [0] * players
    ahead = 0
    for group in rank.places:
        for seat in group:
            places[seat] = ahead + 1
        ahead += len(group)
    totals = list(sheet.totals)
    ordered = sorted(totals, reverse=True)
    margin = 0 if len(first) > 1 or len(ordered) < 2 else ordered[0] - ordered[1]
    return GameRecord(
        index=index,
        seed=seed,
        lineup=names,
        moves=moves,
        turns=g.turns,
        rounds=g.round,
        track=list(sheet.track),
        sources=[{ln.source: ln.points for ln in lines} for lines in sheet.lines],
        totals=totals,
        fired=list(g.fired),
        first=first,
        places=places,
        margin=margin,
        lead_changes=changes,
    )


def _one_generator(engine: Any, names: Sequence[str], seed: int) -> list[Agent]:
    """One random agent for every seat, seeded `moves:SEED` (Options.one_generator)."""
    if any(n != "random" for n in names):
        raise ValueError(f"one generator for every seat draws random moves: the agents are "
                         f"'random' only, not {', '.join(sorted(set(names)))}")
    bot = RandomAgent(engine, random.Random(f"moves:{seed}"))
    return [bot] * len(names)


@dataclass(frozen=True)
class Job:
    """A chunk of games of one rule set, for one worker (plain data)."""

    engine: str  # the engine's path (a file or a folder holding lisboa_engine)
    players: int
    variants: tuple[str, ...]
    seed: int  # the run's seed: game i is played with seed + i
    indices: tuple[int, ...]
    agents: tuple[str, ...]
    options: Options


def run_job(engine: Any, job: Job) -> list[GameRecord]:
    """Play a chunk's games in order."""
    return [
        play_game(engine, job.players, job.variants, job.seed + i, i, job.agents, job.options)
        for i in job.indices
    ]


def chunks(
    engine: str,
    players: int,
    variants: tuple[str, ...],
    seed: int,
    games: int,
    agents: tuple[str, ...],
    options: Options,
    parts: int,
) -> list[Job]:
    """The games cut in chunks: about 16 per worker keep them busy to the end (games differ in
    length), at most 25 games each (the progress bar moves)."""
    size = max(1, min(25, games // max(1, parts * 16)))
    return [
        Job(engine, players, variants, seed, tuple(range(i, min(games, i + size))), agents, options)
        for i in range(0, games, size)
    ]
