"""What each seat may see (issue 35): rules/state.yaml says who sees each field (`see:`), the
engine's `view(game, seat)` shows a seat only that, `determinize(view, rng)` deals what a view
hides back at random, and `legal_moves` / `explain_move` answer from the view of the seat to
move as from the game. A house rule that adds a field must say who sees it.

Checked on seeded games of 2, 3 and 4 players and with the Queen: a view's JSON passes
generated/view.schema.json and names no id its seat cannot see; changing only what a seat
cannot see (a determinized game) leaves its view equal, and a visible change changes it; the
moves and refusals from a view are the game's; a dealt game is a state `from_json` accepts.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import ROOT

from lisboa_rules.cli.main import main

SETS = [(2, ()), (3, ()), (4, ()), (3, ("queen",))]
VIEW_SCHEMA = ROOT / "generated" / "view.schema.json"


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int, every: int
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


def _hidden_fields() -> dict[str, dict[str, str]]:
    """rules/state.yaml's fields that not everyone sees, by scope."""
    data = yaml.load((ROOT / "rules" / "state.yaml").read_text(), Loader=yaml.CSafeLoader)
    return {scope: {f["id"]: f["see"] for f in data[scope] if f["see"] != "all"}
            for scope in ("player", "game")}


def _unseen_cards(E: Any, g: Any, seat: int | None) -> set[int]:
    """The cards `seat` cannot see in `g`, read from the state and rules/state.yaml alone:
    the others' hands, everything under the top of a display pile, the undealt decks, the
    box."""
    hidden = _hidden_fields()
    out: set[int] = set()
    for i, p in enumerate(g.players):
        for name, see in hidden["player"].items():
            if see == "owner" and i == seat:
                continue
            value = getattr(p, name)
            if isinstance(value, list):
                out.update(value)
    for name, see in hidden["game"].items():
        value = getattr(g, name)
        lists = list(value.values()) if isinstance(value, dict) else [value]
        for items in lists:
            if isinstance(items, list):
                out.update(items[:-1] if see == "top" else items)
    return out & set(E.all_cards(g))


def _card_ids_in(data: Any, zones: set[str]) -> set[int]:
    """Every int in the view's card zones (its fields that hold cards)."""
    found: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            found.add(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                if k != "hidden":
                    walk(v)

    for name in zones:
        if name in data:
            walk(data[name])
    for p in data["players"]:
        for name in zones:
            if name in p:
                walk(p[name])
    return found


CARD_ZONES = {"discard", "box", "court", "hand", "portfolio", "treasury_row", "piles", "reserve"}


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_a_view_shows_only_what_its_seat_may_see(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    schema = json.loads(VIEW_SCHEMA.read_text())
    for g in _states(engine, players, variants, 11 + players, 9):
        for seat in [*range(players), None]:
            v = engine.view(g, seat)
            data = v.to_json()
            jsonschema.validate(data, schema)
            assert engine.View.from_json(json.loads(json.dumps(data))) == v
            unseen = _unseen_cards(engine, g, seat)
            assert unseen, "a game always hides some card"
            assert not _card_ids_in(data["state"], CARD_ZONES) & unseen
            assert data["state"]["seed"] is None
            if seat is not None:  # its own hand, whole
                assert data["state"]["players"][seat]["hand"] == g.players[seat].hand


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_what_a_seat_cannot_see_does_not_change_its_view_or_its_moves(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    """A dealt game (determinize) differs from the real one only where the seat cannot see:
    the same view, the same legal moves and refusals, and `from_json` loads it."""
    rng = random.Random(players)
    for n, g in enumerate(_states(engine, players, variants, 21 + players, 7)):
        seat = g.actor
        v = engine.view(g, seat)
        other = engine.determinize(v, rng)
        assert engine.view(other, seat) == v
        assert engine.legal_moves(other) == engine.legal_moves(g)
        assert engine.legal_moves(v) == engine.legal_moves(g)
        if n % 5 == 0:
            engine.from_json(engine.to_json(other))  # every check of a save passes
        if g.phase == "over":
            continue
        moves = engine.legal_moves(g)
        wrong = engine.Move("pass" if moves[0].kind != "pass" else "decline", seat)
        assert str(engine.explain_move(v, wrong)) == str(engine.explain_move(g, wrong))
        assert engine.explain_move(v, moves[-1]) is None


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants"), SETS)
def test_a_refusal_names_nothing_the_mover_cannot_see(
    engine: ModuleType, players: int, variants: tuple[str, ...]
) -> None:
    """A client may send any move, and a server answers a refused one with its reason: forged
    moves naming every card of the rules (another seat's hand, a deck, the box) are refused in
    the same words, and their partial moves get the same options, in the real game and in a
    game dealt from the mover's view, so no answer tells where a hidden card is."""
    E = engine
    rng = random.Random(players)
    for n, g in enumerate(_states(E, players, variants, 31 + players, 11)):
        if g.phase == "over" or n % 4:
            continue
        seat = g.actor
        other = E.determinize(E.view(g, seat), rng)
        kinds = {m.kind for m in E.legal_moves(g)}
        for card in E.all_cards(g):
            for kind in kinds:
                for move in (E.Move(kind, seat, card=card), E.Move(kind, seat, cards=(card,))):
                    said, dealt = E.explain_move(g, move), E.explain_move(other, move)
                    assert (said and (said.rule, said.reason)) == (
                        dealt and (dealt.rule, dealt.reason)
                    ), move
            for kind in kinds:
                partial = {"kind": kind, "card": card}
                try:
                    said_options: Any = E.options(g, partial).to_json()
                except E.IllegalMove as exc:
                    said_options = str(exc)
                try:
                    dealt_options: Any = E.options(other, partial).to_json()
                except E.IllegalMove as exc:
                    dealt_options = str(exc)
                assert said_options == dealt_options, partial


def test_a_dealt_game_differs_where_the_seat_cannot_see(engine: ModuleType) -> None:
    """Determinizing really deals: over a few seeds the other hands and the decks change,
    the visible fields never do."""
    g = next(s for i, s in enumerate(_states(engine, 3, (), 5, 1)) if i == 12)
    v = engine.view(g, g.actor)
    dealt = [engine.determinize(v, random.Random(k)) for k in range(6)]
    others = [p for p in range(3) if p != g.actor]
    assert any(d.players[others[0]].hand != g.players[others[0]].hand for d in dealt)
    assert any(d.reserve != g.reserve for d in dealt)
    assert len({d.seed for d in dealt}) == len(dealt)
    for d in dealt:
        assert d.players[g.actor].hand == g.players[g.actor].hand
        assert d.court == g.court and d.discard == g.discard
        assert {k: p[-1:] for k, p in d.piles.items()} == {k: p[-1:] for k, p in g.piles.items()}
        assert [len(p.hand) for p in d.players] == [len(p.hand) for p in g.players]


def test_a_visible_change_changes_the_view(engine: ModuleType) -> None:
    g = engine.new_game(3, (), 4)
    before = engine.view(g, 1)
    changed = g.clone()
    changed.players[0].wigs += 1
    assert engine.view(changed, 1) != before
    mine = g.clone()
    mine.players[1].hand.reverse()
    assert engine.view(mine, 1) != before
    theirs = g.clone()
    theirs.players[0].hand.reverse()
    assert engine.view(theirs, 1) == before


def test_a_view_lists_only_its_own_seats_moves(engine: ModuleType) -> None:
    g = engine.new_game(3, (), 4)
    for seat in (None, (g.actor + 1) % 3):
        with pytest.raises(engine.BadArgument, match="moves of its own seat"):
            engine.legal_moves(engine.view(g, seat))
    with pytest.raises(engine.BadArgument, match="seats 0 to 2"):
        engine.view(g, 3)


def test_a_view_that_is_not_of_these_rules_is_refused(engine: ModuleType) -> None:
    g = engine.new_game(2, (), 4)
    data = engine.view(g, g.actor).to_json()
    data["state"]["players"][1]["hand"] = {"hidden": 99}
    with pytest.raises(engine.BadArgument, match="not a view of these rules"):
        engine.determinize(engine.View.from_json(data), random.Random(0))
    data = engine.view(g, g.actor).to_json()
    data["state"]["players"][0]["hand"] = {"shown": 1}
    with pytest.raises(engine.StateError):
        engine.View.from_json(data)


def _refused_everywhere(E: ModuleType, v: Any, match: str) -> None:
    """Every entry point that reads a view refuses `v` with BadArgument, in words."""
    calls = [
        lambda: E.legal_moves(v),
        lambda: E.explain_move(v, E.Move("pass", 0)),
        lambda: E.options(v),
        lambda: E.determinize(v, random.Random(0)),
        lambda: E.random_move(v, random.Random(0)),
        lambda: E.greedy_move(v, random.Random(0)),
        lambda: E.mcts_move(v, random.Random(0), 4, 4),
        lambda: E.MctsBot(0, 4).choose(v, 0),
    ]
    for call in calls:
        with pytest.raises(E.BadArgument, match=match):
            call()


def test_a_view_no_seat_is_shown_is_refused_in_words(engine: ModuleType) -> None:
    """Views a hostile server (or a hand) could make, refused with BadArgument: a hidden count
    `View.from_json` lets through made a list of that many places (MemoryError at 2**63 - 1);
    a seat shown its own hand hidden was dealt one, and a search then raised IllegalMove for a
    card "not in your hand"; a view of two-player rules with three players was played by them;
    a View made by hand of no view's shape raised KeyError or TypeError."""
    E = engine
    g = E.new_game(3, (), 4)
    assert g.actor == 0
    data = E.view(g, 0).to_json()
    data["state"]["players"][1]["hand"] = {"hidden": 2**63 - 1}
    _refused_everywhere(E, E.View.from_json(data), "2\\d+ hidden card ids in one place")
    data = E.view(g, 0).to_json()
    data["state"]["players"][0]["hand"] = {"hidden": 5}
    _refused_everywhere(E, E.View.from_json(data), "seat 0's own hand is hidden from it")
    data = E.view(g, 0).to_json()
    data["state"]["variants"] = ["two-player"]
    _refused_everywhere(E, E.View.from_json(data), "3 players play with \\(\\)")
    for state in ({}, None, [], {**data["state"], "actor": "0"}, {**data["state"], "players": {}}):
        _refused_everywhere(E, E.View(0, state), "not a view of these rules")


def test_a_view_of_a_state_no_game_reaches_is_refused_by_the_bots(engine: ModuleType) -> None:
    """A view the schema takes of a state no save could hold (a full hand waiting to draw):
    `legal_moves` lists its draws, and the bots, trying them, met the step that refuses a sixth
    card: a bare ValueError escaped. Now BadArgument, naming what the save checks find."""
    E = engine
    g = E.new_game(3, (), 4)
    data = E.view(g, g.actor).to_json()
    data["state"]["phase"] = "refill"
    v = E.View.from_json(data)
    assert E.legal_moves(v)
    for call in (
        lambda: E.greedy_move(v, random.Random(0)),
        lambda: E.mcts_move(v, random.Random(0), 4, 4),
        lambda: E.GreedyBot(0).choose(v, v.seat),
    ):
        with pytest.raises(E.BadArgument, match=r"not a view of a state the engine can play: \$"):
            call()


def test_a_generator_that_is_none_is_refused_in_words(engine: ModuleType) -> None:
    """The bots' loops, `redeal` and `determinize` given no random.Random: BadArgument (they
    raised AttributeError, or StateError blaming the rules or the compiler)."""
    E = engine
    g = E.new_game(3, (), 4)
    calls = [
        lambda: E.determinize(E.view(g, 0), None),
        lambda: E.redeal(g, 0, None),
        lambda: E.random_move(g, None),
        lambda: E.greedy_move(g, None),
        lambda: E.mcts_move(g, None, 4, 4),
        lambda: E.playout(g, None, 4),
    ]
    for call in calls:
        with pytest.raises(E.BadArgument, match=r"a random\.Random, not None"):
            call()
    assert E.random_move(g, random.SystemRandom()) in E.legal_moves(g)


@pytest.mark.parametrize("exploration", [float("nan"), float("inf"), -1.0, True, "1.4"])
def test_an_exploration_that_is_no_weight_is_refused_in_words(
        engine: ModuleType, exploration: object) -> None:
    """MCTS's exploration weight is a number of at least 0: NaN made every node's score NaN
    and the search picked by the order of the moves."""
    g = engine.new_game(3, (), 4)
    with pytest.raises(engine.BadArgument, match="exploration"):
        engine.mcts_move(g, random.Random(0), 4, 4, exploration=exploration)
    assert engine.mcts_move(g, random.Random(0), 4, 4, exploration=0) in engine.legal_moves(g)


# --- a house rule must say who sees what it adds ------------------------------------------------

HOUSE = """\
kind: variant
id: vault
title: A vault
applies: chosen
text: Each player keeps a vault of cards.
source: [seed:000#intro]
changes:
  state:
    player:
      - {{$add: true, id: vault, type: "list[card]",{see} text: cards set aside in the vault}}
    invariants:
      - id: cards-conserved
        conserved:
          in: [game.discard, game.box, game.court, player.hand, player.portfolio,
               player.treasury_row, {zone}game.piles, game.reserve]
"""


def _validate(tmp_path: Path, capsys: pytest.CaptureFixture[str], see: str, zone: bool
              ) -> tuple[int, str]:
    house = tmp_path / "vault.yaml"
    house.write_text(HOUSE.format(see=see, zone="player.vault, " if zone else ""),
                     encoding="utf-8")
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(house),
                 "--variant", "vault"])
    return code, capsys.readouterr().err


def test_a_house_rule_field_without_who_sees_it_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _validate(tmp_path, capsys, "", True)
    assert code == 1
    assert "vault.yaml:10:9: error[schema-required]" in err and "'see'" in err


def test_a_hidden_field_no_conservation_names_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _validate(tmp_path, capsys, " see: owner,", False)
    assert code == 1
    assert "error[state-visibility]" in err and "player.vault" in err
    code, err = _validate(tmp_path, capsys, " see: owner,", True)
    assert code == 0, err


@pytest.mark.parametrize(("field", "see", "message"), [
    ("{id: pot, type: int, see: owner, text: a pot}", "game", "has no owner"),
    ("{id: luck, type: bool, see: none, text: luck}", "player", "could not guess it"),
    ("{id: count, type: int, see: top, text: a count}", "game", "no size or top"),
    ('{id: ranks, type: "map[noble, int]", see: count, by: type, text: ranks}', "game",
     "no size or top"),
])
def test_a_visibility_the_engine_cannot_keep_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, see: str, message: str
) -> None:
    house = tmp_path / "odd.yaml"
    house.write_text(
        "kind: variant\nid: odd\ntitle: Odd\napplies: chosen\ntext: Odd.\n"
        "source: [seed:000#intro]\nchanges:\n  state:\n"
        f"    {see}:\n      - {{$add: true, {field[1:]}\n", encoding="utf-8")
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(house),
                 "--variant", "odd"])
    err = capsys.readouterr().err
    assert code == 1
    assert "odd.yaml:10:" in err and "error[state-visibility]" in err and message in err
