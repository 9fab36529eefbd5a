"""The typed rules model: frozen dataclasses built from validated, merged rules documents.

Every node keeps the source span it came from (`span`), which equality and hashing ignore, so
two models built from differently laid-out YAML compare equal when the rules are the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.source import Span, nearest
from lisboa_rules.lang.expr import Formula
from lisboa_rules.model.procs import ProcSet
from lisboa_rules.model.state import StateDecl

NOWHERE = Span("<built-in>", 1, 1, 1, 1)


Effects = tuple[tuple[str, int], ...]
Params = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Provenance:
    """Where a rule or value comes from: source ids and assumption ids."""

    sources: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A rule of the game as prose: the reference prints it, and its id is its anchor."""

    id: str
    title: str
    text: str  # raw text with {placeholders}
    section: str  # which part of the reference it belongs to (the document kind)
    provenance: Provenance
    executable: bool = False
    owner: tuple[str | int, ...] = ()  # path (in its document) of the object holding the text
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Business:
    id: str
    name: str
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Reign:
    """A noble's seat taken by someone else while a flag is set (a variant's new ruler)."""

    flag: str
    name: str
    title: str
    noble_action: str | None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Noble:
    id: str
    name: str
    title: str
    state_actions: tuple[str, ...]
    noble_action: str
    trade_goods: tuple[str, ...]
    reign: Reign | None
    provenance: Provenance
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class StateAction:
    id: str
    name: str
    effects: Effects
    rule: Rule
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class ExtraPick:
    marker_on: str
    max_markers: int
    text: str
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class NobleAction:
    id: str
    name: str
    procedure: str
    rule: Rule
    land_price: Formula | None
    params: Params
    rubble: int
    lots: tuple[tuple[str, int], ...]
    extra_pick: ExtraPick | None
    wigs_per_official: int
    forbidden_by_flag: str | None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Cost:
    id: str
    name: str
    formula: Formula
    params: Params
    example: tuple[tuple[str, int], ...]
    rule: Rule
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Action:
    id: str
    name: str
    number: int | None
    plays: str | None
    procedure: str
    cost: str | None
    lacking_cost: str | None
    steps: tuple[str, ...]
    followable: bool
    reward: Effects
    rule: Rule
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Trigger:
    id: str
    ends: str  # "period" | "game"
    periods: tuple[int, ...]  # the periods it can fire in; () for any period
    scope: str  # "any-player" | "game"
    condition: Formula
    params: Params
    rule: Rule
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)

    def in_period(self, period: int) -> bool:
        """Whether the trigger can fire in a period."""
        return not self.periods or period in self.periods


@dataclass(frozen=True)
class Step:
    id: str
    procedure: str
    deck: str | None
    ships: tuple[str, ...]
    rule: Rule
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class MajorityGroup:
    id: str
    name: str
    measure: Formula
    table: tuple[int, ...]
    unit: str = ""
    unit_one: str = ""
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class HeldItem:
    """One row of the table a `held` scoring source reads: the item's id, its points and the
    condition (a formula of the player) under which it scores them, if any."""

    id: str
    points: int
    condition: Formula | None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class ScoringSource:
    id: str
    name: str
    short: str
    kind: str  # "per-player" | "majority" | "held"
    formula: Formula | None
    params: Params
    groups: tuple[MajorityGroup, ...]
    eligible: Formula | None
    rule: Rule
    # a `held` source: the player's list field, and the rows of the table its items come from
    held: str = ""
    items: tuple[HeldItem, ...] = ()
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class TieBreaker:
    measure: Formula
    name: str
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Deck:
    id: str
    name: str
    years: str
    role: str
    period: int | None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Card:
    number: int
    deck: str
    type: str  # a noble id or the display's treasury pile id
    influence: int
    reward: Effects
    penalty: Effects
    event_action: str | None
    event_effects: Effects
    set_flag: str | None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Decree:
    id: str
    condition: Formula
    wigs: int
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Plan:
    id: str
    officials: int
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Ship:
    color: str
    size: int
    cost: int
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Assumption:
    id: str
    value: str
    reason: str
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Difference:
    id: str
    text: str
    sources: tuple[str, ...]
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Callout:
    variant: str
    rule: str
    text: str
    provenance: Provenance
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)
    id: str | None = field(default=None, kw_only=True)  # by which another variant amends it


@dataclass(frozen=True)
class CalloutAmend:
    """A variant's change to another variant's callout (`callouts: [{of, id, ...}]`): its new
    text, or None to drop it, where both variants are in force."""

    variant: str
    of: str
    id: str
    text: str | None
    provenance: Provenance
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class VariantInfo:
    id: str
    title: str
    applies_players: tuple[int, ...]  # empty: chosen at setup
    text: str
    provenance: Provenance
    callouts: tuple[Callout, ...]
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)
    amends: tuple[CalloutAmend, ...] = field(default=(), kw_only=True)
    official: bool = field(default=False, kw_only=True)  # of the published game, not a house rule

    @property
    def chosen(self) -> bool:
        return not self.applies_players


@dataclass(frozen=True)
class VocabName:
    name: str
    scope: str
    per: str | None
    words: str
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Example:
    id: str
    title: str
    rule: str
    text: str
    players: tuple[tuple[tuple[str, Any], ...], ...]  # each player's given fields, in order
    show: tuple[str, ...]
    provenance: Provenance
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Model:
    """One complete, checked rule set (the base game, or the base with variants applied)."""

    variants: tuple[str, ...]  # the variants folded into this rule set, sorted
    data: dict[str, Any] = field(compare=False, repr=False)  # merged documents by kind
    spans: dict[tuple[str | int, ...], Span] = field(compare=False, repr=False)  # (kind, *path)
    rules: tuple[Rule, ...] = ()
    businesses: tuple[Business, ...] = ()
    nobles: tuple[Noble, ...] = ()
    state_actions: tuple[StateAction, ...] = ()
    noble_actions: tuple[NobleAction, ...] = ()
    costs: tuple[Cost, ...] = ()
    actions: tuple[Action, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    period_end: tuple[Step, ...] = ()
    scoring: tuple[ScoringSource, ...] = ()
    tiebreakers: tuple[TieBreaker, ...] = ()
    decks: tuple[Deck, ...] = ()
    cards: tuple[Card, ...] = ()
    decrees: tuple[Decree, ...] = ()
    plans: tuple[Plan, ...] = ()
    ships: tuple[Ship, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    differences: tuple[Difference, ...] = ()
    vocabulary: tuple[VocabName, ...] = ()
    examples: tuple[Example, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()
    state: StateDecl = field(default_factory=StateDecl)  # rules/state.yaml
    procs: ProcSet | None = field(default=None, compare=False, repr=False)  # effects, actions
    # the source text of each rules file by its shown name (a diagnostic's column inside a text)
    texts: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    # the numbers of players this rule set is played with, when a variant in it applies by
    # player count (game.players' range narrowed to its counts); () for the whole range
    player_counts: tuple[int, ...] = ()

    def rule(self, rule_id: str) -> Rule | None:
        """The rule with this id, if any."""
        for r in self.rules:
            if r.id == rule_id:
                return r
        return None

    def value(self, kind: str, *path: str | int) -> Any:
        """A raw value of the merged documents, e.g. value('game', 'start', 'hand')."""
        node: Any = self.data[kind]
        for key in path:
            node = node[key]
        return node

    def span_of(self, kind: str, *path: str | int) -> Span:
        """The source span of a value, falling back to the nearest enclosing one."""
        key: tuple[str | int, ...] = (kind, *path)
        return nearest(self.spans, key) or NOWHERE


def find_owner(m: Model, r: Rule) -> tuple[Any, tuple[str | int, ...]]:
    """The object that holds a rule's text, and its path (kind first): what the rule's local
    placeholders bind to (the text checks and the reference read it)."""
    if r.owner:
        node = m.data.get(r.section)
        for key in r.owner:
            if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                node = node[key]
            elif isinstance(node, dict):
                node = node.get(key)
        if isinstance(node, dict) and node.get("text") == r.text:
            return node, (r.section, *r.owner)
    doc = m.data.get(r.section)
    found = _find_text(doc, r.text, (r.section,))
    return found if found is not None else ({}, (r.section,))


def _find_text(
    node: Any, text: str, path: tuple[str | int, ...]
) -> tuple[Any, tuple[str | int, ...]] | None:
    if isinstance(node, dict):
        if node.get("text") == text:
            return node, path
        for k, v in node.items():
            hit = _find_text(v, text, (*path, k))
            if hit is not None:
                return hit
    elif isinstance(node, list):
        for i, v in enumerate(node):
            hit = _find_text(v, text, (*path, i))
            if hit is not None:
                return hit
    return None
