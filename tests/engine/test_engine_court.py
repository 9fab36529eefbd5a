"""The Royal Court on the generated engine: visit cost, paying with wigs, visits refused,
follows, refills during a turn, blocked State actions, events, Decrees and the Queen.

Each test builds a state with the public API and the conftest helpers, then plays moves."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import (
    ROOT,
    card_of,
    drop_favors,
    empty_pile,
    finish_turn,
    give_favor,
    move_card,
    place_officials,
    set_hand,
    sound,
    treasury_index,
)


def _no_favors(g: Any) -> None:
    for seat in range(len(g.players)):
        drop_favors(g, seat)


# --- the cost of a visit -----------------------------------------------------------------


def test_cost_is_never_below_zero(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g.treasury = treasury_index(g, modifier=min(g.rs.treasury_modifiers))
    assert g.rs.treasury_modifiers[g.treasury] < 0
    for n in g.rs.nobles:
        assert engine.visit_cost(g, 0, n.id) == 0


def test_neutral_officials_count_plaza_and_own_officials_do_not(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g.treasury = treasury_index(g, modifier=0)
    noble = g.rs.nobles[0].id
    assert engine.visit_cost(g, 0, noble) == 0
    place_officials(g, 1, noble, 2)  # another player's Officials in the office: count
    assert engine.visit_cost(g, 0, noble) == 2
    g.offices[noble]["neutral"] = 1  # a neutral Official: counts
    assert engine.visit_cost(g, 0, noble) == 3
    place_officials(g, 0, noble, 3)  # my own Officials: do not count
    assert engine.visit_cost(g, 0, noble) == 3
    place_officials(g, 2, noble, 4, where="plazas")  # the plaza: does not count
    assert engine.visit_cost(g, 0, noble) == 3
    # ...but for the owner of the plaza Officials the office still counts mine and Green's
    assert engine.visit_cost(g, 2, noble) == 2 + 1 + 3
    sound(engine, g)


def test_two_players_have_neutral_officials_in_every_office(engine: Any, fresh: Any) -> None:
    g = fresh(2)
    assert "two-player" in g.variants
    g.treasury = treasury_index(g, modifier=0)
    for n in g.rs.nobles:
        assert g.offices[n.id] == {"neutral": g.rs.neutral_officials}
        assert engine.visit_cost(g, 0, n.id) == g.rs.neutral_officials > 0


def _manuel_visit(engine: Any, g: Any, seat: int = 0) -> Any:
    card = card_of(engine, g, "manuel")
    set_hand(g, seat, [card])
    return engine.Move("visit", seat, card=card, business=g.rs.businesses[0])


def test_wigs_pay_only_the_lacking_influence(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    _no_favors(g)
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 1, "manuel", 3)
    move = _manuel_visit(engine, g)
    p = g.players[0]
    p.influence, p.wigs, p.reis = 1, 5, 20
    assert engine.visit_cost(g, 0, "manuel") == 3
    assert engine.wigs_due(g, 0, 3) == 2
    after = engine.apply_move(g, move)
    assert (after.players[0].influence, after.players[0].wigs) == (0, 3)
    # with enough Influence no wig is paid
    p.influence = 4
    after = engine.apply_move(g, move)
    assert (after.players[0].influence, after.players[0].wigs) == (1, 5)


def test_visit_refused_when_influence_and_wigs_cannot_pay(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 1, "manuel", 3)
    move = _manuel_visit(engine, g)
    p = g.players[0]
    p.influence, p.wigs, p.reis = 1, 1, 20
    before = engine.to_json(g)
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(g, move)
    assert exc.value.rule == "wigs-for-influence"
    assert "3 Influence" in exc.value.reason
    assert engine.to_json(g) == before
    assert not [m for m in engine.legal_moves(g) if m.kind == "visit"]
    p.wigs = 2  # now Influence 1 + 2 wigs cover the cost of 3
    assert engine.explain_move(g, move) is None


def test_visit_refused_when_the_noble_action_cannot_be_done_in_full(
    engine: Any, fresh: Any
) -> None:
    g = fresh(3)
    g.treasury = treasury_index(g, modifier=0)
    move = _manuel_visit(engine, g)
    p = g.players[0]
    p.reis, p.influence = 0, 0  # the land price cannot be paid
    before = engine.to_json(g)
    err = engine.explain_move(g, move)
    assert err is not None and err.rule == "visit"
    assert "whole Noble action" in str(err)
    with pytest.raises(engine.IllegalMove):
        engine.apply_move(g, move)
    assert engine.to_json(g) == before
    assert not [m for m in engine.legal_moves(g) if m.kind == "visit"]
    # with the money the same visit is legal
    p.reis = 20
    assert engine.explain_move(g, move) is None
    assert [m for m in engine.legal_moves(g) if m.kind == "visit"]


def test_visit_refused_when_no_store_is_left(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    move = _manuel_visit(engine, g)
    p = g.players[0]
    p.reis = 50
    b = g.rs.businesses
    for i in range(g.rs.start_stores):
        p.stores[b[i % len(b)]] += 1
    err = engine.explain_move(g, move)
    assert err is not None and err.rule == "visit"


# --- follows -------------------------------------------------------------------------------


def _visit_with_followers(engine: Any, g: Any, visitor: int, holders: list[int]) -> Any:
    """Seat `visitor` visits Manuel; `holders` hold Manuel's Royal Favor."""
    _no_favors(g)
    for seat in holders:
        give_favor(g, seat, "manuel")
    for p in g.players:
        p.reis = 30
    g.current = g.actor = visitor
    move = _manuel_visit(engine, g, visitor)
    return engine.apply_move(g, move)


def test_follows_go_clockwise_from_the_visitor(engine: Any, fresh: Any) -> None:
    g = _visit_with_followers(engine, fresh(4), visitor=2, holders=[0, 1, 3])
    asked = []
    while g.phase == "follow":
        asked.append(g.actor)
        g = engine.apply_move(g, engine.Move("decline", g.actor))
    assert asked == [3, 0, 1]
    assert g.phase == "refill" and g.actor == 2


def test_only_players_with_the_favor_are_asked(engine: Any, fresh: Any) -> None:
    g = _visit_with_followers(engine, fresh(4), visitor=0, holders=[2])
    assert g.phase == "follow" and g.actor == 2
    g = _visit_with_followers(engine, fresh(4), visitor=0, holders=[])
    assert g.phase == "refill"


def test_a_follow_returns_the_royal_favor(engine: Any, fresh: Any) -> None:
    g = _visit_with_followers(engine, fresh(3), visitor=0, holders=[1])
    supply = g.favors["manuel"]
    follow = next(m for m in engine.legal_moves(g) if m.kind == "follow")
    after = engine.apply_move(g, follow)
    assert "manuel" not in after.players[1].royal_favors
    assert after.favors["manuel"] == supply + 1
    sound(engine, after)


def test_a_follow_needs_that_nobles_royal_favor(engine: Any, fresh: Any) -> None:
    g = _visit_with_followers(engine, fresh(3), visitor=0, holders=[1])
    drop_favors(g, 1)
    give_favor(g, 1, "king")  # a favor, but of another Noble
    state = engine.from_json(engine.to_json(g))  # a saved game in this position loads
    move = engine.Move("follow", 1, noble_action=True, business=g.rs.businesses[0])
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(state, move)
    assert exc.value.rule == "follow"
    assert [m.kind for m in engine.legal_moves(state)] == ["decline"]


def test_a_follow_pays_the_visit_cost_and_takes_one_action(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 2, "manuel", 2)
    g = _visit_with_followers(engine, g, visitor=0, holders=[1])
    g.players[1].influence = 5
    both = engine.Move("follow", 1, state_action="plan", noble_action=True, business="gold")
    err = engine.explain_move(g, both)
    assert err is not None and err.rule == "follow"
    after = engine.apply_move(g, engine.Move("follow", 1, state_action="plan"))
    assert after.players[1].influence == 5 - 2
    assert len(after.players[1].plans) == len(g.players[1].plans) + 1


def test_no_refills_during_follows_the_visitor_refills_after(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    _no_favors(g)
    give_favor(g, 1, "marquis")
    give_favor(g, 2, "marquis")
    card = card_of(engine, g, "marquis")
    set_hand(g, 0, [card])
    shown = sorted(g.decree_display)
    piles = {k: list(v) for k, v in g.piles.items()}
    g = engine.apply_move(g, engine.Move("visit", 0, card=card, decrees=(shown[0],)))
    assert g.phase == "follow" and g.actor == 1
    assert shown[0] not in [m.decrees[0] for m in engine.legal_moves(g) if m.decrees]
    g = engine.apply_move(g, engine.Move("follow", 1, noble_action=True, decrees=(shown[1],)))
    assert g.phase == "follow" and g.actor == 2
    g = engine.apply_move(g, engine.Move("follow", 2, noble_action=True, decrees=(shown[2],)))
    # after both follows: the Decree display is still short, the display untouched
    assert len(g.decree_display) == g.rs.decree_display - 3
    assert g.piles == piles
    assert (g.phase, g.actor) == ("refill", 0)
    assert {m.kind for m in engine.legal_moves(g)} == {"draw"}
    g = finish_turn(engine, g)
    assert len(g.players[0].hand) == g.rs.hand_size
    assert len(g.decree_display) == g.rs.decree_display  # refilled at the end of the turn
    assert (g.phase, g.current) == ("action", 1)


def test_follows_are_allowed_in_the_final_round(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g.period, g.game_end_round, g.final_round = 2, 1, 2
    g.fired = ["period-end.display", "game-end.display"]
    g = _visit_with_followers(engine, g, visitor=0, holders=[1])
    assert g.rs.follows_allowed
    assert g.phase == "follow" and g.actor == 1


# --- goods on State actions -----------------------------------------------------------------


def test_trade_puts_a_good_that_blocks_the_state_action(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    card = card_of(engine, g, "manuel")
    set_hand(g, 0, [card])
    trade = next(m for m in engine.legal_moves(g) if m.kind == "trade" and m.state_action == "plan")
    after = engine.apply_move(g, trade)
    assert after.blocked == ["plan"]
    assert after.players[0].goods[trade.good] == g.players[0].goods[trade.good] - 1
    after = finish_turn(engine, after)
    assert after.blocked == []  # the goods leave at the end of the turn


def test_goods_on_state_actions_block_followers(engine: Any, fresh: Any) -> None:
    g = _visit_with_followers(engine, fresh(3), visitor=0, holders=[1])
    g.blocked = ["plan"]  # a good sits on Manuel's Plan action for the rest of the turn
    options = {m.state_action for m in engine.legal_moves(g) if m.kind == "follow"}
    assert "plan" not in options and "officials" in options
    with pytest.raises(engine.IllegalMove) as exc:
        engine.apply_move(g, engine.Move("follow", 1, state_action="plan"))
    assert exc.value.rule == "nobles.state-actions-blocked"


# --- events -----------------------------------------------------------------------------------


def test_a_sponsored_store_pays_the_treasury_value_twice(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    rs = g.rs
    card = card_of(engine, g, rs.treasury_pile, event_action="build-store")
    set_hand(g, 0, [card])
    p = g.players[0]
    p.reis, p.influence = 30, 0
    value = rs.treasury_values[g.treasury]
    land = rs.noble_actions["build-store"].land_price(g, p, engine.Ctx())
    rubble_part = land - value
    after = engine.apply_move(g, engine.Move("sponsor", 0, card=card, business="books"))
    assert p.reis - after.players[0].reis == 2 * value + rubble_part
    assert after.players[0].stores["books"] == 1
    assert after.treasury == min(g.treasury + rs.treasury_up, len(rs.treasury_values) - 1)


def test_a_sponsor_refused_for_money_says_the_cost_in_the_games_money(
        engine: Any, fresh: Any) -> None:
    """The refusal shows the cost with its term (`{price|money}` in the require's reason):
    "the event costs 3 réis", singular for one (it read "the event costs 3")."""
    g = fresh(3)
    rs = g.rs
    card = card_of(engine, g, rs.treasury_pile, event_action="build-store")
    set_hand(g, 0, [card])
    terms = yaml.safe_load((ROOT / "rules" / "game.yaml").read_text(encoding="utf-8"))["terms"]
    money, one = terms["money"], terms["money_one"]
    for value in sorted(set(rs.treasury_values)):
        if value < 1:
            continue
        g.treasury = rs.treasury_values.index(value)
        p = g.players[0]
        p.reis, p.influence = 0, 0
        why = engine.explain_move(g, engine.Move("sponsor", 0, card=card, business="books"))
        assert why is not None
        assert f"costs {value} {one if value == 1 else money} and" in str(why), str(why)


def test_events_cannot_be_followed(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    for seat in (1, 2):
        for n in g.rs.nobles:
            if g.favors[n.id]:
                give_favor(g, seat, n.id)
    card = card_of(engine, g, g.rs.treasury_pile, event_action="take-decree")
    set_hand(g, 0, [card])
    g.players[0].reis = 30
    after = engine.apply_move(
        g, engine.Move("sponsor", 0, card=card, decrees=(g.decree_display[0],))
    )
    assert after.phase == "refill" and after.actor == 0
    assert after.visit is None


# --- Decrees -----------------------------------------------------------------------------------


def _marquis_turn(engine: Any, g: Any, markers: int) -> tuple[Any, int]:
    _no_favors(g)
    card = card_of(engine, g, "marquis")
    set_hand(g, 0, [card])
    g.players[0].markers = {"marquis": markers} if markers else {}
    return g, card


def test_extra_decree_needs_a_rubble_set_marker_on_the_marquis(engine: Any, fresh: Any) -> None:
    g, card = _marquis_turn(engine, fresh(3), markers=0)
    a, b = sorted(g.decree_display)[:2]
    two = engine.Move("visit", 0, card=card, decrees=(a, b))
    err = engine.explain_move(g, two)
    assert err is not None and err.rule == "take-decree.extra-pick"
    assert all(len(m.decrees) <= 1 for m in engine.legal_moves(g))
    g.players[0].markers = {"manuel": 1}  # a marker on another Noble does not help
    assert engine.explain_move(g, two) is not None


def test_extra_decree_discards_the_marker_and_no_refill_between_picks(
    engine: Any, fresh: Any
) -> None:
    g, card = _marquis_turn(engine, fresh(3), markers=1)
    shown = list(g.decree_display)
    a, b = sorted(shown)[:2]
    assert any(len(m.decrees) == 2 for m in engine.legal_moves(g))
    after = engine.apply_move(g, engine.Move("visit", 0, card=card, decrees=(a, b)))
    assert after.players[0].decrees == [a, b]
    assert after.players[0].markers == {"marquis": 0}
    # both picks came from the display as it was: nothing was refilled in between
    assert sorted(after.decree_display) == sorted(d for d in shown if d not in (a, b))


def test_a_pick_given_in_another_order_is_refused_saying_the_order(
    engine: Any, fresh: Any
) -> None:
    """The legal moves list a pick of Decrees in one order; the same Decrees in another order
    are refused (the engine accepts only moves it lists), saying which order it lists, and
    the state is unchanged."""
    g, card = _marquis_turn(engine, fresh(3), markers=1)
    listed = next(m for m in engine.legal_moves(g) if m.kind == "visit" and len(m.decrees) == 2)
    turned = engine.Move("visit", 0, card=listed.card, state_action=listed.state_action,
                         noble_action=listed.noble_action, favor=listed.favor,
                         decrees=tuple(reversed(listed.decrees)))
    assert turned not in engine.legal_moves(g)
    before = engine.dumps(g)
    err = engine.explain_move(g, turned)
    assert err is not None and "in another order" in str(err), str(err)
    assert str(list(listed.decrees)) in str(err)
    with pytest.raises(engine.IllegalMove, match="another order"):
        engine.apply_move(g, turned)
    assert engine.dumps(g) == before
    # a move whose items are not those of any legal move says nothing of an order
    other = engine.Move("visit", 0, card=card, decrees=("no-such-decree",))
    assert "order" not in str(engine.explain_move(g, other))


def test_at_most_one_extra_decree(engine: Any, fresh: Any) -> None:
    g, card = _marquis_turn(engine, fresh(3), markers=2)
    three = tuple(sorted(g.decree_display)[:3])
    err = engine.explain_move(g, engine.Move("visit", 0, card=card, decrees=three))
    assert err is not None and err.rule == "take-decree.extra-pick"
    assert max(len(m.decrees) for m in engine.legal_moves(g)) == 2


# --- the Queen ---------------------------------------------------------------------------------


def _queen_card(engine: Any) -> int:
    """The card whose reveal sets a flag (a hook of the Queen variant on `card-revealed`):
    found by turning each card face up on its pile."""
    g = engine.new_game(3, ("queen",), 0)
    for number, c in sorted(g.rs.cards.items()):
        trial = g.clone()
        trial.piles[c.type].append(number)
        trial.rs.procs["reveal-top"].run(trial, 0, c.type)
        if trial.flags:
            return number
    raise AssertionError("no card sets a flag when it is revealed")


def _reveal_queen(engine: Any, g: Any) -> Any:
    """Put the Queen's card second from the top of its pile; seat 0 draws the top card."""
    queen = _queen_card(engine)
    kind = g.rs.cards[queen].type
    pile = g.piles[kind]
    move_card(g, queen, pile)
    move_card(g, card_of(engine, g, kind, exclude=(queen,)), pile)
    set_hand(g, 0, g.players[0].hand[:4])
    g.phase = "refill"
    return engine.apply_move(g, engine.Move("draw", 0, pile=kind))


def test_queen_stops_decrees_from_her_card_on(engine: Any, fresh: Any) -> None:
    g = fresh(3, ("queen",))
    queen = _queen_card(engine)
    assert g.rs.cards[queen].deck == "brown"
    assert engine.noble_name(g, "marquis") == "Marquis de Pombal"
    g = _reveal_queen(engine, g)
    assert g.flags == ["queen"]
    assert engine.noble_name(g, "marquis") == "Queen Mariana Vitória"
    # the drawing player's turn is over; from now on nobody can take a Decree in any way
    assert (g.phase, g.actor) == ("action", 1)
    _no_favors(g)
    give_favor(g, 2, "marquis")
    marquis = card_of(engine, g, "marquis")
    event = card_of(engine, g, g.rs.treasury_pile, event_action="take-decree", exclude=(queen,))
    set_hand(g, 1, [marquis, event])
    g.players[1].reis = 30
    moves = engine.legal_moves(g)
    assert not [m for m in moves if m.decrees]
    visits = [m for m in moves if m.kind == "visit"]
    assert visits and {m.state_action for m in visits} >= {None, "production"}
    d = g.decree_display[0]
    for bad in (
        engine.Move("visit", 1, card=marquis, decrees=(d,)),
        engine.Move("sponsor", 1, card=event, decrees=(d,)),
    ):
        err = engine.explain_move(g, bad)
        assert err is not None and err.rule == "take-decree"
    err = engine.explain_move(g, engine.Move("visit", 1, card=marquis, decrees=(d,)))
    assert "Queen Mariana Vitória" in str(err)
    # a visit to her seat is State actions only; followers cannot take a Decree either
    g2 = engine.apply_move(g, engine.Move("visit", 1, card=marquis))
    assert (g2.phase, g2.actor) == ("follow", 2)
    assert not [m for m in engine.legal_moves(g2) if m.noble_action]
    err = engine.explain_move(g2, engine.Move("follow", 2, noble_action=True, decrees=(d,)))
    assert err is not None and err.rule == "take-decree"


def test_without_the_queen_variant_her_card_changes_nothing(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    g = _reveal_queen(engine, g)
    assert g.flags == []
    assert engine.noble_name(g, "marquis") == "Marquis de Pombal"


def test_queen_flag_set_when_the_brown_display_is_dealt(engine: Any, fresh: Any) -> None:
    g = fresh(3, ("queen",))
    queen = _queen_card(engine)
    brown = g.reserve["brown"]
    brown.remove(queen)
    brown.append(queen)  # dealt last: on top of its pile
    empty_pile(g, "treasury")
    empty_pile(g, "manuel")
    empty_pile(g, "marquis", keep=1)
    set_hand(g, 0, g.players[0].hand[:4])
    g.phase = "refill"
    g = engine.apply_move(g, engine.Move("draw", 0, pile="marquis"))
    assert g.fired == ["period-end.display"]
    while g.phase == "hand-discard":
        g = engine.apply_move(g, engine.Move("hand-discard", g.actor))
    assert g.period == 2 and "queen" in g.flags
