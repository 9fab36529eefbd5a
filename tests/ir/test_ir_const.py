"""Decisions made on the IR's nodes, not on the Python they print as: which nodes are constants
and their values (`ir/const.py`), the value of a constant expression computed where the rules
are compiled (the same as the Python printed for it gives), what an expression reads
(`ir/reads.py`) and a condition negated (`ir/logic.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.logic import negated
from lisboa_rules.ir.reads import free_locals, locals_named, may_need_player, names_read
from lisboa_rules.lang import typed
from lisboa_rules.pyprint import expr as pyprint

TABLE = {"m": ["a", "b"], "n": ["c"]}
DATA = {"game": {"ranks": [3, 1, 2], "word": "wig", "tithe": 2, "none": None},
        "names": {"lo": 1, "hi": 5}}


def _scope() -> typed.Scope:
    """A scope with a chosen text `sa`, a number `k`, a kind `row` of rows with a list column
    `col` (the table TABLE), a field of the player and one of the game."""
    return typed.Scope(
        locals={"sa": typed.Name(typed.TEXT, ir.Local("sa")),
                "k": typed.Name(typed.INT, ir.Local("k")),
                "seat": typed.Name(typed.VType("seat"), ir.Seat())},
        player={"reis": typed.Name(typed.INT, ir.PlayerField("reis", ir.Me()),
                                   field="player.reis")},
        game={"favors": typed.Name(typed.VType("map", (typed.VType("noble"), typed.INT)),
                                   ir.GameField("favors"), field="game.favors")},
        tables={"row": {"col": (typed.list_of(typed.TEXT), "_T_row_col")}},
        kinds=frozenset({"row", "noble"}),
        kind_values={"noble": ("king", "queen")},
        data=typed.data_lookup(DATA),
    )


def _columns(kind: str, col: str, key: Any) -> Any:
    assert (kind, col) == ("row", "col")
    return TABLE[key]


def _python(code: str, env: dict[str, Any]) -> Any:
    """What the printed Python gives, with its lists as tuples (a constant's)."""
    got = eval(code, {"_T_row_col": TABLE, **env})  # the printer's own output, in a test

    def tupled(v: Any) -> Any:
        return tuple(tupled(x) for x in v) if isinstance(v, list | tuple) else v
    return tupled(got)


AGREE = [
    "k + 2 * 3 - k // 2 % 3",
    "-k",
    "k > 1 and k < 9",
    "1 < k <= 4",
    "sa in ['a', 'c']",
    "k not in rules.game.ranks",
    "sorted(rules.game.ranks)",
    "reversed(rules.game.ranks)",
    "len([x for x in rules.game.ranks if x > k])",
    "sum(rules.game.ranks) + min(rules.game.ranks) + max(k, 2)",
    "first([x for x in rules.game.ranks if x >= k])",
    "rules.game.word if k > 2 else 'none'",
    "any([x > k for x in rules.game.ranks])",
    "all([x > k for x in rules.game.ranks])",
    "not (k == 3)",
    "[n for n in game.favors]",  # every key of a kind: what the state holds is not read
]


@pytest.mark.parametrize("source", AGREE)
def test_a_constant_expression_has_the_value_its_python_gives(source: str) -> None:
    scope = _scope()
    t = typed.check(source, scope)
    code = pyprint.expr(t.node, names_of(scope))
    for k in (0, 1, 2, 3, 5):
        for sa in ("a", "b"):
            env = {"k": k, "sa": sa}
            py_env = {"v_k": k, "v_sa": sa}
            try:
                want = _python(code, py_env)
            except StopIteration:  # the first of nothing: no constant either
                with pytest.raises(const.NotConstant):
                    const.evaluate(t.node, env, _columns)
                continue
            assert const.evaluate(t.node, env, _columns) == want, (code, env)


def test_a_column_is_read_from_the_tables_given() -> None:
    node = ir.Call("len", (ir.Column("row", "col", ir.Local("sa")),))
    assert const.evaluate(node, {"sa": "m"}, _columns) == 2
    with pytest.raises(const.NotConstant):
        const.evaluate(node, {"sa": "q"}, _columns)  # a key the table does not hold
    with pytest.raises(const.NotConstant):
        const.evaluate(node, {"sa": "m"})  # no tables given


@pytest.mark.parametrize(
    "node",
    [
        ir.PlayerField("reis", ir.Me()),
        ir.GameField("favors"),
        ir.Seat(),
        ir.Arg("x"),
        ir.Measure("m", ir.Lit(1), typed.INT),  # a measure is read for the acting player
        ir.Cost("visit-cost", ()),
        ir.Local("other"),  # a local with no value here
        ir.Call("range", (ir.Lit(3),)),  # computes more than the rules hold
        ir.Call("first", (ir.ListOf(()),)),  # the first of nothing
        ir.Call("first", (ir.Comp(ir.Local("x"), "x", ir.Keys(ir.ListOf(()), False), ()),)),
        ir.BinOp("//", ir.Lit(1), ir.Lit(0)),
        ir.Call("min", (ir.ListOf(()),)),
        ir.BinOp("*", ir.ListOf((ir.Lit(1),)), ir.Lit(3)),  # numbers only: no repetition
        ir.Get(ir.ListOf(()), ir.Lit(0), ir.Lit(0)),  # a list is no table
        ir.Index(ir.Data({"a": 1}), ir.Lit("b")),
    ],
    ids=repr,
)
def test_what_reads_the_state_or_fails_is_no_constant(node: ir.Expr) -> None:
    with pytest.raises(const.NotConstant):
        const.evaluate(node, {"sa": "m"}, _columns)


def test_first_of_a_comprehension_goes_no_further_than_its_first_item() -> None:
    # the second item would fail (no row "q"): the first is found before it
    found = ir.Comp(ir.Local("n"), "n", ir.Keys(ir.Data(["m", "q"]), False),
                    (ir.Compare(ir.Lit("a"), (("in", ir.Column("row", "col", ir.Local("n"))),)),))
    assert const.evaluate(ir.Call("first", (found,)), {}, _columns) == "m"
    with pytest.raises(const.NotConstant):
        const.evaluate(found, {}, _columns)  # the whole list reads "q" too


def test_constants_and_their_values() -> None:
    assert const.scalar(ir.Lit("x")) == "x"
    assert const.scalar(ir.Data(None)) is None
    assert const.scalar(ir.Data(True)) is True
    assert const.scalar(ir.Neg(ir.Data(3))) == -3
    for node in (ir.Data([1]), ir.Neg(ir.Neg(ir.Lit(1))), ir.Local("x"),
                 ir.BinOp("+", ir.Lit(1), ir.Lit(2))):
        with pytest.raises(const.NotConstant):
            const.scalar(node)
    assert const.integer(ir.Lit(4)) == 4
    assert const.integer(ir.Neg(ir.Lit(4))) == -4
    assert const.integer(ir.Lit(True)) is None  # true/false is no number here
    assert const.integer(ir.Lit("4")) is None
    assert const.sequence(ir.Data(["a", ["b"]])) == ("a", ("b",))
    assert const.sequence(ir.Keys(ir.Data([1, 2]), False)) == (1, 2)
    assert const.sequence(ir.Keys(ir.GameField("favors"), True, ("king", "queen"))) \
        == ("king", "queen")
    assert const.sequence(ir.Keys(ir.GameField("favors"), True, ("king",), False)) is None
    assert const.sequence(ir.Keys(ir.GameField("favors"), True, None)) is None
    assert const.sequence(ir.ListOf((ir.Lit(1),))) is None


def test_what_an_expression_reads() -> None:
    scope = _scope()
    comp = typed.check("[x for x in rules.game.ranks if x > k]", scope).node
    assert free_locals(comp) == {"k"}
    assert locals_named(comp) == {"x", "k"}
    assert not may_need_player(comp)
    assert may_need_player(typed.check("reis > k", scope).node)
    assert may_need_player(ir.Measure("m", ir.Lit(1), typed.INT))
    assert may_need_player(ir.Cost("c", ()))
    assert names_read(typed.check("reis + len(game.favors) + k", scope).node) \
        == {"reis", "favors", "k"}
    assert names_read(ir.Column("row", "col", ir.Measure("wigs", ir.Lit(0), typed.INT))) \
        == {"row", "col", "wigs"}


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("sa in ['a']", 'v_sa not in ["a"]'),
        ("sa not in ['a']", 'v_sa in ["a"]'),
        ("k > 2", "not (v_k > 2)"),
        ("not (k > 2)", "not (not (v_k > 2))"),
        ("k > 2 and k < 4", "not ((v_k > 2) and (v_k < 4))"),
        ("1 < k < 3", "not (1 < v_k and v_k < 3)"),
    ],
)
def test_a_condition_negated(source: str, code: str) -> None:
    scope = _scope()
    node = negated(typed.check(source, scope).node)
    assert pyprint.bare(pyprint.expr(node, names_of(scope))) == code
    k_values = [0, 2, 3, 5]
    for k in k_values:
        env = {"k": k, "sa": "a"}
        assert const.evaluate(node, env) is (not const.evaluate(
            typed.check(source, scope).node, env))


def test_an_optional_local_negated_is_a_test_for_none() -> None:
    node = negated(ir.Compare(ir.Local("x"), (("is", ir.Lit(None)),)))
    assert pyprint.bare(pyprint.expr(node)) == "v_x is not None"
