"""The phases of the turn machine as data (rules/flow.yaml `phases`): who moves in each phase,
while it lasts and what comes after it are compiled into the engine's phase table, and a house
rule written in YAML alone changes a decision frame."""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from conftest import empty_pile, set_hand

from lisboa_rules import pipeline

ROOT = Path(__file__).resolve().parents[2]


def _house(tmp: Path, name: str, overlay: str) -> types.ModuleType:
    """The rules with a variant overlay folded in (`--variant NAME`), compiled; its engine."""
    shutil.copytree(ROOT / "rules", tmp / "rules")
    (tmp / "rules" / "variants" / f"{name}.yaml").write_text(textwrap.dedent(overlay))
    result = pipeline.compile_rules(tmp / "rules", (name,))
    errors = [f"{d.span}: {d.message}" for d in result.diagnostics if d.is_error]
    assert not errors, errors
    mod = types.ModuleType("_phases_" + re.sub(r"\W", "_", name))
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(result.files["lisboa_engine.py"], f"<{name}>", "exec"), mod.__dict__)
    finally:
        sys.modules.pop(mod.__name__, None)
    return mod


def test_the_phase_table_is_generated_from_the_rules(engine: Any) -> None:
    phases = engine.new_game(3).rs.phases
    assert list(phases) == ["action", "follow", "refill", "marker", "hand-discard", "over"]
    assert [p for p, d in phases.items() if d.interrupts is not None] == ["marker"]
    assert phases["marker"].resume == "resume"
    assert (phases["refill"].then, phases["hand-discard"].then) == ("end-turn", "next-step")
    assert phases["over"].actor is None


def _end_the_period(E: Any, players: int) -> Any:
    """Seat 0 draws the card that empties a third display pile: the period ends."""
    g = E.new_game(players, (), 0)
    piles = g.rs.piles
    for pile in piles[:3]:
        empty_pile(g, pile)
    set_hand(g, 0, g.players[0].hand[:4])
    g.phase = "refill"
    return E.apply_move(g, E.Move("draw", 0, pile=piles[3]))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_hand_discard_goes_clockwise_from_who_ended_the_period(
    engine: Any, players: int
) -> None:
    g = _end_the_period(engine, players)
    seen = []
    while g.phase == "hand-discard":
        seen.append(g.actor)
        g = engine.apply_move(g, engine.Move("hand-discard", g.actor, cards=()))
    assert seen == list(range(players))
    assert (g.period, g.phase) == (2, "action")


_ANTICLOCKWISE = """\
kind: variant
id: discard-anticlockwise
title: Discards the other way round
applies: chosen
text: At the end of a period, the players discard anticlockwise.
source: [seed:000#end-of-the-period]
changes:
  flow:
    period_end:
      steps:
        - id: period-end.hand-discard
          text: >-
            With this house rule, starting with the player who triggered the end and going
            anticlockwise, each player may discard any number of cards from hand.
          steps:
            - id: period-end.hand-discard.order
              set:
                game.discard_queue: >-
                  [(first - k) % len(game.players) for k in range(len(game.players))]
"""


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_house_rule_changes_the_order_of_the_hand_discard(tmp_path: Path, players: int) -> None:
    E = _house(tmp_path, "discard-anticlockwise", _ANTICLOCKWISE)
    g = _end_the_period(E, players)
    seen = []
    while g.phase == "hand-discard":
        seen.append(g.actor)
        g = E.apply_move(g, E.Move("hand-discard", g.actor, cards=()))
    assert seen == [(-k) % players for k in range(players)]
    assert (g.period, g.phase) == (2, "action")


_SHORT_REFILL = """\
kind: variant
id: short-refill
title: A short refill
applies: chosen
text: The hand is refilled to {n} cards only.
source: [seed:000#end-of-the-period]
changes:
  flow:
    phases:
      - id: refill
        while: >-
          len(game.players[game.current].hand) < {n}
          and len([x for x in game.piles if len(game.piles[x]) > 0]) > 0
        text: With this house rule, the player draws back to {n} cards only.
"""


@pytest.mark.parametrize("n", [3, 4])
def test_a_house_rule_changes_when_the_refill_is_done(tmp_path: Path, n: int) -> None:
    E = _house(tmp_path, "short-refill", _SHORT_REFILL.format(n=n))
    g = E.new_game(3, (), 1)
    for turn in range(7):
        seat = g.current
        before = len(g.players[seat].hand)
        g = E.apply_move(g, next(m for m in E.legal_moves(g) if m.kind == "portfolio"))
        while g.phase == "refill":
            g = E.apply_move(g, E.legal_moves(g)[0])
        # the turn is over once the hand holds n cards again (no card drawn above n)
        assert g.current == (seat + 1) % 3, turn
        assert len(g.players[seat].hand) == max(before - 1, n), turn
