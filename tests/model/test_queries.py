"""The engine's public queries are data (`queries:` of rules/vocabulary.yaml): a house rule in
YAML alone adds a query, or changes one's value, and the generated engine exposes it with its
arguments checked (BadArgument) -- folded into the base game, or as a variant chosen at setup
(the query then reads the game's own rule set)."""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.core.inputs import ENGINE

ROOT = Path(__file__).resolve().parents[2]

HOUSE = """\
kind: variant
id: house-queries
title: More questions
applies: chosen
text: The engine answers more questions, and a visit costs one Influence more.
source: [seed:001#spending-influence-to-visit]
changes:
  vocabulary:
    queries:
      - name: visit_cost
        value: >-
          1 + cost('visit-cost',
          other_officials=sum(game.offices[noble_id]) - game.offices[noble_id][color])
      - $add: true
        name: warehouse_room
        args: [{name: seat, kind: seat}]
        value: warehouse_room
        words: The goods a player's warehouse can still take.
      - $add: true
        name: officials_in_office
        args: [{name: noble_id, kind: noble, words: a Noble}]
        value: sum(game.offices[noble_id])
        words: The Officials in a Noble's office, everyone's.
      - $add: true
        name: holds_card
        args: [{name: seat, kind: seat}, {name: card, kind: card}]
        value: card in hand
        words: Whether a player holds a card.
      - $add: true
        name: richer_than
        args: [{name: p, kind: player}, {name: reis_wanted, kind: count, words: the réis}]
        value: reis > reis_wanted
        words: Whether a player has more réis than that.
"""


def _engine(tmp: Path, folded: bool) -> types.ModuleType:
    project = tmp / ("folded" if folded else "chosen")
    shutil.copytree(ROOT / "rules", project / "rules")
    (project / "rules" / "variants" / "house-queries.yaml").write_text(HOUSE, encoding="utf-8")
    result = pipeline.compile_rules(project / "rules", ("house-queries",) if folded else ())
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, "; ".join(f"{d.span}: {d.code}: {d.message}" for d in errors)
    name = f"_queries_engine_{'folded' if folded else 'chosen'}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(compile(result.files[ENGINE], f"<{name}>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, types.ModuleType]:
    tmp = tmp_path_factory.mktemp("queries")
    return {"folded": _engine(tmp, True), "chosen": _engine(tmp, False)}


def _game(E: Any, which: str, players: int = 3) -> Any:
    return E.new_game(players) if which == "folded" else E.new_game(players, ["house-queries"])


NEW = ("warehouse_room", "officials_in_office", "holds_card", "richer_than")


@pytest.mark.parametrize("which", ["folded", "chosen"])
def test_the_new_queries_are_public_functions(engines: dict[str, Any], which: str) -> None:
    E = engines[which]
    for name in NEW:
        assert name in E.__all__ and callable(getattr(E, name))
    assert list(E.__all__) == sorted(E.__all__, key=lambda n: (
        0 if n.isupper() else 1 if n[:1].isupper() else 2, n))
    assert E.warehouse_room.__doc__ == "The goods a player's warehouse can still take."


@pytest.mark.parametrize("which", ["folded", "chosen"])
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_the_new_queries_read_the_state(engines: dict[str, Any], which: str, seat: int) -> None:
    E = engines[which]
    g = _game(E, which)
    p = g.players[seat]
    p.rubble_sets = seat
    room = E.warehouse_size(g, seat) - sum(p.goods.values())
    assert E.warehouse_room(g, seat) == room
    g.offices["king"] = {"neutral": 1, g.players[0].color: seat, g.players[1].color: 2}
    assert E.officials_in_office(g, "king") == 1 + seat + 2
    card = p.hand[0]
    assert E.holds_card(g, seat, card) is True
    other = next(c for c in g.players[(seat + 1) % 3].hand if c not in p.hand)
    assert E.holds_card(g, seat, other) is False
    assert E.richer_than(g, p, p.reis - 1) is True
    assert E.richer_than(g, p, p.reis) is False


@pytest.mark.parametrize("which", ["folded", "chosen"])
@pytest.mark.parametrize("others", [0, 1, 3])
def test_a_changed_query_reads_its_new_value(engines: dict[str, Any], which: str,
                                             others: int) -> None:
    E = engines[which]
    g = _game(E, which)
    g.offices["manuel"] = {g.players[1].color: others}
    p = g.players[0]
    ctx = E.Ctx(other_officials=others)
    assert E.visit_cost(g, 0, "manuel") == 1 + g.rs.costs["visit-cost"](g, p, ctx)


def test_a_chosen_variant_s_queries_read_its_own_rule_set(engines: dict[str, Any]) -> None:
    E = engines["chosen"]
    base, house = E.new_game(3), E.new_game(3, ["house-queries"])
    for g in (base, house):
        g.offices["manuel"] = {g.players[1].color: 2}
    assert E.visit_cost(house, 0, "manuel") == E.visit_cost(base, 0, "manuel") + 1
    with pytest.raises(E.BadArgument, match="warehouse_room is not a query of these rules"):
        E.warehouse_room(base, 0)


BAD_CALLS = {
    "a seat out of range": lambda E, g: E.warehouse_room(g, 3),
    "a bool seat": lambda E, g: E.holds_card(g, True, 1),
    "a card as a string": lambda E, g: E.holds_card(g, 0, "1"),
    "a card as a bool": lambda E, g: E.holds_card(g, 0, True),
    "a card of no deck": lambda E, g: E.holds_card(g, 0, 10_000),
    "an unknown Noble": lambda E, g: E.officials_in_office(g, "cardinal"),
    "a Noble as a list": lambda E, g: E.officials_in_office(g, ["king"]),
    "a seat for a player": lambda E, g: E.richer_than(g, 0, 1),
    "a negative count": lambda E, g: E.richer_than(g, g.players[0], -1),
    "a count as a float": lambda E, g: E.richer_than(g, g.players[0], 1.0),
}


@pytest.mark.parametrize("which", ["folded", "chosen"])
@pytest.mark.parametrize("call", sorted(BAD_CALLS))
def test_a_query_checks_its_arguments(engines: dict[str, Any], which: str, call: str) -> None:
    E = engines[which]
    with pytest.raises(E.BadArgument) as exc:
        BAD_CALLS[call](E, _game(E, which))
    assert isinstance(exc.value, ValueError) and str(exc.value)


def test_a_bad_id_names_the_ids_of_its_kind(engines: dict[str, Any]) -> None:
    E = engines["folded"]
    g = E.new_game(3)
    with pytest.raises(E.BadArgument) as exc:
        E.officials_in_office(g, "cardinal")
    assert str(exc.value) == ("'cardinal' is not a Noble of these rules ("
                              + ", ".join(n.id for n in g.rs.nobles) + ")")
