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

from dataclasses import dataclass
from typing import assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.types import VType
from lisboa_rules.lang.phases import CheckedPhase, check_phases
from lisboa_rules.lang.steps import StepProblem
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
    for pid in order:
        proc_scopes[pid] = P._with_row(scope, ps.this[pid]) if pid in ps.this else scope
        checker = P.LocatedChecker(proc_scopes[pid], ps.procs, ps.hooks, tables.values,
                                   ps.effects)
        checker.cost.procs = procs  # the callees, checked before (ir/cost.py)
        procs[pid] = checker.check(ps.procs[pid])
        problems.procs[pid] = checker.problems
    actions: dict[str, S.Action] = {}
    action_scopes: dict[str, Scope] = {}
    for kind, action in ps.actions.items():
        action_scopes[kind] = P._with_row(scope, ps.action_rows[kind])
        achecker = P.LocatedChecker(action_scopes[kind], ps.procs, ps.hooks, tables.values,
                                    ps.effects)
        achecker.cost.procs = procs
        actions[kind] = achecker.check_action(action)
        problems.actions += achecker.problems
    pcomp = P.LocatedChecker(scope, ps.procs, ps.hooks, tables.values, ps.effects)
    pcomp.cost.procs = procs
    phase_kind = state.kind("phase")
    phases = check_phases(pcomp, data.get("flow"), scope,
                          phase_kind.values if phase_kind is not None else None,
                          {k: (a.phase, a.path) for k, a in ps.actions.items()})
    problems.phases = list(pcomp.problems)
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
                        actions, action_scopes, phases, period_fields, problems)


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
