"""The names the grammar keeps from the rules (core/names.py) are the ones the engine has:
a state class or Move of the generated engine has no public member but the fields the rules
declare and the members the grammar refuses as fields (STATE_MEMBERS, MOVE_MEMBERS)."""

from __future__ import annotations

import dataclasses
import inspect
from types import ModuleType

from lisboa_rules.core import names


def _public(cls: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(cls) if not n.startswith("_")}


def test_the_state_classes_have_no_member_the_grammar_does_not_keep(engine: ModuleType) -> None:
    members: set[str] = set()
    for cls, fields in ((engine.Player, engine._PLAYER_FIELDS), (engine.Game, engine._GAME_FIELDS)):
        extra = _public(cls) - set(fields) - names.STATE_MEMBERS
        assert not extra, (cls.__name__, sorted(extra))
        members |= _public(cls) - set(fields)
    assert members == names.STATE_MEMBERS  # and none of them is stale


def test_a_move_has_no_member_the_grammar_does_not_keep(engine: ModuleType) -> None:
    choices = set(engine._MOVE_FIELDS) - {"kind", "player"}
    fields = {f.name for f in dataclasses.fields(engine.Move)}
    extra = (_public(engine.Move) | fields) - choices - names.MOVE_MEMBERS
    assert not extra, sorted(extra)
    assert _public(engine.Move) | fields >= names.MOVE_MEMBERS


def test_the_runtimes_placeholders_are_its_generated_public_functions() -> None:
    assert names.placeholders() <= names.runtime_names()
    assert all(not n.startswith("_") for n in names.placeholders())
