"""The engine trusts no move and no saved game (issue 11, items 5, 6 and the last of 8).

- A move is one of `legal_moves(game)`, compared by value with the types of the values (`True`
  is not card 1), or `explain_move` / `apply_move` name the rule that forbids it (IllegalMove);
  a refused move leaves the game unchanged. `Move.from_json` refuses a move of the wrong shape
  with StateError (the path of the bad value).
- `loads` / `from_json` refuse, with StateError(path, message), a save the engine cannot play:
  one that could never end, that has no legal move, or in which a legal move breaks the
  invariants; a save longer than `max_save_size()` is refused before it is parsed; `score`
  refuses a FIFO, a device or a huge file.
- Every public function checks its seat, id and count arguments (BadArgument, a ValueError).

Every test runs on the pure engine and on the engine compiled with mypyc, whose classes check
the declared type of a Move's field when the caller makes the move: `Move("portfolio", 0,
card=[1])` raises TypeError there, at the caller's own line (`forge`); every move it lets
through is judged as the pure engine judges it.
"""

from __future__ import annotations

import collections
import copy
import itertools
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ENGINES, ROOT, is_compiled, pure_or_compiled, set_hand

from tools import fuzz


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest, engine: Any) -> Any:
    return pure_or_compiled(request, engine)


def replace(E: Any, move: Any, **changes: Any) -> Any:
    """The move with some fields changed (`dataclasses.replace` for the engine's plain
    classes; a compiled class has no `__slots__` to read its fields from)."""
    return type(move)(**{**{n: getattr(move, n) for n in E._MOVE_FIELDS}, **changes})


def forge(E: Any, make: Callable[[], Any]) -> Any | None:
    """The move `make()` makes, or None when the compiled engine's Move refused it as it was
    made (TypeError: a value of another type than the field's), which changes nothing."""
    try:
        return make()
    except TypeError as exc:
        assert is_compiled(E) and "object expected" in str(exc), exc
        return None


def _reach(E: Any, want: Callable[[Any], bool], players: int = 3, seeds: int = 40) -> Any:
    """The first state of seeded random games for which `want` holds."""
    for seed in range(seeds):
        g = E.new_game(players, (), seed)
        rng = random.Random(f"trust:{seed}")
        while True:
            if want(g):
                return g
            if g.phase == "over":
                break
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    raise AssertionError("no such state")  # pragma: no cover


@pytest.fixture(scope="module")
def mid(engine: Any) -> Any:
    """An action-phase state of the first period, a few rounds in."""
    return _reach(engine, lambda g: g.phase == "action" and g.round == 3)


@pytest.fixture(scope="module")
def late(engine: Any) -> Any:
    """An action-phase state of the last period, before the end of the game is triggered."""
    return _reach(
        engine, lambda g: g.phase == "action" and g.period == 2 and g.game_end_round is None
    )


@pytest.fixture(scope="module")
def discarding(engine: Any) -> Any:
    """A period-end hand discard with at least two cards in the discarding hand."""
    return _reach(engine, lambda g: g.phase == "hand-discard" and len(g.players[g.actor].hand) >= 2)


# --- forged moves: the shape -------------------------------------------------------------------

MALFORMED: list[Any] = [
    {"kind": "portfolio", "player": 0, "card": [1]},
    {"kind": "portfolio", "player": 0, "card": {"n": 1}},
    {"kind": "portfolio", "player": 0, "card": True},
    {"kind": "portfolio", "player": 0, "card": 1.0},
    {"kind": "portfolio", "player": 0, "card": "1"},
    {"kind": "portfolio", "player": True},
    {"kind": "portfolio", "player": "0"},
    {"kind": "portfolio", "player": None},
    {"kind": 1, "player": 0},
    {"player": 0},
    {"kind": "pass"},
    {"kind": "hand-discard", "player": 0, "cards": [True]},
    {"kind": "hand-discard", "player": 0, "cards": [1, [2]]},
    {"kind": "hand-discard", "player": 0, "cards": 3},
    {"kind": "visit", "player": 0, "card": 1, "decrees": "decree-1"},
    {"kind": "visit", "player": 0, "card": 1, "noble_action": 1},
    {"kind": "visit", "player": 0, "card": 1, "noble_action": None},
    {"kind": "visit", "player": 0, "card": 1, "business": ["gold"]},
    {"kind": "draw", "player": 0, "pile": 0},
    {"kind": "pass", "player": 0, "unknown": 1},
    [],
    "pass",
    None,
    7,
]


@pytest.mark.parametrize("data", MALFORMED, ids=[json.dumps(d)[:40] for d in MALFORMED])
def test_from_json_refuses_a_malformed_move(engine: Any, data: Any) -> None:
    with pytest.raises(engine.StateError) as exc:
        engine.Move.from_json(data)
    assert exc.value.path.startswith("$")


def test_from_json_reads_every_legal_move_back(engine: Any, mid: Any, discarding: Any) -> None:
    for g in (mid, discarding):
        for move in engine.legal_moves(g):
            back = engine.Move.from_json(json.loads(json.dumps(move.to_json())))
            assert back == move and engine.explain_move(g, back) is None


# --- forged moves: the types -------------------------------------------------------------------

TWISTS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "card as a list": lambda m: {"card": [m.card]},
    "card as a float": lambda m: {"card": float(m.card)},
    "card as a string": lambda m: {"card": str(m.card)},
    "player as a bool": lambda m: {"player": bool(m.player)},
    "player as a float": lambda m: {"player": float(m.player)},
    "kind as bytes": lambda m: {"kind": m.kind.encode()},
    "decrees as a list": lambda m: {"decrees": list(m.decrees)},
    "noble_action as an int": lambda m: {"noble_action": int(m.noble_action)},
    "a huge card": lambda m: {"card": 10**40},
    "a negative card": lambda m: {"card": -m.card},
    "an unknown state action": lambda m: {"state_action": "cardinal"},
    "a good on a portfolio move": lambda m: {"good": "gold"},
    "an unknown kind": lambda m: {"kind": "steal"},
    "another seat": lambda m: {"player": m.player + 1},
    "a seat out of range": lambda m: {"player": 99},
}


@pytest.mark.parametrize("twist", sorted(TWISTS))
def test_a_twisted_legal_move_is_illegal_and_changes_nothing(
    engine: Any, mid: Any, twist: str
) -> None:
    legal = next(m for m in engine.legal_moves(mid) if m.kind == "portfolio")
    move = forge(engine, lambda: replace(engine, legal, **TWISTS[twist](legal)))
    if move is None:
        return
    if is_compiled(engine) and twist == "player as a bool":
        # the compiled Move keeps a bool given for its declared int as that int: it is the
        # listed move itself, made for seat 0 or 1
        assert type(move.player) is int and move == legal
        assert engine.explain_move(mid, move) is None
        return
    before = engine.dumps(mid)
    why = engine.explain_move(mid, move)
    assert isinstance(why, engine.IllegalMove) and why.rule in engine.RULE_TEXT
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(mid, move)
    assert exc.value.rule == why.rule
    assert engine.dumps(mid) == before


@pytest.mark.parametrize("seat", [0, 1])
def test_true_is_not_card_1(engine: Any, fresh: Any, seat: int) -> None:
    g = fresh(3)
    g.actor = g.current = seat
    set_hand(g, seat, [1, *[c for c in g.players[seat].hand if c != 1][:4]])
    g = engine.from_json(engine.to_json(g))
    assert engine.explain_move(g, engine.Move("portfolio", seat, card=1)) is None
    for forged in (
        engine.Move("portfolio", seat, card=True),
        engine.Move("discard", seat, card=True),
        engine.Move("portfolio", bool(seat), card=1) if seat else None,
    ):
        if forged is None:
            continue
        if is_compiled(engine) and type(forged.card) is int:
            # the compiled Move keeps `True` given for its declared int `player` as 1: the
            # move made is seat 1's own
            assert type(forged.player) is int and engine.explain_move(g, forged) is None
            continue
        with pytest.raises(engine.IllegalMove):
            engine.apply_move(g, forged)
    after = engine.apply_move(g, engine.Move("portfolio", seat, card=1))
    engine.loads(engine.dumps(after))  # the game still saves and loads


@pytest.mark.parametrize("where", ["kept list", "listed again"])
def test_a_listed_move_changed_in_place_is_judged_by_its_new_fields(
    engine: Any, mid: Any, where: str
) -> None:
    """Moves are plain objects: a caller that takes a move of the list and changes one of its
    fields holds another move. explain_move said it was legal (the list it kept still held
    that same object), while apply_move refused it."""
    hand = mid.players[mid.actor].hand
    other = next(c for c in engine.all_cards(mid) if c not in hand)
    moves = engine.legal_moves(mid)
    assert len(moves) >= 8  # long enough a list to be kept
    if where == "listed again":  # the list kept after one apply_move of the state
        engine.apply_move(mid, moves[-1])
    move = next(m for m in moves if m.kind == "portfolio")
    move.card = other
    assert move not in engine.legal_moves(engine.from_json(engine.to_json(mid)))
    moves = engine.legal_moves(mid)  # hold the changed move in the kept list again
    move = next(m for m in moves if m.kind == "portfolio")
    move.card = other
    before = engine.dumps(mid)
    why = engine.explain_move(mid, move)
    assert isinstance(why, engine.IllegalMove)
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(mid, move)
    assert exc.value.rule == why.rule
    assert engine.dumps(mid) == before




def test_a_listed_move_with_a_field_deleted_is_refused_in_words(engine: Any, mid: Any) -> None:
    """`del move.card` on a listed move (a field that may be None): the pure engine read no
    value as None, then met the missing attribute comparing the move with the kept list, and
    raised StateError blaming the rules or the compiler. It is refused as no Move (IllegalMove,
    BadArgument for its words). The compiled engine's classes refuse the `del` itself."""
    move = next(m for m in engine.legal_moves(mid) if m.kind == "portfolio")
    try:
        del move.card
    except AttributeError:
        assert is_compiled(engine)
        return
    before = engine.dumps(mid)
    why = engine.explain_move(mid, move)
    assert isinstance(why, engine.IllegalMove) and "the move has no card" in why.reason
    with pytest.raises(engine.IllegalMove, match="the move has no card"):
        engine.apply_move(mid, move)
    with pytest.raises(engine.BadArgument, match="the move has no card"):
        engine.move_words(mid, move)
    assert engine.dumps(mid) == before
# A compulsory choice left empty, in an action whose refusal words show the value chosen
# ("card {card} is not in your hand"): the refusal names what is missing, in the words of its
# kind (rules/state.yaml `kinds: text`), never "card None is not in your hand".
LEFT_EMPTY = {"portfolio": "card", "trade": "card", "discard": "card", "draw": "pile"}


@pytest.mark.parametrize("kind", sorted(LEFT_EMPTY))
def test_a_compulsory_choice_left_empty_is_refused_in_words(engine: Any, kind: str) -> None:
    field = LEFT_EMPTY[kind]
    g = _reach(engine, lambda g: any(m.kind == kind for m in engine.legal_moves(g)))
    legal = next(m for m in engine.legal_moves(g) if m.kind == kind)
    move = replace(engine, legal, **{field: None})
    before = engine.dumps(g)
    why = engine.explain_move(g, move)
    assert isinstance(why, engine.IllegalMove)
    words = {"card": "a Political card", "pile": "a display pile"}[field]
    assert why.reason == f"choose {words}"
    assert "None" not in str(why)
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(g, move)
    assert (exc.value.rule, exc.value.reason) == (why.rule, why.reason)
    assert engine.dumps(g) == before


# --- apply_move accepts exactly what legal_moves lists -------------------------------------------

HAND_DISCARDS: dict[str, Callable[[list[int], list[int]], tuple[int, ...]]] = {
    "a card twice": lambda hand, _: (hand[0], hand[0]),
    "a card of another hand": lambda hand, other: (other[0],),
    "a card of another hand after one's own": lambda hand, other: (hand[0], other[0]),
    "a card not in the game": lambda hand, _: (hand[0], 100_000),
    "a negative card": lambda hand, _: (-hand[0],),
}


@pytest.mark.parametrize("forgery", sorted(HAND_DISCARDS))
def test_the_hand_discard_accepts_only_listed_discards(
    engine: Any, discarding: Any, forgery: str
) -> None:
    g = discarding
    hand = sorted(g.players[g.actor].hand)
    other = [c for p in g.players for c in p.hand if c not in hand] or list(g.discard)
    cards = HAND_DISCARDS[forgery](hand, other)
    move = engine.Move("hand-discard", g.actor, cards=cards)
    assert move not in engine.legal_moves(g)
    before = engine.dumps(g)
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(g, move)
    assert exc.value.rule == "period-end.hand-discard"
    assert engine.dumps(g) == before
    for listed in engine.legal_moves(g):
        assert engine.explain_move(g, listed) is None


def test_forged_moves_against_many_states(engine: Any) -> None:
    """The fuzzer's move check (typed membership, unchanged state, explain = apply) over a
    fixed set of forgeries of every legal move of a few states."""
    states = fuzz.engine_states(engine, 5, games=2)[::7]
    values: list[Any] = [True, False, None, -1, 10**30, "x", (), (1,), ("x",), 1.5]
    count = 0
    for g in states:
        for move in engine.legal_moves(g)[:6]:
            for name in engine._MOVE_FIELDS:
                for value in values:
                    change = {name: value}
                    forged = forge(engine, lambda: replace(engine, move, **change))  # noqa: B023
                    if forged is None:
                        continue
                    before = engine.dumps(g)
                    listed = fuzz._move_key(engine, forged) in {
                        fuzz._move_key(engine, m) for m in engine.legal_moves(g)
                    }
                    why = engine.explain_move(g, forged)
                    assert (why is None) == listed, (forged, why)
                    assert engine.dumps(g) == before
                    count += 1
    assert count > 500


# --- saved games the engine cannot play ----------------------------------------------------------


def _player_count(d: dict[str, Any]) -> int:
    return len(d["players"])


def _full_hand_from_box(d: dict[str, Any]) -> None:
    hand = d["players"][0]["hand"]
    while len(hand) < 9:
        hand.append(d["box"].pop())


_ENGINE: list[Any] = []  # the engine, for the changes that read its tables

BROKEN: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "game end without a final round": (
        "mid",
        lambda d: d.update(game_end_round=d["round"], final_round=None),
    ),
    "final round without a game end": (
        "mid",
        lambda d: d.update(game_end_round=None, final_round=d["round"]),
    ),
    "final round not the rules' extra rounds": (
        "late",
        lambda d: d.update(game_end_round=d["round"], final_round=d["round"] + 4),
    ),
    "game end in a round to come": (
        "late",
        lambda d: d.update(game_end_round=d["round"] + 1, final_round=d["round"] + 2),
    ),
    "a game-end trigger fired, no game end": (
        "late",
        lambda d: d["fired"].append("game-end.display"),
    ),
    "a period trigger fired, no period end": (
        "mid",
        lambda d: d.update(fired=["period-end.rubble"], period_end_by=None),
    ),
    "a trigger of a later period fired": ("mid", lambda d: d.update(fired=["game-end.rubble"])),
    "refill with a full hand": ("mid", lambda d: d.update(phase="refill")),
    "refill with an empty display": (
        "mid",
        lambda d: (
            d.update(phase="refill"),
            d["players"][d["current"]]["hand"].pop(),
            [d["discard"].extend(p) or p.clear() for p in d["piles"].values()],
            d["discard"].append(d["players"][d["current"]]["hand"].pop()),
        ),
    ),
    "hand discard with nobody to discard": (
        "mid",
        lambda d: d.update(phase="hand-discard", discard_queue=[], period_end_by=0),
    ),
    "hand discard at a step that is no discard": ("discarding", lambda d: d.update(period_step=0)),
    "discard queue out of order": (
        "discarding",
        lambda d: d.update(discard_queue=list(reversed(range(_player_count(d))))),
    ),
    "discard queue in the action phase": ("mid", lambda d: d.update(discard_queue=[0])),
    "period step in the action phase": ("mid", lambda d: d.update(period_step=2)),
    "follow with no visit": ("mid", lambda d: d.update(phase="follow", follow_next=d["actor"])),
    "pending markers in the action phase": ("mid", lambda d: d.update(pending_markers=[0])),
    "a hand of nine cards": ("discarding", _full_hand_from_box),
    "a card duplicated": ("mid", lambda d: d["discard"].append(d["players"][0]["hand"][0])),
    "a card removed": ("mid", lambda d: d["players"][0]["hand"].pop()),
    "the actor out of range": ("mid", lambda d: d.update(actor=_player_count(d))),
    "a trigger fired twice": ("late", lambda d: d.update(fired=d["fired"] + d["fired"][:1])),
    "a period end pending in the last period": ("late", lambda d: d.update(period_end_by=0)),
    "a hand discard in the last period": ("discarding", lambda d: d.update(period=2)),
    "a display pile filled after the display was discarded": (
        "discarding",
        lambda d: _box_card_to_its_pile(_ENGINE[0], d),
    ),
    "a card in another Noble's pile": ("mid", lambda d: _move_top_card(d)),
    # hull sizes come from the rules' ships (review)
    "a Ship of a hull size no ship has": ("mid", lambda d: d["players"][0]["ships"].append(99)),
    "a Ship of a huge hull size": ("mid", lambda d: d["players"][1]["ships"].append(10**40)),
    "a Ship of hull size 5": ("late", lambda d: d["players"][0]["ships"].append(5)),
}


def _box_card_to_its_pile(E: Any, d: dict[str, Any]) -> None:
    card = d["box"].pop()
    d["piles"][E.RULESETS[tuple(d["variants"])].cards[card].type].append(card)


def _move_top_card(d: dict[str, Any]) -> None:
    full = [k for k, v in d["piles"].items() if v]
    src, dst = full[0], next(k for k in d["piles"] if k != full[0])
    d["piles"][dst].append(d["piles"][src].pop())


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_save_the_engine_cannot_play_is_refused(
    engine: Any, mid: Any, late: Any, discarding: Any, name: str
) -> None:
    _ENGINE[:] = [engine]
    base, change = BROKEN[name]
    data = copy.deepcopy(engine.to_json({"mid": mid, "late": late, "discarding": discarding}[base]))
    change(data)
    with pytest.raises(engine.StateError) as exc:
        engine.loads(json.dumps(data))
    assert exc.value.path.startswith("$")
    with pytest.raises(engine.StateError):
        engine.from_json(data)


_HUGE = 10**5000  # more digits than Python prints (4300): formatting it raises ValueError

HUGE_INTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "seed": lambda d: d.update(seed=_HUGE),
    "seed of 65 bits": lambda d: d.update(seed=2**64),
    "actor": lambda d: d.update(actor=_HUGE),
    "a bounded field": lambda d: d.update(treasury=_HUGE),
    "a negative bounded field": lambda d: d.update(treasury=-_HUGE),
    "a player's bounded field": lambda d: d["players"][0].update(influence=_HUGE),
    "a player's count": lambda d: d["players"][0].update(reis=_HUGE),
    "a card": lambda d: d["discard"].append(_HUGE),
}


@pytest.mark.parametrize("name", sorted(HUGE_INTS))
def test_a_save_with_an_integer_beyond_64_bits_is_refused(
    engine: Any, mid: Any, name: str
) -> None:
    """from_json of parsed data (an app's own JSON reader keeps big integers) crashed with
    ValueError (the message printed the number), or accepted a save that `dumps` could never
    write back."""
    data = copy.deepcopy(engine.to_json(mid))
    HUGE_INTS[name](data)
    with pytest.raises(engine.StateError) as exc:
        engine.from_json(data)
    assert exc.value.path.startswith("$") and "64" in exc.value.message


def test_a_move_with_an_integer_beyond_64_bits_is_refused(engine: Any, mid: Any) -> None:
    move = next(m for m in engine.legal_moves(mid) if m.kind == "portfolio").to_json()
    for field in ("card", "player"):
        with pytest.raises(engine.StateError) as exc:
            engine.Move.from_json({**move, field: _HUGE})
        assert exc.value.path == f"$.{field}"
    with pytest.raises(engine.StateError) as exc:
        engine.Move.from_json({**move, "card": None, "cards": [1, -_HUGE]})
    assert exc.value.path == "$.cards[1]"


def test_a_seed_is_a_64_bit_integer(engine: Any) -> None:
    for seed in (_HUGE, 2**63, -(2**63) - 1):
        with pytest.raises(engine.BadArgument):
            engine.new_game(3, (), seed)
    for seed in (2**63 - 1, -(2**63)):  # the ends of the range play, save and load
        g = engine.new_game(3, (), seed)
        g = engine.apply_move(g, engine.legal_moves(g)[0])
        assert engine.loads(engine.dumps(g)) == g


class _Int(int):
    """What a JSON reader may give for a number (numpy's, an IntEnum): no int of its own."""


class _Str(str):
    pass


SUBCLASSED: dict[str, Callable[[dict[str, Any]], None]] = {
    "a card as an int subclass": lambda d: d["players"][d["actor"]].update(
        hand=[_Int(c) for c in d["players"][d["actor"]]["hand"]]
    ),
    "the actor as an int subclass": lambda d: d.update(actor=_Int(d["actor"])),
    "the phase as a str subclass": lambda d: d.update(phase=_Str(d["phase"])),
    "a colour as a str subclass": lambda d: d["players"][0].update(
        color=_Str(d["players"][0]["color"])
    ),
    "a key that is no string": lambda d: d["offices"].update({1: d["offices"].popitem()[1]}),
}


@pytest.mark.parametrize("name", sorted(SUBCLASSED))
def test_a_save_of_values_of_no_json_type_is_refused(engine: Any, mid: Any, name: str) -> None:
    """An int subclass in a hand was accepted, and then every move of that card legal_moves
    listed was refused by apply_move ("the move's card must be int")."""
    data = copy.deepcopy(engine.to_json(mid))
    SUBCLASSED[name](data)
    with pytest.raises(engine.StateError) as exc:
        engine.from_json(data)
    assert exc.value.path.startswith("$")


def test_a_loaded_state_keeps_none_of_the_data_it_was_read_from(engine: Any, mid: Any) -> None:
    """from_json kept the caller's lists: a card appended to the data afterwards was in the
    checked state's hand."""
    data = copy.deepcopy(engine.to_json(mid))
    g = engine.from_json(data)
    saved = engine.dumps(g)
    data["players"][0]["hand"].append(data["discard"][0] if data["discard"] else 1)
    data["discard"].clear()
    next(iter(data["piles"].values())).append(-1)
    data["players"][1]["reis"] = 99
    assert engine.dumps(g) == saved and engine.check_invariants(g) == []
    # and an ordinary dict subclass (json's object_pairs_hook=OrderedDict) still loads
    ordered = json.loads(saved, object_pairs_hook=collections.OrderedDict)
    assert engine.from_json(ordered) == g


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_reached_state_loads_and_plays(engine: Any, players: int) -> None:
    """No false alarm: every state of random games loads again, and the loaded state has a
    legal move (or is over) whose result keeps the invariants."""
    for seed in range(4):
        g = engine.new_game(players, ("queen",) if seed % 2 else (), 100 + seed)
        rng = random.Random(seed)
        while g.phase != "over":
            again = engine.loads(engine.dumps(g))
            assert engine.dumps(again) == engine.dumps(g)
            move = rng.choice(engine.legal_moves(again))
            g = engine.apply_move(again, move)
            assert engine.check_invariants(g) == []
        engine.loads(engine.dumps(g))


@pytest.mark.parametrize(
    "make",
    [
        lambda limit: "[" * 50_000_000,
        lambda limit: " " * (limit + 1),
        lambda limit: '{"padding": "' + "x" * limit + '"}',
    ],
    ids=["50 MB of brackets", "one over the limit", "a long string"],
)
def test_a_huge_save_is_refused_by_size(engine: Any, make: Callable[[int], str]) -> None:
    limit = engine.max_save_size()
    assert 10_000 < limit < 10_000_000
    with pytest.raises(engine.StateError, match="at most"):
        engine.loads(make(limit))


DUPLICATES: dict[str, Callable[[str], str]] = {
    "the seed twice": lambda s: s.replace("{", '{"seed": 5, ', 1),
    "the phase twice, the first wins elsewhere": lambda s: s.replace("{", '{"phase": "over", ', 1),
    "a player's réis twice": lambda s: s.replace('"reis": ', '"reis": 1000, "reis": ', 1),
    "a good twice": lambda s: s.replace('"goods": {', '"goods": {"gold": 0, ', 1),
    "the variants twice": lambda s: s.replace("{", '{"variants": ["queen"], ', 1),
}


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_a_save_with_a_duplicate_key_is_refused(engine: Any, mid: Any, name: str) -> None:
    """JSON readers disagree on a repeated key (the first or the last wins): a save that means
    one game to a game app's validator and another to the engine is refused (review)."""
    text = engine.dumps(mid)
    forged = DUPLICATES[name](text)
    assert forged != text
    with pytest.raises(engine.StateError) as exc:
        engine.loads(forged)
    assert "duplicate key" in str(exc.value)


def _score(path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lisboa_rules", "score", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "huge"])
def test_score_refuses_what_is_not_a_saved_game_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "state.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        with path.open("wb") as fh:
            fh.truncate(50 << 20)  # 50 MB (sparse)
    done = _score(path)
    assert done.returncode in (1, 2), done.stderr
    assert "error" in done.stderr and "Traceback" not in done.stderr
    said = {"huge": ["larger than"], "directory": ["not a regular file", "Is a directory"]}
    assert any(w in done.stderr for w in said.get(kind, ["not a regular file"])), done.stderr


# --- public functions check their arguments ------------------------------------------------------

CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "visit_cost of an unknown Noble": lambda E, g: E.visit_cost(g, 0, "cardinal"),
    "visit_cost of a seat out of range": lambda E, g: E.visit_cost(g, 9, "king"),
    "visit_cost of a negative seat": lambda E, g: E.visit_cost(g, -1, "king"),
    "visit_cost of a bool seat": lambda E, g: E.visit_cost(g, True, "king"),
    "visit_cost of a Noble as a list": lambda E, g: E.visit_cost(g, 0, ["king"]),
    "wigs_due of a seat out of range": lambda E, g: E.wigs_due(g, 5, 1),
    "wigs_due of a negative cost": lambda E, g: E.wigs_due(g, 0, -1),
    "wigs_due of a cost as a string": lambda E, g: E.wigs_due(g, 0, "3"),
    "noble_name of an unknown Noble": lambda E, g: E.noble_name(g, "cardinal"),
    "noble_name of None": lambda E, g: E.noble_name(g, None),
    "rule_text of an unknown rule": lambda E, g: E.rule_text("no-such-rule"),
    "can_pay_reis of a seat": lambda E, g: E.can_pay_reis(g, 0, 5),
    "can_pay_reis of an amount as a string": lambda E, g: E.can_pay_reis(g, g.players[0], "5"),
    "new_game of players as a string": lambda E, g: E.new_game("3"),
    "new_game of variants as a string": lambda E, g: E.new_game(3, "queen"),
    "new_game of a seed as a string": lambda E, g: E.new_game(3, (), "seed"),
    "variants_for of a variant as a number": lambda E, g: E.variants_for(3, [1]),
    # the other public functions of a seat (review: IndexError, or another player's value)
    "warehouse_size of a seat out of range": lambda E, g: E.warehouse_size(g, 7),
    "warehouse_size of a negative seat": lambda E, g: E.warehouse_size(g, -1),
    "warehouse_size of a seat as a string": lambda E, g: E.warehouse_size(g, "0"),
    "warehouse_size of a bool seat": lambda E, g: E.warehouse_size(g, True),
    "influence_gain of a seat out of range": lambda E, g: E.influence_gain(g, 3),
    "influence_gain of a negative seat": lambda E, g: E.influence_gain(g, -1),
    "influence_gain of a seat as a float": lambda E, g: E.influence_gain(g, 0.0),
    # a game that is no Game (review: AttributeError 'dict' object has no attribute 'rs')
    "legal_moves of a saved game's JSON": lambda E, g: E.legal_moves(E.to_json(g)),
    "legal_moves of None": lambda E, g: E.legal_moves(None),
    "apply_move of a saved game's text": lambda E, g: E.apply_move(E.dumps(g), E.legal_moves(g)[0]),
    "explain_move of a Player": lambda E, g: E.explain_move(g.players[0], E.legal_moves(g)[0]),
    "final_scores of a dict": lambda E, g: E.final_scores({}),
    "final_totals of None": lambda E, g: E.final_totals(None),
    "ranking of a number": lambda E, g: E.ranking(3),
    "ranking with a sheet that is no ScoreSheet": lambda E, g: E.ranking(g, "sheet"),
    "ranking with the sheet of a game of other seats": lambda E, g: E.ranking(
        g, E.final_scores(E.new_game(len(g.players) % 4 + 2))
    ),
    "to_json of a dict": lambda E, g: E.to_json(E.to_json(g)),
    "dumps of None": lambda E, g: E.dumps(None),
    "check_invariants of a string": lambda E, g: E.check_invariants("game"),
    "new_game of variants as None": lambda E, g: E.new_game(3, None),
    "new_game of an unknown variant": lambda E, g: E.new_game(3, ["no-such-variant"]),
    "new_game of no players": lambda E, g: E.new_game(0),
    "new_game of 100 players": lambda E, g: E.new_game(100),
    # (record of a view or None: AttributeError 'View' object has no attribute 'clone')
    "record of a view": lambda E, g: E.record(E.view(g, 0)),
    "record of None": lambda E, g: E.record(None),
}


# The compiled engine checks an argument against the type its function declares as it is
# passed (mypyc), before any of the engine's code runs: an argument of another type is refused
# there with TypeError ("lisboa_engine.Game object expected; got None"), and a bool where an
# int is declared is taken as that int (True is seat 1).
AT_THE_CALL = {
    "apply_move of a saved game's text", "can_pay_reis of a seat",
    "can_pay_reis of an amount as a string", "check_invariants of a string", "dumps of None",
    "explain_move of a Player", "final_scores of a dict", "final_totals of None",
    "influence_gain of a seat as a float", "legal_moves of None",
    "legal_moves of a saved game's JSON", "new_game of a seed as a string",
    "new_game of players as a string", "noble_name of None", "ranking of a number",
    "record of a view", "record of None",
    "ranking with a sheet that is no ScoreSheet", "to_json of a dict",
    "visit_cost of a Noble as a list", "warehouse_size of a seat as a string",
    "wigs_due of a cost as a string",
}
A_BOOL_SEAT = {
    "visit_cost of a bool seat": lambda E, g: E.visit_cost(g, 1, "king"),
    "warehouse_size of a bool seat": lambda E, g: E.warehouse_size(g, 1),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_public_functions_check_their_arguments(engine: Any, mid: Any, call: str) -> None:
    before = engine.dumps(mid)
    if is_compiled(engine) and call in AT_THE_CALL:
        with pytest.raises(TypeError, match="object expected; got") as refused:
            CALLS[call](engine, mid)
        assert not isinstance(refused.value, ValueError)
    elif is_compiled(engine) and call in A_BOOL_SEAT:
        assert CALLS[call](engine, mid) == A_BOOL_SEAT[call](engine, mid)
    else:
        with pytest.raises(engine.BadArgument) as exc:
            CALLS[call](engine, mid)
        assert isinstance(exc.value, ValueError) and str(exc.value)
    assert engine.dumps(mid) == before


# --- a small fuzz run (the long runs: python3 -m tools.fuzz --engine all) -----------------


@pytest.mark.parametrize("which", ["moves", "saves"])
def test_engine_fuzz_finds_nothing(engine: Any, which: str) -> None:
    run = fuzz.fuzz_moves if which == "moves" else fuzz.fuzz_saves
    summary = run(engine, 11, 250)
    assert summary.problems == {}, summary.render(which)
    assert summary.cases == 250 and summary.accepted > 0 and summary.refused > 0


def test_the_hand_discard_check_agrees_with_the_listing(engine: Any, discarding: Any) -> None:
    """Every ordering of up to three cards (of the hand, of another hand, or none; the order
    says which card of a Noble gives its reward) is legal exactly when legal_moves lists it:
    an order legal_moves never lists is refused."""
    g = discarding
    hand = sorted(g.players[g.actor].hand)
    pool = [*hand[:4], *[c for c in g.discard[:2] if c not in hand]]
    listed = set(engine.legal_moves(g))
    count = 0
    for size in range(4):
        for cards in itertools.permutations(pool, size):
            for extra in ({}, {"favor": "king"}, {"player": (g.actor + 1) % len(g.players)}):
                made = engine.Move("hand-discard", g.actor, cards=cards)
                move = replace(engine, made, **extra)
                assert (engine.explain_move(g, move) is None) == (move in listed), move
                count += 1
    assert count > 100


def test_a_listed_hand_discard_reordered_in_place_is_judged_as_it_is(
    engine: Any, discarding: Any
) -> None:
    """A Move that legal_moves listed, its cards put in another order in place (an app that
    edits the move it picked), was accepted by apply_move in an order legal_moves never lists:
    the listed object is trusted, and the play checked the cards but not their order. Every
    ordering is now accepted exactly when legal_moves lists it."""
    g = discarding
    listed = engine.legal_moves(g)
    orders = {m.cards for m in listed}
    several = [i for i, m in enumerate(listed) if len(m.cards) >= 2]
    assert several
    refused = 0
    for i in several[:20]:
        for cards in itertools.permutations(listed[i].cards):
            held = engine.legal_moves(g)[i]  # the object the engine listed (and keeps)
            held.cards = cards
            try:
                engine.apply_move(g, held)
            except engine.IllegalMove:
                assert cards not in orders, cards
                refused += 1
            else:
                assert cards in orders, cards
    assert refused > 0


INT64_MAX = 2**63 - 1


def _int_paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _int_paths(v, (*path, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _int_paths(v, (*path, i))]
    return [path] if type(data) is int else []


def test_a_save_at_the_edge_of_64_bits_plays_on_into_saves_that_load(
    engine: Any, mid: Any
) -> None:
    """Every integer of a save is a signed 64-bit one. A save whose counters (the ones with no
    declared maximum: wigs, réis, goods, turns, round...) stand at 2**63 - 1 was accepted, and
    the next gain carried one past it: the engine then wrote saves its own `loads` refused.
    Each counter at the edge is loaded, played on to the end, and every state on the way
    dumps to a save that loads."""
    E = engine
    data = E.to_json(mid)
    edged = 0
    for path in _int_paths(data):
        if path == ("seed",):
            continue
        case = copy.deepcopy(data)
        parent = case
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = INT64_MAX
        try:
            g = E.loads(json.dumps(case))
        except E.StateError:
            continue  # a bounded counter, or one the rules' checks tie to others
        edged += 1
        rng = random.Random(f"edge:{path}")
        while g.phase != "over":
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            E.loads(E.dumps(g))  # StateError here: a state the engine made but cannot read
            assert all(abs(v) <= INT64_MAX for v in _ints(E.to_json(g)))
    assert edged >= 6  # wigs, réis, goods and the rubble cubes of a player, round, turns


def _ints(data: Any) -> list[int]:
    if isinstance(data, dict):
        return [i for v in data.values() for i in _ints(v)]
    if isinstance(data, list):
        return [i for v in data for i in _ints(v)]
    return [data] if type(data) is int else []


def test_a_follow_that_lost_its_visit_is_refused(engine: Any) -> None:
    """A save in the follow phase of a visit without its visit: the Noble card in the Royal
    Court is no event, and in these rules nobody follows an event (the sponsor is not
    followable). It was loaded, and the follower "followed" the Noble card as an event,
    paying the event's price."""
    g = _reach(engine, lambda g: g.phase == "follow" and g.visit is not None)
    data = engine.to_json(g)
    data["visit"] = None
    with pytest.raises(engine.StateError) as exc:
        engine.from_json(data)
    assert exc.value.path in ("$.phase", "$.visit")
