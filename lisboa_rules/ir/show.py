"""The IR as text for people debugging a rule (`lisboa-rules ir`): one node per parenthesised
form, `(op operand ...)`, in no target's syntax. Names are the rules' names: a local as it is
written, `player.reis`, `game.favors`, `rules.game.rubble.cubes_per_set`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import VType


def value(v: Any) -> str:
    """A constant of the rules: a number, true/false, a quoted text, none, a list or table."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list | tuple):
        return "[" + " ".join(value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + " ".join(f"{value(k)}: {value(x)}" for k, x in v.items()) + "}"
    return str(v)


def vtype(t: VType) -> str:
    return str(t)


def show(node: ir.Expr) -> str:
    """The node in the IR's own notation."""
    match node:
        case ir.Lit(value=v):
            return value(v)
        case ir.Data(value=v, path=path):
            return ".".join(path) if path else value(v)
        case ir.Local(name=name) | ir.Arg(name=name):
            return name
        case ir.Seat():
            return "seat"
        case ir.Me():
            return "player"
        case ir.Slot(name=name):
            return f"?{name}"
        case ir.Context(name=name):
            return f"context.{name}"
        case ir.PlayerField(field=f, of=of):
            return f"{show(of)}.{f}"
        case ir.GameField(field=f):
            return f"game.{f}"
        case ir.Column(kind=kind, column=col, key=key):
            return f"(column {kind}.{col} {show(key)})"
        case ir.Measure(id=mid):
            return f"(measure {mid})"
        case ir.Index(base=b, key=k):
            return f"(at {show(b)} {show(k)})"
        case ir.Get(base=b, key=k, default=d):
            return f"(at {show(b)} {show(k)} else {show(d)})"
        case ir.BinOp(op=op, left=a, right=b):
            return f"({op} {show(a)} {show(b)})"
        case ir.Neg(operand=x):
            return f"(neg {show(x)})"
        case ir.Not(operand=x):
            return f"(not {show(x)})"
        case ir.BoolOp(op=op, values=vs):
            return f"({op} " + " ".join(show(v) for v in vs) + ")"
        case ir.Compare(left=left, ops=ops):
            if len(ops) == 1:
                return f"({ops[0][0]} {show(left)} {show(ops[0][1])})"
            return f"(chain {show(left)} " + " ".join(f"{o} {show(r)}" for o, r in ops) + ")"
        case ir.Cond(test=c, then=a, orelse=b):
            return f"(if {show(c)} {show(a)} {show(b)})"
        case ir.Call(fn=fn, args=args):
            return f"({fn} " + " ".join(show(a) for a in args) + ")"
        case ir.Values(table=t):
            return f"(values {show(t)})"
        case ir.Keys(source=s, is_table=is_table, order=order, full=full):
            if not is_table:
                return show(s)
            how = "sorted" if order is None else "in declared order" + ("" if full else ", held")
            return f"(keys {show(s)} {how})"
        case ir.ListOf(items=items):
            return "(list" + "".join(" " + show(i) for i in items) + ")"
        case ir.EmptyTable():
            return "(table)"
        case ir.Comp(elt=e, var=var, source=s, conds=cs):
            where = "".join(f" where {show(c)}" for c in cs)
            return f"(each {var} in {show(s)}{where} gives {show(e)})"
        case ir.Cost(id=cid, given=given):
            return f"(cost {cid}" + "".join(f" {k}={show(v)}" for k, v in given) + ")"
        case _:
            assert_never(node)
