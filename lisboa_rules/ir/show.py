"""The IR as text for people debugging a rule (`lisboa-rules ir`): an expression is one node per
parenthesised form, `(op operand ...)`, a statement one line (`proc`, `action`), in no target's
syntax. Names are the rules' names: a local as it is written, `player.reis`, `game.favors`,
`rules.game.rubble.cubes_per_set`, a procedure by its id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
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


def written(node: ir.Expr) -> str:
    """The node as the effect language writes it (`first(game.pending_markers)`), for a
    message that quotes part of an expression; a node no rule writes is shown in the IR's
    notation."""
    w = written
    match node:
        case ir.Lit(value=v):
            return repr(v)
        case ir.Data(path=path) if path:
            return ".".join(path)
        case ir.Local(name=name) | ir.Arg(name=name):
            return name
        case ir.Seat():
            return "seat"
        case ir.PlayerField(field=f, of=ir.Me()):
            return f
        case ir.PlayerField(field=f, of=of):
            return f"{w(of)}.{f}"
        case ir.GameField(field=f):
            return f"game.{f}"
        case ir.Column(column=col, key=key):
            return f"{w(key)}.{col}"
        case ir.Measure(id=mid):
            return mid
        case ir.Index(base=b, key=k) | ir.Get(base=b, key=k):
            return f"{w(b)}[{w(k)}]"
        case ir.BinOp(op=op, left=a, right=b):
            mine = _PRECEDENCE[op]
            left, right = w(a), w(b)
            if _precedence(a) < mine:
                left = f"({left})"
            if _precedence(b) <= mine:
                right = f"({right})"
            return f"{left} {op} {right}"
        case ir.Neg(operand=x):
            return f"-{w(x)}" if _precedence(x) >= 6 else f"-({w(x)})"
        case ir.Not(operand=x):
            return f"not {w(x)}"
        case ir.BoolOp(op=op, values=vs):
            return f" {op} ".join(w(v) for v in vs)
        case ir.Compare(left=left, ops=ops):
            return w(left) + "".join(f" {o} {w(r)}" for o, r in ops)
        case ir.Cond(test=c, then=a, orelse=b):
            return f"({w(a)} if {w(c)} else {w(b)})"
        case ir.Call(fn=fn, args=args):
            return f"{fn.removesuffix('_or')}(" + ", ".join(w(a) for a in args) + ")"
        case ir.Values(table=x) | ir.Keys(source=x):
            return w(x)
        case ir.ListOf(items=items):
            return "[" + ", ".join(w(i) for i in items) + "]"
        case ir.Comp(elt=e, var=var, source=s, conds=cs):
            where = "".join(f" if {w(c)}" for c in cs)
            return f"[{w(e)} for {var} in {w(s)}{where}]"
        case ir.Cost(id=cid, given=given):
            return f"cost({cid!r}" + "".join(f", {k}={w(v)}" for k, v in given) + ")"
        case _:
            return show(node)


_PRECEDENCE: dict[str, int] = {"+": 4, "-": 4, "*": 5, "//": 5, "%": 5}


def _precedence(node: ir.Expr) -> int:
    """How tightly a node binds as written (an atom: most)."""
    match node:
        case ir.BinOp(op=op):
            return _PRECEDENCE[op]
        case ir.Cond():
            return 0
        case ir.BoolOp() | ir.Not():
            return 1
        case ir.Compare():
            return 2
        case ir.Neg():
            return 6
        case _:
            return 9


# --- statements ------------------------------------------------------------------------------


def words(w: str | S.Words | None) -> str:
    """Words with the values they show, as `"text {value} text"`."""
    if w is None:
        return "-"
    if isinstance(w, str):
        return value(w)
    text = "".join(p if isinstance(p, str) else "{" + show(p.value) + "}" for p in w)
    return value(text)


def _place(pl: S.Place) -> str:
    bounds = "" if pl.lo is None and pl.hi is None else \
        f" [{'' if pl.lo is None else pl.lo}..{'' if pl.hi is None else pl.hi}]"
    return show(pl.node) + bounds


def _run(r: S.Run, chosen: bool = False) -> str:
    """A procedure run with its arguments (its choices not made, unless `chosen`)."""
    return f"(run {r.proc}" + "".join(" " + show(a) for a in r.args) + \
        ("" if not r.choices or chosen else f" +{r.choices} unchosen") + ")"


def _bundle(b: S.Bundle) -> str:
    table = b.table if b.table is not None else "this row"
    shared = "".join(" -" if x is None else " " + show(x) for x in b.shared)
    fields = "" if b.fields == b.choices else " as " + " ".join(b.fields)
    return f"(bundle {table} {show(b.key)}{shared}{fields})"


def stmt(s: S.Stmt | S.GuardStmt, indent: int = 0) -> list[str]:
    """A statement in the IR's notation, one line each (nested ones indented)."""
    pad = "  " * indent
    match s:
        case S.Let(binds=bs):
            return [f"{pad}let {b.name} = {show(b.value)} : {b.type}" for b in bs]
        case S.Change(changes=cs):
            out = []
            for c in cs:
                if isinstance(c, S.Gain):
                    how = ("" if not c.floor else " floor") + ("" if not c.ceil else " ceil")
                    out.append(f"{pad}gain {_place(c.place)} {show(c.amount)}{how}")
                else:
                    out.append(f"{pad}set {_place(c.place)} {show(c.value)}"
                               + (" clamped" if c.clamp else ""))
            return out
        case S.MoveItem(item=item, src=a, dst=b, once=once):
            return [f"{pad}move {show(item)} from {_place(a) if a else '-'} to "
                    f"{_place(b) if b else '-'}" + (" (computed once)" if once else "")]
        case S.MoveAll(src=a, dst=b):
            return [f"{pad}move all from {_place(a)} to {_place(b) if b else '-'}"]
        case S.MoveSome(count=n, src=a, dst=b, top=top):
            return [f"{pad}move {'top' if top else 'first'} {show(n)} from {_place(a)} to "
                    f"{_place(b) if b else '-'}"]
        case S.If(cond=c, then=t, orelse=o):
            return [f"{pad}if {show(c)}", *block(t, indent + 1),
                    *([f"{pad}else", *block(o, indent + 1)] if o else [])]
        case S.ForEach(var=v, over=o, copy=copy, body=body):
            return [f"{pad}for {v} in {show(o)}" + (" (as it was)" if copy else ""),
                    *block(body, indent + 1)]
        case S.Repeat(count=n, body=body):
            return [f"{pad}repeat {show(n)}", *block(body, indent + 1)]
        case S.Do(run=r):
            return [f"{pad}{_run(r)}"]
        case S.Raise(event=e, runs=rs):
            return [f"{pad}raise {e}" + "".join(" " + _run(r) for r in rs)]
        case S.Drop(table=t, key=k):
            return [f"{pad}drop {show(t)} {show(k)}"]
        case S.Shuffle(place=pl, stream=stream):
            return [f"{pad}shuffle {_place(pl)} with the stream of {stream}"]
        case S.New(place=pl, fields=fs):
            return [f"{pad}new player in {_place(pl)}"
                    + "".join(f" {n}={show(v)}" for n, v in fs)]
        case S.DoValue(value=v, cases=cases):
            return [f"{pad}do {show(v)}",
                    *(f"{pad}  case {value(pid)}: {_run(r)}" for pid, r in cases)]
        case S.Apply(bundle=b):
            return [f"{pad}apply {_bundle(b)} unchosen"]
        case S.Require(cond=c, rule=rule, reason=reason):
            return [f"{pad}require {show(c)} rule {words(rule)} else {words(reason)}"]
        case S.Choose(name=name, type=t, of=of, rule=rule, reason=reason):
            if isinstance(of, S.OneOf):
                where = "" if of.where is None else f" where {show(of.where)}"
                what = f"one of {show(of.keys)}{where}"
            else:
                where = "" if of.where is None else f" where {show(of.where)}"
                what = (f"up to {show(of.hi)} of {show(of.source)}{where}" if of.up_to else
                        f"{show(of.lo)} to {show(of.hi)} of {show(of.source)}{where}")
            return [f"{pad}choose {name} : {t} {what} rule {words(rule)} else {words(reason)}"]
        case _:
            assert_never(s)


def block(stmts: tuple[S.Stmt, ...], indent: int) -> list[str]:
    return [line for s in stmts for line in stmt(s, indent)] or ["  " * indent + "(nothing)"]


def item(i: S.Item, indent: int) -> list[str]:
    """An item of an action, the items of each branch after it indented."""
    pad = "  " * indent
    match i:
        case S.Branch(cond=test, then=t, orelse=o):
            return [f"{pad}if {show(test)}", *items(t, indent + 1), f"{pad}else",
                    *items(o, indent + 1)]
        case S.DoChoose(value=v, cases=cases, rule=rule):
            head = f"{pad}do {'its procedure' if v is None else show(v)} rule {words(rule)}"
            out = [head]
            for one in cases:
                out.append(f"{pad}  case {value(one.proc)}: "
                           + (_run(one.run, True) if one.run is not None else "nothing")
                           + ("" if not one.names else " choosing " + " ".join(one.names)))
                out += items(one.rest, indent + 2)
            return out
        case S.ApplyChoose(bundle=b, rule=rule, rest=rest):
            return [f"{pad}apply {_bundle(b)} choosing rule {words(rule)}",
                    *items(rest, indent)]
        case (S.Let() | S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
              | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle() | S.New()
              | S.DoValue() | S.Apply() | S.Choose() | S.Require()):
            return stmt(i, indent)
        case _:
            assert_never(i)


def items(xs: tuple[S.Item, ...], indent: int) -> list[str]:
    return [line for x in xs for line in item(x, indent)] or ["  " * indent + "(nothing)"]


def proc(p: S.Proc) -> list[str]:
    """A procedure: its parameters, its guard, its effects."""
    params = ", ".join(f"{x.name}: {x.type}" for x in p.params)
    out = [f"proc {p.id}({params})"]
    if p.guard:
        out += ["  guard", *(line for s in p.guard for line in stmt(s, 2))]
    out += ["  effects", *block(p.effects, 2)]
    return out


def action(a: S.Action) -> list[str]:
    """An action: the phase it is made in, the rule it names, its items."""
    return [f"action {a.id} in phase {a.phase} rule {value(a.rule)}", *items(a.items, 1)]
