"""Rule cases from the rulebook facts: a concrete situation, a move, the expected result.

Each test names the section of the project's rulebook facts (Lisboa rulebook facts, §N) whose
fact it checks, and writes the expected values itself (the facts file is not read). Facts that
the facts mark as unknown are assumptions of rules/provenance.yaml: where a test needs such a
value (the real icons of the Influence track, a ship's cost) it reads it from the engine's rule
set and checks the rulebook's procedure around it. Facts already asserted elsewhere are not
repeated here (tests/engine/test_engine_core.py, _court.py, _flow.py, _scoring.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from conftest import (
    at_the_church,
    build_store_visit,
    card_of,
    complete_plan,
    drop_favors,
    finish_turn,
    move_card,
    period_two,
    set_hand,
    set_rubble,
    sound,
)

NOBLES = ("manuel", "marquis", "king")


def _card(g: Any, type_: str, **reward: int) -> int:
    """A card of this type whose reward is exactly `reward` and whose penalty is in réis only
    (so that it leaves the Influence alone)."""
    rs = g.rs
    for n, c in sorted(rs.cards.items()):
        if (
            c.type == type_ and dict(c.reward) == reward
            and not {k for k, _ in c.penalty} - {"reis"}
        ):
            return n
    raise AssertionError(f"no {type_} card with the reward {reward}")


def _discard_turn(E: Any, g: Any) -> Any:
    card = g.players[g.actor].hand[0]
    return finish_turn(E, E.apply_move(g, E.Move("discard", g.actor, card=card)))


# --- §1 components and §3 setup ------------------------------------------------------------


def test_component_counts(engine: Any, fresh: Any) -> None:
    """§1 (R3 [R]): 82 Political cards in 4 decks, 20 Plans, 12 Royal Favor tiles (one per
    Noble per player: 3 Nobles x 4 players), 8 Officials, 8 houses and 5 Rubble Set markers
    per player; §2: blue starting cards, the red and brown displays, the purple refill."""
    g = fresh(4)
    rs = g.rs
    assert len(rs.cards) == 82
    assert set(Counter(c.deck for c in rs.cards.values())) == {"blue", "red", "purple", "brown"}
    assert len(rs.plans) == 20
    assert (rs.start_officials, rs.start_stores, rs.start_markers) == (8, 8, 5)
    held = Counter(n for p in g.players for n in p.royal_favors)
    assert {n: g.favors[n] + held[n] for n in NOBLES} == dict.fromkeys(NOBLES, 4)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_each_player_starts_with(engine: Any, players: int) -> None:
    """§3.2: each player has 5 Rubble Set markers, 8 houses (none built), 8 Officials [R],
    1 good of each of the 4 types [R], 10 réis, 1 Royal Favor tile, 1 random starting Plan
    (S2, S4) and 5 blue cards [S]."""
    g = sound(engine, engine.new_game(players, (), 3))
    assert len(g.plan_supply) == 20 - players
    for p in g.players:
        assert len(p.plans) == 1 and p.completed_plans == []
        assert p.markers_left == 5 and p.rubble_sets == 0
        assert p.officials == 8
        assert sum(p.stores.values()) == 0
        assert p.goods == {"gold": 1, "tools": 1, "books": 1, "cloth": 1}
        assert p.reis == 10
        assert len(p.royal_favors) == 1
        assert len(p.hand) == 5 and {g.rs.cards[c].deck for c in p.hand} == {"blue"}


def test_red_display_four_piles_one_per_card_type(engine: Any, fresh: Any) -> None:
    """§2 (S2, S4, S6 [S]; R1 [R] for the decks' roles): the period-1 display is the red deck
    in 4 piles of 5, one per card type (Treasury and each Noble); the rest of the blue deck is
    boxed; purple and brown are set aside."""
    g = fresh(3)
    rs = g.rs
    assert sorted(g.piles) == sorted(["treasury", *NOBLES])
    for pile, cards in g.piles.items():
        assert len(cards) == 5
        assert {rs.cards[c].deck for c in cards} == {"red"}
        assert {rs.cards[c].type for c in cards} == {pile}
    assert {rs.cards[c].deck for c in g.box} == {"blue"}
    assert len(g.box) == 20 - 3 * 5
    assert sorted(g.reserve) == ["brown", "purple"]


def test_a_draw_takes_the_top_card_of_the_chosen_pile(engine: Any, fresh: Any) -> None:
    """§4 step 3 (S3, S6 [S]): draw back up to 5, each card the face-up top card of a display
    pile of your choice."""
    g = fresh(3)
    set_hand(g, 0, g.players[0].hand[:3])
    g.phase = "refill"
    top = g.piles["king"][-1]
    g = engine.apply_move(g, engine.Move("draw", 0, pile="king"))
    assert g.players[0].hand[-1] == top and top not in g.piles["king"]
    assert (g.phase, g.actor) == ("refill", 0)  # still 4 cards: draw again
    g = engine.apply_move(g, engine.Move("draw", 0, pile="treasury"))
    assert len(g.players[0].hand) == 5
    assert (g.phase, g.current) == ("action", 1)


# --- §4 the four actions and §5 the portfolio ---------------------------------------------------


def test_visit_needs_a_noble_card_and_sponsor_a_treasury_card(engine: Any, fresh: Any) -> None:
    """§4 (S6, S10 [S]): a Visit plays a Noble card into the Royal Court, a Sponsor plays a
    Treasury card."""
    g = fresh(3)
    treasury = card_of(engine, g, g.rs.treasury_pile, event_action="build-store")
    manuel = card_of(engine, g, "manuel")
    set_hand(g, 0, [treasury, manuel])
    g.players[0].reis = 30
    assert engine.explain_move(g, engine.Move("visit", 0, card=treasury, business="gold"))
    assert engine.explain_move(g, engine.Move("sponsor", 0, card=manuel, business="gold"))
    assert engine.explain_move(g, engine.Move("visit", 0, card=manuel, business="gold")) is None
    assert engine.explain_move(g, engine.Move("sponsor", 0, card=treasury, business="gold")) is None


def test_treasury_card_to_the_portfolio(engine: Any, fresh: Any) -> None:
    """§5, §7 (S2, S3 [S]): a Treasury card played to your portfolio goes to the bottom row,
    gives réis equal to the current Treasury value, and then the marker moves 1 space down."""
    g = fresh(3)
    rs = g.rs
    card = card_of(engine, g, rs.treasury_pile)
    set_hand(g, 0, [card])
    g.treasury = 3
    value = rs.treasury_values[3]
    reis = g.players[0].reis
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert after.players[0].reis == reis + value
    assert after.treasury == 2
    assert after.players[0].treasury_row == [card] and after.players[0].portfolio == []


def test_noble_card_to_the_portfolio_gives_reward_and_penalty(engine: Any, fresh: Any) -> None:
    """§5 (S2, S3 [S]; §26 item 7): a Noble card played to your portfolio goes to the top row
    and you get its reward and also apply its penalty."""
    g = fresh(3)
    rs = g.rs
    card = next(
        n for n, c in sorted(rs.cards.items())
        if c.type in NOBLES and dict(c.reward).get("reis", 0) > 0
        and dict(c.penalty).get("influence", 0) < 0
    )
    set_hand(g, 0, [card])
    p = g.players[0]
    p.influence = 5
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    q = after.players[0]
    assert q.portfolio == [card] and q.treasury_row == []
    assert q.reis == p.reis + dict(rs.cards[card].reward)["reis"]
    assert q.influence == 5 + dict(rs.cards[card].penalty)["influence"]


# --- §6 the Influence track ---------------------------------------------------------------------


def test_influence_track_runs_from_0_to_10(engine: Any, fresh: Any) -> None:
    """§6 (R2 [R]): Influence runs from 0 to 10; it cannot go below 0 (no penalty for sitting
    at 0)."""
    g = fresh(3)
    rs = g.rs
    assert (rs.influence_min, rs.influence_max) == (0, 10)
    card = next(
        n for n, c in sorted(rs.cards.items())
        if c.type in NOBLES and dict(c.penalty).get("influence", 0) < 0
    )
    set_hand(g, 0, [card])
    g.players[0].influence = 0
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert after.players[0].influence == 0


def test_a_gain_is_the_sum_of_the_top_row(engine: Any, fresh: Any) -> None:
    """§6 (R2 [R]): every Influence gain gives the sum of the Influence values at the tops of
    the Noble cards (and Ships) of your portfolio's top row; the Cardinal's Church Scoring is
    one such gain (the Cardinal moved onto the Church icon)."""
    g = fresh(3)
    rs = g.rs
    p = g.players[0]
    on_top = [card_of(engine, g, "marquis"), card_of(engine, g, "king")]
    for c in on_top:
        move_card(g, c, p.portfolio)
    played = _card(g, "manuel", reis=2)
    set_hand(g, 0, [played])
    p.influence = 0
    row = [*on_top, played]  # the room for 2 cards: the oldest leaves
    expected = sum(rs.cards[c].influence for c in row[-2:])
    assert rs.portfolio_base == 2
    at_the_church(g)
    after = engine.apply_move(
        g, engine.Move("trade", 0, card=played, state_action="cardinal", good="cloth")
    )
    assert after.players[0].portfolio == row[-2:]
    assert engine.influence_gain(after, 0) == expected
    assert after.players[0].influence == expected


def test_paying_reis_with_influence_moves_to_the_next_real_icon(engine: Any, fresh: Any) -> None:
    """§6 (R2 [R]): for each real you need, move your Influence marker left to the next space
    that shows a real icon; at 0 you cannot generate more; a full track gives about 6 réis
    (S1 [S]). The icons' positions are an assumption (influence-reis-icons)."""
    g = fresh(3)
    rs = g.rs
    icons = sorted(rs.reis_icons)
    assert len(icons) == 6 and all(1 <= i < 10 for i in icons)
    p = g.players[0]
    p.reis, p.influence = 0, 10
    assert engine.can_pay_reis(g, p, 6) and not engine.can_pay_reis(g, p, 7)
    p.influence = 0
    assert not engine.can_pay_reis(g, p, 1)
    card = next(
        n for n, c in sorted(rs.cards.items())
        if c.type in NOBLES and dict(c.penalty) == {"reis": -2}
        and not {k for k, _ in c.reward} & {"reis", "influence", "influence_gain"}
    )
    set_hand(g, 0, [card])
    p.influence = 10
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert after.players[0].influence == icons[-2]  # 10 -> the icon at icons[-1] -> icons[-2]
    p.reis = 1  # réis first, Influence for the rest (assumption reis-before-influence)
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert (after.players[0].reis, after.players[0].influence) == (0, icons[-1])


# --- §8 the Nobles -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noble", "state_actions", "noble_action"),
    [
        ("manuel", {"officials", "plan"}, "build-store"),
        ("marquis", {"ship", "production"}, "take-decree"),
        ("king", {"cardinal", "royal-favor"}, "open-building"),
    ],
)
def test_each_noble_has_two_state_actions_and_one_noble_action(
    engine: Any, fresh: Any, noble: str, state_actions: set[str], noble_action: str
) -> None:
    """§8 (S6, S8 [S]): Manuel da Maia: Officials, Plan, Build a Store; the Marquis de Pombal:
    Ship, Production, Take a Decree; the King: Cardinal, Royal Favor, Open a Public Building.
    A visit offers one of the two State actions (or none) before the Noble action."""
    g = fresh(3)
    rs = g.rs
    defn = next(n for n in rs.nobles if n.id == noble)
    assert (set(defn.state_actions), defn.noble_action) == (state_actions, noble_action)
    card = card_of(engine, g, noble)
    set_hand(g, 0, [card])
    p = g.players[0]
    p.reis = 30
    complete = sorted(rs.plans)[0]
    p.plans.append(complete)
    g.plan_supply.remove(complete)
    g.offices["king"][p.color] = 3
    p.officials -= 3
    visits = [m for m in engine.legal_moves(g) if m.kind == "visit"]
    assert {m.state_action for m in visits} == {None, *state_actions}


def test_building_a_ship_gives_an_influence_gain_that_counts_the_ship(
    engine: Any, fresh: Any
) -> None:
    """§6, §8 (R2 [R]): taking a Ship gives an Influence gain, and a Ship's Influence counts in
    your gains; §3.1, §20 (R1 [R]): after period 1 the shipyard holds purple size-3 ships on
    brown size-4 ones, (players - 1) of each (S4 [S])."""
    g = period_two(engine, engine.new_game(3, (), 0))
    rs = g.rs
    assert g.shipyard == ["brown", "brown", "purple", "purple"]
    assert (rs.ships["purple"][0], rs.ships["brown"][0]) == (3, 4)
    seat = g.current
    played = _card(g, "king", reis=2)
    set_hand(g, seat, [played])
    p = g.players[seat]
    p.reis, p.influence = 20, 0
    after = engine.apply_move(
        g, engine.Move("trade", seat, card=played, state_action="ship", good="books")
    )
    q = after.players[seat]
    assert q.ships == [3]
    assert after.shipyard == ["brown", "brown", "purple"]
    assert q.influence == rs.cards[played].influence + rs.ship_influence
    assert engine.final_scores(after).lines[seat][0].points == 3  # the hull size scores


def test_the_royal_favor_state_action_gives_a_tile(engine: Any, fresh: Any) -> None:
    """§17 (S6 [S]): the King's Royal Favor State action gains a Royal Favor tile; a tile still
    held at the end scores 2 wigs ([SEED])."""
    g = fresh(3)
    card = _card(g, "king", reis=2)
    set_hand(g, 0, [card])
    drop_favors(g, 0)
    move = engine.Move("trade", 0, card=card, state_action="royal-favor", good="cloth",
                       favor="marquis")
    after = engine.apply_move(g, move)
    assert after.players[0].royal_favors == ["marquis"]
    assert after.favors["marquis"] == g.favors["marquis"] - 1
    line = next(ln for ln in engine.final_scores(after).lines[0] if ln.source == "score.favors")
    assert line.points == 2


# --- §12 Sponsor an Event --------------------------------------------------------------------


def test_sponsoring_pays_the_current_treasury_value(engine: Any, fresh: Any) -> None:
    """§12 (S1 [S]): play a Treasury card to the Royal Court, pay réis equal to the current
    Treasury value and take the event in its middle; §6 (R2): Influence may cover what the
    réis lack."""
    g = fresh(3)
    rs = g.rs
    card = next(
        n for n, c in sorted(rs.cards.items())
        if c.type == rs.treasury_pile and dict(c.event_effects) == {"reis": 3}
    )
    set_hand(g, 0, [card])
    g.treasury = 2
    value = rs.treasury_values[2]
    p = g.players[0]
    p.reis, p.influence = value, 0
    after = engine.apply_move(g, engine.Move("sponsor", 0, card=card))
    assert after.players[0].reis == 3
    assert card in after.court
    p.reis, p.influence = value - 1, 10  # one real short: Influence covers it
    after = engine.apply_move(g, engine.Move("sponsor", 0, card=card))
    assert (after.players[0].reis, after.players[0].influence) == (3, max(rs.reis_icons))
    p.reis, p.influence = value - 1, 0  # one real short, no Influence: refused
    err = engine.explain_move(g, engine.Move("sponsor", 0, card=card))
    assert err is not None and err.rule == "sponsor-cost"


# --- §18 rubble sets ------------------------------------------------------------------------


def test_a_completed_set_adds_a_portfolio_slot_and_warehouse_space(
    engine: Any, fresh: Any
) -> None:
    """§18 (S1 [S]; [SEED]): each completed rubble set adds warehouse space and 1 portfolio
    slot."""
    g = fresh(3)
    size = engine.warehouse_size(g, 0)
    set_rubble(g, 0, 1)
    assert engine.warehouse_size(g, 0) == size + 1
    p = g.players[0]
    cards = [_card(g, "manuel", reis=2), _card(g, "marquis", reis=2), _card(g, "king", reis=2)]
    for c in cards[:2]:
        move_card(g, c, p.portfolio)
    set_hand(g, 0, [cards[2]])
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=cards[2]))
    assert after.players[0].portfolio == cards  # 2 + 1 slots: nothing leaves
    set_rubble(g, 0, 0)
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=cards[2]))
    assert after.players[0].portfolio == cards[1:]  # 2 slots: the oldest leaves


def test_at_most_five_rubble_sets(engine: Any, fresh: Any) -> None:
    """§18 (R4 [R]): each player has 5 Rubble Set markers, so at most 5 sets."""
    g = period_two(engine, engine.new_game(3, (), 0))
    seat = g.current
    for s in range(3):
        drop_favors(g, s)
    set_rubble(g, seat, 5, cubes=2)
    after = engine.apply_move(g, build_store_visit(engine, g, seat))
    assert after.players[seat].rubble_sets == 5
    assert after.phase != "marker"


# --- §20 end of period 1, §21 end of the game -------------------------------------------------


def test_a_second_set_in_period_two_ends_nothing(engine: Any, fresh: Any) -> None:
    """§20, §21 (R1 [R]): a player's own 2nd set ends period 1 only; in period 2 only the 4th
    set (or 3 empty piles) triggers the end."""
    g = period_two(engine, engine.new_game(3, (), 0))
    seat = g.current
    for s in range(3):
        drop_favors(g, s)
    set_rubble(g, seat, 1, cubes=2)
    fired = list(g.fired)
    after = engine.apply_move(g, build_store_visit(engine, g, seat))
    assert after.players[seat].rubble_sets == 2
    assert after.fired == fired and after.game_end_round is None
    set_rubble(g, seat, 2, cubes=2)  # the 3rd set: nothing either
    after = engine.apply_move(g, build_store_visit(engine, g, seat))
    assert after.fired == fired and after.game_end_round is None


def test_game_end_triggered_by_the_last_player_of_the_round(engine: Any, fresh: Any) -> None:
    """§21 (R1 [R]): finish the current round, then one more full round, then score. The
    rulebook's example: Green sits to the start player's right (last in the round); after
    Green's turn Yellow starts the final round, each player takes one more turn, then
    scoring. Here the last seat completes their 4th set."""
    g = period_two(engine, engine.new_game(3, (), 0))
    for s in range(3):
        drop_favors(g, s)
    g = _discard_turn(engine, g)  # seat 1
    assert (g.current, g.round) == (2, 1)
    set_rubble(g, 2, 3, cubes=2)
    g = engine.apply_move(g, build_store_visit(engine, g, 2))
    assert g.fired[-1] == "game-end.rubble"
    while g.phase == "marker":
        g = engine.apply_move(g, engine.Move("marker", g.actor, noble="marquis"))
    g = finish_turn(engine, g)
    turns = []
    while g.phase != "over":
        turns.append((g.round, g.current))
        g = _discard_turn(engine, g)
    assert turns == [(2, 0), (2, 1), (2, 2)]


def test_rubble_wigs_at_the_period_end_are_not_paid_again_at_the_game_end(
    engine: Any, fresh: Any
) -> None:
    """§20 step 1 (R1 [R]): 3 wigs per completed set at the end of period 1; §22 ([SEED]):
    the endgame scoring counts 3 per set once more, and the game's end runs no second period
    end."""
    g = fresh(3)
    for s in range(3):
        drop_favors(g, s)
    set_rubble(g, 2, 2)
    g = period_two(engine, g)
    assert g.players[2].wigs == 6
    g.game_end_round = g.final_round = g.round
    g.fired.append("game-end.display")
    while g.phase != "over":
        g = _discard_turn(engine, g) if g.phase == "action" else finish_turn(engine, g)
    assert g.players[2].wigs == 6
    line = next(ln for ln in engine.final_scores(g).lines[2] if ln.source == "score.rubble")
    assert line.points == 6


# --- §22, §23 scoring with 2 players ----------------------------------------------------------


def test_two_player_officials_at_work_use_first_and_third_values(
    engine: Any, fresh: Any
) -> None:
    """§22, §23 ([SEED]; S10 [S-weak]): Officials at work pays 15 / 10 / 5; with 2 players
    only the most (15) and the 3rd (5) values are used."""
    g = fresh(2)
    for p in g.players:
        p.wigs = p.reis = p.influence = 0
    plans = g.rs.plans
    big = next(x for x in sorted(plans) if plans[x] == 3)
    small = next(x for x in sorted(plans) if plans[x] == 1)
    complete_plan(g, 0, big)
    complete_plan(g, 1, small)
    lines = engine.final_scores(g).lines
    points = [next(ln for ln in lines[s] if ln.source == "score.officials").points for s in (0, 1)]
    assert points == [15, 5]
