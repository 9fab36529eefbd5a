"""The Python engine's printer of checked actions (`ir/stmt.py`'s `Action`): move generators
and checked runs.

An action becomes two kinds of straight-line functions:

- `_moves_STEM(g, seat)`: every move the action allows, as nested loops over the choices. The
  effects that later choices depend on are played on the state itself: fresh copies of the
  fields they write (the write set of the statements) are put into it first and the fields as
  they were are put back after, in a `finally`, so the caller's state is left as it was, every
  field the same object; effects that may write other players' fields are played on a copy of
  the state holding fresh copies of those fields. Effects no later choice reads, and those
  after the last choice, are not played at all; effects only the options of later choices
  read are played (in a function of their own, the same way) only for the options that read
  what they write (`_deferrable`, `_site`).
- `_play_STEM(g, seat, move)`: the effects with the move's choices, checking each choice and
  require on the way and raising IllegalMove with the step's rule and words.

A bundle of effects an apply step carries out is printed as functions of its own (`_opts_fx…`,
`_why_fx…`, `_run_fx…`) found through a table by the row's id. What the move generator may
leave out, which fields it copies and which values it computes once are decided on the IR
(`writes`, `reads`, `decides`), never on the printed code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias, assert_never

from lisboa_rules.core import names as grammar
from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.emit.engine.lower import Printer, local, py_type
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.reads import free_locals, locals_named, names_read
from lisboa_rules.ir.types import ANY, TEXT, VType


@dataclass
class Bundles:
    """The bundles of effects `apply` steps carry out: the functions of each bundle (shared by
    the rule sets where their code is the same), and of one rule set the bundle of each row of
    a table (`tables`, found through the rule set's `fx`) and the choices of each table."""

    by_code: dict[str, str] = field(default_factory=dict)  # a bundle's code -> its stem
    tables: dict[str, dict[Any, str]] = field(default_factory=dict)  # name -> key -> stem
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # table -> names
    functions: list[list[str]] = field(default_factory=list)


@dataclass
class ActionCode:
    # source lines of each function, in emission order; a move made is a slot (MOVE_SLOT)
    functions: list[list[str]]
    fields: tuple[str, ...]  # the move fields the action's choices fill
    first: str | None = None  # the field of the first choice, when the generator can be given it
    types: dict[str, VType] = field(default_factory=dict)  # each field's type
    kind: str = ""  # the moves' kind (the action's id)
    moves: list[tuple[str, ...]] = field(default_factory=list)  # each slot's choices made

    def lines(self, move: Callable[[str, tuple[str, ...]], str] | None = None
              ) -> list[list[str]]:
        """The functions' lines, each move made as `move(kind, choices)` writes it (by
        default, a Move with the choices as keywords)."""
        write = move or keyword_move
        made = {MOVE_SLOT.format(k): write(self.kind, fields)
                for k, fields in enumerate(self.moves)}
        out = []
        for f in self.functions:
            lines = []
            for line in f:
                if "MOVE__" in line:
                    for slot, code in made.items():
                        line = line.replace(slot, code)
                lines.append(line)
            out.append(lines)
        return out


# Where a move generator makes a move: the Move's code is written once the fields of every
# action are known (ActionCode.lines).
MOVE_SLOT = "MOVE__{}__"
# The line length the generated engine is checked at (ruff, pyproject.toml): a loop header
# longer than this, which the formatter cannot wrap, is split by the emitter.
LINE_WIDTH = 100


def keyword_move(kind: str, fields: tuple[str, ...]) -> str:
    """A move made with its kind, the seat and the choices made as keywords."""
    args = [py_str(kind), "seat", *[f"{f}={local(f)}" for f in fields]]
    return f"Move({', '.join(args)})"


# The move generator's own items, which it puts among an action's.


@dataclass(frozen=True)
class Call:
    """The run of a procedure done whose choices the move generator went through."""

    run: S.Run
    names: tuple[str, ...]


@dataclass(frozen=True)
class Applied:
    """The run of a bundle of effects whose choices the move generator went through."""

    table: str  # the entry of the rule set's fx
    bundle: S.Bundle


@dataclass(frozen=True)
class Mark:
    """Where an if's own steps end in a branch (the effects before and after it are
    segments of their own)."""


Item: TypeAlias = S.Item | Call | Applied | Mark
Env = dict[str, VType]  # the locals bound, in the order bound, with their types


class MovePrinter(Printer):
    """Prints one rule set's actions (see the module's text): `procs` are its checked
    procedures, `table_values` the rules' tables (by name: id -> value), where the tables the
    move generators read are added (`new_tables`, None: none is); `copier(game fields,
    player fields, all players?)` names a function that copies the state with fresh copies of
    those fields, `saver(game fields, player fields)` the functions that swap fresh copies of
    them into the state and put them back. `plain` (for the tests' lockstep): every option
    computed where it is used, and every effect a later choice reads played on the way."""

    plain = False

    def __init__(self, names: Any, stem: Callable[[str], str],
                 where: Callable[[tuple[str | int, ...]], str], procs: Mapping[str, S.Proc],
                 table_values: Mapping[str, Mapping[Any, Any]] | None = None,
                 copier: Callable[[frozenset[str], frozenset[str], bool], str] | None = None,
                 bundles: Bundles | None = None, effect_ids: tuple[str, ...] = (),
                 saver: Callable[[frozenset[str], frozenset[str]], tuple[str, str]] | None = None,
                 columns: Callable[[str, str], Mapping[Any, Any] | None] | None = None,
                 all_fields: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
                 table_name: Callable[[str], str] | None = None,
                 loose: frozenset[tuple[str | int, ...]] = frozenset(),
                 guarded: Mapping[tuple[tuple[str | int, ...], str], int] | None = None
                 ) -> None:
        super().__init__(names, stem, where, loose, guarded)
        self.procs = procs
        self.table_values: Mapping[str, Mapping[Any, Any]] = table_values or {}
        self.new_tables = table_values if isinstance(table_values, dict) else None
        self.copier = copier or (lambda g, p, o: "_copy_all")
        self.saver = saver
        self.bundles = bundles if bundles is not None else Bundles()
        self.effect_ids = effect_ids
        self.column_values = columns or (lambda kind, col: None)
        self.all_fields = all_fields
        self.table_name = table_name or (lambda tid: tid)  # a table of the rules' engine name
        # the values a choice of the move generator goes through, when they are constants:
        # a name -> (the values, the Env it was bound in)
        self.domains: dict[str, tuple[tuple[Any, ...], int]] = {}
        self.folding = False
        self.functions: list[list[str]] = []
        # where loop-invariant code may be computed, per function's lines: (its line, its
        # indent, the names bound there, the blocks it is in)
        self.points: dict[int, list[tuple[int, int, frozenset[str], tuple[int, ...]]]] = {}
        # the blocks the printer is in (each an id, and whether it is an `if`: a condition
        # that may be what makes the code inside safe to run), outermost first
        self.frames: list[tuple[int, bool]] = []
        self.loops: set[int] = set()  # the blocks that are loops
        # the options computed once (`_hoisted`): (the function's lines, the point, the
        # code) -> the local holding them
        self.hoists: dict[tuple[int, int, str], str] = {}
        self.memos: list[str] = []  # the declarations of the listing's memos (`_hoisted`)
        self.memo_names: set[str] = set()
        self.frame_no = 0
        self.field_types: dict[str, VType] = {}
        self.fields: list[str] = []
        self.counter = 0
        self.binding = 0  # counts the bindings of names, for `domains`
        self.bound_at: dict[str, int] = {}  # a name -> its latest binding
        self.bundle_rows: dict[str, tuple[tuple[Any, tuple[tuple[str, int], ...]], ...]] = {}
        self._read_by_proc: dict[tuple[str, bool], frozenset[str]] = {}
        # the effects the move generator leaves out of its way through the rest of the
        # items and plays only where the options of a later choice read what they write
        # (`_deferrable`): those effects, and the locals bound before them
        self.pending: tuple[tuple[Item, ...], Env] | None = None
        # whether a field of the game (of the acting player: True) is never changed in place
        self.scalar: Callable[[str, bool], bool] = lambda fid, player: False
        # what each procedure may write (`writes` of its effects, callees included), found
        # once: the printers of one rule set share it (ProcSession)
        self.proc_writes: dict[str, tuple[frozenset[str], frozenset[str], bool]] = {}

    # -- what items write and read --------------------------------------------------------

    def writes(self, items: tuple[Item, ...], seen: frozenset[str] = frozenset()
               ) -> tuple[set[str], set[str], bool]:
        """The game fields and the acting player's fields the items may change, and whether
        other players' fields may change too (then every player is copied)."""
        game: set[str] = set()
        player: set[str] = set()
        others = False

        def target(node: ir.Expr, sets: bool = False) -> None:
            nonlocal others
            if sets and isinstance(node, ir.Local):
                return  # a local set anew (`v_x = ...`), not a field of the state
            while isinstance(node, ir.Index | ir.Get):
                node = node.base
            match node:
                case ir.GameField(field=f):
                    game.add(f)
                    others = others or f == "players"
                case ir.PlayerField(field=f, of=ir.Me()):
                    player.add(f)
                case ir.PlayerField(field=f):  # another player's (a seat, a local player):
                    player.add(f)  # only that field of theirs is written, whoever they are
                    others = True
                case _:  # a place the printer cannot follow: every field of every player
                    game.update(self.all_fields[0])
                    player.update(self.all_fields[1])
                    others = True

        def callees(runs: tuple[S.Run, ...]) -> None:
            nonlocal game, player, others
            for r in runs:
                if r.proc in seen or r.proc not in self.procs:
                    continue
                found = self.proc_writes.get(r.proc)
                if found is None:  # (no cycle reaches here: a rule set with one is not printed)
                    g1, p1, o1 = self.writes(self.procs[r.proc].effects, seen | {r.proc})
                    found = self.proc_writes[r.proc] = (frozenset(g1), frozenset(p1), o1)
                g2, p2, o2 = found
                game |= g2
                player |= p2
                others = others or o2

        for s in self._walk(items):
            match s:
                case S.Let() | S.Choose() | S.Require() | S.If() | S.ForEach() | S.Repeat() \
                        | S.Branch() | Mark():
                    pass  # they write nothing themselves (an if's, a loop's steps: walked)
                case S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.Drop() \
                        | S.Shuffle() | S.New():
                    for pl in S.places(s):
                        target(pl.node, isinstance(s, S.Change))
                    if isinstance(s, S.New):
                        others = True
                case S.Do() | S.Raise() | S.DoValue():
                    callees(S.runs(s))
                case S.DoChoose():
                    callees(tuple(c.run for c in s.cases if c.run is not None))
                case Call():
                    callees((s.run,))
                case S.Apply() | S.ApplyChoose() | Applied():
                    callees(tuple(S.Run(e, ()) for e in self._bundle_effects(s.bundle)))
                case _:
                    assert_never(s)
        return game, player, others

    def all_writes(self, items: tuple[Item, ...]) -> tuple[set[str], set[str], bool]:
        """`writes` of the items on every way through them: each item's, and those of the
        items each branch, each case of a do and each choice of effects goes on with (what a
        move of the action or a run of the procedure may change: a superset)."""
        every: list[Item] = []
        seen: set[int] = set()

        def add(xs: tuple[Item, ...]) -> None:
            if id(xs) in seen:
                return
            seen.add(id(xs))
            for s in xs:
                every.append(s)
                for rest in self._continuations(s):
                    add(rest)

        add(items)
        return self.writes(tuple(every))

    def _walk(self, items: tuple[Item, ...]) -> Iterator[Item]:
        """Each item and the statements nested in it (a branch's own items only)."""
        for s in items:
            yield s
            match s:
                case S.Branch():
                    yield from self._walk((*s.then[:s.own[0]], *s.orelse[:s.own[1]]))
                case S.If() | S.ForEach() | S.Repeat():
                    yield from S.walk(S.nested(s))
                case _:
                    pass

    def _bundle_effects(self, b: S.Bundle) -> list[str]:
        return sorted({e for _k, bundle in b.rows for e, _a in bundle})

    def reads(self, items: list[Item], sites: bool = True) -> set[str]:
        """The names the choices and refusals of these items may read (conservatively: every
        name in their expressions; of the procedures they run, their guards; of the effects
        before their last choice, everything; the measures they read, what those read).
        Without `sites`, not what the options of a procedure's or a bundle's choices read
        (their guards: see `_site`), only the values they are given."""
        out: set[str] = set()
        last = max((k for k, x in enumerate(items) if self.decides(x)), default=-1)
        for s in items[:last + 1]:
            guard_only = self.decides(s) or isinstance(s, S.Let | Mark)
            for sub in self._walk((s,)):
                out |= self._names_in(sub)
                for pid in self._callees(sub, sites):
                    out |= self._proc_reads(pid, guard_only)
            for rest in self._continuations(s):  # the items after it, in each branch
                out |= self.reads(list(rest), sites)
        return out

    @staticmethod
    def _continuations(s: Item) -> tuple[tuple[S.Item, ...], ...]:
        """The items an item that branches goes on with, in each of its branches."""
        match s:
            case S.Branch():
                return (s.then, s.orelse)
            case S.DoChoose():
                return tuple(c.rest for c in s.cases)
            case S.ApplyChoose():
                return (s.rest,)
            case _:
                return ()

    def _names_in(self, s: Item) -> set[str]:
        """Every name an item's own expressions may read (the measures' bodies too), and the
        names it binds."""
        match s:
            case S.ApplyChoose() | Applied():
                out = set(s.bundle.fields)
            case Call():
                out = set(s.names)
            case S.Choose():
                out = {s.name}
            case S.Let():
                out = {b.name for b in s.binds}
            case S.ForEach():
                out = {s.var}
            case _:
                out = set()
        for n in self._nodes_of(s):
            out |= _names_deep(n)
        return out

    def _callees(self, s: Item, sites: bool = True) -> list[str]:
        """The procedures an item runs or asks (without `sites`, not those whose options
        the move generator goes through: a do's that chooses, an apply's that chooses)."""
        match s:
            case S.Do() | S.Raise() | S.DoValue():
                return [r.proc for r in S.runs(s)]
            case S.DoChoose():
                return [c.proc for c in s.cases if c.proc is not None
                        and (sites or not c.names)]
            case Call():
                return [s.run.proc]
            case S.ApplyChoose():
                return self._bundle_effects(s.bundle) if sites else []
            case S.Apply() | Applied():
                return self._bundle_effects(s.bundle)
            case _:
                return []

    def _proc_reads(self, pid: str, guard_only: bool) -> frozenset[str]:
        """The names a procedure's guard (or all its steps, and those of what it runs) may
        read; kept for the printer's life (its procedures do not change)."""
        key = (pid, guard_only)
        found = self._read_by_proc.get(key)
        if found is None:
            found = self._read_by_proc[key] = frozenset(
                self._reads_of(pid, guard_only, frozenset()))
        return found

    def _reads_of(self, pid: str, guard_only: bool, seen: frozenset[str]) -> set[str]:
        proc = self.procs.get(pid)
        if proc is None or pid in seen:
            return set()
        out: set[str] = set()
        stmts: tuple[Any, ...] = proc.guard if guard_only else (*proc.guard, *proc.effects)
        for s in stmts:
            subs = [s] if isinstance(s, S.Choose | S.Require) else list(S.walk((s,)))
            for sub in subs:
                out |= self._names_in(sub)
                if not guard_only and not isinstance(sub, S.Choose | S.Require):
                    for callee in self._callees(sub):
                        out |= self._reads_of(callee, False, seen | {pid})
        return out

    def decides(self, s: Item) -> bool:
        """Whether an item makes or checks a choice (so the items before it matter to the
        move generator)."""
        match s:
            case S.Choose() | S.Require() | S.Branch() | S.DoChoose():
                return True
            case S.ApplyChoose():
                return s.decides
            case _:
                return False

    # -- printing an action -------------------------------------------------------------

    def action(self, action: S.Action, stem: str) -> ActionCode:
        self.act = action
        self.stem_ = stem
        self.functions = []
        self.moves: list[tuple[str, ...]] = []
        self.fields = []
        self.counter = 0
        self.first_field: str | None = None
        self.first_var: str | None = None
        self.field_types = {}
        self.points = {}
        self.domains = {}
        head = "# " + py_comment(f"{self.where(action.at.path)} {action.id}")
        self.begin(2)
        out = [head, f"def _moves_{stem}(g: Game, seat: int, *only: Any) -> list[_Code]:",
               "    p = g.players[seat]", "    out: list[_Code] = []"]
        self.main_out = out
        self.memo = False
        self.guards: list[str] = []  # the answers of guards asked while listing (_guard_key)
        self.memos = []
        self.memo_names = set()
        self.hoists = {}
        env: Env = {}
        self._point(out, 1, env)
        self._enum(list(action.items), env, 1, out, owned=False, first=True)
        if self.memo:
            out.insert(4, "    _memo: dict[Any, list[_Code]] = {}")
        for known in reversed(self.guards):
            out.insert(4, f"    {known}: dict[Any, bool] = {{}}")
        for memo in reversed(self.memos):
            out.insert(4, f"    {memo}")
        out.append("    return out")
        self.functions.insert(0, self.end(out))
        self.begin(1)
        play = [f"def _play_{stem}(g: Game, seat: int, move: Move) -> None:",
                "    p = g.players[seat]"]
        self.assigned: set[str] = set()
        self._play(list(action.items), 1, play, ())
        self.functions.append(self.end(play))
        types = {f: self.field_types.get(f, TEXT) for f in self.fields}
        return ActionCode(self.functions, tuple(self.fields), self.first_field, types,
                          action.id, self.moves)

    def _field(self, name: str) -> None:
        if name not in self.fields:
            self.fields.append(name)

    def _emit_move(self, bound: tuple[str, ...], indent: int, out: list[str]) -> None:
        # the kind, the seat and the choices made, written once the fields of every move
        # are known (ActionCode.lines)
        out.append("    " * indent + f"out.append({MOVE_SLOT.format(len(self.moves))})")
        self.moves.append(bound)

    @staticmethod
    def _branch_items(items: tuple[S.Item, ...], own: int) -> list[Item]:
        """A branch's items with a mark where the if's own steps end."""
        out: list[Item] = list(items)
        if own < len(out):
            out.insert(own, Mark())
        return out

    def _enum(self, items: list[Item], env: Env, indent: int, out: list[str],
              owned: bool, first: bool = False, bound: tuple[str, ...] = ()) -> None:
        pad = "    " * indent
        i = 0
        while i < len(items):
            s = items[i]
            rest = items[i + 1:]
            if isinstance(s, Mark):
                i += 1
                continue
            if not any(self.decides(x) for x in items[i:]):
                break
            if not isinstance(s, S.Let | S.Choose):
                first = False
            match s:
                case S.Let():
                    env = self._enum_let(s, env, indent, out)
                    self._point(out, indent, env)
                    i += 1
                    continue
                case S.Choose():
                    env = self._choice(s, env, out, indent, first)
                    self._field(s.name)
                    with self._block(True):
                        self._point(out, indent + 1, env)
                        self._enum(rest, env, indent + 1, out, False, False, (*bound, s.name))
                    return
                case S.Require():
                    out.append(f"{pad}if {self.bare(s.cond)}:")
                    with self._block(False):
                        self._point(out, indent + 1, env)
                        self._enum(rest, env, indent + 1, out, owned, False, bound)
                    return
                case S.Branch():
                    out.append(f"{pad}if {self.bare(s.cond)}:")
                    with self._block(False):
                        self._enum(self._branch_items(s.then, s.own[0]), env, indent + 1, out,
                                   owned, False, bound)
                    out.append(f"{pad}else:")
                    with self._block(False):
                        self._enum(self._branch_items(s.orelse, s.own[1]), env, indent + 1, out,
                                   owned, False, bound)
                    return
                case S.DoChoose():
                    self._enum_do(s, env, indent, out, owned, bound)
                    return
                case S.ApplyChoose():
                    self._enum_apply(s, env, indent, out, bound)
                    return
                case (S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
                      | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle()
                      | S.New() | S.DoValue() | S.Apply() | Call() | Applied()):
                    pass  # an effect (below)
                case _:
                    assert_never(s)
            # an effect: the later choices see what it changes, unless they read none of it
            if not owned:
                seg = i
                while seg < len(items) and not self.decides(items[seg]) \
                        and not isinstance(items[seg], S.Let | Mark):
                    seg += 1
                game_w, player_w, _o = self.writes(tuple(items[i:seg]))
                if not (game_w | player_w) & self.reads(items[seg:]):
                    i = seg  # no later choice reads it: the move generator leaves it out
                    continue
                if self.pending is None and self._deferrable(items[i:seg], items[seg:]):
                    # only the options of later choices read it: played where they do
                    self.pending = (tuple(items[i:seg]), env)
                    try:
                        self._enum(items[seg:], env, indent, out, False, False, bound)
                    finally:
                        self.pending = None
                    return
                self._copy_then(items[i:], env, indent, out, bound)
                return
            self._enum_effect(s, indent, out)
            self.points[id(out)] = []  # the state changed: nothing moves above this
            self.hoists = {k: v for k, v in self.hoists.items() if k[0] != id(out)}
            self._point(out, indent, env)
            i += 1
        self._emit_move(bound, indent, out)

    def _enum_effect(self, s: Item, indent: int, out: list[str]) -> None:
        pad = "    " * indent
        match s:
            case Call():
                choices = "".join(f", {local(n)}" for n in s.names)
                out.append(pad + self.run_call(s.run, choices))
            case Applied():
                choices = "".join(f", {local(n)}" for n in s.bundle.fields)
                out.append(f"{pad}g.rs.fx[{py_str(s.table)}][{self.bare(s.bundle.key)}][2]"
                           f"(g, seat, {self._shared(s.bundle)}{choices})")
            case (S.Let() | S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
                  | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle()
                  | S.New() | S.DoValue() | S.Apply()):
                self.effect(s, indent, out)
            case S.Choose() | S.Require() | S.Branch() | S.DoChoose() | S.ApplyChoose() | Mark():
                raise AssertionError("not an effect")
            case _:
                assert_never(s)

    # Loop-invariant choices: the options of a procedure or a bundle read the state and the
    # values they are given; inside loops over other choices, with the state unchanged, they
    # are computed once, before the outermost loop that leaves their values unchanged.

    def _point(self, out: list[str], indent: int, env: Env) -> None:
        """Code at `indent` may be put here (the current end of `out`): the locals bound."""
        self.points.setdefault(id(out), []).append(
            (len(out), indent, frozenset(env), tuple(f for f, _loop in self.frames)))

    @contextmanager
    def _block(self, loop: bool) -> Iterator[None]:
        """The lines printed inside are in a block of their own (a loop's, or an `if`'s)."""
        self.frame_no += 1
        self.frames.append((self.frame_no, loop))
        if loop:
            self.loops.add(self.frame_no)
        try:
            yield
        finally:
            self.frames.pop()

    def _hoisted(self, out: list[str], indent: int, code: str, refs: set[str],
                 returns: str, env: Env | None = None) -> str:
        """`code`, which reads the locals `refs`, computed at the earliest point it can be, as
        a local (of the type `returns`, or None until computed); or `code` itself. The same
        code at the same point is the same local. In the function that lists the moves (whose
        state never changes), code inside a loop whose locals can be a key (`env` gives their
        types) is also remembered for the listing, by their values."""
        points = [] if self.plain else self.points.get(id(out), [])
        inside = [f for f, _loop in self.frames]
        best = None
        for k, (_pos, _ind, known, blocks) in enumerate(points):
            # the point is in a block the code is in too (still open); an `if` opened since
            # is no barrier: the code runs where it is used, the first time it is reached
            # (so only where the if's test holds), and its value is the same wherever else
            # it is reached from the point on (the same state, the same locals)
            if not refs <= known or inside[:len(blocks)] != list(blocks):
                continue
            best = k
            break
        if best is None or points[best][0] == len(out):
            return code
        pos, ind, known, blocks = points[best]
        pad = "    " * indent
        # remembered when the point is entered again with other values of its locals (inside
        # a loop) while the code's own locals repeat
        key = self._memo_key(refs, env) if out is self.main_out and known - refs \
            and any(f in self.loops for f in blocks) else None
        name = self.hoists.get((id(out), best, code))
        if name is None:
            self.counter += 1
            name = self.hoists[id(out), best, code] = f"_opts{self.counter}"
            # computed the first time it is needed (a loop that never reaches it pays nothing)
            out.insert(pos, "    " * ind + f"{name}: {returns} | None = None")
            self.points[id(out)] = [(q + 1 if q >= pos and k != best else q, i, kn, bl)
                                    for k, (q, i, kn, bl) in enumerate(points)]
            self.points[id(out)][best] = (pos + 1, ind, points[best][2], points[best][3])
            if key is not None:
                self.memos.append(f"_m{name}: dict[Any, {returns}] = {{}}")
                self.memo_names.add(f"_m{name}")
        out.append(f"{pad}if {name} is None:")
        if key is None or f"_m{name}" not in self.memo_names:  # (the same code here first
            out.append(f"{pad}    {name} = {code}")  # may not have been remembered)
        else:  # the same values, the same options, all through the listing
            out.append(f"{pad}    {name} = _m{name}.get({key})")
            out.append(f"{pad}    if {name} is None:")
            out.append(f"{pad}        {name} = {code}")
            out.append(f"{pad}        _m{name}[{key}] = {name}")
        return name

    def _memo_key(self, refs: set[str], env: Env | None) -> str | None:
        """The key of code that reads the locals `refs` in a listing's memo, when each is of
        a type that can be a key (a number, a text, an id), else None."""
        if env is None or not refs or not refs <= set(env):
            return None
        if any(env[n].name in ("list", "map", "player", "any") for n in refs):
            return None
        names = [local(n) for n in sorted(refs)]  # one order wherever the code is
        return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"

    def _choice(self, s: S.Choose, env: Env, out: list[str], indent: int, first: bool
                ) -> Env:
        pad = "    " * indent
        name = s.name
        var = local(name)
        of = s.of
        env = {**env, name: s.type}
        self.field_types[name] = s.type
        if isinstance(of, S.OneOf):
            over = self.over(of)
            where = None if of.where is None else self.bare(of.where)
            if first:
                over = f"only or {over}"
            if s.optional and self.first(var):  # typed where first named (see lower.Function)
                out.append(f"{pad}{var}: Any")
            self.named(var)
            out.append(f"{pad}for {var} in {'(None, *' + over + ')' if s.optional else over}:")
            # an item that must be in a list: the loop goes on when it is not in it
            flipped = None
            if of.where is not None and not s.optional and _member(of.where, name):
                flipped = self.negate(of.where)
            if first and not s.optional:  # a value given by the caller is checked first
                src = self.code(of.keys.source)
                flipped = f"{var} not in {src}" if where is None else None
                where = f"{var} in {src}" + (f" and ({where})" if where else "")
                self.first_field = name
                self.first_var = var
            values = None if first else const.sequence(of.keys)
            self.binding += 1
            if values is not None:
                self.domains[name] = (((None,) if s.optional else ()) + values, self.binding)
            else:
                self.domains.pop(name, None)
            self.bound_at[name] = self.binding
            if where is not None:
                test = f"{var} is not None and not ({where})" if s.optional else f"not ({where})"
                out.append(f"{pad}    if {flipped or test}:")
                out.append(f"{pad}        continue")
            return env
        options = self.options(of, s.optional)
        self.named(var)
        out.append(f"{pad}for {var} in {options}:")
        self.binding += 1
        self.bound_at[name] = self.binding
        return env

    def _copy_then(self, items: list[Item], env: Env, indent: int, out: list[str],
                   bound: tuple[str, ...]) -> None:
        """The rest of the items in a function of its own, played on the state itself (the
        fields they write swapped for fresh copies, then put back) or on a copy of it."""
        assert self.pending is None, "a deferred effect's rest plays no effect"
        game, player, others = self.writes(tuple(self._played_all(items)))
        saved = None if others or self.saver is None else \
            self.saver(frozenset(game), frozenset(player))
        copy = self.copier(frozenset(game), frozenset(player), others) if saved is None else ""
        self.counter += 1
        fn = f"_moves_{self.stem_}__k{self.counter}"
        names = list(env)
        params = "".join(f", {local(n)}: Any" for n in names)
        args = "".join(f", {local(n)}" for n in names)
        body = [f"def {fn}(g: Game, seat: int, out: list[_Code]{params}) -> None:",
                "    p = g.players[seat]"]
        self.begin(1, *(local(n) for n in names))
        self.points[id(body)] = []
        frames, self.frames = self.frames, []  # a function of its own: no block around it
        try:
            self._point(body, 1, env)
            self._enum(items, env, 1, body, True, False, bound)
        finally:
            self.frames = frames
        self.functions.append(self.end(body))
        pad = "    " * indent
        if saved is None:
            call = f"{fn}({copy}(g, seat), seat, {{}}{args})"
        else:
            call = "\n".join([f"_was = {saved[0]}(g, seat)", "try:",
                              f"    {fn}(g, seat, {{}}{args})", "finally:",
                              f"    {saved[1]}(g, seat, _was)"])
        first = self.first_var
        keyed = [local(n) for n in names if local(n) != first]
        if out is self.main_out and first is not None and self.first_field is not None \
                and self.first_field in names \
                and not self._read_by(items, self.first_field):
            # The moves of the rest depend on the first choice only through the other values
            # (as a row through the row it names): made once per those values, then retagged.
            key = f"({keyed[0]},)" if len(keyed) == 1 else f"({', '.join(keyed)})"
            self.memo = True
            out += [f"{pad}_done = _memo.get({key})",
                    f"{pad}if _done is None:",
                    f"{pad}    _done = _memo[{key}] = []",
                    *[f"{pad}    {x}" for x in call.format("_done").split("\n")],
                    f"{pad}    out += _done",
                    f"{pad}else:",
                    f"{pad}    out += [_retag(m, {py_str(self.first_field)}, {first}) "
                    "for m in _done]"]
            return
        out += [pad + x for x in call.format("out").split("\n")]

    # Deferred effects: an effect whose writes only the options of later choices read (a
    # procedure's or a bundle's, which read the state through their guards) is not played
    # on the way through the later items; each options call that may read what it writes
    # (for the rows of its table, or of the effect's, that do) is made in a function of its
    # own that plays the effect first, on fresh copies of the fields it writes, put back
    # after. Options that read none of it are computed once, on the state as it is.

    def _deferrable(self, effects: list[Item], rest: list[Item]) -> bool:
        """Whether the move generator may leave `effects` out of its way through `rest` and
        play them only for the options that read what they write (`_site`): no item of the
        rest plays an effect, and nothing of the rest but those options reads their writes."""
        if self.plain or self._plays(rest):
            return False
        game_w, player_w, _o = self.writes(tuple(effects))
        return not (game_w | player_w) & self.reads(rest, sites=False)

    def _plays(self, items: list[Item]) -> bool:
        """Whether the move generator plays an effect on its way through the items (as
        `_enum` decides: an effect a later choice or refusal reads)."""
        i = 0
        while i < len(items):
            s = items[i]
            if isinstance(s, Mark | S.Let | S.Choose | S.Require):
                i += 1
                continue
            if not any(self.decides(x) for x in items[i:]):
                return False
            match s:
                case S.Branch():
                    return self._plays(self._branch_items(s.then, s.own[0])) \
                        or self._plays(self._branch_items(s.orelse, s.own[1]))
                case S.DoChoose():
                    return any(self._plays(list(c.rest) if c.run is None else
                                           [Call(c.run, c.names), *c.rest]) for c in s.cases)
                case S.ApplyChoose():
                    return self._plays([Applied("", s.bundle), *s.rest])
                case _:
                    pass
            seg = i
            while seg < len(items) and not self.decides(items[seg]) \
                    and not isinstance(items[seg], S.Let | Mark):
                seg += 1
            game_w, player_w, _o = self.writes(tuple(items[i:seg]))
            if (game_w | player_w) & self.reads(items[seg:]):
                return True
            i = seg
        return False

    def _row_writes(self, bundle: S.Bundle, key: Any) -> set[str]:
        """The fields one row of a bundle's table may write (any player's)."""
        one = replace(bundle, rows=tuple(r for r in bundle.rows if r[0] == key))
        game_w, player_w, _o = self.writes((Applied("", one),))
        return game_w | player_w

    def _site(self, out: list[str], indent: int, env: Env, code: Callable[[], str],
              refs: set[str], returns: str, reads: Callable[[Any], set[str]],
              key: ir.Expr | None, keys: tuple[Any, ...]) -> str:
        """The options of a later choice (`code()`, reading the locals `refs`) with the
        deferred effects played first where the options may read what they write: `reads(k)`
        is what the options read for the row `k` of their own table (`key`, over `keys`), or
        `reads(None)` without one. Returns the local holding them (or the code)."""
        assert self.pending is not None
        effects, _env = self.pending
        keyed = effects[0] if len(effects) == 1 and isinstance(effects[0], Applied) \
            and len(effects[0].bundle.rows) > 1 else None
        test_key: ir.Expr | None
        played: tuple[Item, ...]
        if keyed is not None:  # the rows of the effect's table whose writes they read
            read = set().union(*(reads(k) for k in keys)) if key is not None else reads(None)
            rows = tuple(k for k, _r in keyed.bundle.rows if self._row_writes(keyed.bundle, k)
                         & read)
            test_key, all_rows = keyed.bundle.key, len(rows) == len(keyed.bundle.rows)
            need = read
            played = (Applied(keyed.table, replace(
                keyed.bundle, rows=tuple(r for r in keyed.bundle.rows if r[0] in rows))),)
        else:  # the rows of the options' own table that read what the effects write
            game_w, player_w, _o = self.writes(effects)
            wrote = game_w | player_w
            if key is not None:
                rows = tuple(k for k in keys if reads(k) & wrote)
                all_rows = len(rows) == len(keys)
                need = set().union(*(reads(k) for k in rows))
            else:
                rows = (None,) if reads(None) & wrote else ()
                all_rows = bool(rows)
                need = reads(None)
            test_key, played = key, effects
        if not rows:
            return self._hoisted(out, indent, code(), refs, returns, env)
        tried, used = self._tried(self._needed(played, need), env, code, refs, returns,
                                  need if out is self.main_out else None)
        if all_rows:
            return self._hoisted(out, indent, tried, used, returns, env)
        assert test_key is not None
        pad = "    " * indent
        self.counter += 1
        name = f"_o{self.counter}"
        within = ", ".join(py_str(k) if isinstance(k, str) else repr(k) for k in rows)
        out.append(f"{pad}if {self.bare(test_key)} in ({within}{',' if len(rows) == 1 else ''}):")
        played_opts = self._hoisted(out, indent + 1, tried, used, returns, env)
        out.append(f"{pad}    {name} = {played_opts}")
        out.append(f"{pad}else:")
        plain_opts = self._hoisted(out, indent + 1, code(), refs, returns, env)
        out.append(f"{pad}    {name} = {plain_opts}")
        return name

    def _needed(self, effects: tuple[Item, ...], reads: set[str]) -> tuple[Item, ...]:
        """The effects, of those deferred, that options reading `reads` need played: each
        that writes what they read or what a needed effect after it reads."""
        need = set(reads)
        kept: list[Item] = []
        for s in reversed(effects):
            game_w, player_w, _o = self.writes((s,))
            if (game_w | player_w) & need:
                kept.append(s)
                for sub in self._walk_all([s]):
                    need |= self._names_in(sub)
                    for pid in self._callees(sub):
                        need |= self._proc_reads(pid, False)
        return tuple(reversed(kept))

    def _tried(self, played: tuple[Item, ...], env: Env, code: Callable[[], str],
               refs: set[str], returns: str, need: set[str] | None = None
               ) -> tuple[str, set[str]]:
        """A function of its own that plays the deferred effects then returns the options
        (`code()`, reading the locals `refs`), on fresh copies of the fields the effects
        write, put back after (or on a copy of the state): its call, and the locals it is
        given. With `need` (what the options read, in the function that lists the moves,
        whose state never changes), options are remembered for the listing by the values of
        `refs` and of the fields the effects changed that they read, when those are scalars:
        effects that leave them the same give the same options."""
        game, player, others = self.writes(played)
        saved = None if others or self.saver is None else \
            self.saver(frozenset(game), frozenset(player))
        keyed: list[str] = []
        if need is not None and saved is not None and refs <= set(env):
            changed = [(f"g.{f}", f, False) for f in sorted(game & need)] + \
                [(f"p.{f}", f, True) for f in sorted(player & need)]
            if changed and all(self.scalar(f, pl) for _c, f, pl in changed):
                keyed = [local(n) for n in env if n in refs] + [c for c, _f, _pl in changed]
        used = set(refs)
        for s in self._walk_all(list(played)):
            used |= self._names_in(s)
        names = [n for n in env if n in used]
        self.counter += 1
        fn = f"_moves_{self.stem_}__t{self.counter}"
        params = "".join(f", {local(n)}: Any" for n in names)
        args = "".join(f", {local(n)}" for n in names)
        if keyed:
            memo = f"_seen{self.counter}"
            self.memos.append(f"{memo}: dict[Any, {returns}] = {{}}")
            params += f", _seen: dict[Any, {returns}]"
            args += f", {memo}"
        body = [f"def {fn}(g: Game, seat: int{params}) -> {returns}:"]
        self.begin(len(body) + (saved is None), *(local(n) for n in names))
        if saved is None:
            body.append(f"    g = {self.copier(frozenset(game), frozenset(player), others)}"
                        "(g, seat)")
            body.append("    p = g.players[seat]")
            for s in played:
                self._enum_effect(s, 1, body)
            body.append(f"    return {code()}")
        else:
            body.append("    p = g.players[seat]")
            body += [f"    _was = {saved[0]}(g, seat)", "    try:"]
            for s in played:
                self._enum_effect(s, 2, body)
            if keyed:
                key = f"({keyed[0]},)" if len(keyed) == 1 else f"({', '.join(keyed)})"
                if any(k.startswith("p.") for k in keyed):
                    self.fns[-1].player = True
                body += [f"        _key = {key}", "        found = _seen.get(_key)",
                         "        if found is None:", f"            found = {code()}",
                         "            _seen[_key] = found", "        return found"]
            else:
                body.append(f"        return {code()}")
            body += ["    finally:", f"        {saved[1]}(g, seat, _was)"]
        self.functions.append(self.end(body))
        return f"{fn}(g, seat{args})", set(names)

    def _read_by(self, items: list[Item], name: str) -> bool:
        """Whether listing the moves of these items reads the local `name` other than to
        put it in the moves made: an expression of theirs names it (their words aside)."""
        return any(name in locals_named(n) for s in self._walk_all(items)
                   for n in self._nodes_of(s, words=False))

    def _nodes_of(self, s: Item, words: bool = True) -> Iterator[ir.Expr]:
        """An item's own expressions (with the values its words show, unless not `words`)."""
        match s:
            case S.Branch():
                yield s.cond
            case S.DoChoose():
                if s.value is not None:
                    yield s.value
                for c in s.cases:
                    if c.run is not None:
                        yield from c.run.args
            case S.ApplyChoose() | Applied():
                yield s.bundle.key
                yield from (x for x in s.bundle.shared if x is not None)
            case Call():
                yield from s.run.args
            case Mark():
                pass
            case S.Require() if not words:
                yield s.cond
            case S.Choose() if not words:
                of = s.of
                yield from ((of.keys, *((of.where,) if of.where else ()))
                            if isinstance(of, S.OneOf) else
                            (x for x in (of.source, of.where, of.lo, of.hi, of.leads_by,
                                         of.leads_where) if x is not None))
            case _:
                yield from S.exprs(s)

    def _walk_all(self, items: list[Item]) -> Iterator[Item]:
        """Every item, those of every branch and case, and the statements nested in them."""
        for s in items:
            yield s
            match s:
                case S.Branch():
                    yield from self._walk_all([*s.then, *s.orelse])
                case S.DoChoose():
                    for c in s.cases:
                        yield from self._walk_all(list(c.rest))
                case S.ApplyChoose():
                    yield from self._walk_all(list(s.rest))
                case S.If() | S.ForEach() | S.Repeat():
                    yield from S.walk(S.nested(s))
                case _:
                    pass

    def _played(self, items: list[Item]) -> list[Item]:
        """The items whose effects the move generator carries out on the copy `_copy_then`
        makes for them (a superset): not the effects after the last item that chooses or
        refuses (never played), nor those after a choice, or after the options of a
        procedure or a bundle of effects (played on copies of their own)."""
        last = max((k for k, x in enumerate(items) if self.decides(x)), default=-1)
        end = last if last >= 0 and isinstance(items[last], S.Choose | S.Require) else last + 1
        for k, x in enumerate(items[:end]):
            if isinstance(x, S.Choose | S.ApplyChoose | S.DoChoose | S.Apply):
                return items[:k]
        return items[:end]

    def _played_all(self, items: list[Item]) -> list[Item]:
        """`_played`, and what the branches among them play of the items they go on with."""
        out: list[Item] = []
        for x in self._played(items):
            out.append(x)
            if isinstance(x, S.Branch):
                out += self._played_all(list(x.then)) + self._played_all(list(x.orelse))
        return out

    # Constants: a choice from a constant without repeats goes through it as it is, and a let
    # of the move generator whose value depends only on such a choice (and on the rules'
    # tables) reads a table made at compile time.

    def _enum_let(self, s: S.Let, env: Env, indent: int, out: list[str]) -> Env:
        """A let of the move generator: its value read from a table made now when it depends
        only on a choice of constant values (see `_folded`)."""
        self.folding = len(s.binds) == 1
        self.env = env
        try:
            self.let(s, indent, out)
        finally:
            self.folding = False
        for b in s.binds:
            self.domains.pop(b.name, None)
            self.binding += 1
            self.bound_at[b.name] = self.binding
            env = {**env, b.name: b.type}
        return env

    def let_value(self, b: S.Bind) -> str:
        table = self._folded(b.name, b.value) if self.folding else None
        return table if table is not None else super().let_value(b)

    def _folded(self, name: str, node: ir.Expr) -> str | None:
        """The value of the let `name` (`node`) as a read of a new table of the rules, keyed by
        the value of the one choice it depends on, or None: only when that choice goes through
        constants and the value reads nothing but them and the rules' tables, giving a
        constant for each value (see ir/const.py)."""
        if self.new_tables is None:
            return None
        free = free_locals(node)
        if len(free) != 1:
            return None
        (var,) = free
        domain = self.domains.get(var)
        if domain is None:
            return None
        values, binding = domain
        if self.bound_at.get(var) != binding:
            return None
        table: dict[Any, Any] = {}
        for value in values:
            if value is None or not _literal(value):
                return None
            try:
                got = const.evaluate(node, {var: value}, self._cell)
            except const.NotConstant:
                return None
            if not _literal(got):
                return None
            table[value] = got
        stem = "_T_" + grammar.stem(name) + "_by_" + var
        found, k = stem, 1
        while found in self.new_tables and dict(self.new_tables[found]) != table:
            k += 1
            found = f"{stem}_{k}"
        self.new_tables[found] = table
        return f"{found}[{local(var)}]"

    def _cell(self, kind: str, col: str, key: Any) -> Any:
        """The value of a column of the rules' tables for one id (a KeyError if not known)."""
        rows = self.column_values(kind, col)
        if rows is None:
            raise KeyError(col)
        return rows[key]

    # -- procedures done and bundles applied while listing ------------------------------

    def _enum_do(self, s: S.DoChoose, env: Env, indent: int, out: list[str],
                 owned: bool, bound: tuple[str, ...]) -> None:
        pad = "    " * indent
        dynamic = s.value is not None
        var = self._do_value(s, pad, out)
        for k, case in enumerate(s.cases):
            if dynamic:
                out.append(f"{pad}else:" if case.proc is None else
                           f"{pad}{'if' if k == 0 else 'elif'} {var} == {py_str(case.proc)}:")
                with self._block(False):
                    self._enum_case(case, env, indent + 1, out, owned, bound)
            else:
                self._enum_case(case, env, indent, out, owned, bound)

    def _do_value(self, s: S.DoChoose, pad: str, out: list[str]) -> str:
        """The local holding the text a do step names its procedure by ("" when it names
        one procedure)."""
        if s.value is None:
            return ""
        var = f"_do_{self.counter}"
        self.counter += 1
        out.append(f"{pad}{var} = {self.bare(s.value)}")
        return var

    def _enum_case(self, case: S.Case, env: Env, level: int, out: list[str], owned: bool,
                   bound: tuple[str, ...]) -> None:
        """One procedure a do step may carry out while listing, then the items after it."""
        inner_pad = "    " * level
        if case.run is None:
            self._enum(list(case.rest), env, level, out, owned, False, bound)
            return
        run = case.run
        args = "".join(", " + self.bare(a) for a in run.args)
        reads = set().union(*(locals_named(a) for a in run.args))
        stem = self.stem(run.proc)
        names = case.names
        callee = self.procs[run.proc]
        for c in callee.choices:
            self.field_types.setdefault(c.name, c.type)
        inner = env
        if names:
            vars_ = [local(n) for n in names]
            target = f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_)
            returns = f"list[{self.choice_type(len(names))}]"
            if self.pending is None:
                opts = self._hoisted(out, level, f"_opts_{stem}(g, seat{args})", reads, returns,
                                     env)
            else:
                given = set(self._proc_reads(run.proc, True)).union(
                    *(_names_deep(a) for a in run.args))
                opts = self._site(
                    out, level, env,
                    lambda: "".join([f"_opts_{stem}(g, seat"]
                                    + [", " + self.bare(a) for a in run.args] + [")"]),
                    reads, returns, lambda _k: given, None, ())
            self.named(*vars_)
            out.append(f"{inner_pad}for {target} in {opts}:")
            inner = self._chosen(names, inner)
        else:
            guard = f"_opts_{stem}(g, seat{args})"
            key = self._guard_key(out, run.args, env)
            if key is None:
                out.append(f"{inner_pad}if {guard}:")
            else:
                # the state is the same all through the listing: the guard is asked once
                # for each value of what it is given
                self.counter += 1
                known = f"_ok{self.counter}"
                self.guards.append(known)
                out += [f"{inner_pad}if {key} not in {known}:",
                        f"{inner_pad}    {known}[{key}] = bool({guard})",
                        f"{inner_pad}if {known}[{key}]:"]
        with self._block(bool(names)):
            self._enum([Call(run, names), *case.rest], inner, level + 1, out, False, False,
                       (*bound, *names))

    def _chosen(self, names: tuple[str, ...], env: Env) -> Env:
        """`env` with the choices a procedure or a bundle makes bound (move fields, of any
        value: no constant the generator can read a table by)."""
        for n in names:
            self._field(n)
            env = {**env, n: ANY}
            self.binding += 1
            self.bound_at[n] = self.binding
            self.domains.pop(n, None)
        return env

    def _guard_key(self, out: list[str], given: tuple[ir.Expr, ...], env: Env) -> str | None:
        """The key of the answers of a guard given these values, asked in the function that
        lists the moves (which never changes the state), when each is a local of a type that
        can be a key (a number, a text, an id) or a constant of one; else None."""
        if out is not self.main_out or not given:
            return None
        for v in given:
            if isinstance(v, ir.Seat):
                continue
            if isinstance(v, ir.Local):
                t = env.get(v.name, ANY)
                if t.name in ("list", "map", "player", "any"):
                    return None
                continue
            try:
                const.scalar(v)
            except const.NotConstant:
                return None
        return f"({', '.join(self.bare(v) for v in given)},)"

    def _enum_apply(self, s: S.ApplyChoose, env: Env, indent: int, out: list[str],
                    bound: tuple[str, ...]) -> None:
        pad = "    " * indent
        table = self._bundles_of(s.bundle)
        names = s.bundle.fields
        made = {c.name: c.type for _key, row in s.bundle.rows for eff, _amount in row
                if (proc := self.procs.get(eff)) is not None for c in proc.choices}
        for old, new in zip(s.bundle.choices, names, strict=True):
            # a renamed choice has the type of the choice it renames (`choices: {a: b}`)
            self.field_types.setdefault(new, self.field_types.get(old, made.get(old, TEXT)))
        vars_ = [local(n) for n in names]
        target = "_" if not vars_ else (f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_))
        reads = set().union(*(locals_named(x) for x in (s.bundle.key, *(
            y for y in s.bundle.shared if y is not None))))
        def code() -> str:
            return (f"g.rs.fx[{py_str(table)}][{self.bare(s.bundle.key)}]"
                    f"[0](g, seat, {self._shared(s.bundle)})")

        if self.pending is None:
            opts = self._hoisted(out, indent, code(), reads, "list[tuple[Any, ...]]", env)
        else:
            given = set().union(*(_names_deep(x) for x in (s.bundle.key, *(
                y for y in s.bundle.shared if y is not None))))
            rows = dict(s.bundle.rows)

            def row_reads(k: Any) -> set[str]:
                return given.union(*(self._proc_reads(e, True) for e, _a in rows[k]))

            opts = self._site(out, indent, env, code, reads, "list[tuple[Any, ...]]",
                              row_reads, s.bundle.key, tuple(rows))
        self.named(*vars_)
        if len(f"{pad}for {target} in {opts.split('(', 1)[0]}(") > LINE_WIDTH:
            # a header the formatter could not wrap (long choice names in a deep block): the
            # options are a local of their own first
            self.counter += 1
            out.append(f"{pad}_opts{self.counter} = {opts}")
            opts = f"_opts{self.counter}"
        out.append(f"{pad}for {target} in {opts}:")
        inner = self._chosen(names, env)
        with self._block(True):
            self._enum([Applied(table, s.bundle), *s.rest], inner, indent + 1, out, False,
                       False, (*bound, *names))

    # -- effects only actions have ------------------------------------------------------

    def action_effect(self, s: S.DoValue | S.Apply, pad: str, out: list[str]) -> None:
        match s:
            case S.Apply():
                table = self._bundles_of(s.bundle)
                nones = ", None" * len(s.bundle.choices)
                out.append(f"{pad}g.rs.fx[{py_str(table)}][{self.bare(s.bundle.key)}][2]"
                           f"(g, seat, {self._shared(s.bundle)}{nones})")
            case S.DoValue():
                var = f"_do_{self.counter}"
                self.counter += 1
                out.append(f"{pad}{var} = {self.bare(s.value)}")
                for k, (pid, run) in enumerate(s.cases):
                    out.append(f"{pad}{'if' if k == 0 else 'elif'} {var} == {py_str(pid)}:")
                    nones = ", None" * run.choices
                    out.append(f"{pad}    {self.run_call(run, nones)}")
            case _:
                assert_never(s)

    # -- bundles of effects -------------------------------------------------------------

    def _shared(self, b: S.Bundle) -> str:
        return ", ".join("None" if x is None else self.bare(x) for x in b.shared) or "None"

    def _bundles_of(self, b: S.Bundle) -> str:
        """The entry of the rule set's fx of a bundle's table, its functions compiled."""
        table = f"_T_const{len(self.bundles.tables) + 1}" if b.table is None else \
            self.table_name(b.table)
        name = table.removeprefix("_T")
        self.bundle_rows[name] = b.rows
        if name in self.bundles.tables:
            return name
        choose: list[str] = list(b.choices)
        for _key, bundle in b.rows:
            for eff, _a in bundle:
                proc = self.procs.get(eff)
                if proc is not None:
                    for c in proc.choices:
                        self.field_types.setdefault(c.name, c.type)
        self.bundles.choices[name] = tuple(choose)
        keys: dict[Any, str] = {}
        for key, bundle in b.rows:
            keys[key] = self._bundle(tuple(bundle), tuple(choose))
        self.bundles.tables[name] = keys
        return name

    def _checked_table(self, table: str, fields: tuple[str, ...]) -> str:
        """The entry of the rule set's `fx` whose functions check and carry out a move's
        choices for an apply step whose choices fill these move fields (`choices: {CHOICE:
        NAME}` renames some): the table's own when none is renamed, else an entry of its own
        (`TABLE:FIELD,…`), compiled once, whose refusals name each choice by the field the
        player fills."""
        names = self.bundles.choices[table]
        if fields == names:
            return table
        entry = f"{table}:{','.join(fields)}"
        if entry not in self.bundles.tables:
            self.bundles.choices[entry] = names
            self.bundles.tables[entry] = {
                key: self._bundle(tuple(bundle), names, fields)
                for key, bundle in self.bundle_rows[table]}
        return entry

    def _shared_params(self) -> tuple[S.Param, ...]:
        """The parameters every effect takes after its amount (rules/effects.yaml `params`)."""
        for eid in self.effect_ids:
            proc = self.procs.get(eid)
            if proc is not None:
                return proc.params[1:]
        return ()

    def _bundle(self, bundle: tuple[tuple[str, int], ...], names: tuple[str, ...],
                fields: tuple[str, ...] | None = None) -> str:
        """The stem of a bundle's three functions (compiled the first time); `fields`: the
        move field each choice of `names` fills, which its refusals name (by default, the
        choice's own name)."""
        field_of = dict(zip(names, fields or names, strict=True))
        stem = "STEM__"
        choice_args = "".join(f", {local(n)}: Any" for n in names)
        rows = ", ".join([local(n) for n in names])
        row = f"({rows},)" if len(names) == 1 else f"({rows})"
        params = self._shared_params()
        shared = [local(p.name) for p in params] or ["v__"]
        sig = ", ".join(f"{local(p.name)}: {py_type(p.type, self.names)}"
                        for p in params) or "v__: Any"
        given = ", ".join(shared)
        opts = [f"def _opts_{stem}(g: Game, seat: int, {sig}) -> list[tuple[Any, ...]]:"]
        why = [f"def _why_{stem}(g: Game, seat: int, {sig}{choice_args}"
               ") -> tuple[str, str] | None:"]
        run = [f"def _run_{stem}(g: Game, seat: int, {sig}{choice_args}) -> None:"]
        # the options: each choice from the first effect that makes it
        made: dict[str, int] = {}  # each choice: the place in the bundle of the effect
        indent = 1
        for at, (eff, amount) in enumerate(bundle):
            proc = self.procs.get(eff)
            if proc is None:
                continue
            own = [c.name for c in proc.choices]
            if any(n not in made for n in own):
                vars_ = [local(n) for n in own]
                target = f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_)
                opts.append("    " * indent + f"for {target} in _opts_{self.stem(eff)}"
                            f"(g, seat, {amount}, {given}):")
                indent += 1
                for n in own:
                    made[n] = at
        for n in names:
            if n not in made:  # typed: it is None (and named nowhere before)
                opts.append("    " * indent + f"{local(n)}: Any = None")
        test = []
        for at, (eff, amount) in enumerate(bundle):
            proc = self.procs.get(eff)
            if proc is None:
                continue
            if proc.choices and all(made[c.name] == at for c in proc.choices):
                # its choices come from its own `_opts_` of this amount, printed from the
                # same guard as its `_why_` (emit/engine/lower.py): its why passes them all
                continue
            made_args = "".join(f", {local(c.name)}" for c in proc.choices)
            test.append(f"_why_{self.stem(eff)}(g, seat, {amount}, {given}{made_args}) is None")
        if test:
            opts.append("    " * indent + f"if {' and '.join(test)}:")
            indent += 1
        opts.append("    " * indent + f"out.append({row if names else '()'})")
        opts.insert(1, "    out: list[tuple[Any, ...]] = []")
        opts.append("    return out")
        for n in names:
            if n not in made:
                why.append(f"    if {local(n)} is not None:")
                why.append(f"        return _not_chosen({py_str(field_of[n])})")
        for eff, amount in bundle:
            proc = self.procs.get(eff)
            if proc is None:
                continue
            made_args = "".join(f", {local(c.name)}" for c in proc.choices)
            why.append(f"    why = _why_{self.stem(eff)}(g, seat, {amount}, {given}{made_args})")
            why.append("    if why is not None:")
            why.append("        return why")
            made_ = " and ".join(f"{local(c.name)} is not None" for c in proc.choices
                                 if not c.type.optional)
            if made_:  # an effect whose choice the move does not make is left out (an
                # optional choice not made is a choice: the effect runs with None)
                run.append(f"    if {made_}:")
                run.append(f"        _run_{self.stem(eff)}(g, seat, {amount}, {given}{made_args})")
            else:
                run.append(f"    _run_{self.stem(eff)}(g, seat, {amount}, {given}{made_args})")
        why.append("    return None")
        if len(run) == 1:
            run.append("    pass")
        code = "\n".join([*opts, *why, *run])
        found = self.bundles.by_code.get(code)
        if found is None:
            found = self.bundles.by_code[code] = f"_fx{len(self.bundles.by_code) + 1}"
            for lines in (opts, why, run):
                self.bundles.functions.append([x.replace("STEM__", found) for x in lines])
        return found

    # -- the checked run ----------------------------------------------------------------

    def _play(self, items: list[Item], indent: int, out: list[str],
              bound: tuple[str, ...], tail: tuple[str, str] | None = None) -> None:
        """The checked run of `items`; `tail` is the rule and words of the refusal of a
        choice the move makes and its way through the items did not (by default, the
        action's)."""
        pad = "    " * indent
        rule = py_str(self.act.rule)
        i = 0
        while i < len(items):
            s = items[i]
            i += 1
            match s:
                case S.Choose():
                    name = s.name
                    var = local(name)
                    # a name another branch gave a type to: the move's value, as any value
                    again = name in self.assigned
                    self.named(var)
                    out.append(f"{pad}{var} = " + (f"_any(move.{name})" if again else
                                                   f"move.{name}"))
                    self.assigned.add(name)
                    self.choice_why(s, out, pad, lambda r, w: f"raise IllegalMove({r}, {w})",
                                    lambda r, w: f"raise _Unchosen({r}, {w})")
                    bound = (*bound, name)
                    continue
                case S.Require():
                    out.append(f"{pad}if {self.negate(s.cond)}:")
                    out.append(f"{pad}    raise IllegalMove({self.rule(s.rule)}, "
                               f"{self.words(s.reason)})")
                    continue
                case S.Branch():
                    out.append(f"{pad}if {self.bare(s.cond)}:")
                    self._play(list(s.then), indent + 1, out, bound, tail)
                    out.append(f"{pad}else:")
                    self._play(list(s.orelse), indent + 1, out, bound, tail)
                    return
                case S.DoChoose():
                    self._play_do(s, indent, out, bound, tail)
                    return
                case S.ApplyChoose():
                    table = self._bundles_of(s.bundle)
                    made = s.bundle.fields
                    choices = "".join(f", move.{n}" for n in made)
                    shared = self._shared(s.bundle)
                    fx = f"g.rs.fx[{py_str(self._checked_table(table, made))}]" \
                         f"[{self.bare(s.bundle.key)}]"
                    out.append(f"{pad}why = {fx}[1](g, seat, {shared}{choices})")
                    out.append(f"{pad}if why is not None:")
                    out.append(f"{pad}    raise IllegalMove({self.rule(s.rule)}, why[1])")
                    out.append(f"{pad}{fx}[2](g, seat, {shared}{choices})")
                    self._play(list(s.rest), indent, out, (*bound, *made), tail)
                    return
                case (S.Let() | S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
                      | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle()
                      | S.New() | S.DoValue() | S.Apply()):
                    for x in S.walk((s,)):
                        if isinstance(x, S.Let):
                            self.assigned.update(b.name for b in x.binds)
                    self.effect(s, indent, out)
                case Call() | Applied() | Mark():
                    raise AssertionError("the listing's own item")
                case _:
                    assert_never(s)
        fields = ", ".join(py_str(f) for f in bound)
        refusal = rule if tail is None else f"{tail[0]}, {tail[1]}"
        out.append(f"{pad}_only_chosen(move, ({fields}{',' if len(bound) == 1 else ''}), "
                   f"{refusal})")

    def _play_do(self, s: S.DoChoose, indent: int, out: list[str], bound: tuple[str, ...],
                 tail: tuple[str, str] | None) -> None:
        """The checked run of a do step whose procedure chooses or refuses, then of the
        items after it."""
        pad = "    " * indent
        rule = py_str(self.act.rule)
        srule = self.rule(s.rule)
        dynamic = s.value is not None
        var = self._do_value(s, pad, out)
        for k, case in enumerate(s.cases):
            level = indent
            if dynamic:
                out.append(f"{pad}else:" if case.proc is None else
                           f"{pad}{'if' if k == 0 else 'elif'} {var} == {py_str(case.proc)}:")
                level = indent + 1
            ipad = "    " * level
            if case.run is None:  # nothing to do: a choice of the others is refused so
                words = self.words(s.none_reason) if s.none_reason is not None else "None"
                self._play(list(case.rest), level, out, bound, (srule, words))
                continue
            run = case.run
            args = "".join(", " + self.bare(a) for a in run.args)
            stem = self.stem(run.proc)
            choices = "".join(f", move.{n}" for n in case.names)
            out.append(f"{ipad}why = _why_{stem}(g, seat{args}{choices})")
            out.append(f"{ipad}if why is not None:")
            if s.reason is not None:  # nothing at all can be done: the action is refused
                out.append(f"{ipad}    if not _opts_{stem}(g, seat{args}):")
                out.append(f"{ipad}        raise IllegalMove({rule}, {self.words(s.reason)} "
                           "+ \": \" + why[1])")
            out.append(f"{ipad}    raise IllegalMove(*why)")
            out.append(f"{ipad}_run_{stem}(g, seat{args}{choices})")
            self._play(list(case.rest), level, out, (*bound, *case.names), tail)


def _names_deep(node: ir.Expr) -> set[str]:
    """Every name of the rules an expression may read, through the bodies of the measures
    it reads."""
    out = names_read(node)
    for x in ir.walk(node):
        if isinstance(x, ir.Measure):
            out |= _names_deep(x.body)
    return out


def _literal(value: Any) -> bool:
    """Whether a value is a constant the engine's tables can hold."""
    if isinstance(value, tuple | list):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, str | int)


def _member(cond: ir.Expr, name: str) -> bool:
    """Whether a condition is `name in X` (the local `name` an item of a list)."""
    return (isinstance(cond, ir.Compare) and cond.left == ir.Local(name)
            and len(cond.ops) == 1 and cond.ops[0][0] == "in")


def json_type(t: VType, int_kinds: frozenset[str]) -> str:
    """The JSON type of a move field of type t: integer, string, boolean, or a list of
    integers / strings (`integers`, `strings`)."""
    def family(x: VType) -> str:
        if x.name in ("int", "seat") or x.name in int_kinds:
            return "integer"
        return "boolean" if x.name == "bool" else "string"

    if t.name == "list":
        return family(t.args[0]) + "s" if t.args else "strings"
    return family(t)


__all__ = [
    "MOVE_SLOT",
    "ActionCode",
    "Bundles",
    "MovePrinter",
    "json_type",
    "keyword_move",
]
