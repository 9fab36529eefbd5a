"""The invariants of rules/state.yaml compiled: what must hold in every state, as one
straight-line Python function of the game per rule set (`check_invariants` calls it through the
rule set), and for each conserved kind of ids a function listing its ids wherever they are.

Used twice: by the state builder, to report every problem of every invariant as a located
error (`problems`), and by the engine emitter, for the code (`InvariantCode`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lisboa_rules.core.encode import py_str
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import Name, Scope, VType
from lisboa_rules.model.state import Invariant, StateDecl, StateType


@dataclass(frozen=True)
class Problem:
    """A problem of an invariant: where (a path in the state document), and for an expression
    the text checked and the 0-based column where it goes wrong."""

    code: str
    message: str
    path: tuple[str | int, ...]
    suggestion: str | None = None
    source: str = ""
    col: int = 0


@dataclass
class InvariantCode:
    """The code of one rule set's invariants: the check's body (4-space indented lines), the
    functions listing the ids of each conserved kind (kind -> (name, lines)), and the sorted ids
    the check compares with (name -> values)."""

    check: list[str] = field(default_factory=list)
    listers: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    ids: dict[str, list[Any]] = field(default_factory=dict)


def lister_name(inv: Invariant) -> str:
    """The name of the function listing a conserved kind's ids: `function:`, else private."""
    assert inv.kind is not None
    return inv.function or "_ids_" + inv.kind.replace("-", "_")


def zone_ok(t: StateType, kind: str, counted: bool) -> bool:
    """Whether a field holds ids of `kind` as a conservation reads them: a list of ids, a map
    of lists of ids, or (counted) a map from the ids to a number."""
    if t.optional:
        return False
    if t.name == "list":
        return t.args[0].name == kind and not t.args[0].optional
    if t.name == "map" and not counted:
        inner = t.args[1]
        return inner.name == "list" and inner.args[0].name == kind and not inner.args[0].optional
    if t.name == "map" and counted:
        return t.args[0].name == kind and t.args[1].name == "int"
    return False


def _expr(
    source: Any,
    scope: Scope,
    want: VType | None,
    path: tuple[str | int, ...],
    problems: list[Problem],
) -> typed.Typed | None:
    try:
        return typed.check(source, scope, want)
    except typed.ExprError as exc:
        shown = exc.message if f"'{source}'" in exc.message else f"{exc.message} (in '{source}')"
        problems.append(
            Problem(
                exc.code,
                shown,
                path,
                exc.suggestion,
                source if isinstance(source, str) else "",
                exc.col,
            )
        )
        return None


def _words(text: str, scope: Scope, path: tuple[str | int, ...], problems: list[Problem]) -> str:
    """The words of an invariant as a Python expression: its `{expression}`s shown."""
    import re

    parts: list[str] = []
    pos = 0
    for m in re.finditer(r"\{([^{}]+)\}", text):
        if m.start() > pos:
            parts.append(py_str(text[pos : m.start()]))
        pos = m.end()
        t = _expr(m.group(1), scope, None, path, problems)
        if t is None:
            continue
        try:
            value = ast.literal_eval(t.code)
        except (ValueError, SyntaxError):
            shown = typed.bare(t.code)
            is_text = typed.compatible(t.type, typed.TEXT, scope.int_kinds) and not t.type.optional
            parts.append(
                shown if is_text and t.type.name not in ("list", "map") else f"str({shown})"
            )
        else:
            parts.append(py_str(str(value)))
    if pos < len(text):
        parts.append(py_str(text[pos:]))
    merged: list[str] = []
    for x in parts:  # adjacent literals become one
        if merged and merged[-1][:1] == x[:1] == '"':
            merged[-1] = py_str(ast.literal_eval(merged[-1]) + ast.literal_eval(x))
        else:
            merged.append(x)
    return " + ".join(merged) or '""'


def compile_invariants(
    decl: StateDecl, scope: Scope, comment: Callable[[Invariant], str] | None = None
) -> tuple[InvariantCode, list[Problem]]:
    """The code of the declared invariants in this rule set's scope (the acting player `p` at
    `seat`, the game `g`), and every problem found."""
    out = InvariantCode()
    problems: list[Problem] = []
    game_scope = replace(scope, player={}, locals={}, measures={})  # no acting player
    kinds = {k.id: k for k in decl.kinds}
    group: list[str] = []  # the checks of consecutive `each: player` invariants

    def close() -> None:
        if group:
            seat = any("seat" in _names(line) for line in group)
            out.check.append(
                "    for seat, p in enumerate(g.players):" if seat else "    for p in g.players:"
            )
            out.check.extend("        " + line for line in group)
            group.clear()

    for inv in decl.invariants:
        note = [f"# {comment(inv)}"] if comment is not None else []
        if inv.holds is not None:
            s = scope if inv.each == "player" else game_scope
            t = _expr(inv.holds, s, typed.BOOL, (*inv.path, "holds"), problems)
            words = _words(inv.text, s, (*inv.path, "text"), problems)
            if t is None:
                continue
            indent = 8 if inv.each == "player" else 4
            lines = [*note, *_test(t.code, indent), f"    problems.append({words})"]
            if inv.each == "player":
                group.extend(lines)
            else:
                close()
                out.check.extend("    " + line for line in lines)
            continue
        close()
        if inv.kind is None:
            continue
        kind = kinds.get(inv.kind)
        if kind is None or kind.values is None:
            continue  # reported by the builder
        if inv.count is None:
            name = lister_name(inv)
            out.listers[inv.kind] = (name, _lister(inv, name, kind.of))
            ids = f"_IDS_{inv.kind.replace('-', '_')}"
            out.ids[ids] = sorted(kind.values)
            words = _words(inv.text, game_scope, (*inv.path, "text"), problems)
            out.check += [f"    {line}" for line in note]
            out.check += [
                f"    if sorted({name}(g)) != {ids}:",
                f"        problems.append({words})",
            ]
            continue
        local = typed.local_code(inv.kind)  # the id counted
        inner = game_scope
        if inv.kind.isidentifier():
            inner = game_scope.with_locals(
                **{inv.kind: Name(VType(inv.kind), typed.code_local(local))})
        n = _expr(inv.count, game_scope, typed.INT, (*inv.path, "conserved", "count"), problems)
        words = _words(inv.text, inner, (*inv.path, "text"), problems)
        if n is None:
            continue
        values = typed.constant_code(list(kind.values))
        if len(values) > 40 and scope.name_constant is not None:
            values = scope.name_constant(values)
        counts: list[str] = []
        negative: list[str] = []
        body: list[str] = []
        for z in inv.zones:
            if z.type.name == "map" and z.scope == "game":
                c = f"c{len(negative) + 1}"
                body.append(f"        {c} = g.{z.field}.get({local}, 0)")
                negative.append(f"{c} < 0")
                counts.append(c)
            elif z.type.name == "map":
                negative.append(f"any(q.{z.field}.get({local}, 0) < 0 for q in g.players)")
                counts.append(f"sum([q.{z.field}.get({local}, 0) for q in g.players])")
            elif z.scope == "game":
                counts.append(f"g.{z.field}.count({local})")
            else:
                counts.append(f"sum([q.{z.field}.count({local}) for q in g.players])")
        wrong = " or ".join([*negative, f"{' + '.join(counts) or '0'} != {n.code}"])
        out.check += [f"    {line}" for line in note]
        out.check += [
            f"    for {local} in {values}:",
            *body,
            f"        if {wrong}:",
            f"            problems.append({words})",
        ]
    close()
    return out, problems


@functools.lru_cache(maxsize=4096)
def _negated(code: str) -> str:
    """`not (code)`, written as ruff would have it: an (in)equality turned round, and the
    conditions `any` / `all` test given as a generator rather than a list. (A function of the
    text alone: the rule sets of a build share most of their checks.)"""
    text = code.encode()
    try:
        tree = parse_expr(text)
    except SyntaxError:
        return f"not ({typed.bare(code)})"
    if isinstance(tree.body, ast.UnaryOp) and isinstance(tree.body.op, ast.Not):
        inner = ast.get_source_segment(code, tree.body.operand)  # `not (not x)` is x
        if inner is not None:
            return _unlisted(typed.bare(inner))
    out = _unlisted(code)
    body = parse_expr(out).body
    if (
        isinstance(body, ast.Compare)
        and len(body.ops) == 1
        and isinstance(body.ops[0], ast.Eq | ast.NotEq)
    ):
        at = _top_level(out, "==" if isinstance(body.ops[0], ast.Eq) else "!=")
        if at is not None:
            op = "!=" if isinstance(body.ops[0], ast.Eq) else "=="
            left, right = out[:at].strip(), out[at + 2 :].strip()
            sides = [typed.bare(x) for x in (left, right)]
            if not any(_compound(x) for x in sides):  # `(a is None) == (b is None)` keeps them
                return f"{sides[0]} {op} {sides[1]}"
            return f"{left} {op} {right}"
    return f"not ({out})"


def _unlisted(code: str) -> str:
    """The code with the conditions `any` / `all` test given as a generator rather than a
    list, at every depth (as ruff would have it)."""
    while True:
        new = _unlisted_once(code)
        if new == code:
            return typed.bare(new)
        code = new


def _unlisted_once(code: str) -> str:
    text = code.encode()
    try:
        tree = parse_expr(text)
    except SyntaxError:
        return code
    cuts: list[tuple[int, int, bytes]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("any", "all")
            and len(node.args) == 1
            and isinstance(node.args[0], ast.ListComp)
            and "\n" not in code
        ):
            arg = node.args[0]
            start, end = arg.col_offset, arg.end_col_offset or arg.col_offset
            cuts.append((start, end, text[start + 1 : end - 1]))
    last = len(text) + 1
    for start, end, new in sorted(cuts, reverse=True):
        if end <= last:
            text = text[:start] + new + text[end:]
            last = start
    return text.decode()


def _compound(code: str) -> bool:
    """Whether an operand needs its brackets beside `==` / `!=`: a comparison, a condition or
    a conditional expression."""
    try:
        node = parse_expr(code).body
    except SyntaxError:
        return True
    return isinstance(node, ast.Compare | ast.BoolOp | ast.IfExp | ast.UnaryOp)


def _test(code: str, indent: int) -> list[str]:
    """The statements testing that a condition fails: `if NOT-CONDITION:`, with the left side
    of a long (in)equality computed first (a line the engine's formatting splits as ruff
    does)."""
    test = _negated(code)
    at = None
    if not test.startswith("not ("):  # an (in)equality turned round
        at = _top_level(test, "!=")
        at = _top_level(test, "==") if at is None else at
    if at is None or indent + len(f"if {test}:") <= 100:
        return [f"if {test}:"]
    return [f"got = {test[:at].strip()}", f"if got {test[at:].strip()}:"]


def _top_level(code: str, op: str) -> int | None:
    """Where `op` stands outside every bracket and string of `code`, else None."""
    depth = 0
    quote = ""
    i = 0
    while i < len(code):
        ch = code[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and code.startswith(op, i):
            return i
        i += 1
    return None


@functools.lru_cache(maxsize=4096)
def _names(code: str) -> frozenset[str]:
    """The names a line of code reads (kept: every rule set asks for the same lines)."""
    try:
        tree = ast.parse(
            code.strip().removeprefix("if ").removesuffix(":").strip()
            if code.strip().startswith("if ")
            else code.strip()
        )
    except SyntaxError:
        return frozenset()
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))


def _lister(inv: Invariant, name: str, of: str) -> list[str]:
    """`def NAME(g) -> list[T]`: every id of the kind, zone after zone as `in:` lists them."""
    t = "int" if of == "int" else "str"
    lines = [f"def {name}(g: Game) -> list[{t}]:"]
    import textwrap

    lines.append(f'    """Every {inv.kind} id wherever it is in the state (rules/state.yaml)."""')
    where = ", ".join(f"{z.scope}.{z.field}" for z in inv.zones)
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

    zones = list(inv.zones)
    i = 0
    while i < len(zones):
        z = zones[i]
        if z.type.name == "list":
            run = [z]
            while (
                i + 1 < len(zones)
                and zones[i + 1].type.name == "list"
                and zones[i + 1].scope == z.scope
            ):
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


def measures_of(data: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The measures of the vocabulary (rules/vocabulary.yaml) an invariant may read."""
    rows = (data.get("vocabulary") or {}).get("names") or []
    return tuple(
        (str(m.get("name")), m.get("value"))
        for m in rows
        if isinstance(m, Mapping) and "value" in m and not m.get("per")
    )


def _seat_checks(decl: StateDecl) -> list[str]:
    """The checks of the game's seat fields (types `seat`, `seat?`, `list[seat]`): each seat
    they hold is one of the players'."""
    lines: list[str] = []
    for f in decl.game:
        t = f.type
        if t.name == "seat":
            value = f"g.{f.id}"
            if t.optional:
                lines.append(f"    if g.{f.id} is not None and not 0 <= g.{f.id} < len(g.players):")
            else:
                lines.append(f"    if not 0 <= g.{f.id} < len(g.players):")
        elif t.name == "list" and t.args[0].name == "seat" and not t.optional:
            value = "v"
            lines += [f"    for v in g.{f.id}:", "        if not 0 <= v < len(g.players):"]
            lines.append(f'            return "$.{f.id}", str(v) + " is not a seat of this game"')
            continue
        else:
            continue
        lines.append(f'        return "$.{f.id}", str({value}) + " is not a seat of this game"')
    return lines


def compile_checks(
    decl: StateDecl, scope: Scope, comment: Callable[[Invariant], str] | None = None
) -> tuple[list[str], list[Problem]]:
    """The body of the saved-game checks (rules/state.yaml `checks:`) in this rule set's scope:
    the seats of the game's seat fields first, then each check in order, returning the first
    that fails as (its JSON path, its words); and every problem found. A check over the game
    reads the players' fields through `game.players` only (`q.color`); a field that may be
    null is known to be set after `X is not None and`."""
    problems: list[Problem] = []
    body = _seat_checks(decl)
    optional = {
        f.id: Name(replace(typed_field.type, optional=True), typed_field.ref)
        for f in decl.game
        if f.type.optional and (typed_field := scope.game.get(f.id)) is not None
    }
    game_scope = replace(scope, locals={}, measures={}).with_locals(**optional)
    player_scope = scope.with_locals(**optional)
    group: list[str] = []

    def close() -> None:
        if group:
            seat = any("seat" in _names(line) for line in group)
            body.append(
                "    for seat, p in enumerate(g.players):" if seat else "    for p in g.players:"
            )
            body.extend("        " + line for line in group)
            group.clear()

    for c in decl.checks:
        note = [f"# {comment(c)}"] if comment is not None else []
        s = player_scope if c.each == "player" else game_scope
        t = _expr(c.holds, s, typed.BOOL, (*c.path, "holds"), problems)
        words = _words(c.text, s, (*c.path, "text"), problems)
        at = _words(c.at, s, (*c.path, "at"), problems)
        if t is None:
            continue
        if c.each != "player" and "p" in _names(typed.bare(t.code)):
            problems.append(
                Problem(
                    "expr-type",
                    f"a check over the game reads the acting player (in '{c.holds}'): "
                    "add `each: player`, or read the players through game.players",
                    (*c.path, "holds"),
                )
            )
            continue
        indent = 8 if c.each == "player" else 4
        lines = [*note, *_test(t.code, indent), f"    return {at}, {words}"]
        if c.each == "player":
            group.extend(lines)
        else:
            close()
            body.extend("    " + line for line in lines)
    close()
    return body, problems
