"""What a number of the IR can be: an interval that holds for every value an expression takes.

A number the rules read has bounds: a field of the state its declared `min` and `max` (they
hold for the ints a list or table of it holds too), a constant of the rules its value, a local
what it was bound to. Walking an expression with these gives an interval that holds for every
value it can take (over-approximated: `ANY` where nothing is known). The checks that an
operation is total (`lang/total.py`: a divisor that cannot be 0, a list index within the list)
read it. Bounds are whole numbers, or the floats -inf/+inf for "unbounded" (never any other
float, so the arithmetic on finite bounds stays exact).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.ir import expr as ir

Bound = int | float
Interval = tuple[Bound, Bound]
INF = float("inf")
ANY: Interval = (-INF, INF)
BOOL: Interval = (0, 1)

# the values of a column of a kind's rows ((kind, column) -> {id: value}), or None
ColumnValues = Callable[[str, str], Mapping[Any, Any] | None]


@dataclass(frozen=True)
class Known:
    """What the bounds of an expression are read from: each declared field's (`player.X`,
    `game.X`), each local's, and what is known of whole expressions (an earlier `require
    x > 0`: `x` is at least 1), by node."""

    fields: Mapping[str, Interval] = field(default_factory=dict)
    locals: Mapping[str, Interval] = field(default_factory=dict)
    nodes: Callable[[ir.Expr], Interval | None] | None = None
    columns: ColumnValues | None = None


def show_interval(iv: Interval) -> str:
    """An interval for messages: `0..10`, `1..` (no upper bound), `..5`, `any number`."""
    lo, hi = iv
    if lo == -INF and hi == INF:
        return "any number"
    left = "" if lo in (-INF, INF) else str(int(lo))
    right = "" if hi in (-INF, INF) else str(int(hi))
    if lo == hi:
        return left or "unbounded"
    return f"{left}..{right}"


def meet(a: Interval, b: Interval) -> Interval:
    """What both intervals allow."""
    return (max(a[0], b[0]), min(a[1], b[1]))


def join(*ivs: Interval) -> Interval:
    """The smallest interval holding each."""
    return (min(lo for lo, _ in ivs), max(hi for _, hi in ivs))


def of_values(values: Any) -> Interval:
    """The interval of the whole numbers of a constant (a number, a list or a table of them);
    ANY when it holds anything else."""
    if isinstance(values, bool):
        return BOOL
    if isinstance(values, int):
        return (values, values)
    items = list(values.values()) if isinstance(values, Mapping) else \
        list(values) if isinstance(values, list | tuple) else None
    if not items or not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return ANY
    return (min(items), max(items))


def interval(node: ir.Expr, known: Known) -> Interval:
    """An interval that holds for every value of the number `node` (ANY: not known)."""
    found = known.nodes(node) if known.nodes is not None else None
    own = _interval(node, known)
    return meet(own, found) if found is not None else own


def _field(node: ir.Expr) -> str | None:
    """The declared field a node is or reads an entry of (`player.X` / `game.X`)."""
    match node:
        case ir.PlayerField(field=f):
            return f"player.{f}"
        case ir.GameField(field=f):
            return f"game.{f}"
        case ir.Index(base=b) | ir.Get(base=b):
            return _field(b)
        case _:
            return None


def _interval(node: ir.Expr, known: Known) -> Interval:
    iv = interval
    match node:
        case ir.Lit(value=v) | ir.Data(value=v):
            return of_values(v) if isinstance(v, int) or isinstance(node, ir.Data) else ANY
        case ir.Local(name=name):
            return known.locals.get(name, ANY)
        case ir.PlayerField() | ir.GameField():
            return known.fields.get(_field(node) or "", ANY)
        case ir.Index(base=base) | ir.Get(base=base):
            entry = of_values(base.value) if isinstance(base, ir.Data) else \
                known.fields.get(_field(base) or "", ANY)
            if isinstance(node, ir.Get):
                entry = join(entry, iv(node.default, known))
            return entry
        case ir.Column(kind=kind, column=col):
            values = known.columns(kind, col) if known.columns is not None else None
            return ANY if values is None else join(of_values(values), (0, 0))
        case ir.Measure(body=body):
            return iv(body, known)
        case ir.BinOp(op=op, left=left, right=right):
            return _arith(op, iv(left, known), iv(right, known))
        case ir.Neg(operand=x):
            lo, hi = iv(x, known)
            return (-hi, -lo)
        case ir.Not() | ir.BoolOp() | ir.Compare():
            return BOOL
        case ir.Cond(then=a, orelse=b):
            return join(iv(a, known), iv(b, known))
        case ir.Call(fn="len", args=(items,)):
            return (0, _most(items))
        case ir.Call(fn="min" | "max" as fn, args=args) if len(args) >= 2:
            each = [iv(a, known) for a in args]
            pick = max if fn == "max" else min
            return (pick(lo for lo, _ in each), pick(hi for _, hi in each))
        case ir.Call(fn="min" | "max" | "first", args=(items,)):
            return items_of(items, known)
        case ir.Call(fn="min_or" | "max_or" | "first_or", args=(items, default)):
            return join(items_of(items, known), iv(default, known))
        case ir.Call(fn="sum", args=(items,)):
            lo, _hi = items_of(items, known)
            return (0, INF) if lo >= 0 else ANY
        case _:
            return ANY


def _most(node: ir.Expr) -> Bound:
    """The most items a list can hold, when a constant of the rules says (else INF)."""
    match node:
        case ir.Data(value=v) if isinstance(v, list | tuple | Mapping):
            return len(v)
        case ir.ListOf(items=items):
            return len(items)
        case ir.Keys(source=s) | ir.Comp(source=s) | ir.Values(table=s) \
                | ir.Call(fn="sorted" | "reversed", args=(s,)):
            return _most(s)
        case _:
            return INF


def items_of(node: ir.Expr, known: Known) -> Interval:
    """An interval holding each number of a list (or of a table's values, or of what a loop
    goes through)."""
    match node:
        case ir.Data(value=v):
            return of_values(v)
        case ir.Values(table=t):
            return items_of(t, known)
        case ir.PlayerField() | ir.GameField():
            return known.fields.get(_field(node) or "", ANY)
        case ir.ListOf(items=items) if items:
            return join(*(interval(i, known) for i in items))
        case ir.Comp(elt=elt, var=var, source=source):
            inner = {**known.locals, var: items_of(source, known)}
            return interval(elt, Known(known.fields, inner, known.nodes, known.columns))
        case ir.Keys(source=source, is_table=False):
            return items_of(source, known)
        case ir.Call(fn="range", args=(n,)):
            return (0, max(0, interval(n, known)[1] - 1))
        case ir.Call(fn="sorted" | "reversed", args=(inner,)):
            return items_of(inner, known)
        case _:
            return ANY


def _arith(op: ir.BinOpName, left: Interval, right: Interval) -> Interval:
    (a, b), (c, d) = left, right
    if op == "+":
        return (a + c, b + d)
    if op == "-":
        return (a - d, b - c)
    if op == "*":
        corners = [mul(a, c), mul(a, d), mul(b, c), mul(b, d)]
        return (min(corners), max(corners))
    if c < 1:
        return ANY  # a divisor that may be 0 or negative: refused by the checks
    if op == "%":
        return (0, d - 1) if d != INF else (0, INF)
    corners = [floordiv(a, c), floordiv(a, d), floordiv(b, c), floordiv(b, d)]
    return (min(corners), max(corners))


def mul(a: Bound, b: Bound) -> Bound:
    """A bound times a bound (0 times an unbounded one is 0)."""
    if a == 0 or b == 0:
        return 0  # 0 × unbounded is 0: the value is a whole number times 0
    return a * b


def floordiv(a: Bound, b: Bound) -> Bound:
    """A bound divided by a bound of at least 1 (a divisor known positive)."""
    if a in (-INF, INF):
        return a
    if b == INF:
        return 0 if a >= 0 else -1
    return int(a) // int(b)
