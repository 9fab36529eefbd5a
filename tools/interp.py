"""The reference interpreter: evaluates the rules model directly on a saved game.

It reads a game as the plain JSON the generated engine writes (`to_json`), never imports the
engine and shares no code with it: every formula is walked with `expr.evaluate`, and every
number comes from the model's own tables. The differential tests run both on the same states,
so each implementation checks the other.

What it covers: the costs (a visit or follow, the wigs due for lacking Influence, any other
cost formula, a Noble action's land price), paying réis with Influence (the procedure
`pay-reis`, run by the step interpreter tools/interp_steps.py, which runs every procedure of
rules/: its choices, its refusals and its effects), the size of one Influence gain, the
warehouse size, the end-of-period and end-of-game triggers (which conditions hold, which
would fire now and who triggers them), the final scoring per source with the majorities
(shared places, rounded down, over the rule set's columns) and the ranking by the tie-breaker
chain.

    model = interp.model_for(interp.rule_sets(Path("rules")), state)
    scores = interp.score(model, state)        # per-player per-source wigs and totals
    places = interp.ranking(model, state, scores).places
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lisboa_rules import pipeline
from lisboa_rules.lang import expr
from lisboa_rules.lang.expr import Formula
from lisboa_rules.model.compiled import Compiled
from lisboa_rules.model.types import Model, Params
from tools import interp_steps

State = Mapping[str, Any]
"""A saved game: the JSON data of the engine's `to_json` (or `json.loads` of `dumps`)."""

PlayerState = Mapping[str, Any]


class InterpError(ValueError):
    """The state or the model lacks something the interpreter needs to read."""


@dataclass(frozen=True)
class Context:
    """The values a formula reads that belong neither to a player nor to the game."""

    other_officials_in_office: int = 0
    cost: int = 0
    measure: int = 0


def rule_sets(rules_dir: Path, fold: Sequence[str] = ()) -> dict[tuple[str, ...], Model]:
    """Every rule set's model, by the sorted variant ids its saves list (the keys of the
    engine's RULESETS, plus the variants built in); `fold`: the variants built into the base
    game, as `build --variant` folds them (a save of that engine lists them too)."""
    compiled, diags = pipeline.analyse(rules_dir, fold)
    if compiled is None:
        raise InterpError(f"the rules in {rules_dir} do not compile ({len(diags)} diagnostics)")
    return {m.variants: m for m in models_of(compiled).values()}


def models_of(compiled: Compiled) -> dict[tuple[str, ...], Model]:
    """Each rule set's model by its key in the engine's RULESETS, its `variants` the ones its
    saves list: a variant built into the base game (`build --variant`) is among them."""
    return {
        rs.key: dataclasses.replace(rs.model, variants=tuple(sorted({*compiled.folded, *rs.key})))
        for rs in compiled.rulesets
    }


def model_for(models: Mapping[tuple[str, ...], Model], state: State) -> Model:
    """The model a saved game plays by (its `variants`)."""
    key = tuple(state.get("variants", ()))
    if key not in models:
        raise InterpError(f"no rule set for variants {list(key)}")
    return models[key]


# --- Reading names -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reader:
    """Reads the vocabulary's names for one player of one state, under one rule set."""

    model: Model
    state: State
    seat: int
    context: Context
    wigs: int | None = None  # the wigs to read instead of the track's (final ranking)

    @property
    def player(self) -> PlayerState:
        players = _players(self.state)
        if not 0 <= self.seat < len(players):
            raise InterpError(f"no player in seat {self.seat}")
        player: PlayerState = players[self.seat]
        return player


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InterpError(f"expected a whole number at {key!r}, got {value!r}")
    return value


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise InterpError(f"expected a list at {key!r}, got {value!r}")
    return value


def _dict(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise InterpError(f"expected an object at {key!r}, got {value!r}")
    return value


def _players(state: State) -> list[PlayerState]:
    return _list(state, "players")


def _treasury_space(r: _Reader) -> Mapping[str, Any]:
    spaces: list[Mapping[str, Any]] = r.model.value("game", "tracks", "treasury", "spaces")
    index = _int(r.state, "treasury")
    if not 0 <= index < len(spaces):
        raise InterpError(f"the Treasury marker is off the track ({index})")
    return spaces[index]


def _reis_of_influence(r: _Reader) -> int:
    """Cashing the Influence track: each real moves the marker left to the next space with a
    real icon, so the marker is worth the icons below it (not the one it stands on)."""
    icons: list[int] = r.model.value("game", "tracks", "influence", "reis_icons")
    influence = _int(r.player, "influence")
    return sum(1 for icon in icons if icon < influence)


def _officials_on_plans(r: _Reader) -> int:
    shown = {plan.id: plan.officials for plan in r.model.plans}
    total = 0
    for plan in _list(r.player, "completed_plans"):
        if plan not in shown:
            raise InterpError(f"unknown Plan {plan!r}")
        total += shown[plan]
    return total


def _stores(r: _Reader, item: str | None) -> int:
    stores = _dict(r.player, "stores")
    if item is None:
        raise InterpError("'stores' needs a business")
    value = stores.get(item, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InterpError(f"expected a whole number of {item} stores, got {value!r}")
    return value


def _stores_total(r: _Reader) -> int:
    return sum(_stores(r, b.id) for b in r.model.businesses)


def _empty_piles(r: _Reader) -> int:
    piles: list[str] = r.model.value("components", "display", "piles")
    display = _dict(r.state, "piles")
    return sum(1 for pile in piles if not display.get(pile))


def _gain(r: _Reader) -> int:
    """One gain of Influence: the Influence of the portfolio's top row and of the Ships."""
    cards = {c.number: c for c in r.model.cards}
    per_ship: int = r.model.value("game", "portfolio", "ship_influence")
    top = sum(cards[c].influence for c in _list(r.player, "portfolio"))
    return top + per_ship * len(_list(r.player, "ships"))


def _warehouse_room(r: _Reader) -> int:
    base: int = r.model.value("game", "warehouse", "base_size")
    per: int = r.model.value("game", "warehouse", "per_rubble_set")
    goods = sum(int(v) for v in _dict(r.player, "goods").values())
    return base + per * _int(r.player, "rubble_sets") - goods


def _wigs(r: _Reader) -> int:
    return _int(r.player, "wigs") if r.wigs is None else r.wigs


_NameFn = Callable[[_Reader, "str | None"], int]

NAMES: dict[str, _NameFn] = {
    "wigs": lambda r, _: _wigs(r),
    "influence": lambda r, _: _int(r.player, "influence"),
    "reis": lambda r, _: _int(r.player, "reis"),
    "influence_reis": lambda r, _: _reis_of_influence(r),
    "rubble_sets": lambda r, _: _int(r.player, "rubble_sets"),
    "stores": _stores,
    "stores_total": lambda r, _: _stores_total(r),
    "completed_plans": lambda r, _: len(_list(r.player, "completed_plans")),
    "officials_on_completed_plans": lambda r, _: _officials_on_plans(r),
    "ships": lambda r, _: len(_list(r.player, "ships")),
    "ship_hull_total": lambda r, _: sum(int(s) for s in _list(r.player, "ships")),
    "decrees": lambda r, _: len(_list(r.player, "decrees")),
    "royal_favors": lambda r, _: len(_list(r.player, "royal_favors")),
    "treasury_value": lambda r, _: int(_treasury_space(r)["value"]),
    "influence_modifier": lambda r, _: int(_treasury_space(r)["modifier"]),
    "players": lambda r, _: len(_players(r.state)),
    "influence_per_gain": lambda r, _: _gain(r),
    "warehouse_room": lambda r, _: _warehouse_room(r),
    "officials_in_offices": lambda r, _: sum(
        int(office.get(r.player["color"], 0)) for office in _dict(r.state, "offices").values()
    ),
    "empty_display_piles": lambda r, _: _empty_piles(r),
    "other_officials_in_office": lambda r, _: r.context.other_officials_in_office,
    "cost": lambda r, _: r.context.cost,
    "measure": lambda r, _: r.context.measure,
}
"""Every name a formula may read, and how the interpreter reads it from a saved game."""


def evaluate(
    model: Model,
    state: State,
    formula: Formula,
    seat: int,
    params: Params = (),
    context: Context | None = None,
    wigs: int | None = None,
) -> int | bool:
    """A formula's value for the player in `seat`; `params` shadow the vocabulary's names."""
    reader = _Reader(model, state, seat, context or Context(), wigs)
    values = dict(params)

    def lookup(name: str, item: str | None) -> int | bool:
        if name in values:
            return values[name]
        fn = NAMES.get(name)
        if fn is None:  # a name a house rule adds: its declared value
            try:
                value: int | bool = interp_steps.name_value(model, state, seat, name, item)
            except interp_steps.StepsError as exc:
                raise InterpError(f"the interpreter cannot read {name!r}: {exc}") from None
            return value
        return fn(reader, item)

    return expr.evaluate(formula, lookup)


def _number(value: int | bool) -> int:
    return int(value)


def _truth(value: int | bool) -> bool:
    return bool(value)


def _check_state(model: Model, state: State) -> None:
    variants = tuple(state.get("variants", ()))
    if variants != model.variants:
        raise InterpError(
            f"the state plays variants {list(variants)}, the model is for {list(model.variants)}"
        )


# --- Costs ---------------------------------------------------------------------------------------


def _action_costs(model: Model, procedure: str) -> tuple[str | None, str | None]:
    for action in model.actions:
        if action.procedure == procedure:
            return action.cost, action.lacking_cost
    return None, None


def _cost_formula(model: Model, cost_id: str | None, what: str) -> tuple[Formula, Params]:
    for c in model.costs:
        if c.id == cost_id:
            return c.formula, c.params
    raise InterpError(f"the rules name no {what}")


def other_officials(model: Model, state: State, seat: int, noble: str) -> int:
    """Officials in this Noble's office that are not the player's (neutral ones included)."""
    offices = _dict(state, "offices")
    if noble not in offices:
        raise InterpError(f"no office of {noble!r}")
    color = _players(state)[seat]["color"]
    return sum(int(n) for owner, n in offices[noble].items() if owner != color)


def cost(
    model: Model, state: State, seat: int, cost_id: str, context: Context | None = None
) -> int:
    """Any cost of the rules (e.g. 'sponsor-cost') for the player in `seat`."""
    _check_state(model, state)
    formula, params = _cost_formula(model, cost_id, f"cost {cost_id!r}")
    return _number(evaluate(model, state, formula, seat, params, context))


def visit_cost(model: Model, state: State, seat: int, noble: str) -> int:
    """The Influence a visit to (or a follow of) this Noble costs the player in `seat`."""
    _check_state(model, state)
    visit, _ = _action_costs(model, "visit")
    formula, params = _cost_formula(model, visit, "visit cost")
    others = other_officials(model, state, seat, noble)
    return _number(
        evaluate(model, state, formula, seat, params, Context(other_officials_in_office=others))
    )


def wigs_due(model: Model, state: State, seat: int, amount: int) -> int:
    """The wigs the player in `seat` pays for the Influence lacking for a cost of `amount`."""
    _check_state(model, state)
    _, lacking = _action_costs(model, "visit")
    formula, params = _cost_formula(model, lacking, "cost for lacking Influence")
    return _number(evaluate(model, state, formula, seat, params, Context(cost=amount)))


def land_price(model: Model, state: State, seat: int, noble_action: str) -> int:
    """The land price a Noble action (e.g. 'build-store') makes the player in `seat` pay."""
    _check_state(model, state)
    for na in model.noble_actions:
        if na.id == noble_action:
            if na.land_price is None:
                raise InterpError(f"{noble_action!r} has no land price")
            return _number(evaluate(model, state, na.land_price, seat, na.params))
    raise InterpError(f"no Noble action {noble_action!r}")


# --- Payments, gains and the warehouse -----------------------------------------------------------


@dataclass(frozen=True)
class Payment:
    """What paying an amount of réis leaves a player with (what neither réis nor Influence
    can cover is waived)."""

    reis: int
    influence: int


PAY_REIS = "pay-reis"
"""The procedure of rules/effects.yaml that pays réis, with Influence for what they lack."""


def pay_reis(model: Model, state: State, seat: int, amount: int, in_influence: int = 0
             ) -> Payment:
    """Pay `amount` réis by running the procedure `pay-reis` of the rules (rules:
    influence.pay-reis: `in_influence` of it with Influence, as the player chooses, the rest in
    réis; for each real paid with Influence, or lacking in réis, the Influence marker moves
    left to the next space that shows a real icon; at the lowest icon what is still due is
    waived)."""
    _check_state(model, state)
    args = (amount, in_influence)
    player = _players(run_procedure(model, state, seat, PAY_REIS, args))[seat]
    return Payment(_int(player, "reis"), _int(player, "influence"))


def run_procedure(model: Model, state: State, seat: int, procedure: str,
                  args: Sequence[Any] = (), choices: Sequence[Any] = ()) -> dict[str, Any]:
    """The state after a procedure of rules/ (an effect, a Noble action, a hook), carried
    out for the player in `seat` by the step interpreter (tools/interp_steps.py)."""
    _check_state(model, state)
    try:
        return interp_steps.run(model, state, seat, procedure, args, choices)
    except interp_steps.StepsError as exc:
        raise InterpError(str(exc)) from None


def influence_gain(model: Model, state: State, seat: int) -> int:
    """One gain of Influence before the track's cap (rules: influence.track): the Influence
    values at the top of the cards in the portfolio's top row, plus each Ship's."""
    _check_state(model, state)
    player = _players(state)[seat]
    values = {c.number: c.influence for c in model.cards}
    total = 0
    for card in _list(player, "portfolio"):
        if card not in values:
            raise InterpError(f"unknown card {card!r}")
        total += values[card]
    per_ship = int(model.value("game", "portfolio", "ship_influence"))
    return total + per_ship * len(_list(player, "ships"))


def warehouse_size(model: Model, state: State, seat: int) -> int:
    """How many goods the player's warehouse holds (rules: warehouse.size)."""
    _check_state(model, state)
    sets = _int(_players(state)[seat], "rubble_sets")
    base = int(model.value("game", "warehouse", "base_size"))
    return base + int(model.value("game", "warehouse", "per_rubble_set")) * sets


# --- Triggers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerCheck:
    """One trigger in one state: whether it may still fire and where its condition holds."""

    id: str
    ends: str  # "period" | "game"
    active: bool  # its period, not fired yet, and no end of the same kind already pending
    holds: tuple[bool, ...]  # the condition per seat (a game-wide condition: the same for all)


@dataclass(frozen=True)
class Firing:
    """A trigger that fires, and the seat that triggers it."""

    id: str
    ends: str
    seat: int


@dataclass(frozen=True)
class TriggerOutcome:
    """What checking the triggers now does to a state."""

    fired: tuple[Firing, ...]
    period_end_by: int | None
    game_end_round: int | None
    final_round: int | None


def _optional_int(state: State, key: str) -> int | None:
    value = state.get(key)
    if value is None:
        return None
    return _int(state, key)


def trigger_checks(model: Model, state: State) -> tuple[TriggerCheck, ...]:
    """Every trigger of the rules, in order, as it stands in this state (nothing fires)."""
    _check_state(model, state)
    n = len(_players(state))
    period = _int(state, "period")
    periods = int(model.value("game", "periods"))
    fired = set(_list(state, "fired"))
    period_pending = state.get("period_end_by") is not None
    game_pending = state.get("game_end_round") is not None
    current = _int(state, "current")
    out = []
    for t in model.triggers:
        active = t.in_period(period) and t.id not in fired
        if t.ends == "period":  # the last period ends with the game, not a period end
            active = active and period < periods and not period_pending
        else:
            active = active and not game_pending
        if t.scope == "any-player":
            holds = tuple(
                _truth(evaluate(model, state, t.condition, seat, t.params)) for seat in range(n)
            )
        else:
            value = _truth(evaluate(model, state, t.condition, current, t.params))
            holds = (value,) * n
        out.append(TriggerCheck(t.id, t.ends, active, holds))
    return tuple(out)


def check_triggers(model: Model, state: State) -> TriggerOutcome:
    """The triggers that fire if they are checked now, in the rules' order, with who fires.

    Whoever has just moved (the actor) triggers: a player's own condition (scope any-player)
    is looked for clockwise from the actor, since only the player who completes their own set
    meets it; a game-wide condition (the display running out) is triggered by the actor. Once
    a period end is pending no other period trigger fires, and once the game end is triggered
    no other game trigger does. The game end lasts to the end of the round plus the rules'
    extra rounds.
    """
    checks = trigger_checks(model, state)
    by_id = {t.id: t for t in model.triggers}
    n = len(_players(state))
    actor = _int(state, "actor")
    period_end_by = _optional_int(state, "period_end_by")
    game_end_round = _optional_int(state, "game_end_round")
    final_round = _optional_int(state, "final_round")
    extra = int(model.value("flow", "game_end", "extra_rounds"))
    fired: list[Firing] = []
    for check in checks:
        if not check.active:
            continue
        if check.ends == "period" and period_end_by is not None:
            continue
        if check.ends == "game" and game_end_round is not None:
            continue
        if by_id[check.id].scope == "any-player":
            seats = [(actor + k) % n for k in range(n)]
            who = next((s for s in seats if check.holds[s]), None)
        else:
            who = actor if check.holds[0] else None
        if who is None:
            continue
        fired.append(Firing(check.id, check.ends, who))
        if check.ends == "period":
            period_end_by = who
        else:
            game_end_round = _int(state, "round")
            final_round = game_end_round + extra
    return TriggerOutcome(tuple(fired), period_end_by, game_end_round, final_round)


# --- Scoring -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Award:
    """One player's result in one majority."""

    measure: int
    eligible: bool
    place: int | None  # the first place (0-based) the player's tie occupies; None: not ranked
    tied: tuple[int, ...]  # every seat sharing that place, the player included
    wigs: int


def majority(
    measures: Sequence[int],
    eligible: Sequence[bool],
    table: Sequence[int],
    columns: Sequence[int],
) -> tuple[Award, ...]:
    """Majority prizes: the k-th place wins `table[columns[k] - 1]` (nothing past the columns).

    Only eligible players take places. Tied players occupy as many places as they are, add up
    those places' prizes and each takes an equal share, rounded down.
    """
    if len(measures) != len(eligible):
        raise InterpError("one measure and one eligibility per player")
    prizes = [table[c - 1] if 0 < c <= len(table) else 0 for c in columns]
    ranked = [i for i, ok in enumerate(eligible) if ok]
    awards = []
    for i, m in enumerate(measures):
        if not eligible[i]:
            awards.append(Award(m, False, None, (), 0))
            continue
        place = sum(1 for j in ranked if measures[j] > m)
        tied = tuple(j for j in ranked if measures[j] == m)
        pot = sum(prizes[k] for k in range(place, place + len(tied)) if k < len(prizes))
        awards.append(Award(m, True, place, tied, pot // len(tied)))
    return tuple(awards)


@dataclass(frozen=True)
class MajorityResult:
    """One majority group of a scoring source, for every seat."""

    source: str
    group: str
    table: tuple[int, ...]
    columns: tuple[int, ...]
    awards: tuple[Award, ...]


@dataclass(frozen=True)
class Scores:
    """Final scores: the track, each source's wigs per player and the totals."""

    colors: tuple[str, ...]
    track: tuple[int, ...]
    sources: tuple[str, ...]  # source ids, in scoring order
    wigs: tuple[tuple[int, ...], ...]  # wigs[seat][k]: what source k gives that player
    totals: tuple[int, ...]
    majorities: tuple[MajorityResult, ...]

    def by_source(self, seat: int) -> dict[str, int]:
        """One player's wigs per source id."""
        return dict(zip(self.sources, self.wigs[seat], strict=True))

    def to_json(self) -> dict[str, Any]:
        """The scores as plain JSON data."""
        return {
            "players": [
                {"color": c, "track": t, "total": tot, "sources": self.by_source(i)}
                for i, (c, t, tot) in enumerate(
                    zip(self.colors, self.track, self.totals, strict=True)
                )
            ]
        }


def score(model: Model, state: State) -> Scores:
    """Score a game: every source of the rules for every player, and the totals.

    Every source reads the state as it is: a Decree whose condition reads `wigs` sees the
    track's wigs before the endgame sources are added (as the engine does).
    """
    _check_state(model, state)
    players = _players(state)
    n = len(players)
    columns = tuple(int(c) for c in model.value("scoring", "majority", "columns"))
    per_seat: list[list[int]] = [[] for _ in range(n)]
    results: list[MajorityResult] = []
    for src in model.scoring:
        if src.kind == "per-player":
            if src.formula is None:
                raise InterpError(f"{src.id} has no formula")
            for seat in range(n):
                per_seat[seat].append(
                    _number(evaluate(model, state, src.formula, seat, src.params))
                )
        elif src.kind == "majority":
            gained = [0] * n
            for group in src.groups:
                measures = [
                    _number(evaluate(model, state, group.measure, seat, src.params))
                    for seat in range(n)
                ]
                eligible = [
                    src.eligible is None
                    or _truth(
                        evaluate(
                            model,
                            state,
                            src.eligible,
                            seat,
                            src.params,
                            Context(measure=measures[seat]),
                        )
                    )
                    for seat in range(n)
                ]
                awards = majority(measures, eligible, group.table, columns)
                results.append(MajorityResult(src.id, group.id, group.table, columns, awards))
                for seat, award in enumerate(awards):
                    gained[seat] += award.wigs
            for seat in range(n):
                per_seat[seat].append(gained[seat])
        elif src.kind == "held":
            items = {it.id: it for it in src.items}
            for seat, p in enumerate(players):
                total = 0
                for d in _list(p, src.held):
                    item = items.get(str(d))
                    if item is None:
                        raise InterpError(f"unknown item {d!r} of {src.held}")
                    if item.condition is None or _truth(
                        evaluate(model, state, item.condition, seat)
                    ):
                        total += item.points
                per_seat[seat].append(total)
        else:
            raise InterpError(f"unknown kind of scoring source {src.kind!r}")
    track = tuple(_int(p, "wigs") for p in players)
    totals = tuple(t + sum(w) for t, w in zip(track, per_seat, strict=True))
    return Scores(
        colors=tuple(str(p["color"]) for p in players),
        track=track,
        sources=tuple(s.id for s in model.scoring),
        wigs=tuple(tuple(w) for w in per_seat),
        totals=totals,
        majorities=tuple(results),
    )


@dataclass(frozen=True)
class Ranking:
    """The final order: `places[k]` lists the seats sharing the k-th group, best first."""

    places: tuple[tuple[int, ...], ...]
    keys: tuple[tuple[int, ...], ...]  # per seat: each tie-breaker measure in order
    names: tuple[str, ...]  # the tie-breakers' names


def ranking(model: Model, state: State, scores: Scores | None = None) -> Ranking:
    """Rank the players by the tie-breaker chain; players equal on every measure share a place.

    The chain is read once scoring is done, so `wigs` in a measure is the player's final total.
    """
    scores = scores or score(model, state)
    n = len(_players(state))
    keys = tuple(
        tuple(
            _number(evaluate(model, state, tb.measure, seat, wigs=scores.totals[seat]))
            for tb in model.tiebreakers
        )
        for seat in range(n)
    )
    better = [sum(1 for j in range(n) if keys[j] > keys[i]) for i in range(n)]
    places = tuple(tuple(i for i in range(n) if better[i] == b) for b in sorted(set(better)))
    return Ranking(places, keys, tuple(tb.name for tb in model.tiebreakers))


# --- Procedures of rules/ ------------------------------------------------------------------------


def procedure(model: Model, procedure_id: str) -> Any:
    """A procedure of the rule set (its `params` and `choices`), as rules/ writes it."""
    try:
        return interp_steps.procedure(model, procedure_id)
    except KeyError:
        raise InterpError(f"no procedure {procedure_id!r}") from None


def procedure_options(model: Model, state: State, seat: int, procedure_id: str,
                      args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """The choices of a procedure its guard allows the player in `seat` (each a tuple of its
    chooses' values, in order)."""
    _check_state(model, state)
    try:
        return interp_steps.opts(model, state, seat, procedure_id, args)
    except interp_steps.StepsError as exc:
        raise InterpError(str(exc)) from None


def procedure_refusal(model: Model, state: State, seat: int, procedure_id: str,
                      args: Sequence[Any] = (), choices: Sequence[Any] = ()
                      ) -> tuple[str, str] | None:
    """Why a procedure refuses these choices: (the rule id, the reason), or None."""
    _check_state(model, state)
    try:
        return interp_steps.why(model, state, seat, procedure_id, args, choices)
    except interp_steps.StepsError as exc:
        raise InterpError(str(exc)) from None
