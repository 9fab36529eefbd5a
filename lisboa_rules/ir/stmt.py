"""The IR's statements: checked procedures and actions, in no target's syntax.

The checker of the effect language (`lang/steps.py` for procedures, `lang/actions.py` for the
actions of a turn) turns each step of rules/ into the statements below, every expression
checked into an `expr.py` node and every name resolved (a procedure done by its id, an event
by the hooks it runs, a bundle of effects by its table); it reports every problem there. A
back end prints the statements (`emit/engine/lower.py` and `emit/engine/moves.py` for the
Python engine) without reporting anything: what reaches it was checked. Each statement keeps
where the rules write it (`At`), which the printed code names in a comment.

A procedure (`Proc`) is its guard (the chooses and requires at its top, and the lets among
them) and its effects. An action (`Action`) is one sequence of items where choices, refusals
and effects mix; an item that branches on what a move chooses (an `if` whose steps choose or
refuse, a procedure done or a bundle applied that chooses) ends its sequence and holds the
items after it in each of its branches (`rest`), as each branch checks them in its own scope.

`Stmt`, `GuardStmt` and `Item` are unions of classes, so that a `match` over one that forgets a
class fails the type check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.program import Shown, Words
from lisboa_rules.ir.types import VType

__all__ = ["Shown", "Words"]


@dataclass(frozen=True, slots=True)
class At:
    """Where a statement is written in the rules (its path in the data) and what names it
    there (the step's id, else its kind)."""

    path: tuple[str | int, ...]
    label: str


@dataclass(frozen=True, slots=True)
class Place:
    """A part of the state a statement changes: a field of the game or of a player, or an
    entry of a table of one (`ir.Index`; `ir.Get` for an entry the table may not hold, which
    a write makes), with its type and the bounds its declaration gives a number."""

    node: ir.Expr
    type: VType
    lo: int | None = None
    hi: int | None = None
    field: str | None = None  # the declared field it is or is in ("player.X", "game.X")
    # a list's declared max_items: a write that would make it longer fails there (the engine
    # checks it where lang/total.py does not prove it within; the interpreter at every write)
    most: int | None = None


# --- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bind:
    """`let NAME: value`: a local named by the rules, of the value's type."""

    name: str
    value: ir.Expr
    type: VType


@dataclass(frozen=True, slots=True)
class Let:
    at: At
    binds: tuple[Bind, ...]


@dataclass(frozen=True, slots=True)
class Gain:
    """Add `amount` to a number of the state, kept at or above its minimum (`floor`: the
    amount may take it below) and at or below its maximum, or the largest number a save
    holds (`ceil`: the amount may take it above)."""

    place: Place
    amount: ir.Expr
    floor: bool
    ceil: bool
    key: tuple[str, ...] = ()  # where in its step it is written (`gain`, the place's words)


@dataclass(frozen=True, slots=True)
class Assign:
    """Put `value` in a place of the state; `clamp`: a computed number, kept within the
    place's declared bounds and what a save holds."""

    place: Place
    value: ir.Expr
    clamp: bool
    key: tuple[str, ...] = ()  # where in its step it is written (`set`, the place's words)


@dataclass(frozen=True, slots=True)
class Change:
    """A gain or a set step: its changes in the order written."""

    at: At
    changes: tuple[Gain | Assign, ...]


@dataclass(frozen=True, slots=True)
class MoveItem:
    """Move one item out of `src` (if given) into `dst` (if given): an item that is computed
    (`first(hand)`) is computed once, before it leaves (`once`)."""

    at: At
    item: ir.Expr
    src: Place | None
    dst: Place | None
    once: bool


@dataclass(frozen=True, slots=True)
class MoveAll:
    """Move every item of `src` into `dst` (None: out of the game)."""

    at: At
    src: Place
    dst: Place | None


@dataclass(frozen=True, slots=True)
class MoveSome:
    """Move the `count` last (`top`) or first items of `src` into `dst` (None: out of the
    game), as many as there are."""

    at: At
    count: ir.Expr
    src: Place
    dst: Place | None
    top: bool


@dataclass(frozen=True, slots=True)
class If:
    at: At
    cond: ir.Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ForEach:
    """The body for each item of `over` (a list, or a table's `ir.Keys`); `copy`: a list of
    the state, gone through as it was before the body changes it."""

    at: At
    var: str
    over: ir.Expr
    copy: bool
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    at: At
    count: ir.Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Run:
    """Carry out the effects of a procedure (`proc`, its id) with its parameters' values
    (`args`, in order; `ir.Lit(None)` for an optional one not given) and, for its choices,
    `choices` values of None."""

    proc: str
    args: tuple[ir.Expr, ...]
    choices: int = 0


@dataclass(frozen=True, slots=True)
class Do:
    at: At
    run: Run


@dataclass(frozen=True, slots=True)
class Raise:
    """An event raised: the hooks that listen to it, each run with the values given."""

    at: At
    event: str
    runs: tuple[Run, ...]


@dataclass(frozen=True, slots=True)
class Drop:
    """Take the entry `key` out of the table `table` (nothing if it holds none)."""

    at: At
    table: ir.Expr
    key: ir.Expr


@dataclass(frozen=True, slots=True)
class Shuffle:
    """Shuffle a list of the state with the seeded stream of the procedure `stream`."""

    at: At
    place: Place
    stream: str


@dataclass(frozen=True, slots=True)
class New:
    """Append a new player to a list of players: the fields given, the others at their
    declared defaults."""

    at: At
    place: Place
    fields: tuple[tuple[str, ir.Expr], ...]
    types: tuple[VType, ...]  # each given field's declared type, in the same order


@dataclass(frozen=True, slots=True)
class DoValue:
    """Carry out the procedure a text names (`do: EXPR`): for each procedure it may name, the
    run; a value that names none does nothing."""

    at: At
    value: ir.Expr
    cases: tuple[tuple[str, Run], ...]


@dataclass(frozen=True, slots=True)
class Apply:
    """Carry out the bundle of effects of a row (`apply`) without its choices: see
    `Bundle`."""

    at: At
    bundle: Bundle


Stmt = (Let | Change | MoveItem | MoveAll | MoveSome | If | ForEach | Repeat | Do | Raise | Drop
        | Shuffle | New | DoValue | Apply)


# --- choices and refusals ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OneOf:
    """A choice of one item of `keys` (a list, or a table's keys) that meets `where` (`it`
    being the chosen local); `distinct`: going through `keys` gives each item once."""

    keys: ir.Keys
    distinct: bool
    where: ir.Expr | None


@dataclass(frozen=True, slots=True)
class Several:
    """A choice of several distinct items of `source` that meet `where` (`it` being the
    item): between `lo` and `hi` of them, or any set of at most `up_to` (listed in counting
    order), each set of which may be led by one of its items (`leads_by`, for the items that
    meet `leads_where`)."""

    source: ir.Expr
    where: ir.Expr | None
    lo: ir.Expr
    hi: ir.Expr
    up_to: bool
    leads_by: ir.Expr | None = None
    leads_where: ir.Expr | None = None
    count_rule: str = ""
    count_reason: Words | None = None  # None: the numbers are shown


@dataclass(frozen=True, slots=True)
class Choose:
    """The player's choice, named `name`, of the type `type` (optional: no choice at all is
    allowed); `missing`: the words of a refusal of no choice, when the reason shows the value
    chosen (and would show nothing)."""

    at: At
    name: str
    type: VType
    optional: bool
    of: OneOf | Several
    rule: str | Words
    reason: Words
    missing: Words | None = None


@dataclass(frozen=True, slots=True)
class Require:
    """Refuse unless `cond` holds, naming `rule` and saying `reason`."""

    at: At
    cond: ir.Expr
    rule: str | Words
    reason: Words


GuardStmt = Let | Choose | Require


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: VType


@dataclass(frozen=True, slots=True)
class Proc:
    """A procedure: its parameters, its choices (their names and types, in order), its guard
    and its effects; `streams`: whether its effects shuffle (with its own seeded stream)."""

    id: str
    at: At
    params: tuple[Param, ...]
    choices: tuple[Param, ...]
    guard: tuple[GuardStmt, ...]
    effects: tuple[Stmt, ...]
    streams: bool = False


# --- actions -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bundle:
    """The bundles of effects an apply step carries out: those of a table of the rules (by
    its name, `table`; None: the one bundle of the step's own row), each by its row's id
    (`rows`: the effects and their amounts), for the row `key`; the values of the parameters
    the effects share after their amount (`shared`, None for one not given); the choices
    the effects make (`choices`, in order) and the move field each fills (`fields`); `of`:
    the path of the rules data the one bundle of the step's own row is read from
    (`("this", "reward")`), empty for a table's."""

    table: str | None
    rows: tuple[tuple[Any, tuple[tuple[str, int], ...]], ...]
    key: ir.Expr
    shared: tuple[ir.Expr | None, ...]
    choices: tuple[str, ...]
    fields: tuple[str, ...]
    of: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Branch:
    """An if whose steps choose or refuse: each branch goes on with the items after the if
    (checked again in each branch's scope); the first `own` items of each are the if's own
    steps."""

    at: At
    cond: ir.Expr
    then: tuple[Item, ...]
    orelse: tuple[Item, ...]
    own: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Case:
    """One procedure a `do` may carry out (None: the value names none), then the items after
    the do."""

    proc: str | None
    run: Run | None
    names: tuple[str, ...]  # its choices, the move fields they fill
    rest: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class DoChoose:
    """A do whose procedure chooses or refuses: the procedure named (`value` None), or each
    the value may name (`value` the text that names it); `reason`: the action's refusal when
    nothing at all can be done; `none_reason`: when the value names no procedure."""

    at: At
    value: ir.Expr | None
    cases: tuple[Case, ...]
    rule: str | Words
    reason: Words | None
    none_reason: Words | None


@dataclass(frozen=True, slots=True)
class ApplyChoose:
    """An apply step whose effects' choices the move makes: its bundle, then the items after
    it; `decides`: some effect of it chooses or refuses."""

    at: At
    bundle: Bundle
    rule: str | Words
    rest: tuple[Item, ...]
    decides: bool


Item = Stmt | Choose | Require | Branch | DoChoose | ApplyChoose


@dataclass(frozen=True, slots=True)
class Action:
    """A kind of move: its id, the phase it is made in, the rule a refusal names by default
    and its items."""

    id: str
    at: At
    phase: str
    rule: str
    items: tuple[Item, ...]


# --- walking -----------------------------------------------------------------------------------


def nested(s: Stmt) -> tuple[Stmt, ...]:
    """The statements directly inside a statement."""
    match s:
        case If(then=a, orelse=b):
            return (*a, *b)
        case ForEach(body=body) | Repeat(body=body):
            return body
        case (Let() | Change() | MoveItem() | MoveAll() | MoveSome() | Do() | Raise() | Drop()
              | Shuffle() | New() | DoValue() | Apply()):
            return ()
        case _:
            assert_never(s)


def walk(stmts: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement, and every statement nested in it, in order."""
    for s in stmts:
        yield s
        yield from walk(nested(s))


def runs(s: Stmt) -> tuple[Run, ...]:
    """The procedures a statement runs itself (not those of the statements nested in it)."""
    match s:
        case Do(run=r):
            return (r,)
        case Raise(runs=rs):
            return rs
        case DoValue(cases=cases):
            return tuple(r for _p, r in cases)
        case (Let() | Change() | MoveItem() | MoveAll() | MoveSome() | If() | ForEach()
              | Repeat() | Drop() | Shuffle() | New() | Apply()):
            return ()
        case _:
            assert_never(s)


def places(s: Stmt) -> tuple[Place, ...]:
    """The places of the state a statement writes itself."""
    match s:
        case Change(changes=cs):
            return tuple(c.place for c in cs)
        case MoveItem(src=a, dst=b):
            return tuple(x for x in (a, b) if x is not None)
        case MoveAll(src=a, dst=b) | MoveSome(src=a, dst=b):
            return tuple(x for x in (a, b) if x is not None)
        case Drop(table=t):
            return (Place(t, VType("map")),)
        case Shuffle(place=pl) | New(place=pl):
            return (pl,)
        case (Let() | If() | ForEach() | Repeat() | Do() | Raise() | DoValue() | Apply()):
            return ()
        case _:
            assert_never(s)


def words_exprs(w: str | Words | None) -> tuple[ir.Expr, ...]:
    """The values words show."""
    if w is None or isinstance(w, str):
        return ()
    return tuple(p.value for p in w if isinstance(p, Shown))


def exprs(s: Stmt | GuardStmt) -> tuple[ir.Expr, ...]:
    """The expressions of a statement itself (not those nested in it), the places it writes
    among them."""
    match s:
        case Let(binds=bs):
            return tuple(b.value for b in bs)
        case Change(changes=cs):
            out: list[ir.Expr] = []
            for c in cs:
                out += [c.place.node, c.amount if isinstance(c, Gain) else c.value]
            return tuple(out)
        case MoveItem(item=item):
            return (item, *(p.node for p in places(s)))
        case MoveAll():
            return tuple(p.node for p in places(s))
        case MoveSome(count=n):
            return (n, *(p.node for p in places(s)))
        case If(cond=c):
            return (c,)
        case ForEach(over=o):
            return (o,)
        case Repeat(count=n):
            return (n,)
        case Do() | Raise() | DoValue():
            extra = (s.value,) if isinstance(s, DoValue) else ()
            return (*extra, *(a for r in runs(s) for a in r.args))
        case Drop(table=t, key=k):
            return (t, k)
        case Shuffle(place=pl):
            return (pl.node,)
        case New(place=pl, fields=fs):
            return (pl.node, *(v for _n, v in fs))
        case Apply(bundle=b):
            return (b.key, *(x for x in b.shared if x is not None))
        case Require(cond=c, rule=rule, reason=reason):
            return (c, *words_exprs(rule), *words_exprs(reason))
        case Choose(of=of, rule=rule, reason=reason):
            if isinstance(of, OneOf):
                got: tuple[ir.Expr, ...] = (of.keys, *((of.where,) if of.where else ()))
            else:
                got = tuple(x for x in (of.source, of.where, of.lo, of.hi, of.leads_by,
                                        of.leads_where) if x is not None)
            return (*got, *words_exprs(rule), *words_exprs(reason))
        case _:
            assert_never(s)


def items_walk(items: tuple[Item, ...]) -> Iterator[Item]:
    """Every item of an action, and every item and statement nested in it (each branch's
    items, the items after a choosing do or apply), in order."""
    for item in items:
        yield item
        match item:
            case Branch(then=a, orelse=b):
                yield from items_walk((*a, *b))
            case DoChoose(cases=cases):
                yield from items_walk(tuple(i for c in cases for i in c.rest))
            case ApplyChoose(rest=rest):
                yield from items_walk(rest)
            case Choose() | Require():
                pass
            case _:
                yield from walk(nested(item))


def item_exprs(item: Item) -> tuple[ir.Expr, ...]:
    """The expressions of an item itself (not those nested in it)."""
    match item:
        case Branch(cond=c):
            return (c,)
        case DoChoose(value=v, cases=cases, rule=rule, reason=reason, none_reason=none):
            return (*((v,) if v is not None else ()),
                    *(a for c in cases if c.run is not None for a in c.run.args),
                    *words_exprs(rule), *words_exprs(reason), *words_exprs(none))
        case ApplyChoose(bundle=b, rule=rule):
            return (b.key, *(x for x in b.shared if x is not None), *words_exprs(rule))
        case _:
            return exprs(item)


def data_read(items: tuple[Item, ...]) -> Iterator[tuple[tuple[str, ...], At]]:
    """Each path of the rules data the items read (`("this", "followable")`), with where:
    a constant of the data, a cost the data names (`cost(this.cost)`), the bundle of effects
    of the row (`apply: {effects: this.reward}`). What the analysis of keys no step reads
    (model/checked.py `unread_keys`) goes by."""
    for item in items_walk(items):
        match item:
            case Apply(bundle=b) | ApplyChoose(bundle=b) if b.of:
                yield b.of, item.at
            case _:
                pass
        for e in item_exprs(item):
            for x in ir.walk(e):
                if isinstance(x, ir.Data) and x.path:
                    yield x.path, item.at
                elif isinstance(x, ir.Cost) and x.via:
                    yield x.via, item.at
