"""`legal_moves` keeps its last list with a copy of the state; `apply_move` and `explain_move`
read that list instead of listing again. A state changed between the calls, a move of an older
state, a list the caller changed, a state played twice: each gets the answer the engine gives
without the kept list (a copy of the state, listed afresh). No timing is asserted.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest


def _states(E: Any, seed: int, want: int = 3) -> list[Any]:
    """States of a random 4-player game where the player to act has many moves (the lists
    that are kept), from several points of the game."""
    g = E.new_game(4, (), seed)
    rng = random.Random(seed)
    out: list[Any] = []
    turn = 0
    while g.phase != "over" and len(out) < want:
        moves = E.legal_moves(g)
        turn += 1
        if len(moves) >= 12 and turn % 9 == 0:
            out.append(g.clone())
        g = E.apply_move(g, rng.choice(moves))
    assert out, "no state with many moves"
    return out


def _drop_card(E: Any, g: Any) -> None:
    g.players[g.actor].hand.pop(0)


def _broke(E: Any, g: Any) -> None:
    p = g.players[g.actor]
    p.reis = 0
    p.influence = 0
    p.wigs = 0


def _no_goods(E: Any, g: Any) -> None:
    p = g.players[g.actor]
    p.goods = dict.fromkeys(p.goods, 0)


def _next_actor(E: Any, g: Any) -> None:
    g.actor = (g.actor + 1) % len(g.players)


def _empty_shipyard(E: Any, g: Any) -> None:
    g.shipyard.clear()


def _round_trip(E: Any, g: Any) -> None:
    """Changed and changed back: equal to the state listed, so every answer is the same."""
    p = g.players[g.actor]
    card = p.hand.pop()
    p.hand.append(card)


MUTATIONS: dict[str, Callable[[Any, Any], None]] = {
    "drop-card": _drop_card,
    "broke": _broke,
    "no-goods": _no_goods,
    "next-actor": _next_actor,
    "empty-shipyard": _empty_shipyard,
    "round-trip": _round_trip,
}


def _answer(E: Any, g: Any, move: Any) -> tuple[str, Any]:
    """What apply_move does with the move: the state after it, or the rule it is refused by."""
    try:
        return "ok", E.to_json(E.apply_move(g, move))
    except E.IllegalMove as exc:
        return "refused", exc.rule


@pytest.mark.parametrize("seed", [5, 29])
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_state_changed_after_listing_gets_the_fresh_answer(
    engine: Any, seed: int, mutation: str
) -> None:
    E = engine
    change = MUTATIONS[mutation]
    for state in _states(E, seed):
        listed = E.legal_moves(state.clone())
        fresh = state.clone()
        change(E, fresh)
        now_legal = E.legal_moves(fresh)
        differs = False
        for move in listed:
            expected = _answer(E, fresh.clone(), move)
            assert (expected[0] == "ok") == (move in now_legal)
            g = state.clone()
            got_list = E.legal_moves(g)  # kept with a copy of g
            assert move in got_list
            change(E, g)  # ... and g changed after listing
            why = E.explain_move(g, move)
            assert (why is None) == (expected[0] == "ok"), (mutation, move)
            if why is not None:
                assert why.rule == expected[1]
            assert _answer(E, g, move) == expected, (mutation, move)
            differs = differs or expected[0] != "ok"
        if mutation != "round-trip":
            assert differs or mutation in ("no-goods", "empty-shipyard", "broke")
        else:
            assert not differs


@pytest.mark.parametrize("seed", [3, 21])
def test_a_move_of_an_older_state_is_judged_on_the_new_one(engine: Any, seed: int) -> None:
    E = engine
    for state in _states(E, seed):
        old = E.legal_moves(state)
        after = E.apply_move(state, old[0])
        for move in old:
            expected = _answer(E, after.clone(), move)
            E.legal_moves(state)  # the older state's list is the one kept
            assert _answer(E, after, move) == expected
            assert (E.explain_move(after, move) is None) == (expected[0] == "ok")


@pytest.mark.parametrize("seed", [4, 33])
def test_the_same_state_played_twice_and_the_result_changed(engine: Any, seed: int) -> None:
    E = engine
    for state in _states(E, seed):
        before = E.to_json(state)
        moves = E.legal_moves(state)
        first = E.apply_move(state, moves[-1])
        want = E.to_json(first)
        first.players[0].hand.clear()  # the caller changes the state it was given
        first.round += 7
        again = E.apply_move(state, moves[-1])
        assert E.to_json(again) == want
        assert again is not first
        for move in moves[:5]:  # more moves of the same state, as a search would try them
            assert _answer(E, state, move) == _answer(E, state.clone(), move)
        assert E.to_json(state) == before


@pytest.mark.parametrize("seed", [6, 14])
@pytest.mark.parametrize("edit", ["clear", "bogus", "replace"])
def test_a_list_the_caller_changed(engine: Any, seed: int, edit: str) -> None:
    E = engine
    for state in _states(E, seed):
        moves = E.legal_moves(state)
        legal = moves[len(moves) // 2]
        bogus = E.Move(legal.kind, legal.player, card=10_000)
        if edit == "clear":
            moves.clear()
        elif edit == "bogus":
            moves.append(bogus)
        else:
            moves[:] = [bogus] * 3
        assert E.explain_move(state, bogus) is not None
        with pytest.raises(E.IllegalMove):
            E.apply_move(state, bogus)
        assert E.explain_move(state, legal) is None
        assert _answer(E, state, legal) == _answer(E, state.clone(), legal)


@pytest.mark.parametrize("seed", [9, 27])
def test_moves_equal_but_not_the_same_objects(engine: Any, seed: int) -> None:
    """A move read back from JSON (or of the wrong types) is judged as the listed one is."""
    E = engine
    for state in _states(E, seed):
        moves = E.legal_moves(state)
        for move in moves[:6]:
            copy = E.Move.from_json(move.to_json())
            assert copy is not move
            E.legal_moves(state)
            assert _answer(E, state, copy) == _answer(E, state.clone(), move)
        move = next((m for m in moves if m.card is not None), None)
        if move is not None:
            read = E.Move.from_json(move.to_json())
            fields = {**{n: getattr(read, n) for n in E._MOVE_FIELDS}, "card": float(move.card)}
            wrong = E.Move(**fields)
            E.legal_moves(state)
            assert E.explain_move(state, wrong) is not None
            with pytest.raises(E.IllegalMove):
                E.apply_move(state, wrong)


@pytest.mark.parametrize("seed", [8, 40])
def test_every_listed_move_of_one_state_in_turn(engine: Any, seed: int) -> None:
    """A search plays every move of one list on the same state (the engine lists it once more
    and plays each move on a copy of that): each answer is the one of a fresh copy of the
    state, the state is left unchanged, a move not listed is refused in the middle, and a state
    the caller changes half-way is judged as it is now."""
    E = engine
    for state in _states(E, seed):
        before = E.to_json(state)
        moves = E.legal_moves(state)
        expected = [_answer(E, state.clone(), m) for m in moves]
        E.legal_moves(state)
        got = [_answer(E, state, m) for m in moves]
        assert got == expected
        assert E.to_json(state) == before
        bogus = E.Move(moves[0].kind, moves[0].player, card=10_000)
        with pytest.raises(E.IllegalMove):
            E.apply_move(state, bogus)
        assert _answer(E, state, moves[-1]) == expected[-1]
        for move in moves[:3]:  # the same moves read back from JSON: judged by value
            copy = E.Move.from_json(move.to_json())
            assert _answer(E, state, copy) == _answer(E, state.clone(), move)
        E.legal_moves(state)
        half = len(moves) // 2
        for move in moves[:half]:
            E.apply_move(state, move)
        _drop_card(E, state)  # the caller changes the state half-way
        changed = E.to_json(state)
        for move in moves[half:]:
            assert _answer(E, state, move) == _answer(E, state.clone(), move)
            assert (E.explain_move(state, move) is None) == (move in E.legal_moves(state.clone()))
        assert E.to_json(state) == changed
