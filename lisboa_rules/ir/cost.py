"""Static bounds of cost on the IR (issue 33, "bounded cost"): how many moves one decision may
list and how much work one step may do, from the ranges and sizes the rules declare.

Three bounds of an expression, each computed from its typed nodes (never from printed code):

- `interval`: the whole numbers it may be (`(lo, hi)`, None for no bound): a number written or
  read from the rules data, a field of the state within its declared `min`/`max`, a local by
  what it was bound to, and `+ - * // %`, `min`, `max`, `len`, `a if c else b` over them;
- `size`: how many items a list (or a table) it makes may hold: a list of the rules data by
  its length, a list of the state by its declared `max_items` (else `UNDECLARED_ITEMS`), a
  table of a kind by the kind's ids, `range(n)` by n, a comprehension by its source, a choice
  of several by its count;
- `work`: the work of evaluating it once: one for each node, and for a comprehension, a
  `range` or a function over a list (`len sum min max any all sorted reversed first`) the
  items it goes through, times the work of its body (`len` and `first` of a list go through
  none: the work of computing the list is its own).

`stmt_work` gives a statement's: its expressions, and for a loop its body's work times the
items of its list, for a `repeat` times the largest count. A number of the state with no
declared `max` (and no negative values) is taken as at most `UNDECLARED_NUMBER` (1,000), as a
list with no `max_items` holds `UNDECLARED_ITEMS`: `repeat: reis` builds, `repeat: reis *
reis * reis` is refused. What a bound cannot know (a param of a procedure given an unbounded
value, an item of a list) is taken as one (or its declared `min`, when more): the bound is then
a least one, and only a bound over the limit is refused (`lisboa_rules/core/limits.py`), never
an unknown one; a count such as `amount * 99999999999` is refused (at least 99,999,999,999).
`moves` is a choice's bound: one of n items, n; a set of lo..hi of n items, the sum of C(n, i).

Every count saturates at `CAP` (far above every limit), so no bound is itself a costly number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import assert_never

from lisboa_rules.core.limits import UNDECLARED_ITEMS, UNDECLARED_NUMBER
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S

CAP = 10 ** 30  # a count past every limit: bounds saturate here
CALLS = 10_000  # the most callee bounds one analysis computes (then a callee counts as one)
Interval = tuple[int | None, int | None]
UNKNOWN: Interval = (None, None)


@dataclass(frozen=True)
class Bound:
    """What the analysis knows of a local: the numbers it may be, the items it may hold."""

    interval: Interval = UNKNOWN
    size: int | None = None


@dataclass(frozen=True)
class Work:
    """A bound of work: `count`, and whether a part of it could not be bounded (then it was
    taken as one, and `count` is the least the work is)."""

    count: int
    partial: bool = False

    def __add__(self, other: Work) -> Work:
        return Work(_sat(self.count + other.count), self.partial or other.partial)

    def times(self, n: int | None) -> Work:
        if n is None:
            return Work(self.count, True)
        return Work(_sat(self.count * max(n, 0)), self.partial)


ONE = Work(1)


def _sat(n: int) -> int:
    return min(n, CAP)


@dataclass
class Context:
    """The declarations the bounds read: `bounds[field]` the declared (min, max) of a number
    of the state (`player.X` / `game.X`, the numbers inside a container too), `items[field]`
    the declared `max_items` of a list of the state; `env` the bounds of the locals."""

    bounds: Mapping[str, Interval] = field(default_factory=dict)
    items: Mapping[str, int] = field(default_factory=dict)
    env: dict[str, Bound] = field(default_factory=dict)
    # the procedures checked so far (callees come first): a `do`, a hook run, is bounded by
    # its callee's effects with the bounds of the values it is given (memo: by callee and
    # those bounds; `calls`: how many were computed, at most CALLS)
    procs: Mapping[str, S.Proc] = field(default_factory=dict)
    memo: dict[tuple[str, tuple[Bound, ...]], Work] = field(default_factory=dict)
    calls: list[int] = field(default_factory=lambda: [0])
    active: set[str] = field(default_factory=set)  # the procedures being bounded (a cycle)
    # a least bound: a number read from a local, a param or the state with no bound above is
    # taken as at most 1 (or its declared least); see `least_hi`
    least: bool = False

    def with_local(self, name: str, bound: Bound) -> Context:
        return replace(self, env={**self.env, name: bound})

    # -- the numbers an expression may be ---------------------------------------------------

    def least_hi(self, node: ir.Expr) -> tuple[int, bool]:
        """The largest number `node` may be, and whether that is only a least bound: the
        declared bound when there is one, else the bound with every number that has none above
        taken as 1 (or its declared least)."""
        hi = self.interval(node)[1]
        if hi is not None:
            return hi, False
        got = replace(self, least=True).interval(node)[1]
        return (1 if got is None else got), True

    def interval(self, node: ir.Expr) -> Interval:
        got = self._interval(node)
        if self.least and isinstance(node, ir.Local | ir.PlayerField | ir.GameField | ir.Index
                                     | ir.Get | ir.Measure):
            return _at_least_one(got)
        return got

    def _interval(self, node: ir.Expr) -> Interval:
        match node:
            case ir.Lit(value=v) | ir.Data(value=v):
                if isinstance(v, bool):
                    return (0, 1)
                return (v, v) if isinstance(v, int) else UNKNOWN
            case ir.Local(name=name):
                return self.env.get(name, Bound()).interval
            case ir.PlayerField(field=f):
                return _declared(self.bounds.get("player." + f))
            case ir.GameField(field=f):
                return _declared(self.bounds.get("game." + f))
            case ir.Index(base=b) | ir.Get(base=b):
                got = self._field_bounds(b)
                if isinstance(node, ir.Get) and got != UNKNOWN:
                    return _hull(got, self.interval(node.default))
                return got
            case ir.Measure(body=body):
                return self.interval(body)
            case ir.BinOp(op=op, left=a, right=b):
                return _arith(op, self.interval(a), self.interval(b))
            case ir.Neg(operand=x):
                lo, hi = self.interval(x)
                return (None if hi is None else -hi, None if lo is None else -lo)
            case ir.Cond(then=a, orelse=b):
                return _hull(self.interval(a), self.interval(b))
            case ir.Call(fn="len", args=(a,)):
                return (0, self.size(a))
            case ir.Call(fn="min" | "max", args=args) if len(args) >= 2:
                ivs = [self.interval(a) for a in args]
                return _min_max(node.fn == "min", ivs)
            case _:
                return UNKNOWN

    def _field_bounds(self, node: ir.Expr) -> Interval:
        """The declared bounds of the numbers inside a field of the state (a table's entry,
        an item of a list), through its indexes."""
        while isinstance(node, ir.Index | ir.Get):
            node = node.base
        if isinstance(node, ir.PlayerField):
            return _declared(self.bounds.get("player." + node.field))
        if isinstance(node, ir.GameField):
            return _declared(self.bounds.get("game." + node.field))
        return UNKNOWN

    # -- the items a list may hold -----------------------------------------------------------

    def size(self, node: ir.Expr) -> int | None:
        match node:
            case ir.Data(value=v):
                return len(v) if isinstance(v, list | tuple | Mapping) else None
            case ir.ListOf(items=items):
                return len(items)
            case ir.EmptyTable():
                return 0
            case ir.Local(name=name):
                return self.env.get(name, Bound()).size
            case ir.PlayerField(field=f):
                return self.items.get("player." + f, UNDECLARED_ITEMS)
            case ir.GameField(field=f):
                return self.items.get("game." + f, UNDECLARED_ITEMS)
            case ir.Index(base=ir.PlayerField(field=f)) | ir.Get(base=ir.PlayerField(field=f)):
                return self.items.get(f"player.{f}[]", UNDECLARED_ITEMS)
            case ir.Index(base=ir.GameField(field=f)) | ir.Get(base=ir.GameField(field=f)):
                return self.items.get(f"game.{f}[]", UNDECLARED_ITEMS)
            case ir.Index() | ir.Get():  # a list or table inside a field of the state
                return UNDECLARED_ITEMS if _in_state(node) else None
            case ir.Keys(source=s, is_table=is_table, order=order):
                if is_table and order is not None:
                    return len(order)
                return self.size(s)
            case ir.Values(table=t):
                return self.size(t)
            case ir.Comp(source=s):
                return self.size(s)
            case ir.Measure(body=body):
                return self.size(body)
            case ir.Cond(then=a, orelse=b):
                x, y = self.size(a), self.size(b)
                return None if x is None or y is None else max(x, y)
            case ir.Call(fn="sorted" | "reversed", args=(a,)):
                return self.size(a)
            case ir.Call(fn="range", args=(a,)):
                hi = self.interval(a)[1]
                if hi is None and self.least:
                    hi = self.least_hi(a)[0]
                return None if hi is None else _sat(max(hi, 0))
            case _:
                return None

    # -- the work of evaluating it once ------------------------------------------------------

    def work(self, node: ir.Expr) -> Work:
        match node:
            case ir.Comp(elt=elt, var=var, source=src, conds=conds):
                inner = self.with_local(var, self._item(src))
                body = ONE + inner.work(elt)
                for c in conds:
                    body = body + inner.work(c)
                return self.work(src) + self.times(body, src)
            case ir.Call(fn=fn, args=args):
                got = ONE
                for a in args:
                    got = got + self.work(a)
                if fn == "range":
                    return got.times(1) + self.times(Work(1), node)
                if len(args) == 1 and fn not in ("first", "len"):  # through the list's items
                    return got + self.times(Work(1), args[0])
                return got
            case ir.Measure(body=body):
                return ONE + self.work(body)
            case ir.Keys(source=s):
                return ONE + self.work(s)
            case _:
                got = ONE
                for child in ir.children(node):
                    got = got + self.work(child)
                return got

    def times(self, work: Work, over: ir.Expr) -> Work:
        """`work` done once for each item of `over`: by its bound of items, else by a least
        bound of them (a `range` of a number with no bound above, taken as 1: see
        `least_hi`), marked partial."""
        n = self.size(over)
        if n is not None:
            return work.times(n)
        m = replace(self, least=True).size(over)
        return Work(work.times(1 if m is None else m).count, True)

    def _item(self, src: ir.Expr) -> Bound:
        """What an item of a list may be: of `range(n)`, 0 to n - 1."""
        if isinstance(src, ir.Keys):
            src = src.source
        if isinstance(src, ir.Call) and src.fn == "range":
            hi = self.interval(src.args[0])[1]
            return Bound((0, None if hi is None else max(hi - 1, 0)))
        return Bound()

    def bind(self, name: str, value: ir.Expr) -> None:
        """A let binds `name` to `value`: its bound (widened with an earlier one of the same
        name, a let in another branch)."""
        new = Bound(self.interval(value), self.size(value))
        old = self.env.get(name)
        if old is not None:
            new = Bound(_hull(old.interval, new.interval),
                        None if old.size is None or new.size is None else max(old.size, new.size))
        self.env[name] = new

    # -- statements --------------------------------------------------------------------------

    def stmt_work(self, s: S.Stmt) -> Work:
        """The work of one run of a statement (the locals its lets bind go into `env`)."""
        got = ONE
        for e in S.exprs(s):
            got = got + self.work(e)
        match s:
            case S.Let(binds=bs):
                for b in bs:
                    self.bind(b.name, b.value)
                return got
            case S.ForEach(var=var, over=over, body=body):
                inner = self.with_local(var, self._item(over))
                return got + self.times(inner.block_work(body), over)
            case S.Repeat(count=n, body=body):
                hi, least = self.least_hi(n)
                most = self.block_work(body).times(hi)
                return got + (Work(most.count, True) if least else most)
            case S.If(then=a, orelse=b):
                x, y = self.block_work(a), self.block_work(b)
                return got + (x if x.count >= y.count else y)
            case S.Do() | S.Raise() | S.DoValue():
                runs = S.runs(s)
                if isinstance(s, S.Do | S.DoValue):  # one of them runs
                    most = Work(0)
                    for r in runs:
                        w = self.run_work(r)
                        most = w if w.count > most.count else Work(most.count,
                                                                   most.partial or w.partial)
                    return got + most
                for r in runs:  # every hook runs
                    got = got + self.run_work(r)
                return got
            case S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() \
                    | S.Drop() | S.Shuffle() | S.New() | S.Apply():
                if isinstance(s, S.MoveAll | S.Shuffle):  # through every item of the list
                    pl = s.src if isinstance(s, S.MoveAll) else s.place
                    got = got + self.times(Work(1), pl.node)
                return got
            case _:
                assert_never(s)

    def run_work(self, run: S.Run) -> Work:
        """The work of a procedure's effects run with these values (one, a least bound, for
        a procedure not checked yet: a cycle, which is an error of its own)."""
        proc = self.procs.get(run.proc)
        if proc is None or run.proc in self.active:  # a cycle: an error of its own
            return Work(1, True)
        given = tuple(Bound(self.interval(a), self.size(a)) for a in run.args)
        key = (run.proc, given)
        if key not in self.memo:
            if self.calls[0] >= CALLS:
                return Work(1, True)
            self.calls[0] += 1
            inner = replace(self, env={p.name: b for p, b in zip(proc.params, given,
                                                                  strict=False)})
            got = ONE
            self.active.add(run.proc)
            try:
                for g in proc.guard:
                    if isinstance(g, S.Let):
                        got = got + inner.stmt_work(g)
                self.memo[key] = got + inner.block_work(proc.effects)
            finally:
                self.active.discard(run.proc)
        return self.memo[key]

    def block_work(self, stmts: tuple[S.Stmt, ...]) -> Work:
        got = Work(0)
        for s in stmts:
            got = got + self.stmt_work(s)
        return got

    # -- the moves of one decision -----------------------------------------------------------

    def moves(self, of: S.OneOf | S.Several) -> tuple[int, int, int] | None:
        """A choice's bound of moves, with the n items it chooses from and the most it takes
        (None when the items are not bounded)."""
        if isinstance(of, S.OneOf):
            n = self.size(of.keys)
            return None if n is None else (n, n, 1)
        n = self.size(of.source)
        if n is None:
            return None
        lo = max(self.interval(of.lo)[0] or 0, 0)
        hi = self.interval(of.hi)[1]
        k = n if hi is None else min(max(hi, 0), n)
        return (subsets(n, lo, k), n, k)


def subsets(n: int, lo: int, hi: int) -> int:
    """The sum of C(n, i) for i from lo to hi, saturated at CAP. Computed term by term, each
    from the one before, in few steps: by symmetry (C(n, i) = C(n, n - i)) the sum starts at
    most halfway, where the terms still grow, so a term past CAP ends it (the sum is at least
    that term), and terms grow past CAP within about a hundred steps of a large n."""
    lo, hi = max(lo, 0), min(hi, n)
    if lo > hi:
        return 0
    if lo > n - hi:
        lo, hi = n - hi, n - lo
    total = 0
    term = 1  # C(n, 0)
    for i in range(0, hi + 1):
        if i > 0:
            term = term * (n - i + 1) // i
        if term >= CAP:
            return CAP
        if i >= lo:
            total += term
            if total >= CAP:
                return CAP
    return total


def _in_state(node: ir.Expr) -> bool:
    while isinstance(node, ir.Index | ir.Get):
        node = node.base
    return isinstance(node, ir.PlayerField | ir.GameField)


def _declared(iv: Interval | None) -> Interval:
    """The bounds of a number of the state: as declared, and with no `max` declared, at most
    `UNDECLARED_NUMBER` (as a list with no `max_items` holds `UNDECLARED_ITEMS`)."""
    if iv is None:
        return UNKNOWN
    lo, hi = iv
    if hi is None and (lo is None or lo >= 0):
        hi = max(lo or 0, UNDECLARED_NUMBER)
    return (lo, hi)


def _at_least_one(iv: Interval) -> Interval:
    """A least bound of a number read from somewhere: with no bound above, at most 1 (or its
    least); with no bound below, at least 0 (or its most, when less)."""
    lo, hi = iv
    if hi is None:
        hi = max(lo if lo is not None else 0, 1)
    if lo is None:
        lo = min(0, hi)
    return (lo, hi)


def _hull(a: Interval, b: Interval) -> Interval:
    lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
    return (lo, hi)


def _min_max(is_min: bool, ivs: list[Interval]) -> Interval:
    los = [lo for lo, _ in ivs]
    his = [hi for _, hi in ivs]
    if is_min:
        lo = None if any(x is None for x in los) else min(x for x in los if x is not None)
        known = [x for x in his if x is not None]
        return (lo, min(known) if known else None)
    known = [x for x in los if x is not None]
    hi = None if any(x is None for x in his) else max(x for x in his if x is not None)
    return (max(known) if known else None, hi)


def _arith(op: ir.BinOpName, a: Interval, b: Interval) -> Interval:
    (alo, ahi), (blo, bhi) = a, b
    if op == "+":
        return (None if alo is None or blo is None else alo + blo,
                None if ahi is None or bhi is None else ahi + bhi)
    if op == "-":
        return (None if alo is None or bhi is None else alo - bhi,
                None if ahi is None or blo is None else ahi - blo)
    if op == "*":
        if None in (alo, ahi, blo, bhi):
            return UNKNOWN
        assert alo is not None and ahi is not None and blo is not None and bhi is not None
        products = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        return (min(products), max(products))
    if op == "//":
        if blo is not None and blo >= 1 and alo is not None and alo >= 0:
            return (0 if bhi is None else alo // bhi, ahi if ahi is None else ahi // blo)
        return UNKNOWN
    if op == "%":
        if blo is not None and blo >= 1 and bhi is not None:
            return (0, bhi - 1)
        return UNKNOWN
    assert_never(op)
