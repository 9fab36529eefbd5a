"""The procedures of rules/ (effects, shared procedures, hooks, Noble actions) and the scope
their steps are checked and compiled in: the declared state, the rules' tables, the measures.

The model builder reads them into a `ProcSet` (with the problems reading them finds); the lower
pass (pipeline.py; emit/engine/procs.py `lower`) compiles each rule set's once, with
`LocatedCompiler`, into the engine's functions and the problems that `model.build` reports
located.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from lisboa_rules.core.diagnostics import suggest
from lisboa_rules.core.limits import MAX_WORK
from lisboa_rules.ir import cost
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import steps as st
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import Name, Scope, VType
from lisboa_rules.model.state import StateDecl, StateType, TypeSyntaxError, parse_type


def vtype(t: StateType, full: bool = True) -> VType:
    return VType(t.name, tuple(vtype(a, False) for a in t.args), t.optional, full)


@dataclass
class Tables:
    """The columns of the rules' tables that steps read: each table of values once, by an id
    of its own (`kind.column`; `kind.column.2` for another table of the same column in another
    rule set), shared between the rule sets with the same values; a back end names them."""

    names: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (kind, col, repr)
    values: dict[str, dict[Any, Any]] = field(default_factory=dict)
    refs: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # id -> (kind, col, n)

    def name(self, kind: str, col: str, values: dict[Any, Any]) -> str:
        key = (kind, col, repr(sorted(values.items(), key=repr)))
        found = self.names.get(key)
        if found is None:
            n = 1 + sum(1 for k, c, _n in self.refs.values() if (k, c) == (kind, col))
            found = f"{kind}.{col}" if n == 1 else f"{kind}.{col}.{n}"
            self.names[key] = found
            self.values[found] = values
            self.refs[found] = (kind, col, n)
        return found


def _rows(data: Mapping[str, Any], path: str) -> Any:
    node: Any = data
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _of_kind(values: Iterable[Any], ids: Mapping[str, frozenset[Any]]) -> str | None:
    """The one kind whose ids hold every value, or None."""
    got = {v for v in values if v is not None}
    found = [k for k, known in ids.items() if got and got <= known]
    return found[0] if len(found) == 1 else None


def _columns(rows: list[Any], key: str, ids: Mapping[str, frozenset[Any]] | None = None
             ) -> dict[str, tuple[VType, dict[Any, Any]]]:
    """The readable columns of a table: numbers (missing: 0), text (missing: None) and lists
    of plain values (missing: empty)."""
    out: dict[str, tuple[VType, dict[Any, Any]]] = {}
    flat = []
    for r in rows:  # a mapping of plain values in a row is read as columns `reign_flag`, ...
        if not isinstance(r, Mapping):
            flat.append(r)
            continue
        row = dict(r)
        for c, v in r.items():
            if isinstance(v, Mapping) and not all(
                    isinstance(x, int) and not isinstance(x, bool) for x in v.values()):
                row.update({f"{c}_{k}": x for k, x in v.items() if f"{c}_{k}" not in r})
        flat.append(row)
    rows = flat
    cols: list[str] = []
    for r in rows:
        if isinstance(r, Mapping):
            cols += [c for c in r if c not in cols and c != key]
    for col in cols:
        present = [r[col] for r in rows if isinstance(r, Mapping) and col in r]
        missing: Any
        if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            t, missing = typed.INT, 0
        elif all(isinstance(v, str) for v in present):
            kind = _of_kind(present, ids or {})  # a column of ids of one kind is of that kind
            t, missing = VType(kind or "text", (), len(present) < len(rows)), None
        elif all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in present):
            kind = _of_kind([x for v in present for x in v], ids or {})
            t, missing = typed.list_of(VType(kind) if kind else typed.TEXT), []
        elif present and all(isinstance(v, Mapping) and all(
                isinstance(a, int) and not isinstance(a, bool) for a in v.values())
                for v in present):
            # a bundle of effects ({reis: 3}): carried out by an `apply` step
            values = {r[key]: tuple((str(e), a) for e, a in r.get(col, {}).items())
                      for r in rows if isinstance(r, Mapping) and key in r}
            out[col] = (typed.EFFECTS, values)
            continue
        else:
            continue
        values = {r[key]: r.get(col, missing) for r in rows
                  if isinstance(r, Mapping) and key in r}
        if col in ("source", "assumptions", "text", "title"):
            continue
        out[col] = (t, values)
    return out


# The last scope made with tables of its own (the model builder asks for the same one twice per
# rule set: for the state's invariants and for the vocabulary): (data, kinds, player fields,
# game fields, measures) -> (the scope, the measures' problems)
_LAST_SCOPE: list[tuple[tuple[Any, ...], Scope, list[tuple[str, str, str]]]] = []


def state_scope(decl: StateDecl, data: Mapping[str, Any], measures: Iterable[tuple[str, Any]],
                tables: Tables | None = None,
                problems: list[tuple[str, str, str]] | None = None) -> Scope:
    """The scope of a step: the acting player (`p`, at `seat`), the game (`g`), the tables of
    the kinds that come from rows of the rules data, and the measures (checked in order; a
    problem is (measure id, code, message)). Without `tables`, the same scope as the last
    call's for the same data (the same object), the state's same kinds and fields and the
    same measures is that call's scope (nothing changes a scope once made)."""
    if tables is not None:
        return _state_scope(decl, data, measures, tables, problems)
    measures = tuple(measures)
    key = (decl.kinds, decl.player, decl.game, measures)
    if _LAST_SCOPE:
        (known_data, *known_key), scope, found = _LAST_SCOPE[0]
        if known_data is data and tuple(known_key) == key:
            if problems is not None:
                problems.extend(found)
            return scope
    found = []
    scope = _state_scope(decl, data, measures, Tables(), found)
    _LAST_SCOPE[:] = [((data, *key), scope, found)]
    if problems is not None:
        problems.extend(found)
    return scope


def _synonyms(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each other word of a name (`aka:` of rules/vocabulary.yaml's names) -> the names it
    may mean."""
    out: dict[str, tuple[str, ...]] = {}
    for row in _rows(data, "vocabulary.names") or []:
        if isinstance(row, Mapping):
            for word in row.get("aka", ()):
                out[str(word)] = (*out.get(str(word), ()), str(row.get("name")))
    return out


def _state_scope(decl: StateDecl, data: Mapping[str, Any], measures: Iterable[tuple[str, Any]],
                 tables: Tables, problems: list[tuple[str, str, str]] | None) -> Scope:
    player = {f.id: Name(vtype(f.type, f.full), ir.PlayerField(f.id, ir.Me()), f.min, f.max,
                         "player." + f.id)
              for f in decl.player}
    game = {f.id: Name(vtype(f.type, f.full), ir.GameField(f.id), f.min, f.max, "game." + f.id)
            for f in decl.game}
    int_kinds = frozenset(k.id for k in decl.kinds if k.of == "int")
    cols: dict[str, dict[str, tuple[VType, str]]] = {}
    ids: dict[str, frozenset[Any]] = {}
    kind_sources: dict[tuple[str, ...], str] = {}
    for k in decl.kinds:
        rows = _rows(data, k.source) if k.source else None
        if k.values is not None:
            ids[k.id] = frozenset(k.values)
        elif isinstance(rows, list) and k.key:
            ids[k.id] = frozenset(r.get(k.key) for r in rows if isinstance(r, Mapping))
        if k.source and k.key:
            kind_sources[(*k.source.split("."), k.key)] = k.id
    for k in decl.kinds:
        source, key = k.source, k.key
        if not source or not key:
            continue
        rows = _rows(data, source)
        if not isinstance(rows, list):
            continue
        cols[k.id] = {c: (t, tables.name(k.id, c, v))
                      for c, (t, v) in _columns(rows, key, ids).items()}
    scope = Scope(locals={"seat": Name(VType("seat"), ir.Seat())}, player=player, game=game,
                  tables=cols, int_kinds=int_kinds, kinds=frozenset(k.id for k in decl.kinds),
                  data=typed.data_lookup(data),
                  kind_values={k.id: k.values for k in decl.kinds if k.values is not None},
                  kind_ids=dict(ids),
                  kind_words={k.id: k.text for k in decl.kinds},
                  kind_sources=kind_sources,
                  costs=frozenset(str(c.get("id")) for c in _rows(data, "court.costs") or []
                                  if isinstance(c, Mapping)),
                  contexts=frozenset(str(v["context"]) for v in _rows(data, "vocabulary.names")
                                     or [] if isinstance(v, Mapping) and "context" in v),
                  required=frozenset(f.id for f in decl.player if f.required),
                  items=_items(decl, ids), synonyms=_synonyms(data),
                  max_items={f"{scope}.{f.id}": f.max_items
                             for scope, fields in (("player", decl.player), ("game", decl.game))
                             for f in fields if f.max_items is not None})
    bounds = {f: (n.lo, n.hi) for names in (scope.player, scope.game) for n in names.values()
              if (f := n.field) is not None}
    for mid, source in measures:
        try:
            t = typed.check(source, scope)
        except typed.ExprError as exc:
            if problems is not None:
                problems.append((mid, exc.code, exc.message))
            continue
        # a measure is read where no step bounds it (scoring, triggers, tie-breakers): its
        # own work is bounded here (ir/cost.py)
        work = cost.Context(bounds, scope.items).work(t.node)
        if work.count > MAX_WORK:
            if problems is not None:
                problems.append((mid, "cost-unbounded", (
                    f"reading it may do {'at least ' if work.partial else ''}"
                    f"{min(work.count, cost.CAP):,} units of work, over the limit of "
                    f"{MAX_WORK:,}: bound it with a smaller range or fewer comprehensions "
                    "inside one another")))
            continue
        scope.measures[mid] = Name(t.type, ir.Measure(mid, t.node, t.type))
    return scope


def _items(decl: StateDecl, ids: Mapping[str, frozenset[Any]]) -> dict[str, int]:
    """The most items each list of the state holds (ir/cost.py): its declared `max_items`, or
    for a list a conserved kind's ids live in (each id once: no `count`), the kind's ids. A
    list inside a table of the state (a pile of the display) is `game.X[]`."""
    out: dict[str, int] = {}
    for inv in decl.invariants:
        if inv.kind is None or inv.count is not None or inv.kind not in ids:
            continue
        for zone in inv.zones:
            inner = "[]" if zone.type.name == "map" else ""
            out[f"{zone.scope}.{zone.field}{inner}"] = len(ids[inv.kind])
    for scope, fields in (("player", decl.player), ("game", decl.game)):
        for f in fields:
            if f.max_items is not None:
                out[f"{scope}.{f.id}"] = f.max_items
    return out


@dataclass(frozen=True)
class ProcSet:
    """Every procedure of a rule set, by id, with the hooks of each event."""

    procs: dict[str, st.Procedure]
    hooks: dict[str, tuple[str, ...]]
    effects: tuple[str, ...]  # the ids that are effects (named with an amount on cards)
    measures: tuple[tuple[str, Any], ...]
    this: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # a procedure's own row
    actions: dict[str, Any] = field(default_factory=dict)  # move kind -> actions.Action
    action_rows: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # its court row
    # what reading them found (step shapes, cycles, hook events, param types, conservation):
    # reported with what compiling them finds (model.build.procedure_diagnostics)
    problems: tuple[st.StepProblem, ...] = ()
    untyped: bool = False  # a param's type names no kind: it is typed `any` (check_param_kinds)


@dataclass
class ProcProblems:
    """The problems compiling one rule set's procedures found (the lower pass, pipeline.py)."""

    procs: dict[str, list[st.StepProblem]] = field(default_factory=dict)  # id -> its problems
    actions: list[st.StepProblem] = field(default_factory=list)
    phases: list[st.StepProblem] = field(default_factory=list)
    queries: list[Any] = field(default_factory=list)  # the queries' (ExprProblem)
    # what the proof that every operation is total found (lang/total.py): reported only for
    # rule sets whose data passes the semantic checks (the proof reads that data)
    proofs: list[st.StepProblem] = field(default_factory=list)


def _params(raw: Any, path: tuple[str | int, ...],
            problems: list[st.StepProblem]) -> tuple[st.Param, ...]:
    out = []
    if not isinstance(raw, Mapping):
        return ()
    for name, text in raw.items():
        # `NAME: TYPE`, or `NAME: {type: TYPE, default: EXPR}`
        at: tuple[str | int, ...] = (*path, name)
        extra: dict[str, Any] = {}
        if isinstance(text, Mapping):
            at = (*path, name, "type")
            extra = {"default": text.get("default"), "has_default": "default" in text,
                     "default_path": (*path, name, "default")}
            text = text.get("type")
        try:
            out.append(st.Param(str(name), vtype(parse_type(str(text))), at, **extra))
        except TypeSyntaxError as exc:
            problems.append(st.StepProblem("step-shape", f"parameter {name}: {exc}", at))
    return tuple(out)


def _as_condition(name: str) -> str:
    """A name that states something ("The storm rages") as the words of a condition, which
    go on after other words: its first letter small, unless the word is an initial or all
    capitals ("D. José I reigns", "UN rules")."""
    first = name.split(" ", 1)[0]
    if len(first) > 1 and first[1:].islower():
        return name[:1].lower() + name[1:]
    return name


def proc_set(effects_doc: Mapping[str, Any], noble_actions: list[Any],
             problems: list[st.StepProblem], vocabulary: list[Any] | None = None,
             flow: Mapping[str, Any] | None = None,
             court: Mapping[str, Any] | None = None,
             forbidden_reason: str | None = None,
             flag_names: Mapping[str, str] | None = None) -> ProcSet:
    """The procedures of the effects document, of the Noble actions (`steps:`), of the steps
    of the end of a period and of the triggers that do something (`do:`). A Noble action a
    flag forbids (`forbidden_by_flag`) is refused first, with `forbidden_reason`; the players'
    words of that condition are the flag's name (`flag_names`: "the storm rages")."""
    procs: dict[str, st.Procedure] = {}
    hooks: dict[str, list[str]] = {}
    this: dict[str, Mapping[str, Any]] = {}

    def add(proc: st.Procedure) -> None:
        if proc.id in procs:
            problems.append(st.StepProblem("duplicate-id", f"two procedures are called "
                                           f"'{proc.id}'", (*proc.path, "id")))
            return
        procs[proc.id] = proc
        # a variant changes a step, or places a new one, by its id: one id, one step
        step_ids: set[str] = set()
        for top in proc.steps:
            for s in top.walk():
                if s.id is None:
                    continue
                if s.id in step_ids:
                    problems.append(st.StepProblem("duplicate-id", f"'{proc.id}' has a step "
                                                   f"called '{s.id}' already", (*s.path, "id")))
                step_ids.add(s.id)

    common = _params(effects_doc.get("params"), ("effects", "params"), problems)
    effect_ids = []
    for i, e in enumerate(effects_doc.get("effects") or []):
        path: tuple[str | int, ...] = ("effects", "effects", i)
        body = st.parse_steps(e.get("steps", []), (*path, "steps"), problems)
        add(st.Procedure(str(e.get("id")), common, body, str(e.get("rule") or e.get("id")), path))
        effect_ids.append(str(e.get("id")))
    for i, e in enumerate(effects_doc.get("procedures") or []):
        path = ("effects", "procedures", i)
        body = st.parse_steps(e.get("steps", []), (*path, "steps"), problems)
        add(st.Procedure(str(e.get("id")), _params(e.get("params"), (*path, "params"), problems),
                         body, str(e.get("rule") or e.get("id")), path))
    for i, h in enumerate(effects_doc.get("hooks") or []):
        path = ("effects", "hooks", i)
        body = st.parse_steps(h.get("steps", []), (*path, "steps"), problems)
        proc = st.Procedure(str(h.get("id")), _params(h.get("params"), (*path, "params"), problems),
                            body, str(h.get("rule") or h.get("id")), path)
        add(proc)
        hooks.setdefault(str(h.get("on")), []).append(proc.id)
        if proc.guard:
            problems.append(st.StepProblem("step-order", "a hook has no guard: it cannot "
                                           "choose or refuse", (*path, "steps")))
    for i, na in enumerate(noble_actions):
        if not isinstance(na, Mapping) or "steps" not in na:
            continue
        path = ("nobles", "noble_actions", i)
        body = st.parse_steps(na.get("steps", []), (*path, "steps"), problems)
        flag = na.get("forbidden_by_flag")
        if isinstance(flag, str):  # a flag of a variant forbids the action: refused first
            words = forbidden_reason or f"the flag {flag} forbids it"
            cond = f"{typed.source_literal(flag)} not in game.flags"
            said = (flag_names or {}).get(flag)
            body = (st.Require(cond=cond, reason=words, path=(*path, "forbidden_by_flag"),
                               written=cond, text=_as_condition(said) if said else None), *body)
        add(st.Procedure(str(na.get("id")), (), body, str(na.get("id")), path))
        this[str(na.get("id"))] = na
    turn_end = (flow or {}).get("turn_end")
    if isinstance(turn_end, Mapping) and "steps" in turn_end:
        path = ("flow", "turn_end")
        body = st.parse_steps(turn_end.get("steps", []), (*path, "steps"), problems)
        add(st.Procedure(str(turn_end.get("id")), (), body, str(turn_end.get("id")), path))
        this[str(turn_end.get("id"))] = turn_end
    setup = (flow or {}).get("setup")
    if isinstance(setup, Mapping) and "steps" in setup:
        path = ("flow", "setup")
        body = st.parse_steps(setup.get("steps", []), (*path, "steps"), problems)
        add(st.Procedure(str(setup.get("id")), _params(setup.get("params"), (*path, "params"),
                                                         problems),
                         body, str(setup.get("id")), path))
        this[str(setup.get("id"))] = setup
    period_end = (flow or {}).get("period_end") or {}
    for i, step in enumerate(period_end.get("steps") or []):
        if not isinstance(step, Mapping) or "steps" not in step:
            continue
        path = ("flow", "period_end", "steps", i)
        body = st.parse_steps(step.get("steps", []), (*path, "steps"), problems)
        add(st.Procedure(str(step.get("id")), (), body, str(step.get("id")), path))
        this[str(step.get("id"))] = step
    for i, trig in enumerate((flow or {}).get("triggers") or []):
        if not isinstance(trig, Mapping) or "do" not in trig:
            continue
        path = ("flow", "triggers", i)
        body = st.parse_steps(trig.get("do", []), (*path, "do"), problems)
        add(st.Procedure(str(trig.get("id")), (), body, str(trig.get("id")), path))
        this[str(trig.get("id"))] = trig
    measures = tuple((str(m.get("name")), m.get("value")) for m in vocabulary or []
                     if isinstance(m, Mapping) and "value" in m and not m.get("per"))
    from lisboa_rules.lang.actions import Action

    actions: dict[str, Action] = {}
    action_rows: dict[str, Mapping[str, Any]] = {}
    rows = [(("court", "actions", i), a) for i, a in enumerate((court or {}).get("actions") or [])]
    rows += [(("flow", "moves", i), a) for i, a in enumerate((flow or {}).get("moves") or [])]
    for path, a in rows:
        if not isinstance(a, Mapping) or not isinstance(a.get("steps"), list):
            continue
        body = st.parse_steps(a["steps"], (*path, "steps"), problems)
        kind = str(a.get("procedure") or a.get("id"))
        if kind in actions:
            problems.append(st.StepProblem("duplicate-id", f"two actions make '{kind}' moves",
                                           (*path, "procedure" if path[0] == "court" else "id")))
            continue
        actions[kind] = Action(kind, str(a.get("phase") or "action"), body,
                               str(a.get("rule") or a.get("id")), path)
        action_rows[kind] = a
    return ProcSet(procs, {k: tuple(v) for k, v in hooks.items()}, tuple(effect_ids), measures,
                   this, actions, action_rows)


def vocab_nodes(vocabulary: list[Any], scope: Scope,
                problems: list[tuple[int, str, str]] | None = None
                ) -> dict[str, tuple[str, ir.Expr]]:
    """What each name of the formula language reads, as (type, IR expression): the measures
    of the scope, a per-item name checked with a slot `item` in place of its item, a context
    name (`ir.Context`). A problem is (index, code, message)."""
    out: dict[str, tuple[str, ir.Expr]] = {}
    for i, row in enumerate(vocabulary):
        if not isinstance(row, Mapping):
            continue
        name = str(row.get("name"))
        if "context" in row:
            out[name] = ("int", ir.Context(str(row["context"])))
            continue
        if name in scope.measures and not row.get("per"):
            m = scope.measures[name]
            out[name] = ("bool" if m.type.name == "bool" else "int", m.ref)
            continue
        inner = scope.with_locals(item=Name(typed.TEXT, ir.Slot("item")))
        try:
            t = typed.check(row.get("value"), inner)
        except typed.ExprError as exc:
            if problems is not None:
                problems.append((i, exc.code, exc.message))
            continue
        if t.type.name not in ("int", "bool") or t.type.optional:
            if problems is not None:
                problems.append((i, "expr-type", f"'{row.get('value')}' is "
                                 f"{typed.describe(t.type)}: a name reads a number or a "
                                 "condition"))
            continue
        out[name] = (t.type.name, t.node)
    return out


def with_formulas(scope: Scope, vocabulary: list[Any]) -> Scope:
    """The scope with `formula(rules.x)`: a formula of the rules data (the formula language,
    whose names are the vocabulary's) checked in place."""
    from dataclasses import replace

    from lisboa_rules.lang import expr

    nodes = vocab_nodes(vocabulary, scope)
    env = {name: expr.NameInfo("bool" if t == "bool" else "int")
           for name, (t, node) in nodes.items()
           if not any(isinstance(n, ir.Slot | ir.Context) for n in ir.walk(node))}

    def compile_formula(source: str) -> typed.Typed:
        try:
            f = expr.parse(source, env)
        except expr.FormulaError as exc:
            raise typed.ExprError(exc.code, exc.message) from None
        node = expr.to_ir(f, lambda name, item: nodes[name][1])
        return scope.typed(node, typed.BOOL if f.type == "bool" else typed.INT)

    return replace(scope, formula=compile_formula)


def check_hook_events(ps: ProcSet, declared: Iterable[str] = ()) -> list[st.StepProblem]:
    """A hook runs when a step raises its event: a hook on an event no step of the rule set
    raises (a misspelt `on:`) would never run, and is refused at its `on:`. Where the rules
    declare their events (rules/effects.yaml `events:`, the words of each), a step that
    raises one no hook is on and they do not declare does nothing: a misspelt `raise:`,
    refused at it (rules that declare none are not held to it)."""
    raised: set[str] = set()
    declared = set(declared)
    known = declared | set(ps.hooks) if declared else None
    problems = []
    for steps in [*(p.steps for p in ps.procs.values()), *(a.steps for a in ps.actions.values())]:
        for s in steps:
            for sub in s.walk():
                if isinstance(sub, st.Raise):
                    raised.add(sub.event)
                    if known is not None and sub.event not in known:
                        problems.append(st.StepProblem(
                            "unknown-reference", f"no hook is on the event '{sub.event}' and "
                            "rules/effects.yaml declares no such event, so raising it does "
                            "nothing: name an event there is, or declare it in `events:` "
                            "(with its words)", (*sub.path, "raise"),
                            suggestion=suggest(sub.event, sorted(known))))
    for event, hook_ids in ps.hooks.items():
        if event in raised:
            continue
        for hid in hook_ids:
            path = ps.procs[hid].path
            if path[:2] != ("effects", "hooks"):
                continue  # its id is taken by another procedure (reported as duplicate-id)
            problems.append(st.StepProblem(
                "unknown-reference", f"hook '{hid}' is on the event '{event}', which no step "
                "raises", (*path, "on"), suggestion=suggest(event, raised)))
    return problems


def check_cycles(ps: ProcSet) -> list[st.StepProblem]:
    """A procedure that does itself, directly or through others or through the hooks of the
    events it raises, would never end: refused."""
    edges: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}
    for pid, proc in ps.procs.items():
        out = edges.setdefault(pid, [])
        for s in proc.steps:
            for sub in s.walk():
                match sub:
                    case st.Do():
                        out.append((sub.proc, sub.path))
                    case st.Raise():
                        out += [(h, sub.path) for h in ps.hooks.get(sub.event, ())]
                    case (st.Gain() | st.Set() | st.Let() | st.Move() | st.Drop() | st.Require()
                          | st.Choose() | st.If() | st.ForEach() | st.Repeat() | st.Apply()
                          | st.Shuffle() | st.New()):
                        pass  # it carries out no procedure (apply: an effect, never a cycle)
                    case _:
                        assert_never(sub)
    problems = []
    state: dict[str, int] = {}

    def visit(pid: str, trail: list[str]) -> None:
        state[pid] = 1
        for nxt, path in edges.get(pid, []):
            if state.get(nxt) == 1:
                loop = " -> ".join([*trail[trail.index(nxt):], nxt]) if nxt in trail else nxt
                problems.append(st.StepProblem("step-cycle", f"procedures call each other in a "
                                               f"loop: {loop}", path))
            elif state.get(nxt) is None and nxt in edges:
                visit(nxt, [*trail, nxt])
        state[pid] = 2

    for pid in ps.procs:
        if pid not in state:
            visit(pid, [pid])
    return problems


@dataclass(frozen=True)
class ExprProblem(st.StepProblem):
    """A problem of an expression of a step: `col` is 0-based in `source`, the text that was
    checked; `on_key` when that text is the key of its mapping (the place of a gain or set)."""

    source: str = ""
    col: int = 0
    on_key: bool = False


from lisboa_rules.lang.actions import ActionChecker  # noqa: E402


class LocatedChecker(ActionChecker):
    """The step checker, keeping where in its text an expression goes wrong (so that the
    builder can point at the name, not at the start of the step)."""

    def report(self, s: st.StepBase, exc: typed.ExprError, source: Any, key: str | None) -> None:
        parts = (key or s.kind).split("/")
        on_key = (len(parts) == 2 and parts[1] == source and isinstance(s, st.Gain | st.Set)
                  and any(place == source for place, _value in s.places))
        shown = exc.message if f"'{source}'" in exc.message else \
            f"{exc.message} (in '{source}')"
        self.problems.append(ExprProblem(exc.code, shown, (*s.path, *parts), exc.suggestion,
                                         source if isinstance(source, str) else "",
                                         exc.col, on_key, follows=exc.follows,
                                         subject=exc.subject))


@dataclass(frozen=True)
class Checked:
    """An expression of a step as the checker typed it: where it is (the step's path and the
    key it is written under), its source and its IR."""

    path: tuple[str | int, ...]
    key: str
    source: Any
    typed: typed.Typed


class _Recording(LocatedChecker):
    """A compiler that keeps every expression it checked (once per place)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.checked: dict[tuple[tuple[str | int, ...], str], Checked] = {}

    def expr(self, s: st.StepBase, source: Any, scope: Scope, want: VType | None,
             key: str | None = None) -> typed.Typed | None:
        got = super().expr(s, source, scope, want, key)
        where = (s.path, key or s.kind)
        if got is not None and where not in self.checked:
            self.checked[where] = Checked(s.path, key or s.kind, source, got)
        return got


def checked_expressions(ps: ProcSet, state: StateDecl, data: dict[str, Any]
                        ) -> dict[str, list[Checked]]:
    """Every procedure's and action's checked expressions, in the order of their steps (for
    `lisboa-rules ir`): by procedure id, and by `action:KIND` for the actions of a turn."""
    names = data.get("vocabulary", {}).get("names") or []
    tables = Tables()
    scope = with_formulas(state_scope(state, data, ps.measures, tables), names)
    out: dict[str, list[Checked]] = {}

    def ordered(comp: _Recording) -> list[Checked]:
        return sorted(comp.checked.values(), key=lambda c: [str(x).zfill(6) for x in c.path])

    for pid, proc in ps.procs.items():
        row = ps.this.get(pid)
        comp = _Recording(_with_row(scope, row) if row is not None else scope, ps.procs,
                          ps.hooks, tables.values, effect_ids=ps.effects)
        comp.check(proc)
        out[pid] = ordered(comp)
    for kind, action in ps.actions.items():
        comp = _Recording(_with_row(scope, ps.action_rows[kind]), ps.procs, ps.hooks,
                          tables.values, effect_ids=ps.effects)
        comp.check_action(action)
        out[f"action:{kind}"] = ordered(comp)
    return out


def check_param_kinds(ps: ProcSet, state: StateDecl) -> list[st.StepProblem]:
    """Each param whose type names no kind of rules/state.yaml (`{decrees: decrees}` for
    `list[decree]`), reported once where it is declared (the effects' shared params are every
    effect's). Such a param is typed `any` in `ps` from here on: its uses, and the values
    steps pass it, are not reported again for want of a type that does not exist."""
    from dataclasses import replace

    from lisboa_rules.model.state import BASE_TYPES, CONTAINERS

    kinds = {k.id for k in state.kinds}
    known = sorted({*BASE_TYPES, *CONTAINERS, *kinds})
    out: list[st.StepProblem] = []
    bad: set[tuple[str | int, ...]] = set()

    def names(t: VType) -> Iterable[str]:
        yield t.name
        for a in t.args:
            yield from names(a)

    for prm in {p.path: p for proc in ps.procs.values() for p in proc.params}.values():
        wrong = [n for n in names(prm.type) if n not in known]
        if not wrong or not prm.path:
            continue
        bad.add(prm.path)
        one = wrong[0].removesuffix("s")  # `decrees` for a list of them
        hint = f"list[{one}]" if one != wrong[0] and one in kinds else suggest(wrong[0], known)
        out.append(st.StepProblem(
            "unknown-reference", f"the type of parameter '{prm.name}' names no kind "
            f"'{wrong[0]}' (a type is int, bool, text, seat, a kind of rules/state.yaml, "
            "list[T] or map[K, T])", prm.path, hint))
    if bad:
        for pid, proc in ps.procs.items():
            if any(p.path in bad for p in proc.params):
                ps.procs[pid] = replace(proc, params=tuple(
                    replace(p, type=typed.ANY) if p.path in bad else p for p in proc.params))
    return out


def unique_problems(problems: list[st.StepProblem]) -> list[st.StepProblem]:
    """The problems without repeats (same code, message and place), in order."""
    seen = set()
    out = []
    for p in problems:
        if (p.code, p.message, p.path) not in seen:
            seen.add((p.code, p.message, p.path))
            out.append(p)
    return out


def _with_row(scope: Scope, row: Mapping[str, Any]) -> Scope:
    """The scope of a procedure that has its own row (`this.x`), with its formulas
    (`land_price: ...`) and params (`params: {rubble_cost: 2}`) named too."""
    from dataclasses import replace

    raw = row.get("params")
    params: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    taken = {*scope.player, *scope.game, *scope.measures, *scope.locals}
    names = {str(k): Name(typed.INT, ir.Lit(v), const=True) for k, v in params.items()
             if isinstance(v, int) and not isinstance(v, bool) and str(k) not in taken}
    inner = scope.with_locals(**names)
    inner = replace(inner, this=typed.data_lookup(row, "this"))
    for key, value in row.items():
        if key in taken:
            continue  # a field of the state keeps its name; the row's is `this.KEY`
        if isinstance(value, str) and key not in ("id", "name", "title", "text", "procedure"):
            try:
                t = typed.check(value, inner, typed.INT)
                inner = inner.with_locals(**{key: Name(t.type, t.node, const=True)})
            except typed.ExprError as exc:
                if exc.code != "expr-type":
                    continue  # not a formula of the row: no name
                try:  # a formula of another type: refused where it is written (model/build.py);
                    # named all the same, so that the steps that read it say nothing more
                    t = typed.check(value, inner, None)
                except typed.ExprError:
                    continue
                inner = inner.with_locals(**{key: Name(typed.INT, t.node, const=True)})
    return inner
