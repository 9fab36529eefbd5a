"""A Game changed by hand (a field set to a value apply_move never makes) is refused in words:
every entry point raises `StateError` naming the field, as `from_json` refuses such a save,
never a bare `TypeError` / `KeyError` / `AttributeError` from inside the engine; the state is
left as it was. A state the saved-game checks accept is played as before."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

HOSTILE = [None, -1, "x", [], {}, (), 1.5]
REFUSED_TYPES = ("IllegalMove", "StateError", "BadArgument")


def _mid_game(E: Any, players: int, seed: int) -> Any:
    rng = random.Random(f"hand:{seed}")
    g = E.new_game(players, (), seed)
    for _ in range(rng.randrange(5, 90)):
        moves = E.legal_moves(g)
        if not moves:
            break
        g = E.apply_move(g, rng.choice(moves))
    return g


def _calls(E: Any, g: Any, listed: list[Any]) -> list[tuple[str, Any]]:
    return [
        ("legal_moves", lambda: E.legal_moves(g)),
        ("successors", lambda: E.successors(g)),
        ("apply_move", lambda: [E.apply_move(g, m) for m in listed[:2]]),
        ("explain_move", lambda: [E.explain_move(g, m) for m in listed[:2]]),
        ("final_scores", lambda: E.final_scores(g)),
        ("final_totals", lambda: E.final_totals(g)),
        ("ranking", lambda: E.ranking(g)),
        ("dumps", lambda: E.dumps(g)),
        ("check_invariants", lambda: E.check_invariants(g)),
    ]


def _fields(obj: Any, names: Any) -> list[str]:
    return [repr(getattr(obj, n)) for n in names if n != "players"]


@pytest.mark.parametrize("players", [2, 4])
def test_a_field_changed_by_hand_is_a_state_error(engine: Any, players: int) -> None:
    E = engine
    base = _mid_game(E, players, players)
    listed = E.legal_moves(base)
    refused = 0
    for who in ("game", "player"):
        names = [n for n in E._GAME_FIELDS if n != "players"] if who == "game" \
            else list(E._PLAYER_FIELDS)
        for name in names:
            for bad in HOSTILE:
                g = E.from_json(E.to_json(base))
                obj = g if who == "game" else g.players[0]
                setattr(obj, name, bad)
                before = (_fields(g, E._GAME_FIELDS), [_fields(p, E._PLAYER_FIELDS)
                                                       for p in g.players])
                for entry, call in _calls(E, g, listed):
                    try:
                        call()
                    except Exception as exc:  # which ones escape is the test
                        assert type(exc).__name__ in REFUSED_TYPES, (
                            f"{entry} of a state with {who}.{name} = {bad!r} raised "
                            f"{type(exc).__name__}: {exc}")
                        if type(exc).__name__ == "StateError":
                            refused += 1
                            assert exc.path.startswith("$"), exc
                after = (_fields(g, E._GAME_FIELDS), [_fields(p, E._PLAYER_FIELDS)
                                                      for p in g.players])
                assert after == before, f"{who}.{name} = {bad!r}: the state changed"
    assert refused > 0


def test_the_refusal_names_the_field(engine: Any) -> None:
    E = engine
    g = E.from_json(E.to_json(_mid_game(E, 3, 7)))
    g.piles = None
    with pytest.raises(E.StateError) as info:
        E.legal_moves(g)
    assert info.value.path == "$.piles" and "not a state the engine can play" in str(info.value)
    g = E.from_json(E.to_json(_mid_game(E, 3, 7)))
    g.variants = "x"
    with pytest.raises(E.StateError) as info:
        E.apply_move(g, E.legal_moves(_mid_game(E, 3, 7))[0])
    assert info.value.path == "$.variants"


class _Odd:
    """A value no saved game holds (not even JSON)."""


@pytest.mark.parametrize("change", ["object", "holds-itself", "variants"])
def test_what_json_cannot_hold_and_all_cards_are_refused_too(engine: Any, change: str) -> None:
    """An object set into a field made `dumps` raise TypeError from json (to_json returned
    it as plain data); a list that holds itself made `to_json` and `dumps` raise
    RecursionError; `all_cards` of a changed state raised whatever its walk met (here a
    KeyError for variants that name no rule set). Each is a StateError now."""
    E = engine
    g = E.from_json(E.to_json(_mid_game(E, 3, 5)))
    if change == "object":
        g.players[1].hand = [_Odd()]
    elif change == "holds-itself":
        g.discard.append(g.discard)
    else:
        g.variants = ["no-such-variant"]
    for entry in ("all_cards", "to_json", "dumps", "check_invariants", "legal_moves"):
        try:
            getattr(E, entry)(g)
        except Exception as exc:  # which ones escape is the test
            assert type(exc).__name__ == "StateError", f"{entry}: {type(exc).__name__}: {exc}"
            assert exc.path.startswith("$"), exc
            if change == "object" and entry in ("to_json", "dumps"):  # the value's own path
                assert exc.path == "$.players[1].hand[0]", exc
        else:
            assert entry in ("check_invariants", "legal_moves", "all_cards"), entry


NOT_NUMBERS = [math.nan, math.inf, -math.inf]
# (where, how to put the value there, the path the refusal names)
PLACES: list[tuple[str, Any, str]] = [
    ("a number of the game", lambda g, x: setattr(g, "round", x), "$.round"),
    ("a number of a player", lambda g, x: setattr(g.players[1], "reis", x), "$.players[1].reis"),
    ("an item of a list", lambda g, x: g.players[0].hand.append(x), "$.players[0].hand[{n}]"),
    ("an entry of a table", lambda g, x: g.favors.__setitem__(next(iter(g.favors)), x),
     "$.favors.{key}"),
]


@pytest.mark.parametrize("bad", NOT_NUMBERS, ids=repr)
@pytest.mark.parametrize("place", PLACES, ids=[p[0] for p in PLACES])
def test_a_float_that_is_no_number_is_refused_by_to_json_and_dumps(
    engine: Any, place: tuple[str, Any, str], bad: float
) -> None:
    """NaN or an infinity put into a live Game: `dumps` wrote `NaN` / `Infinity` (no JSON, and
    `loads` refused the save it made) and `to_json` handed it on. Both refuse it now with
    StateError at the field's path, and leave the state as it was."""
    E = engine
    g = E.from_json(E.to_json(_mid_game(E, 3, 11)))
    _, put, path = place
    path = path.format(n=len(g.players[0].hand), key=next(iter(g.favors)))
    put(g, bad)
    before = (_fields(g, E._GAME_FIELDS), [_fields(p, E._PLAYER_FIELDS) for p in g.players])
    for entry in ("to_json", "dumps"):
        with pytest.raises(E.StateError) as info:
            getattr(E, entry)(g)
        assert info.value.path == path, (entry, str(info.value))
        assert "not a state the engine can play" in str(info.value)
        assert repr(bad) in str(info.value)
    after = (_fields(g, E._GAME_FIELDS), [_fields(p, E._PLAYER_FIELDS) for p in g.players])
    assert after == before


def test_a_finite_float_still_dumps_as_json_that_loads_refuses(engine: Any) -> None:
    """A finite float is JSON: dumps writes it (the saved-game checks are loads' to make, as
    for any other hand-changed value), and loads refuses it at its path."""
    E = engine
    g = E.from_json(E.to_json(_mid_game(E, 3, 11)))
    g.players[1].reis = 1.5
    text = E.dumps(g)
    json.loads(text)  # valid JSON
    with pytest.raises(E.StateError) as info:
        E.loads(text)
    assert info.value.path == "$.players[1].reis"
