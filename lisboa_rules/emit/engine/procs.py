"""The procedures of every rule set as functions of the generated engine.

Each procedure (an effect, a shared procedure, a hook, a Noble action: lisboa_rules/lang/steps.py)
becomes three straight-line functions: `_opts_…` (the choices its guard allows), `_why_…` (why a
choice is refused) and `_run_…` (its effects). Rule sets whose procedure compiles to the same code
share one function; the tables the steps read (`_T_card_influence`) are shared the same way.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.emit.engine.pyfmt import Call, Raw, fmt, identifier, wrap_line
from lisboa_rules.lang.steps import Compiler, Procedure
from lisboa_rules.model import procs as P
from lisboa_rules.model.types import Model

_PLACEHOLDER = "STEM__"  # a procedure's own name until its code is known to be new


@dataclass
class ProcView:
    functions: list[str] = field(default_factory=list)  # source blocks, in emission order
    tables: list[tuple[str, str]] = field(default_factory=list)  # (name, literal)
    by_ruleset: list[dict[str, Any]] = field(default_factory=list)  # pid -> Call("ProcDef")
    vocab: list[dict[str, tuple[str, str]]] = field(default_factory=list)  # names' codes


def _order(ps: P.ProcSet) -> list[str]:
    """Callees before callers (the call graph is acyclic: checked by the model)."""
    done: list[str] = []
    seen: set[str] = set()

    def visit(pid: str) -> None:
        if pid in seen:
            return
        seen.add(pid)
        for s in ps.procs[pid].steps:
            for sub in s.walk():
                if sub.kind == "do" and isinstance(sub.arg, str) and sub.arg in ps.procs:
                    visit(sub.arg)
                if sub.kind == "raise":
                    event = sub.arg.get("event") if isinstance(sub.arg, dict) else sub.arg
                    for h in ps.hooks.get(str(event), ()):
                        visit(h)
        done.append(pid)

    for pid in ps.procs:
        visit(pid)
    return done


def procedure_view(models: list[Model], where: Callable[[Model, tuple[str | int, ...]], str]
                   ) -> ProcView:
    """The functions of every rule set's procedures, shared where the code is the same."""
    view = ProcView()
    tables = P.Tables()
    by_code: dict[str, str] = {}  # the code with its stem replaced by "@" -> stem
    used: set[str] = set()
    for m in models:
        ps = m.procs
        assert ps is not None and m.state is not None
        scope = P.state_scope(m.state, m.data, ps.measures, tables)
        view.vocab.append(P.vocab_codes(m.data["vocabulary"]["names"], scope))
        scope = P.with_formulas(scope, m.data["vocabulary"]["names"])
        stems: dict[str, str] = {}
        defs: dict[str, Any] = {}
        for pid in _order(ps):
            proc = ps.procs[pid]
            base = identifier(re.sub(r"[^a-z0-9_]", "_", pid.lower())).lstrip("_") or "proc"
            comp_scope = P._with_row(scope, ps.this[pid]) if pid in ps.this else scope

            def stem_of(q: str, me: str = pid, known: dict[str, str] = stems) -> str:
                return _PLACEHOLDER if q == me else known[q]

            def located(path: tuple[str | int, ...], mm: Model = m) -> str:
                return where(mm, path)

            comp = Compiler(comp_scope, ps.procs, ps.hooks, stem_of, located)
            emitted = comp.compile(proc)
            code = "\n".join([*emitted.opts, "", "", *emitted.why, "", "", *emitted.run])
            key = _without_comments(code)
            stem = by_code.get(key)
            if stem is None:
                stem = base
                n = 1
                while stem in used:
                    n += 1
                    stem = f"{base}_{n}"
                used.add(stem)
                by_code[key] = stem
                lines = code.replace(_PLACEHOLDER, stem).split("\n")
                view.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
            stems[pid] = stem
            defs[pid] = Call("ProcDef", (pid, _choice_names(proc), Raw(f"_opts_{stem}"),
                                         Raw(f"_why_{stem}"), Raw(f"_run_{stem}")))
        view.by_ruleset.append(defs)
    measures = []
    for name, (returns, body) in tables.measures.items():
        body = counted_by_bisection(body)
        lines = [f"def {name}(g: Game, p: Player) -> {returns}:", f"    return {body}"]
        measures.append("\n".join(w for line in lines for w in wrap_line(line)))
    view.functions = measures + view.functions
    code = "\n".join(view.functions)
    view.tables = [(name, fmt(values)) for name, values in tables.values.items()
                   if name in code]
    view.tables += [(name, value) for value, name in tables.constants.items() if name in code]
    return view


_BELOW = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_TIGHT = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant, ast.UnaryOp)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div, ast.Pow)


def counted_by_bisection(code: str) -> str:
    """A measure's code with each count of the constant numbers on one side of a value,
    `len([v for v in (1, 3, 5) if v < e])`, as a bisection of those numbers sorted at compile
    time (`bisect_left((1, 3, 5), e)`): the same count, without a list made and every number
    compared on each call. Any other code is returned as it is."""
    if "\n" in code:  # the offsets below are those of one line
        return code
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return code
    found: list[tuple[int, int, str]] = []  # (start, end, replacement), byte offsets
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        new = _bisection(node, code.encode())
        if new is not None:
            if not new.startswith("bisect_left(") and node is not tree.body:  # a difference
                new = f"({new})"
            found.append((node.col_offset, node.end_col_offset or node.col_offset, new))
    text = code.encode()
    last = len(text) + 1
    for start, end, new in sorted(found, reverse=True):
        if end <= last:  # not inside a count already replaced
            text = text[:start] + new.encode() + text[end:]
            last = start
    return text.decode()


def _int(node: ast.expr) -> int | None:
    """The value of an int literal (`3`, `-3`), else None (a bool is not an int here)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _bisection(node: ast.Call, source: bytes) -> str | None:
    """`len([v for v in (INTS) if v OP e])` (or `e OP v`) as a bisection, else None."""
    if not (isinstance(node.func, ast.Name)
            and node.func.id == "len" and len(node.args) == 1 and not node.keywords):
        return None
    comp = node.args[0]
    if not (isinstance(comp, ast.ListComp) and isinstance(comp.elt, ast.Name)
            and len(comp.generators) == 1):
        return None
    gen = comp.generators[0]
    var = comp.elt.id
    if not (isinstance(gen.target, ast.Name) and gen.target.id == var and not gen.is_async
            and isinstance(gen.iter, ast.Tuple) and len(gen.ifs) == 1):
        return None
    numbers = [_int(e) for e in gen.iter.elts]
    if not numbers or None in numbers:
        return None
    test = gen.ifs[0]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and type(test.ops[0]) in _BELOW):
        return None
    op = _BELOW[type(test.ops[0])]
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Name) and left.id == var:
        other = right
    elif isinstance(right, ast.Name) and right.id == var:
        other, op = left, _MIRROR[op]
    else:
        return None
    if any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(other)):
        return None
    e = source[other.col_offset : other.end_col_offset].decode()
    if not isinstance(other, _TIGHT) and not (
            isinstance(other, ast.BinOp) and isinstance(other.op, _ARITHMETIC)):
        e = f"({e})"  # it binds less tightly than the `+ 1` that may follow
    ordered = sorted(n for n in numbers if n is not None)
    ints = "(" + ", ".join(str(n) for n in ordered) + ("," if len(ordered) == 1 else "") + ")"
    n = len(numbers)
    # the numbers are ints, and so is the value they are compared with: v <= e is v < e + 1
    return {"<": f"bisect_left({ints}, {e})",
            "<=": f"bisect_left({ints}, {e} + 1)",
            ">": f"{n} - bisect_left({ints}, {e} + 1)",
            ">=": f"{n} - bisect_left({ints}, {e})"}[op]


def _choice_names(proc: Procedure) -> tuple[str, ...]:
    return tuple(str(c.arg["as"]) for c in proc.choices)


def _without_comments(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if not line.strip().startswith("#"))
