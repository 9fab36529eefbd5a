"""Conditions of the IR: a condition negated, as a node (a back end prints it)."""

from __future__ import annotations

from lisboa_rules.ir import expr as ir

_FLIP: dict[ir.CmpOpName, ir.CmpOpName] = {
    "in": "not in", "not in": "in", "is": "is not", "is not": "is"}


def negated(node: ir.Expr) -> ir.Expr:
    """`not node`: a membership or a test for None turned around (`a not in b`, `a is not
    None`), anything else under a `Not`."""
    if isinstance(node, ir.Compare) and len(node.ops) == 1 and node.ops[0][0] in _FLIP:
        op, right = node.ops[0]
        return ir.Compare(node.left, ((_FLIP[op], right),))
    return ir.Not(node)
