"""The move generators' constants: a choice from a constant without repeats goes through it
as it is (with repeats, each item still once), and a let that depends only on such a choice
reads a table made at compile time, with the value the expression has for each item, or stays
code (it reads the state, it fails for an item, it reads a second choice). Both are decided on
the IR's nodes (ir/const.py), never on the Python printed for them."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.emit.engine.moves import MovePrinter
from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from lisboa_rules.lang.actions import ActionChecker
from lisboa_rules.lang.typed import Name, Scope

TABLE = {"m": ["a", "b"], "n": ["c"]}
DATA = {"names": ["m", "n"], "pair": ["z", "x"], "nums": [7, 3]}


def _scope(**locals_: Name) -> Scope:
    """A kind `k` whose rows have a list column `col` (the table `_T_k_col`), and constants of
    the rules data."""
    column = (typed.list_of(typed.TEXT), "_T_k_col")
    return Scope(locals=dict(locals_), tables={"k": {"col": column}}, kinds=frozenset({"k"}),
                 data=typed.data_lookup(DATA))


def _checker(tables: dict[str, dict[Any, Any]], scope: Scope | None = None) -> ActionChecker:
    return ActionChecker(scope or _scope(), {}, {}, table_values=tables)


def _compiler(tables: Any, scope: Scope) -> MovePrinter:
    """The move generators' printer of a rule set with these tables (by name)."""
    def column(kind: str, col: str) -> Any:
        found = scope.tables.get(kind, {}).get(col)
        return None if found is None else tables.get(found[1])

    return MovePrinter(names_of(scope), lambda q: q, lambda path: "rules/x.yaml:1", {},
                       table_values=tables, columns=column)


def _bind(comp: MovePrinter, name: str, values: tuple[Any, ...]) -> None:
    """`name` bound by a choice that goes through these constants."""
    comp.binding += 1
    comp.bound_at[name] = comp.binding
    comp.domains[name] = (values, comp.binding)


def _col(key: ir.Expr) -> ir.Column:
    return ir.Column("k", "col", key)


@pytest.mark.parametrize(
    ("keys", "tables", "distinct"),
    [
        (ir.Keys(ir.Data(["a", "b", "c"] * 9), False), {}, False),  # long: named, all the same
        (ir.Keys(ir.Data([f"a{i}" for i in range(30)]), False), {}, True),
        (ir.Keys(ir.Data(["x", "y"]), False), {}, True),
        (ir.Keys(ir.Data(["x", "x"]), False), {}, False),
        (ir.Keys(ir.Data([1, 2, 2]), False), {}, False),
        (ir.Keys(_col(ir.Local("a")), False), {"_T_k_col": {"m": ["a", "b"], "n": ["c"]}}, True),
        (ir.Keys(_col(ir.Local("a")), False), {"_T_k_col": {"m": ["a"], "n": ["c", "c"]}}, False),
        (ir.Keys(_col(ir.Local("a")), False), {"_T_k_col": {"m": [["a"], ["a"]]}}, False),
        (ir.Keys(_col(ir.Local("a")), False), {"_T_k_col": {"m": "ab"}}, False),  # not a list
        (ir.Keys(ir.Column("other", "col", ir.Local("a")), False), {"_T_k_col": {"m": ["a"]}},
         False),  # a table it does not know
        (ir.Keys(ir.PlayerField("hand", ir.Me()), False), {}, False),
        (ir.Keys(ir.ListOf((ir.Lit("a"), ir.Lit("b"))), False), {}, False),
        (ir.Keys(ir.GameField("favors"), True, ("king", "queen")), {}, True),  # a table's keys
        (ir.Keys(ir.GameField("favors"), True, None), {}, True),
    ],
)
def test_a_choice_goes_through_a_constant_as_it_is_only_without_repeats(
    keys: ir.Keys, tables: dict[str, dict[Any, Any]], distinct: bool
) -> None:
    assert _checker(tables)._distinct(keys) is distinct


FIRST = "first([n for n in rules.names if sa in k(n).col])"


@pytest.mark.parametrize(
    ("source", "values", "want"),
    [
        (FIRST, ("a", "b", "c"), {"a": "m", "b": "m", "c": "n"}),
        (f"len(k({FIRST}).col)", ("a", "c"), {"a": 2, "c": 1}),
        ("[x for x in rules.pair if x != sa]", ("x", "y"), {"x": ("z",), "y": ("z", "x")}),
        ("k(sa).col", ("m", "n"), {"m": ("a", "b"), "n": ("c",)}),
    ],
)
def test_a_let_of_a_constant_choice_reads_a_table_made_at_compile_time(
    source: str, values: tuple[Any, ...], want: dict[Any, Any]
) -> None:
    tables: dict[str, dict[Any, Any]] = {"_T_k_col": TABLE}
    bound = Name(typed.TEXT, ir.Local("sa"))
    scope = _scope(sa=bound)
    comp = _compiler(tables, scope)
    _bind(comp, "sa", values)
    node = typed.check(source, scope).node
    got = comp._folded("noble", node)
    assert got is not None
    name = got.removesuffix("[v_sa]")
    assert tables[name] == want
    # the same values again share the table; other values get one of their own
    assert comp._folded("noble", node) == got
    _bind(comp, "sa", values[:1])
    other = comp._folded("noble", node)
    assert other is not None and other != got


def test_a_let_of_a_number_chosen_is_computed_too() -> None:
    tables: dict[str, dict[Any, Any]] = {}
    bound = Name(typed.INT, ir.Local("n"))
    scope = _scope(n=bound)
    comp = _compiler(tables, scope)
    _bind(comp, "n", (1, 2))
    got = comp._folded("x", typed.check("n * 10 - min(rules.nums) // 2", scope).node)
    assert got == "_T_x_by_n[v_n]"
    assert tables["_T_x_by_n"] == {1: 9, 2: 19}


@pytest.mark.parametrize(
    ("source", "values"),
    [
        ("reis + len(k(sa).col)", ("m",)),  # reads the state
        ("sa in blocked", ("a",)),
        ("seat + len(k(sa).col)", ("m",)),  # the acting player's seat
        (FIRST, ("a", "zz")),  # fails for an item (no first)
        ("k(sa).col", ("m", "q")),  # a missing key
        ("sum(range(len(k(sa).col)))", ("m",)),  # range is not computed
        ("k(sa).col if sa == 'm' else other", ("m",)),  # a second choice
        ("[sa]", (None, "m")),  # None (an optional choice) is no key
        ("{} if sa == 'm' else {}", ("m",)),  # a table is no constant of a table
        ("len(rules.names)", ("m",)),  # reads no choice at all
    ],
)
def test_a_let_that_is_not_a_constant_of_the_choice_stays_code(
    source: str, values: tuple[Any, ...]
) -> None:
    tables: dict[str, dict[Any, Any]] = {"_T_k_col": TABLE}
    bound = Name(typed.TEXT, ir.Local("sa"))
    scope = _scope(sa=bound, other=Name(typed.list_of(typed.TEXT), ir.Local("other")),
                   seat=Name(typed.VType("seat"), ir.Seat()))
    scope.player["reis"] = Name(typed.INT, ir.PlayerField("reis", ir.Me()), field="player.reis")
    scope.game["blocked"] = Name(typed.list_of(typed.TEXT), ir.GameField("blocked"),
                                 field="game.blocked")
    comp = _compiler(tables, scope)
    _bind(comp, "sa", values)
    node = typed.check(source, scope).node
    assert comp._folded("noble", node) is None
    assert list(tables) == ["_T_k_col"]


def test_a_let_of_a_choice_bound_again_stays_code() -> None:
    """The name chosen from constants was bound again since (a let, a narrowing): the values
    it may have are not known any more."""
    scope = _scope(sa=Name(typed.TEXT, ir.Local("sa")))  # equal, but another binding
    comp = _compiler({"_T_k_col": TABLE}, scope)
    _bind(comp, "sa", ("a",))
    comp.binding += 1
    comp.bound_at["sa"] = comp.binding  # bound again since
    assert comp._folded("noble", typed.check(FIRST, scope).node) is None


def test_only_a_move_generator_adds_tables() -> None:
    """Without a table of the engine's to add to (the model's own compilation), nothing is
    made."""
    bound = Name(typed.TEXT, ir.Local("sa"))
    scope = _scope(sa=bound)
    comp = _compiler({"_T_k_col": TABLE}.items().mapping, scope)
    _bind(comp, "sa", ("a",))
    assert comp._folded("noble", typed.check(FIRST, scope).node) is None
