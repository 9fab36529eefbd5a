"""Actions: what a move does, written in rules/ as steps, checked into the IR's `Action`.

An action's steps are those of a procedure (steps.py), but chooses, requires and the guards of
the procedures it does may come anywhere: each `choose` is one of the move's choices (a move
field named by its `as`), and the steps between two choices change the state the later ones
see. The checker (`ActionChecker`) turns an action into one sequence of IR items
(`ir/stmt.py`): a step that branches on what the move chooses (an if whose steps choose or
refuse, a procedure done or a bundle applied that chooses) ends its sequence and holds the
steps after it in each branch, checked in that branch's scope. A back end prints two things
from it (the Python engine's: `emit/engine/moves.py`): every move the action allows, and the
checked run of a move.

`apply: {effects: ROW.col, PARAM: EXPR}` carries out a bundle of effects of a row of the rules
(`row.effects`, `this.reward`; PARAM: the parameters the effects share after their amount).
`do: EXPR` with an expression (not a procedure's id) carries out the procedure the value names
(`do: action`, where `action` is a column `row.procedure`); a value that names no procedure does
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from lisboa_rules.core.limits import MAX_MOVES
from lisboa_rules.ir import cost
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.reads import columns, locals_named
from lisboa_rules.lang import typed
from lisboa_rules.lang.steps import Param, Procedure, StepChecker, at
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
from lisboa_rules.lang.typed import BOOL, Name, Scope


@dataclass(frozen=True)
class Action:
    """A kind of move: its id (the move's `kind`), the phase it is made in, its steps and the
    rule a refusal names by default."""

    id: str
    phase: str
    steps: tuple[Step, ...]
    rule: str
    path: tuple[str | int, ...] = ()


@dataclass(frozen=True)
class Restore:
    """The end of the narrowing of an if's condition: the steps after the if read these
    names as they were."""

    names: tuple[tuple[str, Name], ...]


class ActionChecker(StepChecker):
    """Checks actions against one rule set's scope (see the module's text); `table_values`
    are the rules' tables the steps may read (by name: id -> value), `effect_ids` the effects
    a bundle of a row may name."""

    def __init__(self, scope: Scope, procs: Mapping[str, Procedure],
                 hooks: Mapping[str, tuple[str, ...]],
                 table_values: Mapping[str, Mapping[Any, Any]] | None = None,
                 effect_ids: tuple[str, ...] = ()) -> None:
        super().__init__(scope, procs, hooks)
        self.table_values: Mapping[str, Mapping[Any, Any]] = table_values or {}
        self.effect_ids = effect_ids
        self.let_sources: dict[str, ir.Expr] = {}  # a local -> the value it was let to
        self.action: Action | None = None
        # the moves of one decision: the product of the bounds of the choices made so far on
        # the way through the action's items (ir/cost.py), and the choices refused for it
        self.moves = 1
        self.too_many: set[tuple[str | int, ...]] = set()

    # -- decisions ----------------------------------------------------------------------

    def decides(self, s: Step) -> bool:
        """Whether a step makes or checks a choice (so the steps before it matter to the
        moves listed)."""
        match s:
            case Choose() | Require():
                return True
            case Do():
                return any(self._guarded(c) for c in self._do_callees(s))
            case Apply():
                return self._apply_guarded(s)
            case If() | ForEach() | Repeat():
                then, orelse = branches(s)
                return any(self.decides(x) for x in (*then, *orelse))
            case Gain() | Set() | Let() | Move() | Drop() | Raise() | Shuffle() | New():
                return False
            case _:
                assert_never(s)

    def _do_callees(self, s: Do) -> list[str]:
        """The procedures a do step may carry out: the one it names, or any a table names."""
        if s.proc in self.procs:
            return [s.proc]
        return sorted(self._targets_all())

    def _targets_all(self) -> set[str]:
        """Every procedure some table of the rules names."""
        out = set()
        for values in self.table_values.values():
            for v in values.values():
                if isinstance(v, str) and v in self.procs:
                    out.add(v)
        return out

    def _loop_refused(self, s: Step) -> bool:
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

    def _tables_of(self, col: str) -> list[str]:
        """The tables of a column of every kind's rows that has it."""
        return [found[col][1] for found in self.scope.tables.values() if col in found]

    def _guarded(self, pid: str) -> bool:
        proc = self.procs.get(pid)
        return proc is not None and bool(proc.guard)

    # -- checking an action -------------------------------------------------------------

    def check_action(self, action: Action) -> S.Action:
        self.action = action
        self.unbound = set()
        self.declared = {}
        self.cost.env = {}
        self.moves = 1
        self.too_many = set()
        self.stream = None  # an action's steps draw from no stream: they cannot shuffle
        items = self._items(list(action.steps), self.scope, ())
        return S.Action(action.id, S.At(action.path, action.id), action.phase, action.rule,
                        items)

    def _rule_of(self, s: StepBase, scope: Scope) -> str | S.Words:
        """The rule a step's refusal names: its `rule` (which may show a value, as
        `{row.column}`), or the action's."""
        assert self.action is not None
        if s.rule and "{" in s.rule:
            return self._words(s, scope, s.rule, "rule")
        return s.rule or self.action.rule

    def _items(self, steps: list[Step | Restore], scope: Scope, bound: tuple[str, ...]
               ) -> tuple[S.Item, ...]:
        """The items of `steps` (`bound`: the move fields chosen before them)."""
        entry = self.moves  # each way through the items starts from the choices before them
        try:
            return self._items_of(steps, scope, bound)
        finally:
            self.moves = entry

    def _items_of(self, steps: list[Step | Restore], scope: Scope, bound: tuple[str, ...]
                  ) -> tuple[S.Item, ...]:
        out: list[S.Item] = []
        i = 0
        while i < len(steps):
            s = steps[i]
            i += 1
            if isinstance(s, Restore):
                scope = scope.with_locals(**dict(s.names))
                continue
            if self._loop_refused(s):
                continue
            rule = self._rule_of(s, scope)
            match s:
                case Choose():
                    name = s.as_
                    if name in bound or name in ("kind", "player"):
                        self.problem(s, "duplicate-id", f"the choice '{name}' is made twice by "
                                     "this action (or names a field every move has); name it "
                                     "otherwise", "choose/as")
                        continue
                    # its words may show the value chosen, whatever it is
                    shown = scope.with_locals(**{name: Name(typed.ANY, ir.Local(name))})
                    got, inner = self._choose(s, rule, scope, shown)
                    self._more_moves(s)
                    if got is None:
                        scope = shown
                        continue
                    out.append(got)
                    scope = inner
                    bound = (*bound, name)
                    continue
                case Require():
                    req = self._require(s, rule, scope)
                    if req is not None:
                        out.append(req)
                        scope = self._narrow(s, scope)
                    continue
                case If() if self.decides(s):
                    cond = self.expr(s, s.cond, scope, BOOL)
                    if cond is None:
                        continue
                    then = self._items([*s.then, self._restore(s, scope), *steps[i:]],
                                       self._narrow(s, scope), bound)
                    orelse = self._items([*s.orelse, self._restore(s, scope, True), *steps[i:]],
                                         self._narrow(s, scope, True), bound)
                    out.append(S.Branch(at(s), cond.node, then, orelse,
                                        (len(s.then), len(s.orelse))))
                    return tuple(out)
                case Do() if self.decides(s):
                    out.append(self._do_choose(s, steps[i:], scope, bound, rule))
                    return tuple(out)
                case Apply() if not unchosen(s):
                    bundle = self._bundle(s, scope, bound)
                    if bundle is None:
                        continue
                    rest = self._items(steps[i:], scope, (*bound, *bundle.fields))
                    out.append(S.ApplyChoose(at(s), bundle, rule, rest, self._apply_guarded(s)))
                    return tuple(out)
                case (Gain() | Set() | Let() | Move() | Drop() | If() | ForEach() | Repeat()
                      | Do() | Raise() | Apply() | Shuffle() | New()):
                    scope = self._effect(s, scope, out)  # type: ignore[arg-type]
        return tuple(out)

    def _more_moves(self, s: Choose) -> None:
        """A choice of the action multiplies the moves of its decision: over the limit
        (core/limits.py), a problem at the choice that passes it, with the product."""
        one = self.last_moves
        if one is None:
            return
        before = self.moves
        self.moves = min(before * one, cost.CAP)
        if one > MAX_MOVES or self.moves <= MAX_MOVES or s.path in self.too_many:
            return  # (a choice over the limit on its own was refused as such)
        self.too_many.add(s.path)
        shown = "more than 10**30" if self.moves >= cost.CAP else f"{self.moves:,}"
        self.problem(s, "cost-unbounded",
                     f"with the choices before it, this choice may make the action list "
                     f"{shown} moves ({before:,} ways to make those, times {one:,} for this "
                     f"one), over the limit of {MAX_MOVES:,} moves of one decision: choose "
                     "from shorter lists, or make the choices in separate moves")

    def _restore(self, s: If, scope: Scope, otherwise: bool = False) -> Restore:
        """A step that ends the narrowing of an if's condition (the steps after the if read
        the names as they were); `otherwise`: of its else steps."""
        names = typed.narrowed_else(s.cond) if otherwise else typed.narrowed(s.cond)
        return Restore(tuple((n, scope.locals[n]) for n in names if n in scope.locals))

    def _narrow(self, s: Require | If, scope: Scope, otherwise: bool = False) -> Scope:
        """The scope with the names the condition proves not None (`otherwise`: when it does
        not hold, in an if's else steps)."""
        return typed.narrowed_scope(scope, s.cond, otherwise)

    def _bound(self, name: str, t: typed.Typed, scope: Scope) -> None:
        if name not in scope.locals:  # what a new name reads, for the procedures it may name
            self.let_sources[name] = t.node

    def _distinct(self, keys: ir.Keys) -> bool:
        src = keys.source
        if not keys.is_table and isinstance(src, ir.Column):  # each row's list
            rows = self._column(src.kind, src.column)
            if rows is not None:
                from lisboa_rules.ir import const

                return all(isinstance(v, list | tuple) and const.distinct(tuple(v))
                           for v in rows.values())
        return super()._distinct(keys)

    def _column(self, kind: str, col: str) -> Mapping[Any, Any] | None:
        """The values of a column of a kind's rows, by id, if the checker was given them."""
        found = self.scope.tables.get(kind, {}).get(col)
        return None if found is None else self.table_values.get(found[1])

    # -- procedures done ----------------------------------------------------------------

    def _do(self, s: Do, scope: Scope) -> S.Stmt | None:
        if s.proc in self.procs:
            return super()._do(s, scope)
        found = self._do_target(s, scope)
        if found is None:
            return None
        value, cases = found
        runs = []
        for pid in cases:
            proc = self.procs[pid]
            given = self._given(s, proc, dict(s.with_ or ()), scope, "with")
            if given is None:
                continue
            runs.append((pid, S.Run(pid, tuple(v.node for v in given), len(proc.choices))))
        return S.DoValue(at(s), value, tuple(runs))

    def _do_target(self, s: Do, scope: Scope) -> tuple[ir.Expr, list[str]] | None:
        """The value a do step names its procedure by, and the procedures it may name; None
        when it names none that can be found (a problem reported)."""
        head = re.split(r"[.\[]", s.proc)[0]
        if "-" in s.proc or ("." not in s.proc and head not in scope.locals):
            # an id, not a value that holds one: a procedure that does not exist
            self.problem(s, "unknown-reference", f"unknown procedure {s.proc!r}", "do",
                         typed.closest(s.proc, sorted(self.procs)))
            return None
        t = self.expr(s, s.proc, scope, None, "do")
        if t is None:
            return None
        if t.type.name != "text":
            self.problem(s, "expr-type", f"'{s.proc}' is {typed.describe(t.type)}: do names a "
                         "procedure (its id, or a text that holds one)", "do")
            return None
        return t.node, sorted(self._candidates(t.node))

    def _do_choose(self, s: Do, rest: list[Step | Restore], scope: Scope,
                   bound: tuple[str, ...], rule: str | S.Words) -> S.DoChoose:
        """A do step whose procedure chooses or refuses, then the steps after it."""
        value: ir.Expr | None = None
        targets: list[str | None]
        if s.proc in self.procs:
            targets = [s.proc]
        else:
            found = self._do_target(s, scope)
            if found is None:
                targets = []
            else:
                value, pids = found
                targets = [*pids, None]
        cases = []
        for pid in targets:
            if pid is None:  # the value names no procedure: nothing is done
                cases.append(S.Case(None, None, (), self._items(rest, scope, bound)))
                continue
            proc = self.procs[pid]
            given = self._given(s, proc, dict(s.with_ or ()), scope, "with")
            names = tuple(c.as_ for c in proc.choices)
            twice = [n for n in names if n in bound]
            if twice:
                self.problem(s, "duplicate-id", f"'{proc.id}' makes the choice '{twice[0]}' "
                             "this action has made already; name one of them otherwise", "do")
            if given is None or twice:
                continue
            run = S.Run(pid, tuple(v.node for v in given), len(names))
            cases.append(S.Case(pid, run, names, self._items(rest, scope, (*bound, *names))))
        if not targets:
            return S.DoChoose(at(s), None, (S.Case(None, None, (), self._items(
                rest, scope, bound)),), rule, None, None)
        reason = self._words(s, scope, s.reason) if s.reason else None
        none_reason = (self._words(s, scope, s.none_reason, "none_reason") if s.none_reason
                       else None)
        return S.DoChoose(at(s), value, tuple(cases), rule, reason, none_reason)

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

    # -- bundles of effects -------------------------------------------------------------

    def _apply(self, s: Apply, scope: Scope) -> S.Stmt | None:
        bundle = self._bundle(s, scope, None)
        return None if bundle is None else S.Apply(at(s), bundle)

    def _bundle(self, s: Apply, scope: Scope, bound: tuple[str, ...] | None
                ) -> S.Bundle | None:
        """The bundles of effects an apply step carries out; `bound`: the move fields chosen
        before it, when the move makes its choices (else None)."""
        src = s.effects
        table: str | None
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
            table = None
            rows: tuple[tuple[Any, tuple[tuple[str, int], ...]], ...] = (
                (0, tuple((str(e), int(a)) for e, a in value.items())),)
            key: ir.Expr = ir.Lit(0)
            of: tuple[str, ...] = tuple(src.split("."))
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
            rows = tuple((k, tuple(v)) for k, v in self.table_values[table].items())
            key = node.key
            of = ()
        # the other parameters the effects share (rules/effects.yaml `params`, after the
        # amount), given by the keys of the step named like them
        shared: list[ir.Expr | None] = []
        params = dict(s.params)
        for prm in self._shared_params():
            value = params.get(prm.name)
            if value is None and prm.has_default:
                d = self.default(prm)
                if d is None:
                    return None
                shared.append(d.node)
                continue
            if value is None:
                shared.append(None)
                continue
            v = self.expr(s, value, scope, prm.type, f"apply/{prm.name}")
            if v is None:
                return None
            shared.append(v.node)
        for name in params:
            if name not in {p.name for p in self._shared_params()}:
                self.problem(s, "step-unknown-key", f"the effects take no '{name}'",
                             f"apply/{name}", typed.closest(str(name), [
                                 "effects", "choices", *[p.name for p in self._shared_params()]]))
        choices: list[str] = []
        for _key, bundle in rows:
            for eff, _a in bundle:
                proc = self.procs.get(eff)
                for c in proc.choices if proc is not None else ():
                    if c.as_ not in choices:
                        choices.append(c.as_)
        fields = tuple(choices)
        if bound is not None:
            fields = self._apply_names(s, tuple(choices), bound)
        return S.Bundle(table, rows, key, tuple(shared), tuple(choices), fields, of)

    def _shared_params(self) -> tuple[Param, ...]:
        """The parameters every effect takes after its amount (rules/effects.yaml `params`)."""
        for eid in self.effect_ids:
            proc = self.procs.get(eid)
            if proc is not None:
                return proc.params[1:]
        return ()

    def _apply_names(self, s: Apply, choices: tuple[str, ...], bound: tuple[str, ...]
                     ) -> tuple[str, ...]:
        """The move fields an apply step's choices fill: the choices of its effects, renamed
        by `choices: {CHOICE: NAME}`; a choice is made once per move."""
        renamed = dict(s.choices) if s.choices else {}
        names = tuple(renamed.get(n, n) for n in choices)
        for old in renamed:
            if old not in choices:
                self.problem(s, "step-unknown-key", f"the effects of '{s.effects}' "
                             f"make no choice '{old}'", f"apply/choices/{old}",
                             typed.closest(str(old), list(choices)))
        for n in names:
            if n in bound:
                self.problem(s, "duplicate-id", f"the choice '{n}' is made twice by this "
                             f"action; name this one otherwise: choices: {{{n}: NEW_NAME}}",
                             "apply")
        return names


def unchosen(s: Apply) -> bool:
    """Whether an apply step makes none of its effects' choices (`choices: false`)."""
    return s.choices is False
