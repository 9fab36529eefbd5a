"""The IR's statements: what the engine's checks of a state do, in no target's syntax.

The model builds them from rules/state.yaml (`model/state_invariants.py`): the invariants that
must hold in every state (each failing one reports its words) and the checks of a saved game
(the first failing one reports where, and why); a back end prints them (`emit/engine/checks.py`
for the Python engine). The conditions and the values shown in the words are expressions of
`expr.py`; a statement names a field of the state by its id, a kind by its id, a place by its
scope (`game`, or `player`: of every player).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import VType


@dataclass(frozen=True, slots=True)
class Shown:
    """A value shown in words (`{expression}` in the rules' text); `text`: it is a text
    already, shown as it is (else shown as a text is)."""

    value: ir.Expr
    text: bool


# words with values shown in them: literal pieces of text and shown values, in order
Words = tuple[str | Shown, ...]


@dataclass(frozen=True, slots=True)
class Holds:
    """A condition that must hold. When it does not, the problem is reported: its `words`,
    and for a check of a saved game `at`, where in the saved game it is (a JSON path). `note`
    says where the rules declare it, for a reader of the engine (None: nothing said)."""

    test: ir.Expr
    words: Words
    at: Words | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class EachPlayer:
    """The checks, for each player of the game in seat order: the acting player of their
    expressions (`ir.Me`, and `ir.Seat` for the seat)."""

    body: tuple[Holds, ...]


@dataclass(frozen=True, slots=True)
class Zone:
    """A field the ids of a kind live in: of the game, or of every player (`scope`); a list
    of ids, or a table (`table`): of lists of ids, or from the ids to how many there are."""

    scope: Literal["game", "player"]
    field: str
    table: bool


@dataclass(frozen=True, slots=True)
class Lister:
    """Every id of a conserved kind wherever it is, zone after zone: a function of the engine,
    public when the rules name it (`name`); `of` is the type of the ids (int or text)."""

    kind: str
    name: str | None
    of: VType
    zones: tuple[Zone, ...]


@dataclass(frozen=True, slots=True)
class Conserved:
    """Each id of a kind is in the state once: its ids, as the kind's lister lists them and
    sorted, are `ids` (the kind's ids in these rules, sorted)."""

    kind: str
    ids: tuple[Any, ...]
    words: Words
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Counted:
    """Each id of a kind is in the state `total` times: for each id of `ids` (the local named
    as the kind), what the zones hold of it adds up to `total`, and no table holds less than
    none of it."""

    kind: str
    ids: ir.Expr
    zones: tuple[Zone, ...]
    total: ir.Expr
    words: Words
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SeatOf:
    """The seats a field of the game holds (one, one or none when `optional`, a list when
    `many`) are seats of this game; else the problem is at the field."""

    field: str
    optional: bool
    many: bool


Stmt = Holds | EachPlayer | Conserved | Counted | SeatOf


@dataclass(frozen=True, slots=True)
class Checks:
    """A rule set's checks of a state, in order: for the invariants, every problem is reported
    (with the listers of the conserved kinds they read); for a saved game, the first."""

    body: tuple[Stmt, ...]
    listers: tuple[Lister, ...] = ()


def expressions(stmt: Stmt) -> Iterator[ir.Expr]:
    """The expressions a statement reads (its conditions and the values its words show)."""
    match stmt:
        case Holds(test=test, words=words, at=at):
            yield test
            yield from _shown(words)
            yield from _shown(at or ())
        case EachPlayer(body=body):
            for s in body:
                yield from expressions(s)
        case Conserved(words=words):
            yield from _shown(words)
        case Counted(ids=ids, total=total, words=words):
            yield ids
            yield total
            yield from _shown(words)
        case SeatOf():
            pass
        case _:
            assert_never(stmt)


def _shown(words: Words) -> Iterator[ir.Expr]:
    for part in words:
        if isinstance(part, Shown):
            yield part.value
