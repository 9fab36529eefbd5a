"""`final_totals(g)` is `tuple(final_scores(g).totals)` computed without the explanations:
checked on every state of seeded random games (every rule set the setups give, ties and empty
majorities included), and after states changed by hand."""

from __future__ import annotations

import random
from typing import Any

from tests.conftest import setups


def _totals(E: Any, g: Any) -> tuple[int, ...]:
    return tuple(E.final_scores(g).totals)


def test_final_totals_equal_final_scores_on_every_state(engine: Any) -> None:
    E = engine
    checked = 0
    for k, (players, variants) in enumerate(setups(E)):
        for seed in range(6):
            g = E.new_game(players, variants, 9000 + 31 * k + seed)
            rng = random.Random(f"totals:{k}:{seed}")
            while True:
                got = E.final_totals(g)
                assert type(got) is tuple and all(type(x) is int for x in got)
                assert got == _totals(E, g), (players, variants, seed, g.turns)
                checked += 1
                if g.phase == "over":
                    break
                g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    assert checked > 1000


def test_final_totals_follow_a_changed_state(engine: Any) -> None:
    """Ties on every majority, a lone leader, nobody eligible: the same numbers."""
    E = engine
    g = E.new_game(3, (), 5)
    rng = random.Random(5)
    for _ in range(60):
        if g.phase == "over":
            break
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    for p in g.players:  # everyone tied on every store kind
        for kind in p.stores:
            p.stores[kind] = 2
    assert E.final_totals(g) == _totals(E, g)
    first = g.players[0]
    for kind in first.stores:
        first.stores[kind] = 5
    assert E.final_totals(g) == _totals(E, g)
    for p in g.players:
        for kind in p.stores:
            p.stores[kind] = 0
        p.wigs = 7
    assert E.final_totals(g) == _totals(E, g)


def test_final_totals_is_public(engine: Any) -> None:
    assert "final_totals" in engine.__all__
