"""The procedures of every rule set as functions of the generated engine.

Each procedure (an effect, a shared procedure, a hook, a Noble action: lisboa_rules/lang/steps.py)
becomes three straight-line functions: `_opts_…` (the choices its guard allows), `_why_…` (why a
choice is refused) and `_run_…` (its effects). Rule sets whose procedure compiles to the same code
share one function; the tables the steps read (`_T_card_influence`) are shared the same way.
"""

from __future__ import annotations

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
        lines = [f"def {name}(g: Game, p: Player) -> {returns}:", f"    return {body}"]
        measures.append("\n".join(w for line in lines for w in wrap_line(line)))
    view.functions = measures + view.functions
    code = "\n".join(view.functions)
    view.tables = [(name, fmt(values)) for name, values in tables.values.items()
                   if name in code]
    view.tables += [(name, value) for value, name in tables.constants.items() if name in code]
    return view


def _choice_names(proc: Procedure) -> tuple[str, ...]:
    return tuple(str(c.arg["as"]) for c in proc.choices)


def _without_comments(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if not line.strip().startswith("#"))
