"""The invariants of rules/state.yaml and its checks of a saved game, checked and compiled to
the IR's statements (`ir/program.py`): what must hold in every state, as one program per rule
set (`check_invariants` runs it through the rule set), with a lister per conserved kind of ids
(its ids wherever they are); and what a saved game must satisfy to be loaded.

Used twice: by the state builder, to report every problem of every invariant as a located
error (`problems`), and by the engine emitter, which prints the programs
(`emit/engine/checks.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import program as prog
from lisboa_rules.ir.reads import reads_player
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import Name, Scope, VType
from lisboa_rules.model.state import Invariant, StateDecl, StateType, Zone


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


def _words(text: str, scope: Scope, path: tuple[str | int, ...],
           problems: list[Problem]) -> prog.Words:
    """The words of an invariant: its text, with its `{expression}`s checked and shown."""
    parts: list[str | prog.Shown] = []
    pos = 0
    for m in re.finditer(r"\{([^{}]+)\}", text):
        if m.start() > pos:
            parts.append(text[pos : m.start()])
        pos = m.end()
        t = _expr(m.group(1), scope, None, path, problems)
        if t is None:
            continue
        is_text = typed.compatible(t.type, typed.TEXT, scope.int_kinds) and not t.type.optional
        parts.append(prog.Shown(t.node, is_text and t.type.name not in ("list", "map")))
    if pos < len(text):
        parts.append(text[pos:])
    return tuple(parts)


def _zone(z: Zone) -> prog.Zone:
    return prog.Zone("game" if z.scope == "game" else "player", z.field, z.type.name == "map")


def compile_invariants(
    decl: StateDecl, scope: Scope, comment: Callable[[Invariant], str] | None = None
) -> tuple[prog.Checks, list[Problem]]:
    """The declared invariants in this rule set's scope (the acting player at `seat`, for
    those over each player), as the IR's checks; and every problem found. `comment` says
    where an invariant is written, for a note beside its check."""
    body: list[prog.Stmt] = []
    listers: list[prog.Lister] = []
    problems: list[Problem] = []
    game_scope = replace(scope, player={}, locals={}, measures={})  # no acting player
    kinds = {k.id: k for k in decl.kinds}
    group: list[prog.Holds] = []  # the checks of consecutive `each: player` invariants

    def close() -> None:
        if group:
            body.append(prog.EachPlayer(tuple(group)))
            group.clear()

    for inv in decl.invariants:
        note = comment(inv) if comment is not None else None
        if inv.holds is not None:
            s = scope if inv.each == "player" else game_scope
            t = _expr(inv.holds, s, typed.BOOL, (*inv.path, "holds"), problems)
            words = _words(inv.text, s, (*inv.path, "text"), problems)
            if t is None:
                continue
            holds = prog.Holds(t.node, words, note=note)
            if inv.each == "player":
                group.append(holds)
            else:
                close()
                body.append(holds)
            continue
        close()
        if inv.kind is None:
            continue
        kind = kinds.get(inv.kind)
        if kind is None or kind.values is None:
            continue  # reported by the builder
        zones = tuple(_zone(z) for z in inv.zones)
        if inv.count is None:
            listers.append(prog.Lister(inv.kind, inv.function,
                                       typed.INT if kind.of == "int" else typed.TEXT, zones))
            words = _words(inv.text, game_scope, (*inv.path, "text"), problems)
            body.append(prog.Conserved(inv.kind, tuple(sorted(kind.values)), words, note))
            continue
        inner = game_scope
        if inv.kind.isidentifier():  # the id counted, for the words
            inner = game_scope.with_locals(**{inv.kind: Name(VType(inv.kind), ir.Local(inv.kind))})
        n = _expr(inv.count, game_scope, typed.INT, (*inv.path, "conserved", "count"), problems)
        words = _words(inv.text, inner, (*inv.path, "text"), problems)
        if n is None:
            continue
        body.append(prog.Counted(inv.kind, ir.Data(list(kind.values)), zones, n.node, words,
                                 note))
    close()
    return prog.Checks(tuple(body), tuple(listers)), problems


def measures_of(data: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The measures of the vocabulary (rules/vocabulary.yaml) an invariant may read."""
    rows = (data.get("vocabulary") or {}).get("names") or []
    return tuple(
        (str(m.get("name")), m.get("value"))
        for m in rows
        if isinstance(m, Mapping) and "value" in m and not m.get("per")
    )


def _seat_checks(decl: StateDecl) -> list[prog.Stmt]:
    """The checks of the game's seat fields (types `seat`, `seat?`, `list[seat]`): each seat
    they hold is one of the players'."""
    out: list[prog.Stmt] = []
    for f in decl.game:
        t = f.type
        if t.name == "seat":
            out.append(prog.SeatOf(f.id, t.optional, False))
        elif t.name == "list" and t.args[0].name == "seat" and not t.optional:
            out.append(prog.SeatOf(f.id, False, True))
    return out


def compile_checks(
    decl: StateDecl, scope: Scope, comment: Callable[[Invariant], str] | None = None
) -> tuple[prog.Checks, list[Problem]]:
    """The saved-game checks (rules/state.yaml `checks:`) in this rule set's scope, as the
    IR's checks: the seats of the game's seat fields first, then each check in order (the
    first that fails is the problem: its JSON path, its words); and every problem found. A
    check over the game reads the players' fields through `game.players` only (`q.color`); a
    field that may be null is known to be set after `X is not None and`."""
    problems: list[Problem] = []
    body = _seat_checks(decl)
    optional = {
        f.id: Name(replace(typed_field.type, optional=True), typed_field.ref)
        for f in decl.game
        if f.type.optional and (typed_field := scope.game.get(f.id)) is not None
    }
    game_scope = replace(scope, locals={}, measures={}).with_locals(**optional)
    player_scope = scope.with_locals(**optional)
    group: list[prog.Holds] = []

    def close() -> None:
        if group:
            body.append(prog.EachPlayer(tuple(group)))
            group.clear()

    for c in decl.checks:
        note = comment(c) if comment is not None else None
        s = player_scope if c.each == "player" else game_scope
        t = _expr(c.holds, s, typed.BOOL, (*c.path, "holds"), problems)
        words = _words(c.text, s, (*c.path, "text"), problems)
        at = _words(c.at, s, (*c.path, "at"), problems)
        if t is None:
            continue
        if c.each != "player" and reads_player(t.node):
            problems.append(
                Problem(
                    "expr-type",
                    f"a check over the game reads the acting player (in '{c.holds}'): "
                    "add `each: player`, or read the players through game.players",
                    (*c.path, "holds"),
                )
            )
            continue
        holds = prog.Holds(t.node, words, at, note)
        if c.each == "player":
            group.append(holds)
        else:
            close()
            body.append(holds)
    close()
    return prog.Checks(tuple(body)), problems
