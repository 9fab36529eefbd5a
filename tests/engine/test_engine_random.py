"""Seeded random games on the generated engine, run to the end with invariants checked after
every move: 1,000 games for each player count (2, 3 and 4) and 1,000 with the Queen variant in
the complete suite (--slow), 100 of each in the default run.

After every move: no negative réis, wigs or Influence, Influence at most its maximum, every
Political card somewhere exactly once, and the engine's own `check_invariants` (Decrees, Plans,
Royal Favor tiles, Officials, stores and markers conserved). The JSON round trip is checked
after every move of one game in 25 (and that `apply_move` left its input alone), and at the end
of every game; so are the score sheet's totals and the ranking. The games run in worker
processes (fork), as many as there are cores (2 in CI): about a minute there.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from conftest import load_engine, sized

GAMES = sized(100, 1000)  # per setup: the complete suite plays 1,000
CONFIGS = {  # name -> (player counts, variants); the Queen games cycle through 2, 3, 4
    "2p": ((2,), ()),
    "3p": ((3,), ()),
    "4p": ((4,), ()),
    "queen": ((2, 3, 4), ("queen",)),
}
ROUND_TRIP_EVERY_MOVE = 25  # one game in 25 checks the JSON round trip after every move
CHUNK = 50


def play_checked(config: str, seed: int) -> tuple[int, int, list[str]]:
    """Play one seeded random game to the end; return (moves, turns, problems)."""
    E = load_engine()
    counts, variants = CONFIGS[config]
    players = counts[seed % len(counts)]
    g = E.new_game(players, variants, seed)
    rs = g.rs
    all_cards = sorted(rs.cards)
    rng = random.Random(f"{config}:{seed}")
    every_move = seed % ROUND_TRIP_EVERY_MOVE == 0
    moves = 0
    problems: list[str] = []

    def check(g: Any, where: str) -> None:
        for p in g.players:
            if p.reis < 0 or p.wigs < 0 or p.influence < 0:
                problems.append(f"{where}: {p.color} has a negative count")
            if p.influence > rs.influence_max:
                problems.append(f"{where}: {p.color} Influence {p.influence}")
        if sorted(E.all_cards(g)) != all_cards:
            problems.append(f"{where}: cards not conserved")
        problems.extend(f"{where}: {x}" for x in E.check_invariants(g))

    while g.phase != "over":
        legal = E.legal_moves(g)
        if not legal:
            problems.append(f"move {moves}: no legal move in phase {g.phase}")
            break
        move = rng.choice(legal)
        before = E.dumps(g) if every_move else ""
        after = E.apply_move(g, move)
        moves += 1
        check(after, f"{config} seed {seed} move {moves} ({move.kind})")
        if every_move:
            if E.dumps(g) != before:
                problems.append(f"move {moves}: apply_move changed its input")
            if E.from_json(E.to_json(after)) != after:
                problems.append(f"move {moves}: JSON round trip differs")
        g = after
        if moves > 5000:
            problems.append("the game does not end")
            break
    if E.loads(E.dumps(g)) != g:
        problems.append(f"{config} seed {seed}: JSON round trip differs at the end")
    sheet = E.final_scores(g)
    for seat, lines in enumerate(sheet.lines):
        if [ln.source for ln in lines] != [s.id for s in rs.scoring]:
            problems.append(f"seed {seed}: sources out of order")
        if sheet.totals[seat] != sheet.track[seat] + sum(ln.points for ln in lines):
            problems.append(f"seed {seed}: totals inconsistent")
        if any(ln.points < 0 or not ln.explanation for ln in lines):
            problems.append(f"seed {seed}: a bad score line")
    ranked = sorted(seat for place in E.ranking(g, sheet).places for seat in place)
    if ranked != list(range(players)):
        problems.append(f"seed {seed}: ranking does not place every player once")
    if g.period != rs.periods or len(g.fired) != 2:
        problems.append(f"seed {seed}: ended in period {g.period} after {g.fired}")
    return moves, g.turns, problems


def _chunk(config: str, seeds: range) -> tuple[int, int, list[str]]:
    total_moves = total_turns = 0
    problems: list[str] = []
    for seed in seeds:
        moves, turns, found = play_checked(config, seed)
        total_moves += moves
        total_turns += turns
        problems += found[:3]
    return total_moves, total_turns, problems


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@pytest.mark.parametrize("config", list(CONFIGS))
def test_random_games_keep_the_invariants(config: str) -> None:
    chunks = [range(i, min(i + CHUNK, GAMES)) for i in range(0, GAMES, CHUNK)]
    if _workers() > 1 and "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(_workers(), mp_context=ctx) as pool:
            results = list(pool.map(_chunk, [config] * len(chunks), chunks))
    else:
        results = [_chunk(config, c) for c in chunks]
    problems = [p for _, _, found in results for p in found]
    assert problems == [], "\n".join(problems[:20])
    moves = sum(m for m, _, _ in results)
    turns = sum(t for _, t, _ in results)
    assert moves > GAMES * 20 and turns > GAMES * 10  # the games are real games
