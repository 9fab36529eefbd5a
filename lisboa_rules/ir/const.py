"""Constants of the IR: which nodes are constants of the rules, and the value of an expression
that reads nothing of the state, computed where the rules are compiled.

`scalar` and `integer` say which plain value a constant node is (written in the rules, or read
from the rules data); `sequence` which items a constant list holds. `evaluate` computes an
expression from the values of the locals it names and the tables of the rules data it reads,
or refuses (`NotConstant`): a read of the state, of a measure or of a cost, a `range` (what the
compiler computes stays within what the rules hold), or a failure (a key a table does not hold,
the first item of an empty list, a division by zero), or work over the limit of one step
(`core/limits.py` MAX_WORK: each node evaluated and each item gone through counts one, and the
evaluation stops before it does more). A list is a tuple here (a constant never changes), a
table a dict.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any, assert_never

from lisboa_rules.core.limits import MAX_WORK
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.expr import Scalar

# the value of a column of a kind's rows for one id: (kind, column, id) -> the value (a
# KeyError for an id the table does not hold)
Columns = Callable[[str, str, Any], Any]


class NotConstant(Exception):
    """The expression is no constant: it reads the state, or it fails for these values."""


class _Budget:
    """The work an evaluation may still do (`MAX_WORK` at the start)."""

    __slots__ = ("left", "ranges")

    def __init__(self, ranges: int = 0) -> None:
        self.left = MAX_WORK
        self.ranges = ranges  # the longest `range` computed (0: none)

    def spend(self, n: int = 1) -> None:
        """Spend `n`, before doing that work: NotConstant when it is over the limit."""
        self.left -= n
        if self.left < 0:
            raise NotConstant(f"over the limit of {MAX_WORK:,} units of work")


def scalar(node: ir.Expr) -> Scalar:
    """The value of a constant that is one plain value (a whole number, true/false, a text or
    None, written in the rules or read from the rules data; a whole number negated; a measure
    that is one of them), else NotConstant."""
    if isinstance(node, ir.Measure):
        return scalar(node.body)
    if isinstance(node, ir.Lit):
        return node.value
    if isinstance(node, ir.Data) and (node.value is None
                                      or isinstance(node.value, int | str)):
        return node.value
    found = integer(node)
    if found is None:
        raise NotConstant("not a plain constant")
    return found


def integer(node: ir.Expr) -> int | None:
    """The value of a constant whole number (true/false is none), of one negated, or of a
    measure that is one of them, else None."""
    if isinstance(node, ir.Measure):
        return integer(node.body)
    if isinstance(node, ir.Neg):
        inner = integer(node.operand) if isinstance(node.operand, ir.Lit | ir.Data) else None
        return None if inner is None else -inner
    if isinstance(node, ir.Lit | ir.Data) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return node.value
    return None


def sequence(node: ir.Expr) -> tuple[Any, ...] | None:
    """The items a constant list of the rules data holds, or of the keys a table of every key
    of a kind goes through (in the order the kind declares), else None."""
    if isinstance(node, ir.Keys):
        if node.is_table:
            order = node.order if node.full else None
            return None if order is None else tuple(frozen(v) for v in order)
        node = node.source
    if isinstance(node, ir.Data) and isinstance(node.value, list | tuple):
        return tuple(frozen(v) for v in node.value)
    return None


def distinct(values: tuple[Any, ...] | None) -> bool:
    """Whether the items are known and none of them comes twice."""
    if values is None:
        return False
    try:
        return len(set(values)) == len(values)
    except TypeError:  # items that are not hashable
        return False


def frozen(value: Any) -> Any:
    """A value of the rules data as a constant: its lists as tuples."""
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    if isinstance(value, Mapping):
        return {k: frozen(v) for k, v in value.items()}
    return value


def evaluate(node: ir.Expr, env: Mapping[str, Any], columns: Columns | None = None,
             ranges: int = 0) -> Any:
    """The value of `node` with its locals given by `env` and the columns of the rules' tables
    by `columns`, or NotConstant; a `range` of at most `ranges` numbers is computed (a longer
    one is NotConstant)."""
    try:
        return _eval(node, env, columns, _Budget(ranges))
    except NotConstant:
        raise
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, RecursionError,
            StopIteration) as exc:
        raise NotConstant(f"fails: {type(exc).__name__}") from None


_COMPARE: dict[ir.CmpOpName, Callable[[Any, Any], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "==": operator.eq, "!=": operator.ne,
    "in": lambda a, b: operator.contains(b, a),
    "not in": lambda a, b: not operator.contains(b, a),
    "is": operator.is_, "is not": operator.is_not,
}

_ARITHMETIC: dict[ir.BinOpName, Callable[[int, int], int]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod,
}


def _eval(node: ir.Expr, env: Mapping[str, Any], columns: Columns | None,
          budget: _Budget) -> Any:
    def ev(x: ir.Expr) -> Any:
        return _eval(x, env, columns, budget)

    budget.spend()
    match node:
        case ir.Lit(value=v):
            return v
        case ir.Data(value=v):
            return frozen(v)
        case ir.Local(name=name):
            if name not in env:
                raise NotConstant(f"the local {name} has no value here")
            return env[name]
        case ir.Arg() | ir.Seat() | ir.Me() | ir.Slot() | ir.Context() | ir.PlayerField() \
                | ir.GameField() | ir.Measure() | ir.Cost():
            raise NotConstant("it reads the state")
        case ir.Column(kind=kind, column=col, key=key):
            if columns is None:
                raise NotConstant("no table is given")
            return frozen(columns(kind, col, ev(key)))
        case ir.Index(base=b, key=k):
            return ev(b)[ev(k)]
        case ir.Get(base=b, key=k, default=d):
            table = ev(b)
            if not isinstance(table, Mapping):
                raise NotConstant("not a table")
            key = ev(k)
            return table[key] if key in table else ev(d)
        case ir.BinOp(op=op, left=a, right=b):
            return _ARITHMETIC[op](_int(ev(a)), _int(ev(b)))
        case ir.Neg(operand=x):
            return -_int(ev(x))
        case ir.Not(operand=x):
            return not ev(x)
        case ir.BoolOp(op=op, values=vs):
            got: Any = op == "and"
            for v in vs:
                got = ev(v)
                if bool(got) is (op == "or"):
                    return got
            return got
        case ir.Compare(left=left, ops=ops):
            lhs = ev(left)
            for cmp, right in ops:
                rhs = ev(right)
                if not _COMPARE[cmp](lhs, rhs):
                    return False
                lhs = rhs
            return True
        case ir.Cond(test=c, then=a, orelse=b):
            return ev(a) if ev(c) else ev(b)
        case ir.Call(fn=fn, args=args):
            return _call(fn, args, env, columns, budget)
        case ir.Values(table=t):
            return tuple(_table(ev(t)).values())
        case ir.Keys(source=s, is_table=is_table, order=order, full=full):
            if is_table and order is not None and full:  # every key of the kind, whatever holds
                return frozen(order)
            src = ev(s)
            if not is_table:
                return src
            table = _table(src)
            if order is None:
                return tuple(sorted(table))
            return tuple(k for k in order if k in table)
        case ir.ListOf(items=items):
            return tuple(ev(i) for i in items)
        case ir.EmptyTable():
            return {}
        case ir.Comp():
            return tuple(_items(node, env, columns, budget))
        case _:
            assert_never(node)


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise NotConstant("not a whole number")
    return value


def _table(value: Any) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise NotConstant("not a table")
    return value


def _items(node: ir.Comp, env: Mapping[str, Any], columns: Columns | None,
           budget: _Budget) -> Iterator[Any]:
    """The items of a comprehension, one at a time (the first of them is all `first` needs)."""
    for item in _eval(node.source, env, columns, budget):
        budget.spend()
        inner = {**env, node.var: item}
        if all(_eval(c, inner, columns, budget) for c in node.conds):
            yield _eval(node.elt, inner, columns, budget)


def _call(fn: ir.Function, args: tuple[ir.Expr, ...], env: Mapping[str, Any],
          columns: Columns | None, budget: _Budget) -> Any:
    if fn == "range":
        n = _int(_eval(args[0], env, columns, budget))
        if n > budget.ranges:
            raise NotConstant("a range is not computed where the rules are compiled")
        budget.spend(max(0, n))
        return tuple(range(n))
    if fn == "first":
        a = args[0]
        if isinstance(a, ir.Comp):
            return next(_items(a, env, columns, budget))
        return _eval(a, env, columns, budget)[0]
    if fn in ("first_or", "min_or", "max_or"):
        a, d = args
        items = list(_items(a, env, columns, budget)) if isinstance(a, ir.Comp) \
            else list(_eval(a, env, columns, budget))
        if not items:
            return _eval(d, env, columns, budget)
        if fn == "first_or":
            return items[0]
        return (min if fn == "min_or" else max)(_int(v) for v in items)
    values = [_eval(a, env, columns, budget) for a in args]
    if fn in ("min", "max") and len(values) >= 2:
        return (min if fn == "min" else max)(_int(v) for v in values)
    (value,) = values
    if isinstance(value, tuple | list | Mapping):  # it goes through every item
        budget.spend(len(value))
    match fn:
        case "len":
            return len(value)
        case "sum":
            return sum(_int(v) for v in value)
        case "min":
            return min(_int(v) for v in value)
        case "max":
            return max(_int(v) for v in value)
        case "any":
            return any(value)
        case "all":
            return all(value)
        case "sorted":
            return tuple(sorted(value))
        case "reversed":
            return tuple(reversed(value))
        case "first_or" | "min_or" | "max_or":
            raise AssertionError("a call with a default is computed above")
        case _:
            assert_never(fn)
