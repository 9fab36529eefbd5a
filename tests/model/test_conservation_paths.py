"""step-not-conserved reads where a taken card goes, and where a chosen card still is.

A card taken from a zone and put back through a `let` alias, or by the hook of an event raised
with it, stays in the game: these house rules are played as written (they were refused as
losing the card). A card chosen from a zone and put into another one without being taken first
(a move without `from:`, or a procedure that puts its argument) is then in two zones: the build
accepted it, and the first game where the action was played broke 'cards-conserved' (from_json
refused every save where it was legal). Refused now, at the step.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_engine

from lisboa_rules.cli.main import main
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

HEAD = """\
kind: variant
id: {id}
title: House rule
applies: chosen
text: A house rule.
source: [facts:§4]
changes:
"""

KEPT = """\
  court:
    actions:
      - id: discard
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, from: hand}}
          - let: {c: card}
          - {move: {item: c, to: game.discard}}
          - {apply: {effects: this.reward}}
          - {set: {game.phase: "'refill'"}}
      - id: sell-goods
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, from: hand}}
          - raise: {event: card-burnt, with: {card: card}}
          - {set: {game.phase: "'refill'"}}
  effects:
    hooks:
      - $add: true
        id: burn-hook
        on: card-burnt
        params: {card: card}
        steps:
          - {move: {item: card, to: game.box}}
"""

TWICE = """\
  court:
    actions:
      - id: discard
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, to: game.discard}}
          - {apply: {effects: this.reward}}
          - {set: {game.phase: "'refill'"}}
      - id: sell-goods
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - let: {c: card}
          - {do: to-portfolio, with: {card: c}}
          - {set: {game.phase: "'refill'"}}
      - id: trade
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, from: hand, to: game.court}}
          - {move: {item: card, to: game.box}}
          - {set: {game.phase: "'refill'"}}
"""


def _house(tmp_path: Path, vid: str, changes: str) -> Path:
    path = tmp_path / f"{vid}.yaml"
    path.write_text(HEAD.format(id=vid) + changes, encoding="utf-8")
    return path


def _errors(house: Path) -> list[Diagnostic]:
    return [d for d in compile_rules(RULES, extra=[house]).diagnostics if d.is_error]


def test_a_card_put_back_through_an_alias_or_a_hook_is_kept(tmp_path: Path) -> None:
    assert _errors(_house(tmp_path, "kept", KEPT)) == []


def test_a_card_put_while_still_in_its_zone_is_refused_at_the_step(tmp_path: Path) -> None:
    house = _house(tmp_path, "twice", TWICE)
    found = [(d.code, d.span.line, d.span.col, d.message) for d in _errors(house)
             if d.span is not None]
    assert [f[:3] for f in found] == [
        ("step-not-conserved", 14, 27),  # move: {item: card, ...} without a from
        ("step-not-conserved", 22, 45),  # with: {card: c}, c naming the chosen card
        ("step-not-conserved", 29, 27),  # put again after a move from the hand to the court
    ]
    assert "'card' is chosen from player.hand and still there when this step puts it into " \
           "game.discard: the card would be in two zones" in found[0][3]
    assert "gives it to 'to-portfolio', which puts it into a zone" in found[1][3]
    assert "chosen from game.court" in found[2][3]


SETUP_PROC = """\
  effects:
    procedures:
      - $add: true
        id: make-decks
        params: {}
        steps:
          - for_each: {as: d, in: rules.components.decks.id}
            do:
              - set:
                  "game.reserve[d]": >-
                    sorted([c for c in rules.components.cards.number if c.deck == d])
              - shuffle: "game.reserve[d]"
  flow:
    setup:
      steps:
        - {id: setup.decks, $remove: true}
        - $add: true
          $after: setup.treasury
          id: setup.make-decks
          do: make-decks
          text: Shuffle each deck of Political cards.
"""

ALSO_IN_PLAY = """\
  court:
    actions:
      - id: pass
        steps:
          - require: len(hand) == 0
            reason: you still have cards to play
          - {do: make-decks}
          - {set: {game.phase: "'refill'"}}
"""


def test_a_procedure_only_the_setup_does_may_make_the_zones(tmp_path: Path) -> None:
    """The setup's deck-making steps moved into a procedure it does: the set of
    game.reserve[d] there was refused as replacing a zone, though only the setup runs it."""
    assert _errors(_house(tmp_path, "decks", SETUP_PROC)) == []


def test_the_same_procedure_done_in_play_too_is_refused(tmp_path: Path) -> None:
    house = _house(tmp_path, "decks-again", SETUP_PROC + ALSO_IN_PLAY)
    found = [(d.code, d.span.line) for d in _errors(house) if d.span is not None]
    assert found == [("step-not-conserved", 17)], found  # the set, in make-decks


# A loop whose count is a constant runs that many times: a card taken before a loop that runs
# once and put back in it stays in the game (refused as taken nowhere: the check read every
# loop as one that may not run at all). A loop that runs twice puts it twice, one that may not
# run loses it, and a card taken in a loop that runs twice and put after it loses the first.
LOOP = """\
  court:
    actions:
      - id: discard
        steps:
          - choose: {{as: card, from: hand}}
            reason: card {{card}} is not in your hand
          - {{move: {{item: card, from: hand}}}}
          - {loop}
            do:
              - {{move: {{item: card, to: game.discard}}}}
          - {{apply: {{effects: this.reward}}}}
          - {{set: {{game.phase: "'refill'"}}}}
"""

TAKEN_IN_LOOP = """\
  court:
    actions:
      - id: discard
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - repeat: 2
            do:
              - {move: {item: card, from: hand}}
          - {move: {item: card, to: game.discard}}
          - {apply: {effects: this.reward}}
          - {set: {game.phase: "'refill'"}}
"""


@pytest.mark.sampled(2)
@pytest.mark.parametrize("loop", [
    "repeat: 1",
    "repeat: 2 - 1",
    "repeat: rules.game.start.royal_favors",  # 1, from the rules data
    "repeat: min(1, rules.game.start.hand)",
    "for_each: {as: x, in: '[7]'}",
    "repeat: max(0, 1)",
])
def test_a_card_put_back_in_a_loop_that_runs_once_is_kept(tmp_path: Path, loop: str) -> None:
    assert _errors(_house(tmp_path, "once", LOOP.format(loop=loop))) == []


@pytest.mark.parametrize(("loop", "words"), [
    ("repeat: 2", "'card' is in game.discard after the first of the 2 passes of this loop when "
                  "this step puts it into game.discard: the card would be in two zones"),
    ("for_each: {as: x, in: rules.nobles.nobles.id}",
     "after the first of the 3 passes of this loop"),
    ("repeat: 0", "'card' is taken from player.hand here and not put into a zone after it on "
                  "every path"),
    ("repeat: len(hand)", "'card' is taken from player.hand here and not put into a zone"),
    ("for_each: {as: q, in: game.players}", "not put into a zone after it on every path"),
])
def test_a_loop_that_may_not_run_once_is_still_refused(
    tmp_path: Path, loop: str, words: str
) -> None:
    house = _house(tmp_path, "loop", LOOP.format(loop=loop))
    found = [(d.code, d.span.line, d.message) for d in _errors(house) if d.span is not None]
    assert len(found) == 1, found
    code, line, message = found[0]
    assert code == "step-not-conserved" and words in message, message
    # at the put a second pass repeats, or at the take a loop that may not run leaves
    assert line == (17 if "passes" in words else 14), found


def test_a_card_taken_in_a_loop_that_runs_twice_and_put_after_it_is_refused(
    tmp_path: Path,
) -> None:
    found = [(d.code, d.span.line) for d in _errors(_house(tmp_path, "in", TAKEN_IN_LOOP))
             if d.span is not None]
    assert found == [("step-not-conserved", 16)], found  # the take, in the loop


def test_the_loop_that_runs_once_builds_and_its_games_load(tmp_path: Path) -> None:
    """What is accepted is right: the discarded card is in the discard pile, once, and every
    game where it was played saves and loads again."""
    house = _house(tmp_path, "once", LOOP.format(loop="repeat: 1"))
    out = tmp_path / "out"
    args = ["build", "--no-cache", "--rules", str(RULES), "--house", str(house), "--out", str(out)]
    assert main(args) == 0
    E = load_engine(out / "lisboa_engine.py", "conservation_loop_once")
    g = E.new_game(3, variants=["once"], seed=5)
    for _ in range(3):
        while not any(m.kind == "discard" for m in E.legal_moves(g)):
            g = E.apply_move(g, E.legal_moves(g)[0])
        move = next(m for m in E.legal_moves(g) if m.kind == "discard")
        g = E.apply_move(g, move)
        assert g.discard.count(move.card) == 1 and move.card not in g.players[move.player].hand
        assert E.check_invariants(g) == []
        assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)
