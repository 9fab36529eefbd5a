"""A move tried in place and taken back (`_tried`, `_taken_back`): what greedy's one-ply
search plays its candidates on instead of a copy of the state each (issue 36).

The lockstep: on the states of random games of every rule set (and of states whose end-game
fields are drawn at random, to reach the rare steps: a period's end, the game's end, the
triggers), every legal move tried in place gives the state that playing it on a copy gives,
and taking it back gives the state before, field for field and in its saved JSON. The same on
the house rules of examples/house-rules/ and tests/cases/house-more/ (each is a rule set of
its own, built here). Greedy's choice is the one a search on copies makes (`successors` and
`final_totals`, the public functions), from the same generator. A compiler that misses a field
the steps write is caught: the backstop's checked searches fail the build's games.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import setups
from test_differential import engine_from_text, models_of, randomised_games

from lisboa_rules import pipeline
from tools.fuzz_effects import tried_in_place

ROOT = Path(__file__).resolve().parents[2]
HOUSE = sorted([*(ROOT / "examples" / "house-rules").glob("*.yaml"),
                *(ROOT / "tests" / "cases" / "house-more").glob("*.yaml")])


def _tried_agrees(E: Any, g: Any) -> int:
    """Every legal move of `g` tried in place and taken back (`fuzz_effects.tried_in_place`,
    which the effect fuzzer asks too): the number of moves tried."""
    wrong, tried = tried_in_place(E, g)
    assert not wrong, wrong
    return tried


def _play_and_try(E: Any, players: int, variants: tuple[str, ...], seed: int,
                  every: int) -> tuple[int, int]:
    """A random game; every `every` states, each move tried and taken back. (states, moves)"""
    rng = random.Random(f"tried:{seed}")
    g = E.new_game(players, variants, seed)
    states = tried = step = 0
    while g.phase != "over":
        if step % every == 0:
            states += 1
            tried += _tried_agrees(E, g)
        E._apply(g, E.Move(*rng.choice(E._moves_now(g))))
        step += 1
    return states, tried


@pytest.fixture(scope="module")
def engine() -> ModuleType:
    from test_differential import ENGINE_PATH, load_engine_file
    return load_engine_file(ENGINE_PATH, "lisboa_engine_tried")


def test_every_rule_set_takes_its_moves_back(engine: ModuleType) -> None:
    states = tried = 0
    for players, variants in setups(engine):
        s, t = _play_and_try(engine, players, variants, seed=players, every=2)
        states, tried = states + s, tried + t
    assert states > 250 and tried > 8_000


def test_randomised_states_take_their_moves_back(engine: ModuleType) -> None:
    """States with their end-game fields drawn at random: the steps of a period's end, of the
    game's end and of the triggers run from them."""
    compiled, diags = pipeline.analyse(ROOT / "rules")
    assert compiled is not None, [d.message for d in diags]
    tried = 0
    phases = set()
    for _where, g in randomised_games(engine, models_of(compiled), 60, seed0=3600):
        phases.add(g.phase)
        tried += _tried_agrees(engine, g)
    assert tried > 500 and len(phases) > 1


def test_a_refused_move_leaves_the_state_as_it_was(engine: ModuleType) -> None:
    E = engine
    g = E.new_game(3, (), 5)
    before = g.clone()
    code = E._moves_now(g)[0]
    wrong = E.Move(code[0], (g.actor + 1) % 3, *code[2:])  # another seat's
    with pytest.raises(E.IllegalMove):
        E._tried(g, wrong)
    assert g == before and g._undo is None
    # a move whose steps refuse once they have changed the state (its first choice made, a
    # later one not): put back too
    refused = 0
    for code in E._moves_now(g):
        bad = E.Move(*code[:3], *(None if isinstance(x, str) else x for x in code[3:]))
        try:
            was, undo = E._tried(g, bad)
        except E.IllegalMove:
            refused += 1
        else:
            E._taken_back(g, was, undo)
        assert g == before and E.to_json(g) == E.to_json(before)
    assert refused > 0


def _greedy_on_copies(E: Any, g: Any, rng: random.Random) -> Any:
    """Greedy's move as the public functions make it: each move played on a copy
    (`successors`), scored by `final_totals`; ties drawn as `random.Random.choice`."""
    dealt = E.redeal(g, g.actor, rng)
    pairs = E.successors(dealt)
    if len(pairs) == 1:
        return pairs[0][0]
    seat = g.actor
    best: list[int] = []
    best_value = 0
    for i, (_m, after) in enumerate(pairs):
        totals = E.final_totals(after)
        value = totals[seat] - max((t for j, t in enumerate(totals) if j != seat), default=0)
        if not best or value > best_value:
            best_value, best = value, [i]
        elif value == best_value:
            best.append(i)
    k = 0 if len(best) == 1 else rng.choice(range(len(best)))
    return pairs[best[k]][0]


def test_greedy_chooses_as_a_search_on_copies(engine: ModuleType) -> None:
    E = engine
    for players, seed in ((2, 1), (3, 2), (4, 3)):
        g = E.new_game(players, (), seed)
        a, b = random.Random(seed), random.Random(seed)
        for _ in range(80):
            if g.phase == "over":
                break
            move = E.greedy_move(g, a)
            assert move == _greedy_on_copies(E, g, b)
            assert a.getstate() == b.getstate()
            g = E.apply_move(g, move)


def test_a_missed_field_fails_the_checked_search() -> None:
    """An engine whose visit keeps nothing before its steps run (a compiler that missed every
    field they write): greedy's checked search (the backstop's) fails, naming the fields (the
    entry point says the engine failed: a fault of the compiler)."""
    from test_differential import ENGINE_PATH
    E: Any = engine_from_text(ENGINE_PATH.read_text(encoding="utf-8"), "lisboa_engine_missed")
    rs = E.RULESETS[E.variants_for(3, ())]
    visit = rs.moves["visit"]
    rs.moves["visit"] = replace(visit, keep=lambda g, seat: (), put=lambda g, seat, was: None)
    # the lockstep the tests and the effect fuzzer run sees it
    assert "taken back changed the state" in tried_in_place(E, E.new_game(3, (), 0))[0]
    E._TRY_CHECKED[0] = True
    rng = random.Random(0)
    g = E.new_game(3, (), 0)
    missed = "RuntimeError: a move tried in place .* was not taken back: .*players.* changed"
    with pytest.raises(E.StateError, match=missed):
        for _ in range(200):
            g = E.apply_move(g, E.greedy_move(g, rng))


@pytest.mark.sampled(2)
@pytest.mark.parametrize("path", HOUSE, ids=[p.stem for p in HOUSE])
def test_house_rules_take_their_moves_back(path: Path) -> None:
    name = path.stem
    chosen: tuple[str, ...] = (name,)
    result = pipeline.compile_rules(ROOT / "rules", chosen, extra=[path])
    if any(d.code == "fold-by-players" for d in result.diagnostics):
        chosen = ()  # a variant of a player count: built beside the base game, not folded
        result = pipeline.compile_rules(ROOT / "rules", chosen, extra=[path])
    assert result.ok and result.compiled is not None, [d.message for d in result.diagnostics]
    E: Any = engine_from_text(result.files["lisboa_engine.py"], f"lisboa_engine_tried_{name}")
    tried = 0
    for players, variants in setups(E):
        if variants == chosen:
            tried += _play_and_try(E, players, variants, seed=players + 40, every=2)[1]
    for _where, g in randomised_games(E, models_of(result.compiled), 12, seed0=3700):
        tried += _tried_agrees(E, g)
    assert tried > 300
