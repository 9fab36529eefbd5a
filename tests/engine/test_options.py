"""Moves a screen can build choice by choice (issue 35): `options(game_or_view, partial)` lists
the next choice of a move, the kind first and then each field its action chooses, each option
enabled or disabled with the rule and the reason; a field of several items (the hand discard)
is one pick of a set. Its answers are those of `legal_moves`: choosing enabled options ends in
a listed move, every listed move is reached, a game played through it reaches the states
`legal_moves` reaches, and a view of the seat to move gives the same answers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from conftest import sized

SETS = [(2, ()), (3, ()), (4, ()), (3, ("queen",))]


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int, every: int
            ) -> Iterator[Any]:
    """States of a seeded random game, every `every` moves (not the finished one)."""
    rng = random.Random(seed)
    g = E.new_game(players, variants, seed)
    n = 0
    while g.phase != "over":
        if n % every == 0:
            yield g
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1


def _value(move: Any, name: str) -> Any:
    value = getattr(move, name)
    return list(value) if isinstance(value, tuple) else value


def _follow(E: Any, g: Any, move: Any) -> tuple[Any, int]:
    """Build `move` through `options`, taking at each choice the move's own value; the move
    it ends in and how many choices it took."""
    partial: dict[str, Any] = {}
    for steps in range(1, 40):
        choice = E.options(g, partial)
        if choice.field is None:
            assert choice.options == ()
            return choice.move, steps
        want = _value(move, choice.field)
        enabled = [o.value for o in choice.options if o.enabled]
        words = [o.words for o in choice.options]
        assert all(words) and len(set(words)) == len(words), choice  # told apart in words
        if choice.pick is None:
            assert want in enabled, (choice.field, want, choice)
        else:
            low, high = choice.pick
            assert low <= len(want) <= high and all(x in enabled for x in want)
        partial[choice.field] = want
    raise AssertionError("a move of more than 40 choices")


def _wander(E: Any, g: Any, rng: random.Random) -> Any:
    """Build a move through `options`, taking an enabled option at random at each choice (of
    a pick of several, a set some listed move takes)."""
    partial: dict[str, Any] = {}
    while True:
        choice = E.options(g, partial)
        if choice.field is None:
            return choice.move
        enabled = [o.value for o in choice.options if o.enabled]
        assert enabled, f"a dead end at {choice.field} after {partial}"
        if choice.pick is None:
            partial[choice.field] = rng.choice(enabled)
            continue
        low, high = choice.pick
        if choice.sets is not None:  # not every set of that many: the sets the moves take
            partial[choice.field] = list(rng.choice(choice.sets))
        else:  # any set of that many is a move's
            partial[choice.field] = rng.sample(enabled, rng.randint(low, min(high,
                                                                           len(enabled))))


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_every_listed_move_is_built_choice_by_choice(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    for g in _states(engine, players, variants, 31 + players, sized(3, 11)):
        moves = engine.legal_moves(g)
        kinds = engine.options(g)
        assert kinds.field == "kind" and kinds.label
        # each option in the rules' words: a kind by its action's name, distinct
        assert len({o.words for o in kinds.options}) == len(kinds.options)
        assert {o.value for o in kinds.options if o.enabled} == {m.kind for m in moves}
        for move in moves:
            built, _ = _follow(engine, g, move)
            assert built == move


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_a_game_played_through_options_reaches_the_states_of_legal_moves(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    """Random choices, option by option, always end in a listed move; played, it gives the
    state `apply_move` gives; a view of the seat to move answers as the game does."""
    rng = random.Random(players)
    g = engine.new_game(players, variants, 41 + players)
    turns = 0
    while g.phase != "over" and turns < sized(120, 2000):
        move = _wander(engine, g, rng)
        assert move in engine.legal_moves(g)
        if turns % 9 == 0:
            v = engine.view(g, g.actor)
            partial: dict[str, Any] = {}
            while True:
                mine, theirs = engine.options(v, partial), engine.options(g, partial)
                assert mine == theirs
                if mine.field is None:
                    break
                partial[mine.field] = _value(move, mine.field)
        g = engine.apply_move(g, move)
        turns += 1


def test_a_disabled_option_says_which_rule_forbids_it_and_why(engine: ModuleType) -> None:
    """Over a seeded game: every disabled option names a rule of the rules and a reason, and
    the move it would make is refused; the kinds the phase has but no listed move makes are
    offered disabled (nothing is left out of the first choice)."""
    seen = 0
    for g in _states(engine, 3, (), 7, 3):
        kinds = engine.options(g)
        for option in kinds.options:
            if option.enabled:
                continue
            seen += 1
            assert option.rule in engine.RULE_TEXT and option.reason, option
            assert engine.explain_move(g, engine.Move(option.value, g.actor)) is not None
        # one level down: a field's disabled values, refused with the rule's words
        for kind in [o.value for o in kinds.options if o.enabled]:
            partial: dict[str, Any] = {"kind": kind}
            choice = engine.options(g, partial)
            while choice.field is not None:
                for option in choice.options:
                    if not option.enabled and choice.pick is None:
                        seen += 1
                        assert option.rule in engine.RULE_TEXT and option.reason, option
                        with pytest.raises(engine.IllegalMove) as refused:
                            engine.options(g, {**partial, choice.field: option.value})
                        assert refused.value.rule == option.rule
                first = next(o for o in choice.options if o.enabled)
                partial[choice.field] = first.value if choice.pick is None else \
                    _value(next(m for m in engine.legal_moves(g) if all(
                        _value(m, k) == v for k, v in partial.items())), choice.field)
                choice = engine.options(g, partial)
    assert seen > 20, "a game of three offers disabled options"


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_a_disabled_kind_says_why_not_which_choice_is_missing(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    """A kind of move no listed move makes is refused for a reason of the rules, not for the
    first of its choices left out ("choose a Political card"): the search looks past the
    choices a value would make, to the step that refuses every way on."""
    for g in _states(engine, players, variants, 71 + players, 2):
        for option in engine.options(g).options:
            if option.enabled:
                continue
            bare = engine._check(g, engine.Move(option.value, g.actor))
            assert not option.reason.startswith("not a move"), option
            if not isinstance(bare, engine._Unchosen) or option.reason != bare.reason:
                continue
            # the refusal of the choice left out stands only when each value of it the moves
            # list is refused so too (no value gets further)
            first = g.rs.moves[option.value].fields[0]
            values = {getattr(m, first) for m in engine.legal_moves(g)} - {None}
            for v in values:
                got = engine.explain_move(g, engine.Move(option.value, g.actor, **{first: v}))
                assert got is not None and got.reason == bare.reason, (option, first, v, got)


def _discarding(E: Any) -> Any:
    """A state of a seeded game in which the seat to move discards from its hand at the end
    of a period (one pick of several cards)."""
    rng = random.Random(3)
    g = E.new_game(3, (), 7)
    while g.phase != "over":
        moves = E.legal_moves(g)
        if len({len(m.cards) for m in moves}) > 2:
            return g
        g = E.apply_move(g, rng.choice(moves))
    raise AssertionError("no pick of several cards in the game")


def test_a_hand_discard_is_one_pick_of_a_set(engine: ModuleType) -> None:
    g = _discarding(engine)
    moves = engine.legal_moves(g)
    kind = moves[0].kind
    choice = engine.options(g, {"kind": kind})
    assert choice.field == "cards" and choice.pick is not None
    low, high = choice.pick
    assert (low, high) == (min(len(m.cards) for m in moves), max(len(m.cards) for m in moves))
    items = [o.value for o in choice.options if o.enabled]
    assert sorted(items) == sorted({c for m in moves for c in m.cards})
    assert len(choice.options) < len(moves)  # the cards, not every set of them
    sets = {tuple(sorted(m.cards)) for m in moves}
    every = sum(math.comb(len(items), k) for k in range(low, high + 1))
    assert (choice.sets is None) == (len(sets) == every)
    for move in moves:  # a set in an order no move lists: the move, or a choice of its orders
        flipped = tuple(reversed(move.cards))
        if any(m.cards == flipped for m in moves):
            continue
        built = engine.options(g, {"kind": kind, "cards": list(flipped)})
        if built.field is None:
            assert built.move == move
        else:  # the rules read which card leads: the orders the moves list, one to choose
            assert built.field == "cards" and built.pick is None
            assert list(move.cards) in [o.value for o in built.options]
            assert all(sorted(o.value) == sorted(move.cards) for o in built.options)
        assert engine.options(g, {"kind": kind, "cards": list(move.cards)}).move == move
    # a set no move takes (one card too many) is refused with the rules' reason
    with pytest.raises(engine.IllegalMove):
        engine.options(g, {"kind": kind, "cards": [*items, *items]})


def test_a_long_pick_given_is_not_sorted_once_per_listed_move(
    engine: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial move from the network with a pick of many items (a client's hand discard of a
    million cards) was sorted once for each listed move before it was refused: seconds of work
    for one request. A pick of another length than a move's is no match, unsorted."""
    g = _discarding(engine)
    kind = engine.legal_moves(g)[0].kind
    hand = g.players[g.actor].hand
    longest: list[int] = [0]
    plain_sorted = sorted

    def counted(items: Any, **kw: Any) -> Any:
        out = plain_sorted(items, **kw)
        longest[0] = max(longest[0], len(out))
        return out

    monkeypatch.setattr(engine, "sorted", counted, raising=False)
    with pytest.raises(engine.IllegalMove):
        engine.options(g, {"kind": kind, "cards": [hand[0]] * 1000})
    assert longest[0] < 1000
    assert engine.options(g, {"kind": kind, "cards": [hand[0]]}).field in (None, "cards")


def test_what_is_no_partial_move_is_refused(engine: ModuleType) -> None:
    g = engine.new_game(3, (), 2)
    with pytest.raises(engine.BadArgument, match="not a field of a move"):
        engine.options(g, {"kind": "visit", "colour": 1})
    with pytest.raises(engine.BadArgument, match="is to move"):
        engine.options(g, {"kind": "visit", "player": (g.actor + 1) % 3})
    with pytest.raises(engine.BadArgument, match="is to move"):
        engine.options(g, {"kind": "visit", "player": bool(g.actor)} if g.actor < 2 else
                       {"kind": "visit", "player": 1.0})
    for bad in ({1, 2}, float("nan"), object()):
        with pytest.raises(engine.BadArgument, match="no JSON value"):
            engine.options(g, {"kind": "visit", "card": bad})
    with pytest.raises(engine.BadArgument, match="mapping"):
        engine.options(g, ["visit"])  # type: ignore[arg-type]
    with pytest.raises(engine.IllegalMove):
        engine.options(g, {"kind": "no-such-kind"})
    with pytest.raises(engine.IllegalMove):
        engine.options(g, {"kind": engine.legal_moves(g)[0].kind, "card": -1})
    with pytest.raises(engine.BadArgument, match="moves of its own seat"):
        engine.options(engine.view(g, (g.actor + 1) % 3))


def test_a_choice_is_json(engine: ModuleType) -> None:
    g = engine.new_game(2, (), 9)
    move = engine.legal_moves(g)[-1]
    partial: dict[str, Any] = {}
    while True:
        choice = engine.options(g, partial)
        data = choice.to_json()
        assert data["field"] == choice.field
        assert all(set(o) in ({"value", "words", "enabled"},
                              {"value", "words", "enabled", "rule", "reason"})
                   for o in data["options"])
        if choice.field is not None:
            assert data["label"] and all(o["words"] for o in data["options"])
        if choice.field is None:
            assert engine.Move.from_json(data["move"]) == move
            break
        partial[choice.field] = _value(move, choice.field)
