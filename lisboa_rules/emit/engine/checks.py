"""The checks of a state (`ir/program.py`: the invariants of rules/state.yaml, the checks of a
saved game, the listers of the conserved kinds) printed as Python for the generated engine.

A check's condition is printed by the IR's printer (`pyprint/expr.py`) and tested the way ruff
would write its failure (`if NOT-CONDITION:`): an (in)equality turned round, `not (not x)` as
x, the condition `any` / `all` test given as a generator; the words of a problem are one string
expression, its literal pieces joined.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any, assert_never

from lisboa_rules.core.encode import py_str
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import program as prog
from lisboa_rules.ir.reads import reads
from lisboa_rules.pyprint import expr as pyprint
from lisboa_rules.pyprint.expr import Names


def lister_stem(kind: str) -> str:
    """The engine's own name of the function listing a conserved kind's ids."""
    return "_ids_" + kind.replace("-", "_")


def ids_stem(kind: str) -> str:
    """The engine's own name of the table of a conserved kind's sorted ids."""
    return "_IDS_" + kind.replace("-", "_")


def words(parts: prog.Words, n: Names) -> str:
    """Words as a Python expression of text: its literal pieces, and its values shown (a
    constant as its text, a text as it is, any other value through `str`)."""
    pieces: list[tuple[bool, str]] = []  # (a literal text?, the text or the code)
    for part in parts:
        if isinstance(part, str):
            pieces.append((True, part))
            continue
        try:
            value = const.scalar(part.value)
        except const.NotConstant:
            shown = pyprint.bare(pyprint.expr(part.value, n))
            pieces.append((False, shown if part.text else f"str({shown})"))
        else:
            pieces.append((True, str(value)))
    merged: list[tuple[bool, str]] = []
    for literal, x in pieces:  # adjacent literals become one
        if literal and merged and merged[-1][0]:
            merged[-1] = (True, merged[-1][1] + x)
        else:
            merged.append((literal, x))
    return " + ".join(py_str(x) if literal else x for literal, x in merged) or '""'


def _reads_seat(body: Sequence[prog.Stmt]) -> bool:
    return any(reads(e, ir.Seat) for s in body for e in prog.expressions(s))


def _each_player(body: tuple[prog.Holds, ...], lines: list[str]) -> list[str]:
    head = ("    for seat, p in enumerate(g.players):" if _reads_seat(body)
            else "    for p in g.players:")
    return [head, *("        " + line for line in lines)]


def _holds(h: prog.Holds, n: Names, indent: int) -> list[str]:
    """A condition's check, indented by 0 (the caller indents it by `indent`)."""
    note = [] if h.note is None else [f"# {h.note}"]
    if h.at is None:
        report = [f"    problems.append({words(h.words, n)})"]
    else:
        where, said = words(h.at, n), words(h.words, n)
        report = [f"    return {where}, {said}"]
        if indent + len(report[0]) > 100:  # in brackets, one value a line, as ruff has it
            report = ["    return (", f"        {where},", f"        {said},", "    )"]
    return [*note, *_test(h.test, n, indent), *report]


def invariants(checks: prog.Checks, n: Names, lister: Callable[[str], str],
               ids: Callable[[str, list[Any]], str]) -> list[str]:
    """The body of the invariants' check (4-space indented lines that append to `problems`):
    `lister(kind)` is the name of the function listing a conserved kind's ids, `ids(stem,
    values)` the name of the table of its sorted ids."""
    out: list[str] = []
    for s in checks.body:
        match s:
            case prog.Holds():
                out += ["    " + line for line in _holds(s, n, 4)]
            case prog.EachPlayer(body=body):
                out += _each_player(body, [line for h in body for line in _holds(h, n, 8)])
            case prog.Conserved(kind=kind, ids=values, words=w, note=note):
                table = ids(ids_stem(kind), list(values))
                out += [*_note(note),
                        f"    if sorted({lister(kind)}(g)) != {table}:",
                        f"        problems.append({words(w, n)})"]
            case prog.Counted(note=note):
                out += [*_note(note), *_counted(s, n)]
            case prog.SeatOf():
                raise ValueError("a seat field's check is a saved game's")
            case _:
                assert_never(s)
    return out


def _note(note: str | None) -> list[str]:
    return [] if note is None else [f"    # {note}"]


def _counted(c: prog.Counted, n: Names) -> list[str]:
    local = pyprint.local(c.kind)  # the id counted
    counts: list[str] = []
    negative: list[str] = []
    body: list[str] = []
    for z in c.zones:
        if z.table and z.scope == "game":
            got = f"c{len(negative) + 1}"
            body.append(f"        {got} = g.{z.field}.get({local}, 0)")
            negative.append(f"{got} < 0")
            counts.append(got)
        elif z.table:
            negative.append(f"any(q.{z.field}.get({local}, 0) < 0 for q in g.players)")
            counts.append(f"sum([q.{z.field}.get({local}, 0) for q in g.players])")
        elif z.scope == "game":
            counts.append(f"g.{z.field}.count({local})")
        else:
            counts.append(f"sum([q.{z.field}.count({local}) for q in g.players])")
    total = pyprint.expr(c.total, n)
    wrong = " or ".join([*negative, f"{' + '.join(counts) or '0'} != {total}"])
    return [f"    for {local} in {pyprint.expr(c.ids, n)}:",
            *body,
            f"        if {wrong}:",
            f"            problems.append({words(c.words, n)})"]


def state_checks(checks: prog.Checks, n: Names) -> list[str]:
    """The body of the saved-game checks (4-space indented lines that return the first
    problem: its JSON path and its words)."""
    out: list[str] = []
    for s in checks.body:
        match s:
            case prog.Holds():
                out += ["    " + line for line in _holds(s, n, 4)]
            case prog.EachPlayer(body=body):
                out += _each_player(body, [line for h in body for line in _holds(h, n, 8)])
            case prog.SeatOf():
                out += _seat_of(s)
            case prog.Conserved() | prog.Counted():
                raise ValueError("a conserved kind is an invariant's")
            case _:
                assert_never(s)
    return out


def _seat_of(s: prog.SeatOf) -> list[str]:
    f = s.field
    if s.many:
        return [f"    for v in g.{f}:", "        if not 0 <= v < len(g.players):",
                f'            return "$.{f}", str(v) + " is not a seat of this game"']
    test = (f"    if g.{f} is not None and not 0 <= g.{f} < len(g.players):" if s.optional
            else f"    if not 0 <= g.{f} < len(g.players):")
    return [test, f'        return "$.{f}", str(g.{f}) + " is not a seat of this game"']


def lister(ls: prog.Lister, name: str) -> list[str]:
    """`def NAME(g) -> list[T]`: every id of the kind, zone after zone as `in:` lists them."""
    t = pyprint.annotation(ls.of)
    lines = [f"def {name}(g: Game) -> list[{t}]:"]
    lines.append(f'    """Every {ls.kind} id wherever it is in the state (rules/state.yaml)."""')
    where = ", ".join(f"{z.scope}.{z.field}" for z in ls.zones)
    lines += textwrap.wrap(
        f"in {where}",
        94,
        initial_indent="    # ",
        subsequent_indent="    # ",
        break_on_hyphens=False,
    )
    started = False

    def add(items: Sequence[str]) -> None:
        nonlocal started
        if not started:
            lines.append(f"    ids: list[{t}] = [{', '.join(items)}]")
            started = True
        else:
            lines.append(f"    ids += [{', '.join(items)}]")

    zones = list(ls.zones)
    i = 0
    while i < len(zones):
        z = zones[i]
        if not z.table:
            run = [z]
            while i + 1 < len(zones) and not zones[i + 1].table and zones[i + 1].scope == z.scope:
                i += 1
                run.append(zones[i])
            if z.scope == "game":
                add([f"*g.{r.field}" for r in run])
            else:
                if not started:
                    add([])
                lines.append("    for q in g.players:")
                lines.append(f"        ids += [{', '.join(f'*q.{r.field}' for r in run)}]")
        else:
            if not started:
                add([])
            if z.scope == "game":
                lines += [f"    for v in g.{z.field}.values():", "        ids += v"]
            else:
                lines += [
                    "    for q in g.players:",
                    f"        for v in q.{z.field}.values():",
                    "            ids += v",
                ]
        i += 1
    if not started:
        add([])
    lines.append("    return ids")
    return lines


def _negation(cond: ir.Expr) -> ir.Expr:
    """`not cond` as ruff would have it: `not (not x)` is x, an (in)equality turned round."""
    if isinstance(cond, ir.Not):
        return cond.operand
    if isinstance(cond, ir.Compare) and len(cond.ops) == 1 and cond.ops[0][0] in ("==", "!="):
        op, right = cond.ops[0]
        return ir.Compare(cond.left, (("!=" if op == "==" else "==", right),))
    return ir.Not(cond)


def _side(node: ir.Expr, n: Names) -> str:
    """An operand of `==` / `!=`, without brackets unless it needs them (a comparison, a
    condition, a conditional expression, a negation)."""
    code = pyprint.expr(node, n)
    compound = isinstance(node, ir.Compare | ir.BoolOp | ir.Cond | ir.Not | ir.Neg)
    return code if compound else pyprint.bare(code)


def _test(cond: ir.Expr, n: Names, indent: int) -> list[str]:
    """The statements testing that a condition fails: `if NOT-CONDITION:`, with the left side
    of a long (in)equality computed first (a line the engine's formatting splits as ruff
    does)."""
    neg = _negation(cond)
    if isinstance(neg, ir.Compare) and len(neg.ops) == 1 and neg.ops[0][0] in ("==", "!="):
        op, right = neg.ops[0]
        left, other = _side(neg.left, n), _side(right, n)
        if indent + len(f"if {left} {op} {other}:") <= 100:
            return [f"if {left} {op} {other}:"]
        return [f"got = {left}", f"if got {op} {other}:"]
    if isinstance(neg, ir.Not):
        return [f"if not ({pyprint.bare(pyprint.expr(neg.operand, n))}):"]
    return [f"if {pyprint.bare(pyprint.expr(neg, n))}:"]


