"""The step and action compilers decide on the IR's nodes, never on the Python they printed:
an entry of a table that may be missing is an `ir.Get` (written in place as a subscript, made
with `setdefault` when a move puts items into it, popped when dropped), a set's value is a
number as it is when it is a constant one, a long `a if c else b` is an `ir.Cond`, a refusal's
value is shown as a constant of the rules when its node is one, a negated condition is built
as a node, the procedures a `do: EXPR` may name are the values of the columns it reads, a
guard's answers are kept by the values it is given, and a move generator's moves are slots the
back end writes (with keywords by default, positionally in the engine)."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.emit.engine.lower import Emitted
from lisboa_rules.emit.engine.moves import MOVE_SLOT, ActionCode, MovePrinter
from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.emit.engine.procs import _padded, positional_move
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import steps as st
from lisboa_rules.lang import typed
from lisboa_rules.lang.actions import Action, ActionChecker
from lisboa_rules.lang.typed import INT, TEXT, Name, Scope, VType
from lisboa_rules.pyprint import expr as pyprint

NOBLE = VType("noble")
CARD = VType("card")


def _scope() -> Scope:
    """The acting player's réis (0 up), markers by noble and piles of cards by noble (tables
    that may not hold a noble), hand; the game's deck; a kind `card` whose rows name an
    `action` (the table `_T_card_action`); a text of the rules data."""
    def field(name: str, t: VType, lo: int | None = None) -> Name:
        return Name(t, ir.PlayerField(name, ir.Me()), lo, None, "player." + name)

    return Scope(
        locals={"seat": Name(VType("seat"), ir.Seat())},
        player={"reis": field("reis", INT, 0),
                "markers": field("markers", VType("map", (NOBLE, INT), full=False)),
                "piles": field("piles", VType("map", (NOBLE, typed.list_of(CARD)), full=False)),
                "hand": field("hand", typed.list_of(CARD))},
        game={"deck": Name(typed.list_of(CARD), ir.GameField("deck"), field="game.deck")},
        tables={"card": {"action": (TEXT, "_T_card_action")}},
        kinds=frozenset({"noble", "card"}),
        data=typed.data_lookup({"game": {"word": "the King's", "tithe": 2}}),
    )


def _printer(procs: dict[str, Any] | None = None) -> MovePrinter:
    return MovePrinter(names_of(_scope()), lambda q: q.replace("-", "_"),
                       lambda path: "rules/x.yaml:1", procs or {})


def _compile(raw: list[Any], params: tuple[st.Param, ...] = ()) -> Emitted:
    problems: list[st.StepProblem] = []
    steps = st.parse_steps(raw, ("effects", "x", "steps"), problems)
    assert not problems
    checker = st.StepChecker(_scope(), {}, {})
    proc = checker.check(st.Procedure("x", params, steps, "rule.x"))
    assert not checker.problems, checker.problems
    return _printer().procedure(proc)


def _run(raw: list[Any], params: tuple[st.Param, ...] = ()) -> list[str]:
    """The effects' lines, without their comments."""
    return [x.strip() for x in _compile(raw, params).run[1:]
            if not x.strip().startswith("#") and x.strip() != "p = g.players[seat]"]


NOBLE_PARAM = (st.Param("n", NOBLE),)


def test_an_entry_that_may_be_missing_is_written_in_place() -> None:
    assert _run([{"set": {"markers[n]": 2}}], NOBLE_PARAM) == ["p.markers[v_n] = 2"]
    assert _run([{"gain": {"markers[n]": 1}}], NOBLE_PARAM) \
        == ["p.markers[v_n] = min(_INT_MAX, p.markers.get(v_n, 0) + 1)"]
    assert _run([{"drop": "markers[n]"}], NOBLE_PARAM) == ["p.markers.pop(v_n, None)"]


def test_a_list_a_move_puts_items_into_is_made() -> None:
    assert _run([{"move": {"top": 1, "from": "game.deck", "to": "piles[n]"}}], NOBLE_PARAM) == [
        "for _ in range(min(1, len(g.deck))):",
        "p.piles.setdefault(v_n, []).append(g.deck.pop())",
    ]
    # an entry taken from stays a read (nothing is made for it)
    assert _run([{"move": {"all": True, "from": "piles[n]", "to": "hand"}}], NOBLE_PARAM) == [
        "p.hand.extend(p.piles.get(v_n, []))", "p.piles.get(v_n, []).clear()"]


@pytest.mark.parametrize(
    ("value", "line"),
    [
        (3, "p.reis = 3"),  # (below the declared 0 it is refused: test_set_literals.py)
        ("rules.game.tithe", "p.reis = 2"),
        (0, "p.reis = 0"),
        ("reis + 1", "p.reis = min(_INT_MAX, max(0, p.reis + 1))"),  # computed: clamped
        ("1 + 1", "p.reis = min(_INT_MAX, max(0, 1 + 1))"),
    ],
)
def test_a_number_set_as_it_is_only_when_it_is_a_constant_one(value: Any, line: str) -> None:
    assert _run([{"set": {"reis": value}}]) == [line]


def test_a_long_conditional_let_is_an_if_statement() -> None:
    long = " + ".join(["reis"] * 12)
    lines = _run([{"let": {"x": f"{long} if reis > 2 else 0"}}, {"set": {"reis": "x"}}])
    total = "p.reis"
    for _ in range(11):
        total = f"({total} + p.reis)"
    assert lines[:4] == ["if p.reis > 2:", f"v_x = {pyprint.bare(total)}", "else:", "v_x = 0"]


def test_a_refusal_shows_a_constant_of_the_rules_as_its_words() -> None:
    why = _compile([{"require": "reis > 0",
                     "reason": "{rules.game.word} tithe is {rules.game.tithe}, "
                               "you have {reis}{0}"}]).why
    assert why[-2].strip() == ('return ("rule.x", ("the King\'s" + " tithe is " + "2" '
                               '+ ", you have " + str(p.reis) + "0"))')


def test_a_condition_negated_is_built_on_its_node() -> None:
    scope = _scope()
    printer = _printer()
    assert printer.negate(typed.check("n in hand", scope.with_locals(
        n=Name(CARD, ir.Local("n")))).node) == "v_n not in p.hand"
    assert printer.negate(typed.check("reis > 1", scope).node) == "not (p.reis > 1)"


# -- the move generators -------------------------------------------------------------------


def _action_checker(tables: dict[str, dict[Any, Any]],
                    procs: dict[str, st.Procedure] | None = None) -> ActionChecker:
    return ActionChecker(_scope(), procs or {}, {}, table_values=tables)


def _proc(pid: str) -> st.Procedure:
    return st.Procedure(pid, (), (), "rule." + pid)


def test_the_procedures_a_value_may_name_are_those_of_the_columns_it_reads() -> None:
    procs = {p: _proc(p) for p in ("tax", "gift", "treasury", "other")}
    comp = _action_checker({"_T_card_action": {1: "tax", 2: "gift", 3: "nothing"},
                             "_T_unread": {1: "other"}}, procs)
    scope = _scope().with_locals(c=Name(CARD, ir.Local("c")))
    read = typed.check("c.action", scope).node
    assert comp._candidates(read) == {"tax", "gift"}
    either = typed.check("c.action if reis > 0 else 'treasury'", scope).node
    assert comp._candidates(either) == {"tax", "gift", "treasury"}
    # through a let: the value of `a` is the column's
    comp.let_sources["a"] = read
    assert comp._candidates(ir.Local("a")) == {"tax", "gift"}
    # a value not read plainly: the procedures of every column it reads
    assert comp._candidates(ir.Cond(ir.Compare(ir.Local("a"), (("==", ir.Lit("x")),)),
                                    ir.Lit("gift"), ir.Local("b"))) == {"tax", "gift"}
    # a value that reads no column: every procedure some table names
    assert comp._candidates(ir.Arg("x")) == {"tax", "gift", "other"}


def test_a_guard_is_asked_once_per_value_of_locals_and_constants_only() -> None:
    comp = _printer()
    out: list[str] = []
    comp.main_out = out
    scope = _scope().with_locals(c=Name(CARD, ir.Local("c")))
    env = {"c": CARD, "h": typed.list_of(CARD)}

    def given(*sources: str) -> tuple[ir.Expr, ...]:
        return tuple(typed.check(x, scope).node for x in sources)

    assert comp._guard_key(out, given("c", "seat", "3", "-3", "'x'"), env) \
        == '(v_c, seat, 3, -3, "x",)'
    assert comp._guard_key(out, (ir.Lit(None),), env) == "(None,)"
    assert comp._guard_key(out, given("c", "reis"), env) is None  # a field of the state
    assert comp._guard_key(out, given("hand"), env) is None
    assert comp._guard_key(out, (ir.Local("h"),), env) is None  # a local list: no key
    assert comp._guard_key(out, (), env) is None
    assert comp._guard_key([], given("c"), env) is None  # not the function that lists moves


def test_a_generator_s_moves_are_slots_the_back_end_writes() -> None:
    problems: list[st.StepProblem] = []
    steps = st.parse_steps([{"choose": {"as": "card", "from": "hand"}},
                            {"choose": {"as": "pile", "from": "rules.game.nobles"}}],
                           ("actions", "take", "steps"), problems)
    comp = _action_checker({})
    comp.scope = _scope()
    comp.scope.data = typed.data_lookup({"game": {"nobles": ["king", "queen"]}})
    checked = comp.check_action(Action("take", "main", steps, "rule.take"))
    assert not problems and not comp.problems
    got = _printer().action(checked, "take")
    made = [x for f in got.functions for x in f if "out.append(" in x]
    assert [x.strip() for x in made] == [f"out.append({MOVE_SLOT.format(0)})"]
    assert got.moves == [("card", "pile")]
    keyword = [x.strip() for f in got.lines() for x in f if "out.append(Move" in x]
    assert keyword == ['out.append(Move("take", seat, card=v_card, pile=v_pile))']
    fields = {"card": "integer", "other": "strings", "pile": "string", "last": "boolean"}
    positional = [x.strip() for f in got.lines(
        lambda kind, chosen: positional_move(kind, chosen, fields)) for x in f
        if "out.append((" in x]
    assert [_padded(x, fields) for x in positional] == [
        'out.append(("take", seat, v_card, (), v_pile, False))']


def test_a_move_generator_makes_a_move_s_code_the_fields_not_chosen_as_their_defaults() -> None:
    """A generator makes each move as its code (the tuple of a Move's fields in order), one
    tuple written whole: the choices up to the last one made, then the defaults of the places
    after it, of every rule set's fields (known only once they are all printed)."""
    fields = {"a": "integer", "b": "strings", "c": "boolean"}
    made = [positional_move("k", (), fields), positional_move("k", ("c",), fields),
            positional_move("k", ("a",), fields)]
    assert [_padded(code, fields) for code in made] == [
        '("k", seat, None, (), False)', '("k", seat, None, (), v_c)', '("k", seat, v_a, (), False)']
    more = {**fields, "d": "string"}  # a later rule set's field: every code gets it too
    assert _padded(made[1], more) == '("k", seat, None, (), v_c, None)'


def test_an_action_code_without_slots_is_its_functions() -> None:
    code = ActionCode([["def f():", "    pass"]], (), kind="k")
    assert code.lines() == [["def f():", "    pass"]]


# -- what a printed function names, decided as it is printed ----------------------------------


def test_the_acting_player_is_read_only_by_a_function_whose_code_names_them() -> None:
    """`p = g.players[seat]` is printed where an expression printed names the player (a field
    of theirs, a measure's function, a cost), and left out elsewhere: decided on the nodes
    printed, not by reading the function's text (words that say "p" do not count)."""
    mine = _compile([{"require": "len(game.deck) > 0", "reason": "a p of words"},
                     {"set": {"reis": 1}}])
    assert "    p = g.players[seat]" not in mine.opts  # the guard reads the game alone
    assert "    p = g.players[seat]" not in mine.why  # words saying "p" read nobody
    assert "    p = g.players[seat]" in mine.run  # the effects write the player's réis


def test_a_local_that_may_be_none_is_typed_where_the_function_first_names_it() -> None:
    """mypyc refuses a local it infers as None, mypy a second annotation: `: Any` on the
    first line that names the local, and only there."""
    run = _run([{"let": {"x": "first(hand) if len(hand) > 0 else None"}},
                {"let": {"x": "first(hand) if reis > 0 else None"}},
                {"set": {"reis": "1 if x is None else 2"}}])
    assert [x.split(" = ")[0] for x in run[:2]] == ["v_x: Any", "v_x"]
