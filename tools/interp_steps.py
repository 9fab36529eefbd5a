"""The reference interpreter of the effect language: procedures run by walking their steps.

The generated engine runs each procedure of rules/ (an effect, a shared procedure, a hook, a
Noble action: lisboa_rules/lang/steps.py) as three compiled functions; this module runs the same
steps directly, on the plain JSON of a saved game (`to_json`), by walking the steps and the
`ast` of every expression (`typed.parse`). It never reads the compiler's generated code. The
differential tests compare the two on every procedure, seat and listed choice.

    opts(model, state, seat, args)            -> the choices the guard allows, as tuples
    why(model, state, seat, args, choices)    -> (rule, reason) of a refusal, or None
    run(model, state, seat, args, choices)    -> the state after the effects (a deep copy)

`args` are the procedure's parameters in order (an effect's amount and Noble); `choices` the
values of its `choose` steps in order. Name resolution is the type checker's (typed.py):
locals (parameters, lets, chosen values, loop variables, a Noble action's own formulas and
params), then the acting player's fields, the game's fields, the measures, `player`;
`game.X`, `rules.DOC.path` and `this.x` constants, columns of the rules' tables (`plan.officials`)
read from the model's data rows. A map that is not `full` reads a missing key as the default
of its value type (0, [], {}, False, None, ''), and a write through such a read is lost, as in
the engine. `gain` is clamped to the field's declared bounds (not where the amount written is
a plain number that cannot cross that bound), `set` is not.

`apply: {effects: ROW.column, noble: EXPR}` carries out a bundle of effects of a row (`{reis:
3}`: each effect with its amount and the Noble; an effect whose choice is not made is left out);
`do: EXPR` carries out the procedure the value names (a value that names none does nothing);
`cost('visit-cost', other_officials=n)` is the cost's formula, evaluated by tools/interp.py for
the acting player; `first(LIST)`; `noble(x)` reads a text as an id of that kind. A table's
columns are typed as the checker types them: a column (or a `rules.X.Y.id` list) of the ids of
one kind is of that kind, a nested mapping is read as columns `reign_flag`, ...

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

import ast
import collections
import copy
import functools
import pickle
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, assert_never, cast

from lisboa_rules.lang import expr, typed
from lisboa_rules.lang import steps as st
from lisboa_rules.lang.typed import BOOL, INT, NONE, TEXT, VType
from lisboa_rules.model import procs as model_procs
from lisboa_rules.model.procs import ProcSet
from lisboa_rules.model.state import StateType
from lisboa_rules.model.types import Model

State = Mapping[str, Any]
Choice = tuple[Any, ...]
Refusal = tuple[str, str]


class StepsError(ValueError):
    """The model or the state lacks something a procedure needs."""


# --- Names --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Local:
    """A local name: a slot of the procedure's frame (`var`), or a formula of a Noble action's
    row, read where it is named (`lazy`, in the names it was defined in), or a constant."""

    type: VType
    var: str | None = None
    lazy: ast.expr | None = None
    lazy_names: Mapping[str, Local] | None = None
    const: Any = None


@dataclass(frozen=True)
class Field:
    type: VType
    lo: int | None
    hi: int | None


Names = Mapping[str, Local]
THIS = " this"  # the names' entry that holds a procedure's own row (never an identifier)


def _vtype(t: StateType, full: bool) -> VType:
    """A declared type as the checker sees it: only the field itself may be `full`."""
    return VType(t.name, tuple(_vtype(a, False) for a in t.args), t.optional, full)


def _frozen(value: Any) -> Any:
    """A constant of the rules data as the engine holds it: lists are tuples."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def _const_type(value: Any) -> VType:
    if isinstance(value, Mapping):
        items = list(value.values())
        return VType("map", (TEXT, _const_type(items[0]) if items else INT))
    if value is None:
        return NONE
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list | tuple):
        return typed.list_of(_const_type(value[0]) if value else INT)
    raise StepsError(f"{value!r} is not a constant of the effect language")


def _lookup(data: Any, path: Sequence[str]) -> Any:
    """`rules.DOC.path` / `this.x`: through mappings by key, a list of rows by `id`, or every
    row's value of a key."""
    node = data
    for key in path:
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and any(
                isinstance(r, Mapping) and r.get("id") == key for r in node):
            node = next(r for r in node if isinstance(r, Mapping) and r.get("id") == key)
        elif isinstance(node, list) and all(isinstance(r, Mapping) for r in node):
            node = [r.get(key) for r in node]
        else:
            raise StepsError(f"no constant at {'.'.join(path)}")
    return node


def _default(t: VType) -> Any:
    """What a map that is not full gives for a missing key."""
    if t.optional:
        return None
    if t.name == "list":
        return []
    if t.name == "map":
        return {}
    if t.name == "bool":
        return False
    if t.name in ("int", "seat"):
        return 0
    return ""


def _of_kind(values: Sequence[Any], ids: Mapping[str, frozenset[Any]]) -> str | None:
    """The one kind whose ids hold every value (None if no kind or several do)."""
    got = {v for v in values if v is not None}
    found = [k for k, known in ids.items() if got and got <= known]
    return found[0] if len(found) == 1 else None


def _is_bundle(value: Any) -> bool:
    """A bundle of effects of a row: a mapping of effect ids to whole numbers ({reis: 3})."""
    return isinstance(value, Mapping) and all(
        isinstance(a, int) and not isinstance(a, bool) for a in value.values())


def _columns(rows: list[Any], key: str, ids: Mapping[str, frozenset[Any]]
             ) -> dict[str, tuple[VType, dict[Any, Any]]]:
    """The readable columns of a table of the rules data: numbers (missing: 0), text (missing:
    None), lists of text (missing: empty), bundles of effects (missing: none); a text column
    (or list) of ids of exactly one kind is of that kind; a mapping of other values in a row
    is read as columns of their own (`reign: {flag: x}` is `reign_flag`); words and
    provenance are not columns (the `name` is)."""
    flat: list[Any] = []
    for r in rows:
        if isinstance(r, Mapping):
            row = dict(r)
            for c, v in r.items():
                if isinstance(v, Mapping) and not _is_bundle(v):
                    row.update({f"{c}_{k}": x for k, x in v.items() if f"{c}_{k}" not in r})
            r = row
        flat.append(r)
    out: dict[str, tuple[VType, dict[Any, Any]]] = {}
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
            t, missing = INT, 0
        elif all(isinstance(v, str) for v in present):
            t, missing = VType(_of_kind(present, ids) or "text", (), len(present) < len(flat)), None
        elif all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in present):
            kind = _of_kind([x for v in present for x in v], ids)
            t, missing = typed.list_of(VType(kind) if kind else TEXT), []
        elif present and all(_is_bundle(v) for v in present):
            t, missing = typed.EFFECTS, {}
        else:
            continue
        out[col] = (t, {r[key]: _frozen_bundle(r.get(col, missing)) if t == typed.EFFECTS
                        else r.get(col, missing)
                        for r in flat if isinstance(r, Mapping) and key in r})
    return out


def _frozen_bundle(value: Any) -> tuple[tuple[str, int], ...]:
    """A bundle of effects as (effect id, amount) pairs, in the order written."""
    return tuple((str(e), a) for e, a in value.items()) if isinstance(value, Mapping) else ()


# --- One rule set, prepared ---------------------------------------------------------------


@dataclass
class Prepared:
    """What the interpreter reads of one model: the declared fields, the tables, the
    measures, and each procedure's names (its parameters and its row's formulas)."""

    model: Model
    ps: ProcSet
    player: dict[str, Field]
    game: dict[str, Field]
    tables: dict[str, dict[str, tuple[VType, dict[Any, Any]]]]
    measures: dict[str, ast.expr]
    base: dict[str, Local]
    kind_sources: dict[tuple[str, ...], str]  # the path of a kind's ids -> the kind
    contexts: dict[str, str]  # a context a cost is given (`other_officials=`) -> its name
    kinds: frozenset[str]
    proc_names: dict[str, dict[str, Local]] = field(default_factory=dict)
    memo: dict[tuple[str, int, int], tuple[Any, Any, Any]] = field(default_factory=dict)
    interned: dict[tuple[int, str, VType, str], tuple[Names, Names]] = field(
        default_factory=dict)

    def names_of(self, pid: str) -> dict[str, Local]:
        found = self.proc_names.get(pid)
        if found is None:
            found = self._names_of(pid)
            self.proc_names[pid] = found
        return found

    def _names_of(self, pid: str) -> dict[str, Local]:
        proc = self.ps.procs[pid]
        names = dict(self.base)
        for prm in proc.params:
            names[prm.name] = Local(prm.type, typed.local_code(prm.name))
        row = self.ps.this.get(pid)
        if row is None:
            return names
        return self.with_row(names, row)

    def action_names(self, kind: str) -> dict[str, Local]:
        """The names of an action's steps: its court row is its own (`this.followable`)."""
        key = " action " + kind
        found = self.proc_names.get(key)
        if found is None:
            found = self.with_row(dict(self.base), self.ps.action_rows[kind])
            self.proc_names[key] = found
        return found

    def with_row(self, names: dict[str, Local], row: Mapping[str, Any]) -> dict[str, Local]:
        names[THIS] = Local(NONE, const=row)
        # which keys of the row are a Noble action's own names: its int params, and its
        # formulas that check as numbers (the checker decides, as it does for the engine)
        scope = model_procs.state_scope(self.model.state, self.model.data, self.ps.measures)
        inner = model_procs._with_row(scope, row)
        raw = row.get("params")
        given: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        own = [k for k in inner.locals if k not in scope.locals]
        formulas = []
        for key in own:
            value = given.get(key)
            if (isinstance(value, int) and not isinstance(value, bool)
                    and inner.locals[key].code == repr(value)):
                names[key] = Local(INT, const=value)
            else:
                formulas.append(key)
        for key in formulas:
            names[key] = Local(INT, lazy=typed.parse(row[key]), lazy_names=dict(names))
        return names

    def extend(self, names: Names, name: str, t: VType, var: str) -> Names:
        """`names` with one more local (the same dict for the same scope, so that what is
        worked out once for a scope is kept)."""
        key = (id(names), name, t, var)
        hit = self.interned.get(key)
        if hit is not None and hit[0] is names:
            return hit[1]
        new = {**names, name: Local(t, var)}
        self.interned[key] = (names, new)
        return new


_PREPARED: dict[int, Prepared] = {}


def prepare(model: Model) -> Prepared:
    """The interpreter's view of a model (kept for the model's lifetime in this process)."""
    found = _PREPARED.get(id(model))
    if found is not None and found.model is model:
        return found
    ps = model.procs
    if ps is None:
        raise StepsError("the model has no procedures")
    decl = model.state
    player = {f.id: Field(_vtype(f.type, f.full), f.min, f.max) for f in decl.player}
    game = {f.id: Field(_vtype(f.type, f.full), f.min, f.max) for f in decl.game}
    tables: dict[str, dict[str, tuple[VType, dict[Any, Any]]]] = {}
    ids: dict[str, frozenset[Any]] = {}
    kind_sources: dict[tuple[str, ...], str] = {}  # `rules.X.Y.id`: ids of that kind
    sources: dict[str, list[Any]] = {}
    for k in decl.kinds:
        rows = None
        if k.source:
            try:
                rows = _lookup(model.data, k.source.split("."))
            except StepsError:
                rows = None
        if k.values is not None:
            ids[k.id] = frozenset(k.values)
        elif isinstance(rows, list) and k.key:
            ids[k.id] = frozenset(r.get(k.key) for r in rows if isinstance(r, Mapping))
        if k.source and k.key:
            kind_sources[(*k.source.split("."), k.key)] = k.id
            if isinstance(rows, list) and all(isinstance(r, Mapping) for r in rows):
                sources[k.id] = rows
    for kid, rows in sources.items():
        key = next(k.key for k in decl.kinds if k.id == kid)
        assert key is not None
        tables[kid] = _columns(rows, key, ids)
    measures = {str(mid): typed.parse(src) if isinstance(src, str) else ast.Constant(src)
                for mid, src in ps.measures}
    base = {"seat": Local(VType("seat"), "seat")}
    contexts = {str(v["context"]): str(v["name"]) for v in model.data["vocabulary"]["names"]
                if isinstance(v, Mapping) and "context" in v}
    prep = Prepared(model, ps, player, game, tables, measures, base, kind_sources, contexts,
                    frozenset(k.id for k in decl.kinds))
    _PREPARED[id(model)] = prep
    return prep


@functools.lru_cache(maxsize=4096)
def _parse(source: str) -> ast.expr:
    return typed.parse(source)


@functools.lru_cache(maxsize=256)
def _literal(kind: str, value: Any) -> ast.expr:
    return ast.Constant(value)


def _expr(source: Any) -> ast.expr:
    """An expression of a step (a YAML number, true/false and null are expressions too)."""
    if isinstance(source, str):
        return _parse(source)
    return _literal(type(source).__name__, source)


# --- Evaluating expressions ---------------------------------------------------------------


@dataclass
class Ctx:
    """One procedure being carried out: the state, the acting seat and the frame of its
    locals (by their names in the engine: `v_x`, `seat`)."""

    prep: Prepared
    state: dict[str, Any]
    seat: int
    frame: dict[str, Any]
    player: dict[str, Any] = field(default_factory=dict)  # read once, as the engine's `p`
    pid: str = ""  # the procedure carried out: its shuffles' stream is named by its id
    stream: random.Random | None = None  # made at its first shuffle, shared by the others

    def __post_init__(self) -> None:
        players = self.state["players"]
        if not self.player and self.seat < len(players):  # (a setup starts with no player)
            self.player = players[self.seat]


def _dotted(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _constant(prep: Prepared, node: ast.expr, names: Names) -> tuple[bool, Any]:
    """(True, value) when the expression is a `rules.` or `this.` constant."""
    path = _dotted(node) if isinstance(node, ast.Attribute) else None
    if not path:
        return False, None
    if path[0] == "rules":
        key = ("rules", id(node), 0)
        hit = prep.memo.get(key)
        if hit is None or hit[0] is not node:
            hit = (node, None, _frozen(_lookup(prep.model.data, path[1:])))
            prep.memo[key] = hit
        return True, hit[2]
    if path[0] == "this" and "this" not in names:
        row = names.get(THIS)
        if row is None:
            raise StepsError("'this' names nothing here")
        return True, _frozen(_lookup(row.const, path[1:]))
    return False, None


def _comp_names(prep: Prepared, node: ast.ListComp | ast.GeneratorExp, names: Names) -> Names:
    gen = node.generators[0]
    assert isinstance(gen.target, ast.Name)
    src = type_of(prep, gen.iter, names)
    return prep.extend(names, gen.target.id, src.args[0], typed.local_code(gen.target.id))


def type_of(prep: Prepared, node: ast.expr, names: Names) -> VType:
    """The checker's type of an expression (what a map subscript needs: is it full, and the
    value type whose default a missing key gives)."""
    key = ("type", id(node), id(names))
    hit = prep.memo.get(key)
    if hit is not None and hit[0] is node and hit[1] is names:
        found: VType = hit[2]
        return found
    t = _type_of(prep, node, names)
    prep.memo[key] = (node, names, t)
    return t


def _type_of(prep: Prepared, node: ast.expr, names: Names) -> VType:
    if isinstance(node, ast.Constant):
        v = node.value
        return (BOOL if isinstance(v, bool) else INT if isinstance(v, int)
                else TEXT if isinstance(v, str) else NONE)
    if isinstance(node, ast.Name):
        n = node.id
        if n in names:
            return names[n].type
        if n in prep.player:
            return prep.player[n].type
        if n in prep.game:
            return prep.game[n].type
        if n in prep.measures:
            return type_of(prep, prep.measures[n], prep.base)
        if n == "player":
            return VType("player")
        raise StepsError(f"unknown name {n!r}")
    if isinstance(node, ast.Attribute):
        is_const, value = _constant(prep, node, names)
        if is_const:
            t = _const_type(value)
            path = _dotted(node)
            kind = prep.kind_sources.get(tuple(path[1:])) if path and path[0] == "rules" else None
            if kind is not None and t.name == "list":  # the ids of a kind's rows
                return typed.list_of(VType(kind))
            return t
        path = _dotted(node)
        if path and path[0] == "game" and len(path) == 2 and "game" not in names:
            return prep.game[path[1]].type
        base = type_of(prep, node.value, names)
        if base.name == "player":
            return prep.player[node.attr].type
        return prep.tables[base.name][node.attr][0]
    if isinstance(node, ast.Subscript):
        base = type_of(prep, node.value, names)
        return base.args[0] if base.name == "list" else base.args[1]
    if isinstance(node, ast.UnaryOp):
        return BOOL if isinstance(node.op, ast.Not) else INT
    if isinstance(node, ast.BinOp):
        return INT
    if isinstance(node, ast.BoolOp | ast.Compare):
        return BOOL
    if isinstance(node, ast.IfExp):
        a, b = type_of(prep, node.body, names), type_of(prep, node.orelse, names)
        if b.name == "none":
            return replace(a, optional=True)
        return a if a.name != "none" else replace(b, optional=True)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        if node.func.id in prep.kinds and node.func.id not in typed.FUNCTIONS:
            return VType(node.func.id, (), type_of(prep, node.args[0], names).optional)
        if node.func.id in ("sorted", "reversed"):
            return type_of(prep, node.args[0], names)
        if node.func.id == "first":
            return type_of(prep, node.args[0], names).args[0]
        if node.func.id == "range":
            return typed.list_of(INT)
        return BOOL if node.func.id in ("any", "all") else INT  # formula(): a number
    if isinstance(node, ast.ListComp | ast.GeneratorExp):
        return typed.list_of(type_of(prep, node.elt, _comp_names(prep, node, names)))
    if isinstance(node, ast.List):
        return typed.list_of(type_of(prep, node.elts[0], names) if node.elts else INT)
    if isinstance(node, ast.Dict) and not node.keys:  # `{}`: an empty table
        return VType("map", (TEXT, INT))
    raise StepsError(f"'{ast.unparse(node)}' is not an expression of the effect language")


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}

_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


def evaluate(ctx: Ctx, node: ast.expr, names: Names) -> Any:
    """The value of an expression in this procedure's state and frame."""
    return _EVAL[type(node)](ctx, node, names)


def _eval_constant(ctx: Ctx, node: Any, names: Names) -> Any:
    return node.value


def _eval_name(ctx: Ctx, node: Any, names: Names) -> Any:
    return _name(ctx, node.id, names)


def _attribute_kind(prep: Prepared, node: ast.Attribute, names: Names) -> tuple[str, Any]:
    """What an attribute reads: ("const", value), ("game", field), ("player", field) of a
    player, ("table", values) of a column (worked out once per scope)."""
    key = ("attr", id(node), id(names))
    hit = prep.memo.get(key)
    if hit is not None and hit[0] is node and hit[1] is names:
        found: tuple[str, Any] = hit[2]
        return found
    is_const, value = _constant(prep, node, names)
    path = _dotted(node)
    if is_const:
        kind: tuple[str, Any] = ("const", value)
    elif path and path[0] == "game" and len(path) == 2 and "game" not in names:
        kind = ("game", path[1])
    else:
        base_t = type_of(prep, node.value, names)
        if base_t.name == "player":
            kind = ("player", node.attr)
        else:
            kind = ("table", prep.tables[base_t.name][node.attr][1])
    prep.memo[key] = (node, names, kind)
    return kind


def _eval_attribute(ctx: Ctx, node: Any, names: Names) -> Any:
    kind, what = _attribute_kind(ctx.prep, node, names)
    if kind == "const":
        return what
    if kind == "game":
        return ctx.state[what]
    base = evaluate(ctx, node.value, names)
    if kind == "player":
        return base[what]
    return what[base]


def _subscript_default(prep: Prepared, node: ast.Subscript, names: Names) -> tuple[bool, Any]:
    """(True, default) when the subscript reads a map that is not full."""
    key = ("sub", id(node), id(names))
    hit = prep.memo.get(key)
    if hit is not None and hit[0] is node and hit[1] is names:
        found: tuple[bool, Any] = hit[2]
        return found
    t = type_of(prep, node.value, names)
    out = (True, t.args[1]) if t.name == "map" and not t.full else (False, None)
    prep.memo[key] = (node, names, out)
    return out


def _eval_subscript(ctx: Ctx, node: Any, names: Names) -> Any:
    base = evaluate(ctx, node.value, names)
    key = evaluate(ctx, node.slice, names)
    partial, value_type = _subscript_default(ctx.prep, node, names)
    if partial:
        return base.get(key, _default(value_type))
    return base[key]


def _eval_binop(ctx: Ctx, node: Any, names: Names) -> Any:
    return _BINOPS[type(node.op)](evaluate(ctx, node.left, names),
                                  evaluate(ctx, node.right, names))


def _eval_unaryop(ctx: Ctx, node: Any, names: Names) -> Any:
    value = evaluate(ctx, node.operand, names)
    return (not value) if isinstance(node.op, ast.Not) else -value


def _eval_boolop(ctx: Ctx, node: Any, names: Names) -> Any:
    result: Any = None
    conj = isinstance(node.op, ast.And)
    for v in node.values:
        result = evaluate(ctx, v, names)
        if conj != bool(result):
            return result
    return result


def _eval_compare(ctx: Ctx, node: Any, names: Names) -> Any:
    left = evaluate(ctx, node.left, names)
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = evaluate(ctx, right_node, names)
        if not _CMPOPS[type(op)](left, right):
            return False
        left = right
    return True


def _eval_ifexp(ctx: Ctx, node: Any, names: Names) -> Any:
    if evaluate(ctx, node.test, names):
        return evaluate(ctx, node.body, names)
    return evaluate(ctx, node.orelse, names)


def _eval_list(ctx: Ctx, node: Any, names: Names) -> Any:
    return [evaluate(ctx, e, names) for e in node.elts]


def _eval_other(ctx: Ctx, node: Any, names: Names) -> Any:
    raise StepsError(f"'{ast.unparse(node)}' is not an expression of the effect language")


def _name(ctx: Ctx, n: str, names: Names) -> Any:
    local = names.get(n)
    if local is not None:
        if local.var is not None:
            return ctx.frame[local.var]
        if local.lazy is not None:  # a formula of the row, worked out where it is named
            assert local.lazy_names is not None
            return evaluate(ctx, local.lazy, local.lazy_names)
        return local.const
    prep = ctx.prep
    if n in prep.player:
        return ctx.player[n]
    if n in prep.game:
        return ctx.state[n]
    if n in prep.measures:
        return evaluate(ctx, prep.measures[n], prep.base)
    if n == "player":
        return ctx.player
    raise StepsError(f"unknown name {n!r}")


def _call(ctx: Ctx, node: ast.Call, names: Names) -> Any:
    assert isinstance(node.func, ast.Name)
    fn = node.func.id
    if fn == "formula":
        path = _dotted(node.args[0])
        assert path is not None and path[0] == "rules"
        return _formula(ctx, str(_lookup(ctx.prep.model.data, path[1:])))
    if fn == "cost":  # a cost of rules/court.yaml, for the acting player, with a context
        return _cost(ctx, node, names)
    args = [evaluate(ctx, a, names) for a in node.args]
    if fn in ctx.prep.kinds and fn not in typed.FUNCTIONS:  # `noble(card.type)`: the same id
        (value,) = args
        return value
    if fn in ("min", "max") and len(args) >= 2:
        return min(args) if fn == "min" else max(args)
    (a,) = args
    if fn == "len":
        return len(a)
    if fn in ("sum", "min", "max"):
        values = list(a.values() if isinstance(a, dict) else a)
        if fn == "sum":
            return sum(values)
        return min(values) if fn == "min" else max(values)
    if fn == "any":
        return any(a)
    if fn == "all":
        return all(a)
    if fn == "sorted":
        return sorted(a)
    if fn == "reversed":
        return list(reversed(a))
    if fn == "range":
        return list(range(a))
    if fn == "first":
        items = list(a)
        if not items:
            raise StepsError(f"first() of an empty list: {ast.unparse(node)}")
        return items[0]
    raise StepsError(f"unknown function {fn!r}")


def _cost(ctx: Ctx, node: ast.Call, names: Names) -> Any:
    """`cost('visit-cost', other_officials=n)`: the cost's formula evaluated by the formula
    interpreter (tools/interp.py) for the acting player, on the state as it is now."""
    from tools import interp  # (interp imports this module)

    first = node.args[0]
    assert isinstance(first, ast.Constant)
    given: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg not in ctx.prep.contexts:
            raise StepsError(f"a cost is given no {kw.arg!r}")
        given[ctx.prep.contexts[kw.arg]] = evaluate(ctx, kw.value, names)
    try:
        return interp.cost(ctx.prep.model, ctx.state, ctx.seat, str(first.value),
                           interp.Context(**given))
    except interp.InterpError as exc:
        raise StepsError(str(exc)) from None


def _formula(ctx: Ctx, source: str) -> Any:
    """A formula of the rules data (the formula language), its names read by evaluating their
    `value:` of rules/vocabulary.yaml (`item` bound for a name per item)."""
    rows = {str(r["name"]): r for r in ctx.prep.model.data["vocabulary"]["names"]
            if isinstance(r, Mapping) and "value" in r}
    env = {n: expr.NameInfo("int") for n in rows}
    f = expr.parse(source, env)

    def lookup(name: str, item: str | None) -> Any:
        value = rows[name]["value"]
        if item is None:
            return evaluate(ctx, _expr(value), ctx.prep.base)
        names = {**ctx.prep.base, "item": Local(TEXT, "v_item")}
        inner = Ctx(ctx.prep, ctx.state, ctx.seat, {**ctx.frame, "v_item": item}, ctx.player)
        return evaluate(inner, _expr(value), names)

    return expr.evaluate(f, lookup)


def name_value(model: Model, state: State, seat: int, name: str, item: str | None) -> Any:
    """What a formula name reads for the player in `seat`: its `value:` of
    rules/vocabulary.yaml evaluated on the saved game (`item` bound for a name per item)."""
    prep = prepare(model)
    ctx = Ctx(prep, dict(state), seat, {})
    for row in model.data["vocabulary"]["names"]:
        if isinstance(row, Mapping) and row.get("name") == name and "value" in row:
            if item is None:
                return evaluate(ctx, _expr(row["value"]), prep.base)
            names = {**prep.base, "item": Local(TEXT, "v_item")}
            ctx.frame["v_item"] = item
            return evaluate(ctx, _expr(row["value"]), names)
    raise StepsError(f"no value for the name {name!r}")


def _in_order(ctx: Ctx, node: ast.expr, names: Names, source: Any) -> Any:
    """A table is gone through in the order of its keys' kind (as rules/state.yaml declares
    it), whatever the order of the saved JSON."""
    if not isinstance(source, dict):
        return source
    kind = ctx.prep.model.state.kind(type_of(ctx.prep, node, names).args[0].name)
    if kind is None or kind.values is None:
        return sorted(source)
    return [k for k in kind.values if k in source]


def _comprehension(ctx: Ctx, node: ast.ListComp | ast.GeneratorExp, names: Names) -> list[Any]:
    gen = node.generators[0]
    source = _in_order(ctx, gen.iter, names, evaluate(ctx, gen.iter, names))
    inner_names = _comp_names(ctx.prep, node, names)
    assert isinstance(gen.target, ast.Name)
    var = typed.local_code(gen.target.id)
    inner = Ctx(ctx.prep, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)  # its own scope
    out = []
    frame = inner.frame
    elt = node.elt
    ifs = gen.ifs
    for item in source:
        frame[var] = item
        for c in ifs:
            if not evaluate(inner, c, inner_names):
                break
        else:
            out.append(evaluate(inner, elt, inner_names))
    return out


_EVAL: Mapping[type, Callable[[Ctx, Any, Names], Any]] = collections.defaultdict(
    lambda: _eval_other, {
        ast.Constant: _eval_constant,
        ast.Name: _eval_name,
        ast.Attribute: _eval_attribute,
        ast.Subscript: _eval_subscript,
        ast.BinOp: _eval_binop,
        ast.UnaryOp: _eval_unaryop,
        ast.BoolOp: _eval_boolop,
        ast.Compare: _eval_compare,
        ast.IfExp: _eval_ifexp,
        ast.Call: lambda ctx, node, names: _call(ctx, node, names),
        ast.ListComp: lambda ctx, node, names: _comprehension(ctx, node, names),
        ast.GeneratorExp: lambda ctx, node, names: _comprehension(ctx, node, names),
        ast.List: _eval_list,
        ast.Dict: lambda ctx, node, names: {},
    })


# --- Places: what a step may change -------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A slot of the state or of the frame: `container[key]`, with the field's bounds."""

    container: Any
    key: Any
    lo: int | None
    hi: int | None


def _is_place(ctx: Ctx, node: ast.expr, names: Names) -> bool:
    """Whether the checker sees the expression as a field of the state, an entry of one (of
    a map) or a local."""
    if isinstance(node, ast.Name):
        return node.id in names or node.id in ctx.prep.player or node.id in ctx.prep.game
    if isinstance(node, ast.Attribute):
        if _constant(ctx.prep, node, names)[0]:
            return False
        path = _dotted(node)
        if path and path[0] == "game" and len(path) == 2 and "game" not in names:
            return True
        return type_of(ctx.prep, node.value, names).name == "player"
    if isinstance(node, ast.Subscript):
        return (type_of(ctx.prep, node.value, names).name == "map"
                and _is_place(ctx, node.value, names))
    return False


def _place(ctx: Ctx, node: ast.expr, names: Names) -> Place:
    prep = ctx.prep
    if isinstance(node, ast.Name):
        local = names.get(node.id)
        if local is not None:
            if local.var is None:
                raise StepsError(f"'{node.id}' cannot be changed")
            return Place(ctx.frame, local.var, None, None)
        if node.id in prep.player:
            f = prep.player[node.id]
            return Place(ctx.player, node.id, f.lo, f.hi)
        f = prep.game[node.id]
        return Place(ctx.state, node.id, f.lo, f.hi)
    if isinstance(node, ast.Attribute):
        path = _dotted(node)
        if path and path[0] == "game" and len(path) == 2 and "game" not in names:
            f = prep.game[path[1]]
            return Place(ctx.state, path[1], f.lo, f.hi)
        f = prep.player[node.attr]
        return Place(evaluate(ctx, node.value, names), node.attr, f.lo, f.hi)
    if isinstance(node, ast.Subscript):
        outer = _place(ctx, node.value, names)
        # the container as read: a missing entry of a map that is not full is a new empty
        # value, and what is written into it is lost (as in the engine)
        return Place(evaluate(ctx, node.value, names), evaluate(ctx, node.slice, names),
                     outer.lo, outer.hi)
    raise StepsError(f"'{ast.unparse(node)}' is not a place of the state")


# --- Steps --------------------------------------------------------------------------------


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def _reason(ctx: Ctx, text: Any, names: Names) -> str:
    """A refusal's words, with the value of each {EXPR} in them."""
    if not isinstance(text, str):
        return str(text)
    return _PLACEHOLDER.sub(lambda m: str(evaluate(ctx, _parse(m.group(1)), names)), text)


@dataclass(frozen=True)
class _Options:
    values: list[Any]
    name: str
    type: VType
    several: tuple[list[Any], int, int] | None  # (the unique items, min, max) of a min/max


def _choice_type(ctx: Ctx, s: st.Choose, names: Names) -> VType:
    t = type_of(ctx.prep, _expr(s.source), names).args[0]
    if s.several:
        t = typed.list_of(t)
    return replace(t, optional=True) if s.optional else t


def _options(ctx: Ctx, s: st.Choose, names: Names) -> _Options:
    """The options of a choose step: the items of `from` that pass `where`, each once, in
    order; with min/max the combinations of the sorted unique items, with up_to every set
    of at most N of them in counting order (and `leads`: each way to list its leaders first);
    None first if optional."""
    node = _expr(s.source)
    items = list(evaluate(ctx, node, names))
    if s.where is not None:
        item = type_of(ctx.prep, node, names).args[0]
        inner_names = ctx.prep.extend(names, "it", item, "v_it")
        inner = Ctx(ctx.prep, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
        cond = _expr(s.where)
        kept = []
        for x in items:
            inner.frame["v_it"] = x
            if evaluate(inner, cond, inner_names):
                kept.append(x)
        items = kept
    unique = list(dict.fromkeys(items))
    several = None
    if s.up_to is not None:  # any set of at most N of the sorted items, in counting order
        hi = evaluate(ctx, _expr(s.up_to), names)
        several = (unique, 0, hi)
        ordered = sorted(unique)
        values = [tuple(x for i, x in enumerate(ordered) if mask >> i & 1)
                  for mask in range(1 << len(ordered)) if bin(mask).count("1") <= hi]
        if s.leads is not None:
            item = type_of(ctx.prep, node, names).args[0]
            values = [v for chosen in values for v in _led(ctx, s.leads, chosen, item, names)]
    elif s.min is not None or s.max is not None:
        lo = evaluate(ctx, _expr(1 if s.min is None else s.min), names)
        hi = evaluate(ctx, _expr(s.max if s.max is not None else 1 if s.min is None else s.min),
                      names)
        several = (unique, lo, hi)
        ordered = sorted(unique)
        values: list[Any] = [c for k in range(lo, hi + 1) for c in combinations(ordered, k)]
    else:
        values = unique
    if s.optional:
        values = [None, *values]
    return _Options(values, s.as_, _choice_type(ctx, s, names), several)


def _led(ctx: Ctx, leads: st.Leads, chosen: tuple[Any, ...], item: VType,
         names: Names) -> list[tuple[Any, ...]]:
    """The ways to list a choice of several so that one item of each group leads: the items
    with the same `by` (where `where` holds) form a group, the groups in the order they first
    appear, each of its items in turn; the leaders come first, sorted, then the others."""
    inner_names = ctx.prep.extend(names, "it", item, "v_it")
    inner = Ctx(ctx.prep, ctx.state, ctx.seat, dict(ctx.frame), ctx.player)
    groups: dict[Any, list[Any]] = {}
    for x in chosen:
        inner.frame["v_it"] = x
        if leads.where is not None and not evaluate(inner, _expr(leads.where), inner_names):
            continue
        groups.setdefault(evaluate(inner, _expr(leads.by), inner_names), []).append(x)
    picks: list[list[Any]] = [[]]
    for xs in groups.values():
        picks = [[*pick, x] for pick in picks for x in xs]
    return [(*sorted(pick), *[x for x in chosen if x not in pick]) for pick in picks]


def _bind(ctx: Ctx, s: st.Choose, names: Names) -> Names:
    name = s.as_
    return ctx.prep.extend(names, name, _choice_type(ctx, s, names), typed.local_code(name))


def _let(ctx: Ctx, s: st.Let, names: Names) -> Names:
    for name, source in s.names:
        node = _expr(source)
        var = typed.local_code(str(name))
        ctx.frame[var] = evaluate(ctx, node, names)
        names = ctx.prep.extend(names, str(name), type_of(ctx.prep, node, names), var)
    return names


def _non_negative(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source >= 0


def _non_positive(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source <= 0


def _start(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
           choices: Sequence[Any]) -> tuple[Ctx, Names]:
    """A procedure's frame: its parameters and its choices, by their names in the engine."""
    if pid not in prep.ps.procs:
        raise StepsError(f"no procedure {pid!r}")
    proc = prep.ps.procs[pid]
    if len(args) != len(proc.params):
        raise StepsError(f"{pid} takes {len(proc.params)} arguments, not {len(args)}")
    if len(choices) != len(proc.choices):
        raise StepsError(f"{pid} makes {len(proc.choices)} choices, not {len(choices)}")
    frame: dict[str, Any] = {"seat": seat}
    for prm, value in zip(proc.params, args, strict=True):
        frame[typed.local_code(prm.name)] = value
    for c, value in zip(proc.choices, choices, strict=True):
        frame[typed.local_code(c.as_)] = value
    return Ctx(prep, state, seat, frame, pid=pid), prep.names_of(pid)


def _run(prep: Prepared, state: dict[str, Any], seat: int, pid: str, args: Sequence[Any],
         choices: Sequence[Any]) -> None:
    """The effects of a procedure (its guard's lets first, then the steps after its guard)."""
    proc = prep.ps.procs[pid]
    ctx, names = _start(prep, state, seat, pid, args, choices)
    for s in proc.guard:
        match s:
            case st.Let():
                names = _let(ctx, s, names)
            case st.Choose():
                names = _bind(ctx, s, names)
            case st.Require():
                pass  # (checked by `why`)
            case (st.Gain() | st.Set() | st.Move() | st.Drop() | st.If() | st.ForEach()
                  | st.Repeat() | st.Do() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                pass  # never in a guard
            case _:
                assert_never(s)
    _block(ctx, proc.effects, names)


def _block(ctx: Ctx, steps: Sequence[st.Step], names: Names) -> None:
    for s in steps:
        names = _effect(ctx, s, names)


def _effect(ctx: Ctx, s: st.Step, names: Names) -> Names:
    match s:
        case st.Let():
            return _let(ctx, s, names)
        case st.Gain() | st.Set():
            for target, source in s.places:
                node = _expr(target)
                value = evaluate(ctx, _expr(source), names)
                place = _place(ctx, node, names)
                if isinstance(s, st.Gain):
                    value = evaluate(ctx, node, names) + value
                    if place.lo is not None and not _non_negative(source):
                        value = max(place.lo, value)
                    if not _non_positive(source):  # no declared maximum: a save's 2**63 - 1
                        value = min(2**63 - 1 if place.hi is None else place.hi, value)
                elif (place.container is not ctx.frame and type(value) is int
                      and not (isinstance(source, int) and not isinstance(source, bool))):
                    # a number of the state set from a computed value: within its declared
                    # bounds and a save's 64 bits, as the engine does (lang/steps.py)
                    value = min(2**63 - 1 if place.hi is None else place.hi,
                                max(-(2**63) if place.lo is None else place.lo, value))
                place.container[place.key] = value
        case st.Move():
            _move(ctx, s, names)
        case st.If():  # (narrowing `x is not None` changes no value)
            _block(ctx, s.then if evaluate(ctx, _expr(s.cond), names) else s.orelse, names)
        case st.ForEach():
            node = _expr(s.source)
            src = evaluate(ctx, node, names)
            over = list(src) if _is_place(ctx, node, names) else src  # the state's own: a copy
            over = _in_order(ctx, node, names, over if not isinstance(src, dict) else src)
            var = typed.local_code(s.var)
            inner = ctx.prep.extend(names, s.var, type_of(ctx.prep, node, names).args[0], var)
            for item in over:
                ctx.frame[var] = item
                _block(ctx, s.body, inner)
        case st.Repeat():
            for _ in range(evaluate(ctx, _expr(s.count), names)):
                _block(ctx, s.body, names)
        case st.Do():  # a procedure's id, or an expression whose value names one (or none)
            pid = _do_target(ctx, s, names)
            if pid is not None:
                _run(ctx.prep, ctx.state, ctx.seat, pid,
                     _args(ctx, pid, dict(s.with_ or ()), names),
                     [None] * len(ctx.prep.ps.procs[pid].choices))
        case st.Apply():  # a bundle of effects, none of its choices made
            bundle, noble = _bundle(ctx, s, names)
            _run_bundle(ctx, bundle, noble, {})
        case st.Raise():  # raise: EVENT, or {event: EVENT, with: {PARAM: EXPR}}
            given = dict(s.with_ or ())
            for hook in ctx.prep.ps.hooks.get(s.event, ()):
                _run(ctx.prep, ctx.state, ctx.seat, hook, _args(ctx, hook, given, names), ())
        case st.Drop():  # an entry taken out of a table of the state (if it is there)
            node = _expr(s.place)
            if not isinstance(node, ast.Subscript):
                raise StepsError(f"'{s.place}' is not an entry of a table")
            evaluate(ctx, node.value, names).pop(evaluate(ctx, node.slice, names), None)
        case st.Shuffle():  # with the procedure's seeded stream (the game's seed and its id)
            if ctx.stream is None:
                ctx.stream = random.Random(f"{ctx.state['seed']}:{ctx.pid}")
            ctx.stream.shuffle(_list_at(ctx, _expr(s.place), names))
        case st.New():  # a new player: the fields given, the others at their defaults
            player = {f.id: copy.deepcopy(f.default) for f in ctx.prep.model.state.player}
            for name, source in s.with_ or ():
                player[name] = evaluate(ctx, _expr(source), names)
            _list_at(ctx, _expr(s.place), names).append(player)
        case st.Require() | st.Choose():
            raise StepsError(f"a {s.kind} step cannot stand among effects")
        case _:
            assert_never(s)
    return names


def _list_at(ctx: Ctx, node: ast.expr, names: Names) -> list[Any]:
    """The state's own list a step changes in place (an entry of a table must be there)."""
    if isinstance(node, ast.Subscript):
        found = evaluate(ctx, node.value, names)[evaluate(ctx, node.slice, names)]
    else:
        found = evaluate(ctx, node, names)
    if not isinstance(found, list):
        raise StepsError(f"'{ast.unparse(node)}' is not a list of the state")
    return found


def _do_target(ctx: Ctx, s: st.Do, names: Names) -> str | None:
    """The procedure a do step carries out: its id, or the procedure its expression's value
    names (None: a value that names no procedure does nothing)."""
    procs = ctx.prep.ps.procs
    if s.proc in procs:
        return s.proc
    value = evaluate(ctx, _expr(s.proc), names)
    return value if isinstance(value, str) and value in procs else None


Bundle = tuple[tuple[str, int], ...]


def _bundle(ctx: Ctx, s: st.Apply, names: Names) -> tuple[Bundle, Any]:
    """The bundle of effects an apply step carries out, (effect id, amount) pairs in the
    order written, and the Noble they are given."""
    value = evaluate(ctx, _expr(s.effects), names)
    if isinstance(value, Mapping):
        value = tuple((str(e), a) for e, a in value.items())
    if value is None:
        value = ()
    given = dict(s.params).get("noble")
    noble = evaluate(ctx, _expr(given), names) if given is not None else None
    return tuple(value), noble


def _column_names(ctx: Ctx, s: st.Apply, names: Names) -> list[str]:
    """The choices the bundles of an apply step's column make (`state_action.effects`: of
    every State action), which a move of this step makes only where its own bundle does."""
    node = _expr(s.effects)
    if not isinstance(node, ast.Attribute) or _constant(ctx.prep, node, names)[0]:
        return []
    base = type_of(ctx.prep, node.value, names)
    column = ctx.prep.tables.get(base.name, {}).get(node.attr)
    if column is None:
        return []
    out: list[str] = []
    for bundle in column[1].values():
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


def _args(ctx: Ctx, pid: str, given: Mapping[str, Any], names: Names) -> list[Any]:
    """The arguments of a procedure done (or a hook run): each parameter's expression, or
    None for an optional one not given."""
    return [evaluate(ctx, _expr(given[prm.name]), names) if prm.name in given else None
            for prm in ctx.prep.ps.procs[pid].params]


def _move(ctx: Ctx, s: st.Move, names: Names) -> None:
    """move item (remove it from `from`, append it to `to`), top / first N (popped from the
    end / the start while any are left) or all (`to` extended, `from` cleared)."""
    mode = s.mode
    src = _expr(s.from_) if s.from_ is not None else None
    dst = _expr(s.to) if s.to is not None else None

    def read(node: ast.expr) -> Any:
        return evaluate(ctx, node, names)

    if mode == "item":
        item = read(_expr(s.what))
        if src is not None:
            read(src).remove(item)
        if dst is not None:
            read(dst).append(item)
        return
    if src is None:
        raise StepsError(f"move {mode} needs a from")
    if mode == "all":
        if dst is not None:
            read(dst).extend(read(src))
        read(src).clear()
        return
    n = read(_expr(s.what))
    for _ in range(min(n, len(read(src)))):
        taken = read(src).pop() if mode == "top" else read(src).pop(0)
        if dst is not None:
            read(dst).append(taken)


# --- The three functions of a procedure ---------------------------------------------------


def _enumerate(ctx: Ctx, guard: Sequence[st.Step], names: Names, chosen: Choice,
               out: list[Choice]) -> None:
    """The choices the guard allows from its step on, appended to `out`: a require that
    fails refuses every choice made so far (the innermost one is skipped)."""
    for i, s in enumerate(guard):
        match s:
            case st.Let():
                names = _let(ctx, s, names)
            case st.Require():
                if not evaluate(ctx, _expr(s.cond), names):
                    return
            case st.Choose():
                o = _options(ctx, s, names)
                inner = _bind(ctx, s, names)
                var = typed.local_code(o.name)
                for value in o.values:
                    ctx.frame[var] = value
                    _enumerate(ctx, guard[i + 1:], inner, (*chosen, value), out)
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
    ctx, names = _start(prep, state, seat, pid, args, [None] * len(proc.choices))
    out: list[Choice] = []
    _enumerate(ctx, proc.guard, names, (), out)
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
    ctx, names = _start(prep, state, seat, pid, args, choices)
    for s in proc.guard:
        rule = _reason(ctx, s.rule, names) if s.rule else proc.rule
        match s:
            case st.Let():
                names = _let(ctx, s, names)
            case st.Require():
                if not evaluate(ctx, _expr(s.cond), names):
                    return rule, _reason(ctx, s.reason or f"{s.cond} does not hold", names)
            case st.Choose():
                o = _options(ctx, s, names)
                refused = _choice_refusal(ctx, s, names, o,
                                          ctx.frame[typed.local_code(o.name)], rule)
                if refused is not None:
                    return refused
                names = _bind(ctx, s, names)
            case (st.Gain() | st.Set() | st.Move() | st.Drop() | st.If() | st.ForEach()
                  | st.Repeat() | st.Do() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                raise StepsError(f"a {s.kind} step is no step of a guard")
            case _:
                assert_never(s)
    return None


def _choice_refusal(ctx: Ctx, s: st.Choose, names: Names, o: _Options, value: Any, rule: str
                    ) -> Refusal | None:
    """Why a choose step refuses a value: not an option (with min/max: a tuple of distinct
    options, then their number)."""
    reason = s.reason or f"that {o.name} is not one to choose"
    if value is None and o.several is None and not s.optional \
            and st.shows_choice(s):  # words that show the value cannot say none was chosen
        kinds = {k.id: k.text for k in ctx.prep.model.state.kinds}
        return rule, "choose " + kinds.get(o.type.name, o.name.replace("_", " "))
    if o.several is not None:
        items, lo, hi = o.several
        if (type(value) is not tuple or len(set(value)) != len(value)
                or any(x not in items for x in value)):
            return rule, _reason(ctx, reason, names)
        if len(value) < lo:
            return rule, _reason(ctx, reason, names)
        if len(value) > hi:
            if not s.count_reason:  # the numbers, not their expressions
                return s.count_rule or rule, (
                    f"choose at most {hi} of them" if s.up_to is not None else
                    f"choose between {lo} and {hi} of them")
            return s.count_rule or rule, _reason(ctx, s.count_reason, names)
    elif value not in o.values:
        return rule, _reason(ctx, reason, names)
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
    ctx = Ctx(prep, _copy(state), seat, {"seat": seat})
    found: list[dict[str, Any]] = []
    _walk(ctx, list(action.steps), prep.action_names(kind), {}, None, found, action)
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
    ctx = Ctx(prep, _copy(state), seat, {"seat": seat})
    _walk(ctx, list(action.steps), prep.action_names(kind), {}, move, None, action)
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


def _decides(prep: Prepared, steps: Sequence[st.Step]) -> bool:
    """Whether some step may choose or refuse: a choose, a require, a bundle applied, a do of
    a procedure whose guard chooses or requires (or of a procedure an expression names)."""
    for s in steps:
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


def _walk(ctx: Ctx, steps: list[st.Step], names: Names, chosen: dict[str, Any],
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
        rule = _reason(ctx, s.rule, names) if s.rule else action.rule
        match s:
            case st.Choose():
                o = _options(ctx, s, names)
                inner = _bind(ctx, s, names)
                var = typed.local_code(o.name)
                if move is None:
                    for value in o.values:
                        branch = _fork(ctx)
                        branch.frame[var] = value
                        _walk(branch, rest, inner, {**chosen, o.name: value}, None, out, action)
                    return
                value = _given(move, o.name, o.type)
                ctx.frame[var] = value  # (its words may show the value chosen)
                refused = _choice_refusal(ctx, s, inner, o, value, rule)
                if refused is not None:
                    raise IllegalAction(*refused)
                chosen = {**chosen, o.name: value}
                names = inner
            case st.Require():
                if not evaluate(ctx, _expr(s.cond), names):
                    if move is None:
                        return
                    raise IllegalAction(rule, _reason(ctx, s.reason
                                                      or f"{s.cond} does not hold", names))
            case st.If():  # the branch taken, then the rest (its choices are the move's)
                branch_steps = s.then if evaluate(ctx, _expr(s.cond), names) else s.orelse
                steps = [*branch_steps, *rest]
                i = 0
                continue
            case st.Do():
                pid = _do_target(ctx, s, names)
                if pid is None:
                    words = _reason(ctx, s.none_reason, names) if s.none_reason else None
                    idle = idle or (rule, words)
                else:
                    proc = prep.ps.procs[pid]
                    args = _args(ctx, pid, dict(s.with_ or ()), names)
                    own = [c.as_ for c in proc.choices]
                    if move is None:
                        for option in _opts(prep, ctx.state, ctx.seat, pid, args):
                            branch = _fork(ctx)
                            _run(prep, branch.state, branch.seat, pid, args, option)
                            _walk(branch, rest, names,
                                  {**chosen, **dict(zip(own, option, strict=True))}, None, out,
                                  action)
                        return
                    c = [_given(move, n, typed.list_of(INT) if x.several else None)
                         for n, x in zip(own, proc.choices, strict=True)]
                    refused = _why(prep, ctx.state, ctx.seat, pid, args, c)
                    if refused is not None:
                        if s.reason and not _opts(prep, ctx.state, ctx.seat, pid, args):
                            # nothing at all can be done: the action is refused (its own rule)
                            raise IllegalAction(action.rule, _reason(ctx, s.reason, names)
                                                + ": " + refused[1])
                        raise IllegalAction(*refused)
                    _run(prep, ctx.state, ctx.seat, pid, args, c)
                    chosen = {**chosen, **dict(zip(own, c, strict=True))}
            case st.Apply() if s.choices is not False:
                # (`choices: {favor: NAME}`: the move field of a choice; false: none is made)
                bundle, noble = _bundle(ctx, s, names)
                field_of: Mapping[str, str] = dict(s.choices or ())

                if move is None:
                    for made_here in _bundle_opts(ctx, bundle, noble):
                        branch = _fork(ctx)
                        _run_bundle(branch, bundle, noble, made_here)
                        _walk(branch, rest, names, {**chosen, **_renamed(field_of, made_here)},
                              None, out, action)
                    return
                made = {n: _given(move, str(field_of.get(n, n)), None)
                        for n in _bundle_names(ctx, bundle)}
                for other in _column_names(ctx, s, names):  # a choice of the column's others
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
            case (st.Gain() | st.Set() | st.Let() | st.Move() | st.Drop() | st.ForEach()
                  | st.Repeat() | st.Raise() | st.Apply() | st.Shuffle() | st.New()):
                names = _effect(ctx, s, names)
            case _:
                assert_never(s)
        i += 1
    if move is None:
        assert out is not None
        out.append(chosen)
        return
    for key, value in move.items():  # every move has one form: nothing else may be chosen
        if key in ("kind", "player") or key in chosen:
            continue
        if value not in (None, False, [], ()):  # (a do that did nothing: by its rule, words)
            words = f"a {move['kind']} move does not choose {key.replace('_', ' ')}"
            if idle is None:
                raise IllegalAction(action.rule, words)
            raise IllegalAction(idle[0], idle[1] or words)
