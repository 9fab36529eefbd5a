"""What each seat may see (rules/state.yaml `see:`), as the engine's tables: who sees each
field that not everyone sees, and for `determinize`, how the hidden ids of each conserved kind
are dealt back (`DealDef`) and which hidden numbers are drawn between which bounds."""

from __future__ import annotations

from typing import Any

from lisboa_rules.core.limits import INT64_MAX, INT64_MIN
from lisboa_rules.emit.engine.pyfmt import Call
from lisboa_rules.model.state import StateDecl
from lisboa_rules.model.types import Model


def sees(decl: StateDecl, scope: str) -> dict[str, str]:
    """Field -> who sees it, for the fields of `scope` not everyone sees."""
    return {f.id: f.see for f in decl.fields(scope) if f.see != "all"}


def zones(decl: StateDecl) -> dict[str, str]:
    """"scope.field" -> the conserved kind whose ids it holds, for every zone a conservation
    of rules/state.yaml names (what `events` may call one item moved from a place to another)."""
    out: dict[str, str] = {}
    for inv in decl.invariants:
        if inv.kind is None:
            continue
        for z in inv.zones:
            out.setdefault(f"{z.scope}.{z.field}", inv.kind)
    return out


def deals(m: Model) -> tuple[Call, ...]:
    """A DealDef for each kind conserved once (no `count:`) with a hidden zone: its ids, its
    zones and, for a hidden map sorted `by:` a field of the kind's rows, each id's key."""
    decl = m.state
    out: list[Call] = []
    for inv in decl.invariants:
        kind = decl.kind(inv.kind) if inv.kind is not None else None
        if kind is None or kind.values is None or inv.count is not None:
            continue
        fields = [decl.field(z.scope, z.field) for z in inv.zones]
        if all(f is None or f.see == "all" for f in fields):
            continue
        zones = tuple((z.scope, z.field, z.type.name == "map") for z in inv.zones)
        sorts: list[tuple[str, tuple[tuple[Any, Any], ...]]] = []
        for f in fields:
            if f is None or f.by is None or f.see == "all":
                continue
            rows = m.value(*kind.source.split(".")) if kind.source else []
            pairs = tuple((row[kind.key] if kind.key else row, row.get(f.by))
                          for row in rows if isinstance(row, dict))
            sorts.append((f.id, pairs))
        out.append(Call("DealDef", (kind.id, tuple(kind.values), zones, tuple(sorts))))
    return tuple(out)


def draws(m: Model) -> tuple[tuple[str, str, int, int], ...]:
    """(scope, field, min, max) of each number some seat does not see, drawn by
    `determinize` between its bounds (a save's 64-bit range where it declares none)."""
    return tuple((f.scope, f.id, INT64_MIN if f.min is None else f.min,
                  INT64_MAX if f.max is None else f.max)
                 for f in (*m.state.player, *m.state.game)
                 if f.see in ("owner", "none") and f.type.name == "int" and not f.type.optional)
