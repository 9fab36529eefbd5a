"""The IR's expressions: what the checker builds from the rules' text, as the IR's own notation
shows it (`ir/show.py`) and as the Python back end prints it (`pyprint/expr.py`); every checked
expression of the shipped rules prints as Python that compiles, and every node class is built
by the checker and handled by both printers."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.show import show
from lisboa_rules.lang import typed
from lisboa_rules.model.procs import Tables, checked_expressions, state_scope, with_formulas
from lisboa_rules.pyprint import expr as pyprint


@pytest.fixture(scope="module")
def scope(compiled: Any) -> typed.Scope:
    m = compiled.base.model
    base = state_scope(m.state, m.data, m.procs.measures, Tables())
    return with_formulas(base, m.data["vocabulary"]["names"])


CASES = [
    # source, the IR shown, the Python printed
    ("reis + 1", "(+ player.reis 1)", "(p.reis + 1)"),
    ("-reis", "(neg player.reis)", "(-p.reis)"),
    ("not (reis > 2)", "(not (> player.reis 2))", "(not (p.reis > 2))"),
    ("sum(goods)", "(sum (values player.goods))", "sum(p.goods.values())"),
    ("len(hand)", "(len player.hand)", "len(p.hand)"),
    ("[c for c in hand if c > 0]", "(each c in player.hand where (> c 0) gives c)",
     "[v_c for v_c in p.hand if (v_c > 0)]"),
    ("first(hand)", "(first player.hand)", "p.hand[0]"),
    ("first([c for c in hand if c > 0])",
     "(first (each c in player.hand where (> c 0) gives c))",
     "next(v_c for v_c in p.hand if (v_c > 0))"),
    ("game.favors", "game.favors", "g.favors"),
    ("cost('visit-cost', other_officials=2)", "(cost visit-cost other_officials=2)",
     'g.rs.costs["visit-cost"](g, p, _ctx_other_officials(2))'),
    ("max(1, reis)", "(max 1 player.reis)", "max(1, p.reis)"),
    ("reis if reis > 0 else 0", "(if (> player.reis 0) player.reis 0)",
     "(p.reis if (p.reis > 0) else 0)"),
    ("{}", "(table)", "{}"),
    ("[1, 2]", "(list 1 2)", "[1, 2]"),
    ("range(3)", "(range 3)", "_range(3)"),
    ("reversed(hand)", "(reversed player.hand)", "list(reversed(p.hand))"),
    ("1 < reis <= 3", "(chain 1 < player.reis <= 3)", "(1 < p.reis and p.reis <= 3)"),
    ("reis % 2 // 1 * 3 - 1", "(- (* (// (% player.reis 2) 1) 3) 1)",
     "((((p.reis % 2) // 1) * 3) - 1)"),
    ("None", "none", "None"),
    ("'x'", '"x"', '"x"'),
    # a constant of the rules folded away: `x and True` is x, `x or True` is True
    ("reis > 0 and True", "(> player.reis 0)", "(p.reis > 0)"),
    ("reis > 0 or True", "true", "True"),
]


@pytest.mark.parametrize(("source", "shown", "code"), CASES)
def test_the_checker_builds_the_ir_and_the_printer_prints_it(
    scope: typed.Scope, source: str, shown: str, code: str
) -> None:
    t = typed.check(source, scope)
    assert show(t.node) == shown
    assert pyprint.expr(t.node, names_of(scope)) == code


def test_every_checked_expression_of_the_rules_prints_as_python_that_compiles(
    compiled: Any,
) -> None:
    m = compiled.base.model
    found = checked_expressions(m.procs, m.state, m.data)
    scope_of = state_scope(m.state, m.data, m.procs.measures, Tables())
    seen: set[type] = set()
    count = 0
    for checked in found.values():
        for c in checked:
            compile(pyprint.expr(c.typed.node, names_of(scope_of)), "<ir>", "eval")
            text = show(c.typed.node)
            assert text.count("(") == text.count(")"), text
            seen |= {type(n) for n in ir.walk(c.typed.node)}
            count += 1
    assert count > 300  # every procedure and action of the game
    # the rules use most kinds of node (the rest are built by the cases above)
    assert {ir.PlayerField, ir.GameField, ir.Column, ir.Local, ir.Compare, ir.Data,
            ir.Measure, ir.Cost} <= seen


def test_every_node_class_is_built_by_the_checker(scope: typed.Scope, compiled: Any) -> None:
    """Each class of the `Expr` union comes out of the checker for some expression of the
    cases above, a measure, a query argument or a per-item name (none is dead)."""
    built: set[type] = set()
    for source, _, _ in CASES:
        built |= {type(n) for n in ir.walk(typed.check(source, scope).node)}
    for name in scope.measures.values():
        built |= {type(n) for n in ir.walk(name.ref)}
    both = typed.check("reis > 0 and len(rules.nobles.nobles.id) > 0", scope)
    assert show(both.node) == "(and (> player.reis 0) (> (len rules.nobles.nobles.id) 0))"
    built |= {type(n) for n in ir.walk(both.node)}
    types = typed.check("[c.type for c in hand]", scope)
    assert show(types.node) == "(each c in player.hand gives (column card.type c))"
    built |= {type(n) for n in ir.walk(types.node)}
    hand_order = typed.check("[n for n in game.favors]", scope).node
    built |= {type(n) for n in ir.walk(hand_order)}
    entry = typed.check("markers['king']", scope)  # a table that may not hold the key
    assert show(entry.node) == '(at player.markers "king" else 0)'
    assert pyprint.expr(entry.node, names_of(scope)) == 'p.markers.get("king", 0)'
    built |= {type(n) for n in ir.walk(entry.node)}
    m = compiled.base.model
    from lisboa_rules.model.procs import vocab_nodes

    for _, node in vocab_nodes(m.data["vocabulary"]["names"], scope).values():
        built |= {type(n) for n in ir.walk(node)}
    built |= {type(scope.locals["seat"].ref)}  # the acting seat of a procedure's scope
    from lisboa_rules.model.queries import compile_queries

    queries, problems = compile_queries(m.data["vocabulary"].get("queries") or [], m.state,
                                        scope)
    assert not problems
    for q in queries:  # a query reads its arguments
        built |= {type(n) for n in ir.walk(q.value)}
    assert set(typing.get_args(ir.Expr)) - built == set()


def test_a_name_prints_what_it_reads(scope: typed.Scope) -> None:
    assert pyprint.expr(scope.player["reis"].ref) == "p.reis"
    assert pyprint.expr(scope.game["favors"].ref) == "g.favors"
    assert pyprint.expr(scope.locals["seat"].ref) == "seat"
    other = typed.check("[q.reis for q in game.players]", scope)
    assert pyprint.expr(other.node, names_of(scope)) == "[v_q.reis for v_q in g.players]"
    assert show(other.node) == "(each q in game.players gives q.reis)"


def test_a_measure_in_place_keeps_its_brackets(scope: typed.Scope) -> None:
    """`2 * warehouse_room` is twice the whole measure (6 + rubble sets - goods), not
    `2 * 6 + ... - goods`: a measure printed in place is bracketed like any compound node."""
    import ast
    from types import SimpleNamespace

    t = typed.check("2 * warehouse_room", scope)
    code = pyprint.expr(t.node, names_of(scope))
    tree = ast.parse(code, mode="eval").body
    assert isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult)
    assert isinstance(tree.right, ast.BinOp) and isinstance(tree.right.op, ast.Sub)
    player = SimpleNamespace(rubble_sets=1, goods={"a": 2, "b": 1})
    assert eval(code, {}, {"p": player}) == 2 * (6 + 1 - 3)  # the engine's own code


def test_the_quick_children_are_the_matched_ones(scope: typed.Scope, compiled: Any) -> None:
    """`children` finds the children of the commonest classes by a table (`_QUICK`), the rest
    by the match of `_children`: both give the same nodes for every node of the rules' checked
    expressions and of the cases above, and every class of the table is among them."""
    m = compiled.base.model
    roots = [c.typed.node for checked in checked_expressions(m.procs, m.state, m.data).values()
             for c in checked]
    roots += [typed.check(source, scope).node for source, _, _ in CASES]
    seen: set[type] = set()
    for root in roots:
        for node in ir.walk(root):
            assert ir.children(node) == ir._children(node), node
            seen.add(type(node))
    for cls, quick in ir._QUICK.items():
        if quick is ir._none:  # a class with no children: the match says so of any of them
            assert ir._children(object.__new__(cls)) == (), cls
        else:
            assert cls in seen, cls
