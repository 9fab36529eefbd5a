"""Turn flow on the generated engine: the end of the period (both triggers, finishing the turn,
the steps in order) and the end of the game (both triggers, the round, one more round)."""

from __future__ import annotations

from collections import Counter
from math import prod
from typing import Any

from conftest import (
    build_store_visit,
    card_of,
    drop_favors,
    empty_pile,
    finish_turn,
    give_favor,
    period_two,
    set_hand,
    set_rubble,
    sound,
)


def _decline_all(engine: Any, g: Any) -> Any:
    while g.phase == "follow":
        g = engine.apply_move(g, engine.Move("decline", g.actor))
    return g


def _place_markers(engine: Any, g: Any) -> Any:
    while g.phase == "marker":
        g = engine.apply_move(g, engine.Move("marker", g.actor, noble="marquis"))
    return g


# --- the end of the period ------------------------------------------------------------------


def test_period_ends_on_a_players_own_second_rubble_set(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    set_rubble(g, 0, 1, cubes=2)
    set_rubble(g, 1, 1, cubes=2)
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    assert g.players[0].rubble_sets == 2
    assert g.fired == ["period-end.rubble"] and g.period_end_by == 0
    assert g.phase == "marker"  # the new set's marker first; the turn goes on
    g = _place_markers(engine, g)
    assert g.period == 1 and g.phase in ("follow", "refill")


def test_two_players_with_one_set_each_do_not_end_the_period(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    set_rubble(g, 0, 1)
    set_rubble(g, 1, 1, cubes=1)
    g = engine.apply_move(g, build_store_visit(engine, g, 1 if g.current == 1 else 0))
    assert g.fired == []


def test_period_end_finishes_the_turn_then_runs_the_steps_in_order(
    engine: Any, fresh: Any
) -> None:
    g = fresh(3)
    for seat in range(3):
        drop_favors(g, seat)
    give_favor(g, 2, "manuel")
    set_rubble(g, 0, 1, cubes=2)
    set_rubble(g, 1, 1)
    decrees_before = list(g.decree_display)
    red = [c for pile in g.piles.values() for c in pile]
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    g = _place_markers(engine, g)
    # the turn is finished first: the follow (here Orange declines) and the refill
    assert (g.phase, g.actor) == ("follow", 2)
    g = engine.apply_move(g, engine.Move("decline", 2))
    assert (g.phase, g.actor, g.period) == ("refill", 0, 1)
    wigs = [p.wigs for p in g.players]
    sets = [p.rubble_sets for p in g.players]
    g = engine.apply_move(g, engine.legal_moves(g)[0])  # the visitor draws back to 5
    # 1. the display is discarded, the Decrees are not
    assert all(c in g.discard for c in red if c not in {x for p in g.players for x in p.hand})
    assert sorted(g.decree_display) == sorted(decrees_before)
    # 2. rubble wigs, 3. new ships: both done before the hand discard
    assert g.phase == "hand-discard"
    per_set = g.rs.period_wigs_per_set
    assert [p.wigs for p in g.players] == [w + per_set * s for w, s in zip(wigs, sets, strict=True)]
    per = len(g.players) - 1
    assert g.shipyard == ["brown"] * per + ["purple"] * per  # purple on top
    # 4. the hand discard starts with the player who triggered, clockwise
    assert g.discard_queue == [0, 1, 2] and g.actor == 0
    assert all(not pile for pile in g.piles.values())  # 6. the brown display comes later
    order = []
    while g.phase == "hand-discard":
        order.append(g.actor)
        g = engine.apply_move(g, engine.Move("hand-discard", g.actor, cards=()))
    assert order == [0, 1, 2]
    # 5. new hands from the purple deck, 6. the brown display; play goes on with seat 1
    assert "purple" not in g.reserve and "brown" not in g.reserve
    assert all(len(p.hand) == g.rs.hand_size for p in g.players)
    assert {g.rs.cards[c].deck for pile in g.piles.values() for c in pile} == {"brown"}
    assert (g.period, g.phase, g.current, g.actor) == (2, "action", 1, 1)
    assert len(g.decree_display) == g.rs.decree_display
    sound(engine, g)


def test_period_end_triggered_by_a_follower(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    for seat in range(3):
        drop_favors(g, seat)
    give_favor(g, 1, "manuel")
    set_rubble(g, 1, 1, cubes=2)
    g.players[1].reis = 30
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    assert (g.phase, g.actor) == ("follow", 1)
    g = engine.apply_move(g, engine.Move("follow", 1, noble_action=True, business="books"))
    g = _place_markers(engine, g)
    assert g.fired == ["period-end.rubble"] and g.period_end_by == 1
    g = finish_turn(engine, g)
    assert g.phase == "hand-discard" and g.discard_queue == [1, 2, 0]
    while g.phase == "hand-discard":
        g = engine.apply_move(g, engine.Move("hand-discard", g.actor, cards=()))
    assert (g.period, g.current) == (2, 1)  # the player after the one whose turn it was


def test_period_ends_when_three_display_piles_are_empty(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    piles = g.rs.piles
    for pile in piles[:2]:
        empty_pile(g, pile)
    empty_pile(g, piles[2], keep=1)
    set_hand(g, 0, g.players[0].hand[:3])
    g.phase = "refill"
    g = engine.apply_move(g, engine.Move("draw", 0, pile=piles[2]))
    assert g.fired == ["period-end.display"] and g.period_end_by == 0
    assert g.phase == "refill" and g.actor == 0  # the refill is finished first
    g = engine.apply_move(g, engine.Move("draw", 0, pile=piles[3]))
    assert g.phase == "hand-discard" and g.actor == 0


def test_hand_discard_one_bottom_reward_per_noble_no_penalty(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    rs = g.rs
    reis_cards = [
        n for n, c in sorted(rs.cards.items())
        if c.type == "manuel" and dict(c.reward).get("reis", 0) > 0 and c.penalty
    ]
    king = next(
        n for n, c in sorted(rs.cards.items())
        if c.type == "king" and dict(c.reward).get("reis", 0) > 0
    )
    treasury = card_of(engine, g, rs.treasury_pile)
    hand = [reis_cards[0], reis_cards[1], king, treasury]
    set_hand(g, 0, hand)
    g.phase, g.period_end_by, g.period_step = "hand-discard", 0, 3
    g.discard_queue = [0, 1, 2]
    for cards in g.piles.values():  # the period end's first step discarded the display
        g.discard.extend(cards)
        cards.clear()
    g = sound(engine, engine.from_json(engine.to_json(g)))
    p = g.players[0]
    expected = dict(rs.cards[reis_cards[0]].reward)["reis"] + dict(rs.cards[king].reward)["reis"]
    # the listed discard of the whole hand in which the first Manuel card gives the reward
    # (apply_move accepts only what legal_moves lists)
    move = next(
        m for m in engine.legal_moves(g)
        if sorted(m.cards) == sorted(hand)
        and next(c for c in m.cards if rs.cards[c].type == "manuel") == reis_cards[0]
    )
    after = engine.apply_move(g, move)
    assert after.players[0].reis == p.reis + expected  # the 2nd Manuel card gives nothing
    assert after.players[0].influence == p.influence  # penalties ignored
    assert after.players[0].hand == []
    assert (after.phase, after.actor) == ("hand-discard", 1)
    # every subset of the hand, with a choice of the rewarded card per Noble
    hand1 = after.players[1].hand
    expected_moves = 0
    for mask in range(1 << len(hand1)):
        per_noble = Counter(rs.cards[c].type for i, c in enumerate(hand1)
                            if mask >> i & 1 and rs.cards[c].type != rs.treasury_pile)
        expected_moves += prod(per_noble.values())
    assert len(engine.legal_moves(after)) == expected_moves


# --- the end of the game ---------------------------------------------------------------------


def _discard_turn(engine: Any, g: Any) -> Any:
    card = g.players[g.actor].hand[0]
    g = engine.apply_move(g, engine.Move("discard", g.actor, card=card))
    return finish_turn(engine, g)


def test_game_end_on_own_fourth_set_finishes_the_round_plus_one(engine: Any, fresh: Any) -> None:
    g = period_two(engine, fresh(3))
    assert (g.current, g.round) == (1, 1)
    set_rubble(g, 1, 3, cubes=2)
    g = engine.apply_move(g, build_store_visit(engine, g, 1))
    assert g.fired[-1] == "game-end.rubble"
    assert (g.game_end_round, g.final_round) == (1, 2)
    g = _place_markers(engine, _decline_all(engine, g))
    g = finish_turn(engine, g)
    turns = []
    while g.phase != "over":
        turns.append((g.round, g.current))
        g = _discard_turn(engine, g)
    # the rest of round 1 (seat 2), then one more full round
    assert turns == [(1, 2), (2, 0), (2, 1), (2, 2)]
    assert engine.legal_moves(g) == []
    err = engine.explain_move(g, engine.Move("pass", 0))
    assert err is not None and err.rule == "game-end"


def test_game_end_when_three_piles_are_empty_again(engine: Any, fresh: Any) -> None:
    g = period_two(engine, fresh(4))
    piles = g.rs.piles
    g = _discard_turn(engine, g)  # seat 1
    assert g.current == 2
    for pile in piles[:2]:
        empty_pile(g, pile)
    empty_pile(g, piles[2], keep=1)
    card = g.players[2].hand[0]
    g = engine.apply_move(g, engine.Move("discard", 2, card=card))
    g = engine.apply_move(g, engine.Move("draw", 2, pile=piles[2]))
    assert g.fired == ["period-end.display", "game-end.display"]
    assert (g.game_end_round, g.final_round) == (1, 2)
    turns = []
    while g.phase != "over":
        turns.append((g.round, g.current))
        g = _discard_turn(engine, g) if g.phase == "action" else finish_turn(engine, g)
    assert turns == [(1, 3), (2, 0), (2, 1), (2, 2), (2, 3)]  # rest of round 1, then round 2


def test_rubble_wigs_at_the_end_of_the_period(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    set_rubble(g, 2, 1)
    w = g.players[2].wigs
    g = period_two(engine, g)
    assert g.players[2].wigs == w + g.rs.period_wigs_per_set
