"""Actions: what a move does, written in rules/ as steps, compiled into a move generator and a
checked run.

An action's steps are those of a procedure (steps.py), but chooses, requires and the guards of
the procedures it does may come anywhere: each `choose` is one of the move's choices (a move
field named by its `as`), and the steps between two choices change the state the later ones
see. The compiler turns an action into two kinds of straight-line functions:

- `_moves_…(g, seat)`: every move the action allows, as nested loops over the choices. The
  effects that later choices depend on are played on the state itself: fresh copies of the
  fields they write (the write set of the steps) are put into it first (`_svN`) and the fields
  as they were are put back after, in a `finally` (`_rsN`), so the caller's state is left as it
  was, every field the same object; effects that may write other players' fields are played on
  a copy of the state holding fresh copies of those fields (`_cpN`). Effects no later choice
  reads, and those after the last choice, are not played at all.
- `_play_…(g, seat, move)`: the effects with the move's choices, checking each choice and
  require on the way and raising IllegalMove with the step's rule and words.

`apply: {effects: ROW.col, PARAM: EXPR}` carries out a bundle of effects of a row of the rules
(`row.effects`, `this.reward`; PARAM: the parameters the effects share after their amount):
each distinct bundle is compiled into functions of its
own (`_opts_fx…`, `_why_fx…`, `_run_fx…`) found through a table by the row's id. `do: EXPR`
with an expression (not a procedure's id) carries out the procedure the value names
(`do: action`, where `action` is a column `row.procedure`); a value that names no procedure does
nothing.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, assert_never

from lisboa_rules.core import names as grammar
from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.logic import negated
from lisboa_rules.ir.reads import columns, free_locals, locals_named, names_read
from lisboa_rules.lang import typed
from lisboa_rules.lang.steps import (
    Compiler,
    Param,
    Procedure,
    arg_code,
    bare,
    negate,
    py_type,
)
from lisboa_rules.lang.tree import (
    Apply,
    Choose,
    Do,
    Drop,
    ForEach,
    Gain,
    If,
    Let,
    Move,
    New,
    Raise,
    Repeat,
    Require,
    Set,
    Shuffle,
    Step,
    StepBase,
    branches,
)
from lisboa_rules.lang.typed import BOOL, Name, Scope, VType
from lisboa_rules.pyprint import expr as pyprint


@dataclass(frozen=True)
class Action:
    """A kind of move: its id (the move's `kind`), the phase it is made in, its steps and the
    rule a refusal names by default."""

    id: str
    phase: str
    steps: tuple[Step, ...]
    rule: str
    path: tuple[str | int, ...] = ()


@dataclass
class Bundles:
    """The bundles of effects `apply` steps carry out: the functions of each bundle (shared by
    the rule sets where their code is the same), and of one rule set the bundle of each row of
    a column (`tables`, found through the rule set's `fx`) and the choices of each column."""

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
# action are known (ActionCode.lines), by the back end that knows their order.
MOVE_SLOT = "MOVE__{}__"


def keyword_move(kind: str, fields: tuple[str, ...]) -> str:
    """A move made with its kind, the seat and the choices made as keywords."""
    args = [py_str(kind), "seat", *[f"{f}={typed.local_code(f)}" for f in fields]]
    return f"Move({', '.join(args)})"




# The move generator's own steps, which it puts among an action's (`_enum`, `_play`).


@dataclass(frozen=True)
class Restore:
    """The end of the narrowing of an if's condition: the steps after the if read these
    names as they were."""

    names: tuple[tuple[str, Name], ...]


@dataclass(frozen=True)
class Call:
    """The run of a procedure done whose choices the move generator went through (`args`:
    the code of its arguments, `, a, b`, and `given`, what they are; `names`: its choices)."""

    proc: str
    args: str
    names: tuple[str, ...]
    given: tuple[ir.Expr, ...] = ()


@dataclass(frozen=True)
class Applied:
    """The run of a bundle of effects whose choices the move generator went through (`table`,
    `key`, `shared`, `given` and `source` as a BundleRef's)."""

    table: str
    key: str
    shared: str
    names: tuple[str, ...]
    given: tuple[ir.Expr, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class BundleRef:
    """The bundles of effects an apply step carries out: the entry of the rule set's `fx`
    (`table`), the code of the row's id (`key`) and of the parameters the effects share
    (`shared`), what those read (`given`), and the table of the bundles (`source`)."""

    table: str
    key: str
    shared: str
    given: tuple[ir.Expr, ...]
    source: str


# A step of an action as the move generator goes through them
Item: TypeAlias = Step | Restore | Call | Applied


def _walk(s: Item) -> Iterator[Item]:
    """The step and every step nested in it (the generator's own steps nest none)."""
    if isinstance(s, Restore | Call | Applied):
        return iter((s,))
    return s.walk()


class ActionCompiler(Compiler):
    """Compiles actions against one rule set's scope (see the module's text)."""

    def __init__(self, scope: Scope, procs: Mapping[str, Procedure],
                 hooks: Mapping[str, tuple[str, ...]], name: Callable[[str], str],
                 where: Callable[[tuple[str | int, ...]], str],
                 table_values: Mapping[str, Mapping[Any, Any]] | None = None,
                 copier: Callable[[frozenset[str], frozenset[str], bool], str] | None = None,
                 bundles: Bundles | None = None, effect_ids: tuple[str, ...] = (),
                 measure_sources: Mapping[str, Any] | None = None,
                 saver: Callable[[frozenset[str], frozenset[str]], tuple[str, str]] | None = None
                 ) -> None:
        super().__init__(scope, procs, hooks, name, where)
        self.table_values: Mapping[str, Mapping[Any, Any]] = table_values or {}
        # where a table the move generators read is added (the engine's tables), if anywhere
        self.new_tables = table_values if isinstance(table_values, dict) else None
        # the values a choice of the move generator goes through, when they are constants:
        # a name -> (the values, the name as the choice bound it)
        self.domains: dict[str, tuple[tuple[Any, ...], Name]] = {}
        # (game fields, player fields, all players?) -> the name of a copy function
        self.copier = copier or (lambda g, p, o: "_copy_all")
        # (game fields, the acting player's fields) -> the names of the functions that swap
        # fresh copies of them into the state and put them back (see _copy_then), if any
        self.saver = saver
        self.bundles = bundles if bundles is not None else Bundles()
        self.effect_ids = effect_ids
        self.measure_sources: Mapping[str, Any] = measure_sources or {}
        self.functions: list[list[str]] = []
        self.let_sources: dict[str, ir.Expr] = {}  # a local -> the value it was let to
        self.folding = False  # a let of the move generator, which may read a table made now
        self.assigned: set[str] = set()  # the locals the play function assigns so far
        self.field_types: dict[str, VType] = {}  # the move fields chosen, with their types
        # where loop-invariant options may be computed: per function's lines, (line, indent,
        # the names bound there)
        self.points: dict[int, list[tuple[int, int, frozenset[str]]]] = {}
        self.action: Action | None = None
        self.fields: list[str] = []
        self.counter = 0

    # -- what steps write ---------------------------------------------------------------

    def writes(self, steps: tuple[Item, ...], seen: frozenset[str] = frozenset()
               ) -> tuple[set[str], set[str], bool]:
        """The game fields and the acting player's fields the steps may change, and whether
        other players' fields may change too (then every player is copied)."""
        game: set[str] = set()
        player: set[str] = set()
        others = False

        def unknown() -> None:
            # a place the compiler cannot follow (a local that holds a part of the state, a
            # target it cannot read): every field may change, of every player
            nonlocal others
            game.update(self.scope.game)
            player.update(self.scope.player)
            others = True

        def target(src: Any) -> None:
            nonlocal others
            if not isinstance(src, str):
                return
            try:
                node: ast.expr = parse_expr(src.strip()).body
            except SyntaxError:
                unknown()
                return
            chain = []
            while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
                if isinstance(node, ast.Attribute):
                    chain.append(node.attr)
                node = node.value if not isinstance(node, ast.Call) else node.func
            if not isinstance(node, ast.Name):
                unknown()
                return
            root = node.id
            if root == "game" and chain:
                game.add(chain[-1])
                if chain[-1] == "players":
                    others = True
                    if len(chain) > 1:  # a field of a player of the list
                        player.add(chain[-2])
            elif root == "player" and chain:
                player.add(chain[-1])
            elif root in self.scope.player:
                player.add(root)
            elif root in self.scope.game:
                game.add(root)
                others = others or root == "players"
            elif root in self.scope.locals and chain:
                others = True
                player.add(chain[-1])
            else:
                unknown()

        for s in steps:
            for sub in _walk(s):
                match sub:
                    case Gain() | Set():
                        for t, _value in sub.places:
                            target(t)
                    case Move():
                        target(sub.from_)
                        target(sub.to)
                    case Drop() | Shuffle():
                        target(sub.place)
                    case New():
                        target(sub.place)
                        others = True
                    case Do() | Raise() | Apply() | Call() | Applied():
                        for pid in self._callees(sub):
                            if pid in seen or pid not in self.procs:
                                continue
                            g2, p2, o2 = self.writes(self.procs[pid].steps, seen | {pid})
                            game |= g2
                            player |= p2
                            others = others or o2
                    case Let() | Require() | Choose() | If() | ForEach() | Repeat() | Restore():
                        pass  # they write nothing themselves (an if's, a loop's steps: walked)
                    case _:
                        assert_never(sub)
        return game, player, others

    def reads(self, steps: list[Item]) -> set[str]:
        """The names the choices and refusals of these steps may read (conservatively: every
        name in their expressions; of the procedures they do, their guards; of the effects
        before their last choice, everything; the measures they name, expanded)."""
        out: set[str] = set()
        last = max((k for k, x in enumerate(steps) if self.decides(x)), default=-1)
        for s in steps[:last + 1]:
            if self.decides(s) or isinstance(s, Let | Restore):
                for sub in _walk(s):
                    out |= _names_in(sub)
                    for pid in self._callees(sub):
                        out |= self._proc_reads(pid, guard_only=True)
            else:  # an effect that a later choice may see
                for sub in _walk(s):
                    out |= _names_in(sub)
                    for pid in self._callees(sub):
                        out |= self._proc_reads(pid, guard_only=False)
        return self._expand(out)

    def _proc_reads(self, pid: str, guard_only: bool, seen: frozenset[str] = frozenset()
                    ) -> set[str]:
        proc = self.procs.get(pid)
        if proc is None or pid in seen:
            return set()
        out: set[str] = set()
        for s in proc.guard if guard_only else proc.steps:
            for sub in s.walk():
                out |= _names_in(sub)
                if not guard_only:
                    for callee in self._callees(sub):
                        out |= self._proc_reads(callee, False, seen | {pid})
        return out

    def _expand(self, names: set[str]) -> set[str]:
        """Names with the measures among them replaced by what they read."""
        out = set(names)
        todo = [n for n in names if n in self.measure_sources]
        while todo:
            n = todo.pop()
            for m in _texts_names([self.measure_sources[n]]):
                if m not in out:
                    out.add(m)
                    if m in self.measure_sources:
                        todo.append(m)
        return out

    def _callees(self, s: Item) -> list[str]:
        """The procedures a step carries out itself (not those of the steps nested in it)."""
        match s:
            case Do() | Call():
                if s.proc in self.procs:
                    return [s.proc]
                return sorted(self._targets_all())
            case Raise():
                return list(self.hooks.get(s.event, ()))
            case Apply() | Applied():
                return self._apply_callees(s)
            case (Gain() | Set() | Let() | Move() | Drop() | Require() | Choose() | If()
                  | ForEach() | Repeat() | Shuffle() | New() | Restore()):
                return []
            case _:
                assert_never(s)

    def _apply_callees(self, s: Apply | Applied) -> list[str]:
        """The effects an apply step may carry out: those of the bundles of the tables it may
        read (`ROW.column`: every table of that column; a compiled `_apply`: its table), or
        every effect when that is not known (`this.…`, read against another row)."""
        if isinstance(s, Applied):
            tables = [s.source]
        else:
            src = s.effects
            if not isinstance(src, str) or src.startswith("this.") or "." not in src:
                return list(self.effect_ids)
            tables = self._tables_of(src.rsplit(".", 1)[-1])
        out: set[str] = set()
        for name in tables:
            values = self.table_values.get(name)
            if not values:
                return list(self.effect_ids)
            for bundle in values.values():
                if not isinstance(bundle, tuple):
                    return list(self.effect_ids)
                out |= {str(e) for e, _a in bundle}
        return sorted(out) if tables else list(self.effect_ids)

    def _tables_of(self, col: str) -> list[str]:
        """The tables of a column of every kind's rows that has it."""
        return [found[col][1] for found in self.scope.tables.values() if col in found]

    def _targets_all(self) -> set[str]:
        out = set()
        for values in self.table_values.values():
            for v in values.values():
                if isinstance(v, str) and v in self.procs:
                    out.add(v)
        return out

    # -- decisions ----------------------------------------------------------------------

    def decides(self, s: Item) -> bool:
        """Whether a step makes or checks a choice (so the steps before it matter to the
        move generator)."""
        match s:
            case Choose() | Require():
                return True
            case Do():
                return any(self._guarded(c) for c in self._callees(s))
            case Apply():
                return self._apply_guarded(s)
            case If() | ForEach() | Repeat():
                then, orelse = branches(s)
                return any(self.decides(x) for x in (*then, *orelse))
            case (Gain() | Set() | Let() | Move() | Drop() | Raise() | Shuffle() | New()
                  | Restore() | Call() | Applied()):
                return False
            case _:
                assert_never(s)

    def _loop_refused(self, s: Item) -> bool:
        """A loop whose steps choose or refuse is refused (a move makes each choice once)."""
        if isinstance(s, ForEach | Repeat) and self.decides(s):
            self.problem(s, "step-order", "a choice or a refusal inside a loop: a move makes each "
                         "choice once; write the choices as steps of their own, or choose "
                         "several items at once (choose with min/max) before the loop")
            return True
        return False

    def _apply_guarded(self, s: Apply) -> bool:
        """Whether some bundle an apply step may carry out chooses or refuses (`choices:
        false`: none of its choices is made, the effects that need one are left out)."""
        if unchosen(s):
            return False
        src = s.effects
        bundles: list[Any] = []
        if isinstance(src, str) and src.startswith("this.") and self.scope.this is not None:
            try:
                value = self.scope.this(tuple(src.split(".")[1:]))
            except KeyError:
                return True
            bundles = [tuple(value.items())] if isinstance(value, Mapping) else []
        else:  # ROW.column: the bundles of every table of that column
            col = src.rsplit(".", 1)[-1] if isinstance(src, str) else ""
            for name in self._tables_of(col):
                values = self.table_values.get(name, {})
                bundles += [v for v in values.values() if isinstance(v, tuple)]
            if not bundles:
                return True
        return any(self._guarded(str(e)) for b in bundles for e, _a in b)

    def _guarded(self, pid: str) -> bool:
        proc = self.procs.get(pid)
        return proc is not None and bool(proc.guard)

    # -- compiling an action ------------------------------------------------------------

    def compile_action(self, action: Action, stem: str) -> ActionCode:
        self.action = action
        self.stem = stem
        self.functions = []
        self.moves: list[tuple[str, ...]] = []
        self.fields = []
        self.counter = 0
        self.first_field: str | None = None
        self.first_var: str | None = None
        self.field_types = {}
        self.points = {}
        self.domains = {}
        scope = self.scope
        head = "# " + py_comment(f"{self.where(action.path)} {action.id}")
        out = [head, f"def _moves_{stem}(g: Game, seat: int, *only: Any) -> list[Move]:",
               "    p = g.players[seat]", "    out: list[Move] = []"]
        self.main_out = out
        self.memo = False
        self.guards: list[str] = []  # the answers of guards asked while listing (_guard_key)
        self._point(out, 1, scope)
        self._enum(list(action.steps), scope, 1, out, owned=False, first=True)
        if self.memo:
            out.insert(4, "    _memo: dict[Any, list[Move]] = {}")
        for known in reversed(self.guards):
            out.insert(4, f"    {known}: dict[Any, bool] = {{}}")
        out.append("    return out")
        self.functions.insert(0, _clean(out))
        play = [f"def _play_{stem}(g: Game, seat: int, move: Move) -> None:",
                "    p = g.players[seat]"]
        self.assigned = set()
        self._play(list(action.steps), scope, 1, play, ())
        self.functions.append(_clean(play))
        types = {f: self.field_types.get(f, typed.TEXT) for f in self.fields}
        return ActionCode(self.functions, tuple(self.fields), self.first_field, types,
                          action.id, self.moves)

    def _field(self, name: str) -> None:
        if name not in self.fields:
            self.fields.append(name)

    def _emit_move(self, scope: Scope, bound: tuple[str, ...], indent: int,
                   out: list[str]) -> None:
        # the kind, the seat and the choices made (the other fields keep their defaults),
        # written once the fields of every move are known (ActionCode.lines)
        pad = "    " * indent
        out.append(f"{pad}out.append({MOVE_SLOT.format(len(self.moves))})")
        self.moves.append(bound)

    # The move generator: `bound` (the move fields chosen so far) is kept in the scope's
    # locals under the name `_bound` as a tuple of names.

    def _enum(self, steps: list[Item], scope: Scope, indent: int, out: list[str],
              owned: bool, first: bool = False, bound: tuple[str, ...] = ()) -> None:
        pad = "    " * indent
        i = 0
        while i < len(steps):
            s = steps[i]
            rest = steps[i + 1:]
            if isinstance(s, Restore):
                scope = scope.with_locals(**dict(s.names))
                i += 1
                continue
            if not any(self.decides(x) for x in steps[i:]):
                break
            if not isinstance(s, Let | Choose):
                first = False
            match s:
                case Let():
                    scope = self._enum_let(s, scope, indent, out)
                    self._point(out, indent, scope)
                    i += 1
                    continue
                case Choose():
                    if s.as_ in bound or s.as_ in ("kind", "player"):
                        self.problem(s, "duplicate-id", f"the choice '{s.as_}' is made twice by "
                                     "this action (or names a field every move has); name it "
                                     "otherwise", "choose/as")
                        i += 1
                        continue
                    one = self._choice(s, scope, out, indent, first)
                    if one is None:
                        i += 1
                        continue
                    scope, name = one
                    self._field(name)
                    self._point(out, indent + 1, scope)
                    self._enum(rest, scope, indent + 1, out, False, False, (*bound, name))
                    return
                case Require():
                    cond = self.expr(s, s.cond, scope, BOOL)
                    if cond is not None:
                        out.append(f"{pad}if {bare(cond.code)}:")
                        self._point(out, indent + 1, self._narrow(s, scope))
                        self._enum(rest, self._narrow(s, scope), indent + 1, out, owned, False,
                                   bound)
                        return
                    i += 1
                    continue
                case If() if self.decides(s):
                    cond = self.expr(s, s.cond, scope, BOOL)
                    if cond is None:
                        i += 1
                        continue
                    out.append(f"{pad}if {bare(cond.code)}:")
                    self._enum([*s.then, self._restore(s, scope), *rest],
                               self._narrow(s, scope), indent + 1, out, owned, False, bound)
                    out.append(f"{pad}else:")
                    self._enum([*s.orelse, *rest], scope, indent + 1, out, owned, False, bound)
                    return
                case Do() if self.decides(s):
                    self._enum_do(s, rest, scope, indent, out, owned, bound)
                    return
                case Apply() if not unchosen(s):
                    self._enum_apply(s, rest, scope, indent, out, owned, bound)
                    return
                case ForEach() | Repeat() if self._loop_refused(s):
                    i += 1
                    continue
                case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                      | Raise() | Apply() | Shuffle() | New() | Call() | Applied()):
                    pass  # an effect (below)
                case _:
                    assert_never(s)
            # an effect: the later choices see what it changes, unless they read none of it
            if not owned:
                seg = i
                while seg < len(steps) and not self.decides(steps[seg]) \
                        and not isinstance(steps[seg], Let | Restore):
                    seg += 1
                game_w, player_w, _o = self.writes(tuple(steps[i:seg]))
                if not (game_w | player_w) & self.reads(steps[seg:]):
                    i = seg  # no later choice reads it: the move generator leaves it out
                    continue
                self._copy_then(steps[i:], scope, indent, out, bound)
                return
            scope = self._effect(s, scope, indent, out)
            self.points[id(out)] = []  # the state changed: nothing moves above this
            self._point(out, indent, scope)
            i += 1
        self._emit_move(scope, bound, indent, out)

    # Loop-invariant choices: the options of a procedure or a bundle read the state and the
    # values they are given; inside loops over other choices, with the state unchanged, they
    # are computed once, before the outermost loop that leaves their values unchanged.

    def _point(self, out: list[str], indent: int, scope: Scope) -> None:
        """Code at `indent` may be put here (the current end of `out`): the locals bound."""
        known = frozenset(v.ref.name for v in scope.locals.values()
                          if isinstance(v.ref, ir.Local))
        self.points.setdefault(id(out), []).append((len(out), indent, known))

    def _hoisted(self, out: list[str], indent: int, code: str, refs: set[str],
                 returns: str) -> str:
        """`code`, which reads the locals `refs`, computed at the earliest point it can be, as
        a local (of the type `returns`, or None until computed); or `code` itself."""
        points = self.points.get(id(out), [])
        best = None
        for k, (pos, ind, known) in enumerate(points):
            if ind > indent or not refs <= known:
                continue
            # the point encloses the end of `out` (nothing after it is indented less), and no
            # condition between them guards the code (an `if` is a barrier: what it tests may
            # be what makes the code safe to run)
            body = [x for x in out[pos:] if x.strip()]
            if all(len(x) - len(x.lstrip()) >= 4 * ind for x in body) and not any(
                    len(x) - len(x.lstrip()) < 4 * indent
                    and x.lstrip().startswith(("if ", "elif ", "else:")) for x in body):
                best = k
                break
        if best is None or points[best][0] == len(out):
            return code
        pos, ind, _known = points[best]
        self.counter += 1
        name = f"_opts{self.counter}"
        # computed the first time it is needed (a loop that never reaches it pays nothing)
        out.insert(pos, "    " * ind + f"{name}: {returns} | None = None")
        out.append("    " * indent + f"if {name} is None:")
        out.append("    " * indent + f"    {name} = {code}")
        self.points[id(out)] = [(q + 1 if q >= pos and k != best else q, i, kn)
                                for k, (q, i, kn) in enumerate(points)]
        self.points[id(out)][best] = (pos + 1, ind, points[best][2])
        return name

    def _restore(self, s: If, scope: Scope) -> Restore:
        """A step that ends the narrowing of an if's condition (the steps after the if read
        the names as they were)."""
        return Restore(tuple((n, scope.locals[n]) for n in typed.narrowed(s.cond)
                              if n in scope.locals))

    def _narrow(self, s: Require | If, scope: Scope) -> Scope:
        from dataclasses import replace

        then = scope
        for name in typed.narrowed(s.cond):
            if name in scope.locals:
                known = scope.locals[name]
                then = then.with_locals(**{name: replace(
                    known, type=replace(known.type, optional=False))})
        return then

    def _choice(self, s: Choose, scope: Scope, out: list[str], indent: int, first: bool
                ) -> tuple[Scope, str] | None:
        pad = "    " * indent
        name = s.as_
        var = typed.local_code(name)
        one = self._single(s, scope)
        if one is not None:
            over, where, optional, inner = one.over, one.where_code, one.optional, one.scope
            if first:
                over = f"only or {over}"
            out.append(f"{pad}for {var} in {'(None, *' + over + ')' if optional else over}:")
            # an item that must be in a list: the loop goes on when it is not in it
            flipped = None
            if one.where is not None and not optional and _member(one.where, name):
                flipped = bare(pyprint.expr(negated(one.where), inner.names()))
            if first and not optional:  # a value given by the caller is checked first
                src = self.expr(s, s.source, scope, None, "choose/from")
                assert src is not None
                flipped = f"{var} not in {src.code}" if where is None else None
                where = f"{var} in {src.code}" + (f" and ({where})" if where else "")
                self.first_field = name
                self.first_var = var
            values = None if first else const.sequence(one.keys)
            if values is not None:
                self.domains[name] = (((None,) if optional else ()) + values, inner.locals[name])
            else:
                self.domains.pop(name, None)
            if where is not None:
                test = f"{var} is not None and not ({where})" if optional else f"not ({where})"
                out.append(f"{pad}    if {flipped or test}:")
                out.append(f"{pad}        continue")
            self.field_types[name] = inner.locals[name].type
            return inner, name
        opts = self._options(s, scope)
        if opts is None:
            return None
        code, _t, inner = opts
        out.append(f"{pad}for {var} in {code}:")
        self.field_types[name] = inner.locals[name].type
        return inner, name

    def choice_types(self, proc: Procedure) -> dict[str, VType]:
        """The types of the choices of a procedure an action does (from their `from`)."""
        scope = self.scope.with_locals(**{p.name: Name(p.type, ir.Local(p.name))
                                          for p in proc.params})
        out: dict[str, VType] = {}
        for c in proc.choices:
            name = c.as_
            try:
                src = typed.check(c.source, scope)
            except typed.ExprError:
                out[name] = typed.TEXT
                continue
            item = src.type.args[0] if src.type.args else typed.TEXT
            out[name] = typed.list_of(item) if c.several else item
        return out

    def _copy_then(self, steps: list[Item], scope: Scope, indent: int, out: list[str],
                   bound: tuple[str, ...]) -> None:
        """The rest of the steps in a function of its own, played on the state itself (the
        fields they write swapped for fresh copies, then put back) or on a copy of it."""
        game, player, others = self.writes(tuple(self._played(steps)))
        # Steps that write only the game's fields and the acting player's are played on the
        # state itself: fresh copies of the fields they write swapped in, the fields as they
        # were put back after (whatever happens: the caller's state is left as it was, every
        # field the same object); steps that may write other players' fields, on a copy.
        saved = None if others or self.saver is None else \
            self.saver(frozenset(game), frozenset(player))
        copy = self.copier(frozenset(game), frozenset(player), others) if saved is None else ""
        self.counter += 1
        fn = f"_moves_{self.stem}__k{self.counter}"
        names = [n for n, v in scope.locals.items() if isinstance(v.ref, ir.Local)]
        params = "".join(f", {scope.locals[n].code}: Any" for n in names)
        args = "".join(f", {scope.locals[n].code}" for n in names)
        body = [f"def {fn}(g: Game, seat: int, out: list[Move]{params}) -> None:",
                "    p = g.players[seat]"]
        self.points[id(body)] = []
        self._point(body, 1, scope)
        start = len(self.functions)
        self._enum(steps, scope, 1, body, True, False, bound)
        self.functions.append(_clean(body))
        pad = "    " * indent
        if saved is None:
            call = f"{fn}({copy}(g, seat), seat, {{}}{args})"
        else:
            call = "\n".join([f"_was = {saved[0]}(g, seat)", "try:",
                              f"    {fn}(g, seat, {{}}{args})", "finally:",
                              f"    {saved[1]}(g, seat, _was)"])
        first = self.first_var
        keyed = [scope.locals[n].code for n in names if scope.locals[n].code != first]
        if out is self.main_out and first is not None and self.first_field is not None \
                and first in [scope.locals[n].code for n in names] \
                and _only_in_moves(self.functions[start:], first):
            # The moves of the rest depend on the first choice only through the other values
            # (as a row through the row it names): made once per those values, then retagged.
            key = f"({', '.join(keyed)},)" if keyed else "()"
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

    def _played(self, steps: list[Item]) -> list[Item]:
        """The steps whose effects the move generator carries out on the copy `_copy_then`
        makes for them (a superset), as `_enum` plays them: not the effects after the last
        step that chooses or refuses (never played), nor those after a choice, or after the
        options of a procedure or a bundle of effects (played on copies of their own)."""
        last = max((k for k, x in enumerate(steps) if self.decides(x)), default=-1)
        end = last if last >= 0 and isinstance(steps[last], Choose | Require) else last + 1
        for k, x in enumerate(steps[:end]):
            if isinstance(x, Choose | Apply) or (isinstance(x, Do) and self.decides(x)):
                return steps[:k]
        return steps[:end]

    def _do_target(self, s: Do, scope: Scope) -> list[tuple[str | None, Procedure | None]]:
        """The procedures a do step may carry out: [(test, procedure)], test being the
        condition on the step's value (None: always); a procedure of None does nothing."""
        if s.proc in self.procs:
            return [(None, self.procs[s.proc])]
        head = re.split(r"[.\[]", s.proc)[0]
        if "-" in s.proc or ("." not in s.proc and head not in scope.locals):
            # an id, not a value that holds one: a procedure that does not exist
            self.problem(s, "unknown-reference", f"unknown procedure {s.proc!r}", "do",
                         typed.closest(s.proc, sorted(self.procs)))
            return []
        t = self.expr(s, s.proc, scope, None, "do")
        if t is None:
            return []
        if t.type.name != "text":
            self.problem(s, "expr-type", f"'{s.proc}' is {typed.describe(t.type)}: do names a "
                         "procedure (its id, or a text that holds one)", "do")
            return []
        var = f"_do_{self.counter}"
        self.counter += 1
        cases: list[tuple[str | None, Procedure | None]] = []
        for pid in sorted(self._candidates(t.node)):
            cases.append((f"{var} == {py_str(pid)}", self.procs[pid]))
        cases.append((None, None))
        self._do_var = (var, bare(t.code))
        return cases

    def _candidates(self, node: ir.Expr) -> set[str]:
        """The procedures a text may name: the values of the tables whose entry is its value
        (a column's, either side of `a if c else b`, through the lets it reads), not of the
        tables its key is read from (`noble.noble_action`, the noble a card's type: the card
        types are no procedures, though one is spelt like the effect `treasury`); failing
        that, of every table it reads; every procedure some table names when it reads none."""
        outer = self._value_tables(node, 0)
        if outer is not None:
            tables, named = outer
            out = {v for v in named if v in self.procs}
            for t in tables:
                out |= self._procs_in(t)
            return out
        reads = self._columns_read(node, 0)
        if not reads:
            return self._targets_all()
        out = set()
        for t in reads:
            out |= self._procs_in(t)
        return out

    def _procs_in(self, column: tuple[str, str]) -> set[str]:
        """The procedures the values of a column of a kind's rows name."""
        rows = self._column(*column) or {}
        return {v for v in rows.values() if isinstance(v, str) and v in self.procs}

    def _columns_read(self, node: ir.Expr, depth: int) -> set[tuple[str, str]]:
        """The columns (kind, column) an expression reads, through the lets it reads."""
        out = {(c.kind, c.column) for c in columns(node)}
        if depth < 20:
            for name in locals_named(node):
                if name in self.let_sources:
                    out |= self._columns_read(self.let_sources[name], depth + 1)
        return out

    def _value_tables(self, node: ir.Expr, depth: int
                      ) -> tuple[set[tuple[str, str]], set[str]] | None:
        """(the columns (kind, column) an entry of which is the value of `node`, the texts it
        may be as written), or None when its value is not read so plainly."""
        if isinstance(node, ir.Column):
            return {(node.kind, node.column)}, set()
        if isinstance(node, ir.Lit | ir.Data) and (node.value is None
                                                   or isinstance(node.value, str)):
            return set(), ({node.value} if isinstance(node.value, str) else set())
        if isinstance(node, ir.Local) and node.name in self.let_sources and depth < 20:
            return self._value_tables(self.let_sources[node.name], depth + 1)
        parts: tuple[ir.Expr, ...]
        if isinstance(node, ir.Cond):
            parts = (node.then, node.orelse)
        elif isinstance(node, ir.BoolOp):
            parts = node.values
        else:
            return None
        tables: set[tuple[str, str]] = set()
        named: set[str] = set()
        for part in parts:
            found = self._value_tables(part, depth)
            if found is None:
                return None
            tables |= found[0]
            named |= found[1]
        return tables, named

    # Constants: a choice from a constant without repeats goes through it as it is, and a let
    # of the move generator whose value depends only on such a choice (and on the rules' tables)
    # reads a table made at compile time (`first([n for n in ... if x in n.list])`).

    def _distinct(self, keys: ir.Keys) -> bool:
        src = keys.source
        if not keys.is_table and isinstance(src, ir.Column):  # each row's list
            rows = self._column(src.kind, src.column)
            if rows is not None:
                return all(isinstance(v, list | tuple) and const.distinct(tuple(v))
                           for v in rows.values())
        return super()._distinct(keys)

    def _column(self, kind: str, col: str) -> Mapping[Any, Any] | None:
        """The values of a column of a kind's rows, by id, if the compiler was given them."""
        found = self.scope.tables.get(kind, {}).get(col)
        return None if found is None else self.table_values.get(found[1])

    def _enum_let(self, s: Let, scope: Scope, indent: int, out: list[str]) -> Scope:
        """A let of the move generator: its value read from a table made now when it depends
        only on a choice of constant values (see `_folded`)."""
        self.folding = len(s.names) == 1
        try:
            inner = self._let(s, scope, indent, out)
        finally:
            self.folding = False
        for name, _source in s.names:
            self.domains.pop(name, None)
        return inner

    def _plain_let(self, name: str, t: typed.Typed, scope: Scope) -> str:
        table = self._folded(name, t.node, scope) if self.folding else None
        return table if table is not None else super()._plain_let(name, t, scope)

    def _folded(self, name: str, node: ir.Expr, scope: Scope) -> str | None:
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
        values, bound = domain
        if scope.locals.get(var) is not bound:
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
        return f"{found}[{typed.local_code(var)}]"

    def _cell(self, kind: str, col: str, key: Any) -> Any:
        """The value of a column of the rules' tables for one id (a KeyError if not known)."""
        rows = self._column(kind, col)
        if rows is None:
            raise KeyError(col)
        return rows[key]

    def _bound(self, name: str, t: typed.Typed, scope: Scope) -> None:
        if name not in scope.locals:  # what a new name reads, for the procedures it may name
            self.let_sources[name] = t.node
        self.assigned.add(name)

    def _call_args(self, s: Do, proc: Procedure, scope: Scope) -> list[typed.Typed] | None:
        return self._given(s, proc, dict(s.with_ or ()), scope, "with")

    def _enum_do(self, s: Do, rest: list[Item], scope: Scope, indent: int, out: list[str],
                 owned: bool, bound: tuple[str, ...]) -> None:
        pad = "    " * indent
        cases = self._do_target(s, scope)
        if not cases:
            self._enum(rest, scope, indent, out, owned, False, bound)
            return
        dynamic = cases[0][0] is not None
        if dynamic:
            var, code = self._do_var
            out.append(f"{pad}{var} = {code}")
        for k, (test, proc) in enumerate(cases):
            inner_pad = pad
            level = indent
            if dynamic:
                if test is None:
                    out.append(f"{pad}else:")
                else:
                    out.append(f"{pad}{'if' if k == 0 else 'elif'} {test}:")
                inner_pad = pad + "    "
                level = indent + 1
            if proc is None:
                self._enum(rest, scope, level, out, owned, False, bound)
                continue
            given = self._call_args(s, proc, scope)
            if given is None:
                out.append(f"{inner_pad}pass")
                continue
            args = arg_code(given)
            reads = set().union(*(locals_named(v.node) for v in given))
            stem = self.name(proc.id)
            names = [c.as_ for c in proc.choices]
            twice = [n for n in names if n in bound]
            if twice:
                self.problem(s, "duplicate-id", f"'{proc.id}' makes the choice '{twice[0]}' "
                             "this action has made already; name one of them otherwise", "do")
                out.append(f"{inner_pad}pass")
                continue
            inner = scope
            new_bound = bound
            for n, t in self.choice_types(proc).items():
                self.field_types.setdefault(n, t)
            if names:
                vars_ = [typed.local_code(n) for n in names]
                target = f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_)
                opts = self._hoisted(out, level, f"_opts_{stem}(g, seat{args})", reads,
                                     f"list[{self.choice_type(proc)}]")
                out.append(f"{inner_pad}for {target} in {opts}:")
                for n in names:
                    self._field(n)
                    inner = inner.with_locals(**{n: Name(typed.ANY, ir.Local(n))})
                new_bound = (*bound, *names)
            else:
                guard = f"_opts_{stem}(g, seat{args})"
                key = self._guard_key(out, given)
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
            call = Call(proc.id, args, tuple(names), tuple(v.node for v in given))
            self._enum([call, *rest], inner, level + 1, out, False, False, new_bound)

    def _guard_key(self, out: list[str], given: list[typed.Typed]) -> str | None:
        """The key of the answers of a guard given these values, asked in the function that
        lists the moves (which never changes the state), when each is a local of a type that
        can be a key (a number, a text, an id) or a constant of one; else None."""
        if out is not self.main_out or not given:
            return None
        for v in given:
            if isinstance(v.node, ir.Local | ir.Seat):
                if v.type.name in ("list", "map", "player", "any"):
                    return None
                continue
            try:
                const.scalar(v.node)
            except const.NotConstant:
                return None
        return f"({', '.join(bare(v.code) for v in given)},)"

    def _enum_apply(self, s: Apply, rest: list[Item], scope: Scope, indent: int,
                    out: list[str], owned: bool, bound: tuple[str, ...]) -> None:
        pad = "    " * indent
        got = self._bundle_table(s, scope)
        if got is None:
            self._enum(rest, scope, indent, out, owned, False, bound)
            return
        table, key, shared = got.table, got.key, got.shared
        names = self._apply_names(s, table, bound)
        inner = scope
        vars_ = [typed.local_code(n) for n in names]
        target = "_" if not vars_ else (f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_))
        reads = set().union(*(locals_named(x) for x in got.given))
        opts = self._hoisted(out, indent, f"g.rs.fx[{py_str(table)}][{key}][0](g, seat, {shared})",
                             reads, "list[tuple[Any, ...]]")
        out.append(f"{pad}for {target} in {opts}:")
        for n in names:
            self._field(n)
            inner = inner.with_locals(**{n: Name(typed.ANY, ir.Local(n))})
        call = Applied(table, key, shared, tuple(names), got.given, got.source)
        self._enum([call, *rest], inner, indent + 1, out, False, False, (*bound, *names))

    def _apply_names(self, s: Apply, table: str, bound: tuple[str, ...]) -> list[str]:
        """The move fields an apply step's choices fill: the choices of its effects, renamed
        by `choices: {CHOICE: NAME}`; a choice is made once per move."""
        renamed = dict(s.choices) if s.choices else {}
        names = [renamed.get(n, n) for n in self.bundles.choices[table]]
        for old, new in renamed.items():
            if old not in self.bundles.choices[table]:
                self.problem(s, "step-unknown-key", f"the effects of '{s.effects}' "
                             f"make no choice '{old}'", f"apply/choices/{old}",
                             typed.closest(str(old), list(self.bundles.choices[table])))
            self.field_types.setdefault(new, self.field_types.get(old, typed.TEXT))
        for n in names:
            if n in bound:
                self.problem(s, "duplicate-id", f"the choice '{n}' is made twice by this "
                             f"action; name this one otherwise: choices: {{{n}: NEW_NAME}}",
                             "apply")
        return names

    def _effect(self, s: Item, scope: Scope, indent: int, out: list[str]) -> Scope:
        pad = "    " * indent
        match s:
            case Call():
                choices = "".join(f", {typed.local_code(n)}" for n in s.names)
                out.append(f"{pad}_run_{self.name(s.proc)}(g, seat{s.args}{choices})")
            case Applied():
                choices = "".join(f", {typed.local_code(n)}" for n in s.names)
                out.append(f"{pad}g.rs.fx[{py_str(s.table)}][{s.key}][2](g, seat, {s.shared}"
                           f"{choices})")
            case Restore():
                return scope.with_locals(**dict(s.names))
            case Apply():
                got = self._bundle_table(s, scope)
                if got is not None:
                    table, key, shared = got.table, got.key, got.shared
                    names = self.bundles.choices[table]
                    nones = ", None" * len(names)
                    out.append(pad + "# " + py_comment(f"{self.where(s.path)} {s.id or s.kind}"))
                    out.append(f"{pad}g.rs.fx[{py_str(table)}][{key}][2](g, seat, {shared}"
                               f"{nones})")
            case Do() if s.proc not in self.procs:
                cases = self._do_target(s, scope)
                if not cases:
                    return scope
                var, code = self._do_var
                out.append(pad + "# " + py_comment(f"{self.where(s.path)} {s.id or s.kind}"))
                out.append(f"{pad}{var} = {code}")
                for k, (test, proc) in enumerate(cases):
                    if proc is None:
                        continue
                    given = self._call_args(s, proc, scope)
                    args = "" if given is None else arg_code(given)
                    out.append(f"{pad}{'if' if k == 0 else 'elif'} {test}:")
                    nones = ", None" * len(proc.choices)
                    out.append(f"{pad}    _run_{self.name(proc.id)}(g, seat{args}{nones})")
            case (Gain() | Set() | Let() | Move() | Drop() | Require() | Choose() | If()
                  | ForEach() | Repeat() | Do() | Raise() | Shuffle() | New()):
                return super()._effect(s, scope, indent, out)
            case _:
                assert_never(s)
        return scope

    # -- bundles of effects -------------------------------------------------------------

    def _bundle_table(self, s: Apply, scope: Scope) -> BundleRef | None:
        """The bundles of effects an apply step carries out, compiled."""
        src = s.effects
        if isinstance(src, str) and src.startswith("this.") and scope.this is not None:
            # a bundle of the procedure's own row (`this.reward`): a table of one entry
            try:
                value = scope.this(tuple(src.split(".")[1:]))
            except KeyError as exc:
                self.problem(s, "unknown-reference", str(exc).strip("'\""), "apply/effects")
                return None
            if not isinstance(value, Mapping):
                self.problem(s, "expr-type", f"'{src}' is not a bundle of effects",
                             "apply/effects")
                return None
            bundle = tuple((str(e), int(a)) for e, a in value.items())
            table = f"_T_const{len(self.bundles.tables) + 1}"
            self.table_values = {**self.table_values, table: {0: bundle}}
            key_code = "0"
            reads: list[ir.Expr] = []
        else:
            got = self.expr(s, src, scope, None, "apply/effects")
            if got is None:
                return None
            node = got.node
            if got.type.name != "effects" or not isinstance(node, ir.Column):
                self.problem(s, "expr-type", f"'{s.effects}' is not a bundle of effects of a "
                             "row (such as ROW.effects)", "apply/effects")
                return None
            table = scope.tables[node.kind][node.column][1]
            key_code = bare(scope.typed(node.key, typed.ANY).code)
            reads = [node.key]
        # the other parameters the effects share (rules/effects.yaml `params`, after the
        # amount), given by the keys of the step named like them
        given = []
        params = dict(s.params)
        for prm in self._shared_params():
            value = params.get(prm.name)
            if value is None:
                given.append("None")
                continue
            v = self.expr(s, value, scope, prm.type, f"apply/{prm.name}")
            if v is None:
                return None
            given.append(bare(v.code))
            reads.append(v.node)
        for key in params:
            if key not in {p.name for p in self._shared_params()}:
                self.problem(s, "step-unknown-key", f"the effects take no '{key}'",
                             f"apply/{key}", typed.closest(str(key), [
                                 "effects", "choices", *[p.name for p in self._shared_params()]]))
        self._bundles_of(table)
        return BundleRef(table.removeprefix("_T"), key_code, ", ".join(given) or "None",
                         tuple(reads), table)

    def _shared_params(self) -> tuple[Param, ...]:
        """The parameters every effect takes after its amount (rules/effects.yaml `params`)."""
        for eid in self.effect_ids:
            proc = self.procs.get(eid)
            if proc is not None:
                return proc.params[1:]
        return ()

    def _bundles_of(self, table: str) -> None:
        name = table.removeprefix("_T")
        if name in self.bundles.tables:
            return
        values = self.table_values[table]
        choose: list[str] = []
        for bundle in values.values():
            for eff, _a in bundle:
                proc = self.procs.get(eff)
                for c in proc.choices if proc is not None else ():
                    if c.as_ not in choose:
                        choose.append(c.as_)
                if proc is not None:
                    for n, t in self.choice_types(proc).items():
                        self.field_types.setdefault(n, t)
        self.bundles.choices[name] = tuple(choose)
        keys: dict[Any, str] = {}
        for key, bundle in values.items():
            keys[key] = self._bundle(tuple(bundle), tuple(choose))
        self.bundles.tables[name] = keys

    def _checked_table(self, table: str, fields: tuple[str, ...]) -> str:
        """The entry of the rule set's `fx` whose functions check and carry out a move's
        choices for an apply step whose choices fill these move fields (`choices: {CHOICE:
        NAME}` renames some): the table's own when none is renamed, else an entry of its own
        (`TABLE:FIELD,…`), compiled once, whose refusals name each choice by the field the
        player fills (`this move does not choose second favor`, not `favor`)."""
        names = self.bundles.choices[table]
        if fields == names:
            return table
        entry = f"{table}:{','.join(fields)}"
        if entry not in self.bundles.tables:
            self.bundles.choices[entry] = names
            self.bundles.tables[entry] = {
                key: self._bundle(tuple(bundle), names, fields)
                for key, bundle in self.table_values[f"_T{table}"].items()}
        return entry

    def _bundle(self, bundle: tuple[tuple[str, int], ...], names: tuple[str, ...],
                fields: tuple[str, ...] | None = None) -> str:
        """The stem of a bundle's three functions (compiled the first time); `fields`: the
        move field each choice of `names` fills, which its refusals name (by default, the
        choice's own name)."""
        field_of = dict(zip(names, fields or names, strict=True))
        stem = "STEM__"
        choice_args = "".join(f", {typed.local_code(n)}: Any" for n in names)
        rows = ", ".join([typed.local_code(n) for n in names])
        row = f"({rows},)" if len(names) == 1 else f"({rows})"
        params = self._shared_params()
        shared = [typed.local_code(p.name) for p in params] or ["v__"]
        sig = ", ".join(f"{typed.local_code(p.name)}: {py_type(p.type, self.scope)}"
                        for p in params) or "v__: Any"
        given = ", ".join(shared)
        opts = [f"def _opts_{stem}(g: Game, seat: int, {sig}) -> list[tuple[Any, ...]]:"]
        why = [f"def _why_{stem}(g: Game, seat: int, {sig}{choice_args}"
               ") -> tuple[str, str] | None:"]
        run = [f"def _run_{stem}(g: Game, seat: int, {sig}{choice_args}) -> None:"]
        # the options: each choice from the first effect that makes it
        made: dict[str, str] = {}
        indent = 1
        own: list[str]
        for eff, amount in bundle:
            proc = self.procs.get(eff)
            if proc is None:
                continue
            own = [c.as_ for c in proc.choices]
            if any(n not in made for n in own):
                vars_ = [typed.local_code(n) for n in own]
                target = f"({vars_[0]},)" if len(vars_) == 1 else ", ".join(vars_)
                opts.append("    " * indent + f"for {target} in _opts_{self.name(eff)}"
                            f"(g, seat, {amount}, {given}):")
                indent += 1
                for n in own:
                    made[n] = eff
        for n in names:
            if n not in made:
                opts.append("    " * indent + f"{typed.local_code(n)} = None")
        test = []
        for eff, amount in bundle:
            proc = self.procs.get(eff)
            if proc is None:
                continue
            made_args = "".join(f", {typed.local_code(c.as_)}" for c in proc.choices)
            test.append(f"_why_{self.name(eff)}(g, seat, {amount}, {given}{made_args}) is None")
        if test:
            opts.append("    " * indent + f"if {' and '.join(test)}:")
            indent += 1
        opts.append("    " * indent + f"out.append({row if names else '()'})")
        opts.insert(1, "    out: list[tuple[Any, ...]] = []")
        opts.append("    return out")
        for n in names:
            if n not in made:
                why.append(f"    if {typed.local_code(n)} is not None:")
                why.append(f"        return _not_chosen({py_str(field_of[n])})")
        for eff, amount in bundle:
            proc = self.procs.get(eff)
            if proc is None:
                continue
            made_args = "".join(f", {typed.local_code(c.as_)}" for c in proc.choices)
            why.append(f"    why = _why_{self.name(eff)}(g, seat, {amount}, {given}{made_args})")
            why.append("    if why is not None:")
            why.append("        return why")
            made_ = " and ".join(f"{typed.local_code(c.as_)} is not None"
                                 for c in proc.choices)
            if made_:  # an effect whose choice the move does not make is left out
                run.append(f"    if {made_}:")
                run.append(f"        _run_{self.name(eff)}(g, seat, {amount}, {given}{made_args})")
            else:
                run.append(f"    _run_{self.name(eff)}(g, seat, {amount}, {given})")
        why.append("    return None")
        if len(run) == 1:
            run.append("    pass")
        code = "\n".join([*opts, *why, *run])
        found = self.bundles.by_code.get(code)
        if found is None:
            found = self.bundles.by_code[code] = f"_fx{len(self.bundles.by_code) + 1}"
            for lines in (opts, why, run):
                self.bundles.functions.append(_clean([x.replace("STEM__", found)
                                                      for x in lines]))
        return found

    # -- the checked run ----------------------------------------------------------------

    def _rule_code(self, s: StepBase, scope: Scope) -> str:
        """The rule a step's refusal names, as code: its `rule` (which may show a value, as
        `{row.column}`), or the action's."""
        assert self.action is not None
        if s.rule and "{" in s.rule:
            return self._reason(s, scope, s.rule)
        return py_str(s.rule or self.action.rule)

    def _play(self, steps: list[Step | Restore], scope: Scope, indent: int, out: list[str],
              bound: tuple[str, ...], tail: tuple[str, str] | None = None) -> None:
        """The checked run of `steps`; `tail` is the rule and words of the refusal of a
        choice the move makes and its way through the steps did not (by default, the
        action's)."""
        assert self.action is not None
        pad = "    " * indent
        rule = py_str(self.action.rule)
        i = 0
        while i < len(steps):
            s = steps[i]
            i += 1
            if isinstance(s, Restore):
                scope = scope.with_locals(**dict(s.names))
                continue
            if self._loop_refused(s):
                continue
            srule = self._rule_code(s, scope)
            match s:
                case Choose():
                    name = s.as_
                    var = typed.local_code(name)
                    # a name another branch gave a type to: the move's value, as any value
                    again = name in self.assigned
                    out.append(f"{pad}{var} = " + (f"_any(move.{name})" if again else
                                                   f"move.{name}"))
                    self.assigned.add(name)
                    why: list[str] = []
                    shown = scope.with_locals(**{name: Name(typed.ANY, ir.Local(name))})
                    inner = self._guard_why(s, Procedure(self.action.id, (), (s,),
                                                         self.action.rule), shown, why)
                    scope = inner.with_locals(**{name: inner.locals[name]}) \
                        if name in inner.locals else inner
                    for line in why:
                        out.append(pad + line[4:].replace("return (", "raise IllegalMove(", 1)
                                   if "return (" in line else pad + line[4:])
                    bound = (*bound, name)
                    continue
                case Require():
                    cond = self.expr(s, s.cond, scope, BOOL)
                    reason = self._reason(s, scope, s.reason or f"{s.cond} does not hold")
                    if cond is not None:
                        out.append(f"{pad}if {negate(cond, scope)}:")
                        out.append(f"{pad}    raise IllegalMove({srule}, {reason})")
                        scope = self._narrow(s, scope)
                    continue
                case If() if self.decides(s):
                    cond = self.expr(s, s.cond, scope, BOOL)
                    if cond is None:
                        continue
                    out.append(f"{pad}if {bare(cond.code)}:")
                    self._play([*s.then, self._restore(s, scope), *steps[i:]],
                               self._narrow(s, scope), indent + 1, out, bound, tail)
                    out.append(f"{pad}else:")
                    self._play([*s.orelse, *steps[i:]], scope, indent + 1, out, bound, tail)
                    return
                case Do() if self.decides(s):
                    self._play_do(s, steps[i:], scope, indent, out, bound, tail, srule)
                    return
                case Apply() if not unchosen(s):
                    got = self._bundle_table(s, scope)
                    if got is None:
                        continue
                    table, key, shared = got.table, got.key, got.shared
                    made = self._apply_names(s, table, bound)
                    choices = "".join(f", move.{n}" for n in made)
                    fx = f"g.rs.fx[{py_str(self._checked_table(table, tuple(made)))}][{key}]"
                    out.append(f"{pad}why = {fx}[1](g, seat, {shared}{choices})")
                    out.append(f"{pad}if why is not None:")
                    out.append(f"{pad}    raise IllegalMove({srule}, why[1])")
                    out.append(f"{pad}{fx}[2](g, seat, {shared}{choices})")
                    bound = (*bound, *made)
                    continue
                case (Gain() | Set() | Let() | Move() | Drop() | If() | ForEach() | Repeat()
                      | Do() | Raise() | Apply() | Shuffle() | New()):
                    scope = self._effect(s, scope, indent, out)
                case _:
                    assert_never(s)
        fields = ", ".join(py_str(f) for f in bound)
        refusal = rule if tail is None else f"{tail[0]}, {tail[1]}"
        out.append(f"{pad}_only_chosen(move, ({fields}{',' if len(bound) == 1 else ''}), "
                   f"{refusal})")

    def _play_do(self, s: Do, rest: list[Step | Restore], scope: Scope, indent: int,
                 out: list[str], bound: tuple[str, ...], tail: tuple[str, str] | None,
                 srule: str) -> None:
        """The checked run of a do step whose procedure chooses or refuses, then of the
        steps after it (`rest`)."""
        assert self.action is not None
        pad = "    " * indent
        rule = py_str(self.action.rule)
        cases = self._do_target(s, scope)
        dynamic = bool(cases) and cases[0][0] is not None
        if dynamic:
            var, code = self._do_var
            out.append(f"{pad}{var} = {code}")
        for k, (test, proc) in enumerate(cases):
            level = indent
            if dynamic:
                out.append(f"{pad}else:" if test is None else
                           f"{pad}{'if' if k == 0 else 'elif'} {test}:")
                level = indent + 1
            ipad = "    " * level
            if proc is None:  # nothing to do: a choice of the others is refused so
                words = self._reason(s, scope, s.none_reason) if s.none_reason else "None"
                self._play(rest, scope, level, out, bound, (srule, words))
                continue
            given = self._call_args(s, proc, scope)
            args = "" if given is None else arg_code(given)
            stem = self.name(proc.id)
            names = [c.as_ for c in proc.choices]
            choices = "".join(f", move.{n}" for n in names)
            out.append(f"{ipad}why = _why_{stem}(g, seat{args}{choices})")
            out.append(f"{ipad}if why is not None:")
            if s.reason:  # nothing at all can be done: the action is refused
                reason = self._reason(s, scope, s.reason)
                out.append(f"{ipad}    if not _opts_{stem}(g, seat{args}):")
                out.append(f"{ipad}        raise IllegalMove({rule}, {reason} + \": \" + "
                           "why[1])")
            out.append(f"{ipad}    raise IllegalMove(*why)")
            out.append(f"{ipad}_run_{stem}(g, seat{args}{choices})")
            self._play(rest, scope, level, out, (*bound, *names), tail)


def unchosen(s: Apply) -> bool:
    """Whether an apply step makes none of its effects' choices (`choices: false`)."""
    return s.choices is False


def _literal(value: Any) -> bool:
    """Whether a value is a constant the engine's tables can hold."""
    if isinstance(value, tuple | list):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, str | int)


def _member(cond: ir.Expr, name: str) -> bool:
    """Whether a condition is `name in X` (the local `name` an item of a list)."""
    return (isinstance(cond, ir.Compare) and cond.left == ir.Local(name)
            and len(cond.ops) == 1 and cond.ops[0][0] == "in")


def _only_in_moves(functions: list[list[str]], var: str) -> bool:
    """Whether the functions read `var` only to put it in the moves they make (their slots,
    where it is the value of its own field) or to pass it on to one another."""
    for lines in functions:
        for line in lines:
            if var not in line:
                continue
            rest = re.sub(rf"\b{var}: Any\b", "", line)
            if re.match(r"\s*_moves_\w+__k\d+\(", rest):
                rest = re.sub(rf"\b{var}\b", "", rest)
            if re.search(rf"\b{var}\b", rest):
                return False
    return True


@functools.lru_cache(maxsize=8192)
def _text_names(text: str) -> frozenset[str]:
    """Every name and attribute in one expression's text (a function of the text alone: the
    rule sets of a build read the same expressions)."""
    try:
        tree = parse_expr(text.strip())
    except SyntaxError:
        return frozenset(re.findall(r"[a-z_][a-z0-9_]*", text))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return frozenset(names)


def _names_in(s: Item) -> set[str]:
    """Every name and attribute in the expressions of one step (not its nested steps): its
    texts (the names it binds and the places it changes too; a procedure's or an event's id
    read as an expression, a superset)."""
    texts: list[Any]
    match s:
        case Gain() | Set():
            texts = [x for pair in s.places for x in pair]
        case Let():
            texts = [x for pair in s.names for x in pair]
        case Move():
            texts = [s.what, s.from_, s.to]
        case Drop() | Shuffle():
            texts = [s.place]
        case New():
            texts = [s.place, *(x for pair in s.with_ or () for x in pair)]
        case Require():
            texts = [s.cond]
        case Choose():
            leads = (s.leads.by, s.leads.where) if s.leads is not None else ()
            texts = [s.as_, s.source, s.where, s.min, s.max, s.up_to, *leads]
        case If():
            texts = [s.cond]
        case ForEach():
            texts = [s.var, s.source]
        case Repeat():
            texts = [s.count]
        case Do():
            texts = [s.proc, *(x for pair in s.with_ or () for x in pair)]
        case Raise():
            texts = [s.event, *(x for pair in s.with_ or () for x in pair)]
        case Apply():
            renamed = s.choices or ()
            texts = [s.effects, *(x for pair in (*s.params, *renamed) for x in pair)]
        case Restore():
            texts = [n for n, _known in s.names]
        case Call() | Applied():  # the procedure or the bundle, and what it is given
            texts = [s.proc if isinstance(s, Call) else None, *s.names]
            return _texts_names(texts).union(*(names_read(x) for x in s.given))
        case _:
            assert_never(s)
    return _texts_names(texts)


def _texts_names(texts: Iterable[Any]) -> set[str]:
    """Every name and attribute in these texts (each an expression; anything else, none)."""
    out: set[str] = set()
    for t in texts:
        if isinstance(t, str):
            out.update(_text_names(t))
    return out


def _clean(lines: list[str]) -> list[str]:
    from lisboa_rules.lang.steps import _tidy

    return _tidy(lines)


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
