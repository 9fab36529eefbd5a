"""Phases: what the game waits for, written in rules/flow.yaml `phases` and compiled into the
frame functions of the engine's turn machine.

Each phase (a value of the state's `phase` kind) says who moves in it (`actor`: a seat
expression), while it lasts (`while`: when it no longer holds, the phase is done), what comes
when it is done (`then`: `end-turn`, the end of the turn; `next-step`, the next step of the end
of the stage that waits for it), and whether it interrupts the other phases (`interrupts`: a
condition; `resume`: the game field that keeps the phase it interrupted, to go back to). The
runtime runs the table: it knows a turn, an end of stage made of steps, and nothing else.

The checker gives each phase its checked expressions (`CheckedPhase`); a back end prints them
(the Python engine's: one function `_phase_…(g) -> int | None`, the seat that moves or None when
the phase is done, and for an interrupting phase `_interrupts_…(g) -> bool`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.reads import may_need_player
from lisboa_rules.lang import typed
from lisboa_rules.lang.steps import Anchor, StepChecker
from lisboa_rules.lang.tree import StepProblem
from lisboa_rules.lang.typed import BOOL, Scope

THEN = ("", "end-turn", "next-step")
SEAT = typed.VType("seat", (), True)


@dataclass(frozen=True)
class CheckedPhase:
    """A phase checked: who moves in it and while it lasts (None: not said), when it
    interrupts the others, whether those read the acting player (the seat that moves, when
    the game has one), the game field its interruption keeps the phase it interrupted in,
    and what comes after it."""

    id: str
    actor: ir.Expr | None
    lasts: ir.Expr | None
    interrupts: ir.Expr | None
    uses_player: bool
    resume: str | None
    then: str
    index: int | None = None  # its row in flow.yaml `phases`


@dataclass(frozen=True)
class CheckedTurnOrder:
    """rules/flow.yaml `turn_order` checked: the seat that plays first once the setup is done
    (`first`) and the seat that plays after `seat` (`next`, with `seat` bound); None where the
    rules leave it out (the setup's start player; the next seat in seat order)."""

    first: ir.Expr | None = None
    next: ir.Expr | None = None
    uses_player: bool = False


def check_turn_order(comp: StepChecker, flow: Any, scope: Scope) -> CheckedTurnOrder:
    """The turn order of rules/flow.yaml (its problems kept by `comp`)."""
    row = flow.get("turn_order") if isinstance(flow, Mapping) else None
    if not isinstance(row, Mapping):
        return CheckedTurnOrder()
    s = Anchor(path=("flow", "turn_order"))
    uses_player = False

    def code(key: str, at: Scope) -> ir.Expr | None:
        nonlocal uses_player
        if row.get(key) is None:
            return None
        got = comp.expr(s, row[key], at, typed.INT, key)
        if got is None:
            return None
        uses_player = uses_player or may_need_player(got.node)
        return got.node

    first = code("first", scope)
    nxt = code("next", scope.with_locals(seat=typed.Name(typed.INT, ir.Local("seat"))))
    return CheckedTurnOrder(first, nxt, uses_player)


# the number of players, as `next` and `first` read it
PLAYER_COUNT = ir.Call("len", (ir.GameField("players"),))


def _counted(node: ir.Expr, players: int) -> ir.Expr:
    """`node` with the number of players given (`len(game.players)`, in it and in the
    measures it reads): what is left of the state is not constant."""
    given: dict[ir.Expr, ir.Expr] = {PLAYER_COUNT: ir.Lit(players)}
    for sub in ir.walk(node):
        if isinstance(sub, ir.Measure) and sub not in given:
            given[sub] = _counted(sub.body, players)
    return ir.substitute(node, given)


def _seat_at(node: ir.Expr, players: int, env: Mapping[str, Any],
             columns: const.Columns) -> int | None:
    """The seat an expression of the turn order gives (modulo the number of players, as the
    engine takes it), or None when it reads more than `seat`, the number of players and the
    rules' constants (or fails)."""
    try:
        got = const.evaluate(_counted(node, players), env, columns)
    except const.NotConstant as exc:
        if str(exc).startswith("fails: ZeroDivisionError"):
            raise ZeroDivisionError from None  # a constant that divides by 0: said where written
        return None
    if not isinstance(got, int) or isinstance(got, bool):
        return None
    return got % players


def check_turn_cycle(order: CheckedTurnOrder, counts: Iterable[int],
                     columns: const.Columns) -> list[StepProblem]:
    """The turn order's `next` computed for every seat at each player count in `counts` (when
    it reads only `seat`, the number of players and the rules' constants: else the build's
    games check it): from the first player (`first` when it is such a constant, else seat 0)
    the turn must go through every seat once and come back to the start player, or some
    players never play (or a round never ends). One problem for each player count that
    breaks it, at `turn_order.next`."""
    if order.next is None:
        return []
    out = []
    by_zero: list[str] = []  # `next`, `first`: what divides by 0 at some number of players
    for n in counts:
        if n < 1:
            continue
        which = "next"
        try:
            after = [_seat_at(order.next, n, {"seat": s}, columns) for s in range(n)]
            which = "first"
            start = _seat_at(order.first, n, {}, columns) if order.first is not None else None
        except ZeroDivisionError:
            if which not in by_zero:
                by_zero.append(which)
            continue
        if any(a is None for a in after):
            break  # it reads the state: not known here
        first = 0 if start is None else start
        went = [first]
        seat = after[first]
        while seat is not None and seat not in went:
            went.append(seat)
            seat = after[seat]
        if seat == first and len(went) == n:
            continue
        path = " -> ".join(str(x) for x in [*went, seat])
        never = [s for s in range(n) if s not in went]
        what = [f"seat{'s' if len(never) > 1 else ''} {_seats(never)} never "
                f"play{'' if len(never) > 1 else 's'}"] if never else []
        if seat != first:
            what.append(f"the turn never comes back to seat {first}, the start player, so a "
                        "round never ends")
        out.append(StepProblem(
            "turn-order-skips",
            f"with {n} players, starting at seat {first}"
            f"{' (the first player)' if start is not None else ''}, the turn goes {path}: "
            f"{' and '.join(what)}; "
            "`next` must take the turn through every seat once and back to the start player "
            "(as `(seat + 1) % len(game.players)` does)",
            ("flow", "turn_order", "next")))
    for which in by_zero:
        out.append(StepProblem(
            "divisor-zero", f"the turn order's `{which}` divides by 0 (a `//` or `%` by a "
            "value that is 0 with a number of players the rules allow): give it a divisor "
            "that is never 0", ("flow", "turn_order", which)))
    return out


def _seats(seats: list[int]) -> str:
    """`1`, `1 and 3`, `1, 2 and 3`."""
    shown = [str(s) for s in seats]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def phases_of(flow: Any) -> list[tuple[int, Mapping[str, Any]]]:
    rows = flow.get("phases") if isinstance(flow, Mapping) else None
    return [(i, r) for i, r in enumerate(rows or []) if isinstance(r, Mapping)]


def check_phase(comp: StepChecker, i: int, row: Mapping[str, Any], scope: Scope,
                game_fields: Mapping[str, typed.VType]) -> CheckedPhase:
    """One phase of rules/flow.yaml `phases` (the `i`-th), its problems kept by `comp`."""
    pid = str(row.get("id"))
    s = Anchor(path=("flow", "phases", i))
    uses_player = False

    def code(key: str, want: typed.VType | None) -> ir.Expr | None:
        nonlocal uses_player
        if row.get(key) is None:
            return None
        got = comp.expr(s, row[key], scope, want, key)
        if got is None:
            return None
        uses_player = uses_player or may_need_player(got.node)
        return got.node

    actor = code("actor", SEAT)
    cond = code("while", BOOL)
    interrupts = code("interrupts", BOOL)
    resume = row.get("resume")
    if interrupts is not None and resume is None:
        comp.problem(s, "step-shape", f"phase '{pid}' interrupts the others: name the game "
                     "field that keeps the phase it interrupts (resume: game.FIELD)", "interrupts")
    field_name = None
    if resume is not None:
        field_name = str(resume).removeprefix("game.")
        known = game_fields.get(field_name)
        if not str(resume).startswith("game.") or known is None or known.name != "phase":
            comp.problem(s, "step-target", f"'{resume}' is not a field of the game holding a "
                         "phase (resume: game.FIELD)", "resume",
                         typed.closest(field_name, [k for k, t in game_fields.items()
                                                    if t.name == "phase"]))
            field_name = None
    if actor is None and cond is not None and row.get("actor") is None:
        comp.problem(s, "step-shape", f"phase '{pid}' lasts while a condition holds: say who "
                     "moves in it (actor: EXPR)", "while")
    return CheckedPhase(pid, actor, cond, interrupts, uses_player, field_name,
                        str(row.get("then") or ""), i)


def check_phases(comp: StepChecker, flow: Any, scope: Scope, values: tuple[Any, ...] | None,
                 moves: Mapping[str, tuple[str, tuple[str | int, ...]]]) -> list[CheckedPhase]:
    """Every phase compiled (the problems kept by `comp`), and the table checked against the
    values of the state's phase kind (`values`), the phases of the moves (`moves`: kind ->
    (phase, path)) and the decisions of the end of the period."""
    rows = phases_of(flow)
    game_fields = {k: v.type for k, v in scope.game.items()}
    out = [check_phase(comp, i, row, scope, game_fields) for i, row in rows]
    declared = [pc.id for pc in out]
    known = [str(v) for v in values] if values is not None else declared
    for (i, _row), pc in zip(rows, out, strict=True):
        s = Anchor(path=("flow", "phases", i))
        if pc.id not in known:
            comp.problem(s, "unknown-reference", f"'{pc.id}' is not a phase of rules/state.yaml "
                         f"(the kind phase: {', '.join(known)})", "id",
                         typed.closest(pc.id, known))
        elif declared.count(pc.id) > 1:
            comp.problem(s, "duplicate-id", f"phase '{pc.id}' is declared twice", "id")
    if rows:
        for v in known:
            if v not in declared:
                comp.problem(Anchor(path=("flow", "phases")), "schema-required",
                             f"the phase '{v}' of rules/state.yaml has no row here", "phases")
        for kind, (phase, path) in moves.items():
            if phase not in declared:
                comp.problem(Anchor(path=path), "unknown-reference",
                             f"'{kind}' moves are made in phase '{phase}', which rules/flow.yaml "
                             "phases does not declare", "phase", typed.closest(phase, declared))
        steps = ((flow.get("period_end") or {}).get("steps") or []) if isinstance(
            flow, Mapping) else []
        for i, step in enumerate(steps):
            if isinstance(step, Mapping) and step.get("decision") is not None and str(
                    step["decision"]) not in declared:
                comp.problem(Anchor(path=("flow", "period_end", "steps", i)),
                             "unknown-reference", f"the decision '{step['decision']}' is no "
                             "phase of rules/flow.yaml phases", "decision",
                             typed.closest(str(step["decision"]), declared))
    return out
