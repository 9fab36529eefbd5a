"""The engine's public functions raise only IllegalMove, StateError and BadArgument (issue
33): a fault of its own on a state it can play (before: a bare StopIteration out of
apply_move) is a StateError that names where in the rules the step is written that failed,
read from the comment the generated code keeps above each step."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ENGINE_PATH, load_engine


def _broken_engine(tmp_path: Path) -> tuple[Any, str]:
    """The engine with the discard move's `move` step made to fail as `first([])` did."""
    text = ENGINE_PATH.read_text(encoding="utf-8")
    play = text.index("def _play_discard(")
    at = re.compile(r"\n(\s+)# (rules/court\.yaml:\d+) move\n").search(text, play)
    assert at is not None, "the discard move's move step is not where this test looks"
    broken = text[:at.end()] + f"{at[1]}next(iter([]))\n" + text[at.end():]
    path = tmp_path / "broken_engine.py"
    path.write_text(broken, encoding="utf-8")
    return load_engine(path, "broken_engine_faults"), at[2]


def test_a_fault_of_the_engine_is_a_state_error_at_the_rule(tmp_path: Path) -> None:
    E, where = _broken_engine(tmp_path)
    g = E.new_game(3, seed=1)
    move = next(m for m in E.legal_moves(g) if m.kind == "discard")
    with pytest.raises(E.StateError) as err:
        E.apply_move(g, move)
    assert err.value.at == where
    assert f"the engine failed on a state it can play at {where} (StopIteration" in str(err.value)
    assert E.to_json(g) == E.to_json(E.new_game(3, seed=1))  # the state given is unchanged


def test_a_fault_outside_the_rules_steps_names_no_rule(engine: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    g = engine.new_game(3, seed=1)

    def fails(*_args: Any) -> None:
        raise KeyError("nothing")

    monkeypatch.setattr(engine, "_apply", fails)
    with pytest.raises(engine.StateError) as err:
        engine.apply_move(g, engine.legal_moves(g)[0])
    assert err.value.at is None and "KeyError" in err.value.message
