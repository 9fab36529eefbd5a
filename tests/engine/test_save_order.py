"""A saved game plays on exactly as the unsaved one: nothing the engine does depends on the
order of a table's keys in the JSON it was loaded from (saves sort their keys; a table of the
state is gone through in the order its kind declares, rules/state.yaml)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from conftest import setups


@pytest.mark.sampled(1)
@pytest.mark.parametrize("seed", range(3))
def test_a_reloaded_game_plays_as_the_unsaved_one(engine: Any, seed: int) -> None:
    E = engine
    played = 0
    for players, key in setups(E):
        g = E.new_game(players, key, seed)
        rng = random.Random(f"save-order:{seed}:{players}:{key}")
        while g.phase != "over":
            move = rng.choice(E.legal_moves(g))
            reloaded = E.loads(E.dumps(g))  # keys sorted: another order than the engine's
            a, b = E.apply_move(g, move), E.apply_move(reloaded, move)
            assert E.dumps(a) == E.dumps(b), (players, key, move)
            g = a
            played += 1
    assert played > 500


def test_the_tables_of_a_save_are_in_another_order(engine: Any) -> None:
    # the test above means something only if a save does reorder a table of the state
    g = engine.new_game(3, (), 0)
    assert list(g.piles) != sorted(g.piles)
    assert list(engine.loads(engine.dumps(g)).piles) == sorted(g.piles)


@pytest.mark.parametrize("seed", range(4))
def test_every_procedure_does_the_same_on_a_reloaded_state(engine: Any, seed: int) -> None:
    """Each procedure of rules/ that takes no choice (the end-of-period steps, the end of the
    turn, the effects with an amount of 1), run on a state of a random game and on the same
    state saved and loaded again, gives the same state: no step goes through a table in the
    order of the JSON it was loaded from."""
    E = engine
    g = E.new_game(3, (), seed)
    rng = random.Random(f"save-order-procs:{seed}")
    for _ in range(rng.randrange(3, 15)):  # early in period 1: the piles have cards
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    assert sum(1 for pile in g.piles.values() if pile) >= 2  # so their order shows
    ran = 0
    for pid, proc in g.rs.procs.items():
        if proc.choices:
            continue
        for args in ((), (1, None)):
            a, b = g.clone(), E.loads(E.dumps(g))
            try:
                proc.run(a, 0, *args)
            except TypeError:  # another signature
                continue
            proc.run(b, 0, *args)
            assert E.to_json(a) == E.to_json(b), pid
            ran += 1
    assert ran >= 10
