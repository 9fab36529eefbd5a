"""What happened (issue 35): a game that records (`record(game)`) keeps what each move changed,
and `events(game, since, seat)` gives a seat what it may see of it: the move, the items moved
between places, added, removed, the lists shuffled and the values set. Checked on seeded games
of 2, 3 and 4 players and the Queen: the events a seat gets never name a card it cannot see,
before the move or after; played on the seat's view before the move, the changes it sees give
every field it sees of its view after; a game that does not record keeps no log.
"""

from __future__ import annotations

import copy
import random
import re
from types import ModuleType
from typing import Any

import pytest
import yaml
from conftest import ROOT, sized

SETS = [(2, ()), (3, ()), (4, ()), (3, ("queen",))]


def _hidden_fields() -> dict[str, dict[str, str]]:
    data = yaml.load((ROOT / "rules" / "state.yaml").read_text(), Loader=yaml.CSafeLoader)
    return {scope: {f["id"]: f["see"] for f in data[scope] if f["see"] != "all"}
            for scope in ("player", "game")}


def _unseen(E: Any, g: Any, seat: int | None) -> set[Any]:
    """The card, Decree, Plan... ids `seat` cannot see in `g` (rules/state.yaml alone): what
    is in another's hidden field, under the top of a pile whose top shows, in a hidden deck."""
    hidden = _hidden_fields()
    out: set[Any] = set()
    for i, p in enumerate(g.players):
        for name, see in hidden["player"].items():
            if not (see == "owner" and i == seat):
                value = getattr(p, name)
                if isinstance(value, list):
                    out.update(value)
    for name, see in hidden["game"].items():
        value = getattr(g, name)
        for items in list(value.values()) if isinstance(value, dict) else [value]:
            if isinstance(items, list):
                out.update(items[:-1] if see == "top" else items)
    return out


def _named(E: Any, event: dict[str, Any], kinds: set[str]) -> set[Any]:
    """Every id of a kind in `kinds` an event names: an item of a change in a zone of such a
    kind, a choice of the move of such a kind."""
    out: set[Any] = set()
    for c in event["changes"]:
        for key, end in (("moved", "from"), ("moved", "to"), ("added", "to"),
                         ("removed", "from")):
            if c.get(key) is not None and E._zone_kind(c[end]) in kinds:
                out.add(c[key])
    for name, value in event["move"].items():
        if E._MOVE_LABELS.get(name, ("", ""))[1] in kinds:
            out.update(x for x in (value if isinstance(value, list) else [value])
                       if x is not None)
    return out


def _game(E: Any, players: int, variants: tuple[str, ...], seed: int) -> list[Any]:
    """The states of a recorded seeded random game, the first to the last."""
    rng = random.Random(seed)
    g = E.record(E.new_game(players, variants, seed))
    states = [g]
    while g.phase != "over" and len(states) <= sized(150, 100_000):
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        states.append(g)
    return states


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_the_events_a_seat_gets_never_name_what_it_cannot_see(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    states = _game(engine, players, variants, 50 + players)
    last = states[-1]
    assert len(engine.events(last)) == len(states) - 1
    hidden_kinds = {d.kind for d in last.rs.deals}
    assert hidden_kinds, "the rules hide some kind of component"
    for seat in [*range(players), None]:
        got = engine.events(last, 0, seat)
        for n, event in enumerate(got):
            assert event["n"] == n
            before, after = states[n], states[n + 1]
            unseen = _unseen(engine, before, seat) & _unseen(engine, after, seat)
            # (an id it saw before or after the move it may be told of)
            leaked = _named(engine, event, hidden_kinds) & unseen
            assert not leaked, (seat, leaked, event)
            if seat == event["player"]:  # the mover is told its whole move, in words
                move = engine.Move.from_json(event["move"])
                assert move in engine.legal_moves(before)
                assert event["words"] == engine.move_words(before, move)
            else:
                assert event["words"]


def _place(state: dict[str, Any], path: str) -> tuple[Any, Any]:
    """The container and key of the field at `path` ("players[1].hand", "piles.king")."""
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    holder: Any = state
    for part in parts[:-1]:
        holder = holder[int(part[1:-1])] if part.startswith("[") else holder[part]
    last = parts[-1]
    return holder, int(last[1:-1]) if last.startswith("[") else last


def _replay(view: dict[str, Any], event: dict[str, Any]) -> None:
    """Play what a seat sees of an event on its view's state (the places it sees whole)."""
    for c in event["changes"]:
        if "set" in c:
            holder, key = _place(view, c["set"])
            holder[key] = copy.deepcopy(c["now"])
            continue
        if "shuffled" in c:
            continue
        item = c.get("moved", c.get("added", c.get("removed")))
        for end, add in (("from", False), ("to", True)):
            if end not in c:
                continue
            holder, key = _place(view, c[end])
            here = holder[key]
            if not isinstance(here, list):
                continue  # a place this seat sees the size of only
            if add:
                here.append(item)
            else:
                here.remove(item)


def _whole(E: Any, data: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """The fields of a view's state that `seat` sees whole, with lists as sorted lists (a
    change says what came and went, not where in the list)."""
    hidden = _hidden_fields()

    def norm(v: Any) -> Any:
        if isinstance(v, list):
            return sorted(v, key=repr)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    out: dict[str, Any] = {k: norm(v) for k, v in data.items()
                           if k != "players" and k not in hidden["game"]}
    out["players"] = [{k: norm(v) for k, v in p.items()
                       if k not in hidden["player"] or (hidden["player"][k] == "owner"
                                                        and i == seat)}
                      for i, p in enumerate(data["players"])]
    return out


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_the_events_a_seat_gets_tell_every_change_it_sees(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    states = _game(engine, players, variants, 60 + players)
    last = states[-1]
    for seat in [None, *range(players)]:
        for n, event in enumerate(engine.events(last, 0, seat)):
            seen = engine.view(states[n], seat).to_json()["state"]
            _replay(seen, event)
            want = engine.view(states[n + 1], seat).to_json()["state"]
            assert _whole(engine, seen, seat) == _whole(engine, want, seat), (seat, event)


def test_events_since_a_number_and_a_game_that_does_not_record(engine: ModuleType) -> None:
    g = engine.new_game(3, (), 1)
    after = engine.apply_move(g, engine.legal_moves(g)[0])
    with pytest.raises(engine.BadArgument, match="record"):
        engine.events(after)
    recorded = engine.record(g)
    assert engine.to_json(recorded) == engine.to_json(g) and engine.events(recorded) == []
    one = engine.apply_move(recorded, engine.legal_moves(recorded)[0])
    two = engine.apply_move(one, engine.legal_moves(one)[0])
    assert [e["n"] for e in engine.events(two)] == [0, 1]
    assert engine.events(two, 1) == engine.events(two)[1:]
    assert engine.events(one) == engine.events(two)[:1]  # a state's log is its own
    assert engine.to_json(two) == engine.to_json(engine.apply_move(
        engine.apply_move(g, engine.legal_moves(g)[0]), engine.legal_moves(one)[0]))
    for bad in (-1, "0", 1.5):
        with pytest.raises(engine.BadArgument):
            engine.events(two, bad)
    with pytest.raises(engine.BadArgument, match="seats 0 to 2"):
        engine.events(two, 0, 3)


def test_successors_of_a_recorded_game_record_their_move(engine: ModuleType) -> None:
    g = engine.record(engine.new_game(3, (), 5))
    for move, after in engine.successors(g)[:6]:
        assert engine.events(after) == engine.events(engine.apply_move(g, move))
        assert len(engine.events(after)) == 1


def test_an_event_handed_out_is_the_callers_own(engine: ModuleType) -> None:
    rng = random.Random(2)
    g = engine.record(engine.new_game(3, (), 2))
    for _ in range(12):
        g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
    first = engine.events(g, 0, 0)
    kept = copy.deepcopy(first)
    for event in first:  # a caller changes what it got...
        event["move"]["kind"] = "changed"
        event["changes"].clear()
    assert engine.events(g, 0, 0) == kept  # ...and the record is as it was


def test_a_choice_is_hidden_where_no_change_of_its_own_kind_shows_it(
    engine: ModuleType,
) -> None:
    """A move whose card goes where the others cannot see it names the card to its mover
    only, though a number equal to the card's id shows in a public list in the same move:
    what a change shows is matched by kind and id, not by value."""
    g = engine.record(engine.new_game(3, (), 1))
    card = g.players[0].hand[0]
    hidden = next(z.split(".", 1)[1] for z, k in engine._ZONES.items()
                  if k == "card" and z.startswith("game.")
                  and engine._GAME_SEES.get(z.split(".", 1)[1]) == "count")
    happened = engine._Happened(
        0, {"kind": "discard", "player": 0, "card": card},
        ({"moved": card, "from": "players[0].hand", "to": hidden, "top": (False, False)},
         {"added": card, "to": "blocked", "top": True},
         {"added": card, "to": "players[1].ships", "top": True}),
        f"Discard card {card}", "Discard",
    )
    g._log = engine._Log(g._log, happened, 1)
    for seat in (1, 2, None):
        (event,) = engine.events(g, 0, seat)
        assert event["move"]["card"] is None and event["words"] == "Discard"
        assert event["changes"][0] == {"moved": None, "from": "players[0].hand", "to": hidden}
    (mine,) = engine.events(g, 0, 0)
    assert mine["move"]["card"] == card and mine["words"] == f"Discard card {card}"
