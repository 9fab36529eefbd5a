"""Moves are plain slotted classes (issue 17): what an app or a fuzzer does with them still holds.

- `dataclasses.fields` and `dataclasses.replace` work on a Move of the pure engine (a new move
  with one choice changed), and the new move is refused unless `legal_moves` lists it;
- a move taken from `legal_moves` and changed in place (Moves no longer refuse assignment) is
  refused unless the changed move is one the state lists: the engine's kept list of the last
  listing (`_kept`) finds the object by identity, and the move's own checked run still refuses it.

Both run on the pure engine and on the engine compiled with mypyc, whose Move is no dataclass
(`dataclasses.fields` raises TypeError) and refuses a value of another type than the field's
at the assignment itself (`set_field`).
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from conftest import ENGINES, is_compiled, pure_or_compiled, set_field


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest, engine: Any) -> Any:
    return pure_or_compiled(request, engine)


VALUES: tuple[Any, ...] = (0, 1, 2, 7, 99, -1, "x", "", None, True, False, (), ("a",), (1,))


def _listed(E: Any, g: Any, move: Any) -> bool:
    """Whether `move`, with the exact types of its values, is one of the state's legal moves."""
    names = E._MOVE_FIELDS
    return any(
        m == move and all(type(getattr(m, k)) is type(getattr(move, k)) for k in names)
        for m in E.legal_moves(g)
    )


def test_fields_and_replace_work_on_moves(engine: Any) -> None:
    E = engine
    if is_compiled(E):  # a compiled class is closed: no dataclass
        with pytest.raises(TypeError):
            dataclasses.fields(E.Move)
        return
    names = [f.name for f in dataclasses.fields(E.Move)]
    assert names[:2] == ["kind", "player"] and set(names) == set(E.Move.__slots__)
    assert names == list(E._MOVE_FIELDS)
    g = E.new_game(3, seed=4)
    move = E.legal_moves(g)[0]
    same = dataclasses.replace(move)
    assert same == move and same is not move and hash(same) == hash(move)
    other = dataclasses.replace(move, player=(move.player + 1) % 3)
    assert other != move and move.player == g.actor  # the original is untouched
    with pytest.raises(E.IllegalMove):
        E.apply_move(g, other)


@pytest.mark.parametrize("seed", range(4))
def test_a_listed_move_changed_in_place_is_refused_unless_listed(engine: Any, seed: int) -> None:
    E = engine
    rng = random.Random(seed)
    names = list(E._MOVE_FIELDS)
    g = E.new_game(2 + seed % 3, seed=seed)
    refused = accepted = 0
    for _ in range(120):
        if g.phase == "over":
            break
        moves = E.legal_moves(g)
        move = rng.choice(moves)
        name = rng.choice(names)
        if not set_field(E, move, name, rng.choice(VALUES)):  # the object the kept list holds
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            continue
        saved = E.dumps(g)
        try:
            after = E.apply_move(g, move)
        except E.IllegalMove:
            refused += 1
            assert E.dumps(g) == saved  # nothing lost
            assert not _listed(E, g, move)
        else:
            accepted += 1
            assert _listed(E, g, move), (name, move)
            assert after is not g
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    assert refused > 0
