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

A list of the state that declares `max_items` (rules/state.yaml) holds at most that many items
in every state the engine makes (the cost bounds and the saved-game schema rely on it). Each
write that adds items to one (a move into it, a new record, a list set) is proven to keep it
within the bound from what is known where it is (the list's length: at most its max_items
before the write, what a `require` or `if` said, what the steps before did to it; the count
moved: for each length the list can have, as `top: N - len(hand)` reads it), or refused when
it goes over from every length the list can have, or over by the count the rule writes alone
(`items-over-max`), or else `guarded` (neither proven nor refused): the engine checks it at
the write and fails there, naming the rule, before the list goes over (the build's backstop
games report that fault at the rule).
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
# at most this many lengths of a list are tried one by one to prove a write keeps it within its
# max_items (a longer range is taken as one interval)
LENGTHS_LIMIT = 256

Path = tuple[str | int, ...]

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
    known to be in a list, the lists known longer than an expression, what `A or B` says
    once `A` is false; each local's interval, the values it can have when they are few and
    known, what a let bound it to, and the locals that are an index of a list."""

    sizes: tuple[tuple[ir.Expr, int], ...] = ()
    ranges: tuple[tuple[ir.Expr, B.Interval], ...] = ()
    truths: tuple[ir.Expr, ...] = ()
    members: tuple[tuple[ir.Expr, ir.Expr], ...] = ()
    # (xs, e, k): len(xs) >= e + k, e any expression (`len(xs) > i` is (xs, i, 1))
    longer: tuple[tuple[ir.Expr, ir.Expr, int], ...] = ()
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
        """`node` holds at least `n` items: its length is at least `n`."""
        if n <= 0:
            return self
        return replace(self, sizes=(*self.sizes, (node, n))).ranged(
            ir.Call("len", (node,)), (n, B.INF))

    def longer_than(self, xs: ir.Expr, e: ir.Expr, k: int) -> Facts:
        """`len(xs) >= e + k`."""
        e, c = _offset(e)
        return replace(self, longer=(*self.longer, (xs, e, k + c)))

    def longer_by(self, xs: ir.Expr, e: ir.Expr) -> int | None:
        """The most k known with `len(xs) >= e + k`, if any."""
        e, c = _offset(e)
        return max((k - c for x, y, k in self.longer if same(x, xs) and same(y, e)),
                   default=None)

    def ranged(self, node: ir.Expr, iv: B.Interval) -> Facts:
        return replace(self, ranges=(*self.ranges, (node, iv)))

    def _pair(self, a: ir.Expr, op: ir.CmpOpName, b: ir.Expr) -> Facts:
        f = self
        if op == "in":
            listed = _listed(b)
            return replace(f, members=(*f.members, (a, listed))).sized(listed, 1)
        for x, o, y in ((a, op, b), (b, _FLIP.get(op), a)):
            if isinstance(x, ir.Call) and x.fn == "len" and const.integer(y) is None:
                at = {">": 1, ">=": 0, "==": 0}.get(o or "")
                if at is not None:
                    f = f.longer_than(x.args[0], y, at)
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
            longer=tuple((a, b, k) for a, b, k in self.longer if not (gone(a) or gone(b))),
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


# the name a loop's range bound is read as when the loop's body changes what it counts
_STALE_BOUND = "#bound read before the loop"


def _changes_bound(over: ir.Call, written: frozenset[str] | None) -> bool:
    """Whether the body of a loop over `range(...)` may change a field its bound reads
    (`written` None: anything)."""
    return written is None or any(_reads_fields(a, written) for a in over.args)


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


def _offset(e: ir.Expr) -> tuple[ir.Expr, int]:
    """`e` as `e' + c`, c a constant (`i + 1` is (i, 1), `i - 2` is (i, -2), `i` is (i, 0))."""
    c = 0
    while isinstance(e, ir.BinOp) and e.op in ("+", "-"):
        k = const.integer(e.right)
        if k is None:
            break
        c, e = c + (k if e.op == "+" else -k), e.left
    return e, c


def _reads(node: ir.Expr, part: ir.Expr) -> bool:
    """Whether `part` is `node` or one of its parts."""
    return any(same(n, part) for n in ir.walk(node))


def _from_end(xs: ir.Expr, key: ir.Expr) -> ir.Expr | None:
    """`n` when `key` is `len(xs) - n` (an index counted from the end of `xs`)."""
    match key:
        case ir.BinOp(op="-", left=ir.Call(fn="len", args=(ys,)), right=n) if same(xs, ys):
            return n
        case _:
            return None


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
                 setup: str | None, procs: Mapping[str, S.Proc] | None = None,
                 max_items: Mapping[str, int] | None = None,
                 start_items: Mapping[str, int] | None = None) -> None:
        self.procs = procs or {}
        self.max_items = max_items or {}  # the declared max_items of the lists (`player.X`)
        # how many items each of them holds before the setup (its default); in the setup, the
        # fields no step has written yet (None elsewhere). A field a new record is given (`new:
        # ... with:`) anywhere is never taken as at its default.
        given = {f"player.{n}" for proc in self.procs.values() for x in S.walk(proc.effects)
                 if isinstance(x, S.New) for n, _v in x.fields}
        self.start_items = {k: v for k, v in (start_items or {}).items() if k not in given}
        self._fresh: set[str] | None = None
        # the writes into such a list neither proven nor refused, each with its field and bound:
        # the engine checks them where they write (by the write's path and its field)
        self.guarded: dict[tuple[Path, str], int] = {}
        self.proven: set[tuple[Path, str]] = set()  # the writes proven within the bound
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
        self._seating: str | None = None  # in the setup: the step that makes its players
        self._me: dict[str, bool] = {}  # whether a procedure reads the acting player's fields

    # -- what is checked ---------------------------------------------------------------------

    def proc(self, p: S.Proc) -> None:
        self._kept = self.always if p.id != self.setup else None
        self._fresh = set(self.start_items) if p.id == self.setup else None
        self._seating = None
        if p.id == self.setup:
            self._seating = next((x.at.label for x in p.effects for y in S.walk((x,))
                                  if isinstance(y, S.New) and same(y.place.node, PLAYERS)), None)
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
        self._fresh = None
        self._items(a.items, self.always)

    def measure(self, body: ir.Expr, at: S.At) -> None:
        """A measure of the rules (rules/vocabulary.yaml), read anywhere: proven with what
        holds in every state."""
        self._kept = self.always
        self._fresh = None
        self._expr(body, self.always, at)

    def phase(self, ph: CheckedPhase, at: S.At) -> None:
        """A phase's conditions, and who moves in it where they hold (`lang/phases.py`)."""
        self._kept = f = self.always
        self._fresh = None
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
        self._no_player_yet(g, f)
        match g:
            case S.Let():
                return self._let(g, f)
            case S.Require(cond=c):
                self._expr(c, f, _key(g.at, "require"))
                # its words are shown where the condition is false (what the reason shows is
                # reported at its reason)
                unmet = f.learn(negated(c))
                self._exprs(S.words_exprs(g.rule), unmet, g.at)
                self._exprs(S.words_exprs(g.reason), unmet, _key(g.at, "reason"))
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
            self._spend((s,))
        return f

    def _spend(self, stmts: tuple[S.Stmt, ...]) -> None:
        """The fields the statements may write are no longer at their defaults (setup)."""
        if not self._fresh:
            return
        got = self._written(stmts)
        self._fresh = set() if got is None else self._fresh - got

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
        self._no_player_yet(s, f)
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
                source = _listed(over)
                if isinstance(over, ir.Call) and over.fn == "range" and _changes_bound(
                        over, self._written(body)):
                    # range(len(xs)) with a body that changes xs: the bound was read once,
                    # before the body changed what it counts; the number is all that is known
                    source = ir.Call("range", (ir.Local(_STALE_BOUND),))
                inner, before = self._grown(s, f, self._member(before, var, source), before)
                self._block(body, self._each_record(s, inner))
                return before
            case S.Repeat(count=n, body=body):
                self._expr(n, f, _key(s.at, "repeat"))
                before = self._after(f, body)
                inner, after = self._grown(s, f, before, before)
                self._spend(body)
                self._block(body, inner)
                return self._drained(s, f, after)
            case (S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.Do() | S.Raise()
                  | S.Drop() | S.Shuffle() | S.New() | S.DoValue() | S.Apply()):
                for node, at in _keyed_exprs(s):  # each where it is written in the step
                    self._expr(node, f, at)
                if isinstance(s, S.Change):
                    self._never_within(s, f)
                if isinstance(s, S.MoveItem) and s.src is not None:
                    self._held(s.item, s.src.node, f, s.at)
                lengths = self._room(s, f)
                after = self._after(f, (s,))
                for node, iv in lengths:
                    after = after.ranged(ir.Call("len", (node,)), iv).sized(node, int(iv[0]))
                if isinstance(s, S.New) and same(s.place.node, PLAYERS):
                    after = after.sized(PLAYERS, f.size(PLAYERS) + 1)
                return after
            case _:
                assert_never(s)

    def _never_within(self, s: S.Change, f: Facts) -> None:
        """A computed number set into a place is kept within its declared bounds; one that
        is outside them whatever the state (`0 - 1` into a place of 0 and up) is refused
        where it is written, as the same number written out is (it would only ever set the
        bound)."""
        for c in s.changes:
            lo, hi = c.place.lo, c.place.hi
            if not isinstance(c, S.Assign) or not c.clamp or (lo is None and hi is None):
                continue
            iv = self._iv(c.value, f)
            if (lo is not None and iv[1] < lo) or (hi is not None and iv[0] > hi):
                holds = f"{lo} and up" if hi is None else f"up to {hi}" if lo is None \
                    else f"{lo} to {hi}"
                self._report(_key(s.at, *c.key) if c.key else s.at, "value-out-of-range",
                             f"'{written(c.value)}' is {B.show_interval(iv)}, always outside "
                             f"what this place holds ({holds}: its declared bounds): it would "
                             "only ever set the bound", None)

    def _no_player_yet(self, s: S.Stmt | S.GuardStmt, f: Facts) -> None:
        """In the setup, before a step made a player: a step that reads or changes a field of
        the acting player (the setup's is its first player), itself or through a procedure it
        does, is refused where it is written (the engine would fail on it as a game is
        made)."""
        if self._kept is not None:
            return
        seated = self._length(PLAYERS, f)[0] >= 1
        key: tuple[str, ...] = ("for_each", "in") if isinstance(s, S.ForEach) \
            else (_effect_key(s),)
        found: ir.Expr | None = None
        if isinstance(s, S.Let):
            for b in s.binds:
                found = _acting(b.value)
                if found is not None:
                    key = ("let", b.name)
                    break
        else:
            found = next((x for e in S.exprs(s) if (x := _acting(e)) is not None), None)
        what = f"'{written(found)}', a field of the acting player" if found is not None \
            else None
        name = found.field if isinstance(found, ir.PlayerField) else "NAME"
        if what is not None:
            # the setup's own steps have no acting player, before the players are made or
            # after: its code reads that player as it begins, before any exists
            self._report(_key(s.at, *key), "partial-operation",
                         f"this step reads or changes {what}, and the setup has no acting "
                         f"player: write it for each player (for_each: {{as: q, in: "
                         f"{written(PLAYERS)}}}, and q.{name}), or of one "
                         f"({written(PLAYERS)}[0].{name})", None)
            return
        if seated:
            return
        if what is None:
            ran = [r.proc for r in self._runs(s) if self._reads_me(r.proc)]
            if not ran:
                return
            what = f"the acting player's fields, in the procedure '{ran[0]}' it does"
        seat = f"after '{self._seating}', the step that makes them" if self._seating \
            else f"after the step that makes them (new: {written(PLAYERS)})"
        self._report(_key(s.at, *key), "partial-operation",
                     f"this step reads or changes {what}, and no player exists yet where it "
                     f"is in the setup (the acting player of the setup is its first): move "
                     f"it {seat}, or write it for each player (for_each: {{as: q, in: "
                     f"{written(PLAYERS)}}}, and q.{name})",
                     f"$after: {self._seating}" if self._seating else "$after: STEP")

    def _runs(self, s: S.Stmt | S.GuardStmt) -> tuple[S.Run, ...]:
        """The procedures a statement does itself (an apply: each its rows may do)."""
        if isinstance(s, S.Apply):
            return tuple(S.Run(e, ()) for _k, row in s.bundle.rows for e, _a in row)
        if isinstance(s, S.Require | S.Choose | S.Let):
            return ()
        return S.runs(s)

    def _reads_me(self, pid: str) -> bool:
        """Whether the procedure (or one it does) reads or changes a field of the acting
        player."""
        if pid not in self._me:
            self._me[pid] = False  # (while it is worked out: a cycle adds nothing)
            proc = self.procs.get(pid)
            stmts: list[S.Stmt | S.GuardStmt] = [] if proc is None else [
                *proc.guard, *S.walk(proc.effects)]
            self._me[pid] = any(
                any(_acting(e) is not None for e in S.exprs(x))
                or any(self._reads_me(r.proc) for r in self._runs(x)) for x in stmts)
        return self._me[pid]

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

    # -- lists within their max_items ----------------------------------------------------------

    def _bounded(self, node: ir.Expr) -> tuple[str, int] | None:
        """The declared field a list of the state is (`player.X`) and its max_items, when it
        declares one."""
        match node:
            case ir.PlayerField(field=name):
                key = f"player.{name}"
            case ir.GameField(field=name):
                key = f"game.{name}"
            case _:
                return None
        most = self.max_items.get(key)
        return None if most is None else (key, most)

    def _length(self, node: ir.Expr, f: Facts) -> B.Interval:
        """An interval holding the number of items of the list `node`."""
        every = self._every(node, f)
        if every and all(isinstance(v, list | tuple | Mapping) for v in every):
            return (min(len(v) for v in every), max(len(v) for v in every))
        own: B.Interval
        match node:
            case ir.ListOf(items=xs):
                own = (len(xs), len(xs))
            case ir.Keys(is_table=False, source=inner) | ir.Call(fn="sorted" | "reversed",
                                                                   args=(inner,)):
                own = self._length(inner, f)
            case ir.Comp(source=inner, conds=conds):
                lo, hi = self._length(_listed(inner), f)
                own = (lo if not conds else 0, hi)
            case ir.Call(fn="range", args=(n,)):
                lo, hi = self._iv(n, f)
                own = (max(0, lo), max(0, hi))
            case ir.Local(name=name) if name in f.defs:
                own = self._length(f.defs[name], f)
            case ir.Cond(then=a, orelse=b):
                own = B.join(self._length(a, f), self._length(b, f))
            case _:
                own = (0, B.INF)
        bounded = self._bounded(node)
        if bounded is not None:  # every write to it is proven or guarded: it holds
            own = B.meet(own, (0, bounded[1]))
            if self._fresh and bounded[0] in self._fresh and bounded[0] in self.start_items:
                start = self.start_items[bounded[0]]  # the setup has not written it yet
                own = B.meet(own, (start, start))
        own = B.meet(own, (self._size(node, f), B.INF))
        return B.meet(own, B.interval(ir.Call("len", (node,)), self._known(f)))

    def _each_length(self, node: ir.Expr, f: Facts) -> list[tuple[B.Interval, Facts]]:
        """The lengths the list `node` can have, one by one when they are few (each with what
        is known once it has that length), else as one interval."""
        lo, hi = self._length(node, f)
        if lo > hi:
            return []  # no state reaches it
        if hi - lo >= LENGTHS_LIMIT:
            return [((lo, hi), f)]
        size = ir.Call("len", (node,))
        return [((n, n), f.ranged(size, (n, n)).sized(node, int(n)))
                for n in range(int(lo), int(hi) + 1)]

    def _adds(self, s: S.Stmt, dst: ir.Expr, f: Facts) -> tuple[B.Interval, B.Bound] | None:
        """How many items the write `s` adds to the list `dst` (an interval), and at least how
        many the rule's own count says (what it adds when its source holds enough); None when
        it adds none (it only takes from it, or moves within it)."""
        match s:
            case S.MoveItem(src=src):
                if src is not None and same(src.node, dst):
                    return None
                least = 0 if s.at.path in self.loose else 1
                return (least, 1), 1
            case S.MoveAll(src=src):
                if same(src.node, dst):
                    return None
                iv = self._length(src.node, f)
                return iv, iv[0]
            case S.MoveSome(count=count, src=src):
                if same(src.node, dst):
                    return None
                c_lo, c_hi = self._iv(count, f)
                s_lo, s_hi = self._length(src.node, f)
                return ((max(0, min(c_lo, s_lo)), max(0, min(c_hi, s_hi))), max(0, c_lo))
            case S.New():
                return (1, 1), 1
            case _:
                return None

    def _room(self, s: S.Stmt, f: Facts) -> list[tuple[ir.Expr, B.Interval]]:
        """Each list with a declared max_items the write `s` adds items to, proven to keep it
        within the bound, refused (`items-over-max`) or guarded; with the interval its length
        is in after the write."""
        out: list[tuple[ir.Expr, B.Interval]] = []
        targets: list[tuple[ir.Expr, S.Stmt | S.Assign]]
        match s:
            case S.MoveItem(dst=dst) | S.MoveAll(dst=dst) | S.MoveSome(dst=dst):
                targets = [] if dst is None else [(dst.node, s)]
            case S.New(place=pl):
                targets = [(pl.node, s)]
            case S.Change(changes=cs):
                targets = [(c.place.node, c) for c in cs if isinstance(c, S.Assign)
                           and c.place.type.name == "list"]
            case _:
                targets = []
        if isinstance(s, S.New):  # the lists a new record is given
            for name, value in s.fields:
                most = self.max_items.get(f"player.{name}")
                if most is not None:
                    place = S.Place(ir.PlayerField(name, ir.Me()), VType("list"),
                                    field=f"player.{name}")
                    self._fits(s, S.Assign(place, value, False), f"player.{name}", most,
                               self._length(value, f))
        for node, w in targets:
            bounded = self._bounded(node)
            if bounded is None:
                continue
            field_id, most = bounded
            key = (s.at.path, field_id)
            after: list[B.Interval] = []
            least: list[B.Bound] = []  # the least length after, by the rule's count
            for (lo, hi), g in self._each_length(node, f):
                if isinstance(w, S.Assign):
                    iv = self._length(w.value, g)
                    after.append(iv)
                    least.append(iv[0])
                    continue
                got = self._adds(w, node, g)
                if got is None:
                    after.append((lo, hi))
                    least.append(lo)
                    continue
                (a_lo, a_hi), written_lo = got
                after.append((lo + a_lo, hi + a_hi))
                least.append(lo + written_lo)
            if not after:
                continue
            lo, hi = B.join(*after)
            if hi <= most:
                self.proven.add(key)
                out.append((node, (lo, hi)))
                continue
            if min(least) > most:
                self._over(s, w, node, field_id, most, lo > most)
                continue
            self.guarded[key] = most
            out.append((node, (min(lo, most), most)))
        return out

    def _fits(self, s: S.Stmt, w: S.Assign, field_id: str, most: int, size: B.Interval) -> None:
        """A list of `size` items given to a new record's field of max_items `most`."""
        key = (s.at.path, field_id)
        if size[1] <= most:
            self.proven.add(key)
        elif size[0] > most:
            shown = written(w.value)
            self.problems.append(StepProblem(
                "items-over-max",
                f"this step gives a new record's {field_id.partition('.')[2]} {shown}, more "
                f"items than its max_items ({most}) allows: every state keeps {field_id} within "
                f"{most} items (the cost bounds and the saved games rely on it); give it fewer, "
                "or raise its max_items in rules/state.yaml", s.at.path, bounds_of=field_id))
        else:
            self.guarded[key] = most

    def _over(self, s: S.Stmt, w: S.Stmt | S.Assign, node: ir.Expr, field_id: str, most: int,
              always: bool) -> None:
        """A write that puts more items into a list than its max_items: from every length the
        list can have (`always`), or by the count the rule writes (when its source holds
        them)."""
        shown = written(node)
        room = f"{most} - len({shown})"
        match w:
            case S.MoveSome(count=count, top=top):
                fix = f"{'top' if top else 'first'}: min({written(count)}, {room})"
            case S.MoveAll():
                fix = f"require: len({shown}) + len(...) <= {most} before it, or move fewer"
            case S.Assign(value=value):
                fix = f"set: {{{shown}: {written(value)}}} with at most {most} items"
            case _:
                fix = f"if: len({shown}) < {most}, around the step"
        how = "puts more items into '{}' than its max_items ({}) allows, whatever it held" \
            if always else "can put more items into '{}' than its max_items ({}) allows, as " \
            "soon as what it takes them from holds that many"
        self.problems.append(StepProblem(
            "items-over-max",
            f"this step {how.format(shown, most)}: every state keeps {field_id} within {most} "
            "items (the cost bounds and the saved games rely on it); put fewer items in, or "
            "raise its max_items in rules/state.yaml", s.at.path, fix, bounds_of=field_id))

    def _each_record(self, s: S.ForEach, f: Facts) -> Facts:
        """In a loop over the players whose steps write a field of the player they are at
        only (`q.hand`, no procedure done writes it): in the setup, before any step wrote that
        field, each player's is still at its default when the loop is at them."""
        fresh = self._fresh
        self._spend(s.body)
        if not fresh or not same(_listed(s.over), PLAYERS):
            return f
        mine = ir.Local(s.var)
        done: set[str] = set()
        for x in S.walk(s.body):
            for r in S.runs(x):
                got = self._written((S.Do(x.at, r),))
                if got is None:
                    return f
                done |= got
            if isinstance(x, S.Apply | S.New):
                return f
            for pl in S.places(x):
                node = pl.node
                if isinstance(node, ir.PlayerField) and same(node.of, mine):
                    continue
                while isinstance(node, ir.Index | ir.Get):
                    node = node.base
                match node:
                    case ir.PlayerField(field=name):
                        done.add(f"player.{name}")
                    case _:
                        pass
        for key in fresh - done:
            scope, _, name = key.partition(".")
            if scope == "player":
                node = ir.PlayerField(name, mine)
                n = self.start_items[key]
                f = f.ranged(ir.Call("len", (node,)), (n, n)).sized(node, n)
        return f

    def _grown(self, s: S.ForEach | S.Repeat, f: Facts, inner: Facts, after: Facts
               ) -> tuple[Facts, Facts]:
        """A loop whose steps only add items one at a time to a list (a `new` record, an item
        moved in), outside any loop of their own, and no procedure they do writes it: the list
        grows by at most that many items a time round, so by what the count of times says
        (`for_each: {as: k, in: range(seats)}` of a `new: game.players`). What is known in
        the loop's steps and after it."""
        count: B.Interval
        match s:
            case S.ForEach(over=ir.Call(fn="range", args=(n,))):
                count = self._iv(n, f)
            case S.ForEach(over=over):
                count = self._length(_listed(over), f)
            case S.Repeat(count=n):
                count = self._iv(n, f)
        adds: dict[str, tuple[ir.Expr, int]] = {}
        made: dict[str, int] = {}  # the items a `new` adds each time round, whatever holds
        written: set[str] = set()
        for x in s.body:
            match x:
                case S.New(place=pl) | S.MoveItem(dst=pl) if pl is not None:
                    bounded = self._bounded(pl.node)
                    if bounded is not None and (bounded[0] not in adds
                                                or same(adds[bounded[0]][0], pl.node)):
                        k = adds[bounded[0]][1] if bounded[0] in adds else 0
                        adds[bounded[0]] = (pl.node, k + 1)
                        if isinstance(x, S.New):
                            made[bounded[0]] = made.get(bounded[0], 0) + 1
                        if isinstance(x, S.MoveItem) and x.src is not None:
                            written |= self._written((replace(x, dst=None),)) or set()
                        continue
                case _:
                    pass
            got = self._written((x,))
            if got is None:
                return inner, after
            written |= got
        times = count[1]
        for key, (node, k) in adds.items():
            if key in written or times == B.INF or free_locals(node):
                continue
            lo, hi = self._length(node, f)
            size = ir.Call("len", (node,))
            inner = inner.ranged(size, (lo, hi + k * max(0, times - 1)))
            # a new item each time round: at least as many more as the fewest times round
            least = lo + made.get(key, 0) * max(0, count[0])
            after = after.ranged(size, (least, hi + k * max(0, times))).sized(node, int(least))
        return inner, after

    def _drained(self, s: S.Repeat, f: Facts, before: Facts) -> Facts:
        """What is known after a repeat whose steps only take a fixed number of items out of
        one list: its length, for each length it had (`repeat: max(0, len(xs) + 1 - N)` of
        `move: {first: 1, from: xs}` leaves at most N - 1)."""
        if len(s.body) != 1 or not isinstance(s.body[0], S.MoveSome):
            return before
        take = s.body[0]
        k_lo, k_hi = self._iv(take.count, f)
        if k_lo != k_hi or k_lo < 0 or (take.dst is not None and same(take.dst.node,
                                                                       take.src.node)):
            return before
        xs = take.src.node
        after: list[B.Interval] = []
        for (lo, hi), g in self._each_length(xs, f):
            c_lo, c_hi = self._iv(s.count, g)
            c_lo, c_hi = max(0, c_lo), max(0, c_hi)
            after.append((max(0, lo - k_lo * c_hi), max(0, hi - k_lo * c_lo)))
        if not after:
            return before
        iv = B.join(*after)
        return before.ranged(ir.Call("len", (xs,)), iv).sized(xs, int(iv[0]))

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
        if lo >= 0 and (f.longer_by(base, key) or 0) >= 1:
            return  # `len(xs) > i` known
        back = _from_end(base, key)  # `xs[len(xs) - n]`: n items from its end
        if back is not None:
            n_lo, n_hi = self._iv(back, f)
            known = f.longer_by(base, back)
            if n_lo >= 1 and (n_hi <= size or (known is not None and known >= 0)):
                return
        shown = written(base)
        held = f"it holds at least {size} item{'s' if size != 1 else ''}" if size \
            else "nothing before it says it holds any item"
        k = written(key)
        value = const.integer(key)
        length = ir.Call("len", (base,))
        if back is not None:
            n = written(back)
            test = f"len({shown}) >= {n}" if self._iv(back, f)[0] >= 1 \
                else f"1 <= {n} <= len({shown})"
        elif value is not None:
            test = f"len({shown}) > {value}" if value >= 0 else f"len({shown}) >= {-value}"
        elif lo >= 0 and not _reads(key, length):
            test = f"len({shown}) > {k}"
        elif hi < 0 and not _reads(key, length):
            test = f"len({shown}) >= {written(ir.Neg(key))}"
        else:  # of either sign: tested on both sides
            test = written(ir.Compare(ir.Lit(0), (("<=", key), ("<", length))))
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
        if isinstance(node, ir.Call) and node.fn == "len" and len(node.args) == 1:
            least = self._size(node.args[0], f)  # a list known to hold so many items
            if least > 0:
                return B.meet(B.interval(node, self._known(f)), (least, B.INF))
        if isinstance(node, ir.Local) and node.name in f.defs:
            return B.meet(B.interval(node, self._known(f)), self._iv(f.defs[node.name], f))
        return B.interval(node, self._known(f))

    def _report(self, at: S.At, code: str, message: str, suggestion: str | None) -> None:
        key = (at.path, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.problems.append(StepProblem(code, message, at.path, suggestion))


def _key(at: S.At, *key: str) -> S.At:
    """Where the key of a step that holds an expression is."""
    return S.At((*at.path, *key), at.label)


def _keyed_exprs(s: S.Stmt) -> list[tuple[ir.Expr, S.At]]:
    """The expressions of an effect, each with where it is written: a set's or a gain's at
    its place's key, a move's at its item, count, from and to; the others at the step."""
    match s:
        case S.Change(changes=cs):
            return [(node, _key(s.at, *c.key) if c.key else s.at) for c in cs
                    for node in (c.place.node, c.amount if isinstance(c, S.Gain) else c.value)]
        case S.MoveItem() | S.MoveAll() | S.MoveSome():
            out: list[tuple[ir.Expr, S.At]] = []
            if isinstance(s, S.MoveItem):
                out.append((s.item, _key(s.at, "move", "item")))
            if isinstance(s, S.MoveSome):
                out.append((s.count, _key(s.at, "move", "top" if s.top else "first")))
            for name, place in (("from", s.src), ("to", s.dst)):
                if place is not None:
                    out.append((place.node, _key(s.at, "move", name)))
            return out
        case _:
            return [(node, s.at) for node in S.exprs(s)]


def _acting(node: ir.Expr) -> ir.Expr | None:
    """The first read of the acting player in the expression (a measure's body included): a
    field of theirs, or them."""
    for n in ir.walk(node):
        match n:
            case ir.PlayerField(of=ir.Me()) | ir.Me():
                return n
            case ir.Measure(body=body):
                if _acting(body) is not None:
                    return n
            case _:
                pass
    return None


def _effect_key(s: S.Stmt | S.GuardStmt) -> str:
    """The effect key a statement is written with (where its step is shown)."""
    match s:
        case S.Change(changes=cs):
            return "gain" if all(isinstance(c, S.Gain) for c in cs) else "set"
        case S.MoveItem() | S.MoveAll() | S.MoveSome():
            return "move"
        case S.DoValue():
            return "do"
        case _:
            return type(s).__name__.lower()


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
