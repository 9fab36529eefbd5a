"""The engine's state vocabulary: every name a formula may read, and the code that reads it.

This is the contract between the formula language and the generated engine's runtime. The
words for each name live in the rules data (`rules/vocabulary.yaml`); the compiler checks that
the two lists agree.
"""

from __future__ import annotations

from collections.abc import Mapping

from lisboa_rules.lang.expr import NameInfo

# name -> (type, Python code in the engine; `p` is the player, `g` the game, `x` the context)
ENGINE_NAMES: dict[str, tuple[str, str]] = {
    "wigs": ("int", "p.wigs"),
    "influence": ("int", "p.influence"),
    "reis": ("int", "p.reis"),
    "influence_reis": ("int", "_influence_reis(g, p.influence)"),
    "rubble_sets": ("int", "p.rubble_sets"),
    "stores": ("int", "p.stores[{item}]"),
    "stores_total": ("int", "sum(p.stores.values())"),
    "completed_plans": ("int", "len(p.completed_plans)"),
    "officials_on_completed_plans": ("int", "_plan_officials(g, p.completed_plans)"),
    "ships": ("int", "len(p.ships)"),
    "ship_hull_total": ("int", "sum(p.ships)"),
    "decrees": ("int", "len(p.decrees)"),
    "royal_favors": ("int", "len(p.royal_favors)"),
    "treasury_value": ("int", "_treasury_value(g)"),
    "influence_modifier": ("int", "_influence_modifier(g)"),
    "players": ("int", "len(g.players)"),
    "empty_display_piles": ("int", "_empty_piles(g)"),
    "other_officials_in_office": ("int", "x.other_officials"),
    "cost": ("int", "x.cost"),
    "measure": ("int", "x.measure"),
}


def env_for(
    vocab: Mapping[str, tuple[str, str | None]],
    scopes: tuple[str, ...],
    businesses: list[str],
    params: tuple[tuple[str, int], ...] = (),
) -> dict[str, NameInfo]:
    """The names a formula in these scopes may read: vocabulary names plus its own params."""
    env: dict[str, NameInfo] = {}
    for name, (scope, per) in vocab.items():
        if scope in scopes and name in ENGINE_NAMES:
            typ = ENGINE_NAMES[name][0]
            assert typ in ("int", "bool")
            items = tuple(businesses) if per == "business" else None
            env[name] = NameInfo("int" if typ == "int" else "bool", items)
    for name, _ in params:
        env[name] = NameInfo("int")
    return env
