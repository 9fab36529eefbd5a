"""The invariants of rules/state.yaml (`invariants:`), compiled into each rule set's check.

`check_invariants` reports the same problems, in the same order, as the frozen engine (whose
checks were Python) on states broken in each way an invariant catches, one at a time and
several at once; `all_cards` lists the cards where the frozen engine finds them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, load_engine, without_church

FROZEN = ROOT / "tests" / "oracle" / "frozen_engine.py"

Breaker = Callable[[Any, random.Random], None]


@pytest.fixture(scope="module")
def frozen() -> ModuleType:
    return load_engine(FROZEN, "_frozen_lisboa_engine_inv")


def _seat(g: Any, rng: random.Random) -> Any:
    return g.players[rng.randrange(len(g.players))]


def _any_card(g: Any) -> int:
    for pile in g.piles.values():
        if pile:
            return int(pile[-1])
    return int(next(c for p in g.players for c in p.hand))


def _lose_card(g: Any) -> None:
    """A card taken out of the game: from the display, else the discard pile or a hand."""
    for where in (*g.piles.values(), g.discard, g.box, *(p.hand for p in g.players)):
        if where:
            where.pop()
            return


def _noble(g: Any, rng: random.Random) -> str:
    return str(rng.choice(sorted(g.favors)))


BREAKERS: dict[str, Breaker] = {
    "negative money": lambda g, r: setattr(_seat(g, r), "reis", -1),
    "negative score": lambda g, r: setattr(_seat(g, r), "wigs", -3),
    "influence above": lambda g, r: setattr(_seat(g, r), "influence", 11),
    "influence below": lambda g, r: setattr(_seat(g, r), "influence", -1),
    "negative good": lambda g, r: _seat(g, r).goods.__setitem__("gold", -1),
    "negative marker": lambda g, r: _seat(g, r).markers.__setitem__(_noble(g, r), -1),
    "negative cubes": lambda g, r: setattr(_seat(g, r), "rubble_cubes", -2),
    "too many stores": lambda g, r: _seat(g, r).stores.__setitem__("books", 9),
    "negative store": lambda g, r: _seat(g, r).stores.__setitem__("cloth", -1),
    "too many sets": lambda g, r: setattr(_seat(g, r), "rubble_sets", 6),
    "markers left off": lambda g, r: setattr(_seat(g, r), "markers_left", 0),
    "marker placed": lambda g, r: _seat(g, r).markers.__setitem__(_noble(g, r), 1),
    "pending marker": lambda g, r: g.pending_markers.append(r.randrange(len(g.players))),
    "official lost": lambda g, r: setattr(_seat(g, r), "officials", _seat(g, r).officials - 1),
    "official in office": lambda g, r: g.offices[_noble(g, r)].__setitem__(
        _seat(g, r).color, 1 + g.offices[_noble(g, r)].get(_seat(g, r).color, 0)
    ),
    "card twice": lambda g, r: g.discard.append(_any_card(g)),
    "card lost": lambda g, r: _lose_card(g),
    "decree twice": lambda g, r: _seat(g, r).decrees.append(g.decree_deck[0]),
    "decree lost": lambda g, r: g.decree_deck.pop(),
    "plan lost": lambda g, r: g.plan_supply.pop(),
    "plan twice": lambda g, r: _seat(g, r).completed_plans.append(g.plan_supply[-1]),
    "favor negative": lambda g, r: g.favors.__setitem__(_noble(g, r), -1),
    "favor extra": lambda g, r: _seat(g, r).royal_favors.append(_noble(g, r)),
    "favor lost": lambda g, r: [p.royal_favors.clear() for p in g.players] and None,
}


def _states(E: Any, seed: int, players: int, variants: tuple[str, ...]) -> list[Any]:
    """A few states of one seeded random game (its start, the middle, further on)."""
    g = E.new_game(players, variants=variants, seed=seed)
    rng = random.Random(seed)
    out = [g]
    for n in range(60):
        if g.phase == "over":
            break
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        if n % 20 == 19:
            out.append(g)
    return out


def _twin(E: Any, F: Any, g: Any) -> tuple[Any, Any]:
    """The same state in both engines, as objects that can be broken freely (the frozen one
    without the Church track's fields, which it does not know)."""
    return E.from_json(E.to_json(g)), F.from_json(without_church(E.to_json(g)))


@pytest.mark.parametrize("broken", sorted(BREAKERS))
@pytest.mark.parametrize("setup", [(2, ()), (3, ()), (4, ("queen",))])
def test_each_broken_state_reports_what_the_frozen_engine_reports(
    engine: ModuleType, frozen: ModuleType, broken: str, setup: tuple[int, tuple[str, ...]]
) -> None:
    players, variants = setup
    # (seeds 8 + players: with the Church track, the games of 7 + players no longer reach a
    # state where every breaker shows)
    for i, g in enumerate(_states(engine, 8 + players, players, variants)):
        a, b = _twin(engine, frozen, g)
        BREAKERS[broken](a, random.Random(i))
        BREAKERS[broken](b, random.Random(i))
        got, want = engine.check_invariants(a), frozen.check_invariants(b)
        assert want, f"{broken}: the frozen engine finds nothing wrong (a weak breaker)"
        assert got == want, f"{broken}, state {i}"


@pytest.mark.parametrize("seed", range(6))
def test_several_problems_are_reported_in_the_same_order(
    engine: ModuleType, frozen: ModuleType, seed: int
) -> None:
    rng = random.Random(seed)
    players = 2 + seed % 3
    for i, g in enumerate(_states(engine, seed, players, ())):
        a, b = _twin(engine, frozen, g)
        for name in rng.sample(sorted(BREAKERS), 4):
            state = rng.random()
            BREAKERS[name](a, random.Random(state))
            BREAKERS[name](b, random.Random(state))
        assert engine.check_invariants(a) == frozen.check_invariants(b), f"seed {seed} state {i}"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_all_cards_lists_the_cards_where_the_frozen_engine_does(
    engine: ModuleType, frozen: ModuleType, players: int
) -> None:
    for g in _states(engine, players, players, ()):
        a, b = _twin(engine, frozen, g)
        assert engine.check_invariants(a) == frozen.check_invariants(b) == []
        assert engine.all_cards(a) == frozen.all_cards(b)
        a.box.append(a.discard.pop() if a.discard else a.players[0].hand.pop())
        b.box.append(b.discard.pop() if b.discard else b.players[0].hand.pop())
        assert engine.all_cards(a) == frozen.all_cards(b)
