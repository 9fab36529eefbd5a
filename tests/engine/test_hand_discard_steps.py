"""The period-end hand discard written as steps (rules/flow.yaml `moves: hand-discard`): a choice
of any set of the hand (`choose … up_to`) in which one card of each Noble leads (`leads`), and
the reward of each Noble's first card (`apply … choices: false`). The engine lists the moves in
the order the hand-written generator listed them; a house rule written in YAML alone changes
the decision."""

from __future__ import annotations

import random
import re
import shutil
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from conftest import set_hand, sound

from lisboa_rules import pipeline

ROOT = Path(__file__).resolve().parents[2]
ENGINE = "lisboa_engine.py"


def _earlier_moves(g: Any, seat: int) -> list[tuple[int, ...]]:
    """The cards of each move of the earlier hand-written generator, in its order: every
    subset of the sorted hand in counting order; for each, one card per Noble chosen to give
    the reward (the Nobles in the order they appear), listed first and sorted."""
    rs = g.rs
    hand = sorted(g.players[seat].hand)
    out = []
    for mask in range(1 << len(hand)):
        chosen = [c for i, c in enumerate(hand) if mask >> i & 1]
        by_noble: dict[str, list[int]] = {}
        for c in chosen:
            if rs.cards[c].type != rs.treasury_pile:
                by_noble.setdefault(rs.cards[c].type, []).append(c)
        picks: list[list[int]] = [[]]
        for cards in by_noble.values():
            picks = [[*pick, c] for pick in picks for c in cards]
        for pick in picks:
            out.append((*sorted(pick), *[c for c in chosen if c not in pick]))
    return out


def _at_hand_discard(E: Any, seed: int, size: int = 5) -> Any:
    """A game at the period-end hand discard, seat 0 to discard a random hand of `size`
    cards (several of one Noble and a Treasury card among them, most of the time)."""
    rng = random.Random(seed)
    g = E.new_game(3, (), seed)
    rs = g.rs
    nobles = sorted({c.type for c in rs.cards.values() if c.type != rs.treasury_pile})
    pool = sorted(
        n for n, c in rs.cards.items() if c.type in nobles[:2] or c.type == rs.treasury_pile
    )
    set_hand(g, 0, rng.sample(pool, size))
    g.phase, g.period_end_by, g.actor = "hand-discard", 0, 0
    g.period_step = [s.id for s in rs.period_end].index("period-end.hand-discard")
    g.discard_queue = [0, 1, 2]
    for cards in g.piles.values():  # the period end's first step discarded the display
        g.discard.extend(cards)
        cards.clear()
    return sound(E, E.from_json(E.to_json(g)))


@pytest.mark.parametrize("seed", [1, 2, 3, 5, 8, 13])
def test_the_moves_are_those_of_the_earlier_generator_in_order(engine: Any, seed: int) -> None:
    g = _at_hand_discard(engine, seed)
    assert [m.cards for m in engine.legal_moves(g)] == _earlier_moves(g, 0)
    assert all(m.kind == "hand-discard" and m.player == 0 for m in engine.legal_moves(g))


@pytest.mark.parametrize("seed", [1, 4, 9])
def test_each_listed_discard_rewards_the_first_card_of_each_noble(engine: Any, seed: int) -> None:
    g = _at_hand_discard(engine, seed)
    rs = g.rs
    for move in random.Random(seed).sample(engine.legal_moves(g), 6):
        after = engine.apply_move(g, move)
        want = g.players[0].reis
        seen: set[str] = set()
        for c in move.cards:
            t = rs.cards[c].type
            if t != rs.treasury_pile and t not in seen:
                seen.add(t)
                want += dict(rs.cards[c].reward).get("reis", 0)
        p = after.players[0]
        assert p.reis == want, move
        assert sorted(p.hand) == sorted(set(g.players[0].hand) - set(move.cards))
        assert after.discard[-len(move.cards) :] == list(move.cards) or not move.cards
        assert (after.phase, after.actor, after.discard_queue) == ("hand-discard", 1, [1, 2])


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("twice", "discard only cards from your hand, each once"),
        ("not held", "discard only cards from your hand, each once"),
        ("a field more", "a hand-discard move does not choose pile"),
    ],
)
def test_a_discard_of_other_cards_is_refused_with_the_rule(
    engine: Any, how: str, words: str
) -> None:
    g = _at_hand_discard(engine, 3)
    hand = sorted(g.players[0].hand)
    other = next(c for c in sorted(g.rs.cards) if c not in hand)
    move = {
        "twice": engine.Move("hand-discard", 0, cards=(hand[0], hand[0])),
        "not held": engine.Move("hand-discard", 0, cards=(hand[0], other)),
        "a field more": engine.Move("hand-discard", 0, cards=(hand[0],), pile=g.rs.piles[0]),
    }[how]
    problem = engine.explain_move(g, move)
    assert problem is not None and problem.rule == "period-end.hand-discard"
    assert words in str(problem)
    with pytest.raises(engine.IllegalMove):
        engine.apply_move(g, move)


# --- a house rule in YAML alone ------------------------------------------------------------


def _house(tmp: Path, name: str, overlay: str) -> types.ModuleType:
    """The rules with a variant overlay folded in (`--variant NAME`), compiled; its engine."""
    shutil.copytree(ROOT / "rules", tmp / "rules")
    (tmp / "rules" / "variants" / f"{name}.yaml").write_text(textwrap.dedent(overlay))
    result = pipeline.compile_rules(tmp / "rules", (name,))
    errors = [f"{d.span}: {d.message}" for d in result.diagnostics if d.is_error]
    assert not errors, errors
    mod = types.ModuleType("_hand_discard_" + re.sub(r"\W", "_", name))
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(result.files[ENGINE], f"<{name}>", "exec"), mod.__dict__)
    finally:
        sys.modules.pop(mod.__name__, None)
    return mod


_AT_MOST = """\
kind: variant
id: discard-at-most
title: A short discard
applies: chosen
text: At the end of a period, each player may discard at most {n} cards.
source: [seed:000#end-of-the-period]
callouts:  # the period end's words ("any number of cards") name the move's rule
  - rule: period-end.hand-discard
    text: With this house rule, each player discards at most {n} cards.
    source: [seed:000#end-of-the-period]
changes:
  flow:
    moves:
      - id: hand-discard
        steps:
          - id: hand-discard.cards
            choose: {{up_to: {n}}}
            count_reason: {{$add: with this house rule you discard at most {n} cards}}
            text: With this house rule, discard at most {n} cards from your hand.
"""


@pytest.mark.parametrize("n", [0, 1, 2])
def test_a_house_rule_limits_the_hand_discard(tmp_path: Path, n: int) -> None:
    E = _house(tmp_path, "discard-at-most", _AT_MOST.format(n=n))
    for seed in (1, 2):
        g = _at_hand_discard(E, seed)
        moves = E.legal_moves(g)
        assert moves and max(len(m.cards) for m in moves) == n
        assert [m.cards for m in moves] == [c for c in _earlier_moves(g, 0) if len(c) <= n]
        hand = sorted(g.players[0].hand)
        more = E.explain_move(g, E.Move("hand-discard", 0, cards=tuple(hand[: n + 1])))
        assert more is not None and f"at most {n} cards" in str(more)


_NO_REWARD = """\
kind: variant
id: discard-no-reward
title: A bare discard
applies: chosen
text: At the end of a period, discarded cards give nothing.
source: [seed:000#end-of-the-period]
callouts:  # the period end's words (a reward per Noble) name the move's rule
  - rule: period-end.hand-discard
    text: With this house rule, discarded cards give nothing.
    source: [seed:000#end-of-the-period]
changes:
  flow:
    moves:
      - id: hand-discard
        steps:
          - id: hand-discard.cards
            choose: {leads: {$remove: true}}
            text: With this house rule, discard any number of cards; they give nothing.
          - id: hand-discard.each
            do:
              - {id: hand-discard.reward, $remove: true}
"""


def test_a_house_rule_drops_the_reward_and_the_choice_of_it(tmp_path: Path) -> None:
    E = _house(tmp_path, "discard-no-reward", _NO_REWARD)
    g = _at_hand_discard(E, 7)
    moves = E.legal_moves(g)
    assert len(moves) == 1 << len(g.players[0].hand)  # every subset once, no choice of leader
    whole = next(m for m in moves if len(m.cards) == len(g.players[0].hand))
    after = E.apply_move(g, whole)
    assert after.players[0].reis == g.players[0].reis
    assert after.players[0].hand == []
