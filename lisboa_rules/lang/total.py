"""Every operation total (issue 33): the check pass's proof that no step fails in play.

A few operations of the effect language have no value for some arguments: `first`, `min` and
`max` of an empty list, a list's item past its end, a division (`//`, `%`) by 0. Each use in a
checked procedure, action or phase (the IR: `ir/stmt.py`) is proven safe here, or refused
where it is written with the fix (`partial-operation`, `divisor-zero`):

- by the values it can take: a constant of the rules computed (for a local of a kind, or one
  chosen from a constant list, for each value it can have); the bounds the state declares and
  the number of players the rules allow (`ir/bounds.py`);
- by what is known where it is: an earlier `require` or `choose` of the same guard, the test
  of the `if` or of the conditional expression it is in, the condition before it in an `and`
  (or, negated, an `or`), the `if` of a comprehension, the list a loop goes through:
  `len(xs) > 0`, `x in xs` and `any(...)` say `xs` is not empty, `n > 0` that `n` is at least
  1, `i in range(len(xs))` and `e % len(xs)` that `i` is an index of `xs`; a change to the
  state forgets what was known of the state;
- or the rule writes it total: `first(xs, default)`, `min(xs, default)`, `max(xs, default)`,
  `max(1, n)` as a divisor.

What is not proven is an error, not a guess: the engine never raises in play.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from lisboa_rules.ir import bounds as B
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.logic import negated
from lisboa_rules.ir.reads import free_locals
from lisboa_rules.ir.show import written
from lisboa_rules.ir.types import VType
from lisboa_rules.lang.phases import CheckedPhase
from lisboa_rules.lang.tree import StepProblem

# at most this many values of the locals an expression reads are tried to prove it
ENUMERATE_LIMIT = 4096

PLAYERS = ir.GameField("players")  # the state's players, in seat order

_FLIP: dict[str, ir.CmpOpName] = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==",
                                  "!=": "!="}
_NOT: dict[str, ir.CmpOpName] = {">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=",
                                 "!=": "==", "in": "not in", "not in": "in"}


def same(a: ir.Expr, b: ir.Expr) -> bool:
    """Whether two nodes are the same expression (two reads of one constant of the rules
    data are the same, though `ir.Data` nodes compare by identity)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, ir.Data):
        assert isinstance(b, ir.Data)
        return bool(a.path) and a.path == b.path and a.value == b.value
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not _same_value(x, y):
            return False
    return True


def _same_value(x: Any, y: Any) -> bool:
    if isinstance(x, tuple) and isinstance(y, tuple):
        return len(x) == len(y) and all(_same_value(i, j) for i, j in zip(x, y, strict=True))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.is_dataclass(y) and same(x, y)  # type: ignore[arg-type]
    return bool(x == y)


def _find(pairs: tuple[tuple[ir.Expr, Any], ...], node: ir.Expr) -> list[Any]:
    return [v for k, v in pairs if same(k, node)]


@dataclass(frozen=True)
class Facts:
    """What is known at a point of a procedure: the lists known to hold at least so many
    items, the numbers known to lie in an interval, the conditions known true, the items
    known to be in a list, what `A or B` says once `A` is false; each local's interval, the
    values it can have when they are few and known, what a let bound it to, and the locals
    that are an index of a list."""

    sizes: tuple[tuple[ir.Expr, int], ...] = ()
    ranges: tuple[tuple[ir.Expr, B.Interval], ...] = ()
    truths: tuple[ir.Expr, ...] = ()
    members: tuple[tuple[ir.Expr, ir.Expr], ...] = ()
    implied: tuple[tuple[ir.Expr, ir.Expr], ...] = ()
    locals: Mapping[str, B.Interval] = field(default_factory=dict)
    domains: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    defs: Mapping[str, ir.Expr] = field(default_factory=dict)
    index_of: Mapping[str, ir.Expr] = field(default_factory=dict)

    def bind(self, name: str, iv: B.Interval = B.ANY, domain: tuple[Any, ...] | None = None,
             index_of: ir.Expr | None = None, value: ir.Expr | None = None) -> Facts:
        """A local (re)bound: what was known of the name before is forgotten."""
        keep = self.forget(lambda n: name in free_locals(n))

        def put(m: Mapping[str, Any], v: Any) -> dict[str, Any]:
            out = {k: x for k, x in m.items() if k != name}
            if v is not None:
                out[name] = v
            return out

        return replace(keep, locals=put(keep.locals, iv), domains=put(keep.domains, domain),
                       defs=put(keep.defs, value), index_of=put(keep.index_of, index_of))

    def learn(self, cond: ir.Expr) -> Facts:
        """What holds once `cond` was found true."""
        cond = _norm(cond)
        f = replace(self, truths=(*self.truths, cond))
        for premise, then in self.implied:
            if same(premise, cond):
                f = f.learn(then)
        match cond:
            case ir.BoolOp(op="and", values=vs):
                for v in vs:
                    f = f.learn(v)
                return f
            case ir.BoolOp(op="or", values=(first, *rest)):
                tail = rest[0] if len(rest) == 1 else ir.BoolOp("or", tuple(rest))
                return replace(f, implied=(*f.implied, (_norm(negated(first)), tail)))
            case ir.Not(operand=ir.BoolOp(op="or", values=vs)):
                for v in vs:
                    f = f.learn(negated(v))
                return f
            case ir.Compare(left=left, ops=ops):
                prev = left
                for op, right in ops:
                    f = f._pair(prev, op, right)
                    prev = right
            case ir.Call(fn="any", args=(ir.Comp(source=source),)):
                f = f.sized(_listed(source), 1)
            case _:
                pass
        return f

    def sized(self, node: ir.Expr, n: int) -> Facts:
        return replace(self, sizes=(*self.sizes, (node, n))) if n > 0 else self

    def ranged(self, node: ir.Expr, iv: B.Interval) -> Facts:
        return replace(self, ranges=(*self.ranges, (node, iv)))

    def _pair(self, a: ir.Expr, op: ir.CmpOpName, b: ir.Expr) -> Facts:
        f = self
        if op == "in":
            listed = _listed(b)
            return replace(f, members=(*f.members, (a, listed))).sized(listed, 1)
        for x, o, y in ((a, op, b), (b, _FLIP.get(op), a)):
            k = const.integer(y)
            if k is None or o is None or isinstance(x, ir.Lit | ir.Data):
                continue
            iv = {">": (k + 1, B.INF), ">=": (k, B.INF), "<": (-B.INF, k - 1),
                  "<=": (-B.INF, k), "==": (k, k)}.get(o)
            if iv is not None:
                f = f.ranged(x, iv)
            if isinstance(x, ir.Call) and x.fn == "len":
                at_least = {">": k + 1, ">=": k, "==": k, "!=": 1 if k == 0 else 0}.get(o, 0)
                f = f.sized(x.args[0], at_least)
        return f

    def forget(self, gone: Callable[[ir.Expr], bool]) -> Facts:
        return replace(
            self, sizes=tuple((k, v) for k, v in self.sizes if not gone(k)),
            ranges=tuple((k, v) for k, v in self.ranges if not gone(k)),
            truths=tuple(k for k in self.truths if not gone(k)),
            members=tuple((a, b) for a, b in self.members if not (gone(a) or gone(b))),
            implied=tuple((a, b) for a, b in self.implied if not (gone(a) or gone(b))))

    def forget_state(self, kept: Facts | None = None,
                     written: frozenset[str] | None = None) -> Facts:
        """After a change to the state (of the fields `written`, `player.X` / `game.X`; None:
        any): what was known of it no longer holds (but what `kept` knows: what holds in
        every state the rules can make)."""
        if written is not None and not written:
            return self
        f = self.forget(_reads_state if written is None
                        else lambda node: _reads_fields(node, written))
        if kept is not None:
            f = replace(f, sizes=(*f.sizes, *kept.sizes), ranges=(*f.ranges, *kept.ranges))
        return f

    def size(self, node: ir.Expr) -> int:
        return max(_find(self.sizes, node), default=0)

    def range(self, node: ir.Expr) -> B.Interval | None:
        found = _find(self.ranges, node)
        if not found:
            return None
        iv = B.ANY
        for r in found:
            iv = B.meet(iv, r)
        return iv

    def holds(self, cond: ir.Expr) -> bool:
        return any(same(t, cond) for t in self.truths)


def _norm(cond: ir.Expr) -> ir.Expr:
    """A condition in one form: `not (a <= b)` is `a > b`."""
    match cond:
        case ir.Not(operand=ir.Compare(left=left, ops=((op, right),))) if op in _NOT:
            return ir.Compare(left, ((_NOT[op], right),))
        case ir.Not(operand=ir.Not(operand=inner)):
            return _norm(inner)
        case _:
            return cond


def _reads_state(node: ir.Expr) -> bool:
    return any(isinstance(n, ir.PlayerField | ir.GameField | ir.Measure | ir.Cost | ir.Seat
                          | ir.Me) for n in ir.walk(node))


def _reads_fields(node: ir.Expr, fields: frozenset[str]) -> bool:
    """Whether the expression may read one of the fields (a measure's body included)."""
    for n in ir.walk(node):
        match n:
            case ir.GameField(field=f) if f"game.{f}" in fields:
                return True
            case ir.PlayerField(field=f) if f"player.{f}" in fields:
                return True
            case ir.Measure(body=body) if _reads_fields(body, fields):
                return True
            case ir.Cost():
                return True
            case _:
                pass
    return False


def _listed(node: ir.Expr) -> ir.Expr:
    return node.source if isinstance(node, ir.Keys) and not node.is_table else node


def _range_of(source: ir.Expr) -> ir.Expr | None:
    """`xs` when a loop goes through range(len(xs))."""
    match source:
        case ir.Call(fn="range", args=(ir.Call(fn="len", args=(xs,)),)):
            return xs
        case _:
            return None


class Totality:
    """The check of one rule set's procedures, actions and phases: `fields` the declared
    bounds of the state's numbers (`player.X`), `columns` the rules' tables, `kinds` the ids
    of each kind (what a local of a kind can be), `players` how many players a game has and
    `setup` the procedure that makes them (its first parameter is their number)."""

    def __init__(self, fields: Mapping[str, B.Interval], columns: B.ColumnValues,
                 kinds: Mapping[str, frozenset[Any]], players: B.Interval,
                 setup: str | None, procs: Mapping[str, S.Proc] | None = None) -> None:
        self.procs = procs or {}
        self._writes: dict[str, frozenset[str] | None] = {}
        self.fields = fields
        self.columns = columns
        self.kinds = kinds
        self.players = players
        self.setup = setup
        self.problems: list[StepProblem] = []
        self.loose: set[tuple[str | int, ...]] = set()  # the moves not proven to find their item
        self._seen: set[tuple[tuple[str | int, ...], str]] = set()
        # what holds in every state a game is in after its setup: its number of players
        self.always = Facts().ranged(ir.Call("len", (PLAYERS,)), players).sized(
            PLAYERS, int(players[0]))
        self._kept: Facts | None = self.always  # None in the setup, before the players are

    # -- what is checked ---------------------------------------------------------------------

    def proc(self, p: S.Proc) -> None:
        self._kept = self.always if p.id != self.setup else None
        f = self.always if p.id != self.setup else Facts().ranged(
            ir.Call("len", (PLAYERS,)), (0, 0))
        for k, param in enumerate((*p.params, *p.choices)):
            f = f.bind(param.name, domain=self._domain(param.type))
            if p.id == self.setup and k == 0:
                f = f.bind(param.name, self.players, domain=tuple(
                    range(int(self.players[0]), int(self.players[1]) + 1)))
        for g in p.guard:
            f = self._guard(g, f)
        self._block(p.effects, f)

    def action(self, a: S.Action) -> None:
        self._kept = self.always
        self._items(a.items, self.always)

    def measure(self, body: ir.Expr, at: S.At) -> None:
        """A measure of the rules (rules/vocabulary.yaml), read anywhere: proven with what
        holds in every state."""
        self._kept = self.always
        self._expr(body, self.always, at)

    def phase(self, ph: CheckedPhase, at: S.At) -> None:
        """A phase's conditions, and who moves in it where they hold (`lang/phases.py`)."""
        self._kept = f = self.always
        for node in (ph.lasts, ph.interrupts):
            if node is not None:
                self._expr(node, self.always, at)
                f = f.learn(node)
        if ph.actor is not None:
            self._expr(ph.actor, f, S.At((*at.path, "actor"), at.label))

    # -- statements ----------------------------------------------------------------------------

    def _domain(self, t: VType) -> tuple[Any, ...] | None:
        """The values a local of type `t` can have, when it is of a kind with few ids."""
        ids = self.kinds.get(t.name)
        if ids is None or len(ids) > ENUMERATE_LIMIT:
            return None
        return tuple(sorted(ids, key=repr)) + ((None,) if t.optional else ())

    def _guard(self, g: S.GuardStmt, f: Facts) -> Facts:
        match g:
            case S.Let():
                return self._let(g, f)
            case S.Require(cond=c):
                self._expr(c, f, _key(g.at, "require"))
                # its words are shown where the condition is false
                self._exprs((*S.words_exprs(g.rule), *S.words_exprs(g.reason)),
                            f.learn(negated(c)), g.at)
                return f.learn(c)
            case S.Choose():
                return self._choose(g, f)
            case _:
                assert_never(g)

    def _let(self, s: S.Let, f: Facts) -> Facts:
        for b in s.binds:
            self._expr(b.value, f, _key(s.at, "let", b.name))
            every = self._every(b.value, f)
            domain = tuple(every) if every is not None else self._domain(b.type)
            f = f.bind(b.name, self._iv(b.value, f), domain, self._index_into(b.value, f),
                       b.value)
        return f

    def _choose(self, s: S.Choose, f: Facts) -> Facts:
        self._exprs(S.exprs(s), f, _key(s.at, "choose"))
        if isinstance(s.of, S.OneOf):
            return self._member(f, s.name, _listed(s.of.keys), s.optional)
        return f.bind(s.name)

    def _member(self, f: Facts, name: str, source: ir.Expr, optional: bool = False) -> Facts:
        """`name` bound to an item of `source` (or to None, `optional`)."""
        values = self._values(source, f)
        domain = (*values, *((None,) if optional else ())) if values is not None else None
        if optional:
            return f.bind(name, domain=domain)
        g = f.bind(name, B.items_of(source, self._known(f)), domain, self._index_item(source, f))
        return g.learn(ir.Compare(ir.Local(name), (("in", source),)))

    def _block(self, stmts: tuple[S.Stmt, ...], f: Facts) -> Facts:
        for s in stmts:
            f = self._stmt(s, f)
        return f

    def _after(self, f: Facts, stmts: tuple[S.Stmt, ...]) -> Facts:
        """What still holds after `stmts` ran (any number of times) from where `f` holds."""
        if any(_changes(x) for x in S.walk(stmts)):
            return f.forget_state(self._kept, self._written(stmts))
        return f

    def _written(self, stmts: tuple[S.Stmt, ...], seen: frozenset[str] = frozenset()
                 ) -> frozenset[str] | None:
        """The fields (`player.X`, `game.X`) the statements may change, the procedures they
        run included; None when that is not known."""
        out: set[str] = set()
        for s in S.walk(stmts):
            runs: tuple[S.Run, ...] = S.runs(s)
            if isinstance(s, S.Apply):
                runs = tuple(S.Run(e, ()) for _k, row in s.bundle.rows for e, _a in row)
            for r in runs:
                if r.proc in seen:
                    continue
                if r.proc not in self._writes:
                    proc = self.procs.get(r.proc)
                    self._writes[r.proc] = None  # (while it is worked out: a cycle is any)
                    self._writes[r.proc] = None if proc is None else \
                        self._written(proc.effects, seen | {r.proc})
                got = self._writes[r.proc]
                if got is None:
                    return None
                out |= got
            for pl in S.places(s):
                node = pl.node
                while isinstance(node, ir.Index | ir.Get):
                    node = node.base
                match node:
                    case ir.GameField(field=name):
                        out.add(f"game.{name}")
                    case ir.PlayerField(field=name):
                        out.add(f"player.{name}")
                    case _:
                        return None
        return frozenset(out)

    def _stmt(self, s: S.Stmt, f: Facts) -> Facts:
        match s:
            case S.Let():
                return self._let(s, f)
            case S.If(cond=c, then=then, orelse=orelse):
                self._expr(c, f, _key(s.at, "if"))
                self._block(then, f.learn(c))
                self._block(orelse, f.learn(negated(c)))
                return self._after(f, (*then, *orelse))
            case S.ForEach(var=var, over=over, body=body):
                self._expr(over, f, _key(s.at, "for_each", "in"))
                before = self._after(f, body)
                self._block(body, self._member(before, var, _listed(over)))
                return before
            case S.Repeat(count=n, body=body):
                self._expr(n, f, _key(s.at, "repeat"))
                before = self._after(f, body)
                self._block(body, before)
                return before
            case (S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.Do() | S.Raise()
                  | S.Drop() | S.Shuffle() | S.New() | S.DoValue() | S.Apply()):
                self._exprs(S.exprs(s), f, s.at)
                if isinstance(s, S.MoveItem) and s.src is not None:
                    self._held(s.item, s.src.node, f, s.at)
                after = self._after(f, (s,))
                if isinstance(s, S.New) and same(s.place.node, PLAYERS):
                    after = after.sized(PLAYERS, f.size(PLAYERS) + 1)
                return after
            case _:
                assert_never(s)

    def _items(self, items: tuple[S.Item, ...], f: Facts) -> None:
        for i in items:
            match i:
                case S.Choose() | S.Require():
                    f = self._guard(i, f)
                case S.Branch(cond=c, then=then, orelse=orelse):
                    self._expr(c, f, _key(i.at, "if"))
                    self._items(then, f.learn(c))
                    self._items(orelse, f.learn(negated(c)))
                    return  # each branch went on with the items after it
                case S.DoChoose(value=value, cases=cases):
                    if value is not None:
                        self._expr(value, f, i.at)
                    for case in cases:
                        if case.run is not None:
                            self._exprs(case.run.args, f, i.at)
                        self._items(case.rest, f.forget_state(self.always))
                    return
                case S.ApplyChoose(bundle=b, rest=rest):
                    self._exprs((b.key, *(x for x in b.shared if x is not None)), f, i.at)
                    self._items(rest, f.forget_state(self.always))
                    return
                case _:
                    f = self._stmt(i, f)

    # -- expressions ---------------------------------------------------------------------------

    def _exprs(self, nodes: tuple[ir.Expr, ...], f: Facts, at: S.At) -> None:
        for n in nodes:
            self._expr(n, f, at)

    def _expr(self, node: ir.Expr, f: Facts, at: S.At) -> None:
        match node:
            case ir.Cond(test=c, then=a, orelse=b):
                self._expr(c, f, at)
                self._expr(a, f.learn(c), at)
                self._expr(b, f.learn(negated(c)), at)
                return
            case ir.BoolOp(op=op, values=vs):
                g = f
                for v in vs:
                    self._expr(v, g, at)
                    g = g.learn(v if op == "and" else negated(v))
                return
            case ir.Comp(elt=elt, var=var, source=source, conds=conds):
                self._expr(source, f, at)
                g = self._member(f, var, _listed(source))
                for c in conds:
                    self._expr(c, g, at)
                    g = g.learn(c)
                self._expr(elt, g, at)
                return
            case ir.Measure():
                return  # a measure's body is checked where the measures are
            case ir.BinOp(op="//" | "%", right=right):
                iv = self._iv(right, f)
                if iv[0] <= 0 <= iv[1]:
                    d = written(right)
                    self._report(at, "divisor-zero",
                                 f"the divisor of '{written(node)}' can be 0 (it can be "
                                 f"{B.show_interval(iv)}): divide by max(1, {d}), or require "
                                 f"{d} > 0 before it",
                                 written(ir.BinOp(node.op, node.left,
                                                  ir.Call("max", (ir.Lit(1), right)))))
            case ir.Call(fn="first" | "min" | "max" as fn, args=(items,)):
                self._nonempty(items, f, at, fn)
            case ir.Index(base=base, key=key, of_list=True):
                self._in_range(base, key, f, at, node)
            case _:
                pass
        for c in ir.children(node):
            self._expr(c, f, at)

    def _nonempty(self, items: ir.Expr, f: Facts, at: S.At, fn: str) -> None:
        if self._size(items, f) >= 1:
            return
        every = self._every(items, f)
        if every is not None and all(len(v) > 0 for v in every):
            return
        shown = written(items)
        total = f"{fn}({shown}, DEFAULT)"
        if every is not None:
            self._report(at, "partial-operation",
                         f"{fn}() of '{shown}': that list is empty"
                         + (" for some of the values it reads" if len(every) > 1 else "")
                         + f"; write {total} with the value an empty list gives", total)
            return
        self._report(at, "partial-operation",
                     f"{fn}() of '{shown}', which may be empty: nothing before it says it "
                     f"holds an item; write {total} with the value an empty list gives, or "
                     f"require len({shown}) > 0 before it", total)

    def _held(self, item: ir.Expr, source: ir.Expr, f: Facts, at: S.At) -> None:
        """A move of `item` out of `source`: the list holds it (known: the item was chosen
        from it or found in it), or the move is `loose` (it moves nothing when the list does
        not hold the item: the language's rule, which the back end prints as a test)."""
        known = item
        while True:
            if any(same(x, known) and same(s, source) for x, s in f.members):
                return
            if not isinstance(known, ir.Local) or known.name not in f.defs:
                break
            known = f.defs[known.name]
        every = self._every(ir.Compare(item, (("in", source),)), f)
        if every is not None and every and all(every):
            return
        self.loose.add(at.path)

    def _in_range(self, base: ir.Expr, key: ir.Expr, f: Facts, at: S.At,
                  node: ir.Expr) -> None:
        into = self._index_into(key, f)
        if into is not None and same(into, base):
            return  # an index of that list
        lo, hi = self._iv(key, f)
        every = self._every(base, f)
        size = min((len(v) for v in every), default=0) if every is not None \
            else self._size(base, f)
        if (hi < 0 and lo >= -size) or (lo >= 0 and hi < size):
            return
        shown = written(base)
        held = f"it holds at least {size} item{'s' if size != 1 else ''}" if size \
            else "nothing before it says it holds any item"
        k = written(key)
        test = f"len({shown}) > {k}" if lo >= 0 else f"len({shown}) >= {written(ir.Neg(key))}" \
            if not isinstance(key, ir.Lit) else f"len({shown}) >= {-int(lo)}"
        self._report(at, "partial-operation",
                     f"'{written(node)}' may be past the end of '{shown}': its index can be "
                     f"{B.show_interval((lo, hi))}, and {held}; test {test} first (in an if "
                     "or a require)", f"{written(node)} if {test} else DEFAULT")

    def _index_into(self, key: ir.Expr, f: Facts) -> ir.Expr | None:
        """The list `key` is an index of (0 to its length less 1), when known."""
        match key:
            case ir.Local(name=name):
                found = f.index_of.get(name)
                if found is not None:
                    return found
                value = f.defs.get(name)
                return self._index_into(value, f) if value is not None else None
            case ir.BinOp(op="%", right=right):
                d = f.defs.get(right.name) if isinstance(right, ir.Local) else right
                if isinstance(d, ir.Call) and d.fn == "len" and self._size(d.args[0], f) >= 1:
                    return d.args[0]
                return None
            case ir.Cond(then=a, orelse=b):
                x, y = self._index_into(a, f), self._index_into(b, f)
                return x if x is not None and y is not None and same(x, y) else None
            case _:
                return None

    def _index_item(self, source: ir.Expr, f: Facts) -> ir.Expr | None:
        """The list every item of `source` is an index of, when known."""
        match source:
            case ir.Call(fn="range", args=(ir.Call(fn="len", args=(xs,)),)):
                return xs
            case ir.Comp(elt=elt, var=var, source=inner):
                return self._index_into(elt, self._member(f, var, _listed(inner)))
            case ir.Local(name=name) if name in f.defs:
                return self._index_item(f.defs[name], f)
            case _:
                return None

    def _size(self, items: ir.Expr, f: Facts) -> int:
        """How many items the list is known to hold at least."""
        known = f.size(items)
        match items:
            case ir.ListOf(items=xs):
                return max(known, len(xs))
            case ir.Keys(is_table=False, source=s) | ir.Call(fn="sorted" | "reversed",
                                                               args=(s,)):
                return max(known, self._size(s, f))
            case ir.Comp(source=s, conds=()):
                return max(known, self._size(_listed(s), f))
            case ir.Comp(var=var, source=s, conds=conds):
                return max(known, 1 if self._met(var, _listed(s), conds, f) else 0)
            case ir.Call(fn="range", args=(n,)):
                return max(known, int(max(0, min(self._iv(n, f)[0], ENUMERATE_LIMIT))))
            case ir.Local(name=name) if name in f.defs:
                return max(known, self._size(f.defs[name], f))
            case _:
                return known

    def _met(self, var: str, source: ir.Expr, conds: tuple[ir.Expr, ...], f: Facts) -> bool:
        """Whether an item known to be in `source` meets every condition of a comprehension
        over it (so the comprehension holds an item)."""
        for item, listed in f.members:
            if not same(listed, source):
                continue
            put: dict[ir.Expr, ir.Expr] = {ir.Local(var): item}
            if all(_true(ir.substitute(c, put), f) for c in conds):
                return True
        return False

    def _every(self, node: ir.Expr, f: Facts) -> list[Any] | None:
        """Every value `node` can take, when it reads no state and the locals it reads have
        few known values (None: not known)."""
        if _reads_state(node):
            return None
        names = sorted(free_locals(node))
        if any(n not in f.domains for n in names):
            return None
        count = 1
        for n in names:
            count *= max(1, len(f.domains[n]))
            if count > ENUMERATE_LIMIT:
                return None
        out: list[Any] = []
        for combo in itertools.product(*(f.domains[n] for n in names)):
            try:
                out.append(const.evaluate(node, dict(zip(names, combo, strict=True)),
                                          self._cell, ENUMERATE_LIMIT))
            except const.NotConstant:
                return None
        return out

    def _values(self, node: ir.Expr, f: Facts) -> tuple[Any, ...] | None:
        """The items of a list that is a constant of the rules, if few."""
        every = self._every(node, f)
        if every is None or len(every) != 1:
            return None
        (got,) = every
        if isinstance(got, Mapping):
            got = tuple(got)
        if not isinstance(got, tuple | list) or len(got) > ENUMERATE_LIMIT:
            return None
        return tuple(got)

    def _cell(self, kind: str, col: str, key: Any) -> Any:
        rows = self.columns(kind, col)
        if rows is None:
            raise KeyError(col)
        return rows[key]

    def _known(self, f: Facts) -> B.Known:
        return B.Known(self.fields, f.locals, f.range, self.columns)

    def _iv(self, node: ir.Expr, f: Facts) -> B.Interval:
        every = self._every(node, f)
        if every and all(isinstance(v, int) and not isinstance(v, bool) for v in every):
            return (min(every), max(every))
        if isinstance(node, ir.Local) and node.name in f.defs:
            return B.meet(B.interval(node, self._known(f)), self._iv(f.defs[node.name], f))
        return B.interval(node, self._known(f))

    def _report(self, at: S.At, code: str, message: str, suggestion: str) -> None:
        key = (at.path, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.problems.append(StepProblem(code, message, at.path, suggestion))


def _key(at: S.At, *key: str) -> S.At:
    """Where the key of a step that holds an expression is."""
    return S.At((*at.path, *key), at.label)


def _true(cond: ir.Expr, f: Facts) -> bool:
    """Whether a condition holds for certain: known, or the same value compared equal."""
    if f.holds(cond):
        return True
    match cond:
        case ir.Compare(left=left, ops=(("==", right),)):
            return same(left, right)
        case ir.BoolOp(op="and", values=vs):
            return all(_true(v, f) for v in vs)
        case _:
            return False


def _changes(s: S.Stmt) -> bool:
    """Whether a statement may change the state itself (a procedure done may change any)."""
    match s:
        case S.Let() | S.If() | S.ForEach() | S.Repeat():
            return False
        case (S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.Do() | S.Raise()
              | S.Drop() | S.Shuffle() | S.New() | S.DoValue() | S.Apply()):
            return True
        case _:
            assert_never(s)
