"""The engine's runtime: real Python that ruff and mypy check as it is.

`lisboa_rules.emit` joins this module into the one stand-alone `generated/lisboa_engine.py`: the
lines between `# <emit>` and `# </emit>` are copied, except the declarations between
`# <generated>` and `# </generated>`, where the engine template puts the definitions it
generates from rules/ (the formulas, the rule sets, the scorers, the rule ids and texts, the
state schema). The declarations give those names their types, so this module type-checks alone.
The compiler never imports this module; it reads it as text.
"""

# <emit>
from __future__ import annotations

import gc as _gc
import json as _json
import linecache as _linecache
import math as _math
import random as _random
import re as _re
import sys as _sys
from bisect import bisect_left as _bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress as _suppress
from dataclasses import dataclass as _dataclass
from dataclasses import replace as _replace
from itertools import combinations as _combinations
from typing import Any, Final

__all__ = [
    "GAME_INFO",
    "RULESETS",
    "RULE_TEXT",
    "RULE_TEXTS",
    "STATE_SCHEMA",
    "STATE_SCHEMAS",
    "VARIANTS",
    "VERSION",
    "VIEW_SCHEMA",
    "BadArgument",
    "Choice",
    "Ctx",
    "Game",
    "GreedyBot",
    "IllegalMove",
    "MctsBot",
    "Move",
    "Option",
    "Player",
    "RandomBot",
    "Ranking",
    "RuleSet",
    "ScoreLine",
    "ScoreSheet",
    "StateError",
    "View",
    "all_cards",
    "apply_move",
    "check_invariants",
    "component",
    "determinize",
    "dumps",
    "events",
    "explain_move",
    "final_scores",
    "final_totals",
    "from_json",
    "greedy_move",
    "legal_moves",
    "loads",
    "majority_awards",
    "max_save_size",
    "mcts_move",
    "move_words",
    "new_game",
    "options",
    "play",
    "playout",
    "random_move",
    "ranking",
    "record",
    "redeal",
    "rule_text",
    "successors",
    "to_json",
    "variants_for",
    "view",
]

# --- Rule tables ----------------------------------------------------------------------------------
# The shapes of the machinery's tables: compiled procedures, moves, phases, triggers, scoring
# sources. The game's own tables and the RuleSet holding them all are generated from rules/ (the
# placeholder below declares the RuleSet fields this module reads).

IntFn = Callable[["Game", "Player", "Ctx"], int]
BoolFn = Callable[["Game", "Player", "Ctx"], bool]
StrFn = Callable[["Game", "Player", "Ctx"], str]
# the three functions of a bundle of effects of a row (the rule set's `fx`): its options (the
# choices it can make), why a choice fails (None: it does not) and its effects; typed, so that
# mypyc compiles the loops over the options of a row and the tests of its refusals
OptsFn = Callable[..., list[tuple[Any, ...]]]
WhyFn = Callable[..., tuple[str, str] | None]
RunFn = Callable[..., None]
# what the steps of a procedure or an action may change, kept before they run in a move tried
# in place (`_tried`: fresh copies put in their place), and put back after (`_taken_back`)
KeepFn = Callable[["Game", int], tuple[Any, ...]]
PutFn = Callable[["Game", int, tuple[Any, ...]], None]
# the journal of a move tried in place: what each run kept, in the order they ran
_Journal = list[tuple[PutFn, int, tuple[Any, ...]]]


@_dataclass(frozen=True)
class ProcDef:
    """A procedure of rules/ (an effect, an action's part, a hook), compiled into three functions:
    the choices its guard allows (`opts`), why a choice is refused (`why`: the rule id and the
    reason, or None) and its effects (`run`). Each takes the game, the acting seat, the
    procedure's parameters and then its choices, in the order of `choices`. `keep` and `put`
    keep what `run` may change, and put it back, for a move tried in place (`_tried`): those of
    a procedure the turn machine runs (`_ran`); None for the others, which run inside one of
    those or an action, whose keep covers them."""

    id: str
    choices: tuple[str, ...]
    opts: Callable[..., list[tuple[Any, ...]]]
    why: Callable[..., tuple[str, str] | None]
    run: Callable[..., None]
    keep: KeepFn | None
    put: PutFn | None


# A move as the move generators list it: its fields in order (`_MOVE_FIELDS`), one tuple
# (`Move(*code)` is the move; `move._code()` its code). A search draws among codes and makes a
# Move of the one it plays: a tuple costs a tenth of a Move.
_Code = tuple[Any, ...]


@_dataclass(frozen=True)
class MoveDef:
    """A kind of move written in rules/ as steps (an action): the phase it is made in, the rule
    a refusal names, the move fields its choices fill, the field of its first choice (which
    `moves` can be given, to list only the moves with that value), its move generator (which
    lists the moves' codes: `_Code`) and its checked run (which raises IllegalMove); `keep`
    and `put`, as a procedure's, for a move tried in place."""

    kind: str
    phase: str
    rule: str
    fields: tuple[str, ...]
    first: str | None
    moves: Callable[..., list[_Code]]
    play: Callable[[Game, int, Move], None]
    keep: KeepFn
    put: PutFn


@_dataclass(frozen=True)
class PhaseDef:
    """A phase of the turn machine (rules: flow `phases`): who moves in it (`actor`: the seat,
    or None when the phase is done; no function: it waits for no one), whether it interrupts
    the other phases (`interrupts`) and the game field that keeps the phase it interrupted
    (`resume`), and what comes when it is done (`then`: "end-turn", the end of the turn;
    "next-step", the next step of the end of the stage; "": nothing)."""

    id: str
    actor: Callable[[Game], int | None] | None
    interrupts: Callable[[Game], bool] | None
    resume: str | None
    then: str


@_dataclass(frozen=True)
class TriggerDef:
    """An end-of-period or end-of-game trigger."""

    id: str
    ends: str
    periods: tuple[int, ...]  # () for any period
    scope: str
    condition: BoolFn


@_dataclass(frozen=True)
class StepDef:
    """One step of the end of a period."""

    id: str
    procedure: str


@_dataclass(frozen=True)
class GroupDef:
    """One majority inside a scoring source (one of its groups of rules/scoring.yaml)."""

    id: str
    name: str
    measure: IntFn
    table: tuple[int, ...]
    unit: str = ""  # what the measure counts, e.g. "stores" (optional in the rules)
    unit_one: str = ""  # the same for a count of one, e.g. "store"


@_dataclass(frozen=True)
class SourceDef:
    """An endgame scoring source."""

    id: str
    name: str
    kind: str
    formula: IntFn | None
    words: str  # the formula in the reference's words
    groups: tuple[GroupDef, ...]
    eligible: BoolFn | None
    show: StrFn | None = None  # the formula with a player's values put in
    eligible_words: str = ""
    held: str = ""  # a held source: the player's list field whose items score
    items: tuple[ItemDef, ...] = ()  # a held source: the items that field can hold


@_dataclass(frozen=True)
class ItemDef:
    """An item a held scoring source scores: its points, when its condition (if any) holds."""

    id: Any
    condition: BoolFn | None
    points: int
    words: str = ""  # the condition in the reference's words
    name: str = ""  # the item as the reference names it (its id when empty)


@_dataclass(frozen=True)
class DealDef:
    """A conserved kind with hidden zones (rules/state.yaml `see:`): how `determinize` deals
    back the ids a view does not show. `zones`: (scope, field, a map of lists?) where its ids
    live; `sorts`: for a hidden map sorted `by:` a field of the kind's rows, the map's key of
    each id ((field, ((id, key), ...)), ...)."""

    kind: str
    ids: tuple[Any, ...]
    zones: tuple[tuple[str, str, bool], ...]
    sorts: tuple[tuple[str, tuple[tuple[Any, Any], ...]], ...] = ()


@_dataclass(frozen=True)
class VariantDef:
    """A variant: chosen at setup, or applied by player count."""

    id: str
    title: str
    players: tuple[int, ...]


# How a majority's places pay (rules: score.ties), here before the generated tables: the
# printed totals' tables of points by place are made with it when the engine loads.


def majority_awards(
    measures: list[int], eligible: list[bool], table: tuple[int, ...], columns: tuple[int, ...]
) -> list[tuple[int, list[int], int]]:
    """(points, tied seats, first place index) per seat: ties share their places, rounded
    down."""
    prizes = [table[c - 1] for c in columns]
    ranked = sorted((i for i, ok in enumerate(eligible) if ok), key=lambda i: -measures[i])
    out: list[tuple[int, list[int], int]] = [(0, [], -1) for _ in measures]
    place = 0
    while place < len(ranked):
        tied = [i for i in ranked if measures[i] == measures[ranked[place]]]
        share = sum(prizes[place : place + len(tied)]) // len(tied)
        for i in tied:
            out[i] = (share, tied, place)
        place += len(tied)
    return out


def _place_points(table: tuple[int, ...], columns: tuple[int, ...], seats: int) -> tuple[int, ...]:
    """A majority group's points by place, for the printed totals (`final_totals`): at
    `above * (seats + 1) + level`, what each of `level` seats tied after `above` seats that beat
    them wins, as `majority_awards` awards it (0 where there is no such seat)."""
    out: list[int] = []
    for above in range(seats):
        for level in range(seats + 1):
            if not level or above + level > seats:
                out.append(0)
                continue
            measures = [2] * above + [1] * level
            awards = majority_awards(measures, [True] * len(measures), table, columns)
            out.append(awards[above][0])
    return tuple(out)


# <generated>
from dataclasses import field  # noqa: E402  (the placeholders' only: not emitted)

# Declared here with placeholder values; the engine template puts the definitions it generates
# from rules/ in their place (see templates/engine/lisboa_engine.py.jinja).


@_dataclass(frozen=True)
class RuleSet:
    """Every rule the engine plays by, one per combination of variants (generated: the game's
    tables too); this placeholder holds the fields the machinery below reads."""

    key: tuple[str, ...]
    players_min: int
    players_max: int
    colors: tuple[str, ...]
    periods: int
    term_score: str
    triggers: tuple[TriggerDef, ...]
    period_end: tuple[StepDef, ...]
    extra_rounds: int
    scoring: tuple[SourceDef, ...]
    majority_columns: tuple[int, ...]
    column_names: tuple[str, ...]
    tiebreakers: tuple[tuple[str, IntFn], ...]
    procs: dict[str, ProcDef]
    moves: dict[str, MoveDef]
    phases: dict[str, PhaseDef]
    first_seat: Callable[[Game], int] | None  # who plays first (None: the setup's start player)
    next_seat: Callable[[Game, int], int] | None  # who plays after a seat (None: the next one)
    invariants: Callable[[Game], list[str]]
    state_checks: Callable[[Game], tuple[str, str] | None]  # rules/state.yaml `checks:`
    deals: tuple[DealDef, ...]  # the conserved kinds with hidden zones, for `determinize`
    draws: tuple[tuple[str, str, int, int], ...]  # hidden numbers: (scope, field, min, max)


RULESETS: dict[tuple[str, ...], RuleSet] = {}
_SCORERS: dict[tuple[str, ...], Callable[[Game, _ScoreLayout], ScoreSheet]] = {}
_RANKERS: dict[tuple[str, ...], Callable[[Game, tuple[int, ...]], list[tuple[int, ...]]]] = {}
_TOTALERS: dict[tuple[str, ...], Callable[[Game], tuple[int, ...]]] = {}
VARIANTS: dict[str, VariantDef] = {}
GAME_INFO: dict[str, Any] = {}
VERSION: str = "0"
RULE_TEXT: dict[str, tuple[str, str]] = {}
RULE_TEXTS: dict[tuple[str, ...], dict[str, tuple[str, str]]] = {}
STATE_SCHEMA: dict[str, Any] = {}
VIEW_SCHEMA: dict[str, Any] = {}
STATE_SCHEMAS: dict[tuple[str, ...], dict[str, Any]] = {}
_TURN_RULE: str = ""
_GAME_END: str = ""
_TURN_END: str = ""
_SETUP: str = ""
_ACTION_RULE: dict[str, str] = {}
_PHASE_RULES: dict[str, str] = {}
# the generated rule sets and procedures use them
_USED_BY_GENERATED = (_replace, _combinations, Sequence, _bisect_left)
# The context of a formula: one field per `context:` name of rules/vocabulary.yaml (generated);
# this placeholder holds the one the machinery below reads.


@_dataclass(frozen=True)
class Ctx:
    measure: int = 0


# A move: its fields are the choices of the actions of rules/ (generated); this placeholder
# holds the ones the machinery below reads.


@_dataclass(frozen=True)
class Move:
    kind: str
    player: int
    cards: tuple[int, ...] = ()

    def _code(self) -> tuple[Any, ...]:
        return (self.kind, self.player, self.cards)

    def to_json(self) -> dict[str, Any]:
        return _move_json(self)

    @staticmethod
    def from_json(data: Any) -> Move:
        return _move_from_json(data)


# The JSON type of each field of a move (`strings` / `integers`: a list of them), the value of
# a choice not made, and the fields that are never null.
_MOVE_TYPES: dict[str, str] = {}
_MOVE_DEFAULTS: dict[str, Any] = {}
_MOVE_NOT_NULL: frozenset[str] = frozenset()
_MOVE_FIELDS: tuple[str, ...] = ()
_FIELD_AT: dict[str, int] = {}


def _move_well_typed(move: Move) -> bool:
    return True


# The state classes and their saved-game fields are generated from rules/state.yaml; these
# placeholders hold the fields the machinery reads, so that this module type-checks alone.
_GAME_FIELDS: tuple[str, ...] = ()
_PLAYER_FIELDS: tuple[str, ...] = ()
# who sees each field that not everyone sees (rules/state.yaml `see:`): owner, count, top, none
_GAME_SEES: dict[str, str] = {}
_PLAYER_SEES: dict[str, str] = {}
_ZONES: dict[str, str] = {}


@_dataclass
class Player:
    """One player, in clockwise seat order (generated from rules/state.yaml: this placeholder
    holds the fields the machinery below reads)."""

    color: str

    def _copy(self) -> Player:
        return Player(self.color)

    def clone(self) -> Player:
        return Player(self.color)


@_dataclass
class Game:
    """The whole game state (generated from rules/state.yaml: this placeholder holds the
    fields the machinery below reads)."""

    variants: list[str]
    seed: int
    players: list[Player]
    start_player: int = 0
    current: int = 0
    round: int = 1
    period: int = 1
    turns: int = 0
    phase: str = "action"
    actor: int = 0
    period_end_by: int | None = None
    period_step: int = 0
    game_end_round: int | None = None
    final_round: int | None = None
    fired: list[str] = field(default_factory=list)
    _log: _Log | None = None
    _undo: _Journal | None = None

    @property
    def rs(self) -> RuleSet:
        return RULESETS[tuple(self.variants)]

    def clone(self) -> Game:
        return _replace(self, players=[p.clone() for p in self.players])

    def _copy(self) -> Game:
        return _replace(self)

    def _take(self, c: Game) -> None:
        for name in _GAME_FIELDS:
            setattr(self, name, getattr(c, name))


def _game_data(g: Game) -> dict[str, Any]:
    """The plain JSON data of each field of `g` (generated from rules/state.yaml, field by
    field in the declared shapes: this placeholder is the generic form it makes the same as)."""
    return {
        name: [_fields_plain(p, _PLAYER_FIELDS, 2) for p in g.players]
        if name == "players"
        else _plain(getattr(g, name))
        for name in _GAME_FIELDS
    }


def _player_data(p: Player) -> dict[str, Any]:
    """The plain JSON data of each field of `p` (generated, as `_game_data`)."""
    return _fields_plain(p, _PLAYER_FIELDS, 2)


def all_cards(g: Game) -> list[int]:
    """Every id of the kind conserved under this name (generated from rules/state.yaml)."""
    return []


# What a screen shows of the rules' components and moves (generated, emit/engine/
# components.py): by kind, each id's (name, words, row); what the rule sets whose variants
# change some rows change; each kind of move's name, and each move field's label and the kind
# of the ids it holds ("seat": a seat; "": a number or a yes).
_COMPONENTS: dict[str, dict[Any, tuple[str, str, Any]]] = {}
_COMPONENTS_OF: dict[tuple[str, ...], dict[str, dict[Any, tuple[str, str, Any]]]] = {}
_MOVE_NAMES: dict[str, str] = {}
_MOVE_NAMES_OF: dict[tuple[str, ...], dict[str, str]] = {}
_MOVE_LABELS: dict[str, tuple[str, str]] = {}


# </generated>

# In the pure-Python engine a Move is also described as a dataclass, with none of its methods
# replaced (it keeps its own __init__, __eq__ and __hash__), so that `dataclasses.fields` and
# `dataclasses.replace` (a new move with some fields changed) work on moves as they always
# did. A compiled engine's classes keep no annotations: described, its Move had no fields
# (`dataclasses.replace` of one said "missing required argument 'kind'"), so it is left as it
# is there, and `dataclasses.fields` raises TypeError (it is no dataclass).
if "__annotations__" in vars(Move):
    with _suppress(TypeError, AttributeError):
        _dataclass(init=False, repr=False, eq=False)(Move)


# --- Runtime --------------------------------------------------------------------------------------
# The generic machinery below is the same for every rule set: it reads the tables above and
# never names a Noble, a business or a number of its own.


class IllegalMove(ValueError):
    """A move the rules do not allow; `rule` is the id of the rule that forbids it."""

    def __init__(self, rule: str, reason: str, words: tuple[str, str] | None = None) -> None:
        title, text = words if words is not None else RULE_TEXT.get(rule, (rule, ""))
        super().__init__(f"[{rule}] {title}: {reason}" + (f" ({text})" if text else ""))
        self.rule = rule
        self.reason = reason
        self.rule_text = text


class _Unchosen(IllegalMove):
    """The refusal of a move that does not make one of its action's choices (its words are
    those of any refused value of it): `options` looks past it for why a move goes nowhere."""


class StateError(ValueError):
    """JSON the engine refuses to read: a saved game that breaks the state schema or cannot be
    played by these rules, or a move (`Move.from_json`) of the wrong shape; `path` says where
    (`$.players[1].hand`, `$.cards[0]`). Also what an entry point raises for a fault of its
    own on a state it can play: then `at` says where in the rules the step is written that
    failed (`rules/effects.yaml:57`), when the engine's lines are known."""

    def __init__(self, path: str, message: str, at: str | None = None) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
        self.at = at


class BadArgument(ValueError):
    """An argument of a public function that is not a seat, an id or a count of this game."""


def rule_text(rule_id: str) -> tuple[str, str]:
    """The title and the reference's words for a rule id."""
    if not isinstance(rule_id, str) or rule_id not in RULE_TEXT:
        raise BadArgument(f"{rule_id!r} is not a rule id of these rules")
    return RULE_TEXT[rule_id]


def _seat_arg(g: Game, player: Any) -> Player:
    """The player at a seat given to a public function, or BadArgument."""
    if type(player) is not int or not 0 <= player < len(g.players):
        raise BadArgument(f"{player!r} is not a seat of this game (0 to {len(g.players) - 1})")
    return g.players[player]


def _count_arg(value: Any, what: str) -> int:
    """A count given to a public function (a non-negative int, not a bool), or BadArgument."""
    if type(value) is not int or value < 0:
        raise BadArgument(f"{what} must be a non-negative integer, not {value!r}")
    return value


def _int_arg(value: Any, what: str) -> int:
    """A number given to a public function (an int, not a bool), or BadArgument."""
    if type(value) is not int:
        raise BadArgument(f"{what} must be an integer, not {value!r}")
    return value


def _player_arg(value: Any) -> Player:
    """A player given to a public function, or BadArgument."""
    if not isinstance(value, Player):
        raise BadArgument(f"{type(value).__name__} is not a Player")
    return value


def _id_arg(value: Any, ids: Sequence[Any], what: str) -> Any:
    """An id of a kind given to a public function (one of `ids`, of their type), or
    BadArgument."""
    if not ids or type(value) is not type(ids[0]) or value not in ids:
        listed = f" ({', '.join(map(str, ids))})" if ids else ""
        raise BadArgument(f"{value!r} is not {what} of these rules{listed}")
    return value


_NO_CTX: Final = Ctx()  # shared: formulas are called often and most read no context
_CTXS: dict[tuple[tuple[str, int], ...], Ctx] = {}


def _ctx(**values: int) -> Ctx:
    """The context with these values (made once per set of values: contexts are immutable;
    kept only for ints: see `_kept_key`)."""
    key = tuple(values.items())
    found = _CTXS.get(key)
    if found is None:
        found = Ctx(**values)
        if _kept_key(tuple(values.values())):
            _CTXS[key] = found
    return found


_KEPT: Final = (int, str)


def _kept_key(key: object) -> bool:
    """Whether the values a cache of the engine files a result under are ints or strings, or
    tuples of them (two deep), of exactly those types. A state changed by hand can hold other
    values (True, 2.0, 1.5) equal to an int, or whose sums are: filed under that int, their
    result (the words "1 + True", a context holding 2.0) was read back by every later game of
    the process that met the int. So only results of exact values are kept."""
    if type(key) is not tuple:
        return type(key) in _KEPT
    for k in key:  # a tuple of values and of tuples of values
        if type(k) is tuple:
            if not all(type(v) in _KEPT for v in k):
                return False
        elif type(k) not in _KEPT:
            return False
    return True


def _move_json(move: Move) -> dict[str, Any]:
    """A move as JSON, leaving out the choices that are not made (None, False, ())."""
    out: dict[str, Any] = {"kind": move.kind, "player": move.player}
    for name, default in _MOVE_DEFAULTS.items():
        value = getattr(move, name)
        if value != default:
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _move_from_json(data: Any) -> Move:
    """Read a move written by `to_json`. A move of the wrong shape (an unknown or missing key,
    a value of the wrong JSON type: `true` is not a number, `1` is not a string) raises
    StateError with the path of the value; whether a well-formed move is legal is for
    `explain_move` / `apply_move` to say (IllegalMove)."""
    if not isinstance(data, dict):
        raise StateError("$", f"a move is a JSON object, not {_json_type(data)}")
    for key in data:
        if key not in _MOVE_TYPES:
            raise StateError("$", f"unknown key {key!r} in a move")
    for key in ("kind", "player"):
        if key not in data:
            raise StateError("$", f"missing {key!r}")
    fields: dict[str, Any] = {}
    for key, value in data.items():
        want = _MOVE_TYPES[key]
        if want in ("strings", "integers"):
            item = "string" if want == "strings" else "integer"
            if not isinstance(value, list):
                raise StateError(f"$.{key}", f"expected a list, got {_json_type(value)}")
            for i, v in enumerate(value):
                if not _is_type(v, item):
                    raise StateError(f"$.{key}[{i}]", f"expected {item}, got {_json_type(v)}")
            value = tuple(value)
        elif not _is_type(value, want) and not (value is None and key not in _MOVE_NOT_NULL):
            raise StateError(f"$.{key}", f"expected {want}, got {_json_type(value)}")
        fields[key] = value
    return Move(**fields)


_MOVE_EXACT: Final = {"string": str, "integer": int, "boolean": bool}
_NO_FIELD: Final = object()  # what `getattr` gives for a field a move does not have


def _move_problem(move: Any) -> str | None:
    """What makes `move` no Move at all (a field of the wrong Python type: exactly int, str,
    bool or a tuple of them, so `True` is not card 1), or None."""
    try:  # (a field deleted: AttributeError, said below)
        if type(move) is Move and _move_well_typed(move):  # the quick yes (generated)
            return None
    except AttributeError:
        pass
    if not isinstance(move, Move):
        return f"{type(move).__name__} is not a Move"
    for key, want in _MOVE_TYPES.items():
        value = getattr(move, key, _NO_FIELD)
        if value is _NO_FIELD:  # a field deleted (`del move.card`): no value, not None
            return f"the move has no {key} (a field deleted from it)"
        if want in ("strings", "integers"):
            item = str if want == "strings" else int
            if type(value) is not tuple or any(type(v) is not item for v in value):
                return f"the move's {key} must be a tuple of {item.__name__}, not {value!r}"
        elif type(value) is not _MOVE_EXACT[want] and (value is not None or key in _MOVE_NOT_NULL):
            return f"the move's {key} must be {_MOVE_EXACT[want].__name__}, not {value!r}"
    return None


def _fields_repr(value: Any, names: tuple[str, ...]) -> str:
    """`name=value, ...` of the fields of a state or value class, as a dataclass's repr writes
    them (the generated classes are plain classes, so that mypyc can compile them)."""
    return ", ".join(f"{name}={getattr(value, name)!r}" for name in names)


def _activate(g: Game) -> RuleSet:
    """The rule set of a game (entry points call it first; it holds no global state); what
    is no Game (a saved game's JSON data, None) raises BadArgument."""
    if not isinstance(g, Game):
        raise BadArgument(f"{type(g).__name__} is not a Game (from_json reads a saved one)")
    return g.rs


# --- Setup ----------------------------------------------------------------------------------------


def variants_for(players: int, chosen: Iterable[str] = ()) -> tuple[str, ...]:
    """The variants in force: the chosen ones plus those that apply to this player count."""
    if type(players) is not int:
        raise BadArgument(f"the number of players must be an integer, not {players!r}")
    if isinstance(chosen, str):
        raise BadArgument(f"variants are a list of ids, not the string {chosen!r}")
    try:
        # (items read as objects: compiled code checks an item read as a declared `str` and
        # raised TypeError before the check below could say what is wrong)
        given: tuple[object, ...] = tuple(chosen)
    except TypeError:
        raise BadArgument(f"variants are a list of ids, not {type(chosen).__name__}") from None
    ids: list[str] = []
    for name in given:
        if not isinstance(name, str):
            raise BadArgument(f"{name!r} is not a variant id")
        ids.append(name)
    active = set(ids)
    for v in VARIANTS.values():
        if v.players and players in v.players:
            active.add(v.id)
    unknown = sorted(a for a in active if a not in VARIANTS)
    if unknown:
        raise BadArgument(f"unknown variant(s): {', '.join(unknown)}")
    for a in sorted(active):
        if VARIANTS[a].players and players not in VARIANTS[a].players:
            counts = " or ".join(str(n) for n in VARIANTS[a].players)
            raise BadArgument(f"variant {a!r} applies with {counts} players only, not {players}")
    return tuple(sorted(active))


def _rng(g: Game, salt: str) -> _random.Random:
    """The game's seeded stream of random numbers named `salt` (a procedure's shuffles draw
    from the stream of the procedure's id)."""
    return _random.Random(f"{g.seed}:{salt}")


def new_game(players: int, variants: Iterable[str] = (), seed: int = 0) -> Game:
    """A new game for the rule set's number of players; the same seed and moves give the same
    game."""
    if type(seed) is not int:
        raise BadArgument(f"the seed must be an integer, not {seed!r}")
    if not _INT_MIN <= seed <= _INT_MAX:  # a save keeps it, as a 64-bit JSON number
        raise BadArgument("the seed must be a signed 64-bit integer (-2**63 to 2**63 - 1)")
    key = variants_for(players, variants)
    rs = RULESETS[key]
    if not rs.players_min <= players <= rs.players_max:
        raise BadArgument(
            f"{players} players: this game is for {rs.players_min} to {rs.players_max}"
        )
    g = Game(variants=list(key), seed=seed, players=[])
    # the setup of rules/ (flow.yaml `setup`): its steps make the players and deal the game
    rs = _activate(g)
    rs.procs[_SETUP].run(g, 0, players)
    if rs.first_seat is not None:  # the turn order's first player (rules: turn_order)
        g.start_player = g.current = g.actor = rs.first_seat(g) % players
    return g


# --- Legal moves ----------------------------------------------------------------------------------


# What an entry point raises for a state it cannot play: a Game changed by hand (its fields
# set to values apply_move never makes) fails somewhere inside with a Python error; the
# saved-game checks then say what is wrong with it. `_REFUSALS` pass through as they are.
_REFUSALS: Final = (IllegalMove, StateError, BadArgument)
# RecursionError: a list that holds itself, set by hand
# Whatever else an entry point meets (a KeyError, a StopIteration, a RecursionError, ...) it
# turns into one of the three errors it documents (IllegalMove, StateError, BadArgument).
_FAULTS: Final = (Exception,)


def _broken(g: Game | View, exc: Exception) -> Exception:
    """The error for `exc`, raised by an entry point on `g`: a StateError naming what the
    saved-game checks find wrong with `g` (so a hand-changed state is refused in words, as a
    save from_json refuses); when they find nothing, the engine's own fault. A view is
    dealt into a game and that game checked: what they find wrong with it is BadArgument (a
    view of no state the engine plays; a bot searching it met a move its steps refuse)."""
    if not isinstance(g, Game):
        return _broken_view(g, exc)
    try:
        try:
            data = _state_data(g)
        except (TypeError, ValueError):  # a value no JSON holds: say where it is
            found = _not_json(g)
            if found is None:
                raise
            return StateError(found[0], f"not a state the engine can play: {found[1]}")
        from_json(_json.loads(_json.dumps(data)))
        held = {n: getattr(g, n) for n in _GAME_FIELDS if n != "players"}
        held["players"] = [{f: getattr(q, f) for f in _PLAYER_FIELDS} for q in g.players]
        where = _not_plain(held, "$")
        if where is not None:  # a tuple for a list, say: JSON cannot tell them apart
            return StateError(
                where, "not a state the engine can play: a value of a type no saved game holds"
            )
    except StateError as refused:  # (not `found`: compiled code keeps one type per name)
        if refused.at is not None or refused.message.startswith("the engine failed"):
            return refused  # a legal move of the state fails: the engine's own fault
        return StateError(refused.path, f"not a state the engine can play: {refused.message}")
    except Exception as other:  # a field that is not even data: no save could hold it
        return StateError(
            "$",
            "not a state the engine can play: a field holds what no saved game can "
            f"({type(other).__name__}: {other}); states come from new_game, apply_move, from_json",
        )
    # a state every check finds right: the engine's own fault, named at the rule it ran
    where = _rule_at(exc)
    return StateError(
        "$",
        f"the engine failed on a state it can play{f' at {where}' if where else ''} "
        f"({type(exc).__name__}: {exc}): a fault of the rules or the compiler; "
        "please report it with the saved game and the move",
        where,
    )


def _broken_view(v: object, exc: Exception) -> Exception:
    """`_broken` of a view (anything else: `exc` itself): the saved-game checks of the game it
    deals, what they find wrong as BadArgument."""
    if not isinstance(v, View):
        return exc
    try:
        dealt = determinize(v, _random.Random(0))
    except _REFUSALS as refused:
        return refused
    checked = _broken(dealt, exc)
    if isinstance(checked, StateError) and checked.at is None:
        said = checked.message.removeprefix("not a state the engine can play: ")
        if said != checked.message:
            return BadArgument(f"not a view of a state the engine can play: {checked.path}: {said}")
    return checked


_AT_RULE: Final = _re.compile(r"#\s+(rules/[^\s:]+:\d+)")


def _rule_at(exc: BaseException) -> str | None:
    """Where in the rules the step is written that raised `exc` in this module: the position
    (`rules/FILE:LINE`) the generated code names in the comment above the line that raised,
    in the innermost frame of this module whose function names one (a helper of the runtime
    that raised names none: the step that called it does); None when none does or the lines
    are not known (compiled code)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:  # the innermost frame of a function that names a step (not of a
        if tb.tb_frame.f_code.co_filename == __file__:  # helper of the runtime it called)
            found = _rule_at_line(tb.tb_lineno) or found
        tb = tb.tb_next
    return found


def _rule_at_line(line: int) -> str | None:
    """The rule position (`rules/FILE:LINE`) the generated code names in the comment above
    line `line` of this module, in its function; None when the function names none."""
    for n in range(line, 0, -1):  # up to the start of the function
        text = _linecache.getline(__file__, n)
        found = _AT_RULE.search(text)
        if found is not None:
            return found.group(1)
        if text.lstrip().startswith(("def ", "class ")):
            return None
    return None


def _not_plain(value: Any, path: str) -> str | None:
    """The path of the first value in `value` that is not of a JSON type (dict with str keys,
    list, str, int, bool, None), or None."""
    if value is None or type(value) in (str, int, bool):
        return None
    if type(value) is list:
        for i, item in enumerate(value):
            found = _not_plain(item, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if type(value) is dict:
        for key, item in value.items():
            found = path if type(key) is not str else _not_plain(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    return path


def legal_moves(g: Game | View) -> list[Move]:
    """Every legal move of the player to act (`g.actor`), in a stable order; from the view of
    the seat to act the same moves. The move generators try effects on `g` itself and put
    every field back before they return (also when one raises): `g` is the same after, but
    one state is not to be listed by two threads at once."""
    g = _view_of(g, "lists")
    try:
        return _legal_moves(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _legal_moves(g: Game) -> list[Move]:
    rs = _activate(g)
    if g.phase == "over":
        return []
    seat = g.actor
    out = [Move(*code) for moves in _moves_of(rs, g.phase) for code in moves(g, seat)]
    if _PLAYED:  # the list of a state played once is kept only until another listing
        _PLAYED.clear()
    if len(out) >= _KEEP_FROM:
        _LISTED[0] = (g, g.clone(), out[:], None)
    return out


_MOVES_OF: Final[dict[tuple[tuple[str, ...], str], tuple[Callable[..., list[_Code]], ...]]] = {}


def _moves_of(rs: RuleSet, phase: str) -> tuple[Callable[..., list[_Code]], ...]:
    """The move generators of a rule set's phase, in the order of `rs.moves` (found once per
    rule set and phase)."""
    found = _MOVES_OF.get((rs.key, phase))
    if found is None:
        found = _MOVES_OF[rs.key, phase] = tuple(
            md.moves for md in rs.moves.values() if md.phase == phase
        )
    return found


# The last long list of moves `legal_moves` made, kept with the state it was made for and a
# copy of that state taken then: (state, copy, moves, ids). `apply_move` and `explain_move` of
# that state read the list instead of listing again, but only while the state is still equal
# to the copy in every field (a state changed since is listed again). The first `apply_move`
# plays the move on the copy itself (a random playout plays one move of each state) and takes
# the entry out, leaving in `_PLAYED` the id of the state and its list until `legal_moves`
# lists again: a second `apply_move` of that state (a search trying every move) lists it
# afresh and keeps that copy shared, with the ids of the listed moves (`ids`, a set: the moves
# a caller picks from the list are found at once; the list is kept, so the ids stay those of
# its moves); from then on each move is played on a copy of the shared copy. A cache only:
# with it empty every answer is the same (an id of a state that is gone only makes a state be
# listed once more). Short lists are not kept (listing them again costs less).
_LISTED: Final[dict[int, tuple[Game, Game, list[Move], set[int] | None]]] = {}
_PLAYED: Final[dict[int, tuple[int, list[Move]]]] = {}
_KEEP_FROM: Final = 8  # moves


def _kept(g: Game, move: Move, take: bool) -> Game | None:
    """A state equal to `g` to play `move` on, from the moves `legal_moves(g)` kept, when `g`
    is unchanged since then and `move` (well typed) is one of them, otherwise None. Without
    `take`, the kept copy itself (only to be read). With `take`, a state to play on: the kept
    copy itself the first time, a copy of it later."""
    if type(move) is not Move:
        return None
    entry = _LISTED.get(0)
    if entry is None or entry[0] is not g:
        played = _PLAYED.get(0)
        if not take or played is None or played[0] != id(g):
            return None
        # played once already: a search tries the moves of this state
        first = played[1]
        fresh = legal_moves(g)  # listed afresh from g as it is now, and kept with a copy
        entry = _LISTED.get(0)
        if entry is None or entry[0] is not g:
            return None
        # the moves the caller holds are those of the first list, when it is the same list
        moves = first if fresh == first else entry[2]
        entry = _LISTED[0] = (g, entry[1], moves, {id(m) for m in moves})
    kept = entry[1]
    ids = entry[3]
    if ids is not None:
        if id(move) not in ids and move not in entry[2]:
            return None
    else:
        for m in entry[2]:  # one of the listed moves (what a player picks from the list)...
            if m is move:
                break
        else:  # ...or a Move of the same fields as one (exact types: checked)
            if move not in entry[2]:
                return None
    if g != kept:
        return None
    if not take:
        return kept
    if ids is not None:
        return kept.clone()
    if _LISTED.pop(0, None) is not entry:  # another thread took it first
        return None
    _PLAYED[0] = (id(g), entry[2])
    return kept


def successors(g: Game) -> list[tuple[Move, Game]]:
    """Each legal move of `g` (in the order of `legal_moves(g)`) paired with the state after
    it: `[(m, apply_move(g, m)) for m in legal_moves(g)]`, computed once. The moves are listed
    once and each is played on its own copy of `g` without `apply_move`'s checks that it is a
    listed move of an unchanged state (it is one, by construction). `g` is never changed; the
    states are new and share nothing with `g` or with each other. For agents that look one move
    ahead; `apply_move` stays the checked way to play a move a caller made. Python's cyclic
    garbage collector is paused while the states are made (`_collector_paused`)."""
    paused = _collector_paused()
    try:
        return _successors(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None
    finally:
        if paused:
            _gc.enable()


def _collector_paused() -> bool:
    """Pause Python's cyclic garbage collector, if it runs; whether it was paused (the caller
    turns it back on when it is done). A search makes thousands of states, each dozens of
    lists and tables, and keeps them while it compares them: the collector's passes over that
    growing heap cost a third of making them (benchmarks/README.md, issue 36), and find
    nothing, since a state holds no cycle (it is freed as soon as it is dropped). A collector
    turned off by the caller stays off."""
    if not _gc.isenabled():
        return False
    _gc.disable()
    return True


def _successors(g: Game) -> list[tuple[Move, Game]]:
    rs = _activate(g)
    if g.phase == "over":
        return []
    seat = g.actor
    out: list[tuple[Move, Game]] = []
    for moves in _moves_of(rs, g.phase):
        for code in moves(g, seat):
            move = Move(*code)
            after = g.clone()
            _apply(after, move)
            if g._log is not None:
                _recorded(g, after, move)
            out.append((move, after))
    return out


# --- Checking and applying a move -----------------------------------------------------------------


def explain_move(g: Game | View, move: Move) -> IllegalMove | None:
    """Why a move is illegal (the rule id and the reason), or None when it is legal: a move
    is legal exactly when it is one of `legal_moves(g)`, compared by value with the types of
    the values (`True` is not card 1). A view of the seat to act gives the same answer."""
    g = _view_of(g, "explains")
    try:
        why = _explain_move(g, move)
        return None if why is None else _worded(g, why)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _explain_move(g: Game, move: Move) -> IllegalMove | None:
    _activate(g)
    return _check(g, move)


def _illegal(rule: str, reason: str) -> IllegalMove:
    return IllegalMove(rule, reason)


def _worded(g: Game, exc: IllegalMove) -> IllegalMove:
    """The refusal with the words of the game's rule set, where its variants change them."""
    words = RULE_TEXTS.get(g.rs.key)
    found = words.get(exc.rule) if words is not None else None
    return exc if found is None else IllegalMove(exc.rule, exc.reason, found)


def _listed(g: Game, move: Move) -> bool:
    """Whether a well-typed move is one of `legal_moves(g)`. In the action phase only the
    moves of the move's card are listed (the same generator, so the same moves)."""
    if g.phase == "over" or move.player != g.actor:
        return False
    md = g.rs.moves.get(move.kind)
    if md is not None:
        if md.phase != g.phase:
            return False
        if md.first is not None:
            return move._code() in md.moves(g, g.actor, getattr(move, md.first))
        return move._code() in md.moves(g, g.actor)
    return move in legal_moves(g)


def _check(g: Game, move: Move) -> IllegalMove | None:
    """None when the move is one of the legal moves; otherwise the rule that forbids it, found
    by playing it on a copy (thrown away), or the rule of the move's kind or phase."""
    problem = _move_problem(move)
    if problem is not None:
        return _illegal(_TURN_RULE, problem)
    kept = _kept(g, move, False)
    if kept is not None:
        # one of the listed Moves, whose fields its holder may have changed since: the checked
        # run says, on a copy, as `apply_move` plays it
        try:
            _apply(kept.clone(), move)
        except IllegalMove as exc:
            return exc
        return None
    return _unlisted(g, move)


def _unlisted(g: Game, move: Move) -> IllegalMove | None:
    """`_check` of a well-typed move, listing the moves again."""
    if _listed(g, move):
        return None
    try:
        _apply(g.clone(), move)
    except IllegalMove as exc:
        return exc
    except Exception:  # a move no procedure foresaw: it is not legal either
        pass
    rule = _ACTION_RULE.get(move.kind, _PHASE_RULES.get(g.phase, _TURN_RULE))
    reordered = _reordered(g, move)
    if reordered is not None:
        field, listed = reordered
        return _illegal(
            rule,
            f"this {move.kind} move gives its {field} in another order "
            f"than the legal move does: give them as {list(listed)}",
        )
    return _illegal(rule, f"this {move.kind} move is not one of the legal moves")


def _reordered(g: Game, move: Move) -> tuple[str, tuple[Any, ...]] | None:
    """The field of several items (and its items as the legal move gives them) in which
    `move` differs from a legal move only by their order, or None."""
    code = move._code()
    for m in legal_moves(g):
        other = m._code()
        if m.kind != move.kind or other == code:
            continue
        diff = [i for i, (a, b) in enumerate(zip(code, other, strict=True)) if a != b]
        # (`_same`: a pick's items in any order, as `options` compares them)
        picks = (_same(_MOVE_FIELDS[i], other[i], list(code[i])) for i in diff)
        if diff and all(type(code[i]) is tuple for i in diff) and all(picks):
            return _MOVE_FIELDS[diff[0]], other[diff[0]]
    return None


def apply_move(g: Game, move: Move) -> Game:
    """The state after `move`; the given state is never changed. Raises IllegalMove unless
    the move is one of `legal_moves(g)` (see `explain_move`)."""
    try:
        return _apply_move(g, move)
    except IllegalMove as exc:
        raise _worded(g, exc) from None
    except _REFUSALS:
        raise
    except _FAULTS as fault:  # (not `exc`: compiled code keeps one type per name)
        raise _broken(g, fault) from None


def _apply_move(g: Game, move: Move) -> Game:
    _activate(g)
    problem = _move_problem(move)
    if problem is not None:
        raise _illegal(_TURN_RULE, problem)
    after = _kept(g, move, True)
    if after is None:
        refused = _unlisted(g, move)
        if refused is not None:
            raise refused
        after = g.clone()
    _apply(after, move)
    if g._log is not None:
        _recorded(g, after, move)
    return after


play = apply_move


# --- Choice by choice -----------------------------------------------------------------------------
# A screen builds a move one choice at a time: first its kind, then each field its action
# chooses, in the order of the action's steps (MoveDef `fields`). `options(g, partial)` lists
# the next choice's options, each enabled (some legal move goes on from it) or disabled with
# the rule and the reason the engine gives for it. A field that holds several items (a list:
# a pick of several, as a hand to discard from) is one choice of a set: its options are the
# items and `pick` says how many to take (and `sets`, which sets, when not every set of that
# many is allowed); when the rules read the order of the items too (one of them leads), a
# second choice of the same field offers the orders the moves list. Every answer is read from
# `legal_moves`: an enabled value always leads on to a listed move, a pick the moves list
# too, and every listed move is reached.


@_dataclass(frozen=True)
class Option:
    """One option of a choice: its value (as a move's JSON holds it), its words, whether a
    legal move goes on from it, and when not, the rule that forbids it and why."""

    value: Any
    enabled: bool
    rule: str = ""
    reason: str = ""
    words: str = ""  # the option in the rules' words (see `move_words`)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": _plain(self.value),
            "words": self.words,
            "enabled": self.enabled,
        }
        if not self.enabled:
            out["rule"] = self.rule
            out["reason"] = self.reason
        return out


@_dataclass(frozen=True)
class Choice:
    """The next choice of a move being built: the move field it fills (`field`, "kind"
    first), its `label` in the rules' words and its options; `pick`: for a pick of several,
    the fewest and the most items to take (the value chosen is then the list of them), and
    `sets`, the sets the moves take when not every set of that many is one. When the partial
    move is complete, `field` is None, there are no options and `move` is the legal move."""

    field: str | None
    options: tuple[Option, ...] = ()
    pick: tuple[int, int] | None = None
    move: Move | None = None
    label: str = ""  # the field in the rules' words ("move" for the kind)
    sets: tuple[tuple[Any, ...], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "field": self.field,
            "label": self.label,
            "options": [o.to_json() for o in self.options],
        }
        if self.pick is not None:
            out["pick"] = list(self.pick)
        if self.sets is not None:
            out["sets"] = [list(x) for x in self.sets]
        if self.move is not None:
            out["move"] = self.move.to_json()
        return out


def options(g: Game | View, partial: Mapping[str, Any] | None = None) -> Choice:
    """The next choice of the move `partial` begins (the JSON of a move: {"kind": ...} and
    the fields chosen so far; None or {} for the first choice, the kind), for the seat to act
    (from the game, or from that seat's view: the same answers). A partial move no legal
    move goes on from raises IllegalMove (the rule and the reason); a field that is not a
    move's or a value that is no JSON, BadArgument."""
    g = _view_of(g, "lists")
    try:
        return _options(g, _partial_arg(g, partial))
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _partial_arg(g: Game, partial: Mapping[str, Any] | None) -> dict[str, Any]:
    if partial is None:
        return {}
    if not isinstance(partial, Mapping):
        raise BadArgument(f"a partial move is a mapping of its fields, not {partial!r}")
    out: dict[str, Any] = {}
    for key, value in partial.items():
        if key not in _MOVE_TYPES:
            raise BadArgument(f"{key!r} is not a field of a move ({', '.join(_MOVE_TYPES)})")
        if key == "player":
            if type(value) is not int or value != g.actor:
                raise BadArgument(f"seat {g.actor} is to move, not {value!r}")
            continue
        try:
            out[key] = _plain(list(value) if isinstance(value, tuple) else value)
        except (TypeError, ValueError) as exc:
            raise BadArgument(f"the partial move's {key} is no JSON value: {exc}") from None
    return out


def _label(field: str) -> str:
    """A move field in the rules' words (its name with spaces where the rules give none)."""
    return _MOVE_LABELS.get(field, ("", ""))[0] or field.replace("_", " ")


def _options(g: Game, given: dict[str, Any]) -> Choice:
    """The next choice, its options and label in the rules' words."""
    choice = _bare_options(g, given)
    if choice.field is None:
        return choice
    table, names = _words_of(_activate(g).key)
    worded = tuple(
        _replace(o, words=_option_words(g, table, names, choice.field, o.value))
        for o in choice.options
    )
    label = "move" if choice.field == "kind" else _label(choice.field)
    return _replace(choice, options=worded, label=label)


def _option_words(
    g: Game,
    table: dict[str, dict[Any, tuple[str, str, Any]]],
    names: dict[str, str],
    field: str,
    value: Any,
) -> str:
    """An option in words: a kind of move by its name, a value as `move_words` says it, a
    choice not made as "no ..." (an optional choice left out)."""
    if field == "kind":
        return names.get(value, str(value))
    if value is None or value is False or value == []:
        return "no " + _label(field)
    if isinstance(value, list):
        value = tuple(value)
    return _choice_words(g, table, field, value)


def _order(md: MoveDef | None) -> tuple[str, ...]:
    """The fields of a kind of move in the order they are chosen: its action's, then the
    others (a move's field its action does not list is still offered, never lost)."""
    own = md.fields if md is not None else ()
    return (*own, *[f for f in _MOVE_FIELDS[2:] if f not in own])


def _bare_options(g: Game, given: dict[str, Any]) -> Choice:
    rs = _activate(g)
    listed = [(m, _choices(m)) for m in _legal_moves(g)]
    if "kind" not in given:
        return Choice("kind", _kind_options(g, rs, listed))
    kind = given["kind"]
    md = rs.moves.get(kind) if isinstance(kind, str) else None
    same = [(m, j) for m, j in listed if j["kind"] == kind]
    going = [(m, j) for m, j in same if all(_same(f, j[f], v) for f, v in given.items())]
    if not going:
        raise _worded(g, _refusal(g, given, listed))
    for name, value in given.items():  # a pick of several whose order the rules read too
        if name != "kind" and _MOVE_TYPES[name] in ("strings", "integers"):
            exact = [(m, j) for m, j in going if j[name] == value]
            if exact:
                going = exact
                continue
            orders = _distinct([j[name] for _, j in going])
            if len(orders) > 1:  # which leads: the same items in each order a move lists
                return Choice(name, tuple(Option(o, True) for o in orders))
    for name in _order(md):
        if name in given:
            continue
        values = [j[name] for _, j in going]
        unmade = _plain(_MOVE_DEFAULTS[name])
        if all(v == unmade for v in values):
            continue  # not a choice this move makes on the way it goes
        anywhere = [j[name] for _, j in same if j[name] != unmade]
        if _MOVE_TYPES[name] in ("strings", "integers"):
            return _pick(g, given, name, values, anywhere, listed)
        return Choice(name, _value_options(g, given, name, values, anywhere, listed))
    return Choice(None, move=going[0][0])


def _choices(move: Move) -> dict[str, Any]:
    """Every field of a move as JSON, the choices not made too (null, false, [])."""
    return {name: _plain(getattr(move, name)) for name in _MOVE_FIELDS}


def _same(name: str, held: Any, given: Any) -> bool:
    """Whether a listed move's value of a field is the value given (of the same JSON type:
    `true` is not 1): a pick of several by its items, in any order (of the same length first:
    a list of a million items given was sorted once for each listed move)."""
    if _MOVE_TYPES[name] in ("strings", "integers"):
        return (
            isinstance(given, list)
            and len(given) == len(held)
            and sorted(held, key=repr) == sorted(given, key=repr)
        )
    return bool(held == given) and type(held) is type(given)


def _kind_options(
    g: Game, rs: RuleSet, listed: list[tuple[Move, dict[str, Any]]]
) -> tuple[Option, ...]:
    """The kinds of move of the phase, in the rules' order (each kind the moves list too)."""
    kinds = [md.kind for md in rs.moves.values() if md.phase == g.phase]
    kinds += [k for k in dict.fromkeys(m.kind for m, _ in listed) if k not in kinds]
    made = {m.kind for m, _ in listed}
    out = []
    for kind in kinds:
        if kind in made:
            out.append(Option(kind, True))
        else:
            why = _refusal(g, {"kind": kind}, listed)
            out.append(Option(kind, False, why.rule, why.reason))
    return tuple(out)


def _value_options(
    g: Game,
    given: dict[str, Any],
    name: str,
    values: list[Any],
    anywhere: list[Any],
    listed: list[tuple[Move, dict[str, Any]]],
) -> tuple[Option, ...]:
    """The options of a field: the values some move that goes on from `given` chooses, and
    disabled, the other values moves of the same kind choose (`anywhere`), with why."""
    out = [Option(v, True) for v in _distinct(values)]
    shown = {repr(v) for v in values}
    for v in _distinct([v for v in anywhere if repr(v) not in shown]):
        why = _refusal(g, {**given, name: v}, listed)
        out.append(Option(v, False, why.rule, why.reason))
    return tuple(out)


def _pick(
    g: Game,
    given: dict[str, Any],
    name: str,
    values: list[Any],
    anywhere: list[Any],
    listed: list[tuple[Move, dict[str, Any]]],
) -> Choice:
    """A pick of several: the items the moves that go on choose among, and disabled, the
    items other moves of the kind choose, with why; how many to take, and which sets when
    not every set of that many is one a move takes."""
    items = _distinct([x for v in values for x in v])
    low, high = min(len(v) for v in values), max(len(v) for v in values)
    taken = {repr(x) for x in items}
    opts = [Option(x, True) for x in items]
    for x in _distinct([x for v in anywhere for x in v if repr(x) not in taken]):
        why = _refusal(g, {**given, name: [x]}, listed)
        opts.append(Option(x, False, why.rule, why.reason))
    sets = _distinct([tuple(sorted(v, key=repr)) for v in values])
    every = sum(_math.comb(len(items), k) for k in range(low, high + 1))
    return Choice(name, tuple(opts), (low, high), sets=None if len(sets) == every else tuple(sets))


def _distinct(values: list[Any]) -> list[Any]:
    """The values, each once (by its repr: lists too), in order."""
    seen: set[str] = set()
    out = []
    for v in values:
        key = repr(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


_WHY_TRIES: Final = 8  # values of a choice tried when looking why a partial move goes nowhere


def _refusal(
    g: Game, given: dict[str, Any], listed: list[tuple[Move, dict[str, Any]]]
) -> IllegalMove:
    """Why no legal move goes on from `given`: the engine's refusal of the move with the
    choices left out not made. When that refusal is only of a choice not made (`_Unchosen`),
    the values of that choice are tried (those of the moves listed, then the ids of its kind):
    a value refused in other words passed the choice's own check; past the first of them
    refused only for a later choice not made, the search goes on; otherwise the refusal most of
    them share is the reason, and when every value is refused as none, that refusal."""
    kind = given.get("kind")
    rule = (
        _ACTION_RULE.get(kind, _PHASE_RULES.get(g.phase, _TURN_RULE))
        if isinstance(kind, str)
        else _TURN_RULE
    )
    found = _partial_refused(g, given, rule)
    md = g.rs.moves.get(kind) if isinstance(kind, str) else None
    table = _words_of(_activate(g).key)[0]
    for name in _order(md):
        if not isinstance(found, _Unchosen):
            break
        if name in given:
            continue
        unmade = _plain(_MOVE_DEFAULTS[name])
        ids = list(table.get(_MOVE_LABELS.get(name, ("", ""))[1], {}))
        if _MOVE_TYPES[name] in ("strings", "integers"):
            ids = [[x] for x in ids]
        tries = _distinct([j[name] for _, j in listed if j[name] != unmade] + ids)[:_WHY_TRIES]
        was = (found.rule, found.reason)
        got = [(v, r) for v in tries if (r := _partial_refused(g, {**given, name: v}, rule, True))]
        if not got:
            break
        # a value refused otherwise than the choice not made passed this choice's own check
        past = [(v, r) for v, r in got if (r.rule, r.reason) != was]
        if not past:  # each value is refused as none: that is the reason
            break
        on = [(v, r) for v, r in past if isinstance(r, _Unchosen)]
        if on:  # a value this choice allows, refused only for a later choice: on with it
            given = {**given, name: on[0][0]}
            found = on[0][1]
            continue
        counts: dict[tuple[str, str], int] = {}
        for _, r in past:
            counts[r.rule, r.reason] = counts.get((r.rule, r.reason), 0) + 1
        best = max(counts.values())
        found = next(r for _, r in past if counts[r.rule, r.reason] == best)
    return _worded(g, found or _illegal(rule, "no legal move goes on from these choices"))


def _partial_refused(
    g: Game, given: dict[str, Any], rule: str, trying: bool = False
) -> IllegalMove | None:
    """The engine's refusal of the move `given` makes with every other choice not made (None
    when it is legal, or `trying` a value of another type than its field's)."""
    try:
        move = _move_from_json({**given, "player": g.actor})
    except StateError as exc:  # a value of another type than the field's: no move at all
        return None if trying else _illegal(rule, f"not a move: {exc}")
    return _check(g, move)


def _apply(g: Game, move: Move) -> None:
    """Check and play a move on `g` (a copy), then run the procedures that need no choice."""
    if g.phase == "over":
        raise _illegal(_GAME_END, "the game is over")
    if move.player != g.actor:
        raise _illegal(
            _TURN_RULE, f"it is {g.players[g.actor].color}'s move, not {_color(g, move.player)}'s"
        )
    md = g.rs.moves.get(move.kind)
    if md is not None:
        if md.phase != g.phase:
            raise _illegal(
                _PHASE_RULES.get(g.phase, _TURN_RULE),
                f"a {move.kind} move cannot be made now ({g.phase})",
            )
        undo = g._undo
        if undo is not None:
            undo.append((md.put, move.player, md.keep(g, move.player)))
        md.play(g, move.player, move)
        _check_triggers(g)
        _advance(g)
        return
    raise _illegal(_TURN_RULE, f"unknown move kind {move.kind!r}")


def _ran(g: Game, proc: ProcDef, seat: int) -> None:
    """Run a procedure of the turn machine (a hook, a trigger's steps, a step of the period's
    end) for `seat`; in a move tried in place, what it may change is kept first."""
    undo = g._undo
    if undo is not None:
        keep, put = proc.keep, proc.put
        if keep is None or put is None:  # (the compiler gives one to all that come here)
            raise RuntimeError(f"the procedure {proc.id} has nothing kept to take it back")
        undo.append((put, seat, keep(g, seat)))
    proc.run(g, seat)


def _tried(g: Game, move: Move) -> tuple[Game, _Journal]:
    """Play a listed move on `g` itself (as `_apply` does), keeping what `_taken_back` needs to
    put `g` back as it was: a search tries each move on its one state instead of on a copy.
    The turn machine only ever sets a field of the state (never changes a list or a table in
    place): a shallow copy of the game keeps what it sets. The steps of the rules change lists
    and tables in place: each action, and each procedure the turn machine runs, keeps the
    fields it may write (as the compiler finds them in its steps and its callees') and puts
    fresh copies in their place before it runs. On an error `g` is put back before it is
    raised."""
    was = g._copy()
    undo: _Journal = []
    g._undo = undo
    try:
        _apply(g, move)
    except BaseException:
        g._undo = None
        _taken_back(g, was, undo)
        raise
    g._undo = None
    return was, undo


# Whether a search checks that every move it tries in place is taken back exactly (the
# compiler's backstop turns it on for the games it plays before a build is written: a house
# rule whose steps write a field the compiler did not find fails the build, not a search).
_TRY_CHECKED: Final[list[bool]] = [False]


def _check_taken_back(g: Game, before: Game, tried: list[_Code]) -> None:
    """Raise unless `g`, the moves `tried` each tried on it and taken back, is `before` again."""
    if g == before:
        return
    differ = [n for n in _GAME_FIELDS if getattr(g, n) != getattr(before, n)]
    kinds = ", ".join(dict.fromkeys(str(code[0]) for code in tried))
    raise RuntimeError(
        f"a move tried in place ({kinds}) was not taken back: {', '.join(differ)} changed (a "
        "field its steps write that the compiler did not find)"
    )


def _taken_back(g: Game, was: Game, undo: _Journal) -> None:
    """`g` as it was before `_tried` played a move on it: every field the runs kept put back,
    the last run's first, then every field of the game."""
    for k in range(len(undo) - 1, -1, -1):
        put, seat, kept = undo[k]
        put(g, seat, kept)
    g._take(was)


# The fields a kind of move leaves unchosen, with their places in its code and their
# defaults, by the fields it chooses.
_NOT_CHOSEN_BY: Final[dict[tuple[str, ...], tuple[tuple[int, str, Any], ...]]] = {}


def _only_chosen(move: Move, fields: tuple[str, ...], rule: str, reason: str | None = None) -> None:
    """Refuse a move that fills a field its action did not choose on the way it went (with
    the rule's words `reason`, if given): every move has one form, so a move is legal
    exactly when it is one of `legal_moves`."""
    others = _NOT_CHOSEN_BY.get(fields)
    if others is None:
        others = _NOT_CHOSEN_BY[fields] = tuple(
            (_FIELD_AT[n], n, d) for n, d in _MOVE_DEFAULTS.items() if n not in fields
        )
    code = move._code()  # (its fields read at once: no attribute looked up by name)
    for at, name, default in others:
        if code[at] != default:
            raise _illegal(
                rule, reason or f"a {move.kind} move does not choose {name.replace('_', ' ')}"
            )


def _retag(code: _Code, name: str, value: Any) -> _Code:
    """The same move's code with another value of one choice (the move generators make the
    moves of the cards of one kind once)."""
    out = list(code)  # (a list set and made a tuple: two objects, where slices make five)
    out[_FIELD_AT[name]] = value
    return tuple(out)


def _any(value: Any) -> Any:
    """A move's choice read into a name that another way through the steps gave a type."""
    return value


def _subsets(items: Sequence[Any], most: int) -> list[tuple[Any, ...]]:
    """Every set of at most `most` of the items, each once, in counting order: item i is in
    the m-th set when bit i of m is set (a choice `up_to` N). Made by doubling: the sets
    without item i, then each of them with it (the sets of more than `most` items are never
    made: every set a kept one is made from is kept too, so the order is the same)."""
    out: list[tuple[Any, ...]] = [()]
    for x in items:
        out += [(*s, x) for s in out if len(s) < most]
    return out


def _led(chosen: tuple[Any, ...], groups: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The ways to list the chosen items so that one item of each group leads (`groups`: the
    group of each item, None for none; the groups in the order they first appear, each of its
    items in turn): the leaders first, sorted, then the other items in order. When no item
    is in a group there is one way: the items as chosen."""
    n = len(chosen)
    if len(groups) != n:
        raise ValueError(f"{len(groups)} groups for {n} chosen items")
    # first the one way of the commonest case (each chosen item alone in its group), with
    # lists and an index (compiled: no zip, no dict, no list per group)
    keys: list[Any] = []
    lead: list[Any] = []
    several = False  # whether a group has more than one item
    for i in range(n):
        key = groups[i]
        if key is not None:
            if key in keys:
                several = True
                break
            keys.append(key)
            lead.append(chosen[i])
    if not lead:
        return [tuple(chosen)]
    if not several:
        lead.sort()
        return [tuple(lead + [x for x in chosen if x not in lead])]
    by: dict[Any, list[Any]] = {}
    for x, key in zip(chosen, groups, strict=True):
        if key is not None:
            by.setdefault(key, []).append(x)
    picks: list[list[Any]] = [[]]
    for xs in by.values():
        picks = [[*pick, x] for pick in picks for x in xs]
    return [(*sorted(pick), *[x for x in chosen if x not in pick]) for pick in picks]


def _not_chosen(name: str) -> tuple[str, str]:
    """Why a bundle of effects that makes no such choice refuses one (the caller names the
    rule)."""
    return "", f"this move does not choose {name.replace('_', ' ')}"


def _color(g: Game, seat: int) -> str:
    return g.players[seat].color if 0 <= seat < len(g.players) else f"seat {seat}"


# --- Procedures: triggers, end of turn, end of period, end of game --------------------------------


def _check_triggers(g: Game) -> None:
    """Fire the triggers whose condition holds, each once, in the rules' order (rules: the
    triggers of rules/flow.yaml): one that ends the period makes the period end run once the
    turn is finished (rules: period-end), one that ends the game sets the last round (rules:
    game-end), and one with steps (`do:`) carries them out for the player who fired it."""
    rs = g.rs
    for t in _triggers_of(rs, g.period):
        if t.id in g.fired:
            continue
        if t.ends == "period" and (g.period >= rs.periods or g.period_end_by is not None):
            continue
        if t.ends == "game" and g.game_end_round is not None:
            continue
        who: int | None = None
        n = len(g.players)
        if t.scope == "any-player":  # the player who moved is asked first
            for k in range(n):
                seat = (g.actor + k) % n
                if t.condition(g, g.players[seat], _NO_CTX):
                    who = seat
                    break
        elif t.condition(g, g.players[g.current], _NO_CTX):
            who = g.actor
        if who is None:
            continue
        g.fired = [*g.fired, t.id]  # (set, not changed in place: see `_tried`)
        if t.ends == "period":
            g.period_end_by = who
        elif t.ends == "game":
            g.game_end_round = g.round
            g.final_round = g.round + rs.extra_rounds
        proc = rs.procs.get(t.id)
        if proc is not None:
            _ran(g, proc, who)


_TRIGGERS_OF: Final[dict[tuple[tuple[str, ...], int], tuple[TriggerDef, ...]]] = {}


def _triggers_of(rs: RuleSet, period: int) -> tuple[TriggerDef, ...]:
    """The triggers of a rule set that can fire in a period, in the rules' order (found once
    per rule set and period)."""
    found = _TRIGGERS_OF.get((rs.key, period))
    if found is None:
        found = _TRIGGERS_OF[rs.key, period] = tuple(
            t for t in rs.triggers if not t.periods or period in t.periods
        )
    return found


_INTERRUPTING: Final[dict[tuple[str, ...], tuple[PhaseDef, ...]]] = {}


def _interrupting(rs: RuleSet) -> tuple[PhaseDef, ...]:
    """The phases of a rule set that interrupt the others (and have an actor), in order."""
    found = _INTERRUPTING.get(rs.key)
    if found is None:
        found = _INTERRUPTING[rs.key] = tuple(
            ph for ph in rs.phases.values() if ph.interrupts is not None and ph.actor is not None
        )
    return found


def _advance(g: Game) -> None:
    """Move to the next decision, running the procedures that need no choice (rules: flow
    `phases`): a phase that interrupts the others comes first, keeping the one it interrupts
    to go back to; a phase whose actor is None is done, and what comes after it runs."""
    rs = g.rs
    phases = rs.phases
    for ph in _interrupting(rs):
        assert ph.interrupts is not None and ph.actor is not None  # (_interrupting: both)
        if ph.interrupts(g):
            if g.phase != ph.id:
                if ph.resume is not None:
                    setattr(g, ph.resume, g.phase)
                g.phase = ph.id
            seat = ph.actor(g)
            if seat is not None:
                g.actor = seat
            return
    ph = phases[g.phase]
    if ph.interrupts is not None and ph.resume is not None:  # back to the phase it interrupted
        g.phase = getattr(g, ph.resume)
        ph = phases[g.phase]
    if ph.actor is None:
        return
    seat = ph.actor(g)
    if seat is not None:
        g.actor = seat
    elif ph.then == "end-turn":
        _end_turn(g)
    elif ph.then == "next-step":
        g.period_step += 1
        _run_period_end(g)


def _end_turn(g: Game) -> None:
    """End of the turn: the steps of rules/flow.yaml `turn_end`, and the triggers whose
    condition they (or the count of turns) made hold, fired for the player whose turn it was;
    then a pending period end runs."""
    proc = g.rs.procs.get(_TURN_END)
    if proc is not None:
        _ran(g, proc, g.current)
    g.turns = min(_INT_MAX, g.turns + 1)  # a save holds 64-bit integers: the count stops there
    mover, g.actor = g.actor, g.current  # (the last to move may have been a follower)
    _check_triggers(g)
    g.actor = mover  # what comes next sets it
    if g.period_end_by is not None:
        g.period_step = 0
        _run_period_end(g)
        return
    if g.final_round is not None and _next_seat(g) == g.start_player and g.round >= g.final_round:
        g.phase = "over"
        return
    _next_turn(g)


def _next_seat(g: Game) -> int:
    """The seat that plays after the current one (rules: turn_order `next`, taken modulo the
    number of players; without it the next seat in seat order). A round ends when the turn
    comes back to the start player."""
    n = len(g.players)
    nxt = g.rs.next_seat
    return (nxt(g, g.current) if nxt is not None else g.current + 1) % n


def _next_turn(g: Game) -> None:
    seat = _next_seat(g)
    if seat == g.start_player and g.round < _round_max(g.rs):
        g.round += 1
    g.current = seat
    g.actor = g.current
    g.phase = "action"


def _run_period_end(g: Game) -> None:
    """The steps of the end of the period in the rules' order (rules: period-end and its
    steps, each a procedure of rules/flow.yaml); a step that is a decision (its procedure names
    a phase) then waits for the moves of that phase."""
    rs = g.rs
    steps = rs.period_end
    while g.period_step < len(steps):
        step = steps[g.period_step]
        seat = g.period_end_by if g.period_end_by is not None else g.current
        proc = rs.procs.get(step.id)
        if proc is not None:
            _ran(g, proc, seat)
        wait = rs.phases.get(step.procedure)
        if wait is not None and wait.actor is not None:
            first = wait.actor(g)
            if first is not None:
                g.phase = wait.id
                g.actor = first
                return
        g.period_step += 1
    g.period += 1
    g.period_end_by = None
    g.period_step = 0
    if g.final_round is not None and _next_seat(g) == g.start_player and g.round >= g.final_round:
        g.phase = "over"
        return
    _next_turn(g)
    _check_triggers(g)


# --- Invariants -----------------------------------------------------------------------------------


def check_invariants(g: Game) -> list[str]:
    """What is wrong with a state (empty when it is sound): the words of each invariant of the
    rules that fails, in the order they are declared (the rule set's generated check)."""
    try:
        return _check_invariants(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _check_invariants(g: Game) -> list[str]:
    return _activate(g).invariants(g)


# --- Scoring --------------------------------------------------------------------------------------


class ScoreLine:
    """One source's points for one player, with the explanation in the reference's words (a
    value: equal when its fields are, hashable, never changed once made)."""

    __slots__ = ("explanation", "points", "source")

    source: str
    points: int
    explanation: str

    def __init__(self, source: str, points: int, explanation: str) -> None:
        self.source = source
        self.points = points
        self.explanation = explanation

    def __eq__(self, other: object) -> bool:
        if type(other) is not ScoreLine:
            return NotImplemented
        return (
            self.source == other.source
            and self.points == other.points
            and self.explanation == other.explanation
        )

    def __hash__(self) -> int:
        return hash((self.source, self.points, self.explanation))

    def __repr__(self) -> str:
        return f"ScoreLine({_fields_repr(self, ('source', 'points', 'explanation'))})"


class ScoreSheet:
    """Final scores: points on the score track, one line per source, and the total, per
    player. `term` is the game's word for its points (rules: game.terms.score), the key of a
    line's points in the JSON (not compared, not in the repr). A value: equal when its other
    fields are, hashable, never changed once made (a plain class, as ScoreLine: a dataclass's
    __init__ stays interpreted code in the engine mypyc compiles, and scoring makes one a
    call)."""

    __slots__ = ("colors", "lines", "term", "totals", "track")

    colors: tuple[str, ...]
    track: tuple[int, ...]
    lines: tuple[tuple[ScoreLine, ...], ...]
    totals: tuple[int, ...]
    term: str

    def __init__(
        self,
        colors: tuple[str, ...],
        track: tuple[int, ...],
        lines: tuple[tuple[ScoreLine, ...], ...],
        totals: tuple[int, ...],
        term: str = "points",
    ) -> None:
        self.colors = colors
        self.track = track
        self.lines = lines
        self.totals = totals
        self.term = term

    def __eq__(self, other: object) -> bool:
        if type(other) is not ScoreSheet:
            return NotImplemented
        return (
            self.colors == other.colors
            and self.track == other.track
            and self.lines == other.lines
            and self.totals == other.totals
        )

    def __hash__(self) -> int:
        return hash((self.colors, self.track, self.lines, self.totals))

    def __repr__(self) -> str:
        return f"ScoreSheet({_fields_repr(self, ('colors', 'track', 'lines', 'totals'))})"

    def to_json(self) -> dict[str, Any]:
        """The sheet as JSON."""
        term = self.term
        return {
            "players": [
                {
                    "color": c,
                    "track": t,
                    "total": tot,
                    "sources": [
                        {"source": ln.source, term: ln.points, "explanation": ln.explanation}
                        for ln in lines
                    ],
                }
                for c, t, lines, tot in zip(
                    self.colors, self.track, self.lines, self.totals, strict=True
                )
            ]
        }


def final_scores(g: Game) -> ScoreSheet:
    """Score the game: every source for every player, in the rules' order, with explanations
    in the reference's words, the values put in (a tie reads `GROUP: N UNIT, tied for 1st
    with COLOR: (A+B)//2 = P`). Each rule set's scoring is a generated straight-line function
    (`_SCORERS`); the fixed parts of every explanation are put together once per rule set
    (`_score_layout`), so only the values are written here."""
    try:
        return _final_scores(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _final_scores(g: Game) -> ScoreSheet:
    rs = _activate(g)
    return _SCORERS[rs.key](g, _SCORE_LAYOUTS.get(rs.key) or _score_layout(rs))


def final_totals(g: Game) -> tuple[int, ...]:
    """The final totals alone, per seat: `tuple(final_scores(g).totals)`, the same numbers
    computed without writing any explanation (for agents that score every move they could
    make). Each rule set's is a generated straight-line function (`_TOTALERS`)."""
    try:
        return _final_totals(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _final_totals(g: Game) -> tuple[int, ...]:
    rs = _activate(g)
    return _TOTALERS[rs.key](g)


# The fixed words of a rule set's scoring (made once per rule set by `_score_layout`): plain
# classes with declared attributes, as ScoreLine, so that the compiled engine reads their fields
# natively (a dataclass's attributes stay generic there).


class _PerPlayerLayout:
    """A per-player source: `NAME: the formula with the values = P (the formula in words)`,
    and its lines already written, by the values their text writes (see `_shown`)."""

    __slots__ = ("head", "id", "lines", "tail")

    id: str
    head: str  # "NAME: "
    tail: str  # " (WORDS)", or ""
    lines: dict[Any, ScoreLine]

    def __init__(self, id: str, head: str, tail: str) -> None:
        self.id = id
        self.head = head
        self.tail = tail
        self.lines = {}


# The lines a per-player source keeps, at most (a line is a value: every player and every game
# with the same values shown gets the same one; past the bound, lines are written each time).
_SHOWN_MAX: Final = 4096


def _shown(lines: dict[Any, ScoreLine], key: Any, line: ScoreLine) -> ScoreLine:
    """`line`, kept in `lines` under `key` (the values its text writes) while there is room,
    when those are exact values (`_kept_key`)."""
    if len(lines) < _SHOWN_MAX and _kept_key(key):
        lines[key] = line
    return line


class _GroupLayout:
    """One majority of a source, with the words that do not depend on the values."""

    __slots__ = ("absent", "alone", "counts", "head", "prize_texts", "prizes", "unit", "unit_one")

    prizes: tuple[int, ...]  # the prize of each place this rule set pays (its columns)
    head: str  # "GROUP: " (or "" when the source is this one group)
    unit: str
    unit_one: str
    prize_texts: tuple[str, ...]  # the prizes, written
    # The words met so far, kept for the rule set's later sheets: only an int measure's (see
    # `_kept_key`; 1.5's words for a lone seat went under 1.5 * 2 = 3, the key of 1 store and
    # the 2nd place when two places pay: every later sheet said "Gold: 1.5 stores, 1st = 3").
    counts: dict[int, str]  # measure -> "GROUP: N UNIT", as met
    alone: dict[int, str]  # measure * paying places + place -> a lone seat's words, as met
    absent: dict[int, str]  # measure -> words when not eligible, as met

    def __init__(
        self,
        prizes: tuple[int, ...],
        head: str,
        unit: str,
        unit_one: str,
        prize_texts: tuple[str, ...],
    ) -> None:
        self.prizes = prizes
        self.head = head
        self.unit = unit
        self.unit_one = unit_one
        self.prize_texts = prize_texts
        self.counts = {}
        self.alone = {}
        self.absent = {}

    def count(self, m: int) -> str:
        """`GROUP: N UNIT` for a measure (worded once per value)."""
        text = self.counts.get(m)
        if text is None:
            unit = self.unit_one if m == 1 else self.unit
            text = f"{self.head}{m} {unit}" if unit else f"{self.head}{m}"
            if type(m) is int:
                self.counts[m] = text
        return text

    def not_counted(self, m: int, why: str) -> str:
        """`GROUP: N UNIT, no POINTS (only when ...)` for a measure (worded once per value)."""
        text = self.count(m) + why
        if type(m) is int:
            self.absent[m] = text
        return text


class _MajorityLayout:
    """A majority source (rules: score.ties) and the words of its places."""

    __slots__ = ("groups", "head", "id", "not_eligible", "ordinals", "paid")

    id: str
    head: str  # "NAME: "
    groups: tuple[_GroupLayout, ...]
    not_eligible: str  # ", no POINTS (only when ...)"
    ordinals: tuple[str, ...]  # "1st", "2nd", ... for every place a game can have
    paid: tuple[str, ...]  # per paid place: " (COLUMN prize)" when it pays another column

    def __init__(
        self,
        id: str,
        head: str,
        groups: tuple[_GroupLayout, ...],
        not_eligible: str,
        ordinals: tuple[str, ...],
        paid: tuple[str, ...],
    ) -> None:
        self.id = id
        self.head = head
        self.groups = groups
        self.not_eligible = not_eligible
        self.ordinals = ordinals
        self.paid = paid


class _HeldItem:
    """An item of a held source: its condition (None: always met), points and words."""

    __slots__ = ("condition", "met", "not_met", "points", "points_text")

    condition: BoolFn | None
    points: int
    met: str  # "ID (condition) P"
    not_met: str  # "ID (condition) not fulfilled, 0"
    points_text: str  # the points, written

    def __init__(
        self, condition: BoolFn | None, points: int, met: str, not_met: str, points_text: str
    ) -> None:
        self.condition = condition
        self.points = points
        self.met = met
        self.not_met = not_met
        self.points_text = points_text


class _HeldLayout:
    """A held source (each item of one list field of the player scores its points when its
    condition holds): per item its condition, points and both explanations."""

    __slots__ = ("empty", "head", "id", "items")

    id: str
    head: str  # "NAME: "
    empty: ScoreLine  # the line of a player who holds none: "NAME: none = 0"
    items: dict[Any, _HeldItem]  # by item id

    def __init__(self, id: str, head: str, none: str, items: dict[Any, _HeldItem]) -> None:
        self.id = id
        self.head = head
        self.empty = ScoreLine(id, 0, none)
        self.items = items


class _ScoreLayout:
    """The fixed words of a rule set's scoring, per kind of source in the rules' order (the
    generated scorers walk the sources in the same order)."""

    __slots__ = ("held", "majorities", "per_player", "term")

    per_player: tuple[_PerPlayerLayout, ...]
    majorities: tuple[_MajorityLayout, ...]
    held: tuple[_HeldLayout, ...]
    term: str  # the game's word for its points (rules: game.terms.score)

    def __init__(
        self,
        per_player: tuple[_PerPlayerLayout, ...],
        majorities: tuple[_MajorityLayout, ...],
        held: tuple[_HeldLayout, ...],
        term: str,
    ) -> None:
        self.per_player = per_player
        self.majorities = majorities
        self.held = held
        self.term = term


_SCORE_LAYOUTS: dict[tuple[str, ...], _ScoreLayout] = {}


def _score_layout(rs: RuleSet) -> _ScoreLayout:
    """The scoring sources of a rule set, with their fixed words put together (made once)."""
    layout = _SCORE_LAYOUTS.get(rs.key)
    if layout is not None:
        return layout
    per_player: list[_PerPlayerLayout] = []
    majorities: list[_MajorityLayout] = []
    held: list[_HeldLayout] = []
    places = max(rs.players_max, len(rs.colors)) + 1
    ordinals = tuple([_ordinal(k + 1) for k in range(places)])
    paid: list[str] = []
    for place, column in enumerate(rs.majority_columns):
        named = column != place + 1 and column - 1 < len(rs.column_names)
        paid.append(f" ({rs.column_names[column - 1]} prize)" if named else "")
    for src in rs.scoring:
        if src.kind == "per-player" and src.formula is not None:
            tail = f" ({src.words})" if src.words else ""
            per_player.append(_PerPlayerLayout(src.id, f"{src.name}: ", tail))
        elif src.kind == "majority":
            single = len(src.groups) == 1
            groups: list[_GroupLayout] = []
            for group in src.groups:
                prizes = tuple([group.table[c - 1] for c in rs.majority_columns])
                groups.append(
                    _GroupLayout(
                        prizes,
                        "" if single and group.name == src.name else f"{group.name}: ",
                        group.unit,
                        group.unit_one,
                        tuple([str(x) for x in prizes]),
                    )
                )
            why = f" (only when {src.eligible_words})" if src.eligible_words else ""
            majorities.append(
                _MajorityLayout(
                    src.id,
                    f"{src.name}: ",
                    tuple(groups),
                    f", no {rs.term_score}{why}",
                    ordinals,
                    tuple(paid),
                )
            )
        elif src.kind == "held":
            items: dict[Any, _HeldItem] = {}
            for item in src.items:
                about = f" ({item.words})" if item.words else ""
                label = item.name or str(item.id)
                items[item.id] = _HeldItem(
                    item.condition,
                    item.points,
                    f"{label}{about} {item.points}",
                    f"{label}{about} not fulfilled, 0",
                    str(item.points),
                )
            held.append(_HeldLayout(src.id, f"{src.name}: ", f"{src.name}: none = 0", items))
    layout = _SCORE_LAYOUTS[rs.key] = _ScoreLayout(
        tuple(per_player), tuple(majorities), tuple(held), rs.term_score
    )
    return layout


def _held_line(g: Game, p: Player, items: list[Any], step: _HeldLayout) -> ScoreLine:
    """The line of the items one player holds in a list field: `NAME: ID (condition) P; ID
    (condition) not fulfilled, 0; P + 0 = P`; of one item, that item's words alone (`NAME: ID
    (condition) not fulfilled, 0`: a sum of one number, `0 = 0`, says nothing). (Written every
    time: the items held and the conditions met differ from game to game, so a memo of lines
    would rarely be read.)"""
    if not items:
        return step.empty
    table = step.items
    parts: list[str] = []
    shown: list[str] = []
    total = 0
    for item in items:
        it = table[item]
        condition = it.condition
        if condition is None or condition(g, p, _NO_CTX):
            parts.append(it.met)
            shown.append(it.points_text)
            total += it.points
        else:
            parts.append(it.not_met)
            shown.append("0")
    if len(parts) == 1:
        return ScoreLine(step.id, total, step.head + parts[0])
    return ScoreLine(
        step.id, total, f"{step.head}{'; '.join(parts)}; {' + '.join(shown)} = {total}"
    )


_MEASURE_CTX: dict[int, Ctx] = {}


def _measure_ctx(measure: int) -> Ctx:
    """The (shared, immutable) context of a majority measure, for eligibility formulas."""
    ctx = _MEASURE_CTX.get(measure)
    if ctx is None:
        ctx = Ctx(measure=measure)
        if type(measure) is int:  # (see `_kept_key`)
            _MEASURE_CTX[measure] = ctx
    return ctx


def _score_majority(
    step: _MajorityLayout,
    colors: tuple[str, ...],
    measures: list[list[int]],
    eligible: list[list[bool]] | None,
) -> tuple[list[int], list[str]]:
    """Each group a majority (rules: score.ties): ties share the prizes of the places they
    occupy, rounded down; only the columns of this rule set pay (the 2-player columns). The
    same places and shares as `majority_awards`. `measures` and `eligible` are per group, per
    seat; the result is per seat: (points, explanation)."""
    n = len(colors)
    totals: list[int] = [0] * n
    won: list[list[str]] = [[] for _ in range(n)]  # per seat: the points of each group, written
    said: list[list[str]] = [[] for _ in range(n)]  # per seat: the words of each group
    ordinals = step.ordinals
    paid = step.paid
    for k, group in enumerate(step.groups):
        ms = measures[k]
        prizes = group.prizes
        paying = len(prizes)
        counts = group.counts
        # The eligible seats by measure, highest first; the sort is stable, so seats with the
        # same measure stay in seat order. A place is the number of seats ahead.
        ranked: list[int]
        if eligible is None:
            ranked = sorted(range(n), key=ms.__getitem__, reverse=True)
        else:
            ok = eligible[k]
            ranked = []
            absent = group.absent
            for i in range(n):
                if ok[i]:
                    ranked.append(i)
                else:
                    m = ms[i]
                    won[i].append("0")
                    text = absent.get(m)
                    if text is None:
                        text = group.not_counted(m, step.not_eligible)
                    said[i].append(text)
            ranked.sort(key=ms.__getitem__, reverse=True)
        last = len(ranked)
        place = 0
        while place < last:
            i = ranked[place]
            m = ms[i]
            end = place + 1  # the seats ranked[place:end] are tied on m
            while end < last and ms[ranked[end]] == m:
                end += 1
            if place >= paying:
                head = counts.get(m)
                if head is None:
                    head = group.count(m)
                text = f"{head}, {ordinals[place]}: no prize = 0"
                for j in ranked[place:end]:
                    won[j].append("0")
                    said[j].append(text)
            elif end == place + 1:
                totals[i] += prizes[place]
                won[i].append(group.prize_texts[place])
                key = m * paying + place  # a lone seat's words: (m, place) only
                words = group.alone.get(key) if type(m) is int else None
                if words is None:
                    head = counts.get(m)
                    if head is None:
                        head = group.count(m)
                    words = f"{head}, {ordinals[place]}{paid[place]} = {prizes[place]}"
                    if type(m) is int:
                        group.alone[key] = words
                said[i].append(words)
            else:
                tied = ranked[place:end]
                head = counts.get(m)
                if head is None:
                    head = group.count(m)
                shared = prizes[place:end]
                points = sum(shared) // len(tied)
                sums = " + ".join([str(x) for x in shared])
                for j in tied:
                    others = ", ".join([colors[t] for t in tied if t != j])
                    totals[j] += points
                    won[j].append(str(points))
                    said[j].append(
                        f"{head}, tied for {ordinals[place]} with "
                        f"{others}: ({sums}) ÷ {len(tied)}, rounded down = {points}"
                    )
            place = end
    head = step.head
    texts: list[str]
    if len(step.groups) > 1:
        texts = []
        for j in range(n):
            total = totals[j]
            texts.append(f"{head}{'; '.join(said[j])} = {' + '.join(won[j])} = {total}")
    else:
        texts = [head + "; ".join(ts) for ts in said]
    return totals, texts


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


class Ranking:
    """Places after the tie-breakers: `places[k]` lists the seats sharing place k + 1. A value,
    as ScoreSheet (a plain class, for mypyc)."""

    __slots__ = ("keys", "names", "places")

    places: tuple[tuple[int, ...], ...]
    keys: tuple[tuple[int, ...], ...]  # per seat: the total, then each tie-breaker
    names: tuple[str, ...]

    def __init__(
        self,
        places: tuple[tuple[int, ...], ...],
        keys: tuple[tuple[int, ...], ...],
        names: tuple[str, ...],
    ) -> None:
        self.places = places
        self.keys = keys
        self.names = names

    def __eq__(self, other: object) -> bool:
        if type(other) is not Ranking:
            return NotImplemented
        return self.places == other.places and self.keys == other.keys and self.names == other.names

    def __hash__(self) -> int:
        return hash((self.places, self.keys, self.names))

    def __repr__(self) -> str:
        return f"Ranking({_fields_repr(self, ('places', 'keys', 'names'))})"


def ranking(g: Game, sheet: ScoreSheet | None = None) -> Ranking:
    """Rank the players by the tie-breaker chain (rules: tiebreakers); players equal on every
    measure share the place. The chain is read once scoring is done, so the score track in a
    measure reads the player's final total."""
    try:
        return _ranking(g, sheet)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _ranking(g: Game, sheet: ScoreSheet | None = None) -> Ranking:
    rs = _activate(g)
    if sheet is not None and (
        not isinstance(sheet, ScoreSheet) or len(sheet.totals) != len(g.players)
    ):
        raise BadArgument(f"{type(sheet).__name__} is not the ScoreSheet of this game")
    sheet = sheet or final_scores(g)
    # per seat: the chain's measures, generated straight-line per rule set (`_RANKERS`)
    keys = _RANKERS[rs.key](g, sheet.totals)
    # highest keys first; the sort is stable, so seats with equal keys stay in seat order
    order = sorted(range(len(g.players)), key=keys.__getitem__, reverse=True)
    places: list[tuple[int, ...]] = []
    for i in order:
        if places and keys[places[-1][0]] == keys[i]:
            places[-1] = (*places[-1], i)
        else:
            places.append((i,))
    return Ranking(tuple(places), tuple(keys), tuple([name for name, _ in rs.tiebreakers]))


# --- Saved games ----------------------------------------------------------------------------------


def to_json(g: Game) -> dict[str, Any]:
    """The state as plain JSON data (lists, dicts, strings, numbers); keys sorted on dump."""
    try:
        return _to_json(g)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _to_json(g: Game) -> dict[str, Any]:
    _activate(g)
    return _state_data(g)


def _state_data(g: Game) -> dict[str, Any]:
    """The state's saved-game data: its fields made plain (`_game_data`, printed from the
    declared state), and the variants built into these rules among its variants."""
    data = _game_data(g)
    folded = _folded()
    if folded:  # a save names the rules it is of: the variants built in are in force too
        data["variants"] = sorted([*folded, *data["variants"]])
    return data


def _folded() -> tuple[str, ...]:
    """The variants built into these rules (`build --variant`, GAME_INFO's folded_variants).
    A save lists them among its variants, so that a save of other rules (with another house
    rule built in, or none) is refused rather than played, or scored, by these."""
    return tuple(v["id"] for v in GAME_INFO.get("folded_variants", ()))


# How deep the values of a state nest, at most (a table of tables of counts is 2 deep; a save,
# with its players, 4): deeper is a value set by hand, a list that holds itself, say. The walks
# over a state's values stop there: compiled code (mypyc) has no recursion limit of its own, so
# they went on until the process crashed (the pure engine's RecursionError was refused at `$`).
_NESTING: Final = 32


def _plain(value: Any, depth: int = 0) -> Any:
    """A copy of `value` in JSON's types; TypeError for what JSON cannot hold (an object set
    by hand into a state: to_json said it was plain data, and dumps raised from inside), and
    ValueError for a float that is no number (NaN or an infinity set by hand: dumps wrote
    `NaN`, which is no JSON, and loads refused the save) and for lists or tables nested more
    than `_NESTING` deep."""
    if isinstance(value, dict | list | tuple):
        if depth >= _NESTING:
            raise ValueError(f"nested more than {_NESTING} deep")
        if isinstance(value, dict):
            return {str(k): _plain(v, depth + 1) for k, v in value.items()}
        return [_plain(v, depth + 1) for v in value]
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        if _math.isfinite(value):
            return value
        raise ValueError(f"{value!r} is no JSON number")
    raise TypeError(f"{type(value).__name__} is no JSON value")


def _fields_plain(value: Any, names: tuple[str, ...], depth: int) -> dict[str, Any]:
    """`_plain` of each of the fields `names` of `value`, at `depth`, by name: a player of a
    state that is no Player (set by hand) as `_state_data` makes it."""
    return {f: _plain(getattr(value, f), depth) for f in names}


def _interned(value: Any) -> Any:
    """Plain data (made by `_plain`) with its keys and texts interned: a loaded state's ids
    are then the very strings the engine's code names (a table's keys), and each lookup
    finds its key by identity rather than comparing the letters (as in a state the engine
    made itself). A subclass of str is kept as it is (it cannot be interned)."""
    if type(value) is dict:
        return {(_sys.intern(k) if type(k) is str else k): _interned(v) for k, v in value.items()}
    if type(value) is list:
        return [_interned(v) for v in value]
    if type(value) is str:
        return _sys.intern(value)
    return value


def _not_json(g: Game) -> tuple[str, str] | None:
    """Where `_plain` refuses a field of `g` (in the order `_state_data` reads them), and
    why: (the JSON path, the words), or None."""

    def walk(value: Any, path: str, inside: tuple[int, ...]) -> tuple[str, str] | None:
        if isinstance(value, dict | list | tuple):
            if id(value) in inside:
                return path, f"a {type(value).__name__} that holds itself"
            if len(inside) >= _NESTING:
                return path, f"nested more than {_NESTING} deep"
            inside = (*inside, id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                found = walk(item, f"{path}.{key}", inside)
                if found is not None:
                    return found
            return None
        if isinstance(value, list | tuple):
            for i, item in enumerate(value):
                found = walk(item, f"{path}[{i}]", inside)
                if found is not None:
                    return found
            return None
        try:
            _plain(value)
        except (TypeError, ValueError) as exc:
            return path, str(exc)
        return None

    for name in _GAME_FIELDS:
        if name != "players":
            found = walk(getattr(g, name), f"$.{name}", ())
        else:
            found = None
            for i, p in enumerate(g.players):
                for f in _PLAYER_FIELDS:
                    found = found or walk(getattr(p, f), f"$.players[{i}].{f}", ())
        if found is not None:
            return found
    return None


def from_json(data: Any) -> Game:
    """Read a saved state; raise StateError (never anything else) when it breaks the schema or
    cannot be a state of these rules. The error's `path` says where (`$.players[1]`)."""
    _validate(data, STATE_SCHEMA, "$")
    # the state's own lists (later changes to `data` do not reach it), its texts interned
    data = _interned(_plain(data))
    folded = _folded()
    if folded:
        missing = [v for v in folded if v not in data["variants"]]
        if missing:
            raise StateError(
                "$.variants",
                f"a save of other rules: these have {', '.join(folded)} built in, and the save "
                f"does not list {', '.join(missing)}",
            )
        data["variants"] = [v for v in data["variants"] if v not in folded]
    key = tuple(data["variants"])
    if key not in RULESETS:
        raise StateError("$.variants", f"no rule set for variants {data['variants']}")
    own = STATE_SCHEMAS.get(key)
    if own is not None:  # STATE_SCHEMA lets every rule set's ids and bounds through
        _validate(data, own, "$", own)
    try:
        expected = variants_for(len(data["players"]), (v for v in key if not VARIANTS[v].players))
    except ValueError as exc:
        raise StateError("$.variants", str(exc)) from None
    if expected != key:
        raise StateError("$.variants", f"{len(data['players'])} players play with {expected}")
    players = [Player(**p) for p in data["players"]]
    g = Game(players=players, **{k: v for k, v in data.items() if k != "players"})
    rs = _activate(g)
    _check_shape(g, rs)
    problems = check_invariants(g)
    if problems:
        raise StateError("$", "; ".join(problems))
    _check_playable(g)
    return g


def _check_shape(g: Game, rs: RuleSet) -> None:
    """What the schema cannot say: a player count and the triggers of this rule set, then the
    saved-game checks of the rules (rules/state.yaml `checks:`: the seats, the preconditions of
    the phase and the counters the procedures keep, which the engine's own play always
    satisfies); the first that fails is raised."""
    n = len(g.players)
    if not rs.players_min <= n <= rs.players_max:
        raise StateError(
            "$.players", f"{n} players: the game is for {rs.players_min} to {rs.players_max}"
        )
    if g.round > _round_max(rs):
        raise StateError(
            "$.round",
            f"round {g.round}: the last round of the game would be past 2**63 - 1, the largest "
            "integer a save holds",
        )
    triggers = {t.id for t in rs.triggers}
    for i, tid in enumerate(g.fired):
        if tid not in triggers:
            raise StateError(f"$.fired[{i}]", f"{tid!r} is not a trigger of these rules")
    failed = rs.state_checks(g)
    if failed is not None:
        raise StateError(*failed)


def _round_max(rs: RuleSet) -> int:
    """The last round a game counts to: the round in which the end is triggered plus the extra
    rounds (the last round) stays a 64-bit integer, as a save holds them. Play stops counting
    there, and a save past it is refused, so the engine never makes a state `loads` refuses."""
    return _INT_MAX - max(0, rs.extra_rounds)


def _check_playable(g: Game) -> None:
    """The engine can play the state: a move to make (or the game is over), and each legal
    move keeps the invariants and the preconditions (each is played on a copy)."""
    if g.phase == "over":
        return
    try:
        moves = legal_moves(g)
    except Exception as exc:  # a state no procedure foresaw
        raise StateError("$.phase", f"cannot list the moves: {type(exc).__name__}") from None
    if not moves:
        raise StateError("$.phase", f"seat {g.actor} has no legal move in the {g.phase} phase")
    for move in moves:
        after = g.clone()
        try:
            _apply(after, move)
            problems = check_invariants(after)
            if not problems:
                _check_shape(after, after.rs)
        except StateError as exc:
            problems = [str(exc)]
        except IllegalMove as exc:  # the generator listed the move
            problems = [f"{type(exc).__name__}: {exc}"]
        except Exception as exc:  # the engine's own fault on a move it lists
            where = _rule_at(exc)
            raise StateError(
                "$",
                f"the engine failed on a state it can play{f' at {where}' if where else ''} "
                f"({type(exc).__name__}: {exc}), playing the legal move {move.to_json()}: a "
                "fault of the rules or the compiler; please report it with the saved game",
                where,
            ) from None
        if problems:
            raise StateError("$", f"the legal move {move.to_json()} breaks the game: {problems[0]}")


def dumps(g: Game) -> str:
    """The state as a JSON text, deterministic to the byte."""
    data = to_json(g)
    try:
        return _json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except _FAULTS as exc:  # a value JSON cannot write (a float that is no number, say)
        raise _broken(g, exc) from None


def max_save_size() -> int:
    """The longest saved game `loads` reads (in characters): a save holds each component
    once, so it is never much longer than a new game's. The limit is 16 times the longest new
    game of these rules (computed once); anything longer is refused before it is parsed."""
    if not _MAX_SAVE:
        longest = 0
        for key, rs in RULESETS.items():
            for players in range(rs.players_min, rs.players_max + 1):
                chosen = [v for v in key if not VARIANTS[v].players]
                try:
                    if variants_for(players, chosen) == key:
                        longest = max(longest, len(dumps(new_game(players, chosen))))
                except ValueError:
                    continue
        _MAX_SAVE.append(16 * longest)
    return _MAX_SAVE[0]


_MAX_SAVE: list[int] = []


def loads(text: object) -> Game:
    """Read a state from JSON text (str, bytes or bytearray); what is no text, bad JSON, a text
    longer than `max_save_size()` or a bad state raises StateError. (`text` is declared an
    object: a save comes from the network, and the compiled engine checks a declared type as
    the value is passed, with TypeError: it refused a bytearray, and `None`, that way.)"""
    if not isinstance(text, str | bytes | bytearray):
        raise StateError("$", f"a saved game is JSON text, not {type(text).__name__}")
    if len(text) > max_save_size():
        raise StateError("$", f"{len(text)} characters: a saved game has at most {max_save_size()}")
    try:
        data = _json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise StateError("$", f"not JSON: {exc}") from None
    return from_json(data)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: readers disagree on which of two equal keys
    wins, so a save holding one could mean one game to its validator and another here."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r} in an object")
        out[key] = value
    return out


def _validate(
    value: Any, schema: Mapping[str, Any], path: str, root: Mapping[str, Any] | None = None
) -> None:
    """A small validator for the subset of JSON Schema the state schema uses; `$ref`s are read
    in `root` (STATE_SCHEMA by default)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):  # the only references it has
        schema = (STATE_SCHEMA if root is None else root)["$defs"][ref.removeprefix("#/$defs/")]
    types = schema.get("type")
    if types is not None:
        allowed = types if isinstance(types, list) else [types]
        if not any(_is_type(value, t) for t in allowed):
            raise StateError(path, f"expected {' or '.join(allowed)}, got {_json_type(value)}")
    if "enum" in schema and (
        value not in schema["enum"] or type(value) not in (str, int, bool, type(None))
    ):
        allowed = schema["enum"]
        shown = allowed if len(allowed) <= 10 else f"the {len(allowed)} allowed values"
        raise StateError(path, f"{value!r} is not one of {shown}")
    if "minimum" in schema and _is_type(value, "integer") and value < schema["minimum"]:
        raise StateError(path, f"{value} is less than {schema['minimum']}")
    if "maximum" in schema and _is_type(value, "integer") and value > schema["maximum"]:
        raise StateError(path, f"{value} is more than {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for req in schema.get("required", []):
            if req not in value:
                raise StateError(path, f"missing {req!r}")
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if type(k) is not str:
                raise StateError(path, f"a key of type {type(k).__name__}: JSON keys are strings")
            if k in props:
                _validate(v, props[k], f"{path}.{k}", root)
            elif extra is False:
                raise StateError(path, f"unknown key {k!r}")
            elif isinstance(extra, dict):
                _validate(v, extra, f"{path}.{k}", root)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            _validate(v, schema["items"], f"{path}[{i}]", root)
    if isinstance(value, list) and len(value) > schema.get("maxItems", len(value)):
        raise StateError(path, f"more than {schema['maxItems']} items")


# The integers a saved game or a move holds: 64-bit, as JSON readers keep them (a longer one
# could not even be written back: Python refuses to print an int of more than 4300 digits).
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**63 - 1
# The most items a `range(n)` of the rules makes: the work one step may do (the compiler's
# MAX_WORK, lisboa_rules/core/limits.py). The compiler bounds a range by what it can know of
# n (a number with no declared `max` taken as at most a thousand); a game that takes such a
# number far beyond stops at its step here, instead of making a list of billions of items.
_RANGE_MOST: Final = 1_000_000


def _range(n: int) -> list[int]:
    """`list(range(n))` of the rules' `range(n)`, refused (a fault at the step) beyond
    `_RANGE_MOST` items."""
    if n > _RANGE_MOST:
        raise ValueError(
            f"range({n}) would make {n:,} items: more than the "
            f"{_RANGE_MOST:,} a step may go through (declare the number's max)"
        )
    return list(range(n))


def _is_type(value: Any, t: str) -> bool:
    """Whether a value read from JSON is of a JSON type: a number or a string of exactly its
    Python type (an IntEnum or a str subclass would be carried into the moves the state lists,
    which `apply_move` refuses); objects and arrays of any dict and list (they are copied)."""
    if t == "integer":
        return type(value) is int and _INT_MIN <= value <= _INT_MAX
    if t == "string":
        return type(value) is str
    if t == "boolean":
        return type(value) is bool
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    if t == "null":
        return value is None
    return False


def _json_type(value: Any) -> str:
    for t in ("boolean", "integer", "string", "array", "object", "null"):
        if _is_type(value, t):
            return t
    if type(value) is int:
        return "an integer beyond the signed 64-bit range (-2**63 to 2**63 - 1)"
    return type(value).__name__


# --- What a seat may see --------------------------------------------------------------------------
# rules/state.yaml says who sees each field (`see:`). A view is the saved-game JSON of a state
# with what its seat may not see taken out: a hidden list becomes {"hidden": its length} (with
# "top": its last item when the top shows), a hidden number or a field nobody sees becomes null.
# A server sends views, never saves; a bot decides from its own seat's view, through
# `determinize`, which deals what the view hides back at random.


@_dataclass(frozen=True)
class View:
    """What one seat (`seat`; None: a spectator, who sees only what is public) may see of a
    game: `state` is the saved-game JSON with the hidden parts taken out. Read it, send it
    (`to_json`), or hand it to `legal_moves`, `explain_move` and `determinize`."""

    seat: int | None
    state: dict[str, Any]

    @property
    def actor(self) -> int:
        """Who must move now."""
        return int(self.state["actor"])

    @property
    def phase(self) -> str:
        """What the game waits for (`over` when it is over)."""
        return str(self.state["phase"])

    @property
    def players(self) -> list[dict[str, Any]]:
        """The players, as the view shows them."""
        players: list[dict[str, Any]] = self.state["players"]
        return players

    def to_json(self) -> dict[str, Any]:
        """The view as plain JSON data: {"seat": ..., "state": ...} (VIEW_SCHEMA)."""
        return {"seat": self.seat, "state": _plain(self.state)}

    @staticmethod
    def from_json(data: Any) -> View:
        """Read a view written by `to_json`; StateError for a wrong shape."""
        _validate(data, VIEW_SCHEMA, "$", VIEW_SCHEMA)
        return View(data["seat"], _plain(data["state"]))


def view(g: Game, seat: int | None = None) -> View:
    """What `seat` may see of `g` (None: what everyone sees). It shares nothing with `g`."""
    data = to_json(g)  # (first: a game changed by hand is refused at the field's path)
    seats = len(data["players"])
    if seat is not None and (type(seat) is not int or not 0 <= seat < seats):
        raise BadArgument(f"seat {seat!r}: the game has seats 0 to {seats - 1}")
    for name, see in _GAME_SEES.items():
        data[name] = _hidden(data[name], see)
    for i, p in enumerate(data["players"]):
        for name, see in _PLAYER_SEES.items():
            shown = _seen_as(see, i, seat)
            if shown != "all":
                p[name] = _hidden(p[name], shown)
    return View(seat, data)


def _seen_as(see: str, owner: int, seat: int | None) -> str:
    """How `seat` sees a field of the player at seat `owner` that rules/state.yaml says is
    seen as `see`: its owner sees a field seen by its owner whole, the others its size."""
    if see == "owner":
        return "all" if owner == seat else "count"
    return see


def _hidden(value: Any, see: str) -> Any:
    """What a field shows when it is seen as `see` (count, top or none): a list's length (and
    top), each list's in a map of lists; nothing (None) of anything else."""
    if see == "none":
        return None
    if isinstance(value, list):
        shown: dict[str, Any] = {"hidden": len(value) - (1 if see == "top" and value else 0)}
        if see == "top" and value:
            shown["top"] = value[-1]
        return shown
    if isinstance(value, dict):
        return {k: _hidden(v, see) for k, v in value.items()}
    return None


def _view_of(g: Game | View, what: str) -> Game:
    """The game to list or check the moves of: `g` itself, or for a view of the seat to move,
    a game it could be (the same moves: they read only what the mover sees)."""
    if not isinstance(g, View):
        return g
    _own_view(g, what)
    return determinize(g, _random.Random(0))


def _view_arg(v: View) -> None:
    """BadArgument for a View whose seat, phase, seat to move or players are of no view's type
    (a View made by hand: `View.from_json` checks the whole of what it reads), before any
    of them is read."""
    state = v.state
    if v.seat is not None and type(v.seat) is not int:
        raise BadArgument(f"not a view of these rules: its seat is {v.seat!r}")
    if type(state) is not dict:
        raise BadArgument(f"not a view of these rules: its state is {type(state).__name__}")
    for name, want in (("phase", str), ("actor", int), ("players", list)):
        if type(state.get(name)) is not want:
            raise BadArgument(f"not a view of these rules: its {name} is {state.get(name)!r}")


def _own_view(v: View, what: str) -> None:
    """BadArgument for a view that is not the seat to move's (in a game not over)."""
    _view_arg(v)
    if v.phase != "over" and v.seat != v.actor:
        raise BadArgument(
            f"a view {what} the moves of its own seat: this is "
            f"{'a spectator' if v.seat is None else f'seat {v.seat}'}'s, and seat {v.actor} "
            "is to move"
        )


def determinize(v: View, rng: _random.Random) -> Game:
    """A game consistent with the view `v`: what it shows kept, the ids it hides dealt at
    random (drawn from `rng`) into the places it hides them in, hidden numbers drawn between
    their bounds (a new seed of shuffles, among them). For bots and "what could happen"
    searches: every such game gives the seat of the view the same view and the same moves."""
    if not isinstance(v, View):
        raise BadArgument(f"determinize takes a View, not {type(v).__name__}")
    _view_arg(v)
    _rng_arg(rng)
    try:
        return _determinize(v, rng)
    except _REFUSALS:
        raise
    except _FAULTS as exc:  # a View made by hand, of a shape no view has
        raise BadArgument(f"not a view of these rules ({type(exc).__name__}: {exc})") from None


def _determinize(v: View, rng: _random.Random) -> Game:
    data = _plain(v.state)
    variants = list(_view_key(data))
    rs = RULESETS[tuple(variants)]
    players_seen = data["players"]
    # as `from_json` refuses a save: a view of a player count its variants are not played with
    expected = variants_for(len(players_seen), (x for x in variants if not VARIANTS[x].players))
    if expected != tuple(variants):
        raise BadArgument(
            f"not a view of these rules: {len(players_seen)} players play with {expected}"
        )
    if v.seat is not None:  # a seat sees its own fields (`see: owner`) whole
        if not 0 <= v.seat < len(players_seen):
            raise BadArgument(f"not a view of these rules: seat {v.seat} of {len(players_seen)}")
        own = players_seen[v.seat]
        for name, see in _PLAYER_SEES.items():
            if see == "owner" and isinstance(own, dict) and _shows_hidden(own.get(name)):
                raise BadArgument(
                    f"not a view of these rules: seat {v.seat}'s own {name} is hidden from it"
                )
    for deal in rs.deals:
        _deal(data, deal, rng)
    for scope, name, lo, hi in rs.draws:
        for holder in data["players"] if scope == "player" else [data]:
            if holder.get(name) is None:
                holder[name] = rng.randint(lo, hi)
    players = [Player(**p) for p in data.pop("players")]
    g = Game(
        players=players, **{k: x for k, x in data.items() if k != "variants"}, variants=variants
    )
    _activate(g)
    return g


def _shows_hidden(value: Any) -> bool:
    """Whether a field of a view is shown hidden: a list as {"hidden": n} (and "top"), or a
    map holding such lists."""
    if not isinstance(value, dict):
        return False
    if type(value.get("hidden")) is int and set(value) <= {"hidden", "top"}:
        return True
    return any(_shows_hidden(x) for x in value.values() if isinstance(x, dict))


def _rng_arg(rng: Any) -> None:
    """BadArgument unless `rng` is a generator of random numbers (a `random.Random`)."""
    if not isinstance(rng, _random.Random):
        raise BadArgument(f"a generator of random numbers is a random.Random, not {rng!r}")


# each DealDef's sorts as tables (by the id of the DealDef: the rule sets keep theirs alive), and
# each id's kind under them (its keys under every sort)
_SORTS: Final[dict[int, dict[str, dict[Any, Any]]]] = {}
_ID_KINDS: Final[dict[int, dict[Any, tuple[Any, ...]]]] = {}
# `_flow`'s answers (never changed by their readers) by their question: the kinds of places and
# of ids, and how many of each (a search deals the same few thousands of times); at most
# `_FLOWS_KEPT` of them, forgotten all at once
_FLOWS: Final[dict[tuple[tuple[Any, ...], ...], list[list[int]] | None]] = {}
_FLOWS_KEPT: Final = 4096


def _deal(data: dict[str, Any], deal: DealDef, rng: _random.Random) -> None:
    """Fill the places of `data` where the ids of one conserved kind are hidden: the ids not
    seen anywhere, shuffled, go where they fit (a list of a sorted map takes only the ids of
    its key, `sorts`); what is left goes to the zone nobody sees (null)."""
    seen: dict[Any, int] = {}
    # the hidden places by their kind: (the index of the sort in `deal.sorts`, the map's key),
    # or (-1, None) for a place any id fits; each place a (list, index) to fill
    places_of: dict[tuple[int, Any], list[tuple[list[Any], int]]] = {}
    rest: list[tuple[dict[str, Any], str]] = []  # (holder, field) of a zone nobody sees
    sorts = _sorts_of(deal)

    def fill(value: Any, kind: tuple[int, Any]) -> list[Any]:
        if isinstance(value, list):
            for x in value:
                seen[x] = seen.get(x, 0) + 1
            return value
        if not (
            isinstance(value, dict)
            and type(value.get("hidden")) is int
            and set(value) <= {"hidden", "top"}
            and value["hidden"] >= 0
        ):
            raise BadArgument(f"not a view of these rules: {deal.kind} ids as {value!r}")
        if value["hidden"] > len(deal.ids):  # (before a list of that many places is made)
            raise BadArgument(
                f"not a view of these rules: {value['hidden']} hidden {deal.kind} ids in one "
                f"place, and the rules have {len(deal.ids)}"
            )
        out: list[Any] = [None] * value["hidden"]
        places_of.setdefault(kind, []).extend((out, i) for i in range(len(out)))
        if "top" in value:
            top = value["top"]
            seen[top] = seen.get(top, 0) + 1
            out.append(top)
        return out

    names = [name for name, _ in deal.sorts]
    for scope, name, is_map in deal.zones:
        for holder in data["players"] if scope == "player" else [data]:
            value = holder.get(name)
            if value is None:
                rest.append((holder, name))
            elif is_map:
                if not isinstance(value, dict):
                    raise BadArgument(f"not a view of these rules: {name} is {value!r}")
                n = names.index(name) if name in sorts else -1
                holder[name] = {k: fill(x, (n, k if n >= 0 else None)) for k, x in value.items()}
            else:
                holder[name] = fill(value, (-1, None))
    unseen: list[Any] = []
    for x in deal.ids:
        n = seen.pop(x, 0)
        if n > 1:
            raise BadArgument(f"not a view of these rules: {deal.kind} {x!r} is there {n} times")
        if n == 0:
            unseen.append(x)
    if seen:
        raise BadArgument(f"not a view of these rules: no {deal.kind} {next(iter(seen))!r}")
    left = _deal_out(deal, sorts, names, unseen, places_of, rng)
    if len(rest) == 1:
        holder, name = rest[0]
        holder[name] = left
    elif left or rest:
        raise BadArgument(f"not a view of these rules: {len(left)} {deal.kind} ids unplaced")


def _sorts_of(deal: DealDef) -> dict[str, dict[Any, Any]]:
    """A DealDef's sorts as tables: by the field of a sorted map, the map's key of each id."""
    sorts = _SORTS.get(id(deal))
    if sorts is None:
        sorts = _SORTS[id(deal)] = {name: dict(pairs) for name, pairs in deal.sorts}
    return sorts


def _deal_out(
    deal: DealDef,
    sorts: dict[str, dict[Any, Any]],
    names: list[str],
    unseen: list[Any],
    places_of: dict[tuple[int, Any], list[tuple[list[Any], int]]],
    rng: _random.Random,
) -> list[Any]:
    """Deal `unseen` (the hidden ids of one kind, in the order of `deal.ids`) at random into
    the hidden places (`places_of`: by their kind, each place a (list, index) to fill); the
    ids left over, for the zone nobody sees. `determinize` and `redeal` share it, so both draw
    the same from the same generator."""
    # Which hidden place takes which id is a flow from the kinds of places (a sorted map's
    # key, or anywhere) to the kinds of ids (their keys under every sort): solved on those
    # few kinds, then each kind's ids dealt at random into its places.
    _shuffle(rng, unseen)
    id_kind: dict[tuple[Any, ...], list[Any]] = {}
    if not names:  # one kind of ids
        if unseen:
            id_kind[()] = unseen
    else:
        kinds = _ID_KINDS.get(id(deal))
        if kinds is None:
            kinds = _ID_KINDS[id(deal)] = {
                x: tuple(sorts[n].get(x) for n in names) for x in deal.ids
            }
        for x in unseen:
            id_kind.setdefault(kinds[x], []).append(x)
    question = (
        tuple(places_of),
        tuple([len(p) for p in places_of.values()]),
        tuple(id_kind),
        tuple([len(x) for x in id_kind.values()]),
    )
    if question in _FLOWS:
        flow = _FLOWS[question]
    else:
        flow = _flow(
            list(question[1]),
            list(question[3]),
            [[n < 0 or k[n] == key for k in id_kind] for n, key in places_of],
        )
        if len(_FLOWS) >= _FLOWS_KEPT:
            _FLOWS.clear()
        _FLOWS[question] = flow
    if flow is None:
        raise BadArgument(f"not a view of these rules: the hidden {deal.kind} ids do not fit")
    pools = list(id_kind.values())
    for places, row in zip(places_of.values(), flow, strict=True):
        _shuffle(rng, places)
        for j, amount in enumerate(row):
            for _ in range(amount):
                out, i = places.pop()
                out[i] = pools[j].pop()
    return [x for pool in pools for x in pool]


def _choice(rng: _random.Random, items: Sequence[Any]) -> Any:
    """`rng.choice(items)`: the same draw from `rng`, the same item. For a `random.Random` its
    own draw (`getrandbits` of the bits of the count, again while it is too big) is made here,
    so that a compiled engine runs it compiled (a playout draws once a move); any other
    generator draws itself. IndexError when there is nothing to draw from."""
    if type(rng) is not _random.Random:
        return rng.choice(items)
    n = len(items)
    if n == 0:
        raise IndexError("cannot choose from an empty sequence")
    bits = n.bit_length()
    j = rng.getrandbits(bits)
    while j >= n:
        j = rng.getrandbits(bits)
    return items[j]


def _shuffle(rng: _random.Random, items: list[Any]) -> None:
    """`rng.shuffle(items)`: the same draws from `rng`, the same order. For a `random.Random`
    its own walk (down the list, each place swapped with one drawn at or before it, drawn by
    `getrandbits` of the bits of the count, again while it is too big) is looped here, so that a
    compiled engine runs it compiled (a redeal shuffles some hundred ids); any other generator
    shuffles itself."""
    if type(rng) is not _random.Random:
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        bits = n.bit_length()
        j = getrandbits(bits)
        while j >= n:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


def _flow(places: list[int], ids: list[int], fits: list[list[bool]]) -> list[list[int]] | None:
    """How many ids of each kind (`ids`: how many there are) go to each kind of place
    (`places`: how many it needs), where `fits[p][i]` allows it; None when the places cannot
    all be filled. Augmenting paths on the few kinds (a maximum flow)."""
    amount = [[0] * len(ids) for _ in places]
    spare = ids[:]
    for p, need in enumerate(places):
        while need > 0:
            # a path from place kind p to an id kind with some to spare, through moves of ids
            # from a place kind to another that fits them: breadth first
            back: dict[tuple[str, int], tuple[str, int] | None] = {("p", p): None}
            queue: list[tuple[str, int]] = [("p", p)]
            found: tuple[str, int] | None = None
            while queue and found is None:
                node = queue.pop(0)
                if node[0] == "p":
                    for i, ok in enumerate(fits[node[1]]):
                        if ok and ("i", i) not in back:
                            back[("i", i)] = node
                            if spare[i] > 0:
                                found = ("i", i)
                                break
                            queue.append(("i", i))
                else:
                    for q in range(len(places)):
                        if amount[q][node[1]] > 0 and ("p", q) not in back:
                            back[("p", q)] = node
                            queue.append(("p", q))
            if found is None:
                return None
            path: list[tuple[tuple[str, int], tuple[str, int]]] = []
            node = found
            while (prev := back[node]) is not None:
                path.append((prev, node))
                node = prev
            # as many as the path carries: the need, the spare, what each place gives back
            step = min(need, spare[found[1]], *(amount[b[1]][a[1]] for a, b in path if a[0] == "i"))
            for a, b in path:
                if a[0] == "p":  # place kind a takes ids of kind b
                    amount[a[1]][b[1]] += step
                else:  # place kind b gives back ids of kind a
                    amount[b[1]][a[1]] -= step
            spare[found[1]] -= step
            need -= step
    return amount


# --- Agents' inner loops --------------------------------------------------------------------------
# What a bot does many times a move, in the engine so that a compiled engine runs it compiled: a
# game a seat's view could be, dealt from the game itself (`redeal`: no view's JSON), and the
# agents of lisboa_rules.sim.agents (`random_move`, `greedy_move`, `playout`, `mcts_move`) over
# the engine's own internals: the moves listed once and only listed moves played (on the
# search's own copies, in place), the states scored by their totals alone. They are honest: a
# searching one reads the game only through `redeal` for the seat to move, so two games that
# seat sees alike get the same move from the same generator state.

# Per rule set: whether `redeal` deals in place (every hidden field a zone of a dealt kind or a
# drawn number, no hidden map nobody sees); otherwise it deals through the view.
_REDEALS: Final[dict[tuple[str, ...], bool]] = {}
# each DealDef's ids by their place in `ids` (by the id of the DealDef, as `_SORTS`)
_ID_ORDER: Final[dict[int, dict[Any, int]]] = {}
_EXPLORATION: Final = _math.sqrt(2)  # UCT's exploration constant (`mcts_move`)


def redeal(g: Game, seat: int | None, rng: _random.Random) -> Game:
    """A whole game that `seat` (None: a spectator) could be in, seeing what it sees of `g`: a
    copy of `g` with what `seat` may not see (rules/state.yaml `see:`) dealt again at random
    from `rng`, as `determinize(view(g, seat), rng)` deals it (the same places, the same draws
    from `rng`, so the same game), without making the view. `g` is never changed; the game made
    shares nothing with it, records nothing, and depends only on what `seat` sees of `g` and
    on the state of `rng`."""
    try:
        return _redeal(g, seat, rng)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def _redeal(g: Game, seat: int | None, rng: _random.Random) -> Game:
    rs = _activate(g)
    _rng_arg(rng)
    if seat is not None and (type(seat) is not int or not 0 <= seat < len(g.players)):
        raise BadArgument(f"seat {seat!r}: the game has seats 0 to {len(g.players) - 1}")
    if not _redeals_in_place(rs):
        return determinize(view(g, seat), rng)
    out = g.clone()
    out._log = None
    for deal in rs.deals:
        _redeal_kind(out, deal, seat, rng)
    for scope, name, lo, hi in rs.draws:
        if scope == "player":
            see = _PLAYER_SEES.get(name, "all")
            for i, p in enumerate(out.players):
                if _seen_as(see, i, seat) != "all" or getattr(p, name) is None:
                    setattr(p, name, rng.randint(lo, hi))
        elif name in _GAME_SEES or getattr(out, name) is None:
            setattr(out, name, rng.randint(lo, hi))
    return out


def _redeals_in_place(rs: RuleSet) -> bool:
    """Whether `redeal` can deal a rule set's hidden fields on a copy of the game: each one a
    zone of a dealt kind (a list, or a map of lists that someone sees the sizes of) or a drawn
    number. Otherwise (a hidden field `determinize` does not deal) it deals through the view,
    which gives the same game, slower."""
    found = _REDEALS.get(rs.key)
    if found is None:
        zones = {(scope, name): is_map for d in rs.deals for scope, name, is_map in d.zones}
        drawn = {(scope, name) for scope, name, _lo, _hi in rs.draws}
        found = True
        for scope, sees in (("game", _GAME_SEES), ("player", _PLAYER_SEES)):
            for name, see in sees.items():
                where = (scope, name)
                if where in zones:
                    found = found and not (see == "none" and zones[where])
                else:
                    found = found and where in drawn
        _REDEALS[rs.key] = found
    return found


def _redeal_kind(g: Game, deal: DealDef, seat: int | None, rng: _random.Random) -> None:
    """Deal again, in place, the ids of one conserved kind that `seat` may not see in `g`: the
    hidden places in the order `_deal` finds them in the view, the hidden ids in the order of
    `deal.ids` (the ids the view does not show), dealt by `_deal_out`."""
    sorts = _sorts_of(deal)
    names = [name for name, _ in deal.sorts]
    order = _ID_ORDER.get(id(deal))
    if order is None:
        order = _ID_ORDER[id(deal)] = {x: i for i, x in enumerate(deal.ids)}
    hidden: list[Any] = []
    places_of: dict[tuple[int, Any], list[tuple[list[Any], int]]] = {}
    rest: list[tuple[Any, str]] = []  # (holder, field) of a zone nobody sees
    for scope, name, is_map in deal.zones:
        holders: list[Any]
        if scope == "player":
            see = _PLAYER_SEES.get(name, "all")
            holders = list(g.players)
        else:
            see = _GAME_SEES.get(name, "all")
            holders = [g]
        for i, holder in enumerate(holders):
            shown = _seen_as(see, i, seat) if scope == "player" else see
            if shown == "all":
                continue
            value = getattr(holder, name)
            if value is None or shown == "none":
                if value is not None:  # a list (a hidden map nobody sees is not dealt here)
                    hidden.extend(value)
                rest.append((holder, name))
            elif is_map:
                n = names.index(name) if name in sorts else -1
                for key, items in value.items():
                    _hidden_places(items, shown, (n, key if n >= 0 else None), hidden, places_of)
            else:
                _hidden_places(value, shown, (-1, None), hidden, places_of)
    hidden.sort(key=order.__getitem__)
    left = _deal_out(deal, sorts, names, hidden, places_of, rng)
    if len(rest) == 1:
        holder, name = rest[0]
        setattr(holder, name, left)
    elif left or rest:
        raise BadArgument(f"not a game of these rules: {len(left)} {deal.kind} ids unplaced")


def _hidden_places(
    items: list[Any],
    shown: str,
    kind: tuple[int, Any],
    hidden: list[Any],
    places_of: dict[tuple[int, Any], list[tuple[list[Any], int]]],
) -> None:
    """The places of a list seen as `shown` (count or top) to deal again, under their kind, and
    the ids they hold (into `hidden`): all of them but the top one when the top shows."""
    count = len(items) - 1 if shown == "top" and items else len(items)
    places = places_of.setdefault(kind, [])
    for i in range(count):
        hidden.append(items[i])
        places.append((items, i))


def _moves_now(g: Game) -> list[_Code]:
    """The codes of the legal moves of `g` (`_Code`), listed as `legal_moves` lists the moves
    (the same moves in the same order), without keeping the list for `apply_move`: a search
    plays them on its own copies."""
    if g.phase == "over":
        return []
    seat = g.actor
    out: list[_Code] = []
    for moves in _moves_of(g.rs, g.phase):
        out += moves(g, seat)
    return out


class _Scorer:
    """A rule set's totals and ranking keys, found once per search: each seat's total as if
    the game ended now (`final_totals`), and the seats that would share first place (the first
    place of `ranking`)."""

    __slots__ = ("ranker", "totaler")

    totaler: Callable[[Game], tuple[int, ...]]
    ranker: Callable[[Game, tuple[int, ...]], list[tuple[int, ...]]]

    def __init__(self, rs: RuleSet) -> None:
        self.totaler = _TOTALERS[rs.key]
        self.ranker = _RANKERS[rs.key]

    def margin(self, g: Game, seat: int) -> int:
        """`seat`'s total minus the best total of the others (0 with no others). A loop, not
        `max(..., default=0)`: compiled, that call builds a dict of its keyword each time (a
        third of this function's time in a greedy game)."""
        totals = self.totaler(g)
        best = 0
        others = False
        for i in range(len(totals)):
            if i != seat and (not others or totals[i] > best):
                best = totals[i]
                others = True
        return totals[seat] - best

    def shares(self, g: Game) -> list[float]:
        """Each seat's win share: 1 / the number of seats in first place, 0 for the others."""
        keys = self.ranker(g, self.totaler(g))
        top = max(keys)
        first = [i for i, k in enumerate(keys) if k == top]
        out = [0.0] * len(keys)
        for i in first:
            out[i] = 1.0 / len(first)
        return out


def _no_move(g: Game | View) -> BadArgument:
    return BadArgument(f"no move to choose: the game is {g.phase}")


def random_move(g: Game | View, rng: _random.Random) -> Move:
    """The move of the `random` agent (`RandomBot`): one of `legal_moves(g)`, drawn uniformly
    from `rng` (the moves the seat to move sees: those of its view; `g` may be that view).
    BadArgument when the game is over."""
    try:
        g = _view_of(g, "lists")
        _activate(g)
        _rng_arg(rng)
        moves = _moves_now(g)
        if not moves:
            raise _no_move(g)
        return Move(*_choice(rng, moves))
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None


def greedy_move(g: Game | View, rng: _random.Random) -> Move:
    """The move of the `greedy` agent (`GreedyBot`), honest: on one game the mover's view could
    be (`redeal(g, g.actor, rng)`; given the mover's view, `determinize(g, rng)`: the same
    game), each legal move is played and the state after it scored as if the game ended there
    (`final_totals`); the move of the best margin (the mover's total minus the best total of
    the others) is played, ties drawn from `rng`. One of `legal_moves(g)`; `g` is never
    changed. BadArgument when the game is over. Python's cyclic garbage collector is paused
    while it searches (`_collector_paused`), as in `mcts_move` and `playout`."""
    paused = _collector_paused()
    try:
        dealt = _dealt_for_mover(g, rng)
        rs = _activate(dealt)
        moves = _moves_now(dealt)
        if not moves:
            raise _no_move(dealt)
        if len(moves) == 1:
            return Move(*moves[0])
        return _greedy_pick(dealt, moves, rng, _Scorer(rs))
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None
    finally:
        if paused:
            _gc.enable()


def _dealt_for_mover(g: Game | View, rng: _random.Random) -> Game:
    """A whole game the seat to move could be in, dealt from `rng`: `redeal` of the game for
    that seat, or `determinize` of its view (the same game from the same generator state).
    BadArgument when the game is over (nothing is drawn) or `g` is neither."""
    if isinstance(g, View):
        _own_view(g, "lists")
        if g.phase == "over":
            raise _no_move(g)
        return determinize(g, rng)
    _activate(g)
    if g.phase == "over":
        raise _no_move(g)
    return _redeal(g, g.actor, rng)


def _greedy_pick(g: Game, moves: list[_Code], rng: _random.Random, scorer: _Scorer) -> Move:
    """Greedy's choice among `moves` (two or more codes, listed for `g`): the move of the best
    margin for the mover, ties drawn from `rng`. Each move is tried on `g` itself and taken
    back (`_tried`: no copy of the state per move); `g` is the same after."""
    seat = g.actor
    best: list[int] = []
    best_value = 0
    before = g.clone() if _TRY_CHECKED[0] else None
    for i, code in enumerate(moves):
        try:
            was, undo = _tried(g, Move(*code))
        except Exception:
            if before is not None:  # a listed move refused: did one tried before change g?
                _check_taken_back(g, before, moves[: i + 1])
            raise
        try:
            value = scorer.margin(g, seat)
        finally:
            _taken_back(g, was, undo)
        if not best or value > best_value:
            best_value = value
            best = [i]
        elif value == best_value:
            best.append(i)
    if before is not None:
        _check_taken_back(g, before, moves)
    k = 0 if len(best) == 1 else _choice(rng, range(len(best)))
    return Move(*moves[best[k]])


def _search_budget(iterations: Any, horizon: Any) -> None:
    """BadArgument unless a search's budget is one: at least 1 iteration a move, and a
    playout's horizon of at least 1 move or None (to the end)."""
    if type(iterations) is not int or iterations < 1:
        raise BadArgument(f"MCTS needs at least 1 iteration a move, not {iterations!r}")
    if horizon is not None and (type(horizon) is not int or horizon < 1):
        raise BadArgument(f"a playout's horizon is at least 1 move (or None), not {horizon!r}")


def playout(
    g: Game, rng: _random.Random, horizon: int | None = None, greedy: bool = False
) -> list[float]:
    """Play on from `g` (a copy: `g` is never changed) with moves drawn from `rng` (`greedy`:
    greedy's moves, on the game as it is), to the end or at most `horizon` moves, and score
    where it stops as win shares per seat: 1 / the number of seats in first place by
    `ranking` (as if the game ended there), 0 for the others. It plays the game it is given:
    for an honest one, give it `redeal` of the seat that asks."""
    paused = _collector_paused()
    try:
        rs = _activate(g)
        _rng_arg(rng)
        _search_budget(1, horizon)
        return _playout(g.clone(), rng, horizon, greedy, _Scorer(rs))
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None
    finally:
        if paused:
            _gc.enable()


def _playout(
    g: Game, rng: _random.Random, horizon: int | None, greedy: bool, scorer: _Scorer
) -> list[float]:
    """`playout` on `g` itself (the search's own copy: it is played on in place)."""
    steps = 0
    while g.phase != "over" and (horizon is None or steps < horizon):
        moves = _moves_now(g)
        if not greedy:
            _apply(g, Move(*_choice(rng, moves)))
        elif len(moves) == 1:
            _apply(g, Move(*moves[0]))
        else:
            _apply(g, _greedy_pick(g, moves, rng, scorer))
        steps += 1
    return scorer.shares(g)


class _SearchNode:
    """A node of the tree of moves: what the moves below it scored, over every game dealt."""

    __slots__ = ("children", "plays", "seat", "seen", "shares")

    seat: int  # who moves here (-1 when the game is over)
    children: dict[_Code, _SearchNode]  # by move (its code), in the order tried
    plays: int
    shares: list[float]  # summed win share per seat
    seen: int  # how often it could be chosen: its parent visited with its move legal

    def __init__(self, seat: int, seats: int) -> None:
        self.seat = seat
        self.children = {}
        self.plays = 0
        self.shares = [0.0] * seats
        self.seen = 0


def mcts_move(
    g: Game | View,
    rng: _random.Random,
    iterations: int,
    horizon: int | None = None,
    greedy: bool = False,
    exploration: float = _EXPLORATION,
) -> Move:
    """The move of the `mcts` agent (`greedy`: `mcts-greedy`; `MctsBot`), honest:
    information-set UCT over `iterations` iterations, each on a new game the mover's view could
    be (`redeal`; given the mover's view, `determinize`); an
    iteration walks down the tree of moves (a move the dealt game does not allow is passed
    over), adds one node and plays on at random (`greedy`: greedy's moves), at most `horizon`
    moves, scoring the end as win shares (`playout`). The most played move of the root is
    played (ties: the higher share, then the order of `legal_moves`); the search stops early
    once no other root move can be played more often. One of `legal_moves(g)`; `g` is never
    changed. BadArgument when the game is over or the budget is none."""
    paused = _collector_paused()
    try:
        return _mcts_move(g, rng, iterations, horizon, greedy, exploration)
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) from None
    finally:
        if paused:
            _gc.enable()


def _mcts_move(
    state: Game | View,
    rng: _random.Random,
    iterations: int,
    horizon: int | None,
    greedy: bool,
    exploration: float,
) -> Move:
    g = _view_of(state, "lists")
    rs = _activate(g)
    _rng_arg(rng)
    _search_budget(iterations, horizon)
    if type(exploration) not in (int, float) or not 0 <= exploration < _math.inf:
        raise BadArgument(f"MCTS's exploration is a number of at least 0, not {exploration!r}")
    moves = _moves_now(g)
    if not moves:
        raise _no_move(g)
    if len(moves) == 1:
        return Move(*moves[0])
    seat = g.actor
    seats = len(g.players)
    scorer = _Scorer(rs)
    root = _SearchNode(seat, seats)
    for done in range(iterations):
        if len(root.children) == len(moves) and _settled(root, iterations - done):
            break  # no other move can be played more often: the choice is made
        game = determinize(state, rng) if isinstance(state, View) else _redeal(g, seat, rng)
        path = [root]
        node = root
        listed = moves
        while game.phase != "over":
            if node is not root:
                listed = _moves_now(game)
            untried = [m for m in listed if m not in node.children]
            if untried:  # expansion: one untried move, drawn at random
                move = untried[rng.randrange(len(untried))]
                _apply(game, Move(*move))
                child = _SearchNode(game.actor if game.phase != "over" else -1, seats)
                node.children[move] = child
                for m in listed:
                    tried = node.children.get(m)
                    if tried is not None:
                        tried.seen += 1
                path.append(child)
                break
            # selection: among the moves this game allows, by UCT
            move = _uct(node, listed, exploration)
            _apply(game, Move(*move))
            node = node.children[move]
            path.append(node)
        shares = _playout(game, rng, horizon, greedy, scorer)
        for n in path:
            n.plays += 1
            for i, share in enumerate(shares):
                n.shares[i] += share
    # the most played move; ties by the higher share, then by the order of the moves
    best = moves[0]
    best_plays, best_share = -1, 0.0
    for m in moves:
        c = root.children.get(m)
        plays, share = (c.plays, c.shares[seat]) if c is not None else (-1, 0.0)
        if plays > best_plays or (plays == best_plays and share > best_share):
            best, best_plays, best_share = m, plays, share
    return Move(*best)


def _uct(node: _SearchNode, listed: list[_Code], exploration: float) -> _Code:
    """The move of `listed` (each a child of `node`, each counted as seen once more) of the best
    UCT value for the seat that moves at `node`; the first of equal ones."""
    seat = node.seat
    best = listed[0]
    best_value = 0.0
    first = True
    for m in listed:
        c = node.children[m]
        c.seen += 1
    for m in listed:
        c = node.children[m]
        value = c.shares[seat] / c.plays + exploration * _math.sqrt(_math.log(c.seen) / c.plays)
        if first or value > best_value:
            best, best_value, first = m, value, False
    return best


def _settled(root: _SearchNode, left: int) -> bool:
    """Whether the most played child stays the most played whatever the `left` iterations do
    (they can add at most `left` plays to another one)."""
    first = second = 0
    for c in root.children.values():
        if c.plays > first:
            first, second = c.plays, first
        elif c.plays > second:
            second = c.plays
    return first - second > left


# --- Bots -----------------------------------------------------------------------------------------
# What an app seats at the table: a bot made once from a seed, asked for its seat's move with
# `choose(game_or_view, seat)`. The bots are the agents of the compiler's `balance` and
# `simulate` (lisboa_rules/sim/agents.py), seeded alike (`MctsBot(7)` plays the moves of the
# `mcts` agent of seed 7), over the loops above: honest, they read only what their seat sees
# (`redeal` of the game for the seat, or `determinize` of its view).

_BOT_ITERATIONS: Final = 200  # MctsBot's budget of iterations a move (the agents' default)
_BOT_HORIZON: Final = 20  # moves a playout plays before it is scored (the agents' default)


def _bot_rng(kind: str, seed: int | str) -> _random.Random:
    """A bot's generator: seeded by its kind and `seed` (an int or a str, so that the same seed
    gives the same moves in any process), as the agents of lisboa_rules/sim/agents.py are."""
    if type(seed) is not int and type(seed) is not str:
        raise BadArgument(f"a bot's seed is an int or a str, not {type(seed).__name__}")
    return _random.Random(f"{kind}:{seed}")


def _bot_turn(state: Game | View, seat: int) -> None:
    """BadArgument unless `state` is a game, or `seat`'s own view, in which `seat` is to move."""
    if not isinstance(state, (Game, View)):
        raise BadArgument(f"a bot chooses from a Game or a View, not {type(state).__name__}")
    if type(seat) is not int:
        raise BadArgument(f"seat {seat!r}: a seat is an int")
    if isinstance(state, View):
        _view_arg(state)
    if isinstance(state, View) and state.seat != seat:
        who = "a spectator" if state.seat is None else f"seat {state.seat}"
        raise BadArgument(f"this is {who}'s view: the bot of seat {seat} chooses from its own")
    if state.phase == "over":
        raise _no_move(state)
    if state.actor != seat:
        raise BadArgument(f"seat {seat} is not to move: seat {state.actor} is")


class _Bot:
    """What the bots share: their own generator, seeded once by their agent's name and the
    seed, and `choose`, which checks that the seat is to move and asks the agent (`_move`)."""

    __slots__ = ("rng",)

    rng: _random.Random  # the bot's own generator, seeded once

    def __init__(self, agent: str, seed: int | str) -> None:
        self.rng = _bot_rng(agent, seed)

    def choose(self, state: Game | View, seat: int) -> Move:
        """The bot's move for `seat`, which must be to move: one of `legal_moves(state)`.
        `state` is the game (never changed) or `seat`'s view; BadArgument otherwise, or when
        the game is over."""
        _bot_turn(state, seat)
        return self._move(state)

    def _move(self, state: Game | View) -> Move:
        """The agent's move on `state`, whose seat to move is the bot's."""
        raise NotImplementedError


class RandomBot(_Bot):
    """A bot that plays one of the legal moves of its seat, drawn at random.

    `RandomBot(seed).choose(game_or_view, seat)`: the same seed and the same states give the
    same moves (the `random` agent of the compiler's `balance` of that seed)."""

    __slots__ = ()

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__("random", seed)

    def _move(self, state: Game | View) -> Move:
        return random_move(state, self.rng)


class GreedyBot(_Bot):
    """A bot that looks one move ahead: on one game its seat's view could be (what it cannot
    see dealt again at random), it plays each legal move and keeps the one that leaves it the
    furthest ahead as if the game ended there (its total minus the best of the others'); ties
    drawn at random (`greedy_move`).

    `GreedyBot(seed).choose(game_or_view, seat)`: the same seed and the same states give the
    same moves (the `greedy` agent of the compiler's `balance` of that seed)."""

    __slots__ = ()

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__("greedy", seed)

    def _move(self, state: Game | View) -> Move:
        return greedy_move(state, self.rng)


class MctsBot(_Bot):
    """A bot that searches: information-set Monte Carlo tree search (UCT) over `iterations`
    iterations a move, each on a new game its seat's view could be, playing on at random
    (`greedy`: with greedy moves) at most `horizon` moves (None: to the end) before it scores
    the game as if it ended there (`mcts_move`). More iterations play better and slower.

    `MctsBot(seed, iterations, horizon, greedy).choose(game_or_view, seat)`: the same seed,
    budget and states give the same moves (the `mcts` agent of the compiler's `balance`, or
    `mcts-greedy`, of that seed and budget)."""

    __slots__ = ("greedy", "horizon", "iterations")

    iterations: int
    horizon: int | None
    greedy: bool

    def __init__(
        self,
        seed: int | str = 0,
        iterations: int = _BOT_ITERATIONS,
        horizon: int | None = _BOT_HORIZON,
        greedy: bool = False,
    ) -> None:
        _search_budget(iterations, horizon)
        if type(greedy) is not bool:
            raise BadArgument(f"greedy is True or False, not {greedy!r}")
        super().__init__("mcts-greedy" if greedy else "mcts", seed)
        self.iterations = iterations
        self.horizon = horizon
        self.greedy = greedy

    def _move(self, state: Game | View) -> Move:
        return mcts_move(state, self.rng, self.iterations, self.horizon, self.greedy)


# --- What happened --------------------------------------------------------------------------------
# A game that records (`record(g)`) keeps, for each move played on it since, what changed: the
# move, and each change of the saved-game JSON (an item moved from a list to a list, added,
# removed, a list shuffled, a value set), found by comparing the state before and after. A
# seat reads them through `events(g, since, seat)`, which keeps of each change what that seat
# may see (rules/state.yaml `see:`): an item in a place it cannot see is null, a number it
# cannot see is left out, a choice of the move that names what it cannot see is null. A game
# that does not record pays nothing.


@_dataclass(frozen=True)
class _Happened:
    player: int
    move: dict[str, Any]
    changes: tuple[dict[str, Any], ...]
    words: str  # the move's words (`move_words`)
    name: str  # the name of its kind: the words of a move some choice of which is hidden


@_dataclass(frozen=True)
class _Log:
    """A game's record: what the last move changed (None at the start) after the record of
    the state before it (`prev`), `count` moves in all. Shared by the states after it, never
    changed: a new move makes a new head."""

    prev: _Log | None
    happened: _Happened | None
    count: int


def record(g: Game) -> Game:
    """A copy of `g` that records what each move played on it (`apply_move`, `successors`)
    changes, for `events`; the states after it record too. Events are numbered from 0 at
    this state. What is no Game (a view, None) raises BadArgument."""
    try:
        _activate(g)
        out = g.clone()
    except _REFUSALS:
        raise
    except _FAULTS as exc:  # a Game changed by hand
        raise _broken(g, exc) from None
    out._log = _Log(None, None, 0)
    return out


def events(g: Game, since: int = 0, seat: int | None = None) -> list[dict[str, Any]]:
    """What happened in the moves recorded since event `since` (see `record`), as `seat` may
    see it (None: a spectator, who sees what is public): each event is {"n": its number,
    "player": the seat that moved, "move": the move's JSON, "words": the move's words (those
    of its kind alone when a choice of it is hidden from the seat), "changes": [...]} where a change
    is {"moved": item, "from": place, "to": place}, {"added": item, "to": place},
    {"removed": item, "from": place}, {"shuffled": place} or {"set": place, "was": value,
    "now": value}; a place is the path of a field of the saved game ("players[1].hand", a
    list in a map: "FIELD.KEY")."""
    if not isinstance(g, Game):
        raise BadArgument(f"events takes a Game, not {type(g).__name__}")
    if seat is not None and (type(seat) is not int or not 0 <= seat < len(g.players)):
        raise BadArgument(f"seat {seat!r}: the game has seats 0 to {len(g.players) - 1}")
    if type(since) is not int or since < 0:
        raise BadArgument(f"since {since!r}: an event number, 0 or more")
    log: _Log | None = g._log
    if log is None:
        raise BadArgument("this game does not record what happens: play on record(game)")
    _activate(g)
    found: list[_Happened] = []
    while log is not None and log.count > since and log.happened is not None:
        found.append(log.happened)
        log = log.prev
    found.reverse()
    hidden = _hidden_kinds()
    return [_plain(_seen(h, since + i, seat, hidden)) for i, h in enumerate(found)]


def _hidden_kinds() -> set[str]:
    """The conserved kinds some zone of which not everyone sees whole (a field seen by its
    owner only is hidden from the others)."""
    out = set()
    for zone, kind in _ZONES.items():
        scope, name = zone.split(".", 1)
        if (_PLAYER_SEES if scope == "player" else _GAME_SEES).get(name, "all") != "all":
            out.add(kind)
    return out


def _recorded(before: Game, after: Game, move: Move) -> None:
    """Add to `after`'s log (a new head: `before` keeps its own) what `move` changed."""
    log = before._log
    assert log is not None
    changes: list[dict[str, Any]] = []
    _diff(_state_data(before), _state_data(after), "", changes)
    names = _words_of(_activate(before).key)[1]
    happened = _Happened(
        move.player,
        move.to_json(),
        tuple(_paired(changes)),
        move_words(before, move),
        names.get(move.kind, move.kind),
    )
    after._log = _Log(log, happened, log.count + 1)


def _diff(was: Any, now: Any, path: str, out: list[dict[str, Any]]) -> None:
    """The changes from `was` to `now` (saved-game JSON) under `path`: items of lists gone and
    come (a list whose items are the same, in another order: shuffled), values set."""
    if isinstance(was, dict) and isinstance(now, dict):
        for key in dict.fromkeys([*was, *now]):
            at = f"{path}.{key}" if path else key
            _diff(was.get(key), now.get(key), at, out)
        return
    if isinstance(was, list) or isinstance(now, list):
        if was is None or now is None:  # a list in a map, come or gone: its items
            was, now = was or [], now or []
        elif not (isinstance(was, list) and isinstance(now, list)):
            out.append({"set": path, "was": was, "now": now})
            return
        if path == "players":
            for i, (a, b) in enumerate(zip(was, now, strict=False)):
                _diff(a, b, f"players[{i}]", out)
            return
        if was == now:
            return
        gone = list(was)
        come = []
        for x in now:
            if x in gone:
                gone.remove(x)
            else:
                come.append(x)
        if not gone and not come:
            out.append({"shuffled": path})
            return
        top = was[-1] if was else None
        out += [{"removed": x, "from": path, "top": x == top} for x in gone]
        out += [{"added": x, "to": path, "top": bool(now) and x == now[-1]} for x in come]
        return
    if was != now or type(was) is not type(now):
        out.append({"set": path, "was": was, "now": now})


def _paired(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An id removed from one zone of its kind and added to another, as one move of it."""
    out: list[dict[str, Any]] = []
    come = [c for c in changes if "added" in c]
    used: set[int] = set()
    for c in changes:
        if "removed" in c:
            kind = _zone_kind(c["from"])
            for j, d in enumerate(come):
                if (
                    j not in used
                    and d["added"] == c["removed"]
                    and kind is not None
                    and _zone_kind(d["to"]) == kind
                    and type(d["added"]) is type(c["removed"])
                ):
                    used.add(j)
                    out.append(
                        {
                            "moved": c["removed"],
                            "from": c["from"],
                            "to": d["to"],
                            "top": (c["top"], d["top"]),
                        }
                    )
                    break
            else:
                out.append(c)
        elif "added" not in c:
            out.append(c)
    out += [d for j, d in enumerate(come) if j not in used]
    return out


def _zone_kind(path: str) -> str | None:
    """The conserved kind whose ids the list at `path` holds (None: not a zone of one)."""
    if path.startswith("players["):
        return _ZONES.get("player." + path[path.index("]") + 2 :].split(".")[0])
    return _ZONES.get("game." + path.split(".")[0])


def _see_of(path: str, seat: int | None) -> str:
    """How `seat` sees the field at `path`: all, count, top or none."""
    if path.startswith("players["):
        owner = int(path[len("players[") : path.index("]")])
        name = path[path.index("]") + 2 :].split(".")[0]
        return _seen_as(_PLAYER_SEES.get(name, "all"), owner, seat)
    return _GAME_SEES.get(path.split(".")[0], "all")


def _seen(h: _Happened, n: int, seat: int | None, hidden_kinds: set[str]) -> dict[str, Any]:
    """An event as `seat` may see it."""
    changes: list[dict[str, Any]] = []
    shown: set[tuple[str | None, str]] = set()  # (kind, repr) of the ids shown
    for c in h.changes:
        if "set" in c:
            if _see_of(c["set"], seat) == "all":
                changes.append({"set": c["set"], "was": c["was"], "now": c["now"]})
        elif "shuffled" in c:
            if _see_of(c["shuffled"], seat) != "none":
                changes.append({"shuffled": c["shuffled"]})
        elif "moved" in c:
            a, b = _see_of(c["from"], seat), _see_of(c["to"], seat)
            if a == "none" and b == "none":
                continue
            seen = (
                a == "all"
                or b == "all"
                or (a == "top" and c["top"][0])
                or (b == "top" and c["top"][1])
            )
            item = c["moved"] if seen else None
            if seen:
                shown.add((_zone_kind(c["from"]), repr(item)))
            if a == "none":
                changes.append({"added": item, "to": c["to"]})
            elif b == "none":
                changes.append({"removed": item, "from": c["from"]})
            else:
                changes.append({"moved": item, "from": c["from"], "to": c["to"]})
        else:
            key, place = ("added", "to") if "added" in c else ("removed", "from")
            see = _see_of(c[place], seat)
            if see == "none":
                continue
            seen = see == "all" or (see == "top" and c["top"])
            if seen:
                shown.add((_zone_kind(c[place]), repr(c[key])))
            changes.append({key: c[key] if seen else None, place: c[place]})
    move = dict(h.move)
    if seat != h.player:  # a choice of an id of a hidden kind: shown where a change shows it
        for name, value in h.move.items():
            kind = _MOVE_LABELS.get(name, ("", ""))[1]
            if kind not in hidden_kinds:
                continue
            if isinstance(value, list):
                move[name] = [x if (kind, repr(x)) in shown else None for x in value]
            elif (kind, repr(value)) not in shown:
                move[name] = None
    words = h.words if move == h.move else h.name
    return {"n": n, "player": h.player, "move": move, "words": words, "changes": changes}


# --- Words and components -------------------------------------------------------------------------
# What a screen shows, in the rules' words: a component of the rules by its kind and id (a row of
# the rules' tables, with its name and its words: the reference's), and a move as a line for a
# log or a button. The words are generated from rules/ (`_COMPONENTS`, `_MOVE_NAMES`,
# `_MOVE_LABELS`); a rule set whose variants change some has its own.

_WORDS_OF: Final[
    dict[tuple[str, ...], tuple[dict[str, dict[Any, tuple[str, str, Any]]], dict[str, str]]]
] = {}


def _words_key(g: Game | View) -> tuple[str, ...]:
    """The key of the rule set of a game or of a view (BadArgument for anything else)."""
    if isinstance(g, View):
        return _view_key(g.state)
    return _activate(g).key


def _view_key(state: Any) -> tuple[str, ...]:
    """The key of the rule set of a view's state (its variants but the folded ones)."""
    variants = state.get("variants") if isinstance(state, dict) else None
    if not isinstance(variants, list):
        raise BadArgument("not a view of these rules: it names no variants")
    key = tuple([x for x in variants if x not in _folded()])
    if key not in RULESETS:
        raise BadArgument(f"no rule set for variants {variants}")
    return key


def _words_of(
    key: tuple[str, ...],
) -> tuple[dict[str, dict[Any, tuple[str, str, Any]]], dict[str, str]]:
    """The components and the names of the kinds of move of a rule set (made once)."""
    found = _WORDS_OF.get(key)
    if found is None:
        found = (
            {**_COMPONENTS, **_COMPONENTS_OF.get(key, {})},
            {**_MOVE_NAMES, **_MOVE_NAMES_OF.get(key, {})},
        )
        _WORDS_OF[key] = found
    return found


def component(g: Game | View, kind: str, component_id: Any) -> dict[str, Any]:
    """What a screen shows of one component of the rules a game (or a view) is played by: its
    `kind` and `id`, its `name` (a short label), its `words` (one line: the reference's words
    for its row) and its `row` (the rules' data, as plain JSON data). The kinds are those of
    the state whose rows the rules list; an unknown kind or id raises BadArgument."""
    try:
        table = _words_of(_words_key(g))[0]
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) if isinstance(g, Game) else BadArgument(str(exc)) from None
    if type(kind) is not str or kind not in table:
        raise BadArgument(f"{kind!r} is not a kind of these rules ({', '.join(table)})")
    rows = table[kind]
    _id_arg(component_id, list(rows), f"an id of the kind {kind!r}")
    name, words, row = rows[component_id]
    return {"kind": kind, "id": component_id, "name": name, "words": words, "row": _plain(row)}


def move_words(g: Game | View, move: Move) -> str:
    """The words of a move of a game (or of a view), for a log or a button: the rules' name of
    its kind, then each choice it makes, labelled, in the rules' words (an id by its name, a
    seat by its colour, a yes by its label): `NAME: CHOICE; CHOICE`."""
    problem = _move_problem(move)
    if problem is not None:
        raise BadArgument(problem)
    try:
        key = _words_key(g)
        table, names = _words_of(key)
        if move.kind not in names:
            raise BadArgument(
                f"{move.kind!r} is not a kind of move of these rules ({', '.join(names)})"
            )
        defined = RULESETS[key].moves.get(move.kind)
        own = defined.fields if defined is not None else ()
        parts = []
        for name in (*own, *[f for f in _MOVE_DEFAULTS if f not in own]):
            value = getattr(move, name)
            if value != _MOVE_DEFAULTS[name]:
                parts.append(_choice_words(g, table, name, value))
        return names[move.kind] + (": " + "; ".join(parts) if parts else "")
    except _REFUSALS:
        raise
    except _FAULTS as exc:
        raise _broken(g, exc) if isinstance(g, Game) else BadArgument(str(exc)) from None


def _choice_words(
    g: Game | View, table: dict[str, dict[Any, tuple[str, str, Any]]], name: str, value: Any
) -> str:
    """A choice of a move in words: its label, then its value (the label alone for a yes; no
    label when the value's words start with it: `Card 1`, not `Card Card 1`)."""
    label, kind = _label(name), _MOVE_LABELS.get(name, ("", ""))[1]
    if value is True:
        return label
    items = value if isinstance(value, tuple) else (value,)
    shown = ", ".join([_id_words(g, table, kind, x) for x in items])
    return shown if shown == label or shown.startswith(label + " ") else f"{label} {shown}"


def _id_words(
    g: Game | View, table: dict[str, dict[Any, tuple[str, str, Any]]], kind: str, value: Any
) -> str:
    """A value of a move in words: an id by its name, a seat by its player's colour."""
    if kind == "seat" and type(value) is int:
        if isinstance(g, View):
            players = g.players
            if 0 <= value < len(players) and isinstance(players[value], dict):
                return str(players[value].get("color", value))
            return str(value)
        return _color(g, value)
    rows = table.get(kind)
    if rows is not None and value in rows:
        return rows[value][0]
    return str(value)


# --- The module -----------------------------------------------------------------------------------

__version__: Final = VERSION  # the engine's version, as the package installed from it has it


def __dir__() -> list[str]:
    """The module's public names (`__all__`), as `dir(module)`, tab completion and
    documentation generators list them: the standard library's modules and the helpers it imports,
    the machinery's private names and the shapes of its tables stay reachable by name, not
    listed."""
    return sorted({*__all__, "__all__", "__doc__", "__file__", "__name__", "__version__"})


# </emit>
