"""The IR's expressions: typed, checked values of the effect language, in no target's syntax.

The checker (`lang/typed.py`) builds them from the rules' text; a back end prints them
(`pyprint/expr.py` for the Python engine) and an analysis walks them (`walk`). A node holds
what the rules name: a field of the state by its id, a local by its name in the rules, a
column of a table of the rules data by its kind and column, a cost by its id. `Expr` is the
union of every node class, so a `match` over it that forgets one fails the type check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from lisboa_rules.ir.types import VType

Scalar = int | bool | str | None
BinOpName = Literal["+", "-", "*", "//", "%"]
CmpOpName = Literal[">", ">=", "<", "<=", "==", "!=", "in", "not in", "is", "is not"]
# `first_or`, `min_or`, `max_or`: of a list and a default, the default when the list is empty
# (written `first(xs, d)`, `min(xs, d)`, `max(xs, d)`): total where `first` of a list is not
Function = Literal["len", "sum", "min", "max", "any", "all", "sorted", "reversed", "range",
                   "first", "first_or", "min_or", "max_or"]


@dataclass(frozen=True, slots=True)
class Lit:
    """A whole number, true/false, a text or None, written in the rules."""

    value: Scalar


@dataclass(frozen=True, slots=True, eq=False)
class Data:
    """A constant of the rules data (`rules.game.rubble.cubes_per_set`, `this.x`): a plain
    value, a list or a table of them, read where the rules are compiled."""

    value: Any
    path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Local:
    """A value a procedure names (`let`, `choose ... as`, a loop's variable, a parameter)."""

    name: str


@dataclass(frozen=True, slots=True)
class Arg:
    """An argument of a public function of the engine (a query's), by its name in the rules."""

    name: str


@dataclass(frozen=True, slots=True)
class Seat:
    """The acting player's seat."""


@dataclass(frozen=True, slots=True)
class Me:
    """The acting player."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A value given where the expression is used (the item of a per-item name; a name of the
    formula language, kept by its name in a formula the reference says in words)."""

    name: str


@dataclass(frozen=True, slots=True)
class Context:
    """A value a cost's formula is given (`cost('visit-cost', other_officials=n)`)."""

    name: str


@dataclass(frozen=True, slots=True)
class PlayerField:
    """A field of a player's state (`reis`, `other.hand`)."""

    field: str
    of: Expr


@dataclass(frozen=True, slots=True)
class GameField:
    """A field of the game's state (`game.favors`)."""

    field: str


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a kind's rows in the rules data, read for one id (`card.type`)."""

    kind: str
    column: str
    key: Expr


@dataclass(frozen=True, slots=True)
class Measure:
    """A measure of the rules (`rules/vocabulary.yaml`), read for the acting player; `body` is
    its checked expression."""

    id: str
    body: Expr
    type: VType


@dataclass(frozen=True, slots=True)
class Index:
    """An item of a list, or the entry of a table that holds every key. `of_list`: a list's
    item at a number, which may be past its end (a total-operation check proves it is not)."""

    base: Expr
    key: Expr
    of_list: bool = False


@dataclass(frozen=True, slots=True)
class Get:
    """The entry of a table that may not hold the key, or `default`."""

    base: Expr
    key: Expr
    default: Expr


@dataclass(frozen=True, slots=True)
class BinOp:
    op: BinOpName
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Expr


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expr


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: Literal["and", "or"]
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Compare:
    """`left op1 right1 op2 right2 ...`: each pair holds (a chain)."""

    left: Expr
    ops: tuple[tuple[CmpOpName, Expr], ...]


@dataclass(frozen=True, slots=True)
class Cond:
    """`then if test else orelse`."""

    test: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, slots=True)
class Call:
    """A function of the language over its arguments (`sum` of a table sums its values:
    the checker wraps the table in `Values`)."""

    fn: Function
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Values:
    """The values of a table, in the order of its keys."""

    table: Expr


@dataclass(frozen=True, slots=True)
class Keys:
    """What a loop goes through: a list as it is, or a table's keys in the order their kind
    declares (`order`; None: sorted), only those the table holds unless it is `full`."""

    source: Expr
    is_table: bool
    order: tuple[Any, ...] | None = None
    full: bool = True


@dataclass(frozen=True, slots=True)
class ListOf:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class EmptyTable:
    """A table with no entries."""


@dataclass(frozen=True, slots=True)
class Comp:
    """`[elt for var in source if cond ...]`: `source` is a `Keys`."""

    elt: Expr
    var: str
    source: Expr
    conds: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Cost:
    """A cost of the rules data for the acting player, with the context values it is given;
    `via`: the path of the rules data that named it (`("this", "cost")` for
    `cost(this.cost)`), empty when the id is written."""

    id: str
    given: tuple[tuple[str, Expr], ...]
    via: tuple[str, ...] = ()


Expr = (Lit | Data | Local | Arg | Seat | Me | Slot | Context | PlayerField | GameField | Column
        | Measure | Index | Get | BinOp | Neg | Not | BoolOp | Compare | Cond | Call | Values
        | Keys | ListOf | EmptyTable | Comp | Cost)


def children(node: Expr) -> tuple[Expr, ...]:
    """The expressions directly inside a node (a measure's body is its own: not a child)."""
    quick = _QUICK.get(type(node))  # most nodes: found by their class, not by 27 matches
    if quick is not None:
        return quick(node)
    return _children(node)


def _children(node: Expr) -> tuple[Expr, ...]:
    match node:
        case Lit() | Data() | Local() | Arg() | Seat() | Me() | Slot() | Context() \
                | GameField() | EmptyTable() | Measure():
            return ()
        case PlayerField(of=of):
            return (of,)
        case Column(key=key):
            return (key,)
        case Index(base=b, key=k):
            return (b, k)
        case Get(base=b, key=k, default=d):
            return (b, k, d)
        case BinOp(left=a, right=b):
            return (a, b)
        case Neg(operand=x) | Not(operand=x) | Values(table=x):
            return (x,)
        case BoolOp(values=vs):
            return vs
        case Compare(left=left, ops=ops):
            return (left, *(r for _, r in ops))
        case Cond(test=c, then=a, orelse=b):
            return (c, a, b)
        case Call(args=args):
            return args
        case Keys(source=s):
            return (s,)
        case ListOf(items=items):
            return items
        case Comp(elt=e, source=s, conds=cs):
            return (s, *cs, e)
        case Cost(given=given):
            return tuple(v for _, v in given)
        case _:
            assert_never(node)


def _none(node: Expr) -> tuple[Expr, ...]:
    return ()


def _two(node: Any) -> tuple[Expr, ...]:
    return (node.left, node.right)


# The most common node classes (in a build of rules/), whose children are found without the
# match of `_children`, by the exact class (no node class has subclasses); the same answer:
# tests/ir/test_children.py compares the two on every node of a build.
_QUICK: dict[type, Callable[[Any], tuple[Expr, ...]]] = {
    **dict.fromkeys((Lit, Data, Local, Arg, Seat, Me, Slot, Context, GameField, EmptyTable,
                     Measure), _none),
    BinOp: _two,
    Compare: lambda n: (n.left, *(r for _, r in n.ops)),
    Call: lambda n: n.args,
    PlayerField: lambda n: (n.of,),
    Index: lambda n: (n.base, n.key),
    Column: lambda n: (n.key,),
    Keys: lambda n: (n.source,),
}


def walk(node: Expr) -> Iterator[Expr]:
    """The node and every node inside it, parents first."""
    yield node
    for c in children(node):
        yield from walk(c)


def substitute(node: Expr, mapping: Mapping[Expr, Expr]) -> Expr:
    """The node with each node inside it that equals a key of `mapping` replaced by its value
    (a slot by the value given where the expression is used). A measure's body is its own:
    not looked into. A node with nothing replaced is returned as it is (the same object)."""
    found = mapping.get(node)
    if found is not None:
        return found
    new = tuple(substitute(c, mapping) for c in children(node))
    if all(a is b for a, b in zip(new, children(node), strict=True)):
        return node
    match node:
        case Lit() | Data() | Local() | Arg() | Seat() | Me() | Slot() | Context() \
                | GameField() | EmptyTable() | Measure():
            return node  # pragma: no cover - no children: returned above
        case PlayerField(field=f):
            return PlayerField(f, new[0])
        case Column(kind=kind, column=col):
            return Column(kind, col, new[0])
        case Index(of_list=of_list):
            return Index(new[0], new[1], of_list)
        case Get():
            return Get(new[0], new[1], new[2])
        case BinOp(op=op):
            return BinOp(op, new[0], new[1])
        case Neg():
            return Neg(new[0])
        case Not():
            return Not(new[0])
        case Values():
            return Values(new[0])
        case BoolOp(op=op):
            return BoolOp(op, new)
        case Compare(ops=ops):
            return Compare(new[0], tuple((o, r) for (o, _), r in zip(ops, new[1:], strict=True)))
        case Cond():
            return Cond(new[0], new[1], new[2])
        case Call(fn=fn):
            return Call(fn, new)
        case Keys(is_table=is_table, order=order, full=full):
            return Keys(new[0], is_table, order, full)
        case ListOf():
            return ListOf(new)
        case Comp(var=var, conds=conds):
            return Comp(new[-1], var, new[0], new[1:1 + len(conds)])
        case Cost(given=given):
            return Cost(node.id, tuple((k, v) for (k, _), v in zip(given, new, strict=True)),
                        node.via)
        case _:
            assert_never(node)


def truth(node: Expr) -> bool | None:
    """True or False for a constant condition, else None."""
    if isinstance(node, Lit | Data) and isinstance(node.value, bool):
        return node.value
    return None
