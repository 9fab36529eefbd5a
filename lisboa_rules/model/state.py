"""The declared state (rules/state.yaml): the kinds of ids, and the fields of a player and of
the game, with their types and bounds.

The engine's state classes, its saved-game JSON and the state schema are generated from this
declaration; the effect language (lisboa_rules/lang/typed.py) type-checks every read and write
of a field against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.source import Span

NOWHERE = Span("<built-in>", 1, 1, 1, 1)

# The types every game has; everything else in a type is a declared kind.
BASE_TYPES = ("int", "bool", "text", "seat", "player")
CONTAINERS = ("list", "map")


@dataclass(frozen=True)
class StateType:
    """A parsed field type: `int`, `seat?`, `list[card]`, `map[noble, map[owner, int]]`."""

    name: str  # a base type, a container, or a kind id
    args: tuple[StateType, ...] = ()
    optional: bool = False

    def __str__(self) -> str:
        inner = f"[{', '.join(str(a) for a in self.args)}]" if self.args else ""
        return f"{self.name}{inner}{'?' if self.optional else ''}"

    @property
    def is_container(self) -> bool:
        return self.name in CONTAINERS


class TypeSyntaxError(ValueError):
    """A type that does not parse; `col` is 0-based within the type text."""

    def __init__(self, message: str, col: int = 0) -> None:
        super().__init__(message)
        self.col = col


def parse_type(text: str) -> StateType:
    """Parse a field type; raise TypeSyntaxError."""
    pos = 0

    def skip() -> None:
        nonlocal pos
        while pos < len(text) and text[pos] == " ":
            pos += 1

    def word() -> str:
        nonlocal pos
        skip()
        start = pos
        while pos < len(text) and (text[pos].isalnum() or text[pos] in "-_"):
            pos += 1
        if start == pos:
            raise TypeSyntaxError(f"expected a type name at column {pos + 1}", pos)
        return text[start:pos]

    def one() -> StateType:
        nonlocal pos
        name = word()
        args: list[StateType] = []
        skip()
        if pos < len(text) and text[pos] == "[":
            pos += 1
            args.append(one())
            skip()
            while pos < len(text) and text[pos] == ",":
                pos += 1
                args.append(one())
                skip()
            if pos >= len(text) or text[pos] != "]":
                raise TypeSyntaxError(f"expected ']' at column {pos + 1}", pos)
            pos += 1
        optional = False
        skip()
        if pos < len(text) and text[pos] == "?":
            optional = True
            pos += 1
        want = {"list": 1, "map": 2}.get(name, 0)
        if len(args) != want:
            raise TypeSyntaxError(
                f"{name} takes {want} type argument{'s' if want != 1 else ''}, not {len(args)}",
                pos,
            )
        return StateType(name, tuple(args), optional)

    t = one()
    skip()
    if pos != len(text):
        raise TypeSyntaxError(f"unexpected {text[pos]!r} at column {pos + 1}", pos)
    return t


@dataclass(frozen=True)
class StateKind:
    """A kind of id: its values, resolved from the rules data (`from`), listed (`values`) or
    open (no list: any text, such as flags)."""

    id: str
    of: str  # "int" or "text": the JSON type of the ids
    values: tuple[Any, ...] | None  # None: open
    text: str
    source: str | None = None  # the data path of its rows (`components.cards`), if any
    key: str | None = None  # the rows' id field (`number`)
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class StateField:
    """A field of a player (`scope` "player") or of the game ("game")."""

    id: str
    scope: str
    type: StateType
    min: int | None  # for an int, or the ints inside a container
    max: int | None
    max_items: int | None
    full: bool  # a map that always holds every key
    default: Any  # before setup: 0, [], {}, None or the declared default
    text: str
    required: bool = False  # no default: new_game sets it from its arguments
    # who sees it (`see:`): all, owner, count, top or none; `by`: a hidden map of lists holds,
    # under each key, the ids whose row has that value in this field (`type`: a pile by type)
    see: str = "all"
    by: str | None = None
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)
    # where its min and max are written: the rules data a bound names, or the declaration
    bounds_at: tuple[tuple[str, Span], ...] = field(default=(), compare=False, repr=False,
                                                    kw_only=True)


# What `see:` may say, and which of them hide something from some seat.
SEES = ("all", "owner", "count", "top", "none")
HIDING = ("owner", "count", "top", "none")


@dataclass(frozen=True)
class Zone:
    """A field a conserved kind's ids live in: `game.X`, or `player.X` of every player."""

    scope: str
    field: str
    type: StateType


@dataclass(frozen=True)
class Invariant:
    """What must hold in every state (rules/state.yaml `invariants:`): a condition over each
    player (`each` "player") or over the game, or a kind conserved across the zones its ids
    live in (`kind`, `zones`; with `count`, each id counted that many times). `text` is what
    `check_invariants` reports when it fails, with `{expression}` placeholders."""

    id: str
    text: str
    each: str | None = None
    holds: str | None = None
    kind: str | None = None
    zones: tuple[Zone, ...] = ()
    count: str | int | None = None
    function: str | None = None  # the public function listing the conserved ids
    at: str = ""  # a saved-game check's JSON path (`$.players[{seat}].ships`), placeholders too
    path: tuple[str | int, ...] = ()  # where it is in the state document
    span: Span = field(default=NOWHERE, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class StateDecl:
    kinds: tuple[StateKind, ...] = ()
    player: tuple[StateField, ...] = ()
    game: tuple[StateField, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    # what a saved game must satisfy to be loaded (rules/state.yaml `checks:`): conditions in
    # the invariants' format, each with the JSON path (`at`) of the StateError it raises
    checks: tuple[Invariant, ...] = ()

    def kind(self, kind_id: str) -> StateKind | None:
        for k in self.kinds:
            if k.id == kind_id:
                return k
        return None

    def fields(self, scope: str) -> tuple[StateField, ...]:
        return self.player if scope == "player" else self.game

    def field(self, scope: str, field_id: str) -> StateField | None:
        for f in self.player if scope == "player" else self.game:
            if f.id == field_id:
                return f
        return None
