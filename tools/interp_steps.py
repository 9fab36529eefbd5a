"""The reference interpreter of the effect language: procedures run by walking their steps.

The generated engine runs each procedure of rules/ (an effect, a shared procedure, a hook, a
Noble action: lisboa_rules/lang/steps.py) as three compiled functions; this module runs the same
steps directly, on the plain JSON of a saved game (`to_json`), by walking the steps. Each
expression of a step is checked by the compiler's own checker (`typed.check`) in the scope the
compiler checks it in, and its IR node is evaluated by tools/interp_ir.py: the oracle and the
engine read every name alike (one resolution of names, one type of every expression: the
checker's), and what each node does is given by the interpreter on its own. It never reads
the Python the compiler prints (`Typed.code`) nor the generated engine. The differential tests
compare the two on every procedure, seat and listed choice.

    opts(model, state, seat, args)            -> the choices the guard allows, as tuples
    why(model, state, seat, args, choices)    -> (rule, reason) of a refusal, or None
    run(model, state, seat, args, choices)    -> the state after the effects (a deep copy)

`args` are the procedure's parameters in order (an effect's amount and Noble); `choices` the
values of its `choose` steps in order. The scope of a procedure's steps is the compiler's
(model/procs.py): the rule set's `state_scope` with `formula()` (`with_formulas`), its own row
(`_with_row`: `this.x`, a Noble action's params and formulas), its parameters; each step binds
what the compiler binds (a `let`, a `choose ... as`, a loop's variable, `it` in a `where`), as
`ir.Local(name)` of the type the checker gave, and a condition narrows its locals where the
compiler narrows them (`x is not None and ...`: in an if's steps, after an action's require).
Each expression is checked once per scope (the scopes a walk makes are interned) and kept.
A map that is not `full` reads a missing key as the default of its value type (`ir.Get`), and
a write through such a read is lost, as in the engine, except where the engine makes the
entry: a move into it, a new player in it. `gain` is clamped to the field's declared bounds
(not where the amount written is a plain number that cannot cross that bound), `set` of a
number of the state too (not when it is a number written in the rules).

`apply: {effects: ROW.column, noble: EXPR}` carries out a bundle of effects of a row (`{reis:
3}`: each effect with its amount and the Noble; an effect whose choice is not made is left out);
`do: EXPR` carries out the procedure the value names (a value that names none does nothing).
The rows of the rules' tables are read by the interpreter itself (`_columns`: a column a row
does not fill is 0, None, empty or no effects).

The actions of a turn (rules/court.yaml `actions`) are walked the same way:

    actions(model)                                  -> {move kind: phase}
    action_moves(model, state, kind, seat=None)     -> every move, as the engine's Move JSON
    play_action(model, state, move)                 -> the state after the action's steps

`action_moves` walks the steps on a deep copy of the state and branches at each choose (and at
each procedure done or bundle applied that chooses) on a copy of its own; `play_action` walks
them with the move's choices, checking each and raising IllegalAction with the step's rule (or
the action's) and words. The turn's advance after an action (triggers, refills, the next
player) is the runtime's, not the steps': it is not played here.
"""

from __future__ import annotations

import copy
import pickle
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, assert_never, cast

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import steps as st
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import INT, Name, Scope, Typed, VType
from lisboa_rules.model import procs as model_procs
from lisboa_rules.model.procs import ProcSet
from lisboa_rules.model.types import Model
from tools import interp_ir
from tools.interp_ir import Env, StepsError
from tools.interp_ir import value as evaluate

__all__ = ["IllegalAction", "StepsError", "action_moves", "actions", "name_value", "opts",
           "play_action", "procedure", "run", "why"]

State = Mapping[str, Any]
Choice = tuple[Any, ...]
Refusal = tuple[str, str]


# --- The rows of the rules' tables ----------------------------------------------------------


def _rows(data: Any, path: str) -> Any:
    """The rows at a dotted path of the rules data (None if there are none)."""
    node = data
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _is_bundle(value: Any) -> bool:
    """A bundle of effects of a row: a mapping of effect ids to whole numbers ({reis: 3})."""
    return isinstance(value, Mapping) and all(
        isinstance(a, int) and not isinstance(a, bool) for a in value.values())


def _columns(rows: list[Any], key: str) -> dict[str, dict[Any, Any]]:
    """The readable columns of a table of the rules data, each by the rows' ids: numbers
    (missing: 0), text (missing: None), lists of text (missing: empty), bundles of effects
    (missing: none); a mapping of other values in a row is read as columns of their own
    (`reign: {flag: x}` is `reign_flag`); words and provenance are not columns (the `name`
    is)."""
    flat: list[Any] = []
    for r in rows:
        if isinstance(r, Mapping):
            row = dict(r)
            for c, v in r.items():
                if isinstance(v, Mapping) and not _is_bundle(v):
                    row.update({f"{c}_{k}": x for k, x in v.items() if f"{c}_{k}" not in r})
            r = row
        flat.append(r)
    out: dict[str, dict[Any, Any]] = {}
    cols: list[str] = []
    for r in flat:
        if isinstance(r, Mapping):
            cols += [c for c in r if c not in cols and c != key]
    for col in cols:
        if col in ("source", "assumptions", "text", "title"):
            continue
        present = [r[col] for r in flat if isinstance(r, Mapping) and col in r]
        missing: Any
        bundles = False
        if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            missing = 0
        elif all(isinstance(v, str) for v in present):
            missing = None
        elif all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in present):
            missing = []
        elif present and all(_is_bundle(v) for v in present):
            missing, bundles = {}, True
        else:
            continue
        out[col] = {r[key]: _frozen_bundle(r.get(col, missing)) if bundles
                    else r.get(col, missing)
                    for r in flat if isinstance(r, Mapping) and key in r}
    return out


def _frozen_bundle(value: Any) -> tuple[tuple[str, int], ...]:
    """A bundle of effects as (effect id, amount) pairs, in the order written."""
    return tuple((str(e), a) for e, a in value.items()) if isinstance(value, Mapping) else ()


# --- One rule set, prepared ---------------------------------------------------------------


@dataclass(kw_only=True)
class Prepared(interp_ir.World):
    """What the interpreter reads of one model: its procedures, the scope the compiler checks
    their steps in (`scope`; `state_scope`: without `formula()`, where the vocabulary's names
    are checked), the scopes the walks make (interned: the same binding of the same scope is
    the same scope, so that an expression is checked once per scope) and every expression
    checked so far, by (scope, source)."""

    ps: ProcSet
    state_scope: Scope
    scope: Scope
    scopes: dict[tuple[Any, ...], tuple[Any, Scope]] = field(default_factory=dict)
    checked: dict[tuple[int, type, Any], tuple[Scope, Typed]] = field(default_factory=dict)
    vocabulary: dict[str, tuple[str, ir.Expr]] | None = None

    def check(self, source: Any, scope: Scope) -> Typed:
        """An expression of a step as the compiler's checker types it in `scope`."""
        plain = source is None or isinstance(source, str | int | float)
        key = (id(scope), type(source), source if plain else repr(source))
        hit = self.checked.get(key)
        if hit is not None and hit[0] is scope:
            return hit[1]
        try:
            t = typed.check(source, scope)
        except typed.ExprError as exc:
            raise StepsError(f"'{source}': {exc.message}") from None
        self.checked[key] = (scope, t)
        return t

    def _derived(self, key: tuple[Any, ...], parent: Scope, make: Callable[[], Scope]
                 ) -> Scope:
        hit = self.scopes.get(key)
        if hit is None or hit[0] is not parent:
            hit = (parent, make())
            self.scopes[key] = hit
        return hit[1]

    def proc_scope(self, pid: str) -> Scope:
        """The scope of a procedure's steps: its row's names, then its parameters."""
        def make() -> Scope:
            proc = self.ps.procs[pid]
            row = self.ps.this.get(pid)
            scope = self.scope if row is None else model_procs._with_row(self.scope, row)
            return scope.with_locals(**{p.name: Name(p.type, ir.Local(p.name))
                                        for p in proc.params})
        return self._derived(("proc", pid), self.scope, make)

    def action_scope(self, kind: str) -> Scope:
        """The scope of an action's steps: its court row is its own (`this.followable`)."""
        return self._derived(("action", kind), self.scope, lambda: model_procs._with_row(
            self.scope, self.ps.action_rows[kind]))

    def bind(self, scope: Scope, name: str, t: VType) -> Scope:
        """`scope` with one more local (the same scope for the same binding)."""
        return self._derived((id(scope), "bind", name, t), scope, lambda: scope.with_locals(
            **{name: Name(t, ir.Local(name))}))

    def narrow(self, scope: Scope, cond: Any) -> Scope:
        """The scope where the locals `cond` proves not None are known to be set."""
        names = tuple(n for n in typed.narrowed(cond) if n in scope.locals)
        if not names:
            return scope

        def make() -> Scope:
            return scope.with_locals(**{n: replace(scope.locals[n], type=replace(
                scope.locals[n].type, optional=False)) for n in names})
        return self._derived((id(scope), "narrow", names), scope, make)

    def restore(self, scope: Scope, names: tuple[tuple[str, Name], ...]) -> Scope:
        """`scope` with these locals as they were before a condition narrowed them."""
        if not names:
            return scope
        # (the Names are held by the scope made: their ids stay theirs)
        key = (id(scope), "restore", tuple((n, id(x)) for n, x in names))
        return self._derived(key, scope, lambda: scope.with_locals(**dict(names)))

    def vocab(self) -> dict[str, tuple[str, ir.Expr]]:
        """What each name of the formula language reads (model/procs.py's `vocab_nodes`)."""
        if self.vocabulary is None:
            self.vocabulary = model_procs.vocab_nodes(
                self.model.data["vocabulary"]["names"], self.state_scope)
        return self.vocabulary


_PREPARED: dict[int, Prepared] = {}


def prepare(model: Model) -> Prepared:
    """The interpreter's view of a model (kept for the model's lifetime in this process)."""
    found = _PREPARED.get(id(model))
    if found is not None and found.model is model:
        return found
    ps = model.procs
    if ps is None:
        raise StepsError("the model has no procedures")
    columns: dict[str, dict[str, dict[Any, Any]]] = {}
    for k in model.state.kinds:
        rows = _rows(model.data, k.source) if k.source and k.key else None
        if isinstance(rows, list) and all(isinstance(r, Mapping) for r in rows):
            assert k.key is not None
            columns[k.id] = _columns(rows, k.key)
    names = model.data["vocabulary"]["names"]
    contexts = {str(v["context"]): str(v["name"]) for v in names
                if isinstance(v, Mapping) and "context" in v}
    state_scope = model_procs.state_scope(model.state, model.data, ps.measures,
                                          model_procs.Tables())
    prep = Prepared(model=model, columns=columns, contexts=contexts, ps=ps,
                    state_scope=state_scope,
                    scope=model_procs.with_formulas(state_scope, names))
    _PREPARED[id(model)] = prep
    return prep


@dataclass
class Ctx(Env):
    """One procedure being carried out: the evaluator's `Env` (the state, the acting seat, the
    frame of its locals by their names in the rules), and the procedure's id (its shuffles'
    stream is named by it) and that stream (made at its first shuffle, shared by the
    others)."""

    pid: str = ""
    stream: random.Random | None = None

    @property
    def prep(self) -> Prepared:
        return cast(Prepared, self.world)


def _eval(ctx: Env, source: Any, scope: Scope) -> Any:
    """The value of an expression of a step (a YAML number, true/false and null are too)."""
    prep = cast(Prepared, ctx.world)
    return evaluate(prep.check(source, scope).node, ctx)


def name_value(model: Model, state: State, seat: int, name: str, item: str | None) -> Any:
    """What a formula name reads for the player in `seat`: what the compiler reads for it
    (its `value:` of rules/vocabulary.yaml as checked, a measure's body), on the saved game
    (`item` given for a name per item)."""
    prep = prepare(model)
    found = prep.vocab().get(name)
    if found is None:
        raise StepsError(f"no value for the name {name!r}")
    given = {} if item is None else {"item": item}
    return evaluate(found[1], Env(prep, dict(state), seat, {}, given=given))


# --- Places: what a step may change -------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A slot of the state or of the frame: `container[key]`, with the field's bounds."""

    container: Any
    key: Any
    lo: int | None
    hi: int | None


def _place_of(ctx: Ctx, source: Any, scope: Scope) -> Typed:
    """A place a step changes, as checked: a field of the state, an entry of one, a local."""
    t = ctx.prep.check(source, scope)
    if t.place is None:
        raise StepsError(f"'{source}' is not a field of the state (or an entry of one) that a "
                         "step can change")
    return t


def _place(ctx: Ctx, t: Typed) -> Place:
    """Where a checked place is: the container and its key (an entry's container is the
    table as read: a missing entry of a table of a table is a new empty one, and what is
    written into it is lost, as in the engine)."""
    bounds = t.place
    assert bounds is not None
    node = t.node
    match node:
        case ir.Local(name=name):
            return Place(ctx.frame, name, None, None)
        case ir.PlayerField(field=f, of=of):
            return Place(evaluate(of, ctx), f, bounds.lo, bounds.hi)
        case ir.GameField(field=f):
            return Place(ctx.state, f, bounds.lo, bounds.hi)
        case ir.Index(base=base, key=key) | ir.Get(base=base, key=key):
            return Place(evaluate(base, ctx), evaluate(key, ctx), bounds.lo, bounds.hi)
        case _:
            raise StepsError(f"{node} cannot be changed")


def _list_at(ctx: Ctx, t: Typed, make: bool) -> list[Any]:
    """The state's own list a step changes in place. An entry a table may not hold: made
    empty in it when `make` (a move into it, a new player), else a new empty list (a shuffle
    of nothing); an entry read otherwise must be there."""
    node = t.node
    if isinstance(node, ir.Get):
        if isinstance(node.default, ir.ListOf) and not node.default.items:
            table = evaluate(node.base, ctx)
            key = evaluate(node.key, ctx)
            return cast(list[Any], table.setdefault(key, []) if make else table.get(key, []))
        found = evaluate(node.base, ctx)[evaluate(node.key, ctx)]
    else:
        found = evaluate(node, ctx)
    if not isinstance(found, list):
        raise StepsError(f"{node} is not a list of the state")
    return found


def _written_number(node: ir.Expr) -> bool:
    """A number written in the rules (a literal, a constant of the rules data, negated or
    not): a set writes it as it is."""
    if isinstance(node, ir.Neg):
        node = node.operand
    return isinstance(node, ir.Lit | ir.Data) and type(node.value) is int
# --- Steps --------------------------------------------------------------------------------


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def _reason(ctx: Ctx, text: Any, scope: Scope) -> str:
    """A refusal's words, with the value of each {EXPR} in them."""
    if not isinstance(text, str):
        return str(text)
    return _PLACEHOLDER.sub(lambda m: str(_eval(ctx, m.group(1), scope)), text)


@dataclass(frozen=True)
class _Options:
    values: list[Any]
    name: str
    type: VType
    several: tuple[list[Any], int, int] | None  # (the unique items, min, max) of a min/max


def _item_type(ctx: Ctx, s: st.Choose, scope: Scope) -> VType:
    """The type of an item of a choose step's `from`, as the checker types it."""
    t = ctx.prep.check(s.source, scope).type
    if t.name not in ("list", "map"):
        raise StepsError(f"'{s.source}' is not a list to choose from")
    return t.args[0]


def _choice_type(ctx: Ctx, s: st.Choose, scope: Scope) -> VType:
    t = _item_type(ctx, s, scope)
    if s.several:
        t = typed.list_of(t)
    return replace(t, optional=True) if s.optional else t


def _options(ctx: Ctx, s: st.Choose, scope: Scope) -> _Options:
    """The options of a choose step: the items of `from` that pass `where`, each once, in
    order; with min/max the combinations of the sorted unique items, with up_to every set
    of at most N of them in counting order (and `leads`: each way to list its leaders first);
    None first if optional."""
    items = list(_eval(ctx, s.source, scope))
    if s.where is not None:
        inner_scope = ctx.prep.bind(scope, "it", _item_type(ctx, s, scope))
        inner = Ctx(ctx.prep, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
        cond = ctx.prep.check(s.where, inner_scope).node
        kept = []
        for x in items:
            inner.frame["it"] = x
            if evaluate(cond, inner):
                kept.append(x)
        items = kept
    unique = list(dict.fromkeys(items))
    several = None
    values: list[Any]
    if s.up_to is not None:  # any set of at most N of the sorted items, in counting order
        hi = _eval(ctx, s.up_to, scope)
        several = (unique, 0, hi)
        ordered = sorted(unique)
        values = [tuple(x for i, x in enumerate(ordered) if mask >> i & 1)
                  for mask in range(1 << len(ordered)) if bin(mask).count("1") <= hi]
        if s.leads is not None:
            item = _item_type(ctx, s, scope)
            values = [v for chosen in values for v in _led(ctx, s.leads, chosen, item, scope)]
    elif s.min is not None or s.max is not None:
        lo = _eval(ctx, 1 if s.min is None else s.min, scope)
        hi = _eval(ctx, s.max if s.max is not None else 1 if s.min is None else s.min, scope)
        several = (unique, lo, hi)
        ordered = sorted(unique)
        values = [c for k in range(lo, hi + 1) for c in combinations(ordered, k)]
    else:
        values = unique
    if s.optional:
        values = [None, *values]
    return _Options(values, s.as_, _choice_type(ctx, s, scope), several)


def _led(ctx: Ctx, leads: st.Leads, chosen: tuple[Any, ...], item: VType,
         scope: Scope) -> list[tuple[Any, ...]]:
    """The ways to list a choice of several so that one item of each group leads: the items
    with the same `by` (where `where` holds) form a group, the groups in the order they first
    appear, each of its items in turn; the leaders come first, sorted, then the others."""
    inner_scope = ctx.prep.bind(scope, "it", item)
    inner = Ctx(ctx.prep, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
    groups: dict[Any, list[Any]] = {}
    for x in chosen:
        inner.frame["it"] = x
        if leads.where is not None and not _eval(inner, leads.where, inner_scope):
            continue
        groups.setdefault(_eval(inner, leads.by, inner_scope), []).append(x)
    picks: list[list[Any]] = [[]]
    for xs in groups.values():
        picks = [[*pick, x] for pick in picks for x in xs]
    return [(*sorted(pick), *[x for x in chosen if x not in pick]) for pick in picks]


def _bind(ctx: Ctx, s: st.Choose, scope: Scope) -> Scope:
    return ctx.prep.bind(scope, s.as_, _choice_type(ctx, s, scope))


def _let(ctx: Ctx, s: st.Let, scope: Scope) -> Scope:
    for name, source in s.names:
        t = ctx.prep.check(source, scope)
        ctx.frame[str(name)] = evaluate(t.node, ctx)
        scope = ctx.prep.bind(scope, str(name), t.type)
    return scope


def _non_negative(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source >= 0


def _non_positive(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source <= 0


def _start(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
           choices: Sequence[Any]) -> tuple[Ctx, Scope]:
    """A procedure's frame (its parameters and its choices, by their names in the rules) and
    the scope of its steps."""
    if pid not in prep.ps.procs:
        raise StepsError(f"no procedure {pid!r}")
    proc = prep.ps.procs[pid]
    if len(args) != len(proc.params):
        raise StepsError(f"{pid} takes {len(proc.params)} arguments, not {len(args)}")
    if len(choices) != len(proc.choices):
        raise StepsError(f"{pid} makes {len(proc.choices)} choices, not {len(choices)}")
    frame: dict[str, Any] = {}
    for prm, given in zip(proc.params, args, strict=True):
        frame[prm.name] = given
    for c, given in zip(proc.choices, choices, strict=True):
        frame[c.as_] = given
    return Ctx(prep, state, seat, frame, pid=pid), prep.proc_scope(pid)


def _run(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
         choices: Sequence[Any]) -> None:
    """The effects of a procedure (its guard's lets first, then the steps after its guard)."""
    proc = prep.ps.procs[pid]
    ctx, scope = _start(prep, state, seat, pid, args, choices)
    for s in proc.guard:
        match s:
            case st.Let():
                scope = _let(ctx, s, scope)
            case st.Choose():
                scope = _bind(ctx, s, scope)
            case st.Require():
                pass  # (checked by `why`)
            case (st.Gain() | st.Set() | st.Move() | st.Drop() | st.If() | st.ForEach()
                  | st.Repeat() | st.Do() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                pass  # never in a guard
            case _:
                assert_never(s)
    _block(ctx, proc.effects, scope)


def _block(ctx: Ctx, steps: Sequence[st.Step], scope: Scope) -> None:
    for s in steps:
        scope = _effect(ctx, s, scope)


def _effect(ctx: Ctx, s: st.Step, scope: Scope) -> Scope:
    prep = ctx.prep
    match s:
        case st.Let():
            return _let(ctx, s, scope)
        case st.Gain() | st.Set():
            for target, source in s.places:
                t = _place_of(ctx, target, scope)
                given = prep.check(source, scope)
                new = evaluate(given.node, ctx)
                place = _place(ctx, t)
                if isinstance(s, st.Gain):
                    new = evaluate(t.node, ctx) + new
                    if place.lo is not None and not _non_negative(source):
                        new = max(place.lo, new)
                    if not _non_positive(source):  # no declared maximum: a save's 2**63 - 1
                        new = min(2**63 - 1 if place.hi is None else place.hi, new)
                elif (t.type.name == "int" and not t.type.optional and t.place is not None
                      and t.place.field is not None and not _written_number(given.node)):
                    # a number of the state set from a computed value: within its declared
                    # bounds and a save's 64 bits, as the engine does (lang/steps.py)
                    new = min(2**63 - 1 if place.hi is None else place.hi,
                              max(-(2**63) if place.lo is None else place.lo, new))
                place.container[place.key] = new
        case st.Move():
            _move(ctx, s, scope)
        case st.If():  # its steps with the locals the condition proves set narrowed
            if _eval(ctx, s.cond, scope):
                _block(ctx, s.then, prep.narrow(scope, s.cond))
            else:
                _block(ctx, s.orelse, scope)
        case st.ForEach():
            src = prep.check(s.source, scope)
            if src.type.name not in ("list", "map"):
                raise StepsError(f"'{s.source}' is not a list")
            over = evaluate(scope.keys(src), ctx)
            if src.type.name == "list" and src.place is not None:
                over = list(over)  # a list of the state is copied first: the steps may change it
            inner = prep.bind(scope, s.var, src.type.args[0])
            for item in over:
                ctx.frame[s.var] = item
                _block(ctx, s.body, inner)
        case st.Repeat():
            for _ in range(_eval(ctx, s.count, scope)):
                _block(ctx, s.body, scope)
        case st.Do():  # a procedure's id, or an expression whose value names one (or none)
            pid = _do_target(ctx, s, scope)
            if pid is not None:
                _run(prep, ctx.state, ctx.seat, pid, _args(ctx, pid, dict(s.with_ or ()), scope),
                     [None] * len(prep.ps.procs[pid].choices))
        case st.Apply():  # a bundle of effects, none of its choices made
            bundle, noble = _bundle(ctx, s, scope)
            _run_bundle(ctx, bundle, noble, {})
        case st.Raise():  # raise: EVENT, or {event: EVENT, with: {PARAM: EXPR}}
            given_args = dict(s.with_ or ())
            for hook in prep.ps.hooks.get(s.event, ()):
                _run(prep, ctx.state, ctx.seat, hook, _args(ctx, hook, given_args, scope), ())
        case st.Drop():  # an entry taken out of a table of the state (if it is there)
            node = _place_of(ctx, s.place, scope).node
            if not isinstance(node, ir.Index | ir.Get):
                raise StepsError(f"'{s.place}' is not an entry of a table")
            evaluate(node.base, ctx).pop(evaluate(node.key, ctx), None)
        case st.Shuffle():  # with the procedure's seeded stream (the game's seed and its id)
            if ctx.stream is None:
                ctx.stream = random.Random(f"{ctx.state['seed']}:{ctx.pid}")
            ctx.stream.shuffle(_list_at(ctx, _place_of(ctx, s.place, scope), False))
        case st.New():  # a new player: the fields given, the others at their defaults
            player = {f.id: copy.deepcopy(f.default) for f in prep.model.state.player}
            for name, source in s.with_ or ():
                player[name] = _eval(ctx, source, scope)
            _list_at(ctx, _place_of(ctx, s.place, scope), True).append(player)
        case st.Require() | st.Choose():
            raise StepsError(f"a {s.kind} step cannot stand among effects")
        case _:
            assert_never(s)
    return scope


def _do_target(ctx: Ctx, s: st.Do, scope: Scope) -> str | None:
    """The procedure a do step carries out: its id, or the procedure its expression's value
    names (None: a value that names no procedure does nothing)."""
    procs = ctx.prep.ps.procs
    if s.proc in procs:
        return s.proc
    named = _eval(ctx, s.proc, scope)
    return named if isinstance(named, str) and named in procs else None


Bundle = tuple[tuple[str, int], ...]


def _effects_row(ctx: Ctx, s: st.Apply, scope: Scope) -> Any:
    """The bundle of effects an apply step's `effects` names: of the procedure's own row
    (`this.reward`), or a column of a row (`ROW.effects`), as checked."""
    src = s.effects
    if isinstance(src, str) and src.startswith("this.") and scope.this is not None:
        try:
            return scope.this(tuple(src.split(".")[1:]))
        except KeyError as exc:
            raise StepsError(f"'{src}': {exc}") from None
    return _eval(ctx, src, scope)


def _bundle(ctx: Ctx, s: st.Apply, scope: Scope) -> tuple[Bundle, Any]:
    """The bundle of effects an apply step carries out, (effect id, amount) pairs in the
    order written, and the Noble they are given."""
    found = _effects_row(ctx, s, scope)
    if isinstance(found, Mapping):
        found = tuple((str(e), a) for e, a in found.items())
    if found is None:
        found = ()
    given = dict(s.params).get("noble")
    noble = _eval(ctx, given, scope) if given is not None else None
    return tuple(found), noble


def _column_names(ctx: Ctx, s: st.Apply, scope: Scope) -> list[str]:
    """The choices the bundles of an apply step's column make (`state_action.effects`: of
    every State action), which a move of this step makes only where its own bundle does."""
    src = s.effects
    if isinstance(src, str) and src.startswith("this.") and scope.this is not None:
        return []
    node = ctx.prep.check(src, scope).node
    if not isinstance(node, ir.Column):
        return []
    column = ctx.prep.columns.get(node.kind, {}).get(node.column)
    if column is None:
        return []
    out: list[str] = []
    for bundle in column.values():
        out += [n for n in _bundle_names(ctx, bundle) if n not in out]
    return out


def _effect_args(ctx: Ctx, eff: str, amount: int, noble: Any) -> tuple[Any, ...]:
    """An effect of a bundle is given its amount and the Noble."""
    return (amount, noble)[:len(ctx.prep.ps.procs[eff].params)]


def _bundle_names(ctx: Ctx, bundle: Bundle) -> list[str]:
    """The choices a bundle makes: those of its effects, each once, in order."""
    out: list[str] = []
    for eff, _a in bundle:
        proc = ctx.prep.ps.procs.get(eff)
        for c in proc.choices if proc is not None else ():
            if c.as_ not in out:
                out.append(c.as_)
    return out


def _bundle_why(ctx: Ctx, bundle: Bundle, noble: Any, chosen: Mapping[str, Any]
                ) -> Refusal | None:
    """The first refusal of an effect of the bundle with these choices (each effect's guard
    read on the state before any of them is carried out)."""
    for eff, amount in bundle:
        proc = ctx.prep.ps.procs.get(eff)
        if proc is None:
            continue
        choice = [chosen.get(c.as_) for c in proc.choices]
        r = _why(ctx.prep, ctx.state, ctx.seat, eff, _effect_args(ctx, eff, amount, noble),
                 choice)
        if r is not None:
            return r
    return None


def _bundle_opts(ctx: Ctx, bundle: Bundle, noble: Any) -> list[dict[str, Any]]:
    """Every set of choices of a bundle: each choice from the first effect that makes it,
    kept when no effect refuses them."""
    out: list[dict[str, Any]] = [{}]
    for eff, amount in bundle:
        proc = ctx.prep.ps.procs.get(eff)
        if proc is None:
            continue
        own = [c.as_ for c in proc.choices]
        if not own or (out and all(n in out[0] for n in own)):
            continue
        got = _opts(ctx.prep, ctx.state, ctx.seat, eff, _effect_args(ctx, eff, amount, noble))
        out = [{**o, **dict(zip(own, c, strict=True))} for o in out for c in got]
    names = _bundle_names(ctx, bundle)
    full = [{n: o.get(n) for n in names} for o in out]
    return [o for o in full if _bundle_why(ctx, bundle, noble, o) is None]


def _run_bundle(ctx: Ctx, bundle: Bundle, noble: Any, chosen: Mapping[str, Any]) -> None:
    """The effects of a bundle in order; an effect whose choice is not made is left out."""
    for eff, amount in bundle:
        proc = ctx.prep.ps.procs.get(eff)
        if proc is None:
            continue
        choice = [chosen.get(c.as_) for c in proc.choices]
        if any(v is None for v in choice):
            continue
        _run(ctx.prep, ctx.state, ctx.seat, eff, _effect_args(ctx, eff, amount, noble), choice)


def _args(ctx: Ctx, pid: str, given: Mapping[str, Any], scope: Scope) -> list[Any]:
    """The arguments of a procedure done (or a hook run): each parameter's expression, or
    None for an optional one not given."""
    return [_eval(ctx, given[prm.name], scope) if prm.name in given else None
            for prm in ctx.prep.ps.procs[pid].params]


def _move(ctx: Ctx, s: st.Move, scope: Scope) -> None:
    """move item (remove it from `from`, append it to `to`), top / first N (popped from the
    end / the start while any are left) or all (`to` extended, `from` cleared). The list moved
    into is made in its table if the table holds no such entry yet, as the engine does."""
    mode = s.mode
    src = _place_of(ctx, s.from_, scope) if s.from_ is not None else None
    dst = _place_of(ctx, s.to, scope) if s.to is not None else None

    def read(t: Typed) -> Any:
        return evaluate(t.node, ctx)

    def into(t: Typed) -> list[Any]:
        return _list_at(ctx, t, True)

    if mode == "item":
        item = _eval(ctx, s.what, scope)
        if src is not None:
            read(src).remove(item)
        if dst is not None:
            into(dst).append(item)
        return
    if src is None:
        raise StepsError(f"move {mode} needs a from")
    if mode == "all":
        if dst is not None:
            into(dst).extend(read(src))
        read(src).clear()
        return
    n = _eval(ctx, s.what, scope)
    for _ in range(min(n, len(read(src)))):
        taken = read(src).pop() if mode == "top" else read(src).pop(0)
        if dst is not None:
            into(dst).append(taken)


# --- The three functions of a procedure ---------------------------------------------------


def _enumerate(ctx: Ctx, guard: Sequence[st.Step], scope: Scope, chosen: Choice,
               out: list[Choice]) -> None:
    """The choices the guard allows from its step on, appended to `out`: a require that
    fails refuses every choice made so far (the innermost one is skipped)."""
    for i, s in enumerate(guard):
        match s:
            case st.Let():
                scope = _let(ctx, s, scope)
            case st.Require():
                if not _eval(ctx, s.cond, scope):
                    return
            case st.Choose():
                o = _options(ctx, s, scope)
                inner = _bind(ctx, s, scope)
                for option in o.values:
                    ctx.frame[o.name] = option
                    _enumerate(ctx, guard[i + 1:], inner, (*chosen, option), out)
                return
            case (st.Gain() | st.Set() | st.Move() | st.Drop() | st.If() | st.ForEach()
                  | st.Repeat() | st.Do() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                raise StepsError(f"a {s.kind} step is no step of a guard")
            case _:
                assert_never(s)
    out.append(chosen)


def _readonly(state: State) -> dict[str, Any]:
    """The state for a guard, which reads only (no copy)."""
    return cast(dict[str, Any], state)


def opts(model: Model, state: State, seat: int, pid: str, args: Sequence[Any] = ()
         ) -> list[Choice]:
    """The choices of the procedure `pid` that its guard allows for the player in `seat`:
    each a tuple of the values of its chooses, in order (one empty tuple when it chooses
    nothing and its requires hold; none when they do not)."""
    return _opts(prepare(model), _readonly(state), seat, pid, args)


def _opts(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any]
          ) -> list[Choice]:
    proc = prep.ps.procs[pid]
    ctx, scope = _start(prep, state, seat, pid, args, [None] * len(proc.choices))
    out: list[Choice] = []
    _enumerate(ctx, proc.guard, scope, (), out)
    return out


def why(model: Model, state: State, seat: int, pid: str, args: Sequence[Any] = (),
        choices: Sequence[Any] = ()) -> Refusal | None:
    """Why the procedure refuses these choices: (the rule id, the reason), or None. Each
    step of the guard in order: a require that fails, a choice that is not an option (with
    min/max: a tuple of distinct options, then their number)."""
    return _why(prepare(model), _readonly(state), seat, pid, args, choices)


def _why(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
         choices: Sequence[Any]) -> Refusal | None:
    proc = prep.ps.procs[pid]
    ctx, scope = _start(prep, state, seat, pid, args, choices)
    for s in proc.guard:
        rule = _reason(ctx, s.rule, scope) if s.rule else proc.rule
        match s:
            case st.Let():
                scope = _let(ctx, s, scope)
            case st.Require():
                if not _eval(ctx, s.cond, scope):
                    return rule, _reason(ctx, s.reason or f"{s.cond} does not hold", scope)
            case st.Choose():
                o = _options(ctx, s, scope)
                refused = _choice_refusal(ctx, s, scope, o, ctx.frame[o.name], rule)
                if refused is not None:
                    return refused
                scope = _bind(ctx, s, scope)
            case (st.Gain() | st.Set() | st.Move() | st.Drop() | st.If() | st.ForEach()
                  | st.Repeat() | st.Do() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                raise StepsError(f"a {s.kind} step is no step of a guard")
            case _:
                assert_never(s)
    return None


def _choice_refusal(ctx: Ctx, s: st.Choose, scope: Scope, o: _Options, chosen: Any, rule: str
                    ) -> Refusal | None:
    """Why a choose step refuses a value: not an option (with min/max: a tuple of distinct
    options, then their number)."""
    reason = s.reason or f"that {o.name} is not one to choose"
    if chosen is None and o.several is None and not s.optional \
            and st.shows_choice(s):  # words that show the value cannot say none was chosen
        kinds = {k.id: k.text for k in ctx.prep.model.state.kinds}
        return rule, "choose " + kinds.get(o.type.name, o.name.replace("_", " "))
    if o.several is not None:
        items, lo, hi = o.several
        if (type(chosen) is not tuple or len(set(chosen)) != len(chosen)
                or any(x not in items for x in chosen)):
            return rule, _reason(ctx, reason, scope)
        if len(chosen) < lo:
            return rule, _reason(ctx, reason, scope)
        if len(chosen) > hi:
            if not s.count_reason:  # the numbers, not their expressions
                return s.count_rule or rule, (
                    f"choose at most {hi} of them" if s.up_to is not None else
                    f"choose between {lo} and {hi} of them")
            return s.count_rule or rule, _reason(ctx, s.count_reason, scope)
    elif chosen not in o.values:
        return rule, _reason(ctx, reason, scope)
    return None


def run(model: Model, state: State, seat: int, pid: str, args: Sequence[Any] = (),
        choices: Sequence[Any] = ()) -> dict[str, Any]:
    """The state after the effects of the procedure (a new state; `state` is not changed)."""
    new = _copy(state)
    _run(prepare(model), new, seat, pid, args, choices)
    return new


def _copy(state: State) -> dict[str, Any]:
    """A deep copy of plain JSON data (pickle is the fastest deep copy of it)."""
    new: dict[str, Any] = pickle.loads(pickle.dumps(dict(state), pickle.HIGHEST_PROTOCOL))
    return new


def procedure(model: Model, pid: str) -> st.Procedure:
    """A procedure of the model's rule set (its params and choices); KeyError if none."""
    return prepare(model).ps.procs[pid]


# --- Actions: the moves of a turn ---------------------------------------------------------


class IllegalAction(ValueError):
    """A move an action's steps refuse: the rule a step names and its words."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"[{rule}] {reason}")
        self.rule = rule
        self.reason = reason


MoveJSON = dict[str, Any]


def actions(model: Model) -> dict[str, str]:
    """The kinds of move written as steps (rules/court.yaml `actions`), each with its phase."""
    return {kind: a.phase for kind, a in prepare(model).ps.actions.items()}


def action_moves(model: Model, state: State, kind: str, seat: int | None = None
                 ) -> list[MoveJSON]:
    """Every move of the action `kind` its steps allow the player in `seat` (the actor by
    default), as JSON (`{"kind", "player", FIELD: value}`, without the choices not made, as
    the engine's `Move.to_json`): the steps walked in order on a deep copy of the state, each
    choose (and each procedure done or bundle applied that chooses) branching on a copy of
    its own, a require that fails ending its branch. Simple, not fast."""
    prep = prepare(model)
    action = prep.ps.actions[kind]
    seat = state["actor"] if seat is None else seat
    ctx = Ctx(prep, _copy(state), seat, {})
    found: list[dict[str, Any]] = []
    _walk(ctx, list(action.steps), prep.action_scope(kind), {}, None, found, action)
    return [_move_json(kind, seat, chosen) for chosen in found]


def play_action(model: Model, state: State, move: Mapping[str, Any]) -> dict[str, Any]:
    """The state after the steps of the move's action with the move's choices (a new state):
    each choice and require checked on the way, IllegalAction with the step's rule (or the
    action's) and words when one fails, and when the move fills a field its action did not
    choose on the way it went (with the rule of a do step that found no procedure to carry
    out, if one did: `rule: "{noble.noble_action}"` of a visit when the Noble has none). The
    turn's advance (refills, triggers, the next player) is the runtime's, not the action's:
    it is not played."""
    prep = prepare(model)
    kind = str(move["kind"])
    if kind not in prep.ps.actions:
        raise StepsError(f"no action makes {kind!r} moves")
    action = prep.ps.actions[kind]
    seat = int(move["player"])
    ctx = Ctx(prep, _copy(state), seat, {})
    _walk(ctx, list(action.steps), prep.action_scope(kind), {}, move, None, action)
    return ctx.state


def _move_json(kind: str, seat: int, chosen: Mapping[str, Any]) -> MoveJSON:
    out: MoveJSON = {"kind": kind, "player": seat}
    for name, value in chosen.items():
        if value is None or value is False or value == ():
            continue
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _given(move: Mapping[str, Any], name: str, t: VType | None) -> Any:
    """A choice as the move makes it (a missing field: not made; a list: a tuple)."""
    if name not in move or move[name] is None:
        if t is not None and t.name == "list" and not t.optional:
            return ()
        if t is not None and t.name == "bool":
            return False
        return None
    value = move[name]
    return tuple(value) if isinstance(value, list) else value


def _fork(ctx: Ctx) -> Ctx:
    """A branch of its own: the state and the frame copied together (a local that is a list
    of the state stays that list)."""
    state, frame = pickle.loads(pickle.dumps((ctx.state, ctx.frame), pickle.HIGHEST_PROTOCOL))
    return Ctx(ctx.prep, state, ctx.seat, frame, state["players"][ctx.seat])


def _renamed(field_of: Mapping[str, str], made: Mapping[str, Any]) -> dict[str, Any]:
    """A bundle's choices by the move fields they fill."""
    return {str(field_of.get(n, n)): v for n, v in made.items()}


@dataclass(frozen=True)
class _Restore:
    """Where an if's steps end among the steps of an action: the locals its condition
    narrowed are read as they were before it (`lang/actions.py`'s Restore)."""

    names: tuple[tuple[str, Name], ...]


def _decides(prep: Prepared, steps: Sequence[st.Step | _Restore]) -> bool:
    """Whether some step may choose or refuse: a choose, a require, a bundle applied, a do of
    a procedure whose guard chooses or requires (or of a procedure an expression names)."""
    for s in steps:
        if isinstance(s, _Restore):
            continue
        for sub in s.walk():
            match sub:
                case st.Choose() | st.Require() | st.Apply():
                    return True
                case st.Do():
                    proc = prep.ps.procs.get(sub.proc)
                    if proc is None or any(not isinstance(g, st.Let) for g in proc.guard):
                        return True
                case (st.Gain() | st.Set() | st.Let() | st.Move() | st.Drop() | st.If()
                      | st.ForEach() | st.Repeat() | st.Raise() | st.Shuffle() | st.New()):
                    pass  # it neither chooses nor refuses (an if's, a loop's steps: walked)
                case _:
                    assert_never(sub)
    return False


def _walk(ctx: Ctx, steps: list[st.Step | _Restore], scope: Scope, chosen: dict[str, Any],
          move: Mapping[str, Any] | None, out: list[dict[str, Any]] | None, action: Any) -> None:
    """The steps of an action from here on: listing (`move` None: every branch's choices
    appended to `out`) or playing `move` (raising IllegalAction)."""
    prep = ctx.prep
    idle: tuple[str, str | None] | None = None  # the rule (and words) of a do that did nothing
    i = 0
    while i < len(steps):
        if move is None and not _decides(prep, steps[i:]):
            break  # what is left changes no choice: the move is found
        s = steps[i]
        rest = steps[i + 1:]
        if isinstance(s, _Restore):
            scope = prep.restore(scope, s.names)
            i += 1
            continue
        rule = _reason(ctx, s.rule, scope) if s.rule else action.rule
        match s:
            case st.Choose():
                o = _options(ctx, s, scope)
                inner = _bind(ctx, s, scope)
                if move is None:
                    for option in o.values:
                        branch = _fork(ctx)
                        branch.frame[o.name] = option
                        _walk(branch, rest, inner, {**chosen, o.name: option}, None, out, action)
                    return
                given = _given(move, o.name, o.type)
                ctx.frame[o.name] = given  # (its words may show the value chosen)
                shown = prep.bind(scope, o.name, typed.ANY)  # (as the compiler checks them)
                refused = _choice_refusal(ctx, s, shown, o, given, rule)
                if refused is not None:
                    raise IllegalAction(*refused)
                chosen = {**chosen, o.name: given}
                scope = inner
            case st.Require():
                if not _eval(ctx, s.cond, scope):
                    if move is None:
                        return
                    raise IllegalAction(rule, _reason(ctx, s.reason
                                                      or f"{s.cond} does not hold", scope))
                scope = prep.narrow(scope, s.cond)
            case st.If() if _decides(prep, [s]):
                # the branch taken, then the rest (its choices are the move's)
                if _eval(ctx, s.cond, scope):
                    narrowed = prep.narrow(scope, s.cond)
                    was = tuple((n, scope.locals[n]) for n in typed.narrowed(s.cond)
                                if n in scope.locals)
                    steps = [*s.then, _Restore(was), *rest]
                    scope = narrowed
                else:
                    steps = [*s.orelse, *rest]
                i = 0
                continue
            case st.Do():
                pid = _do_target(ctx, s, scope)
                if pid is None:
                    words = _reason(ctx, s.none_reason, scope) if s.none_reason else None
                    idle = idle or (rule, words)
                else:
                    proc = prep.ps.procs[pid]
                    args = _args(ctx, pid, dict(s.with_ or ()), scope)
                    own = [c.as_ for c in proc.choices]
                    if move is None:
                        for option in _opts(prep, ctx.state, ctx.seat, pid, args):
                            branch = _fork(ctx)
                            _run(prep, branch.state, branch.seat, pid, args, option)
                            _walk(branch, rest, scope,
                                  {**chosen, **dict(zip(own, option, strict=True))}, None, out,
                                  action)
                        return
                    c = [_given(move, n, typed.list_of(INT) if x.several else None)
                         for n, x in zip(own, proc.choices, strict=True)]
                    refused = _why(prep, ctx.state, ctx.seat, pid, args, c)
                    if refused is not None:
                        if s.reason and not _opts(prep, ctx.state, ctx.seat, pid, args):
                            # nothing at all can be done: the action is refused (its own rule)
                            raise IllegalAction(action.rule, _reason(ctx, s.reason, scope)
                                                + ": " + refused[1])
                        raise IllegalAction(*refused)
                    _run(prep, ctx.state, ctx.seat, pid, args, c)
                    chosen = {**chosen, **dict(zip(own, c, strict=True))}
            case st.Apply() if s.choices is not False:
                # (`choices: {favor: NAME}`: the move field of a choice; false: none is made)
                bundle, noble = _bundle(ctx, s, scope)
                field_of: Mapping[str, str] = dict(s.choices or ())

                if move is None:
                    for made_here in _bundle_opts(ctx, bundle, noble):
                        branch = _fork(ctx)
                        _run_bundle(branch, bundle, noble, made_here)
                        _walk(branch, rest, scope, {**chosen, **_renamed(field_of, made_here)},
                              None, out, action)
                    return
                made = {n: _given(move, str(field_of.get(n, n)), None)
                        for n in _bundle_names(ctx, bundle)}
                for other in _column_names(ctx, s, scope):  # a choice of the column's others
                    name = str(field_of.get(other, other))
                    if other not in made and _given(move, name, None) is not None:
                        raise IllegalAction(rule, f"this move does not choose "
                                            f"{name.replace('_', ' ')}")
                    made.setdefault(other, None)
                refused = _bundle_why(ctx, bundle, noble, made)
                if refused is not None:
                    raise IllegalAction(rule, refused[1])
                _run_bundle(ctx, bundle, noble, made)
                chosen = {**chosen, **_renamed(field_of, made)}
            case (st.Gain() | st.Set() | st.Let() | st.Move() | st.Drop() | st.If()
                  | st.ForEach() | st.Repeat() | st.Raise() | st.Apply() | st.Shuffle()
                  | st.New()):
                scope = _effect(ctx, s, scope)
            case _:
                assert_never(s)
        i += 1
    if move is None:
        assert out is not None
        out.append(chosen)
        return
    for key, given in move.items():  # every move has one form: nothing else may be chosen
        if key in ("kind", "player") or key in chosen:
            continue
        if given not in (None, False, [], ()):  # (a do that did nothing: by its rule, words)
            words = f"a {move['kind']} move does not choose {key.replace('_', ' ')}"
            if idle is None:
                raise IllegalAction(action.rule, words)
            raise IllegalAction(idle[0], idle[1] or words)
