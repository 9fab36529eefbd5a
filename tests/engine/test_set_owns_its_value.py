"""A `set:` step gives the state a value, not a place: a list or a table read from another
field (or from the rules' data) is copied as it is set, so no two places of a state share one
list. Before, `set: {game.discard_queue: game.pending_markers}` printed
`g.discard_queue = g.pending_markers`: popping one popped the other, and a saved and loaded
game (where they are two lists) played on differently from the live one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_differential import engine_from_text

from lisboa_rules import pipeline
from lisboa_rules.emit.engine.lower import owned
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import INT, VType, list_of

ROOT = Path(__file__).resolve().parents[2]

# a house rule whose take-decree Noble action ends by setting one list of seats to another
SHARING = """\
kind: variant
id: shared-queue
title: A shared queue
applies: chosen
text: >-
  After taking Decrees, the seats still to discard are the seats still to place a marker.
source: [seed:001#take-a-decree]
changes:
  nobles:
    noble_actions:
      - id: take-decree
        steps:
          - $add: true
            $after: take-decree.take
            id: take-decree.same-queue
            set: {game.discard_queue: game.pending_markers}
            text: The seats still to discard are the seats still to place a marker.
"""


def test_a_list_read_from_elsewhere_is_copied_as_it_is_set() -> None:
    seats = list_of(VType("seat"))
    field = ir.GameField("pending_markers")
    assert owned(seats, field, "g.pending_markers") == "list(g.pending_markers)"
    table = VType("map", (VType("noble"), list_of(INT)))
    assert owned(table, ir.GameField("piles"), "g.piles") == \
        "{k0: list(v0) for k0, v0 in g.piles.items()}"
    maybe = VType("list", (INT,), optional=True)
    assert owned(maybe, ir.Local("x"), "v_x") == "None if v_x is None else list(v_x)"
    assert owned(INT, ir.Local("x"), "v_x") == "v_x"  # a number is never shared
    # a list the value makes itself is its own already
    assert owned(seats, ir.ListOf(()), "[]") == "[]"
    assert owned(seats, ir.Call("sorted", (field,)), "sorted(g.x)") == "sorted(g.x)"
    # ... unless it holds lists: those are copied too
    nested = list_of(list_of(INT))
    assert owned(nested, ir.ListOf((field,)), "[g.x]") == "[list(v0) for v0 in [g.x]]"


@pytest.fixture(scope="module")
def sharing(tmp_path_factory: pytest.TempPathFactory) -> object:
    house = tmp_path_factory.mktemp("house") / "shared-queue.yaml"
    house.write_text(SHARING, encoding="utf-8")
    result = pipeline.compile_rules(ROOT / "rules", ("shared-queue",), extra=[house])
    assert result.ok, [d.message for d in result.diagnostics]
    return engine_from_text(result.files["lisboa_engine.py"], "lisboa_engine_shared_queue")


def test_fields_set_from_one_another_stay_two_lists(sharing: object) -> None:
    """Random games of the house rule: after every move the two fields are two lists, and a
    game saved and loaded plays on exactly as the live one (the same moves listed, the same
    states after the same moves)."""
    E: object = sharing
    took = 0
    for seed in range(3):
        rng = random.Random(seed)
        g = E.new_game(3, (), seed)  # type: ignore[attr-defined]  (built folded in)
        while g.phase != "over":
            moves = E.legal_moves(g)  # type: ignore[attr-defined]
            move = rng.choice(moves)
            loaded = E.from_json(E.to_json(g))  # type: ignore[attr-defined]
            g = E.apply_move(g, move)  # type: ignore[attr-defined]
            assert g.discard_queue is not g.pending_markers
            after = E.apply_move(loaded, move)  # type: ignore[attr-defined]
            assert E.to_json(after) == E.to_json(g)  # type: ignore[attr-defined]
            took += bool(move.decrees)  # the take-decree Noble action ran, and the step
    assert took > 0


def test_a_new_player_s_given_list_is_its_own() -> None:
    """The setup's `new` step gives a new player's fields as `set:` gives a field: a list read
    from elsewhere is copied (the checker keeps each given field's declared type for it)."""
    from lisboa_rules.emit.engine.lower import Printer
    from lisboa_rules.ir import stmt as S
    from lisboa_rules.pyprint import expr as pyprint

    at = S.At(("flow", "setup", "steps", 0), "new")
    place = S.Place(ir.GameField("players"), list_of(VType("player")), field="game.players")
    given = (("ships", ir.GameField("ships")), ("color", ir.Local("c")))
    step = S.New(at, place, given, (list_of(INT), VType("color")))
    printer = Printer(pyprint.PLAIN, lambda p: p, lambda path: "rules/flow.yaml:1")
    out: list[str] = []
    printer.effect(step, 0, out)
    made = [line for line in out if "Player(" in line]
    assert made and "ships=list(g.ships)" in made[0] and "color=v_c" in made[0], out


def test_a_chosen_value_is_bracketed_where_the_copy_reads_it() -> None:
    """`a if c else b` binds less tightly than `in`, `.items()` and `is`: the copy of such a
    value brackets it there, and the printed copy is the value's copy whichever is chosen."""
    cond = ir.Cond(ir.Local("c"), ir.Local("a"), ir.Local("b"))
    code = "v_a if v_c else v_b"
    nested = list_of(list_of(INT))
    table = VType("map", (VType("noble"), list_of(INT)))
    maybe = VType("list", (INT,), optional=True)
    a, b = [[1], [2, 3]], [[4]]
    for t, values in ((nested, (a, b)), (table, ({"x": [1]}, {"y": [2]})), (maybe, (None, [5]))):
        printed = owned(t, cond, code)
        for c in (True, False):
            env = {"v_a": values[0], "v_b": values[1], "v_c": c}
            got = eval(printed, env)  # the printed copy, in a test
            want = values[0] if c else values[1]
            assert got == want, (printed, c)
            assert got is None or got is not want, printed
