"""The reference interpreter's meaning of the IR (tools/interp_ir.py): expressions checked by the
compiler's checker, in the scope the interpreter gives the checker as the build does, evaluated on a
saved game and compared with the same value read from its JSON by hand. The differential tests
compare the interpreter with the engine on whole procedures; these are the nodes the shipped
rules seldom reach (`not`, a table's keys sorted, `min` of a table, a slot's value)."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from tools import interp_ir, interp_steps

P = dict[str, Any]
CASES: list[tuple[str, Callable[[P, P], Any]]] = [
    # source, its value for the player in seat 0 (p) of the game (g)
    ("not (reis > 2)", lambda p, g: not p["reis"] > 2),
    ("-reis + reis // 3 * 2 - reis % 4", lambda p, g: -p["reis"] + p["reis"] // 3 * 2
     - p["reis"] % 4),
    ("reis > 2 and influence < 1", lambda p, g: p["reis"] > 2 and p["influence"] < 1),
    ("reis < 2 or influence > 1", lambda p, g: p["reis"] < 2 or p["influence"] > 1),
    ("1 < reis <= 10", lambda p, g: 1 < p["reis"] <= 10),
    ("min(goods)", lambda p, g: min(p["goods"].values())),
    ("max(goods) + sum(stores)", lambda p, g: max(p["goods"].values())
     + sum(p["stores"].values())),
    ("min(reis, influence, 4)", lambda p, g: min(p["reis"], p["influence"], 4)),
    ("any([c > 10 for c in hand])", lambda p, g: any(c > 10 for c in p["hand"])),
    ("all([c > 1 for c in hand])", lambda p, g: all(c > 1 for c in p["hand"])),
    ("sorted(hand)", lambda p, g: sorted(p["hand"])),
    ("reversed(hand)", lambda p, g: list(reversed(p["hand"]))),
    ("first(hand)", lambda p, g: p["hand"][0]),
    ("range(3)", lambda p, g: [0, 1, 2]),
    ("len(favors)", lambda p, g: len(g["favors"])),
    ("[n for n in favors if favors[n] > 0]", lambda p, g: [n for n in sorted(g["favors"])
                                                           if g["favors"][n] > 0]),
    ("reis if reis > 100 else influence", lambda p, g: p["influence"]),
    ("player.reis == reis and 'king' in royal_favors",
     lambda p, g: "king" in p["royal_favors"]),
    ("[]", lambda p, g: []),
    ("{}", lambda p, g: {}),
]


@pytest.fixture(scope="module")
def game(engine: ModuleType) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(engine.dumps(engine.new_game(3, (), seed=1)))
    state["players"][0]["goods"]["gold"] = 4
    state["players"][0]["stores"]["cloth"] = 2
    return state


@pytest.fixture(scope="module")
def prep(compiled: Any) -> interp_steps.Prepared:
    return interp_steps.prepare(compiled.base.model)


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_checked_expression_means_what_the_saved_game_says(
        prep: interp_steps.Prepared, game: dict[str, Any], source: str,
        expected: Callable[[P, P], Any]) -> None:
    node = typed.check(source, prep.scope).node
    got = interp_ir.value(node, interp_ir.Env(prep, game, 0, {}))
    assert got == expected(game["players"][0], game)


def test_a_table_is_gone_through_in_its_kinds_order(prep: interp_steps.Prepared,
                                                    game: dict[str, Any]) -> None:
    order = prep.scope.kind_values.get("business")
    got = interp_ir.value(typed.check("[b for b in goods]", prep.scope).node,
                          interp_ir.Env(prep, game, 0, {}))
    goods = game["players"][0]["goods"]
    assert got == ([b for b in order if b in goods] if order is not None else sorted(goods))


def test_a_comprehension_puts_back_the_local_it_names(prep: interp_steps.Prepared,
                                                      game: dict[str, Any]) -> None:
    scope = prep.scope.with_locals(c=typed.Name(typed.INT, ir.Local("c")))
    frame = {"c": 7}
    got = interp_ir.value(typed.check("[c + 1 for c in hand]", scope).node,
                          interp_ir.Env(prep, game, 0, frame))
    assert got == [c + 1 for c in game["players"][0]["hand"]]
    assert frame == {"c": 7}


def test_a_table_that_may_lack_a_key_reads_its_default(prep: interp_steps.Prepared,
                                                       game: dict[str, Any]) -> None:
    env = interp_ir.Env(prep, game, 0, {})
    entry = ir.Get(ir.GameField("favors"), ir.Lit("nobody"), ir.Lit(0))
    assert interp_ir.value(entry, env) == 0
    assert interp_ir.value(ir.Get(ir.EmptyTable(), ir.Lit(1), ir.ListOf(())), env) == []


def test_a_slot_reads_what_it_is_given(prep: interp_steps.Prepared,
                                       game: dict[str, Any]) -> None:
    stores = game["players"][0]["stores"]
    assert interp_steps.name_value(prep.model, game, 0, "stores", "cloth") == stores["cloth"]
    with pytest.raises(interp_steps.StepsError, match="no value is given"):
        interp_ir.value(ir.Slot("item"), interp_ir.Env(prep, game, 0, {}))


def test_a_local_without_a_value_is_an_error_of_the_interpreter(
        prep: interp_steps.Prepared, game: dict[str, Any]) -> None:
    with pytest.raises(interp_steps.StepsError, match="has no value"):
        interp_ir.value(ir.Local("nowhere"), interp_ir.Env(prep, game, 0, {}))
