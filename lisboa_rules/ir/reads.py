"""What an IR expression reads: the locals it names, whether it reads the acting player, the
columns of the rules' tables it reads, and every name of the rules it may read.

Decisions of the compiler that depend on what an expression reads are made here, on the nodes
(never on how a back end prints them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from lisboa_rules.ir import expr as ir


def free_locals(node: ir.Expr) -> set[str]:
    """The locals the expression names that no comprehension inside it binds."""
    if isinstance(node, ir.Local):
        return {node.name}
    if isinstance(node, ir.Comp):  # the one node that binds a name: its own variable
        inner: set[str] = set()
        for x in (node.elt, *node.conds):
            inner |= free_locals(x)
        return free_locals(node.source) | (inner - {node.var})
    out: set[str] = set()
    for c in ir.children(node):
        out |= free_locals(c)
    return out


def locals_named(node: ir.Expr) -> set[str]:
    """Every local the expression names, those its comprehensions bind too."""
    return {x.name for x in ir.walk(node) if isinstance(x, ir.Local)}


def reads(node: ir.Expr, *kinds: type) -> bool:
    """Whether the expression reads a node of one of `kinds` (`ir.Me`, `ir.Seat`, ...),
    the bodies of the measures it reads included."""
    for n in ir.walk(node):
        if isinstance(n, kinds):
            return True
        if isinstance(n, ir.Measure) and reads(n.body, *kinds):
            return True
    return False


def reads_player(node: ir.Expr) -> bool:
    """Whether the expression reads the acting player: a field of theirs, their seat, a cost
    (a cost is paid by the acting player), or a measure that does."""
    return reads(node, ir.Me, ir.Seat, ir.Cost)


def may_need_player(node: ir.Expr) -> bool:
    """Whether code of the expression may be handed the acting player: it reads one of their
    fields, a cost, or any measure (a measure may be printed as a function of the game and
    the player, whatever its body reads)."""
    return any(isinstance(x, ir.Me | ir.Measure | ir.Cost) for x in ir.walk(node))


def columns(node: ir.Expr) -> Iterator[ir.Column]:
    """The reads of a column of the rules' tables in the expression, outermost first."""
    return (x for x in ir.walk(node) if isinstance(x, ir.Column))


def names_read(node: ir.Expr) -> set[str]:
    """Every name of the rules the expression may read (a superset): the locals, arguments,
    slots and contexts it names, the fields of the players and of the game, the measures (by
    id: their bodies are read through their ids), the costs, the kinds and columns of the
    tables."""
    out: set[str] = set()
    for x in ir.walk(node):
        match x:
            case ir.Local(name=name) | ir.Arg(name=name) | ir.Slot(name=name) \
                    | ir.Context(name=name):
                out.add(name)
            case ir.PlayerField(field=f) | ir.GameField(field=f):
                out.add(f)
            case ir.Measure(id=name) | ir.Cost(id=name):
                out.add(name)
            case ir.Column(kind=kind, column=col):
                out |= {kind, col}
            case ir.Lit() | ir.Data() | ir.Seat() | ir.Me() | ir.Index() | ir.Get() | ir.BinOp() \
                    | ir.Neg() | ir.Not() | ir.BoolOp() | ir.Compare() | ir.Cond() | ir.Call() \
                    | ir.Values() | ir.Keys() | ir.ListOf() | ir.EmptyTable() | ir.Comp():
                pass  # no name of its own (its children are walked)
            case _:
                assert_never(x)
    return out
