"""The JSON Schema of a saved game, with the rules' ids as enums (apps validate saves with it).

Every property carries a description, so the schema documents the state. The generated engine
validates saves against this same schema with a small built-in validator (type, enum,
minimum, required, properties, additionalProperties, items, maxItems, description), so the
schema keeps to those keywords.
"""

from __future__ import annotations

from typing import Any

from lisboa_rules.model.types import Model, VariantInfo

PHASES = ("action", "follow", "refill", "marker", "hand-discard", "over")


def _int(minimum: int | None = 0, doc: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        out["minimum"] = minimum
    return _doc(out, doc)


def _doc(schema: dict[str, Any], doc: str) -> dict[str, Any]:
    return {"description": doc, **schema} if doc else schema


def _arr(items: dict[str, Any], doc: str = "") -> dict[str, Any]:
    return _doc({"type": "array", "items": items}, doc)


def _counts(keys: list[str], doc: str, required: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "additionalProperties": False,
                           "properties": {k: _int() for k in keys}}
    if required:
        out["required"] = list(keys)
    return _doc(out, doc)


def _obj(props: dict[str, Any], doc: str = "") -> dict[str, Any]:
    return _doc({"type": "object", "additionalProperties": False, "required": sorted(props),
                 "properties": props}, doc)


def state_schema(m: Model, variants: list[VariantInfo], digest: str) -> dict[str, Any]:
    """The state schema for saved games of these rules."""
    nobles = [n.id for n in m.nobles]
    businesses = [b.id for b in m.businesses]
    piles = list(m.value("components", "display", "piles"))
    decks = [d.id for d in m.decks]
    # The long enums are written once, under $defs, and referenced where they are used.
    defs: dict[str, Any] = {
        "card": {"description": "a Political card number", "type": "integer",
                 "enum": sorted(c.number for c in m.cards)},
        "decree": {"description": "a Decree id", "type": "string",
                   "enum": sorted(d.id for d in m.decrees)},
        "plan": {"description": "a Plan id", "type": "string",
                 "enum": sorted(p.id for p in m.plans)},
    }
    card = {"$ref": "#/$defs/card"}

    def cards(doc: str) -> dict[str, Any]:
        return _arr(card, doc)

    decree = {"$ref": "#/$defs/decree"}
    plan = {"$ref": "#/$defs/plan"}
    noble = {"type": "string", "enum": nobles}
    colors = list(m.value("game", "players", "colors"))
    seat = _int(0, "a seat: an index into players")

    def opt_seat(doc: str) -> dict[str, Any]:
        return _doc({"type": ["integer", "null"], "minimum": 0}, doc)

    player = _obj({
        "color": _doc({"type": "string", "enum": colors}, "the player's colour"),
        "wigs": _int(0, "wigs on the score track"),
        "influence": _int(0, "the Influence marker's space"),
        "reis": _int(0, "money in hand"),
        "hand": {**cards("Political cards in hand (never more than the hand size)"),
                 "maxItems": m.value("game", "start", "hand")},
        "portfolio": cards("the portfolio's top row (Noble cards), oldest first"),
        "treasury_row": cards("the portfolio's bottom row (Treasury cards), oldest first"),
        "ships": _arr(_int(1), "the hull sizes of the player's Ships"),
        "rubble_cubes": _int(0, "rubble cubes not yet in a completed set"),
        "rubble_sets": _int(0, "completed rubble sets"),
        "markers_left": _int(0, "Rubble Set markers still on the player's board"),
        "markers": _counts(nobles, "Rubble Set markers placed on each Noble", False),
        "stores": _counts(businesses, "stores built, per business", True),
        "goods": _counts(businesses, "goods in the warehouse, per type", True),
        "officials": _int(0, "Officials still in the player's supply"),
        "plans": _arr(plan, "Plans not yet completed"),
        "completed_plans": _arr(plan, "completed Plans (opened Public Buildings)"),
        "decrees": _arr(decree, "Decrees owned"),
        "royal_favors": _arr(noble, "Royal Favor tiles held, by Noble"),
    }, "one player's board")
    owners = _doc({"type": "object", "additionalProperties": _int()},
                  "Officials by owner: a player colour or 'neutral'")
    per_noble = {"type": "object", "additionalProperties": False, "required": nobles,
                 "properties": dict.fromkeys(nobles, owners)}
    game = _obj({
        "variants": _arr({"type": "string", "enum": [v.id for v in variants]},
                         "the variants in force, sorted (chosen ones and player-count ones)"),
        "seed": _int(None, "the seed of the game's shuffles"),
        "players": _arr(player, "the players in clockwise order"),
        "start_player": _doc(seat, "who holds the Starting Player tile"),
        "current": _doc(seat, "whose turn it is"),
        "round": _int(1, "the round, counted from 1"),
        "period": _int(1, "the period, counted from 1"),
        "turns": _int(0, "turns finished so far"),
        "phase": _doc({"type": "string", "enum": list(PHASES)},
                      "what the game waits for: an action, a follow decision, a draw, a "
                      "Rubble Set marker, a period-end hand discard, or nothing (over)"),
        "actor": _doc(seat, "who must move now"),
        "treasury": _int(0, "the Treasury marker: an index into the Treasury track's spaces"),
        "piles": _doc({"type": "object", "additionalProperties": False, "required": piles,
                       "properties": {p: card_list(card) for p in piles}},
                      "the Political card display: one pile per card type, top card last"),
        "reserve": _doc({"type": "object", "additionalProperties": False,
                         "properties": {d: card_list(card) for d in decks}},
                        "decks not yet dealt, by deck"),
        "discard": cards("the discard pile"),
        "box": cards("cards returned to the box"),
        "court": cards("cards in the Royal Court this turn"),
        "courtier": opt_seat("whose Courtier stands in the Royal Court"),
        "decree_display": _arr(decree, "the Decree display"),
        "decree_deck": _arr(decree, "the Decree deck; the last one is drawn next"),
        "plan_supply": _arr(plan, "the Plan supply; the last one is taken next"),
        "shipyard": _arr({"type": "string", "enum": [s.color for s in m.ships]},
                         "the shipyard's stack by colour; the last one is on top"),
        "favors": _counts(nobles, "Royal Favor tiles in the supply, by Noble", True),
        "offices": _doc(per_noble, "Officials in each Noble's office"),
        "plazas": _doc(per_noble, "Officials in each Noble's plaza"),
        "blocked": _arr({"type": "string", "enum": [a.id for a in m.state_actions]},
                        "State actions with a good on them this turn"),
        "flags": _arr({"type": "string"}, "flags set during play (variants)"),
        "visit": _doc({"type": ["string", "null"], "enum": [*nobles, None]},
                      "the Noble visited this turn, while follows are decided"),
        "follow_next": opt_seat("the next seat asked whether to follow"),
        "pending_markers": _arr(seat, "seats that still place a Rubble Set marker, in order"),
        "resume": _doc({"type": "string", "enum": list(PHASES)},
                       "the phase to go back to after Rubble Set markers are placed"),
        "period_end_by": opt_seat("who triggered the end of the period, while it is pending"),
        "period_step": _int(0, "the step of the end of the period being carried out"),
        "discard_queue": _arr(seat, "seats still to discard at the end of the period, in order"),
        "game_end_round": _doc({"type": ["integer", "null"], "minimum": 1},
                               "the round in which the end of the game was triggered"),
        "final_round": _doc({"type": ["integer", "null"], "minimum": 1},
                            "the last round of the game, once the end is triggered"),
        "fired": _arr({"type": "string", "enum": [t.id for t in m.triggers]},
                      "the end-of-period and end-of-game triggers that fired, in order"),
    })
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://lisboa-rules.invalid/schema/state.schema.json",
        "$comment": f"Generated by lisboa-rules from rules/ (inputs sha256:{digest[:16]}). "
                    "DO NOT EDIT.",
        "title": "A saved game of " + str(m.value("game", "title")),
        "description": "The complete state of a game in progress or finished, as written by "
                       "the generated engine's to_json.",
        "$defs": defs,
        **game,
    }


def card_list(card: dict[str, Any]) -> dict[str, Any]:
    """A list of Political card numbers."""
    return {"type": "array", "items": card}
