"""What an action's listing may read (model/visibility.py, `hidden-read`): the mover's own
fields, also when written as the fields of `game.players[ACTOR]`, where ACTOR is the seat that
moves in the action's phase (rules/flow.yaml `actor:`) and nothing the action may run writes
what ACTOR reads."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT

from lisboa_rules import pipeline

_HOUSE = """kind: variant
id: house
title: House rule
applies: chosen
text: A house rule.
changes:
  court:
    actions:
      - id: discard
        steps:
{before}          - choose: {{as: card, from: "game.players[game.current].hand"}}
            reason: card {{card}} is not in your hand
          - {{move: {{item: card, from: hand, to: game.discard}}}}
          - {{apply: {{effects: this.reward}}}}
          - {{set: {{game.phase: "'refill'"}}}}
"""


def _errors(tmp_path: Path, before: str = "") -> list[str]:
    house = tmp_path / "house.yaml"
    house.write_text(_HOUSE.format(before=before), encoding="utf-8")
    _, diags = pipeline.analyse(ROOT / "rules", (), None, (house,))
    return [f"{d.code}: {d.message}" for d in diags if d.is_error]


def test_the_hand_of_the_player_whose_turn_it_is_is_the_movers_own(tmp_path: Path) -> None:
    """In the action phase the mover is `game.current` (its `actor:`): a choice from
    `game.players[game.current].hand` lists the mover's own cards, as `hand` does."""
    assert _errors(tmp_path) == []


def test_not_once_the_action_may_change_whose_turn_it_is(tmp_path: Path) -> None:
    """A step of the action that moves `game.current` on makes `game.players[game.current]`
    another player: the same choice is refused."""
    errors = _errors(tmp_path, '          - set: {game.current: '
                               '"(game.current + 1) % len(game.players)"}\n')
    assert len(errors) == 1 and errors[0].startswith("hidden-read: "), errors
    assert "may not be the mover" in errors[0] and "`hand`" in errors[0]
