"""The effect language: procedures written in rules/ as lists of typed steps.

A step is a mapping with one effect key and its own words (`text`), an optional `id` (so a
variant can change or insert steps) and `rule` (the rule a refusal names):

    gain: {PLACE: EXPR, ...}     add to a number in the state (clamped to its declared bounds;
                                 without a maximum, at 2**63 - 1)
    set: {PLACE: EXPR, ...}      put a value in the state
    let: {NAME: EXPR, ...}       name a value for the steps below
    move: {item|top|first: EXPR, from: PLACE, to: PLACE}
                                 move one item, or the N top (last) or first items of a list
    require: COND  reason: TEXT  refuse unless COND holds (the reason may show {EXPR}s)
    choose: {as: NAME, from: EXPR, where: COND, optional: true, min: N, max: EXPR}
                                 the player's choice, one of a list (or min..max of it)
    if: COND  then: [STEPS]  else: [STEPS]
    for_each: {as: NAME, in: EXPR}  do: [STEPS]
    repeat: EXPR  do: [STEPS]
    do: PROCEDURE  with: {PARAM: EXPR}    carry out another procedure
    drop: PLACE                  take an entry out of a table of the state
    raise: EVENT  (or {event: EVENT, with: {PARAM: EXPR}})
                                 carry out the hooks of an event (`hooks:` in rules/effects.yaml)
    shuffle: PLACE               shuffle a list of the state with the game's seeded stream of
                                 the procedure (one stream per procedure run, shared by all of
                                 its shuffles, seeded by the game's seed and the procedure's id)
    new: PLACE  with: {FIELD: EXPR}
                                 append a new player to a list of players: the fields given,
                                 the others at their declared defaults

Each kind of step is a frozen class of `tree.py` (`Gain`, `Set`, …, `New`; re-exported here
with `parse_steps`, `Procedure` and `StepProblem`), with typed fields for what its YAML holds,
read once by `parse_steps` (a value of the wrong shape is a located `step-shape` problem there).
`Step` is their union; the compiler matches on the classes, and each dispatch ends in
`assert_never`, so that a new kind no dispatch handles fails mypy.

A procedure's chooses and requires come first (its guard); its effects follow. The checker
(`StepChecker`) checks each step, its expressions by `typed.py` against the declared state, and
turns the procedure into the IR's statements (`ir/stmt.py`: a `Proc`), reporting every problem
on the way; a back end prints the IR (the Python engine's: `emit/engine/lower.py`, three
straight-line functions per procedure: the choices that pass the guard, why a given choice does
not, and the effects).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, assert_never

from lisboa_rules.core.limits import (
    INT64_MAX,
    INT64_MIN,
    MAX_MOVES,
    MAX_WORK,
    UNDECLARED_ITEMS,
    UNDECLARED_NUMBER,
)
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.ir import const, cost
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.lang import text as rtext
from lisboa_rules.lang import typed
from lisboa_rules.lang.tree import COMMON as COMMON
from lisboa_rules.lang.tree import KINDS as KINDS
from lisboa_rules.lang.tree import MAX_NESTING as MAX_NESTING
from lisboa_rules.lang.tree import STEP_CLASSES as STEP_CLASSES
from lisboa_rules.lang.tree import Apply as Apply
from lisboa_rules.lang.tree import Choose as Choose
from lisboa_rules.lang.tree import Do as Do
from lisboa_rules.lang.tree import Drop as Drop
from lisboa_rules.lang.tree import Expr as Expr
from lisboa_rules.lang.tree import ForEach as ForEach
from lisboa_rules.lang.tree import Gain as Gain
from lisboa_rules.lang.tree import If as If
from lisboa_rules.lang.tree import Leads as Leads
from lisboa_rules.lang.tree import Let as Let
from lisboa_rules.lang.tree import Move as Move
from lisboa_rules.lang.tree import New as New
from lisboa_rules.lang.tree import Param as Param
from lisboa_rules.lang.tree import Procedure as Procedure
from lisboa_rules.lang.tree import Raise as Raise
from lisboa_rules.lang.tree import Repeat as Repeat
from lisboa_rules.lang.tree import Require as Require
from lisboa_rules.lang.tree import Set as Set
from lisboa_rules.lang.tree import Shuffle as Shuffle
from lisboa_rules.lang.tree import Step as Step
from lisboa_rules.lang.tree import StepBase as StepBase
from lisboa_rules.lang.tree import StepProblem as StepProblem
from lisboa_rules.lang.tree import branches as branches
from lisboa_rules.lang.tree import parse_steps as parse_steps
from lisboa_rules.lang.typed import (
    BOOL,
    INT,
    TEXT,
    UNKNOWN_NAME,
    ExprError,
    Name,
    Scope,
    Typed,
    VType,
)

# --- checking ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Anchor(StepBase):
    """A place of the rules that is no step, where the step checker checks an expression or
    reports a problem (a row of rules/flow.yaml `phases`): always with the key it is at."""


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_STRAY_BRACE = re.compile(r"[{}][^{}]{0,20}")  # a brace left once the placeholders are out


def shows_choice(s: Choose) -> bool:
    """Whether a choose step's `reason` shows the value chosen (`card {card} is not in your
    hand`): such words cannot say what is wrong when no value was chosen at all."""
    reason = s.reason
    if reason is None:
        return False
    name = s.as_
    for m in _PLACEHOLDER.finditer(reason):
        try:
            tree = parse_expr(m.group(1).strip())
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree)):
            return True
    return False


def missing_choice(words: str) -> S.Words:
    """The refusal of a compulsory choice left empty, in two pieces: the fixed words and the
    words of what is missing (a kind's `text:` of rules/state.yaml, kept a piece of its own)."""
    return ("choose ", words)


def at(s: StepBase) -> S.At:
    """Where a step is, for the statements it becomes."""
    return S.At(s.path, s.id or s.kind)


class StepChecker:
    """Checks procedures against one rule set's scope and turns each into the IR (`check`);
    `hooks[event]` are the procedures an event runs. Every problem is kept in `problems`;
    a statement whose expression was refused is left out of the IR (a rule set with a
    problem is never printed)."""

    def __init__(self, scope: Scope, procs: Mapping[str, Procedure],
                 hooks: Mapping[str, tuple[str, ...]]) -> None:
        self.scope = scope
        self.procs = procs
        self.hooks = hooks
        self.problems: list[StepProblem] = []
        # names a step failed to bind (its expression was refused): their uses are not reported
        # again as unknown names, the first error says what is wrong
        self.unbound: set[str] = set()
        self.stream: str | None = None  # the procedure whose seeded stream shuffles draw from
        # the type each name a let or a loop binds has where first bound: one name keeps one
        # type in a procedure (a back end holds it in one variable of its function)
        self.declared: dict[str, VType] = {}
        # what each let of the procedure bound a name to, with the let and its key (and each
        # item of a list written in the rules that a loop goes through or a choice is made
        # from): an id written there is checked where the name is set into a place of a kind
        self.let_values: dict[str, list[tuple[StepBase, str, ir.Expr]]] = {}
        # the lets whose id was refused already (one error for a name set into two places)
        self.let_refused: set[tuple[int, str, int]] = set()
        self.let_visiting: set[tuple[int, str, int]] = set()
        # the bounds of cost (ir/cost.py): the declared bounds and sizes of the state, and
        # what the steps so far bound each local to
        self.cost = cost.Context(
            {f: (n.lo, n.hi) for names in (scope.player, scope.game) for n in names.values()
             if (f := n.field) is not None}, scope.items)
        self.last_moves: int | None = None  # the bound of the last choice checked

    # -- public -------------------------------------------------------------------------

    def check(self, proc: Procedure) -> S.Proc:
        self.unbound = set()
        self.declared = {p.name: p.type for p in proc.params}
        self.let_values = {}
        self.let_refused = set()
        self.cost.env = {}
        # the params and the choices of a procedure are the arguments of its functions: one
        # name twice is refused
        seen = {p.name for p in proc.params}
        for c in proc.choices:
            if c.as_ in seen:
                what = "a param" if c.as_ in {p.name for p in proc.params} else \
                    "an earlier choice"
                self.problems.append(StepProblem(
                    "duplicate-id", f"'{proc.id}' has {what} named '{c.as_}' already; name this "
                    "choice otherwise", (*c.path, "choose", "as")))
            seen.add(c.as_)
        for p in proc.params:
            if p.has_default:  # checked once, where it is declared
                self.default(p, report=True)
        scope = self.scope.with_locals(**{p.name: Name(p.type, ir.Local(p.name))
                                          for p in proc.params})
        guard: list[S.GuardStmt] = []
        choices: list[S.Param] = []
        for s in proc.guard:
            match s:
                case Choose():
                    got, scope = self._choose(s, self._rule(s, proc), scope, scope)
                    if got is not None:
                        guard.append(got)
                        choices.append(S.Param(got.name, got.type))
                case Let():
                    let, scope = self._let(s, scope)
                    if self._bounded(s, self.cost.stmt_work(let)):
                        guard.append(let)
                case Require():
                    req = self._require(s, self._rule(s, proc), scope)
                    if req is not None and self._bounded(s, self.cost.work(req.cond)):
                        guard.append(req)
                case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                      | Raise() | Apply() | Shuffle() | New()):
                    pass  # never in a guard
                case _:
                    assert_never(s)
        self.stream = proc.id
        effects: list[S.Stmt] = []
        for s in proc.effects:
            if isinstance(s, Require | Choose):
                self.problem(s, "step-order", f"a {s.kind} step comes before the effects of its "
                             "procedure (its guard); move it up, or split the procedure")
                self._check_misplaced(s, scope)
                continue
            scope = self._effect(s, scope, effects)
        return S.Proc(proc.id, S.At(proc.path, proc.id),
                      tuple(S.Param(p.name, p.type) for p in proc.params), tuple(choices),
                      tuple(guard), tuple(effects),
                      any(isinstance(x, Shuffle) for s in proc.effects for x in s.walk()))

    def default(self, prm: Param, report: bool = False) -> Typed | None:
        """The value a parameter's `default:` gives a call that leaves it out: an expression
        over the state and the rules (no name of the caller), of the parameter's type."""
        try:
            return typed.check(prm.default, self.scope, prm.type)
        except ExprError as exc:
            if report:
                self.problems.append(StepProblem(
                    exc.code, f"the default of parameter '{prm.name}': {exc.message} "
                    f"(in '{prm.default}')", prm.default_path, exc.suggestion))
            return None

    # -- problems -----------------------------------------------------------------------

    def problem(self, s: StepBase, code: str, message: str, key: str | None = None,
                suggestion: str | None = None, bounds_of: str | None = None) -> None:
        path = (*s.path, s.kind) if key is None else (*s.path, *key.split("/"))
        self.problems.append(StepProblem(code, message, path, suggestion, bounds_of=bounds_of))

    def follows_unbound(self, exc: ExprError) -> bool:
        """Whether `exc` is an unknown name that a step of this procedure failed to bind: the
        refused binding was reported, its uses are not."""
        if not self.unbound:
            return False
        return exc.subject[:1] == (UNKNOWN_NAME,) and exc.subject[1] in self.unbound

    def _past_unbound(self, source: Any, scope: Scope, want: VType | None) -> ExprError | None:
        """An unknown name of `source` that is none a step failed to bind (`reiss` in
        `x >= 0 and reiss >= 0`, x refused): checked again with those bound to a number, a
        truth value, a text or anything; any other error is left unsaid, it may only follow
        from the refused binding."""
        for t in (INT, BOOL, TEXT, typed.ANY):
            loose = scope.with_locals(**{n: Name(t, ir.Local(n))
                                         for n in sorted(self.unbound)})
            try:
                typed.check(source, loose, want)
            except ExprError as exc:
                if exc.subject[:1] == (UNKNOWN_NAME,) and exc.subject[1] not in self.unbound:
                    return exc
                continue
            return None
        return None

    def expr(self, s: StepBase, source: Any, scope: Scope, want: VType | None,
             key: str | None = None) -> Typed | None:
        try:
            return typed.check(source, scope, want)
        except ExprError as exc:
            if self.follows_unbound(exc):
                past = self._past_unbound(source, scope, want)  # another name may be unknown
                if past is None:
                    return None
                exc = past
            self.report(s, exc, source, key)
            return None

    def report(self, s: StepBase, exc: ExprError, source: Any, key: str | None) -> None:
        """The problem of an expression of a step (see model/procs.py's, which keeps where
        in its text)."""
        self.problems.append(StepProblem(exc.code, f"{exc.message} (in '{source}')",
                                         (*s.path, *(key or s.kind).split("/")),
                                         exc.suggestion, follows=exc.follows,
                                         subject=exc.subject))

    # -- the guard ----------------------------------------------------------------------

    def _rule(self, s: StepBase, proc: Procedure) -> str:
        return s.rule or proc.rule

    def _require(self, s: Require, rule: str | S.Words, scope: Scope) -> S.Require | None:
        cond = self.expr(s, s.cond, scope, BOOL)
        reason = self._words(s, scope, s.reason or f"{s.cond} does not hold")
        if cond is None:
            return None
        return S.Require(at(s), cond.node, rule, reason)

    def _choose(self, s: Choose, rule: str | S.Words, scope: Scope, shown: Scope
                ) -> tuple[S.Choose | None, Scope]:
        """A choose step and the scope with the chosen name bound (`shown`: the scope its
        words are checked in)."""
        self.last_moves = None
        name = s.as_
        src = self.expr(s, s.source, scope, None, "choose/from")
        if src is None:
            self.unbound.add(name)
            return None, scope
        if src.type.name not in ("list", "map"):
            self.problem(s, "expr-type", f"'{s.source}' is {typed.describe(src.type)}; "
                         "a choice is made from a list", "choose/from")
            return None, scope
        item = src.type.args[0]
        if item.name == "player":  # a move holds ids, numbers and texts (its JSON), no player
            self.problem(s, "expr-type", f"'{s.source}' is {typed.describe(src.type)}; a move "
                         "chooses a seat, not a player (choose from range(len(game.players)) "
                         "and read game.players[seat])", "choose/from")
            return None, scope
        if not s.several and s.leads is None:  # one item
            where = None
            if s.where is not None:
                inner = scope.with_locals(it=Name(item, ir.Local(name)))
                c = self.expr(s, s.where, inner, BOOL, "choose/where")
                if c is None:
                    return None, scope
                where = c.node
            keys = scope.keys(src)
            t = VType(item.name, item.args, s.optional, item.full)
            reason = self._words(s, shown, s.reason or f"that {name} is not one to choose")
            missing = None
            if not s.optional and shows_choice(s):  # no value: its words would show None
                missing = missing_choice(scope.kind_words.get(item.name,
                                                              name.replace("_", " ")))
            one = S.OneOf(keys, self._distinct(keys), where)
            self._takes_each(name, s, "choose/from", src.node)
            self._few_moves(s, one)  # (kept, over the limit or not: it is reported once)
            return (S.Choose(at(s), name, t, s.optional, one, rule, reason, missing),
                    scope.with_locals(**{name: Name(t, ir.Local(name))}))
        several = self._several(s, src, item, scope)
        if several is None:
            return None, scope
        t = typed.list_of(item)
        if s.optional:
            t = VType(t.name, t.args, True, t.full)
        reason = self._words(s, shown, s.reason or f"that {name} is not one to choose")
        if s.count_reason:
            several = replace(several, count_reason=self._words(s, shown, s.count_reason,
                                                                  "count_reason"))
        self._few_moves(s, several)
        return (S.Choose(at(s), name, t, s.optional, several, rule, reason),
                scope.with_locals(**{name: Name(t, ir.Local(name))}))

    def _few_moves(self, s: Choose, of: S.OneOf | S.Several) -> bool:
        """Whether a choice lists few enough moves (core/limits.py), and the work of its
        conditions over its items is bounded; else a problem at the step, with the bound
        computed. The chosen name's bound is kept for the steps after it."""
        got = self.cost.moves(of)
        self.last_moves = None if got is None else got[0]
        if isinstance(of, S.Several) and got is not None:
            self.cost.env[s.as_] = cost.Bound(size=got[2])
        else:
            self.cost.env.pop(s.as_, None)
        if got is not None and got[0] > MAX_MOVES:
            moves, n, k = got
            shown = "more than 10**30" if moves >= cost.CAP else f"{moves:,}"
            what = (f"one of {n:,} items" if isinstance(of, S.OneOf)
                    else f"a set of up to {k:,} of {n:,} items, the sum of C({n:,}, i)")
            self.problem(s, "cost-unbounded",
                         f"this choice may list {shown} moves ({what}), over the limit of "
                         f"{MAX_MOVES:,} moves of one decision: choose fewer items (a "
                         "smaller up_to or max), or from a shorter list (a declared max_items "
                         "in rules/state.yaml)")
            return False
        source = of.keys if isinstance(of, S.OneOf) else of.source
        work = self.cost.work(source)
        if of.where is not None:
            work = work + self.cost.times(self.cost.work(of.where), source)
        return self._bounded(s, work)

    def _several(self, s: Choose, src: Typed, item: VType, scope: Scope) -> S.Several | None:
        where = None
        if s.where is not None:
            inner = scope.with_locals(it=Name(item, ir.Local("it")))
            cond = self.expr(s, s.where, inner, BOOL, "choose/where")
            if cond is None:
                return None
            where = cond.node
        leads_by = leads_where = None
        if s.up_to is not None:  # any set of at most N items, in counting order
            hi = self.expr(s, s.up_to, scope, INT, "choose/up_to")
            if hi is None:
                return None
            lo = typed.constant(0)
            if s.leads is not None:
                inner = scope.with_locals(it=Name(item, ir.Local("it")))
                by = self.expr(s, s.leads.by, inner, None, "choose/leads/by")
                if by is None:
                    return None
                leads_by = by.node
                if s.leads.where is not None:
                    lw = self.expr(s, s.leads.where, inner, BOOL, "choose/leads/where")
                    if lw is None:
                        return None
                    leads_where = lw.node
        elif s.leads is not None:
            self.problem(s, "step-shape", "leads: is a part of a choice of several "
                         "(choose: {as: NAME, from: EXPR, up_to: N, leads: {by: EXPR}})",
                         "choose/leads")
            return None
        else:
            got_lo = self.expr(s, 1 if s.min is None else s.min, scope, INT, "choose/min")
            got_hi = self.expr(s, s.max if s.max is not None else 1 if s.min is None else s.min,
                               scope, INT, "choose/max")
            if got_lo is None or got_hi is None:
                return None
            lo, hi = got_lo, got_hi
        return S.Several(src.node, where, lo.node, hi.node, s.up_to is not None, leads_by,
                         leads_where, s.count_rule or "")

    def _distinct(self, keys: ir.Keys) -> bool:
        """Whether going through `keys` gives each item once (a table's keys, a `range`, a
        constant list without repeats), so that a choice from it goes through it as it is."""
        if keys.is_table:
            return True
        if isinstance(keys.source, ir.Call) and keys.source.fn == "range":
            return True
        return const.distinct(const.sequence(keys))

    def _words(self, s: StepBase, scope: Scope, text: Any, key: str = "reason") -> S.Words:
        """Words that may show values (`{EXPR}`): the step's own words, a value of the rules
        data shown as its text (a piece of its own: the code's shape never depends on the
        words of the data), and values shown as the state has them. A brace outside a
        placeholder (`{price and ...`, `}`, `{{`) is refused: it would reach the player as
        it is written."""
        if not isinstance(text, str):
            return (str(text),)
        stray = _STRAY_BRACE.search(_PLACEHOLDER.sub("", text))
        if stray is not None:
            self.problem(s, "unknown-placeholder",
                         f"malformed placeholder {stray.group(0)!r} in the words {text!r}: a "
                         "value is shown as {EXPR}, and a brace opens or closes one", key)
        parts: list[str | S.Shown] = []
        pos = 0
        for m in _PLACEHOLDER.finditer(text):
            parts.append(text[pos:m.start()])
            pos = m.end()
            source, bar, term = m.group(1).partition("|")
            unit = self._unit(s, term, key) if bar else None
            if bar and unit is None:
                parts.append(m.group(0))
                continue
            t = self.expr(s, source, scope, INT if unit is not None else None, key)
            if t is None:
                parts.append(m.group(0))
                continue
            try:
                value = const.scalar(t.node)
            except const.NotConstant:
                parts.append(S.Shown(t.node, False))
                if unit is not None:  # a number and its term, singular for one
                    parts.append(" ")
                    parts.append(S.Shown(ir.Cond(ir.Compare(t.node, (("==", ir.Lit(1)),)),
                                                 ir.Lit(unit[0]), ir.Lit(unit[1])), True))
            else:
                shown = str(value) if unit is None else \
                    f"{value} {unit[0] if value == 1 else unit[1]}"
                parts.append(S.Shown(ir.Lit(shown), True))
        parts.append(text[pos:])
        merged: list[str | S.Shown] = []
        for x in parts:  # adjacent words become one piece
            if isinstance(x, str) and merged and isinstance(merged[-1], str):
                merged[-1] = merged[-1] + x
            else:
                merged.append(x)
        return tuple(x for x in merged if not (isinstance(x, str) and not x))

    def _unit(self, s: StepBase, term: str, key: str) -> tuple[str, str] | None:
        """The (singular, plural) words of a term of the game (`game.terms`: `money` and
        `money_one`) that `{EXPR|TERM}` shows a number in; None, with a problem, for a term the
        game does not have."""
        try:
            terms = self.scope.data(("game", "terms")) if self.scope.data is not None else {}
        except KeyError:
            terms = {}
        units = rtext.unit_filters(terms)
        if term in units:
            return units[term]
        self.problem(s, "unknown-placeholder", f"unknown filter '{term}': a value shown in "
                     "words takes the term it counts in (one of: "
                     f"{', '.join(sorted(units)) or 'none'})", key,
                     typed.closest(term, sorted(units)))
        return None

    def _check_misplaced(self, s: Require | Choose, scope: Scope) -> None:
        """A require or choose out of place is still checked, so that all its problems come out
        in one run."""
        if isinstance(s, Require):
            self.expr(s, s.cond, scope, BOOL)
        else:
            self._choose(s, "", scope, scope)

    # -- effects ------------------------------------------------------------------------

    def _let(self, s: Let, scope: Scope) -> tuple[S.Let, Scope]:
        binds: list[S.Bind] = []
        for name, source in s.names:
            t = self.expr(s, source, scope, None, f"let/{name}")
            if t is None:
                self.unbound.add(str(name))
                continue
            if self._declare(s, str(name), t.type, f"let/{name}"):
                binds.append(S.Bind(str(name), t.node, t.type))
                self.let_values.setdefault(str(name), []).append((s, f"let/{name}", t.node))
                self._bound(str(name), t, scope)
            scope = scope.with_locals(**{str(name): Name(t.type, ir.Local(str(name)))})
        return S.Let(at(s), tuple(binds)), scope

    def _takes_each(self, name: str, s: StepBase, key: str, source: ir.Expr) -> None:
        """`name` takes each item of `source` in turn (a loop, a choice): of a list written
        in the rules, each is a value it takes (see `let_values`)."""
        if isinstance(source, ir.ListOf):
            for item in source.items:
                self.let_values.setdefault(name, []).append((s, key, item))

    def _bound(self, name: str, t: Typed, scope: Scope) -> None:
        """A let gave `name` the value `t` (`scope`: the names before)."""

    def _declare(self, s: StepBase, name: str, t: VType, key: str) -> bool:
        """A let or a loop binds `name` to a value of type `t`: refused (`expr-type`) when the
        procedure bound it to a value of another type before (a value that may be None may
        follow one that may be None, of the same kind)."""
        first = self.declared.get(name)
        if first is None:
            self.declared[name] = t
            return True
        if _same_kind(first, t) and (first.optional or not t.optional):
            return True
        self.problem(s, "expr-type", f"'{name}' is {typed.describe(first)} where it is first "
                     f"named, and {typed.describe(t)} here: a name keeps one type in a "
                     "procedure; name this value otherwise", key)
        return False  # (the steps after it read the name as this value: one error, not more)

    def _place(self, s: StepBase, target: Expr, scope: Scope, key: str) -> S.Place | None:
        t = self.expr(s, target, scope, None, key)
        if t is None:
            return None
        if t.place is None:
            self.problem(s, "step-target", f"'{target}' is not a field of the state (or an entry "
                         "of one) that a step can change", key)
            return None
        most = (scope.max_items.get(t.place.field)
                if t.place.field is not None and t.type.name == "list" else None)
        return S.Place(t.node, t.type, t.place.lo, t.place.hi, t.place.field, most)

    def _block(self, steps: tuple[Step, ...], scope: Scope) -> tuple[S.Stmt, ...]:
        out: list[S.Stmt] = []
        for s in steps:
            if isinstance(s, Require | Choose):
                self.problem(s, "step-order", f"a {s.kind} step belongs to the guard at the top "
                             "of its procedure, not inside an if or a loop")
                self._check_misplaced(s, scope)
                continue
            scope = self._effect(s, scope, out)
        return tuple(out)

    def _effect(self, s: Step, scope: Scope, out: list[S.Stmt]) -> Scope:
        """An effect step checked into `out`, with its bound of work (ir/cost.py): a step
        over the limit is refused here, and left out of the IR, so that the steps around it
        are not refused for it again."""
        first = len(out)
        scope = self._effect_of(s, scope, out)
        for stmt in out[first:]:
            if not self._bounded(s, self.cost.stmt_work(stmt)):
                del out[first:]
                break
        return scope

    def _bounded(self, s: StepBase, work: cost.Work) -> bool:
        """Whether one run of a step does work within the limit (core/limits.py); else a
        problem at the step, with the bound computed."""
        if work.count <= MAX_WORK:
            return True
        least = "at least " if work.partial else ""
        shown = "more than 10**30" if work.count >= cost.CAP else f"{work.count:,}"
        taken = ("; a number with no bound above, such as a param, counted as 1"
                 if work.partial else "")
        taken += (f"; a number of the state with no declared max counts as at most "
                  f"{UNDECLARED_NUMBER:,}, a list with no max_items as {UNDECLARED_ITEMS:,} "
                  "items")
        self.problem(s, "cost-unbounded",
                     f"one run of this step may do {least}{shown} units of work (the items of "
                     "its loops, repeats, ranges and comprehensions, multiplied through the "
                     f"steps inside it{taken}), over the limit of {MAX_WORK:,}: bound it with a "
                     "smaller count or range, a list with a declared max_items "
                     "(rules/state.yaml), or fewer loops inside one another")
        return False

    def _effect_of(self, s: Step, scope: Scope, out: list[S.Stmt]) -> Scope:
        match s:
            case Let():
                if not s.names:
                    self._names_nothing(s)
                    return scope
                let, scope = self._let(s, scope)
                out.append(let)
            case Gain() | Set():
                if not s.places:
                    self._names_nothing(s)
                    return scope
                out.append(S.Change(at(s), self._change(s, scope)))
            case Move():
                got = self._move(s, scope)
                if got is not None:
                    out.append(got)
            case If():
                cond = self.expr(s, s.cond, scope, BOOL)
                # the branches are checked when the condition is refused too: their own
                # problems are said in the same run (`if: x is None`: x is set in the else)
                yes = self._block(s.then, typed.narrowed_scope(scope, s.cond))
                no = self._block(s.orelse, typed.narrowed_scope(scope, s.cond, True))
                if cond is None:
                    return scope
                out.append(S.If(at(s), cond.node, yes, no))
            case ForEach():
                src = self.expr(s, s.source, scope, None, "for_each/in")
                if src is None:
                    return scope
                if src.type.name not in ("list", "map"):
                    self.problem(s, "expr-type", f"'{s.source}' is not a list", "for_each/in")
                    return scope
                over: ir.Expr = scope.keys(src) if src.type.name == "map" else src.node
                self._declare(s, s.var, src.type.args[0], "for_each/as")
                self._takes_each(s.var, s, "for_each/in", src.node)
                inner = scope.with_locals(**{s.var: Name(src.type.args[0], ir.Local(s.var))})
                # a list of the state is gone through as it was: the steps may change it
                out.append(S.ForEach(at(s), s.var, over,
                                     src.type.name == "list" and src.place is not None,
                                     self._block(s.body, inner)))
            case Repeat():
                n = self.expr(s, s.count, scope, INT)
                if n is None:
                    return scope
                out.append(S.Repeat(at(s), n.node, self._block(s.body, scope)))
            case Do():
                got_do = self._do(s, scope)
                if got_do is not None:
                    out.append(got_do)
            case Raise():
                given = dict(s.with_ or ())
                hooks = self.hooks.get(s.event, ())
                runs = []
                for hook in hooks:
                    values = self._given(s, self.procs[hook], given, scope, "raise/with")
                    if values is not None:
                        runs.append(S.Run(hook, tuple(v.node for v in values)))
                if not hooks:
                    for name, source in given.items():  # checked all the same
                        self.expr(s, source, scope, None, f"raise/with/{name}")
                out.append(S.Raise(at(s), s.event, tuple(runs)))
            case Drop():
                place = self._place(s, s.place, scope, "drop")
                if place is None:
                    return scope
                node = place.node
                if not isinstance(node, ir.Get | ir.Index):
                    self.problem(s, "step-target", f"'{s.place}' is not an entry of a table",
                                 "drop")
                    return scope
                if isinstance(node, ir.Index):  # a list's item, or a table that holds every key
                    self.problem(s, "step-target", f"'{s.place}' is an entry of a table that "
                                 "holds every key (declared `full`) or an item of a list: it "
                                 "cannot be dropped (set it, or move the item)", "drop")
                    return scope
                out.append(S.Drop(at(s), node.base, node.key))
            case Shuffle():
                got_sh = self._shuffle(s, scope)
                if got_sh is not None:
                    out.append(got_sh)
            case New():
                got_new = self._new(s, scope)
                if got_new is not None:
                    out.append(got_new)
            case Apply():
                got_apply = self._apply(s, scope)
                if got_apply is not None:
                    out.append(got_apply)
            case Require() | Choose():
                self.problem(s, "step-order", f"a {s.kind} step cannot stand among effects")
            case _:
                assert_never(s)
        return scope

    def _names_nothing(self, s: Let | Gain | Set) -> None:
        # it would be a statement that does nothing at all
        self.problem(s, "step-shape", f"this {s.kind} names nothing; write "
                     f"{s.kind}: {{{'NAME' if isinstance(s, Let) else 'PLACE'}: "
                     "EXPR}, or drop the step")

    def _apply(self, s: Apply, scope: Scope) -> S.Stmt | None:
        """An apply step among a procedure's effects: refused (only an action's steps apply
        the effects of a row)."""
        self.problem(s, "step-order", f"a {s.kind} step cannot stand among effects")
        return None

    def _change(self, s: Gain | Set, scope: Scope) -> tuple[S.Gain | S.Assign, ...]:
        """A gain or a set: each place and its value, in the order written."""
        out: list[S.Gain | S.Assign] = []
        for target, source in s.places:
            place = self._place(s, target, scope, f"{s.kind}/{target}")
            if place is None:
                continue
            want = INT if isinstance(s, Gain) else place.type
            value = self.expr(s, source, scope, want, f"{s.kind}/{target}")
            if value is None:
                continue
            if isinstance(s, Set):
                t = place.type
                # a number of the state set from a computed value stays within its declared
                # bounds, as a gain does, and within what a save holds (64 bits): the engine
                # never makes a state that its own `loads` refuses
                written = const.integer(value.node)
                clamp = (t.name == "int" and not t.optional and place.field is not None
                         and written is None)
                if written is not None and t.name == "int" and not self._fits(
                        s, place, written, f"{s.kind}/{target}"):
                    continue
                if not self._one_of_its_kind(s, t, value.node, scope, f"{s.kind}/{target}"):
                    continue
                out.append(S.Assign(place, value.node, clamp, (s.kind, str(target))))
                continue
            if not typed.compatible(place.type, INT, scope.int_kinds):
                self.problem(s, "expr-type", f"'{target}' is {typed.describe(place.type)}; "
                             "gain adds to a number", f"gain/{target}")
                continue
            out.append(S.Gain(place, value.node, place.lo is not None and not _non_negative(source),
                              not _non_positive(source), (s.kind, str(target))))
        return tuple(out)

    def _one_of_its_kind(self, s: StepBase, t: VType, node: ir.Expr, scope: Scope,
                         key: str) -> bool:
        """Whether an id written in the rules (a text) set into a place of a kind is one of
        that kind's ids; else a problem, where it is written (the engine would make a state
        its own `loads` refuses: a value of the kind that is none of its ids)."""
        if isinstance(node, ir.Cond):  # either branch may be the value set
            fits = [self._one_of_its_kind(s, t, b, scope, key)  # both said, not the first
                    for b in (node.then, node.orelse)]
            return all(fits)
        if isinstance(node, ir.Local):  # a name a let bound: each value it was given there
            fits = []
            for let, let_key, value in self.let_values.get(node.name, ()):
                seen = (id(let), let_key, id(value))
                if seen in self.let_refused:
                    fits.append(False)
                    continue
                if seen in self.let_visiting:  # `let x = x if c else ...`: its values so far
                    continue
                self.let_visiting.add(seen)
                try:
                    fits.append(self._one_of_its_kind(let, t, value, scope, let_key))
                finally:
                    self.let_visiting.discard(seen)
                if not fits[-1]:
                    self.let_refused.add(seen)
            return all(fits)
        found = typed.unknown_id(scope, t, node)
        if found is None:
            return True
        self.problem(s, "unknown-reference", found[0], key, suggestion=found[1])
        return False

    def _fits(self, s: StepBase, place: S.Place, value: int, key: str) -> bool:
        """Whether a number written in the rules fits the place it is set in: within its
        declared bounds and what a save holds (64 bits); else a problem, where it is written
        (the engine would make a state its own `loads` refuses)."""
        lo = place.lo if place.lo is not None else INT64_MIN
        hi = place.hi if place.hi is not None else INT64_MAX
        if lo <= value <= hi:
            return True
        self.problem(s, "value-out-of-range", f"{value} is outside what this place holds "
                     f"({lo} to {hi}: its declared bounds, and a save's 64 bits)", key,
                     bounds_of=place.field)
        return False

    def _shuffle(self, s: Shuffle, scope: Scope) -> S.Shuffle | None:
        place = self._place(s, s.place, scope, "shuffle")
        if place is None:
            return None
        if place.type.name != "list":
            self.problem(s, "expr-type", f"'{s.place}' is {typed.describe(place.type)}; a shuffle "
                         "shuffles a list", "shuffle")
            return None
        if self.stream is None:
            self.problem(s, "step-order", "a shuffle draws from the seeded stream of a procedure "
                         "of rules/; an action's steps cannot shuffle (do a procedure that does)")
            return None
        return S.Shuffle(at(s), place, self.stream)

    def _new(self, s: New, scope: Scope) -> S.New | None:
        if tuple(s.path[:2]) != SETUP:
            self.problem(s, "step-order", "a new player is made in the setup only "
                         "(rules/flow.yaml `setup:`): once a game starts its players are "
                         "fixed, and every state keeps their number", "new")
            return None
        place = self._place(s, s.place, scope, "new")
        if place is None:
            return None
        if place.type.name != "list" or place.type.args[0].name != "player":
            self.problem(s, "expr-type", f"'{s.place}' is {typed.describe(place.type)}; a new "
                         "player is added to a list of players", "new")
            return None
        given = dict(s.with_ or ())
        fields = []
        types = []
        for name, source in given.items():
            f = scope.player.get(str(name))
            if f is None:
                self.problem(s, "unknown-name", f"a player has no field '{name}'", f"with/{name}",
                             scope.suggest(str(name), list(scope.player)))
                continue
            v = self.expr(s, source, scope, f.type, f"with/{name}")
            if v is not None and self._one_of_its_kind(s, f.type, v.node, scope,
                                                       f"with/{name}"):
                fields.append((str(name), v.node))
                types.append(f.type)
        missing = sorted(scope.required - {str(k) for k in given})
        if missing:
            self.problem(s, "step-missing", "a new player needs "
                         + ", ".join(f"'{m}'" for m in missing) + " (fields with no default)",
                         "new")
            return None
        return S.New(at(s), place, tuple(fields), tuple(types))

    def _move(self, s: Move, scope: Scope) -> S.Stmt | None:
        mode = s.mode
        src = self._place(s, s.from_, scope, "move/from") if s.from_ is not None else None
        dst = self._place(s, s.to, scope, "move/to") if s.to is not None else None
        for name, t, written in (("from", src, s.from_), ("to", dst, s.to)):
            if t is not None and t.type.name != "list":
                self.problem(s, "expr-type", f"move {name} '{written}': "
                             f"{typed.describe(t.type)} is not a list", f"move/{name}")
                return None
        if (src is None and s.from_ is not None) or (dst is None and s.to is not None):
            return None
        if src is None and dst is None:
            self.problem(s, "step-shape", "a move has a from or a to")
            return None
        if src is not None and dst is not None and not _same_kind(
                replace(src.type.args[0], optional=False),
                replace(dst.type.args[0], optional=False)):
            # what leaves one list arrives in the other: a list of another kind would hold
            # a value that is none of its kind's (and the engine's own checks refuse it)
            self.problem(s, "expr-type", f"move to '{s.to}': it holds "
                         f"{typed.describe(dst.type.args[0])}, and '{s.from_}' holds "
                         f"{typed.describe(src.type.args[0])}", "move/to")
            return None
        if mode == "item":
            item_t = (src or dst).type.args[0]  # type: ignore[union-attr]
            item = self.expr(s, s.what, scope, item_t, "move/item")
            if item is None or not self._one_of_its_kind(s, item_t, item.node, scope,
                                                         "move/item"):
                return None
            # a computed item (`first(hand)`) is computed once, before it leaves its list:
            # computed again after, it would be another item (one lost, one doubled)
            once = src is not None and dst is not None and not isinstance(
                item.node, ir.Local | ir.Lit | ir.Data | ir.Arg | ir.Seat)
            return S.MoveItem(at(s), item.node, src, dst, once)
        if mode == "all":
            if src is None:
                self.problem(s, "step-shape", "move all needs a from", "move")
                return None
            return S.MoveAll(at(s), src, dst)
        if src is None:
            self.problem(s, "step-shape", f"move {mode} needs a from", "move")
            return None
        n = self.expr(s, s.what, scope, INT, f"move/{mode}")
        if n is None:
            return None
        return S.MoveSome(at(s), n.node, src, dst, mode == "top")

    def _do(self, s: Do, scope: Scope) -> S.Stmt | None:
        target = s.proc
        callee = self.procs.get(target)
        if callee is None:
            self.problem(s, "unknown-reference", f"unknown procedure {target!r}", "do",
                         typed.closest(str(target), sorted(self.procs)))
            return None
        if callee.choices or any(isinstance(g, Require) for g in callee.guard):
            self.problem(s, "step-order", f"'{target}' has a guard (chooses or requires): only a "
                         "procedure of effects can be done from another")
            return None
        values = self._given(s, callee, dict(s.with_ or ()), scope, "with")
        if values is None:
            return None
        return S.Do(at(s), S.Run(callee.id, tuple(v.node for v in values)))

    def _given(self, s: StepBase, callee: Procedure, given: Mapping[str, Expr], scope: Scope,
               key: str) -> list[Typed] | None:
        """The values of the parameters of a procedure done or a hook run (None for an
        optional one not given), or None."""
        args: list[Typed] = []
        for prm in callee.params:
            if prm.name not in given:
                if prm.has_default:  # its problem, if any, is said where it is declared
                    d = self.default(prm)
                    if d is None:
                        return None
                    args.append(d)
                    continue
                if prm.type.optional:
                    args.append(typed.constant(None))
                    continue
                self.problem(s, "step-missing", f"'{callee.id}' needs '{prm.name}'", key)
                return None
            v = self.expr(s, given[prm.name], scope, prm.type, f"{key}/{prm.name}")
            if v is None or not self._one_of_its_kind(s, prm.type, v.node, scope,
                                                      f"{key}/{prm.name}"):
                return None
            args.append(v)
        for name in given:
            if name not in {p.name for p in callee.params}:
                self.problem(s, "step-unknown-key", f"'{callee.id}' takes no '{name}'",
                             f"{key}/{name}",
                             typed.closest(str(name), [p.name for p in callee.params]))
        return args


def _same_kind(a: VType, b: VType) -> bool:
    """Whether two types are one type but for None and for a table holding every key."""
    return a.name == b.name and len(a.args) == len(b.args) and all(
        _same_kind(x, y) for x, y in zip(a.args, b.args, strict=True))


# where the setup's steps are (rules/flow.yaml `setup`): the one place players are made
SETUP = ("flow", "setup")


def _non_negative(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source >= 0


def _non_positive(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source <= 0
