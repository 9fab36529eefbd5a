"""What the moves show: an action lists its moves from what the mover sees.

The legal moves of a state are shown to the player who moves, and its bots list them on a game
dealt from that player's view (`determinize`). So the options of a choice, its conditions, and
the conditions that refuse a move, read only what the mover sees (rules/state.yaml `see:`):
otherwise the list of moves tells the player what the rules hide (the order of a face-down
deck, another player's hand), and a bot on its view lists moves the game refuses.

Of a field not everyone sees, the listing may read:
- its size (`len(...)`), where the size is seen (`count`, `top`, and a field of another player
  seen by its `owner`);
- its top item (`xs[-1]`), where the top is seen (`top`);
- the whole of it, where it is the mover's own field and its `owner` sees it.

The check runs on the checked IR of each action: its choices (what they choose from, and
their conditions), its requires and the conditions of its branches, through the lets they read,
the measures they read and the guards of the procedures a `do` chooses between. A place that a
move of the listing fills from one the mover does not see (the top card of a face-down deck
into a hand) is read after it as that place is seen: its size, not its items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import cast

from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.lang.tree import StepProblem
from lisboa_rules.model.state import StateDecl

# A field of the state (or an entry of one) as the mover sees it: its `see:`, its words, and
# the keys it is read at
Field = tuple[str, str, tuple[ir.Expr, ...]]
# the names a listing's lets bound to what the mover may not see: the words of what they
# read, or the hidden field they are another name for
Lets = dict[str, "str | Field"]

# what each kind of sight lets the listing read of a field: its size, its top item
_SIZE = frozenset({"count", "top", "owner"})
_TOP = frozenset({"top"})


def check_listing(actions: Mapping[str, S.Action], procs: Mapping[str, S.Proc],
                  state: StateDecl, actors: Mapping[str, ir.Expr | None] | None = None
                  ) -> list[StepProblem]:
    """A problem for each place an action's listing reads what the mover may not see.
    `actors`: the seat that moves in each phase (rules/flow.yaml `actor:`); where nothing the
    action may run writes what it reads, `game.players[ACTOR]` is the mover too."""
    out: list[StepProblem] = []
    for action in actions.values():
        actor = (actors or {}).get(action.phase)
        mover = None
        if actor is not None and not _may_write(action.items, procs, _game_fields(actor)):
            mover = ir.Index(ir.GameField("players"), actor)
        _Listing(state, procs, out, mover).items(action.items, {})
    return out


def _game_fields(node: ir.Expr) -> set[str]:
    """The fields of the state an expression reads (`game.X`, `player.X`)."""
    out: set[str] = set()
    for n in ir.walk(node):
        if isinstance(n, ir.GameField):
            out.add(f"game.{n.field}")
        elif isinstance(n, ir.PlayerField):
            out.add(f"player.{n.field}")
    return out


def _may_write(items: tuple[S.Item, ...], procs: Mapping[str, S.Proc], fields: set[str]
               ) -> bool:
    """Whether the items, or a procedure they may carry out (those they do, the hooks of the
    events they raise, the effects of the bundles they apply), may write one of `fields`."""
    todo: list[tuple[S.Stmt, ...]] = []
    seen: set[str] = set()

    def run(proc: str | None) -> None:
        if proc is not None and proc not in seen and proc in procs:
            seen.add(proc)
            todo.append(tuple(x for x in (*procs[proc].guard, *procs[proc].effects)
                              if not isinstance(x, S.Choose | S.Require)))

    stmts: list[S.Stmt] = []
    for item in S.items_walk(items):
        match item:
            case S.DoChoose(cases=cases):
                for case in cases:
                    run(case.proc)
            case S.ApplyChoose(bundle=bundle):
                for _key, effects in bundle.rows:  # the effects its rows may apply
                    for eid, _amount in effects:
                        run(eid)
            case S.Choose() | S.Require() | S.Branch():
                pass
            case _:
                stmts.append(item)
    todo.append(tuple(stmts))
    while todo:
        for st in S.walk(todo.pop()):
            if any(pl.field in fields for pl in S.places(st)):
                return True
            if isinstance(st, S.Apply):
                for _key, effects in st.bundle.rows:
                    for eid, _amount in effects:
                        run(eid)
            for r in S.runs(st):
                run(r.proc)
    return False


class _Listing:
    def __init__(self, state: StateDecl, procs: Mapping[str, S.Proc],
                 out: list[StepProblem], mover: ir.Expr | None = None) -> None:
        self.state = state
        self.procs = procs
        self.out = out
        self.seen: set[tuple[tuple[str | int, ...], str]] = set()
        self.mover = mover  # `game.players[ACTOR]`: the mover, read as `player`'s fields

    # -- the items of the listing ---------------------------------------------------------

    def items(self, items: tuple[S.Item, ...], lets: Lets) -> None:
        """`lets`: the names bound so far to a value that reads what the mover may not see:
        what they read, or the hidden field they name (see `_field`)."""
        for item in items:
            match item:
                case S.Let(binds=binds):
                    for b in binds:
                        lets = {k: v for k, v in lets.items() if k != b.name}
                        bound = self.bound(b.value, lets)
                        if bound is not None:
                            lets[b.name] = bound
                case S.Choose():
                    self.choose(item, lets)
                case S.Require(cond=cond, at=at):
                    self.read(cond, lets, at, ("require",),
                              "this condition, which refuses moves, reads")
                case S.Branch(cond=cond, at=at, then=then, orelse=orelse):
                    self.read(cond, lets, at, ("if",), "this condition, which decides which "
                              "moves are listed, reads")
                    self.items(then, lets)
                    self.items(orelse, lets)
                    return  # each branch goes on with the items after the if
                case S.DoChoose(value=value, at=at, cases=cases):
                    if value is not None:
                        self.read(value, lets, at, ("do",), "this value, which decides which "
                                  "moves are listed, reads")
                    for case in cases:
                        proc = self.procs.get(case.proc) if case.proc is not None else None
                        if proc is not None:  # its guard, with what its arguments read
                            args = case.run.args if case.run is not None else ()
                            self.items(proc.guard, self.given(proc, args, lets))
                        self.items(case.rest, lets)
                    return
                case S.ApplyChoose(rest=rest):
                    self.items(rest, lets)
                    return
                case (S.MoveItem() | S.MoveAll() | S.MoveSome() | S.Change() | S.Do() | S.If()
                      | S.ForEach() | S.Repeat()):
                    lets = self.moves_in((item,), lets, set())
                case _:
                    pass  # another effect: what it changes is read as the state it makes

    def moved(self, m: S.MoveItem | S.MoveAll | S.MoveSome, lets: Lets) -> Lets:
        """`lets` after a move of the listing: a place a move fills from one the mover does
        not see (the top cards of a face-down deck) is read after it as that place is: its
        size, not its items (a choice from it would show them before the move is made)."""
        if m.src is None or m.dst is None:
            return lets
        src = self._field(m.src.node, lets)
        if src is None or src[0] == "all":
            return lets
        if src[0] == "top" and isinstance(m, S.MoveSome) and m.top \
                and const.integer(m.count) == 1:
            return lets  # the top item, which shows
        zone = _zone(m.dst.node)
        return lets if zone is None else {**lets, zone: f"what a step before it moved there "
                                                        f"from {src[1]}"}

    def given(self, proc: S.Proc, args: tuple[ir.Expr, ...], lets: Lets) -> Lets:
        """The names of a procedure's parameters given what the mover does not see."""
        out: Lets = {}
        for prm, arg in zip(proc.params, args, strict=False):
            bound = self.bound(arg, lets)
            if bound is not None:
                out[prm.name] = bound
        return out

    def bound(self, value: ir.Expr, lets: Lets) -> str | Field | None:
        """What a name given `value` stands for in `lets`: another name for a hidden field
        (read as the field is), the words of what it reads that the mover does not see, or
        None (nothing hidden)."""
        field = self._field(value, lets)
        if field is not None and field[0] != "all":
            return field
        return self.hidden(value, lets)

    def moves_in(self, stmts: tuple[S.Stmt, ...], lets: Lets, done: set[str]) -> Lets:
        """`lets` after the moves and the sets of effects (those nested in them, and of the
        procedures they do, each once): a place filled or set from what the mover does not
        see is read after them as hidden (`moved`)."""
        for st in stmts:
            match st:
                case S.MoveItem() | S.MoveAll() | S.MoveSome():
                    lets = self.moved(st, lets)
                case S.Change(changes=cs):  # a value set from what the mover does not see
                    for c in cs:
                        found = self.hidden(c.amount if isinstance(c, S.Gain) else c.value,
                                            lets)
                        zone = _zone(c.place.node) if found is not None else None
                        if zone is not None and found is not None:
                            lets = {**lets, zone: f"what a step before it set from {found}"}
                case S.Do(run=run) if run.proc not in done:
                    done.add(run.proc)
                    proc = self.procs.get(run.proc)
                    if proc is not None:
                        lets = self.moves_in(proc.effects, lets, done)
                case _:
                    lets = self.moves_in(S.nested(st), lets, done)
        return lets

    def choose(self, c: S.Choose, lets: Lets) -> None:
        of = c.of
        if isinstance(of, S.OneOf):
            source: ir.Expr = of.keys.source if not of.keys.is_table else of.keys
            self.read(source, lets, c.at, ("choose", "from"), "the options of this choice read")
        else:
            self.read(of.source, lets, c.at, ("choose", "from"), "the options of this choice read")
            for n in (of.lo, of.hi):
                self.read(n, lets, c.at, ("choose",), "how many this choice takes reads")
            if of.leads_by is not None:
                self.read(of.leads_by, lets, c.at, ("choose", "leads"), "this choice's lead reads")
            if of.leads_where is not None:
                self.read(of.leads_where, lets, c.at, ("choose", "leads"),
                          "this choice's lead reads")
        if of.where is not None:
            self.read(of.where, lets, c.at, ("choose", "where"),
                      "the condition of this choice's options reads")

    def read(self, node: ir.Expr, lets: Lets, at: S.At,
             key: tuple[str, ...], what: str) -> None:
        found = self.hidden(node, lets)
        if found is None:
            return
        path = (*at.path, *key)
        if (path, found) in self.seen:
            return
        self.seen.add((path, found))
        self.out.append(StepProblem(
            "hidden-read",
            f"{what} {found}, which the player who moves does not see (rules/state.yaml "
            "`see:`): the legal moves would show it to them and to their bots; read only what "
            "the mover sees (the size of a hidden list, len(...); the top of a pile whose top "
            "shows, xs[-1]; the mover's own fields)",
            path))

    # -- what an expression reads -----------------------------------------------------------

    def hidden(self, node: ir.Expr, lets: Lets) -> str | None:
        """What `node` reads that the mover may not see (its words), or None."""
        for found in self._reads(node, lets):
            return found
        return None

    def _reads(self, node: ir.Expr, lets: Lets) -> Iterator[str]:
        match node:
            case ir.Local(name=name) if isinstance(lets.get(name), str):
                yield str(lets[name])
                return
            case ir.Call(fn="len", args=(inner,)):
                field = self._field(inner, lets)
                if field is not None:
                    see, shown, keys = field
                    if see in _SIZE or see == "all":
                        for k in keys:
                            yield from self._reads(k, lets)
                        return
            case ir.Index(base=base, key=key) if _last(key, base):
                field = self._field(base, lets)
                if field is not None and field[0] in _TOP:
                    for k in field[2]:
                        yield from self._reads(k, lets)
                    return
            case ir.Measure(body=body):
                yield from self._reads(body, lets)
                return
            case ir.Keys(source=source, is_table=True):  # a table's keys: seen with its sizes
                field = self._field(source, lets)
                if field is not None and (field[0] in _SIZE or field[0] == "all"):
                    for k in field[2]:
                        yield from self._reads(k, lets)
                    return
            case _:
                pass
        field = self._field(node, lets)
        if field is not None:
            see, shown, keys = field
            if see != "all":
                yield shown
                return
            for k in keys:
                yield from self._reads(k, lets)
            if isinstance(node, ir.PlayerField | ir.GameField):
                return
        for child in ir.children(node):
            yield from self._reads(child, lets)

    def _field(self, node: ir.Expr, lets: Lets) -> Field | None:
        """A field of the state, or an entry of one (a table's): how the mover sees it, its
        words, and the keys it is read at; None for anything else."""
        keys: list[ir.Expr] = []
        while isinstance(node, ir.Index | ir.Get) and not (
                isinstance(node, ir.Index) and node.of_list):
            keys.append(node.key)
            node = node.base
        match node:
            case ir.Local(name=name) if isinstance(lets.get(name), tuple):
                see, shown, more = cast(Field, lets[name])
                return see, shown, (*keys, *more)
            case ir.GameField(field=fid):
                decl = self.state.field("game", fid)
                see = decl.see if decl is not None else "all"
                moved = lets.get(f"@game.{fid}")
                if see == "all" and isinstance(moved, str):
                    return "count", f"game.{fid}, {moved}", tuple(keys)
                return see, f"game.{fid} (seen: {see})", tuple(keys)
            case ir.PlayerField(field=fid, of=of):
                if self.mover is not None and of == self.mover:
                    of = ir.Me()
                decl = self.state.field("player", fid)
                see = decl.see if decl is not None else "all"
                if see == "owner" and isinstance(of, ir.Me):
                    see = "all"
                moved = lets.get(f"@player.{fid}")
                if see == "all" and isinstance(moved, str) and isinstance(of, ir.Me):
                    return "count", f"{fid}, {moved}", (*keys, of)
                if isinstance(of, ir.Me):
                    shown = f"{fid} (seen: {see})"
                elif isinstance(of, ir.Index):  # game.players[...]: not proven the mover
                    shown = (f"the {fid} of a player who may not be the mover (the mover's "
                             f"own: `{fid}`; seen: {see})")
                else:
                    shown = f"another player's {fid} (seen: {see})"
                return see, shown, (*keys, of)
            case _:
                return None


def _zone(node: ir.Expr) -> str | None:
    """The place a move fills, as the listing names it: `@game.FIELD`, or `@player.FIELD` of
    the mover (an entry of a table is its table); None for another player's."""
    while isinstance(node, ir.Index | ir.Get):
        node = node.base
    match node:
        case ir.GameField(field=fid):
            return f"@game.{fid}"
        case ir.PlayerField(field=fid, of=ir.Me()):
            return f"@player.{fid}"
        case _:
            return None


def _last(key: ir.Expr, base: ir.Expr) -> bool:
    """Whether a list's index is its last item (the top of a pile): -1, or its length less 1."""
    match key:
        case ir.Lit(value=-1):
            return True
        case ir.Neg(operand=ir.Lit(value=1)):
            return True
        case ir.BinOp(op="-", left=ir.Call(fn="len", args=(of,)), right=ir.Lit(value=1)):
            return of == base
        case _:
            return False
