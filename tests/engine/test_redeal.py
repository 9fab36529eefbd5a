"""`redeal(game, seat, rng)` (issue 36): a whole game that `seat` could be in, dealt from the
game itself without the view's JSON, for the agents' inner loops in the engine.

It is the game `determinize(view(game, seat), rng)` deals, drawn alike from the same generator
state (the same places, the same ids in the same order), so it keeps determinize's promises: its
view for `seat` is the game's, its invariants hold, it plays on to the end; it depends only on
what `seat` sees (a game changed where the seat cannot see is redealt into the same game); the
game it is given is left as it was. Checked on every rule set and player count.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import setups, sized


def _states(
    E: Any, players: int, variants: tuple[str, ...], seed: int, every: int
) -> Iterator[Any]:
    """States of a seeded random game, every `every` moves, the finished one last."""
    rng = random.Random(seed)
    g = E.new_game(players, variants, seed)
    n = 0
    while g.phase != "over":
        if n % every == 0:
            yield g
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1
    yield g


def hidden_change(E: Any, g: Any) -> Any:
    """`g` changed only where the seat to move cannot see: each undealt deck in the reverse
    order, the first cards of two other players' hands swapped, another player's first card
    swapped with the box's first, another seed. A game `from_json` accepts."""
    data = E.to_json(g)
    for deck in data["reserve"].values():
        deck.reverse()
    others = [p for i, p in enumerate(data["players"]) if i != g.actor and p["hand"]]
    if len(others) >= 2:
        others[0]["hand"][0], others[1]["hand"][0] = others[1]["hand"][0], others[0]["hand"][0]
    if others and data["box"]:
        others[0]["hand"][0], data["box"][0] = data["box"][0], others[0]["hand"][0]
    data["seed"] += 1
    return E.from_json(data)


SETUPS_CASES = pytest.mark.parametrize("setup", range(6))


def _setup(E: Any, i: int) -> tuple[int, tuple[str, ...]]:
    found = setups(E)
    assert len(found) >= 6  # 2 to 4 players, with and without the Queen: 4 rule sets
    return found[i]


@SETUPS_CASES
def test_redeal_deals_the_game_determinize_deals(engine: Any, setup: int) -> None:
    """For the seat to move, another seat and a spectator: the same game as determinize of
    the view, from the same generator state, leaving the generators in the same state; its
    view is the game's, its invariants hold."""
    E = engine
    players, variants = _setup(E, setup)
    n = 0
    for g in _states(E, players, variants, 40 + setup, sized(9, 2)):
        before = E.to_json(g)
        for seat in (g.actor, (g.actor + 1) % players, None):
            a, b = random.Random(n), random.Random(n)
            dealt = E.redeal(g, seat, a)
            assert dealt == E.determinize(E.view(g, seat), b)
            assert a.random() == b.random()
            assert E.view(dealt, seat) == E.view(g, seat)
            assert E.check_invariants(dealt) == []
            n += 1
        assert E.to_json(g) == before  # the game it was given is left alone
    assert n > 10


@SETUPS_CASES
def test_a_redealt_game_is_new_and_deals_what_the_seat_cannot_see(engine: Any, setup: int) -> None:
    """The hidden parts are dealt again (another seed, the decks in another order), the game
    shares no list with the one given, and it plays legal moves to the end."""
    E = engine
    players, variants = _setup(E, setup)
    g = list(_states(E, players, variants, 50 + setup, 15))[2]
    dealt = E.redeal(g, g.actor, random.Random(1))
    assert dealt is not g
    assert dealt.seed != g.seed
    assert dealt.reserve != g.reserve  # the undealt decks: dealt again
    assert dealt.players[g.actor].hand == g.players[g.actor].hand  # its own hand: seen
    dealt.players[g.actor].hand.append(-1)
    for deck in dealt.reserve.values():
        deck.clear()
    assert -1 not in g.players[g.actor].hand and any(g.reserve.values())
    dealt = E.redeal(g, g.actor, random.Random(1))
    rng = random.Random(2)
    while dealt.phase != "over":
        dealt = E.apply_move(dealt, rng.choice(E.legal_moves(dealt)))
    assert E.check_invariants(dealt) == []


@SETUPS_CASES
def test_redeal_depends_only_on_what_the_seat_sees(engine: Any, setup: int) -> None:
    """Two games the seat to move sees alike (hands swapped between the others and with the
    box, the decks reversed, another seed) are redealt into the same game by the same
    generator state; a game the seat sees otherwise is not."""
    E = engine
    players, variants = _setup(E, setup)
    changed = seen_changed = 0
    for i, g in enumerate(_states(E, players, variants, 60 + setup, sized(11, 3))):
        if g.phase == "over":
            continue
        other = hidden_change(E, g)
        assert E.view(other, g.actor) == E.view(g, g.actor)
        changed += other != g
        assert E.redeal(g, g.actor, random.Random(i)) == E.redeal(other, g.actor, random.Random(i))
        # what the seat sees, changed: its own hand
        data = E.to_json(g)
        data["players"][g.actor]["hand"].reverse()
        seen = E.from_json(data)
        if E.view(seen, g.actor) != E.view(g, g.actor):
            seen_changed += 1
            assert E.redeal(seen, g.actor, random.Random(i)) != E.redeal(
                g, g.actor, random.Random(i)
            )
    assert changed > 3 and seen_changed > 3


def test_redeal_through_the_view_gives_the_same_game(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule set whose hidden fields `redeal` cannot deal in place (none of today's) is dealt
    through the view: the same game."""
    E = engine
    g = list(_states(E, 3, (), 70, 10))[3]
    fast = E.redeal(g, g.actor, random.Random(3))
    assert E._redeals_in_place(g.rs)
    monkeypatch.setitem(E._REDEALS, g.rs.key, False)
    assert E.redeal(g, g.actor, random.Random(3)) == fast


@pytest.mark.parametrize("seat", [-1, 3, 1.0, "0", True])
def test_redeal_refuses_a_seat_the_game_has_not(engine: Any, seat: Any) -> None:
    g = engine.new_game(3, (), 1)
    with pytest.raises(engine.BadArgument if hasattr(engine, "BadArgument") else ValueError):
        engine.redeal(g, seat, random.Random(0))


def test_redeal_takes_a_game(engine: Any) -> None:
    g = engine.new_game(3, (), 1)
    with pytest.raises(ValueError, match="not a Game"):
        engine.redeal(engine.view(g, 0), 0, random.Random(0))


def test_the_compiled_engine_redeals_the_same_games(engine: Any, compiled_engine: Any) -> None:
    """`redeal` compiled with mypyc deals the pure engine's games from the same generator
    state, on every rule set."""
    C = compiled_engine
    assert not str(C.__file__).endswith(".py")
    n = 0
    for players, variants in setups(engine):
        for g in _states(engine, players, variants, 110 + players, sized(17, 4)):
            c = C.from_json(engine.to_json(g))
            for seat in (g.actor, None):
                pure = engine.redeal(g, seat, random.Random(n))
                assert C.to_json(C.redeal(c, seat, random.Random(n))) == engine.to_json(pure)
                n += 1
    assert n > 20


def test_the_deals_shuffle_as_random_does(engine: Any) -> None:
    """The runtime's own shuffle (a loop a compiled engine runs compiled) draws what
    `random.Random.shuffle` draws and leaves the generator in the same state; a generator of
    another kind shuffles itself."""
    for n in range(0, 120):
        ours, theirs = list(range(n)), list(range(n))
        a, b = random.Random(n), random.Random(n)
        engine._shuffle(a, ours)
        b.shuffle(theirs)
        assert ours == theirs and a.getstate() == b.getstate()

    class Reversing(random.Random):
        def shuffle(self, x: Any) -> None:
            x.reverse()

    items = [1, 2, 3]
    engine._shuffle(Reversing(0), items)
    assert items == [3, 2, 1]
