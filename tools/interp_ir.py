"""The reference interpreter's meaning of the IR's expressions, on the plain JSON of a game.

The step interpreter (tools/interp_steps.py) walks the statements the compiler's checker makes
of each procedure and action (ir/stmt.py) and evaluates here each expression node they hold,
so the oracle and the generated engine share one reading of every name and one type of every
expression, and differ only in what each statement (interp_steps.py) and each node does. A
node's meaning is given below, in one `match` over `ir.Expr` (a node it forgets fails mypy),
on the saved game's JSON (`to_json`): never by the Python the back end prints for a node
(`Typed.code`), nor by the generated engine.

    value(node, env) -> the node's value for the acting player of `env` (its seat, its state,
                        the procedure's frame of locals)

What each node means: `Lit` and `Data` their value (a list of the rules data as a tuple, as
the engine holds it); `Local` the frame's value of that name; `Seat` / `Me` the acting seat /
player; `PlayerField` / `GameField` the field of the JSON state; `Column` the value of a row of
the rules data, from the interpreter's own columns (`World.columns`); `Measure` its body;
`Index` an item or an entry that is there; `Get` the entry, or its default when the table
holds no such key; `Keys` a list as it is, a table's keys in the declared order (those it holds
unless it is full) or sorted; `Comp` the comprehension (its variable set in the frame while it
runs, then put back); `Cost` the cost's formula read by the formula interpreter
(tools/interp.py) for the acting player; `Slot`, `Context` and `Arg` the values the caller
gives (`Env.given`: the item of a name per item).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.model.types import Model


class StepsError(ValueError):
    """The model or the state lacks something a procedure needs."""


@dataclass(kw_only=True)
class World:
    """What the evaluator reads of one rule set besides the state: the model (its costs), the
    readable columns of the rules' tables (kind -> column -> id -> value) and the vocabulary's
    name of each context a cost may be given (`other_officials` -> its name)."""

    model: Model
    columns: dict[str, dict[str, dict[Any, Any]]]
    contexts: dict[str, str]
    frozen: dict[int, tuple[ir.Data, Any]] = field(default_factory=dict)

    def constant(self, node: ir.Data) -> Any:
        """A constant of the rules data as the engine holds it (lists are tuples), made once."""
        hit = self.frozen.get(id(node))
        if hit is None or hit[0] is not node:
            hit = (node, frozen(node.value))
            self.frozen[id(node)] = hit
        return hit[1]

    def cost(self, env: Env, cid: str, given: Mapping[str, Any]) -> Any:
        """`cost('visit-cost', other_officials=n)`: the cost's formula evaluated by the formula
        interpreter (tools/interp.py) for the acting player, on the state as it is now."""
        from tools import interp  # (interp imports the step interpreter, which imports this)

        values = {}
        for name, v in given.items():
            if name not in self.contexts:
                raise StepsError(f"a cost is given no {name!r}")
            values[self.contexts[name]] = v
        try:
            return interp.cost(self.model, env.state, env.seat, cid, interp.Context(**values))
        except interp.InterpError as exc:
            raise StepsError(str(exc)) from None


@dataclass
class Env:
    """Where an expression is evaluated: the rule set, the state, the acting seat, the frame
    of the procedure's locals (by their names in the rules), the acting player (read once, as
    the engine's `p`) and the values given to slots and contexts."""

    world: World
    state: dict[str, Any]
    seat: int
    frame: dict[str, Any]
    player: dict[str, Any] = field(default_factory=dict)
    given: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        players = self.state["players"]
        if not self.player and self.seat < len(players):  # (a setup starts with no player)
            self.player = players[self.seat]


def frozen(value: Any) -> Any:
    """A constant of the rules data as the engine holds it: lists are tuples."""
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    if isinstance(value, Mapping):
        return {k: frozen(v) for k, v in value.items()}
    return value


_BINARY: Mapping[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod,
}

_COMPARE: Mapping[str, Callable[[Any, Any], Any]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "==": operator.eq, "!=": operator.ne, "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b, "is": operator.is_, "is not": operator.is_not,
}

_MISSING = object()


def value(node: ir.Expr, env: Env) -> Any:
    """The value of a checked expression (its IR node) in `env`."""
    match node:
        case ir.Local(name=name):
            found = env.frame.get(name, _MISSING)
            if found is _MISSING:
                raise StepsError(f"the local {name!r} has no value here")
            return found
        case ir.Lit(value=v):
            return v
        case ir.PlayerField(field=f, of=of):
            return value(of, env)[f]
        case ir.Me():
            return env.player
        case ir.Seat():
            return env.seat
        case ir.GameField(field=f):
            return env.state[f]
        case ir.Data():
            return env.world.constant(node)
        case ir.Column(kind=kind, column=column, key=key):
            return env.world.columns[kind][column][value(key, env)]
        case ir.Measure(body=body):  # read for the acting player, as where it is named
            return value(body, env)
        case ir.Index(base=base, key=key):
            return value(base, env)[value(key, env)]
        case ir.Get(base=base, key=key, default=default):
            found = value(base, env).get(value(key, env), _MISSING)
            return value(default, env) if found is _MISSING else found
        case ir.Compare(left=left, ops=ops):
            a = value(left, env)
            for op, right in ops:
                b = value(right, env)
                if not _COMPARE[op](a, b):
                    return False
                a = b
            return True
        case ir.BoolOp(op=op, values=values):  # the value that decides, as Python's
            result: Any = None
            for part in values:
                result = value(part, env)
                if (op == "and") != bool(result):
                    return result
            return result
        case ir.Not(operand=x):
            return not value(x, env)
        case ir.BinOp(op=op, left=a, right=b):
            return _BINARY[op](value(a, env), value(b, env))
        case ir.Neg(operand=x):
            return -value(x, env)
        case ir.Cond(test=test, then=then, orelse=orelse):
            return value(then, env) if value(test, env) else value(orelse, env)
        case ir.Call(fn=fn, args=args):
            return _call(fn, [value(a, env) for a in args])
        case ir.Values(table=table):  # in the order of its keys
            return list(value(table, env).values())
        case ir.Keys(source=source, is_table=is_table, order=order, full=full):
            if not is_table:
                return value(source, env)
            if order is None:
                return sorted(value(source, env))
            if full:  # every key is there
                return list(order)
            held = value(source, env)
            return [k for k in order if k in held]
        case ir.ListOf(items=items):
            return [value(x, env) for x in items]
        case ir.EmptyTable():
            return {}
        case ir.Comp(elt=elt, var=var, source=source, conds=conds):
            return _comprehension(env, elt, var, source, conds)
        case ir.Cost(id=cid, given=given):
            return env.world.cost(env, cid, {k: value(v, env) for k, v in given})
        case ir.Slot(name=name) | ir.Context(name=name) | ir.Arg(name=name):
            found = _MISSING if env.given is None else env.given.get(name, _MISSING)
            if found is _MISSING:
                raise StepsError(f"no value is given for {name!r} here")
            return found
        case _:
            assert_never(node)


def _comprehension(env: Env, elt: ir.Expr, var: str, source: ir.Expr,
                   conds: tuple[ir.Expr, ...]) -> list[Any]:
    """`[elt for var in source if cond ...]`: the variable is the frame's while it runs (a
    name of its own: what the frame held before is put back)."""
    frame = env.frame
    before = frame.get(var, _MISSING)
    out = []
    try:
        for item in value(source, env):
            frame[var] = item
            for c in conds:
                if not value(c, env):
                    break
            else:
                out.append(value(elt, env))
    finally:
        if before is _MISSING:
            frame.pop(var, None)
        else:
            frame[var] = before
    return out


def _call(fn: ir.Function, args: list[Any]) -> Any:
    """A function of the language on its arguments' values."""
    if fn in ("min", "max") and len(args) >= 2:
        return min(args) if fn == "min" else max(args)
    if fn in ("first_or", "min_or", "max_or"):  # of a list and a default: total
        items, default = list(args[0]), args[1]
        if not items:
            return default
        return items[0] if fn == "first_or" else min(items) if fn == "min_or" else max(items)
    (a,) = args
    match fn:
        case "len":
            return len(a)
        case "sum":
            return sum(a)
        case "min":
            return min(a)
        case "max":
            return max(a)
        case "any":
            return any(a)
        case "all":
            return all(a)
        case "sorted":
            return sorted(a)
        case "reversed":
            return list(reversed(a))
        case "range":
            return list(range(a))
        case "first":  # the first item of a list that has one
            items = list(a)
            if not items:
                raise StepsError("first() of an empty list")
            return items[0]
        case "first_or" | "min_or" | "max_or":
            raise AssertionError("a call with a default is computed by _call")
        case _:
            assert_never(fn)
