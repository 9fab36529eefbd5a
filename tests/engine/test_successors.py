"""`successors(g)`: each legal move with the state after it, computed once. It must be exactly
`[(m, apply_move(g, m)) for m in legal_moves(g)]` (same moves, same order, equal states that
share nothing), on states of every rule set; and the greedy agent, which uses it when the
engine has it, must play the same games as through `legal_moves` + `apply_move`."""

from __future__ import annotations

import random
from typing import Any

import pytest
from conftest import setups

from lisboa_rules.sim.agents import GreedyAgent, make_agent
from lisboa_rules.sim.runner import play_game


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int, every: int) -> list[Any]:
    """States of a seeded random game, every `every` moves, and its last state (over)."""
    rng = random.Random(f"successors:{seed}")
    g = E.new_game(players, variants, seed)
    out = []
    n = 0
    while g.phase != "over":
        if n % every == 0:
            out.append(g)
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1
    out.append(g)
    return out


def test_successors_is_legal_moves_then_apply_move(engine: Any) -> None:
    E = engine
    checked = 0
    kinds: set[str] = set()
    for players, variants in setups(E):
        for seed in range(3):
            for g in _states(E, players, variants, 100 + seed, 7):
                before = E.to_json(g)
                got = E.successors(g)
                assert E.to_json(g) == before  # g is never changed
                want = [(m, E.apply_move(g, m)) for m in E.legal_moves(g)]
                assert [m for m, _ in got] == [m for m, _ in want]
                for (m, after), (_, expected) in zip(got, want, strict=True):
                    assert type(m) is E.Move
                    assert after == expected, m
                    assert E.to_json(after) == E.to_json(expected), m
                    kinds.add(m.kind)
                checked += 1
                # the states are new: changing one changes neither g nor another one
                if len(got) >= 2:
                    a, b = got[0][1], got[1][1]
                    assert a is not g and b is not g and a is not b
                    b_before = E.to_json(b)
                    a.players[0].wigs += 1000
                    for value in [*vars_of(a), *(v for p in a.players for v in vars_of(p))]:
                        _scribble(value)
                    assert E.to_json(g) == before
                    assert E.to_json(b) == b_before
                if g.phase == "over":
                    assert got == []
    assert checked > 100
    assert len(kinds) >= 5, kinds  # many kinds of move, not only draws and passes


def vars_of(obj: Any) -> list[Any]:
    """The values of a state's or a player's fields (slotted classes: no __dict__), but the
    rule set it caches and the players list (whose players are given on their own)."""
    return [getattr(obj, n) for n in obj.__slots__ if not n.startswith("_") and n != "players"]


def _scribble(value: Any) -> None:
    """Change a list or dict in place (and the lists and dicts inside a dict)."""
    if isinstance(value, list):
        value.append(value[0] if value else 0)
    elif isinstance(value, dict):
        for inner in list(value.values()):
            _scribble(inner)
        value["scribbled"] = 0


class _NoSuccessors:
    """The engine without `successors`: the greedy agent falls back to legal_moves +
    apply_move."""

    def __init__(self, E: Any) -> None:
        self._E = E

    def __getattr__(self, name: str) -> Any:
        if name == "successors":
            raise AttributeError(name)
        return getattr(self._E, name)


GAMES = 90  # seeded greedy games, spread over the rule sets


@pytest.mark.slow
def test_greedy_plays_the_same_games_with_and_without_successors(engine: Any) -> None:
    _same_games(engine, GAMES)


def test_greedy_plays_the_same_games_with_and_without_successors_quick(engine: Any) -> None:
    _same_games(engine, 8)


def _same_games(E: Any, games: int) -> None:
    plain = _NoSuccessors(E)
    assert GreedyAgent(E, random.Random(0)).successors is not None
    assert GreedyAgent(plain, random.Random(0)).successors is None
    runs = setups(E)
    for i in range(games):
        players, variants = runs[i % len(runs)]
        agents = ("greedy",) if i % 3 else ("greedy", "random")
        fast = play_game(E, players, variants, 500 + i, i, agents)
        slow = play_game(plain, players, variants, 500 + i, i, agents)
        assert fast == slow, (players, variants, i)


def test_greedy_move_is_one_of_the_legal_moves(engine: Any) -> None:
    E = engine
    agent = make_agent("greedy", E, 3)
    for g in _states(E, 3, (), 9, 5)[:-1]:
        move = agent(g)
        assert move in E.legal_moves(g)


def test_successors_pauses_the_collector_and_leaves_it_as_it_was(engine: Any) -> None:
    """The cyclic garbage collector is off while the states are made, and back as it was
    after: on when it was on (also when the call refuses), off when the caller turned it off."""
    import gc

    E = engine
    g = _states(E, 3, (), 7, 5)[3]
    seen: list[bool] = []
    real = E._successors

    def spy(state: Any) -> Any:
        seen.append(gc.isenabled())
        return real(state)

    assert gc.isenabled()
    E._successors = spy
    try:
        assert E.successors(g) == [(m, E.apply_move(g, m)) for m in E.legal_moves(g)]
        assert seen == [False] and gc.isenabled()
        with pytest.raises(E.BadArgument):
            E.successors("not a game")
        assert gc.isenabled()
        gc.disable()
        try:
            E.successors(g)
            assert not gc.isenabled()
        finally:
            gc.enable()
    finally:
        E._successors = real


def test_a_loaded_state_holds_the_engines_own_strings(engine: Any) -> None:
    """from_json interns a save's texts: every key and text of a loaded state is the interned
    string (the one the engine's code names), not a copy of its letters, and the state is
    the one saved."""
    import json
    import sys

    E = engine
    g = _states(E, 3, (), 11, 9)[2]
    loaded = E.from_json(json.loads(json.dumps(E.to_json(g))))
    assert E.to_json(loaded) == E.to_json(g)
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                texts.append(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            texts.append(value)

    for p in loaded.players:
        for name in ("color", "stores", "goods", "decrees", "plans"):
            walk(getattr(p, name, None))
    walk(loaded.phase)
    assert len(texts) > 10
    assert all(sys.intern(t) is t for t in texts)


def test_the_move_generators_codes_are_the_legal_moves(engine: Any) -> None:
    """What the engine's own searches draw from (`_moves_now`: each move's code, the tuple of
    its fields in order) is `legal_moves`, move for move: `Move(*code)` is the listed move and
    its `_code()` the code, every code as long as `_MOVE_FIELDS` (so equal moves have equal
    codes, as the search tree's keys need), on states of every rule set and in every phase."""
    E = engine
    phases: set[str] = set()
    for players, variants in setups(E):
        for g in _states(E, players, variants, 300, 5):
            codes = E._moves_now(g)
            moves = E.legal_moves(g)
            assert [E.Move(*c) for c in codes] == moves
            assert [m._code() for m in moves] == codes
            assert all(len(c) == len(E._MOVE_FIELDS) for c in codes)
            assert len(set(codes)) == len(codes)  # no move listed twice
            phases.add(g.phase)
    assert len(phases) >= 3, phases
