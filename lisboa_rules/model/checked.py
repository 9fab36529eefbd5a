"""The steps of a rule set checked into the IR: the check pass's first half (pipeline.py).

Every procedure, action and phase of a rule set is checked here, once, in the scope its steps
name (the declared state, the rules' tables, the measures, the formulas, its own row), into the
IR's statements (`ir/stmt.py`, by lang/steps.py, lang/actions.py and lang/phases.py); the
queries of rules/vocabulary.yaml and what each name of the formula language reads, into the
IR's expressions. Every problem comes out here (`problems`, located by
model/build.py `procedure_diagnostics`); a back end prints what a rule set without a problem
checked into (the lower pass: emit/engine/procs.py `lower`), reporting nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.bounds import INF
from lisboa_rules.ir.types import VType
from lisboa_rules.lang.phases import (
    CheckedPhase,
    CheckedTurnOrder,
    check_phases,
    check_turn_cycle,
    check_turn_order,
)
from lisboa_rules.lang.steps import StepProblem
from lisboa_rules.lang.total import Totality
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
)
from lisboa_rules.lang.typed import Scope
from lisboa_rules.model import procs as P
from lisboa_rules.model.queries import Query, compile_queries
from lisboa_rules.model.state import TypeSyntaxError, parse_type
from lisboa_rules.model.types import Model
from lisboa_rules.model.visibility import check_listing


@dataclass
class CheckedSteps:
    """One rule set's steps checked: the rules' tables they read (shared by the rule sets of
    a build), the scope of its steps (`base`: before the formulas are named), what each
    formula name reads, its queries, each procedure and action with the scope it was checked
    in, its phases, the choices of the decisions of the end of a period, and the problems."""

    tables: P.Tables
    base: Scope
    scope: Scope
    vocab: dict[str, tuple[str, ir.Expr]]
    queries: list[Query]
    order: list[str]  # the procedures, each after those it carries out
    procs: dict[str, S.Proc]
    proc_scopes: dict[str, Scope]
    actions: dict[str, S.Action]
    action_scopes: dict[str, Scope]
    phases: list[CheckedPhase]
    period_fields: list[tuple[str, VType]]
    problems: P.ProcProblems
    turn_order: CheckedTurnOrder = field(default_factory=CheckedTurnOrder)
    # the moves of an item not proven to be in its list (where a step writes them): each
    # moves nothing when it is not (lang/total.py)
    loose_moves: frozenset[tuple[str | int, ...]] = frozenset()
    # the writes into a list with a declared max_items not proven to keep it within it (by
    # where a step writes them and the field): the engine checks each where it writes, with
    # the bound (lang/total.py)
    guarded_writes: Mapping[tuple[tuple[str | int, ...], str], int] = field(
        default_factory=dict)
    proven_writes: frozenset[tuple[tuple[str | int, ...], str]] = frozenset()  # and proven

    @property
    def ok(self) -> bool:
        p = self.problems
        return not (any(p.procs.values()) or p.actions or p.phases or p.queries)


def check_steps(m: Model, tables: P.Tables) -> CheckedSteps:
    """Every procedure, action, phase and query of a rule set checked (`tables`: the rules'
    tables of the build, which the scope of its steps names)."""
    assert m.procs is not None  # build_model gives every model its procedures
    ps, state, data = m.procs, m.state, m.data
    problems = P.ProcProblems()
    names = data["vocabulary"]["names"]
    base = P.state_scope(state, data, ps.measures, tables)
    vocab = P.vocab_nodes(names, base)
    scope = P.with_formulas(base, names)
    queries, problems.queries = compile_queries(data["vocabulary"].get("queries") or [],
                                                state, scope)
    order = procedure_order(ps)
    procs: dict[str, S.Proc] = {}
    proc_scopes: dict[str, Scope] = {}
    procs_ok: list[str] = []
    for pid in order:
        proc_scopes[pid] = P._with_row(scope, ps.this[pid]) if pid in ps.this else scope
        checker = P.LocatedChecker(proc_scopes[pid], ps.procs, ps.hooks, tables.values,
                                   ps.effects)
        checker.cost.procs = procs  # the callees, checked before (ir/cost.py)
        procs[pid] = checker.check(ps.procs[pid])
        problems.procs[pid] = checker.problems
        if not checker.problems:
            procs_ok.append(pid)
    _unasked(ps, procs, problems)
    actions: dict[str, S.Action] = {}
    action_scopes: dict[str, Scope] = {}
    checked_ok: list[str] = []
    for kind, action in ps.actions.items():
        action_scopes[kind] = P._with_row(scope, ps.action_rows[kind])
        achecker = P.LocatedChecker(action_scopes[kind], ps.procs, ps.hooks, tables.values,
                                    ps.effects)
        achecker.cost.procs = procs
        actions[kind] = achecker.check_action(action)
        problems.actions += achecker.problems
        if not achecker.problems:  # a step left out for its problem reads nothing
            checked_ok.append(kind)
    problems.actions += unread_keys(ps, actions, checked_ok)
    problems.actions += unread_noble_action_keys(ps, procs, procs_ok)
    pcomp = P.LocatedChecker(scope, ps.procs, ps.hooks, tables.values, ps.effects)
    pcomp.cost.procs = procs
    phase_kind = state.kind("phase")
    phases = check_phases(pcomp, data.get("flow"), scope,
                          phase_kind.values if phase_kind is not None else None,
                          {k: (a.phase, a.path) for k, a in ps.actions.items()})
    turn_order = check_turn_order(pcomp, data.get("flow"), scope)
    problems.phases = list(pcomp.problems)
    problems.actions += check_listing({k: actions[k] for k in checked_ok}, procs, state,
                                      {ph.id: ph.actor for ph in phases})
    max_items = {f"{where}.{f.id}": f.max_items
                 for where, fields in (("player", state.player), ("game", state.game))
                 for f in fields if f.max_items is not None}
    # what they hold before the setup: their default (one new_game sets is not known here)
    start_items = {f"{where}.{f.id}": len(f.default) if isinstance(f.default, list) else 0
                   for where, fields in (("player", state.player), ("game", state.game))
                   for f in fields if f.max_items is not None and not f.required}
    # a rule set of a variant that applies by player count is played with those counts only
    lo, hi = _players(data)
    counts = m.player_counts or range(lo, hi + 1)
    loose, guarded, proven = _check_total(scope, tables, procs, actions, phases, problems,
                                          (min(counts), max(counts)) if counts else (lo, hi),
                                          _setup(data), list(names), max_items, start_items)
    # the turn order's seats at every player count (a proof: it reads the rules' constants)
    problems.proofs += check_turn_cycle(turn_order, counts, _cells(scope, tables))
    period_fields: list[tuple[str, VType]] = []
    flow = data.get("flow") or {}
    for i, step in enumerate((flow.get("period_end") or {}).get("steps") or []):
        declared = step.get("fields") if isinstance(step, dict) else None
        for fname, text in (declared or {}).items():  # a decision's choices
            try:
                period_fields.append((str(fname), P.vtype(parse_type(str(text)))))
            except TypeSyntaxError as exc:
                problems.phases.append(StepProblem(
                    "step-shape", f"field {fname}: {exc}",
                    ("flow", "period_end", "steps", i, "fields", fname)))
    return CheckedSteps(tables, base, scope, vocab, queries, order, procs, proc_scopes,
                        actions, action_scopes, phases, period_fields, problems, turn_order,
                        loose, guarded, proven)


def _check_total(scope: Scope, tables: P.Tables, procs: dict[str, S.Proc],
                 actions: dict[str, S.Action], phases: list[CheckedPhase],
                 problems: P.ProcProblems, players: tuple[int, int], setup: str | None,
                 vocabulary: list[Any], max_items: Mapping[str, int],
                 start_items: Mapping[str, int]) -> tuple[frozenset[tuple[str | int, ...]],
                            dict[tuple[tuple[str | int, ...], str], int],
                            frozenset[tuple[tuple[str | int, ...], str]]]:
    """Every operation of the checked steps proven total, and every write into a list with a
    declared max_items proven within it, or a problem (lang/total.py); the moves not proven to
    find their item (printed to move nothing when it is not there) and the writes not proven
    within their list's max_items (printed to check it)."""
    fields = {f"{where}.{k}": (-INF if n.lo is None else n.lo, INF if n.hi is None else n.hi)
              for where, names in (("player", scope.player), ("game", scope.game))
              for k, n in names.items()}

    def columns(kind: str, col: str) -> dict[Any, Any] | None:
        found = scope.tables.get(kind, {}).get(col)
        return tables.values.get(found[1]) if found is not None else None

    check = Totality(fields, columns, scope.kind_ids, players, setup, procs, max_items,
                     start_items)
    for pid, proc in procs.items():
        if not problems.procs.get(pid):  # a procedure with a problem: its steps may be cut
            check.proc(proc)
    if not problems.actions:
        for action in actions.values():
            check.action(action)
    for i, ph in enumerate(phases):
        row = ("flow", "phases", ph.index if ph.index is not None else i)
        if any(pr.path[:3] == row for pr in problems.phases):
            continue  # a condition that did not check: who moves is not proven without it
        check.phase(ph, S.At(row, ph.id))
    for i, row in enumerate(vocabulary):
        name = scope.measures.get(str(row.get("name"))) if isinstance(row, dict) else None
        if name is not None and isinstance(name.ref, ir.Measure) and not row.get("per"):
            check.measure(name.ref.body, S.At(("vocabulary", "names", i, "value"),
                                              str(row.get("name"))))
    problems.proofs = list(check.problems)
    return frozenset(check.loose), dict(check.guarded), frozenset(check.proven - set(check.guarded))


def _cells(scope: Scope, tables: P.Tables) -> Callable[[str, str, Any], Any]:
    """The value of a column of the rules' tables for one id (ir/const.py `Columns`): a
    KeyError for a column or an id they do not hold."""

    def cell(kind: str, col: str, key: Any) -> Any:
        found = scope.tables.get(kind, {}).get(col)
        if found is None:
            raise KeyError(col)
        return tables.values[found[1]][key]

    return cell


def _unasked(ps: P.ProcSet, procs: dict[str, S.Proc], problems: P.ProcProblems) -> None:
    """A choice no move can make: a `choose` in the setup, in a trigger's steps or in a step of
    the end of the period that is no decision (`decision:` and its `fields:`): the engine runs
    those steps with nobody to ask."""
    for pid, proc in procs.items():
        path = ps.procs[pid].path
        where = path[:2]
        if where not in (("flow", "setup"), ("flow", "triggers"), ("flow", "period_end")):
            continue
        if where == ("flow", "period_end") and ps.this.get(pid, {}).get("decision"):
            continue
        for g in proc.guard:
            if isinstance(g, S.Choose):
                problems.procs.setdefault(pid, []).append(StepProblem(
                    "step-order", f"'{g.name}' is chosen where no move is made: the setup, a "
                    "trigger's steps and a step of the end of the period that is no decision "
                    "run with nobody to ask (make it a decision with `decision:` and its "
                    "`fields:`, or compute the value)", (*g.at.path, "choose")))
                break


def _players(data: Any) -> tuple[int, int]:
    """How many players a game of the rules has (rules/game.yaml `players`)."""
    rows = (data.get("game") or {}).get("players") or {}
    return (int(rows.get("min", 1)), int(rows.get("max", rows.get("min", 1))))


def _setup(data: Any) -> str | None:
    """The procedure that makes the players (rules/flow.yaml `setup`)."""
    setup = (data.get("flow") or {}).get("setup")
    return str(setup.get("id")) if isinstance(setup, dict) else None


# the keys of an action's row the compiler reads itself: what the action is and names (`id`,
# `name`, `number`, `plays`), the move it makes and when (`procedure`, `phase`, `rule`), its
# steps, and its words and provenance (`text`, `source`, `assumptions`); every other key is
# data of its steps, which they read as `this.KEY` (or it is refused: `unread_keys`)
ROW_KEYS = frozenset({"id", "name", "number", "plays", "procedure", "phase", "rule", "steps",
                      "text", "source", "assumptions"})
# a Noble action's (rules/nobles.yaml `noble_actions`), besides: the flag of a variant that
# forbids it (a require put before its steps) and its land price, a formula its steps read by
# name (`land_price`), with the params and ranges of that formula
NOBLE_ACTION_KEYS = ROW_KEYS | {"forbidden_by_flag", "land_price", "params", "ranges"}

# a row of steps: its name, its row of the rules, its path and its checked items
Rows = dict[str, tuple[str, Mapping[str, Any], tuple[str | int, ...], tuple[S.Item, ...]]]


def unread_keys(ps: P.ProcSet, actions: dict[str, S.Action], kinds: list[str]
                ) -> list[StepProblem]:
    """The keys of the rows of the actions `kinds` (checked without a problem) that none of
    their steps reads (`this.KEY`, analysed on the IR: `S.data_read`): the reference would
    print them and play would ignore them. Each problem notes the steps of other actions that
    read the same key, the steps the action would need."""
    rows: Rows = {k: (str(ps.action_rows[k].get("id") or k), ps.action_rows[k],
                      ps.actions[k].path, a.items) for k, a in actions.items()}
    return _unread(rows, kinds, ROW_KEYS)


def unread_noble_action_keys(ps: P.ProcSet, procs: dict[str, S.Proc], ok: list[str]
                             ) -> list[StepProblem]:
    """The same for the Noble actions (their rows: rules/nobles.yaml `noble_actions`) checked
    without a problem (`ok`)."""
    rows: Rows = {pid: (pid, ps.this[pid], ps.procs[pid].path, (*p.guard, *p.effects))
                  for pid, p in procs.items()
                  if pid in ps.this and ps.procs[pid].path[:2] == ("nobles", "noble_actions")}
    return _unread(rows, [pid for pid in ok if pid in rows], NOBLE_ACTION_KEYS)


def _unread(rows: Rows, kinds: list[str], own: frozenset[str]) -> list[StepProblem]:
    read: dict[str, dict[str, list[S.At]]] = {}
    for kind, (_name, _row, _path, items) in rows.items():
        for at_path, where in S.data_read(items):
            if len(at_path) > 1 and at_path[0] == "this":
                read.setdefault(kind, {}).setdefault(at_path[1], []).append(where)
    out: list[StepProblem] = []
    for kind in kinds:
        name, row, path, _items = rows[kind]
        for key in row:
            if key in own or key in read.get(kind, {}):
                continue
            elsewhere = list(dict.fromkeys(
                (k, w) for k in read if k != kind for w in read[k].get(key, ())))
            notes = tuple((f"the steps of '{rows[k][0]}' read it here ({w.label})", w.path)
                          for k, w in elsewhere)
            readers = sorted({rows[k][0] for k, _ in elsewhere})
            if readers:
                hint = (f"read this.{key} in a step of '{name}' (as the steps of "
                        f"{', '.join(readers)} do), or remove '{key}' from '{name}'")
            else:
                hint = f"remove '{key}', or read this.{key} in a step of '{name}'"
            out.append(StepProblem(
                "unread-key",
                f"no step of '{name}' reads its '{key}' (as this.{key}), so the reference "
                f"would print it and play would ignore it: {hint}",
                (*path, key), notes=notes, subject=(f"{name}.{key}",)))
    return out


def procedure_order(ps: P.ProcSet) -> list[str]:
    """The procedures, callees before callers (the call graph is acyclic: checked by the
    model; a cycle is broken where it is met)."""
    done: list[str] = []
    seen: set[str] = set()

    def visit(pid: str) -> None:
        if pid in seen:
            return
        seen.add(pid)
        for s in ps.procs[pid].steps:
            for sub in s.walk():
                match sub:
                    case Do():
                        if sub.proc in ps.procs:
                            visit(sub.proc)
                    case Apply():  # a bundle of effects calls the effects
                        for e in ps.effects:
                            visit(e)
                    case Raise():
                        for h in ps.hooks.get(sub.event, ()):
                            visit(h)
                    case (Gain() | Set() | Let() | Move() | Drop() | Require() | Choose() | If()
                          | ForEach() | Repeat() | Shuffle() | New()):
                        pass  # it calls no procedure
                    case _:
                        assert_never(sub)
        done.append(pid)

    for pid in ps.procs:
        visit(pid)
    return done
