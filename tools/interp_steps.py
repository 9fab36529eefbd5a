"""The reference interpreter of the effect language: procedures and actions run by walking
their checked statements.

The generated engine runs each procedure of rules/ (an effect, a shared procedure, a hook, a
Noble action: lisboa_rules/lang/steps.py) as three compiled functions, and each action of a
turn as a move generator and a checked run; this module runs the same procedures and actions
directly, on the plain JSON of a saved game (`to_json`), by walking the statements the
compiler's checker makes of them: the IR of lisboa_rules/ir/stmt.py (a procedure's `Proc`, an
action's `Action`). The checker (lang/steps.py, lang/actions.py) is given the scopes the build
gives it (model/procs.py: the rule set's `state_scope` with `formula()`, a procedure's or an
action's own row), so the oracle and the engine read every name alike (one resolution of
names, one type of every expression: the checker's). What each statement does is given here,
in one `match` over the IR's classes per dispatch (a class a dispatch forgets fails mypy),
and what each expression node does by tools/interp_ir.py. It never imports the back end
(lisboa_rules/emit, lisboa_rules/pyprint), nor reads the Python it prints or the generated
engine. The differential tests compare the two on every procedure, seat and listed choice.

    opts(model, state, seat, args)            -> the choices the guard allows, as tuples
    why(model, state, seat, args, choices)    -> (rule, reason) of a refusal, or None
    run(model, state, seat, args, choices)    -> the state after the effects (a deep copy)

`args` are the procedure's parameters in order (an effect's amount and Noble); `choices` the
values of its `choose` steps in order; both are the frame of the procedure's locals, by their
names in the rules, with what its lets, loops and comprehensions bind. Words (a refusal's, a
rule shown with values) show each value as `str` does, a text of the rules data as it is.

What the statements mean: `gain` adds and keeps the number at or above its minimum (`floor`)
and at or below its maximum, or 2**63 - 1 (`ceil`); `set` puts the value, kept within the
declared bounds and 64 bits when the IR says `clamp`. A write that would make a list longer
than its declared max_items (`Place.most`; a new player's lists by their declarations) fails
there, before it writes (`OverMax`): the engine checks the same where lang/total.py does not
prove the write within. A map that is not `full` reads a missing
key as the default of its value type (`ir.Get`); a write to such an entry makes it, a write
through such a read into an entry of it is lost, as in the engine, and a list an item is moved
into (or a new player added to) is made in its table when the table holds no such entry. A
moved item is computed once, before it leaves its list. A shuffle draws from the seeded stream
of its procedure (`{seed}:{procedure id}`, one stream per run, made at its first shuffle). A
loop over a list of the state goes through it as it was before its steps (`copy`).

`apply: {effects: ROW.column, noble: EXPR}` carries out the bundle of effects of a row
(`Bundle`: `{reis: 3}`: each effect with its amount and the shared parameters; an effect whose
choice is not made is left out, but an optional choice not made is made: None); `do: EXPR`
carries out the procedure the value names (a value that names none does nothing).

The actions of a turn (rules/court.yaml `actions`) are walked the same way:

    actions(model)                                  -> {move kind: phase}
    action_moves(model, state, kind, seat=None)     -> every move, as the engine's Move JSON
    play_action(model, state, move)                 -> the state after the action's items

`action_moves` walks the items on a deep copy of the state and branches at each choice (and at
each procedure done or bundle applied that chooses) on a copy of its own, until no item left
may choose or refuse; `play_action` walks them with the move's choices, checking each and
raising IllegalAction with the item's rule and words. The turn's advance after an action
(triggers, refills, the next player) is the runtime's, not the steps': it is not played here.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, assert_never, cast

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.types import VType
from lisboa_rules.lang.tree import Procedure
from lisboa_rules.lang.typed import Scope
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
EffectRow = tuple[tuple[str, int], ...]  # a bundle of effects: (effect id, amount), in order

_INT_MAX = 2**63 - 1  # what a save holds: a signed 64-bit number
_INT_MIN = -(2**63)


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
    (missing: 0), text (missing: None), lists of text (missing: empty); a mapping of other
    values than a bundle of effects in a row is read as columns of their own (`reign: {flag:
    x}` is `reign_flag`); words and provenance are not columns (the `name` is). (A bundle of
    effects an apply step carries out is the statement's own: `Bundle.rows`.)"""
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
        if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            missing = 0
        elif all(isinstance(v, str) for v in present):
            missing = None
        elif all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in present):
            missing = []
        else:
            continue
        out[col] = {r[key]: r.get(col, missing) for r in flat
                    if isinstance(r, Mapping) and key in r}
    return out


# --- One rule set, prepared ---------------------------------------------------------------


@dataclass(kw_only=True)
class Prepared(interp_ir.World):
    """What the interpreter reads of one model: its procedures and actions as rules/ writes
    them (`ps`), the scope the build checks their steps in (`scope`; `state_scope`: without
    `formula()`, where the vocabulary's names are checked) with the rules' tables the checker
    reads (`tables`), and each procedure and action as checked (the first time it is run)."""

    ps: ProcSet
    tables: model_procs.Tables
    state_scope: Scope
    scope: Scope
    procs: dict[str, S.Proc] = field(default_factory=dict)
    actions: dict[str, S.Action] = field(default_factory=dict)
    vocabulary: dict[str, tuple[str, ir.Expr]] | None = None

    def _checker(self, scope: Scope) -> model_procs.LocatedChecker:
        ps = self.ps
        return model_procs.LocatedChecker(scope, ps.procs, ps.hooks, self.tables.values,
                                          ps.effects)

    def proc(self, pid: str) -> S.Proc:
        """A procedure as checked in its scope (the rule set's, with its own row's names)."""
        found = self.procs.get(pid)
        if found is None:
            source = self.ps.procs.get(pid)
            if source is None:
                raise StepsError(f"no procedure {pid!r}")
            row = self.ps.this.get(pid)
            checker = self._checker(self.scope if row is None
                                    else model_procs._with_row(self.scope, row))
            found = checker.check(source)
            _refuse_problems(checker, pid)
            self.procs[pid] = found
        return found

    def action(self, kind: str) -> S.Action:
        """An action as checked in its scope (the rule set's, with its court row's names)."""
        found = self.actions.get(kind)
        if found is None:
            source = self.ps.actions.get(kind)
            if source is None:
                raise StepsError(f"no action makes {kind!r} moves")
            checker = self._checker(model_procs._with_row(self.scope,
                                                          self.ps.action_rows[kind]))
            found = checker.check_action(source)
            _refuse_problems(checker, f"the action {kind}")
            self.actions[kind] = found
        return found

    def vocab(self) -> dict[str, tuple[str, ir.Expr]]:
        """What each name of the formula language reads (model/procs.py's `vocab_nodes`)."""
        if self.vocabulary is None:
            self.vocabulary = model_procs.vocab_nodes(
                self.model.data["vocabulary"]["names"], self.state_scope)
        return self.vocabulary


def _refuse_problems(checker: model_procs.LocatedChecker, what: str) -> None:
    """A procedure or an action the checker finds a problem in is not run (its IR leaves out
    what it refused)."""
    if checker.problems:
        raise StepsError(f"{what}: {checker.problems[0].message}")


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
    tables = model_procs.Tables()
    state_scope = model_procs.state_scope(model.state, model.data, ps.measures, tables)
    prep = Prepared(model=model, columns=columns, contexts=contexts, ps=ps, tables=tables,
                    state_scope=state_scope,
                    scope=model_procs.with_formulas(state_scope, names))
    _PREPARED[id(model)] = prep
    return prep


@dataclass
class Ctx(Env):
    """One procedure or action being carried out: the evaluator's `Env` (the state, the
    acting seat, the frame of its locals by their names in the rules) and the seeded stream
    its shuffles draw from (made at its first shuffle, shared by the others)."""

    stream: random.Random | None = None

    @property
    def prep(self) -> Prepared:
        return cast(Prepared, self.world)


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


# --- Words and choices --------------------------------------------------------------------


def _say(ctx: Env, words: str | S.Words) -> str:
    """Words as the player reads them: a text of the rules data as it is, a value as `str`
    shows it."""
    if isinstance(words, str):
        return words
    out: list[str] = []
    for part in words:
        if isinstance(part, str):
            out.append(part)
        elif part.text and isinstance(part.value, ir.Lit) and isinstance(part.value.value, str):
            out.append(part.value.value)
        else:
            out.append(str(evaluate(part.value, ctx)))
    return "".join(out)


def _kept(ctx: Env, source: ir.Expr, where: ir.Expr | None, name: str) -> list[Any]:
    """The items of `source` that meet `where` (the local `name` being the item), each once,
    in order."""
    items = list(evaluate(source, ctx))
    if where is not None:
        inner = Env(ctx.world, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
        kept = []
        for x in items:
            inner.frame[name] = x
            if evaluate(where, inner):
                kept.append(x)
        items = kept
    return list(dict.fromkeys(items))


def _options(ctx: Env, s: S.Choose) -> list[Any]:
    """The values a choice may take: the items of its list that meet its `where`, each once,
    in order; of several, the combinations of between lo and hi of the sorted items, or every
    set of at most `hi` of them in counting order (and with `leads`: each way to list their
    leaders first); None first if it is optional."""
    of = s.of
    values: list[Any]
    match of:
        case S.OneOf():
            values = _kept(ctx, of.keys, of.where, s.name)
        case S.Several():
            ordered = sorted(_kept(ctx, of.source, of.where, "it"))
            if of.up_to:  # item i is in the m-th set when bit i of m is set
                hi = evaluate(of.hi, ctx)
                values = [tuple(x for i, x in enumerate(ordered) if mask >> i & 1)
                          for mask in range(1 << len(ordered)) if bin(mask).count("1") <= hi]
                if of.leads_by is not None:
                    values = [v for chosen in values for v in _led(ctx, of, chosen)]
            else:
                lo, hi = evaluate(of.lo, ctx), evaluate(of.hi, ctx)
                values = [c for k in range(lo, hi + 1) for c in combinations(ordered, k)]
        case _:
            assert_never(of)
    return [None, *values] if s.optional else values


def _led(ctx: Env, of: S.Several, chosen: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The ways to list a choice of several so that one item of each group leads: the items
    with the same `leads_by` that is not None (where `leads_where` holds) form a group, the
    groups in the order they first appear, each of its items in turn; the leaders come first,
    sorted, then the others in order."""
    assert of.leads_by is not None
    inner = Env(ctx.world, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
    groups: dict[Any, list[Any]] = {}
    for x in chosen:
        inner.frame["it"] = x
        if of.leads_where is not None and not evaluate(of.leads_where, inner):
            continue
        key = evaluate(of.leads_by, inner)
        if key is not None:
            groups.setdefault(key, []).append(x)
    picks: list[list[Any]] = [[]]
    for xs in groups.values():
        picks = [[*pick, x] for pick in picks for x in xs]
    return [(*sorted(pick), *[x for x in chosen if x not in pick]) for pick in picks]


def _refusal(ctx: Env, s: S.Choose, chosen: Any) -> Refusal | None:
    """Why a choice refuses the value `chosen` (which the frame holds by its name): none
    made of a compulsory one whose words would show it; not an item of the list that meets
    `where`; of several, not a tuple of distinct items, too few, too many (its own rule and
    words, or the numbers), or not listed in the order moves list them."""

    def refused(words: str | S.Words, rule: str | S.Words = s.rule) -> Refusal:
        return _say(ctx, rule), _say(ctx, words)

    of = s.of
    match of:
        case S.OneOf():
            if chosen is None and s.missing is not None:
                return refused(s.missing)
            if chosen is None and s.optional:
                return None
            if chosen in evaluate(of.keys, ctx) and (of.where is None
                                                     or evaluate(of.where, ctx)):
                return None
            return refused(s.reason)
        case S.Several():
            if chosen is None and s.optional:
                return None
            items = _kept(ctx, of.source, of.where, "it")
            if (type(chosen) is not tuple or len(set(chosen)) != len(chosen)
                    or any(x not in items for x in chosen)):
                return refused(s.reason)
            lo, hi = evaluate(of.lo, ctx), evaluate(of.hi, ctx)
            if len(chosen) < lo:
                return refused(s.reason)
            if len(chosen) > hi:  # without words of its own: the numbers
                return refused(of.count_reason if of.count_reason is not None else
                               f"choose at most {hi} of them" if of.up_to else
                               f"choose between {lo} and {hi} of them", of.count_rule or s.rule)
            if of.leads_by is not None and chosen not in _led(ctx, of, tuple(sorted(chosen))):
                return refused(f"that order of {s.name} is not the one moves list")
            return None
        case _:
            assert_never(of)


# --- Procedures ---------------------------------------------------------------------------


def _start(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
           choices: Sequence[Any]) -> tuple[Ctx, S.Proc]:
    """A procedure as checked, and its frame: its parameters and its choices, by their names
    in the rules."""
    proc = prep.proc(pid)
    if len(args) != len(proc.params):
        raise StepsError(f"{pid} takes {len(proc.params)} arguments, not {len(args)}")
    if len(choices) != len(proc.choices):
        raise StepsError(f"{pid} makes {len(proc.choices)} choices, not {len(choices)}")
    frame = {p.name: given for p, given in zip(proc.params, args, strict=True)}
    frame.update({c.name: given for c, given in zip(proc.choices, choices, strict=True)})
    return Ctx(prep, state, seat, frame), proc


def _enumerate(ctx: Ctx, guard: tuple[S.GuardStmt, ...], chosen: Choice,
               out: list[Choice]) -> None:
    """The choices the guard allows from its statement on, appended to `out`: a require that
    fails refuses every choice made so far (the innermost one is skipped)."""
    for i, s in enumerate(guard):
        match s:
            case S.Let():
                _let(ctx, s)
            case S.Require():
                if not evaluate(s.cond, ctx):
                    return
            case S.Choose():
                for option in _options(ctx, s):
                    ctx.frame[s.name] = option
                    _enumerate(ctx, guard[i + 1:], (*chosen, option), out)
                return
            case _:
                assert_never(s)
    out.append(chosen)


def _opts(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any]
          ) -> list[Choice]:
    proc = prep.proc(pid)
    ctx, _ = _start(prep, state, seat, pid, args, [None] * len(proc.choices))
    out: list[Choice] = []
    _enumerate(ctx, proc.guard, (), out)
    return out


def _why(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
         choices: Sequence[Any]) -> Refusal | None:
    ctx, proc = _start(prep, state, seat, pid, args, choices)
    for s in proc.guard:
        match s:
            case S.Let():
                _let(ctx, s)
            case S.Require():
                if not evaluate(s.cond, ctx):
                    return _say(ctx, s.rule), _say(ctx, s.reason)
            case S.Choose():
                refused = _refusal(ctx, s, ctx.frame[s.name])
                if refused is not None:
                    return refused
            case _:
                assert_never(s)
    return None


def _run(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
         choices: Sequence[Any]) -> None:
    """The effects of a procedure (its guard's lets first, then its effects)."""
    ctx, proc = _start(prep, state, seat, pid, args, choices)
    for g in proc.guard:
        match g:
            case S.Let():
                _let(ctx, g)
            case S.Require() | S.Choose():
                pass  # (checked by `why`; a choice is the frame's already)
            case _:
                assert_never(g)
    _block(ctx, proc.effects)


def _block(ctx: Ctx, stmts: tuple[S.Stmt, ...]) -> None:
    for s in stmts:
        _effect(ctx, s)


def _let(ctx: Env, s: S.Let) -> None:
    for b in s.binds:
        ctx.frame[b.name] = evaluate(b.value, ctx)


def _effect(ctx: Ctx, s: S.Stmt) -> None:
    """What a statement does to the state (and to the frame: a let, a loop's variable)."""
    match s:
        case S.Let():
            _let(ctx, s)
        case S.Change():
            for c in s.changes:
                _change(ctx, c)
        case S.MoveItem():  # the item computed once, before it leaves its list
            item = evaluate(s.item, ctx)
            # an item its list does not hold moves nothing (the language's rule: the engine
            # tests for it where the compiler does not prove it is there)
            src = None if s.src is None else evaluate(s.src.node, ctx)
            if src is not None and item not in src:
                return
            into = None if s.dst is None else _made(ctx, s.dst.node)
            if s.dst is not None and into is not None:
                _within(s.dst, len(into) + 1)
            if src is not None:
                src.remove(item)
            if into is not None:
                into.append(item)
        case S.MoveAll():
            if s.dst is not None:
                into = _made(ctx, s.dst.node)
                _within(s.dst, len(into) + len(evaluate(s.src.node, ctx)))
                into.extend(evaluate(s.src.node, ctx))
            evaluate(s.src.node, ctx).clear()
        case S.MoveSome():  # popped from the end (top) or the start while any are left
            moved = min(evaluate(s.count, ctx), len(evaluate(s.src.node, ctx)))
            if s.dst is not None:
                _within(s.dst, len(_made(ctx, s.dst.node)) + moved)
            for _ in range(moved):
                into = None if s.dst is None else _made(ctx, s.dst.node)
                src = evaluate(s.src.node, ctx)
                taken = src.pop() if s.top else src.pop(0)
                if into is not None:
                    into.append(taken)
        case S.If():
            _block(ctx, s.then if evaluate(s.cond, ctx) else s.orelse)
        case S.ForEach():
            over = evaluate(s.over, ctx)
            for item in list(over) if s.copy else over:
                ctx.frame[s.var] = item
                _block(ctx, s.body)
        case S.Repeat():
            for _ in range(evaluate(s.count, ctx)):
                _block(ctx, s.body)
        case S.Do():
            _carry_out(ctx, s.run)
        case S.Raise():  # each hook that listens to the event, in order
            for r in s.runs:
                _carry_out(ctx, r)
        case S.Drop():  # an entry taken out of a table of the state (if it is there)
            evaluate(s.table, ctx).pop(evaluate(s.key, ctx), None)
        case S.Shuffle():  # an entry the table does not hold is an empty list: nothing moves
            if ctx.stream is None:
                ctx.stream = random.Random(f"{ctx.state['seed']}:{s.stream}")
            node = s.place.node
            ctx.stream.shuffle(evaluate(node, ctx) if _list_entry(node) else _entry(ctx, node))
        case S.New():  # a new player: the fields given, the others at their defaults
            node = s.place.node
            players = _made(ctx, node) if _list_entry(node) else _entry(ctx, node)
            _within(s.place, len(players) + 1)
            player = {f.id: copy.deepcopy(f.default) for f in ctx.prep.model.state.player}
            declared = {f.id: f.max_items for f in ctx.prep.model.state.player}
            for name, v in s.fields:
                player[name] = copy.deepcopy(evaluate(v, ctx))  # its own value, as set: gives
                most = declared.get(name)
                if most is not None and len(player[name]) > most:
                    raise OverMax(f"the step would put more items into player.{name} than "
                                  f"its max_items, {most}, allows")
            players.append(player)
        case S.DoValue():  # the procedure the value names, if it names one
            named = evaluate(s.value, ctx)
            for pid, r in s.cases:
                if named == pid:
                    _carry_out(ctx, r)
                    break
        case S.Apply():  # a bundle of effects, none of its choices made
            b = s.bundle
            _run_bundle(ctx, _row(ctx, b), _shared(ctx, b), {})
        case _:
            assert_never(s)


def _carry_out(ctx: Ctx, r: S.Run) -> None:
    """A procedure done (or a hook run) with the values of its arguments, its choices none."""
    _run(ctx.prep, ctx.state, ctx.seat, r.proc, [evaluate(a, ctx) for a in r.args],
         [None] * r.choices)


def _change(ctx: Ctx, c: S.Gain | S.Assign) -> None:
    place = c.place
    match c:
        case S.Gain():
            new = evaluate(place.node, ctx) + evaluate(c.amount, ctx)
            if c.floor and place.lo is not None:
                new = max(place.lo, new)
            if c.ceil:
                new = min(_INT_MAX if place.hi is None else place.hi, new)
        case S.Assign():
            # a value, not a place: the state owns what it is set to (a list or table read
            # from another place is copied; two places never share one)
            new = copy.deepcopy(evaluate(c.value, ctx))
            if c.clamp:  # within the declared bounds and what a save holds
                new = min(_INT_MAX if place.hi is None else place.hi,
                          max(_INT_MIN if place.lo is None else place.lo, new))
            if place.most is not None:
                _within(place, len(new))
        case _:
            assert_never(c)
    _store(ctx, place.node, new)


class OverMax(StepsError):
    """A write would make a list longer than its declared max_items (`Place.most`): the
    language's rule is that it fails there, before anything is written."""


def _within(place: S.Place, size: int) -> None:
    """Fail when a list of `size` items is over the place's declared max_items."""
    if place.most is not None and size > place.most:
        raise OverMax(f"the step would put more items into {place.field} than its max_items, "
                      f"{place.most}, allows")


def _store(ctx: Ctx, node: ir.Expr, new: Any) -> None:
    """A value written to a place of the state (an entry a table may not hold is made) or to
    a local (`set: {need: need - take}`)."""
    match node:
        case ir.Local(name=name):
            ctx.frame[name] = new
        case ir.Index(base=base, key=key) | ir.Get(base=base, key=key):
            evaluate(base, ctx)[evaluate(key, ctx)] = new
        case ir.PlayerField(field=f, of=of):
            evaluate(of, ctx)[f] = new
        case ir.GameField(field=f):
            ctx.state[f] = new
        case _:
            raise StepsError(f"{node} is no place a step can change")


def _list_entry(node: ir.Expr) -> bool:
    """Whether a place is an entry of a table of lists that may not hold it."""
    return isinstance(node, ir.Get) and node.default == ir.ListOf(())


def _entry(ctx: Ctx, node: ir.Expr) -> Any:
    """The state's own value at a place (an entry a table may not hold must be there)."""
    if isinstance(node, ir.Get):
        return evaluate(node.base, ctx)[evaluate(node.key, ctx)]
    return evaluate(node, ctx)


def _made(ctx: Ctx, node: ir.Expr) -> Any:
    """The list at a place that items go into: an entry of a table of lists that it does not
    hold yet is made there, empty."""
    if isinstance(node, ir.Get) and _list_entry(node):
        return evaluate(node.base, ctx).setdefault(evaluate(node.key, ctx), [])
    return evaluate(node, ctx)


# --- Bundles of effects -------------------------------------------------------------------


def _row(ctx: Env, b: S.Bundle) -> EffectRow:
    """The bundle of effects of the row an apply step names."""
    row: EffectRow = dict(b.rows)[evaluate(b.key, ctx)]
    return row


def _shared(ctx: Env, b: S.Bundle) -> tuple[Any, ...]:
    """The values of the parameters the effects share after their amount (None: not given)."""
    return tuple(None if x is None else evaluate(x, ctx) for x in b.shared)


def _effects(prep: Prepared, row: EffectRow) -> list[tuple[S.Proc, int]]:
    """The effects of a bundle that are procedures, with their amounts, in order."""
    return [(prep.proc(eff), amount) for eff, amount in row if eff in prep.ps.procs]


def _effect_args(proc: S.Proc, amount: int, shared: tuple[Any, ...]) -> tuple[Any, ...]:
    """An effect of a bundle is given its amount and the shared parameters."""
    return (amount, *shared)[:len(proc.params)]


def _bundle_why(ctx: Ctx, b: S.Bundle, row: EffectRow, shared: tuple[Any, ...],
                made: Mapping[str, Any]) -> Refusal | None:
    """The first refusal of a bundle's choices: one made that no effect of this row makes
    (named by its move field), then each effect's guard in order (all read on the state
    before any of them is carried out)."""
    effects = _effects(ctx.prep, row)
    own = {c.name for proc, _a in effects for c in proc.choices}
    for name, move_field in zip(b.choices, b.fields, strict=True):
        if name not in own and made.get(name) is not None:
            return "", f"this move does not choose {move_field.replace('_', ' ')}"
    for proc, amount in effects:
        refused = _why(ctx.prep, ctx.state, ctx.seat, proc.id,
                       _effect_args(proc, amount, shared),
                       [made.get(c.name) for c in proc.choices])
        if refused is not None:
            return refused
    return None


def _bundle_opts(ctx: Ctx, b: S.Bundle, row: EffectRow, shared: tuple[Any, ...]
                 ) -> list[dict[str, Any]]:
    """Every set of choices of a bundle (by the choices' names, None for one no effect of it
    makes): each choice from the first effect that makes it, kept when no effect refuses
    them."""
    out: list[dict[str, Any]] = [{}]
    for proc, amount in _effects(ctx.prep, row):
        own = [c.name for c in proc.choices]
        if not own or (out and all(n in out[0] for n in own)):
            continue
        got = _opts(ctx.prep, ctx.state, ctx.seat, proc.id, _effect_args(proc, amount, shared))
        out = [{**o, **dict(zip(own, c, strict=True))} for o in out for c in got]
    full = [{n: o.get(n) for n in b.choices} for o in out]
    return [o for o in full if _bundle_why(ctx, b, row, shared, o) is None]


def _run_bundle(ctx: Ctx, row: EffectRow, shared: tuple[Any, ...],
                made: Mapping[str, Any]) -> None:
    """The effects of a bundle in order; an effect whose choice is not made is left out (an
    optional choice left out is made: None)."""
    for proc, amount in _effects(ctx.prep, row):
        choice = [made.get(c.name) for c in proc.choices]
        if any(v is None and not c.type.optional for c, v in zip(proc.choices, choice,
                                                                  strict=True)):
            continue
        _run(ctx.prep, ctx.state, ctx.seat, proc.id, _effect_args(proc, amount, shared), choice)


def _choice_types(prep: Prepared, b: S.Bundle) -> dict[str, VType]:
    """The type of each choice the effects of a bundle's table make (the first effect's)."""
    out: dict[str, VType] = {}
    for _key, row in b.rows:
        for proc, _a in _effects(prep, row):
            for c in proc.choices:
                out.setdefault(c.name, c.type)
    return out


# --- The three functions of a procedure ---------------------------------------------------


def _readonly(state: State) -> dict[str, Any]:
    """The state for a guard, which reads only (no copy)."""
    return cast(dict[str, Any], state)


def opts(model: Model, state: State, seat: int, pid: str, args: Sequence[Any] = ()
         ) -> list[Choice]:
    """The choices of the procedure `pid` that its guard allows for the player in `seat`:
    each a tuple of the values of its chooses, in order (one empty tuple when it chooses
    nothing and its requires hold; none when they do not)."""
    return _opts(prepare(model), _readonly(state), seat, pid, args)


def why(model: Model, state: State, seat: int, pid: str, args: Sequence[Any] = (),
        choices: Sequence[Any] = ()) -> Refusal | None:
    """Why the procedure refuses these choices: (the rule id, the reason), or None. Each
    statement of the guard in order: a require that fails, a choice that is not an option
    (with min/max: a tuple of distinct options, then their number)."""
    return _why(prepare(model), _readonly(state), seat, pid, args, choices)


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


def procedure(model: Model, pid: str) -> Procedure:
    """A procedure of the model's rule set as rules/ writes it (its params and choices);
    KeyError if none."""
    return prepare(model).ps.procs[pid]


# --- Actions: the moves of a turn ---------------------------------------------------------


class IllegalAction(ValueError):
    """A move an action's steps refuse: the rule a step names and its words."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"[{rule}] {reason}")
        self.rule = rule
        self.reason = reason


MoveJSON = dict[str, Any]
# the rule and words of a do that found no procedure to carry out, which refuse a choice the
# move makes and its way through the items did not
Idle = tuple[str | S.Words, S.Words | None]


def actions(model: Model) -> dict[str, str]:
    """The kinds of move written as steps (rules/court.yaml `actions`), each with its phase."""
    prep = prepare(model)
    return {kind: prep.action(kind).phase for kind in prep.ps.actions}


def action_moves(model: Model, state: State, kind: str, seat: int | None = None
                 ) -> list[MoveJSON]:
    """Every move of the action `kind` its items allow the player in `seat` (the actor by
    default), as JSON (`{"kind", "player", FIELD: value}`, without the choices not made, as
    the engine's `Move.to_json`): the items walked in order on a deep copy of the state, each
    choice (and each procedure done or bundle applied that chooses) branching on a copy of
    its own, a require that fails ending its branch. Simple, not fast."""
    prep = prepare(model)
    action = prep.action(kind)
    seat = state["actor"] if seat is None else seat
    ctx = Ctx(prep, _copy(state), seat, {})
    found: list[dict[str, Any]] = []
    _walk(ctx, action, action.items, {}, None, found, None)
    return [_move_json(kind, seat, chosen) for chosen in found]


def play_action(model: Model, state: State, move: Mapping[str, Any]) -> dict[str, Any]:
    """The state after the items of the move's action with the move's choices (a new state):
    each choice and require checked on the way, IllegalAction with the item's rule (or the
    action's) and words when one fails, and when the move fills a field its action did not
    choose on the way it went (with the rule of a do step that found no procedure to carry
    out, if one did: `rule: "{noble.noble_action}"` of a visit when the Noble has none). The
    turn's advance (refills, triggers, the next player) is the runtime's, not the action's:
    it is not played."""
    prep = prepare(model)
    action = prep.action(str(move["kind"]))
    ctx = Ctx(prep, _copy(state), int(move["player"]), {})
    _walk(ctx, action, action.items, {}, move, None, None)
    return ctx.state


def _move_json(kind: str, seat: int, chosen: Mapping[str, Any]) -> MoveJSON:
    out: MoveJSON = {"kind": kind, "player": seat}
    for name, value in chosen.items():
        if value is None or value is False or value == ():
            continue
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _given(move: Mapping[str, Any], name: str, t: VType | None) -> Any:
    """A choice as the move makes it: a field it does not fill is the Move's default (a list:
    empty; a truth: false; else None); a list is a tuple."""
    value = move.get(name)
    if value is None:
        if t is not None and t.name == "list":
            return ()
        if t is not None and t.name == "bool":
            return False
        return None
    return tuple(value) if isinstance(value, list) else value


def _fork(ctx: Ctx) -> Ctx:
    """A branch of its own: the state and the frame copied together (a local that is a list
    of the state stays that list)."""
    state, frame = pickle.loads(pickle.dumps((ctx.state, ctx.frame), pickle.HIGHEST_PROTOCOL))
    return Ctx(ctx.prep, state, ctx.seat, frame, state["players"][ctx.seat])


def _renamed(b: S.Bundle, made: Mapping[str, Any]) -> dict[str, Any]:
    """A bundle's choices by the move fields they fill."""
    field_of = dict(zip(b.choices, b.fields, strict=True))
    return {field_of.get(n, n): v for n, v in made.items()}


def _decides(prep: Prepared, s: S.Item) -> bool:
    """Whether an item may choose or refuse: a choice, a require, an if whose steps do, a do
    of a procedure with a guard, a bundle applied of which some effect has a guard."""
    match s:
        case S.Choose() | S.Require() | S.Branch() | S.DoChoose():
            return True
        case S.ApplyChoose():
            return any(proc.guard for _key, row in s.bundle.rows
                       for proc, _a in _effects(prep, row))
        case (S.Let() | S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
              | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle() | S.New()
              | S.DoValue() | S.Apply()):
            return False
        case _:
            assert_never(s)


def _case(ctx: Ctx, s: S.DoChoose) -> S.Case:
    """What a do whose procedure chooses carries out: the procedure it names, or the one its
    value names (the case of none when it names none)."""
    if s.value is None:
        if len(s.cases) != 1:
            raise StepsError(f"a do of one procedure has {len(s.cases)} cases")
        return s.cases[0]
    named = evaluate(s.value, ctx)
    for c in s.cases:
        if c.proc is None or c.proc == named:
            return c
    raise StepsError(f"a do names {named!r}, which none of its cases carries out")


def _walk(ctx: Ctx, action: S.Action, items: tuple[S.Item, ...], chosen: dict[str, Any],
          move: Mapping[str, Any] | None, out: list[dict[str, Any]] | None,
          idle: Idle | None) -> None:
    """The items of an action from here on: listing (`move` None: every branch's choices
    appended to `out`) or playing `move` (raising IllegalAction); `idle`: the rule and words
    of the last do on the way that found no procedure to carry out."""
    prep = ctx.prep
    i = 0
    while i < len(items):
        if move is None and not any(_decides(prep, x) for x in items[i:]):
            break  # what is left changes no choice: the move is found
        s = items[i]
        i += 1
        match s:
            case S.Choose():
                if move is None:
                    for option in _options(ctx, s):
                        branch = _fork(ctx)
                        branch.frame[s.name] = option
                        _walk(branch, action, items[i:], {**chosen, s.name: option}, None, out,
                              idle)
                    return
                given = _given(move, s.name, s.type)
                ctx.frame[s.name] = given  # (its words may show the value chosen)
                refused = _refusal(ctx, s, given)
                if refused is not None:
                    raise IllegalAction(*refused)
                chosen = {**chosen, s.name: given}
            case S.Require():
                if not evaluate(s.cond, ctx):
                    if move is None:
                        return
                    raise IllegalAction(_say(ctx, s.rule), _say(ctx, s.reason))
            case S.Branch():  # the branch taken holds the items after the if
                items, i = (s.then if evaluate(s.cond, ctx) else s.orelse), 0
            case S.DoChoose():
                taken = _case(ctx, s)
                items, i = taken.rest, 0
                if taken.run is None:  # nothing is done
                    idle = (s.rule, s.none_reason)
                    continue
                pid = taken.run.proc
                args = [evaluate(a, ctx) for a in taken.run.args]
                if move is None:
                    for option in _opts(prep, ctx.state, ctx.seat, pid, args):
                        branch = _fork(ctx)
                        _run(prep, branch.state, branch.seat, pid, args, option)
                        _walk(branch, action, items,
                              {**chosen, **dict(zip(taken.names, option, strict=True))}, None,
                              out, idle)
                    return
                proc = prep.proc(pid)
                made = [_given(move, n, c.type)
                        for n, c in zip(taken.names, proc.choices, strict=True)]
                refused = _why(prep, ctx.state, ctx.seat, pid, args, made)
                if refused is not None:
                    if s.reason is not None and not _opts(prep, ctx.state, ctx.seat, pid, args):
                        # nothing at all can be done: the action is refused (its own rule)
                        raise IllegalAction(action.rule,
                                            _say(ctx, s.reason) + ": " + refused[1])
                    raise IllegalAction(*refused)
                _run(prep, ctx.state, ctx.seat, pid, args, made)
                chosen = {**chosen, **dict(zip(taken.names, made, strict=True))}
            case S.ApplyChoose():
                b = s.bundle
                row, shared = _row(ctx, b), _shared(ctx, b)
                items, i = s.rest, 0
                if move is None:
                    for made_here in _bundle_opts(ctx, b, row, shared):
                        branch = _fork(ctx)
                        _run_bundle(branch, row, shared, made_here)
                        _walk(branch, action, items, {**chosen, **_renamed(b, made_here)}, None,
                              out, idle)
                    return
                types = _choice_types(prep, b)
                made_by = {n: _given(move, f, types.get(n))
                           for n, f in zip(b.choices, b.fields, strict=True)}
                refused = _bundle_why(ctx, b, row, shared, made_by)
                if refused is not None:
                    raise IllegalAction(_say(ctx, s.rule), refused[1])
                _run_bundle(ctx, row, shared, made_by)
                chosen = {**chosen, **_renamed(b, made_by)}
            case (S.Let() | S.Change() | S.MoveItem() | S.MoveAll() | S.MoveSome() | S.If()
                  | S.ForEach() | S.Repeat() | S.Do() | S.Raise() | S.Drop() | S.Shuffle()
                  | S.New() | S.DoValue() | S.Apply()):
                _effect(ctx, s)
            case _:
                assert_never(s)
    if move is None:
        assert out is not None
        out.append(chosen)
        return
    # every move has one form: nothing else may be chosen (a do that did nothing on the way:
    # refused by its rule and words)
    rule, words = (action.rule, None) if idle is None else (
        _say(ctx, idle[0]), None if idle[1] is None else _say(ctx, idle[1]))
    for key, given in move.items():
        if key in ("kind", "player") or key in chosen:
            continue
        if given not in (None, False, [], ()):
            raise IllegalAction(rule, words or f"a {move['kind']} move does not choose "
                                f"{key.replace('_', ' ')}")
