"""The procedures of every rule set as functions of the generated engine.

Each procedure (an effect, a shared procedure, a hook, a Noble action: lisboa_rules/lang/steps.py)
becomes three straight-line functions: `_opts_…` (the choices its guard allows), `_why_…` (why a
choice is refused) and `_run_…` (its effects). Rule sets whose procedure compiles to the same code
share one function; the tables the steps read (`_T_card_influence`) are shared the same way.

They are printed by the lower pass (`lower`), which pipeline.py runs once the check pass has
checked every rule set's steps into the IR (model/checked.py) and found no problem, one rule set
after the other, for the engine emitter (`procedure_view`, from what `lower` returned).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.core.encode import py_str
from lisboa_rules.emit.engine import checks as C
from lisboa_rules.emit.engine.moves import Bundles, MovePrinter, json_type
from lisboa_rules.emit.engine.names import EngineNames
from lisboa_rules.emit.engine.pyfmt import Call, Raw, fmt, identifier, wrap_line
from lisboa_rules.emit.engine.queries import PyQuery, python_queries
from lisboa_rules.emit.engine.state_classes import copy_code
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.reads import locals_named
from lisboa_rules.ir.types import VType
from lisboa_rules.lang.phases import CheckedPhase
from lisboa_rules.lang.steps import Procedure
from lisboa_rules.model import procs as P
from lisboa_rules.model.checked import CheckedSteps, check_steps
from lisboa_rules.model.types import Model
from lisboa_rules.pyprint import expr as pyprint
from lisboa_rules.pyprint.expr import local as local_code

_PLACEHOLDER = "STEM__"  # a procedure's own name until its code is known to be new


@dataclass(frozen=True)
class Vocab:
    """What each name of the formula language reads in one rule set, as (type, IR node): a
    per-item name's item is `ir.Slot("item")`, a context value an `ir.Context`
    (`model.procs.vocab_nodes`); and how the engine names the constants, columns and measures
    those nodes read (`pyprint.Names`, the rule set's scope's)."""

    nodes: dict[str, tuple[str, ir.Expr]]
    names: pyprint.Names


@dataclass
class ProcView:
    functions: list[str] = field(default_factory=list)  # source blocks, in emission order
    tables: list[tuple[str, str]] = field(default_factory=list)  # (name, literal)
    by_ruleset: list[dict[str, Any]] = field(default_factory=list)  # pid -> Call("ProcDef")
    moves: list[dict[str, Any]] = field(default_factory=list)  # move kind -> Call("MoveDef")
    phases: list[dict[str, Any]] = field(default_factory=list)  # phase -> Call("PhaseDef")
    # the turn order's functions (RuleSet `first_seat`, `next_seat`; None: not in the rules)
    turn: list[dict[str, Any]] = field(default_factory=list)
    fx: list[dict[str, Any]] = field(default_factory=list)  # column -> row -> bundle functions
    move_fields: dict[str, str] = field(default_factory=dict)  # choice -> JSON type, in order
    move_types: dict[str, VType] = field(default_factory=dict)  # choice -> its type (a kind's)
    vocab: list[Vocab] = field(default_factory=list)  # what each formula name reads
    queries: list[list[PyQuery]] = field(default_factory=list)  # each rule set's public queries
    # the invariants of each rule set: RuleSet field -> value (its check, its conserved kinds'
    # listers), and the public functions listing conserved ids: (name, kind, id type)
    invariants: list[dict[str, Any]] = field(default_factory=list)
    listers: list[tuple[str, str, str]] = field(default_factory=list)


Where = Callable[[Model, tuple[str | int, ...]], str]  # `FILE:LINE` of a rule set's path


def flow_id(m: Model, key: str) -> str:
    """The id of a procedure of rules/flow.yaml by its key (`setup`, `turn_end`), or ""."""
    return str((m.data["flow"].get(key) or {}).get("id", ""))


def run_by_turn_machine(m: Model) -> set[str]:
    """The procedures the turn machine runs itself (the runtime's `_ran`): the end of a turn,
    the triggers' steps and the steps of the end of a period. A move tried in place keeps what
    each of these may write before it runs; every other procedure runs inside an action or one
    of these, whose keep covers what it writes."""
    return {flow_id(m, "turn_end"), *(t.id for t in m.triggers),
            *(s.id for s in m.period_end)} - {""}


def located(names: Mapping[str, str]) -> Where:
    """`FILE:LINE` of a path of a rule set, for the comments of the engine: the file by its
    stable name (`names`: display path -> "rules/<path>"), so that comments do not change with
    the working directory or the checkout path."""
    def where(m: Model, path: tuple[str | int, ...]) -> str:
        span = m.span_of(str(path[0]), *path[1:])
        return f"{names.get(span.file, span.file)}:{span.line}"

    return where


@dataclass
class Lowered:
    """The lower pass's work: every rule set's procedures, actions and phases printed as the
    engine's functions, one rule set after the other (`session`). The engine emitter prints
    the session's functions (`procedure_view`)."""

    session: ProcSession


def lower(models: Sequence[Model], names: Mapping[str, str],
          steps: Sequence[CheckedSteps] | None = None) -> Lowered:
    """The lower pass: every rule set's checked steps (`steps`, the check pass's; checked now
    when not given) printed once, one rule set after the other (`names`: the stable names of
    the rules files, for the comments of the engine)."""
    if steps is None:
        tables = P.Tables()
        steps = [check_steps(m, tables) for m in models]
    session = ProcSession(located(names), steps[0].tables if steps else P.Tables())
    for m, checked in zip(models, steps, strict=True):
        session.add(m, checked)
    return Lowered(session)


def procedure_view(models: Sequence[Model], lowered: Lowered) -> ProcView:
    """The functions of every rule set's procedures, shared where the code is the same, with
    the checks of the state: the rule sets `lowered` printed (the same, in the same order)."""
    return lowered.session.finish(models)


class ProcSession:
    """Compiles the procedures of the rule sets of one build, one rule set after the other, into
    the engine's functions (shared where the code is the same), with a compiler that keeps
    where each problem is (`LocatedCompiler`): the lower pass. The functions are finished once
    every rule set is added (`finish`), for the engine emitter."""

    def __init__(self, where: Where, tables: P.Tables) -> None:
        self.where = where
        self.view = ProcView()
        self.tables = tables
        self.engine = EngineNames(tables)
        self.bundles = Bundles()
        self.copier: _Copier | None = None
        self.by_code: dict[str, str] = {}  # the code with its stem replaced by "@" -> stem
        self.used: set[str] = set()
        # each rule set's scope of steps before formulas: (its data, state, measures, scope)
        self.scopes: list[tuple[Any, Any, Any, Any]] = []
        self.finished = False
        self.actions: set[int] = set()  # where the actions' functions are in the view's list

    def share(self, code: str, base: str, action: bool = False) -> str:
        """The stem of functions with this code (written with the placeholder stem): the
        stem of the same code emitted before, or a new one (`base`, `base_2`, ...);
        `action`: the functions of an action (emitted after the bundles of effects)."""
        view = self.view
        key = _without_comments(code)
        stem = self.by_code.get(key)
        if stem is None:
            stem = base
            n = 1
            while stem in self.used:
                n += 1
                stem = f"{base}_{n}"
            self.used.add(stem)
            self.by_code[key] = stem
            lines = code.replace(_PLACEHOLDER, stem).split("\n")
            if action:  # laid out by `finish`, once every move field is known (`_padded`)
                self.actions.add(len(view.functions))
                view.functions.append("\n".join(lines))
            else:
                view.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
        return stem

    def _known(self, stems: dict[str, str], q: str) -> str:
        """The stem of a procedure compiled before (callees come first). One that is not
        there (procedures that call each other in a cycle, a problem reported) gets a name of
        its own: a rule set with a problem is never emitted."""
        found = stems.get(q)
        return found if found is not None else q.replace("-", "_")

    def add(self, m: Model, checked: CheckedSteps) -> None:
        """The next rule set's procedures, actions, phases and queries printed from what the
        check pass made of them (`checked`: a rule set without a problem)."""
        assert m.procs is not None  # build_model gives every model its procedures
        assert checked.ok, "a rule set with a problem is never lowered"
        ps, state, data = m.procs, m.state, m.data

        def where(path: tuple[str | int, ...]) -> str:
            return self.where(m, path)

        view, tables, bundles, share = self.view, self.tables, self.bundles, self.share
        engine = self.engine
        if self.copier is None:
            self.copier = _Copier(state)
        copier = self.copier
        scope = checked.base
        self.scopes.append((data, state, ps.measures, scope))
        printer = self.engine.names(scope)
        for _, node in checked.vocab.values():  # the long constants they read are named now,
            pyprint.expr(node, printer)  # before `finish` writes the names given
        view.vocab.append(Vocab(checked.vocab, printer))
        scope = checked.scope
        view.queries.append(python_queries(checked.queries, self.engine.names(scope)))
        checked_procs = checked.procs
        # printed: the procedures, callees first

        def column(kind: str, col: str, sc: Any = scope) -> Mapping[Any, Any] | None:
            found = sc.tables.get(kind, {}).get(col)
            return None if found is None else tables.values.get(found[1])

        fields = (frozenset(scope.game), frozenset(scope.player))
        ran = run_by_turn_machine(m)
        proc_writes: dict[str, tuple[frozenset[str], frozenset[str], bool]] = {}  # shared
        stems: dict[str, str] = {}
        defs: dict[str, Any] = {}
        bundles.tables, bundles.choices = {}, {}
        for pid in checked.order:
            proc = ps.procs[pid]
            base = grammar.stem(pid).lstrip("_") or "proc"

            def stem_of(q: str, me: str = pid, known: dict[str, str] = stems) -> str:
                return _PLACEHOLDER if q == me else self._known(known, q)

            mp = MovePrinter(
                engine.names(checked.proc_scopes[pid]), stem_of, where,
                checked_procs, engine.values, copier.name, bundles, ps.effects, copier.saver,
                column, fields, engine.table, checked.loose_moves, checked.guarded_writes)
            mp.proc_writes = proc_writes
            opts, why, run = mp.procedure(checked_procs[pid])
            code = "\n".join([*opts, "", "", *why, "", "", *run])
            stem = share(code, base)
            stems[pid] = stem
            keep: Raw | None = None
            put: Raw | None = None
            if pid in ran:
                written = mp.writes(checked_procs[pid].effects, frozenset({pid}))
                names = copier.undoer(frozenset(written[0]), frozenset(written[1]), written[2])
                keep, put = Raw(names[0]), Raw(names[1])
            defs[pid] = Call("ProcDef", (pid, _choice_names(proc), Raw(f"_opts_{stem}"),
                                         Raw(f"_why_{stem}"), Raw(f"_run_{stem}"), keep, put))
        view.by_ruleset.append(defs)
        # the actions: their move generators and checked runs

        def known(q: str, table: dict[str, str] = stems) -> str:
            return self._known(table, q)

        moves: dict[str, Any] = {}
        for kind, action in ps.actions.items():
            base = grammar.stem(kind).lstrip("_") or "action"
            mp = MovePrinter(engine.names(checked.action_scopes[kind]), known, where,
                             checked_procs, engine.values, copier.name, bundles, ps.effects,
                             copier.saver, column, fields, engine.table, checked.loose_moves,
                             checked.guarded_writes)
            mp.scalar = copier.scalar
            mp.proc_writes = proc_writes
            got = mp.action(checked.actions[kind], _PLACEHOLDER)
            for fname, ftype in got.types.items():
                view.move_fields.setdefault(fname, json_type(ftype, scope.int_kinds))
                view.move_types.setdefault(fname, ftype)
            # the fields of a Move only ever grow at the end: their places are known now

            def made(kind: str, chosen: tuple[str, ...]) -> str:
                return positional_move(kind, chosen, view.move_fields)

            code = "\n\n\n".join("\n".join(f) for f in got.lines(made))
            stem = share(code, base, action=True)
            written = mp.all_writes(checked.actions[kind].items)
            names = copier.undoer(frozenset(written[0]), frozenset(written[1]), written[2])
            moves[kind] = Call("MoveDef", (kind, action.phase, action.rule, got.fields,
                                           got.first, Raw(f"_moves_{stem}"),
                                           Raw(f"_play_{stem}"), Raw(names[0]), Raw(names[1])))
        view.moves.append(moves)
        # the phases of the turn machine: their frame functions
        phase_defs: dict[str, Any] = {}
        names_ = engine.names(scope)
        for pc in checked.phases:
            base = grammar.stem(pc.id).lstrip("_") or "phase"
            actor = inter = None
            lines = _phase_lines(pc, names_)
            if lines[0] is not None:
                actor = Raw("_phase_" + share("\n".join(lines[0]), base))
            if lines[1] is not None:
                inter = Raw("_interrupts_" + share("\n".join(lines[1]), base))
            phase_defs[pc.id] = Call("PhaseDef", (pc.id, actor, inter, pc.resume, pc.then))
        view.phases.append(phase_defs)
        turn: dict[str, Any] = {"first_seat": None, "next_seat": None}
        order = checked.turn_order
        head = ["    p = g.players[g.actor]"] if order.uses_player else []
        if order.first is not None:
            turn["first_seat"] = Raw("_first_seat_" + share("\n".join([
                f"def _first_seat_{_PLACEHOLDER}(g: Game) -> int:", *head,
                f"    return {pyprint.bare(pyprint.expr(order.first, names_))}"]), "turn"))
        if order.next is not None:
            turn["next_seat"] = Raw("_next_seat_" + share("\n".join([
                f"def _next_seat_{_PLACEHOLDER}(g: Game, {pyprint.local('seat')}: int) -> int:",
                *head, f"    return {pyprint.bare(pyprint.expr(order.next, names_))}"]), "turn"))
        view.turn.append(turn)
        for fname, ftype in checked.period_fields:  # a decision's choices
            view.move_fields.setdefault(fname, json_type(ftype, scope.int_kinds))
            view.move_types.setdefault(fname, ftype)
        view.fx.append({name: {k: Raw(f"(_opts_{b}, _why_{b}, _run_{b})") for k, b in rows.items()}
                        for name, rows in bundles.tables.items()})

    def finish(self, models: Sequence[Model]) -> ProcView:
        """The view of every rule set added (`models`, the same in the same order): once."""
        assert not self.finished and len(models) == len(self.scopes)
        self.finished = True
        view, bundles, engine = self.view, self.bundles, self.engine
        assert self.copier is not None
        measures = []
        bodies = self._measure_bodies()
        for name, (returns, body) in engine.measures.items():
            node = bodies.get((returns, body))
            steps = [f"return {body}"]
            if node is not None:
                steps = counted_by_comparisons(*node) or [f"return {counted_by_bisection(*node)}"]
            lines = [f"def {name}(g: Game, p: Player) -> {returns}:", *("    " + x for x in steps)]
            measures.append("\n".join(w for line in lines for w in wrap_line(line)))
        bundle_code = ["\n".join(w for line in f for w in wrap_line(line))
                       for f in bundles.functions]
        checks = _invariant_view(models, view, self.tables, engine, self.where, self.scopes)
        for i in self.actions:
            view.functions[i] = "\n".join(
                w for line in _padded(view.functions[i], view.move_fields).split("\n")
                for w in wrap_line(line))
        view.functions = measures + self.copier.functions + _split(
            view.functions, bundle_code, self.actions) + checks
        code_all = "\n".join([*view.functions, *(q.code for qs in view.queries for q in qs)])
        view.tables += [(name, fmt(values, 0, "", len(name) + len(": Final = ")))
                        for name, values in engine.values.items() if name in code_all]
        # a long constant (every card number) is laid out as ruff formats it
        view.tables += [(name, code if len(name) + len(": Final = ") + len(code) <= 100 else
                         fmt(_as_printed(value), 0, "", len(name) + len(": Final = ")))
                        for code, (name, value) in engine.constants.items() if name in code_all]
        return view


    def _measure_bodies(self) -> dict[tuple[str, str], tuple[ir.Expr, pyprint.Names]]:
        """The body of each measure printed as a function of its own, with the names it was
        printed with, by (its annotation, its code): the key of the rules' tables."""
        out: dict[tuple[str, str], tuple[ir.Expr, pyprint.Names]] = {}
        for _data, _state, _measures, scope in self.scopes:
            names = self.engine.names(scope)
            for m in scope.measures.values():
                if isinstance(m.ref, ir.Measure):
                    code = pyprint.bare(pyprint.expr(m.ref.body, names))
                    out.setdefault((pyprint.annotation(m.ref.type), code), (m.ref.body, names))
        return out


def _invariant_view(models: Sequence[Model], view: ProcView, tables: P.Tables,
                    engine: EngineNames, where: Where,
                    scopes: list[tuple[Any, Any, Any, Any]] | None = None) -> list[str]:
    """Each rule set's invariants (rules/state.yaml) as one check function and a lister per
    conserved kind, shared where the code is the same; the sorted ids they compare with are
    tables of their own."""
    from lisboa_rules.model.state import Invariant
    from lisboa_rules.model.state_invariants import (
        compile_checks,
        compile_invariants,
        measures_of,
    )

    functions: list[str] = []
    by_code: dict[str, str] = {}
    ids_names: dict[tuple[str, str], str] = {}  # (stem, repr of the ids) -> name

    def share(lines: list[str], stem: str) -> str:
        key = _without_comments("\n".join(lines[1:]))
        found = by_code.get(lines[0].split("(")[0] + "\n" + key)
        if found is not None:
            return found
        name = stem
        n = 1
        while name in by_code.values():
            n += 1
            name = f"{stem}_{n}"
        by_code[lines[0].split("(")[0] + "\n" + key] = name
        head = lines[0].replace(f"def {stem}(", f"def {name}(", 1)
        functions.append("\n".join(w for line in [head, *lines[1:]] for w in wrap_line(line)))
        return name

    for i, m in enumerate(models):
        assert m.state is not None
        measures = measures_of(m.data)
        known = scopes[i] if scopes is not None and i < len(scopes) else None
        if (known is not None and known[0] is m.data and known[1] is m.state
                and known[2] == measures):
            # the scope the procedures were compiled in: state_scope of the same state, data,
            # measures and tables again would name the same tables and measures
            scope = known[3]
        else:
            scope = P.state_scope(m.state, m.data, measures, tables)

        def origin(inv: Invariant, mm: Model = m) -> str:
            return f"{where(mm, ('state', *inv.path))} {inv.id}"

        names = engine.names(scope)
        program, _ = compile_invariants(m.state, scope, origin)
        listers: dict[str, Raw] = {}
        for ls in program.listers:
            stem = C.lister_stem(ls.kind)
            listers[ls.kind] = Raw(share(C.lister(ls, stem), stem))
            if m is models[0] and ls.name is not None and ls.name != stem:
                of = f"list[{pyprint.annotation(ls.of)}]"  # what the function returns
                view.listers.append((identifier(ls.name), ls.kind, of))

        def ids_name(ids: str, values: list[Any]) -> str:
            """The sorted ids of a conserved kind: a table per distinct list."""
            key = (ids, repr(values))
            name = ids_names.get(key)
            if name is None:
                name = ids
                n = 1
                while name in engine.values or name in ids_names.values():
                    n += 1
                    name = f"{ids}_{n}"
                ids_names[key] = name
                view.tables.append((name, fmt(values, 0, "", len(name) + len(": Final = "))))
            return name

        body = C.invariants(program, names, _lister_of(listers), ids_name)
        check = ["def _invariants(g: Game) -> list[str]:",
                 '    """What is wrong with a state: the invariants of rules/state.yaml that '
                 'fail, in order."""',
                 "    problems: list[str] = []", *body, "    return problems"]
        checks, _ = compile_checks(m.state, scope, origin)
        saved = ["def _state_checks(g: Game) -> tuple[str, str] | None:",
                 '    """Why a saved game cannot be loaded: the JSON path and the words of the',
                 '    first check of rules/state.yaml that fails, else None."""',
                 *C.state_checks(checks, names), "    return None"]
        view.invariants.append({"invariants": Raw(share(check, "_invariants")),
                                "conserved": listers,
                                "state_checks": Raw(share(saved, "_state_checks"))})
    return functions


def _lister_of(listers: dict[str, Raw]) -> Callable[[str], str]:
    """The name of the function listing a conserved kind's ids, by the kind."""
    return lambda kind: listers[kind].code


_MIRROR: dict[ir.CmpOpName, ir.CmpOpName] = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def counted_by_bisection(body: ir.Expr, names: pyprint.Names) -> str:
    """The code of a measure's body (as its function returns it) with each count of the
    constant numbers on one side of a value, `len([v for v in (1, 3, 5) if v < e])`, as a
    bisection of those numbers sorted at compile time (`bisect_left((1, 3, 5), e)`): the same
    count, without a list made and every number compared on each call. A count inside another
    is the one bisected."""
    found = {id(x): (x, code) for x in ir.walk(body)
             if (code := _bisection(x, names)) is not None}
    for i, (x, _code) in list(found.items()):
        if any(id(y) in found for y in ir.walk(x) if y is not x):
            del found[i]
    whole = found.get(id(body))
    if whole is not None:
        return whole[1]
    if not found:
        return pyprint.bare(pyprint.expr(body, names))
    # printed with the counts' code in their places (a difference in parentheses)
    memo = {i: (x, code if code.startswith("_bisect_left(") else f"({code})")
            for i, (x, code) in found.items()}
    return pyprint.bare(pyprint.expr(body, replace(names, memo=memo)))


# The most numbers a count of constants below a value is printed as comparisons for: a few
# comparisons of native ints in the compiled engine against a call of `bisect_left` (a generic
# call there: a fifth of scoring's time with one such count per player).
_COMPARED_MOST = 8


def counted_by_comparisons(body: ir.Expr, names: pyprint.Names) -> list[str] | None:
    """A measure whose whole body is a count of a few constant numbers on one side of a value
    (`len([v for v in (1, 3, 5) if v < e])`) as the statements of its function: the value once
    in a local, then the count by comparisons of it with the numbers sorted at compile time
    (`if n_ <= 1: return 0`, `if n_ <= 3: return 1`, ...), the same count as the bisection's;
    None for any other body (and more than `_COMPARED_MOST` numbers)."""
    parts = _counted(body)
    if parts is None or len(parts[0]) > _COMPARED_MOST:
        return None
    numbers, op, other = parts
    n = len(numbers)
    # v < e for i of the numbers exactly when e <= numbers[i] (the first such i, sorted); v <=
    # e when e < numbers[i]; `>` and `>=` count the rest
    test = "<=" if op in ("<", ">=") else "<"
    counts = range(n + 1) if op in ("<", "<=") else range(n, -1, -1)
    out = [f"n_ = {pyprint.bare(pyprint.expr(other, names))}"]
    for c, x in zip(counts, numbers, strict=False):
        out += [f"if n_ {test} {x}:", f"    return {c}"]
    return [*out, f"return {counts[-1]}"]


def _counted(node: ir.Expr) -> tuple[list[int], str, ir.Expr] | None:
    """`len([v for v in NUMBERS if v OP e])` (or `e OP v`) as its numbers sorted, the
    comparison (`v OP e`) and `e`, else None."""
    if not (isinstance(node, ir.Call) and node.fn == "len" and len(node.args) == 1):
        return None
    comp = node.args[0]
    if not (isinstance(comp, ir.Comp) and comp.elt == ir.Local(comp.var)
            and len(comp.conds) == 1):
        return None
    numbers = const.sequence(comp.source)
    if not numbers or any(type(n) is not int for n in numbers):  # a bool is no number here
        return None
    test = comp.conds[0]
    if not (isinstance(test, ir.Compare) and len(test.ops) == 1 and test.ops[0][0] in _MIRROR):
        return None
    op, right = test.ops[0]
    if test.left == ir.Local(comp.var):
        other = right
    elif right == ir.Local(comp.var):
        other, op = test.left, _MIRROR[op]
    else:
        return None
    if comp.var in locals_named(other):
        return None
    return sorted(numbers), op, other


def _bisection(node: ir.Expr, names: pyprint.Names) -> str | None:
    """`len([v for v in NUMBERS if v OP e])` (or `e OP v`) as a bisection, else None."""
    parts = _counted(node)
    if parts is None:
        return None
    numbers, op, other = parts
    e = pyprint.bare(pyprint.expr(other, names))
    if _conditional(other, names):
        e = f"({e})"  # it binds less tightly than the `+ 1` that may follow
    ints = pyprint.expr(ir.Data(numbers), names)
    if names.constant is not None and ints.startswith("("):
        # named once at the module's level (a long one is already): no tuple made a call
        ints = names.constant(ints, tuple(numbers))
    n = len(numbers)
    # the numbers are ints, and so is the value they are compared with: v <= e is v < e + 1
    return {"<": f"_bisect_left({ints}, {e})",
            "<=": f"_bisect_left({ints}, {e} + 1)",
            ">": f"{n} - _bisect_left({ints}, {e} + 1)",
            ">=": f"{n} - _bisect_left({ints}, {e})"}[op]


def _conditional(node: ir.Expr, names: pyprint.Names) -> bool:
    """Whether a number is printed as `a if c else b` (a measure printed as its body, too)."""
    if isinstance(node, ir.Measure):
        body = pyprint.bare(pyprint.expr(node.body, names))
        return pyprint.expr(node, names) == body and _conditional(node.body, names)
    return isinstance(node, ir.Cond)


def _choice_names(proc: Procedure) -> tuple[str, ...]:
    return tuple(c.as_ for c in proc.choices)


def _without_comments(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if not line.strip().startswith("#"))


def _split(functions: list[str], bundles: list[str], actions: set[int]) -> list[str]:
    """The procedures first (the bundles call them), then the bundles, then the actions (the
    functions at the places `actions`)."""
    first = [f for i, f in enumerate(functions) if i not in actions]
    last = [f for i, f in enumerate(functions) if i in actions]
    return [*first, *bundles, *last]


_NOT_CHOSEN = {"integer": "None", "string": "None", "boolean": "False", "integers": "()",
               "strings": "()"}


# Where a move's code ends before the fields after its last choice: `_padded` writes their
# defaults there once every rule set's fields are known (a NUL is in no printed code).
_PAD = "\x00pad:"
_PAD_AT = re.compile(re.escape(_PAD) + "([0-9]+)\x00")


def positional_move(kind: str, chosen: tuple[str, ...], fields: dict[str, str]) -> str:
    """A move a move generator makes (ActionCompiler._emit_move: the choices `chosen`, each
    the value of its local), as its code: the tuple of a Move's fields in order (`Move(*code)`
    is the move), the choices not made as their defaults (`fields`: the Move's choices in
    order, with their JSON types; the fields after the last one chosen are written by
    `_padded` when the generators are laid out, since rule sets printed later may add fields
    at the end). A generator makes tens of moves per move played and a search plays one: a
    tuple costs a tenth of a Move, and one tuple made whole costs less than two joined."""
    names = list(fields)
    last = max((names.index(k) for k in chosen), default=-1)
    args = [local_code(n) if n in chosen else _NOT_CHOSEN[fields[n]] for n in names[: last + 1]]
    return f"({', '.join([py_str(kind), 'seat', *args])}{_PAD}{len(args) + 2}\x00)"


def _padded(code: str, fields: Mapping[str, str]) -> str:
    """A move generator's code with each move's code written whole: the defaults of the
    fields after its last choice (`fields`: every rule set's, in order) where it ends."""
    defaults = ["None", "None", *(_NOT_CHOSEN[t] for t in fields.values())]

    def pad(m: re.Match[str]) -> str:
        rest = defaults[int(m.group(1)):]
        return "".join(", " + d for d in rest)

    return _PAD_AT.sub(pad, code)


class _Copier:
    """What a move generator tries the steps after a choice on: for each set of fields they
    write, the functions that swap fresh copies of those fields into the state and put them
    back (`saver`), or, when other players' fields may change, a function copying the game with
    just those fields copied (`name`; the rest is shared, never written)."""

    def __init__(self, decl: Any) -> None:
        self.decl = decl
        self.gf = {f.id: f for f in decl.game}  # the declared fields, by id
        self.pf = {f.id: f for f in decl.player}
        self.names: dict[tuple[frozenset[str], frozenset[str], bool], str] = {}
        self.saved: dict[tuple[frozenset[str], frozenset[str], bool], tuple[str, str]] = {}
        self.undone: dict[tuple[frozenset[str], frozenset[str], bool], tuple[str, str]] = {}
        self.functions: list[str] = []

    @staticmethod
    def _pair(table: dict[tuple[frozenset[str], frozenset[str], bool], tuple[str, str]],
              key: tuple[frozenset[str], frozenset[str], bool], keep: str, put: str
              ) -> tuple[tuple[str, str], bool]:
        """The names of the two functions of a set of fields (`key`) in `table`, and whether
        they are new (then the caller prints them): `keepN` and `putN`, numbered in turn."""
        found = table.get(key)
        if found is not None:
            return found, False
        n = len(table) + 1
        found = table[key] = (f"{keep}{n}", f"{put}{n}")
        return found, True

    def name(self, game: frozenset[str], player: frozenset[str], others: bool) -> str:
        key = (game, player, others)
        found = self.names.get(key)
        if found is not None:
            return found
        found = self.names[key] = f"_cp{len(self.names) + 1}"
        gf, pf = self.gf, self.pf
        import textwrap

        copied = ", ".join(sorted([*game, *player])) or "nothing"
        lines = [f"def {found}(g: Game, seat: int) -> Game:",
                 '    """A copy of the game for trying choices, sharing what they never write."""',
                 *textwrap.wrap(f"copies {copied}", 94, initial_indent="    # ",
                                subsequent_indent="    # "),
                 "    c = g._copy()"]
        for fid in sorted(game):
            f = gf.get(fid)
            if f is None or fid == "players":
                continue
            copy = copy_code(f.type, f"g.{fid}")
            if copy is not None:
                lines.append(f"    c.{fid} = {copy}")
        mutable = sorted(fid for fid in player if fid in pf
                         and copy_code(pf[fid].type, "x") is not None)
        if player or others or "players" in game:
            lines.append("    c.players = g.players[:]")
            seats = "range(len(g.players))" if others or "players" in game else "(seat,)"
            lines.append(f"    for s in {seats}:")
            lines.append("        q = c.players[s] = g.players[s]._copy()" if mutable else
                         "        c.players[s] = g.players[s]._copy()")
            for fid in mutable:
                lines.append(f"        q.{fid} = {copy_code(pf[fid].type, f'q.{fid}')}")
        lines.append("    return c")
        self.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
        return found

    def scalar(self, fid: str, player: bool) -> bool:
        """Whether a field of the game (of a player) holds a value never changed in place
        (a number, a text, an id: nothing to copy)."""
        f = (self.pf if player else self.gf).get(fid)
        return f is not None and copy_code(f.type, "x") is None

    def saver(self, game: frozenset[str], player: frozenset[str]) -> tuple[str, str]:
        """For steps that write these fields of the game and of the acting player only: the
        functions that put fresh copies of them into the state itself, to try choices on
        (`_svN`: the fields as they were), and that put the fields back (`_rsN`)."""
        return self._saved(game, player)

    def _saved(self, game: frozenset[str], player: frozenset[str]) -> tuple[str, str]:
        """`saver`'s functions (`undoer` asks for them too: a test that prints the move
        generators without `saver` still has them for the moves tried in place)."""
        found, new = self._pair(self.saved, (game, player, False), "_sv", "_rs")
        if not new:
            return found
        gf, pf = self.gf, self.pf
        import textwrap

        fields = [(f"g.{fid}", gf[fid]) for fid in sorted(game) if fid in gf and fid != "players"]
        fields += [(f"p.{fid}", pf[fid]) for fid in sorted(player) if fid in pf]
        names = ", ".join(sorted({f.id for _code, f in fields})) or "nothing"
        uses_p = any(fid in pf for fid in player)
        codes = [code for code, _f in fields]
        save = [f"def {found[0]}(g: Game, seat: int) -> tuple[Any, ...]:",
                '    """Puts fresh copies of the fields that steps after a choice (or the steps of'
                ' a',
                "    move tried in place) write into the game itself, to try them on it; returns"
                " the",
                f'    fields as they were, for `{found[1]}` to put back."""',
                *textwrap.wrap(f"saves {names}", 94, initial_indent="    # ",
                               subsequent_indent="    # ")]
        if uses_p:
            save.append("    p = g.players[seat]")
        save.append("    was = (" + ", ".join(codes) + ("," if len(codes) == 1 else "") + ")")
        for code, f in fields:
            copy = copy_code(f.type, code)
            if copy is not None:
                save.append(f"    {code} = {copy}")
        save.append("    return was")
        restore = [f"def {found[1]}(g: Game, seat: int, was: tuple[Any, ...]) -> None:",
                   f'    """The fields `{found[0]}` saved, put back."""']
        if uses_p:
            restore.append("    p = g.players[seat]")
        if not codes:
            restore.append("    pass")
        elif len(codes) == 1:  # as ruff formats a target of one
            restore.append(f"    ({codes[0]},) = was")
        elif len(", ".join(codes)) + len("     = was") <= 100:
            restore.append("    " + ", ".join(codes) + " = was")
        else:  # as ruff formats a long target
            restore += ["    (", *[f"        {code}," for code in codes], "    ) = was"]
        for lines in (save, restore):
            self.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
        return found


    def undoer(self, game: frozenset[str], player: frozenset[str], others: bool
               ) -> tuple[str, str]:
        """For steps run on the state itself by a move tried in place (`_tried`) that write
        these fields of the game and of the acting player (`others`: of every player): the
        functions that keep the fields as they were and put fresh copies of those held in lists
        and tables in their place, for the steps to change, and that put them back. For the
        acting player's fields those are the move generators' (`_saved`: `_svN`, `_rsN`);
        for every player's, `_uvN` and `_urN`."""
        if not others:
            return self._saved(game, player)
        found, new = self._pair(self.undone, (game, player, others), "_uv", "_ur")
        if not new:
            return found
        gf, pf = self.gf, self.pf
        import textwrap

        gfields = [(fid, gf[fid]) for fid in sorted(game) if fid in gf and fid != "players"]
        pfields = [(fid, pf[fid]) for fid in sorted(player) if fid in pf]
        names = ", ".join(sorted({fid for fid, _f in [*gfields, *pfields]}
                                 | ({"players"} if "players" in game else set()))) or "nothing"
        save = [f"def {found[0]}(g: Game, seat: int) -> tuple[Any, ...]:",
                '    """Before steps that change the state in a move tried in place: the fields'
                ' they',
                f"    write (every player's) as they were, for `{found[1]}`; a fresh copy of each"
                " held in",
                '    a list or a table put in its place."""',
                *textwrap.wrap(f"keeps {names}", 94, initial_indent="    # ",
                               subsequent_indent="    # ")]
        restore = [f"def {found[1]}(g: Game, seat: int, was: tuple[Any, ...]) -> None:",
                   f'    """The fields `{found[0]}` kept, put back."""']
        kept = [f"g.{fid}" for fid, _f in gfields]
        copies = [(f"g.{fid}", copy_code(f.type, f"g.{fid}")) for fid, f in gfields]
        if "players" in game:
            kept.append("g.players")
            copies.append(("g.players", "g.players[:]"))
        pcodes = [f"q.{fid}" for fid, _f in pfields]
        pcopies = [(f"q.{fid}", copy_code(f.type, f"q.{fid}")) for fid, f in pfields]
        one = "," if len(pcodes) == 1 else ""  # a tuple of one
        if pfields:
            save.append("    qs = tuple(g.players)")
            kept += ["qs", f"tuple(({', '.join(pcodes)}{one}) for q in qs)"]
        save.append("    was = (" + ", ".join(kept) + ("," if len(kept) == 1 else "") + ")")
        save += [f"    {code} = {copy}" for code, copy in copies if copy is not None]
        if any(copy is not None for _code, copy in pcopies):
            save.append("    for q in qs:")
            save += [f"        {code} = {copy}" for code, copy in pcopies if copy is not None]
        save.append("    return was")
        targets = [*kept[:len(copies)], *(["qs", "values"] if pfields else [])]
        if pfields:  # (typed: compiled, their fields are then set as a Player's, not by name)
            restore.append("    qs: tuple[Player, ...]")
        if not targets:
            restore.append("    pass")
        elif len(targets) == 1:
            restore.append(f"    ({targets[0]},) = was")
        else:
            restore += ["    (", *[f"        {t}," for t in targets], "    ) = was"]
        if len(pfields) == 1:  # as ruff formats a target of one
            restore += ["    for q, kept in zip(qs, values, strict=True):",
                        f"        ({pcodes[0]},) = kept"]
        elif pfields:
            restore += ["    for q, kept in zip(qs, values, strict=True):",
                        "        (", *[f"            {c}," for c in pcodes], "        ) = kept"]
        for lines in (save, restore):
            self.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
        return found


def _phase_lines(pc: CheckedPhase, names: pyprint.Names
                 ) -> tuple[list[str] | None, list[str] | None]:
    """A phase's functions (None: it has no such function): who moves (`_phase_STEM`) and
    whether it interrupts the others (`_interrupts_STEM`)."""
    stem = _PLACEHOLDER
    head = ["    p = g.players[g.actor]"] if pc.uses_player else []
    lines: list[str] | None = None
    if pc.actor is not None:
        lines = [f"def _phase_{stem}(g: Game) -> int | None:", *head]
        if pc.lasts is not None:
            lines += [f"    if not ({pyprint.bare(pyprint.expr(pc.lasts, names))}):",
                      "        return None"]
        lines.append(f"    return {pyprint.bare(pyprint.expr(pc.actor, names))}")
    inter = None
    if pc.interrupts is not None:
        inter = [f"def _interrupts_{stem}(g: Game) -> bool:", *head,
                 f"    return {pyprint.bare(pyprint.expr(pc.interrupts, names))}"]
    return lines, inter


def _as_printed(value: Any) -> Any:
    """A constant of the rules data as the engine holds it (lists are tuples)."""
    if isinstance(value, list | tuple):
        return tuple(_as_printed(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _as_printed(v) for k, v in value.items()}
    return value
