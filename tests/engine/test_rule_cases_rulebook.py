"""Rule cases, as a player checks them against the published rulebook: a situation set up with
the helpers of tests/conftest.py, a move, and what the rulebook says comes of it.

Each test's docstring cites the line it checks: a section of the project's rulebook facts
("facts §N", with the fact's confidence tag) or of a seed summary ("seed 000" / "seed 001",
with its section). The expected values are written here (the shared facts are not read);
where a value is an assumption of rules/provenance.yaml (an unknown of the rulebook) the test
reads it from the engine's rule set and checks the rulebook's procedure around it, and says
so. These cases cover what tests/engine/test_rulebook_cases.py, test_engine_court.py,
test_engine_flow.py, test_engine_scoring.py and test_church.py do not."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import (
    build_store_visit,
    card_of,
    complete_plan,
    drop_favors,
    finish_turn,
    give_decree,
    give_favor,
    period_two,
    place_officials,
    set_hand,
    set_rubble,
    sound,
    treasury_index,
)

NOBLES = ("manuel", "marquis", "king")
BUSINESSES = ("gold", "tools", "books", "cloth")


def _no_favors(g: Any) -> Any:
    """Nobody holds a Royal Favor tile: a visit is not followed."""
    for seat in range(len(g.players)):
        drop_favors(g, seat)
    return g


def _blank(g: Any) -> Any:
    """Every player without wigs, réis, Influence or Royal Favor tiles: scoring starts at 0."""
    _no_favors(g)
    for p in g.players:
        p.wigs = p.reis = p.influence = 0
    return g


def _line(sheet: Any, seat: int, source: str) -> Any:
    return next(ln for ln in sheet.lines[seat] if ln.source == source)


def _discard_turn(E: Any, g: Any) -> Any:
    card = g.players[g.actor].hand[0]
    return finish_turn(E, E.apply_move(g, E.Move("discard", g.actor, card=card)))


def _place_markers(E: Any, g: Any, noble: str = "marquis") -> Any:
    while g.phase == "marker":
        g = E.apply_move(g, E.Move("marker", g.actor, noble=noble))
    return g


# --- the cost of a Visit and a Follow -------------------------------------------------------


@pytest.mark.parametrize("others", [0, 2])
def test_visit_cost_is_the_modifier_at_the_treasury_marker_plus_the_officials(
    engine: Any, fresh: Any, others: int
) -> None:
    """seed 001, Spending Influence to visit ([SEED], facts §9 step 2): the cost is the
    Influence modifier beside the Treasury marker (+1, 0 or -1) plus 1 per Official of other
    players in that Noble's office; below 0 counts as 0. Where each modifier sits on the track
    is an assumption (treasury-track): the test walks the marker over every space."""
    g = fresh(3)
    rs = g.rs
    assert set(rs.treasury_modifiers) == {-1, 0, 1}  # facts §7: +1, 0 or -1
    if others:
        place_officials(g, 1, "king", others)
    for i, modifier in enumerate(rs.treasury_modifiers):
        g.treasury = i
        assert engine.visit_cost(g, 0, "king") == max(0, modifier + others)
        assert engine.visit_cost(g, 0, "manuel") == max(0, modifier)  # another office


def test_a_followers_cost_counts_the_visitors_officials_not_their_own(
    engine: Any, fresh: Any
) -> None:
    """seed 001, Follow a Visit ([SEED], facts §9): a follower pays Influence "as above": 1 per
    Official of *other* players in that Noble's office, so the visitor's Officials count and
    the follower's own do not; Officials the visitor just placed with the free Officials State
    action (facts §8) are in the office when the follower pays."""
    g = _no_favors(fresh(3))
    give_favor(g, 1, "manuel")
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 1, "manuel", 3)  # the follower's own: never counted for them
    card = card_of(engine, g, "manuel")
    set_hand(g, 0, [card])
    g.players[0].reis = 30
    g.players[0].influence = 5
    assert engine.visit_cost(g, 0, "manuel") == 3  # the visitor pays for Green's 3
    after = engine.apply_move(
        g, engine.Move("visit", 0, card=card, state_action="officials", business="gold")
    )
    assert after.players[0].influence == 5 - 3
    assert after.offices["manuel"] == {"Yellow": 2, "Green": 3}
    assert (after.phase, after.actor) == ("follow", 1)
    assert engine.visit_cost(after, 1, "manuel") == 2  # Yellow's 2, not Green's own 3
    after.players[1].influence = 4
    followed = engine.apply_move(after, engine.Move("follow", 1, state_action="plan"))
    assert followed.players[1].influence == 4 - 2


def test_a_follow_is_paid_with_wigs_once_the_influence_is_spent(engine: Any, fresh: Any) -> None:
    """facts §6 and §9 step 3 (S1 [S]; seed 001): lacking Influence, you pay the rest in wigs,
    1 wig per Influence, only after your Influence is down to 0; this holds for a Follow,
    which pays "as above" (seed 001, Follow a Visit)."""
    g = _no_favors(fresh(3))
    give_favor(g, 1, "manuel")
    g.treasury = treasury_index(g, modifier=1)
    place_officials(g, 2, "manuel", 2)
    g.players[0].influence = 3
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    assert engine.visit_cost(g, 1, "manuel") == 3  # +1, and Orange's 2 Officials
    p = g.players[1]
    p.influence, p.wigs = 1, 4
    after = engine.apply_move(g, engine.Move("follow", 1, state_action="plan"))
    assert (after.players[1].influence, after.players[1].wigs) == (0, 4 - 2)
    p.wigs = 1  # 1 Influence and 1 wig cannot pay 3
    err = engine.explain_move(g, engine.Move("follow", 1, state_action="plan"))
    assert err is not None and err.rule == "wigs-for-influence"


def test_a_follower_takes_the_noble_action_and_pays_its_own_costs(
    engine: Any, fresh: Any
) -> None:
    """seed 001, Follow a Visit ([SEED], facts §9): return the Royal Favor tile, pay the
    Influence, then take one action of that Noble: here the Noble action, Build a Store,
    whose land price (the Treasury value plus the rubble part, facts §13; the flat rubble part
    is an assumption, land-price-rubble) the follower pays, and whose rubble cube they take."""
    g = _no_favors(fresh(3))
    give_favor(g, 1, "manuel")
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    rs = g.rs
    land = rs.noble_actions["build-store"].land_price(g, g.players[1], engine.Ctx())
    assert land == rs.treasury_values[g.treasury] + 2
    p = g.players[1]
    p.reis, p.influence = 20, 5
    cost = engine.visit_cost(g, 1, "manuel")
    after = engine.apply_move(g, engine.Move("follow", 1, noble_action=True, business="cloth"))
    q = after.players[1]
    assert q.royal_favors == [] and after.favors["manuel"] == g.favors["manuel"] + 1
    assert q.influence == 5 - cost
    assert q.reis == 20 - land
    assert q.stores["cloth"] == 1 and q.rubble_cubes == 1
    # the visitor's store and the follower's are both on the board
    assert after.players[0].stores["gold"] == 1


# --- Trade and the State actions ------------------------------------------------------------


@pytest.mark.parametrize(
    ("noble", "state_action", "goods"),
    [
        ("manuel", "plan", {"tools", "gold"}),
        ("marquis", "production", {"books", "gold"}),
        ("king", "cardinal", {"cloth", "gold"}),
    ],
)
def test_trade_gives_a_noble_only_the_goods_he_accepts(
    engine: Any, fresh: Any, noble: str, state_action: str, goods: set[str]
) -> None:
    """facts §10 (S10 [S-weak]; assumption trade-goods): Manuel da Maia takes tools or gold,
    the Marquis books or gold, the King cloth or gold; the good given pays for one of that
    Noble's State actions."""
    g = _no_favors(fresh(3))
    card = card_of(engine, g, "manuel")
    set_hand(g, 0, [card])
    offered = {
        m.good for m in engine.legal_moves(g)
        if m.kind == "trade" and m.state_action == state_action
    }
    assert offered == goods
    for good in set(BUSINESSES) - goods:
        err = engine.explain_move(
            g, engine.Move("trade", 0, card=card, state_action=state_action, good=good)
        )
        assert err is not None
    good = sorted(goods)[0]
    after = engine.apply_move(
        g, engine.Move("trade", 0, card=card, state_action=state_action, good=good)
    )
    # no store yet: Production makes nothing, the good given is gone
    assert after.players[0].goods[good] == g.players[0].goods[good] - 1
    assert after.blocked == [state_action]


def test_the_officials_state_action_makes_the_others_visits_dearer(
    engine: Any, fresh: Any
) -> None:
    """facts §8 (seed 001, the Nobles' table; seed 2): the Officials State action places your
    Officials in that Noble's office, where they raise the other players' Visit cost by 1 each
    and not your own (seed 001, Spending Influence to visit). How many it places is an
    assumption (state-action-effects): read from the rule set."""
    g = _no_favors(fresh(3))
    n = g.rs.state_actions["officials"].effects
    placed = dict(n)["officials_to_office"]
    card = card_of(engine, g, "king")
    set_hand(g, 0, [card])
    before = [engine.visit_cost(g, s, "manuel") for s in range(3)]
    after = engine.apply_move(
        g, engine.Move("trade", 0, card=card, state_action="officials", good="tools")
    )
    assert after.players[0].officials == 8 - placed  # facts §3.2: 8 Officials each [R]
    assert after.offices["manuel"] == {"Yellow": placed}
    assert [engine.visit_cost(after, s, "manuel") for s in range(3)] == [
        before[0], before[1] + placed, before[2] + placed,
    ]


def test_the_plan_state_action_takes_the_top_plan(engine: Any, fresh: Any) -> None:
    """facts §8 (S6 [S]; assumption state-action-effects): the Plan State action gives you a
    Plan; the Plan supply is a pile and you take its top one."""
    g = _no_favors(fresh(3))
    card = card_of(engine, g, "king")
    set_hand(g, 0, [card])
    top = g.plan_supply[-1]
    after = engine.apply_move(
        g, engine.Move("trade", 0, card=card, state_action="plan", good="gold")
    )
    assert after.players[0].plans == [*g.players[0].plans, top]
    assert after.plan_supply == g.plan_supply[:-1]


def test_production_gives_one_good_of_each_business_you_have_a_store_of(
    engine: Any, fresh: Any
) -> None:
    """facts §8 (Production turns stores into goods; assumption state-action-effects): one good
    of each type you own a store of, none for a type without a store, however many stores."""
    g = _no_favors(fresh(3))
    card = card_of(engine, g, "king")
    set_hand(g, 0, [card])
    p = g.players[0]
    p.stores.update({"gold": 1, "cloth": 3})
    after = engine.apply_move(
        g, engine.Move("trade", 0, card=card, state_action="production", good="books")
    )
    # books: the good given to the Marquis; gold and cloth: one each, produced
    assert after.players[0].goods == {"gold": 2, "tools": 1, "books": 0, "cloth": 2}


def test_a_visits_free_state_action_takes_no_good_and_blocks_nothing(
    engine: Any, fresh: Any
) -> None:
    """seed 001, Action 3 step 4 ([SEED]; facts §9 step 4): on a visit you may take one of the
    Noble's two State actions without paying a good; only a good given while Trading blocks
    a State action (facts §10)."""
    g = _no_favors(fresh(3))
    card = card_of(engine, g, "marquis")
    set_hand(g, 0, [card])
    g.players[0].stores["gold"] = 1
    decree = g.decree_display[0]
    after = engine.apply_move(
        g, engine.Move("visit", 0, card=card, state_action="production", decrees=(decree,))
    )
    assert after.players[0].goods == {**g.players[0].goods, "gold": 2}
    assert after.blocked == []
    assert after.players[0].decrees == [decree]


# --- the Noble actions ----------------------------------------------------------------------


def test_opening_a_public_building_needs_the_officials_and_moves_them_to_the_plaza(
    engine: Any, fresh: Any
) -> None:
    """facts §15 (R3 [R]: "you also need enough state Officials to staff the building"; S6):
    the King's Noble action uses one of your Plans and the Officials it shows; they leave the
    offices for the plazas (assumption open-building), so they no longer raise the others'
    Visit cost (seed 001: "not its plaza"). Without the Officials the visit is refused
    (seed 001: if you can't carry out the whole Noble action, you can't visit)."""
    g = _no_favors(fresh(3))
    rs = g.rs
    plan = next(x for x in sorted(rs.plans) if rs.plans[x] == 3)
    p = g.players[0]
    g.plan_supply.remove(plan)
    p.plans.append(plan)
    card = card_of(engine, g, "king")
    set_hand(g, 0, [card])
    place_officials(g, 0, "manuel", 2)
    move = engine.Move("visit", 0, card=card, plan=plan)
    err = engine.explain_move(g, move)
    assert err is not None and err.rule == "open-building"  # 2 Officials in offices, Plan 3
    assert "more Officials" in err.reason
    place_officials(g, 0, "marquis", 1)
    cost = engine.visit_cost(g, 1, "manuel")
    after = sound(engine, engine.apply_move(g, move))
    q = after.players[0]
    assert plan not in q.plans and q.completed_plans == [plan]
    assert sum(after.offices[n].get("Yellow", 0) for n in NOBLES) == 0
    assert sum(after.plazas[n].get("Yellow", 0) for n in NOBLES) == 3
    assert engine.visit_cost(after, 1, "manuel") == cost - 2
    assert q.rubble_cubes == 1
    assert q.wigs == p.wigs + 3 * rs.noble_actions["open-building"].wigs_per_official


def test_there_is_no_limit_to_the_decrees_you_own(engine: Any, fresh: Any) -> None:
    """seed 001, Take a Decree ([SEED], facts §14): take one Decree from the display, face up
    beside your board; there is no limit to how many you own."""
    g = _no_favors(fresh(3))
    for d in sorted(g.decree_deck)[:6]:
        give_decree(g, 0, d)
    card = card_of(engine, g, "marquis")
    set_hand(g, 0, [card])
    pick = g.decree_display[0]
    after = engine.apply_move(g, engine.Move("visit", 0, card=card, decrees=(pick,)))
    assert len(after.players[0].decrees) == 7 and after.players[0].decrees[-1] == pick
    after = finish_turn(engine, after)
    assert len(after.decree_display) == 8  # facts §14: the display shows 8 (S2, S4)


# --- rubble sets and their markers ----------------------------------------------------------


def test_a_set_completed_places_its_marker_which_then_buys_an_extra_decree(
    engine: Any, fresh: Any
) -> None:
    """facts §18 (R4 [R]: 5 Rubble Set markers each; [SEED]: markers sit on Nobles for
    bonuses) and seed 001, Take a Decree (Extra Decree: a marker of yours on the Marquis may
    be discarded for a second Decree). A store's cube that completes a set raises the
    portfolio and warehouse (facts §18); how many cubes make a set and where the marker goes
    are assumptions (rubble-set-size, rubble-marker-placement)."""
    g = _no_favors(fresh(3))
    per_set = g.rs.cubes_per_set
    set_rubble(g, 0, 0, cubes=per_set - 1)
    room = engine.warehouse_size(g, 0)
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    p = g.players[0]
    assert (p.rubble_sets, p.rubble_cubes, p.markers_left) == (1, 0, 4)
    assert (g.phase, g.actor) == ("marker", 0)
    g = _place_markers(engine, g, "marquis")
    assert g.players[0].markers == {"marquis": 1}
    assert engine.warehouse_size(g, 0) == room + 1
    g = finish_turn(engine, g)
    while g.current != 0:
        g = _discard_turn(engine, g)
    card = card_of(engine, g, "marquis")
    set_hand(g, 0, [card])
    a, b = sorted(g.decree_display)[:2]  # a pick of Decrees is listed in id order
    after = engine.apply_move(g, engine.Move("visit", 0, card=card, decrees=(a, b)))
    assert after.players[0].decrees == [a, b]
    assert after.players[0].markers == {"marquis": 0}


# --- stores: lots and land prices -----------------------------------------------------------


def test_the_land_price_follows_the_treasury_value(engine: Any, fresh: Any) -> None:
    """facts §13 (S1 [S]): the land price is the current Treasury value plus the rubble cost
    (a flat 2 réis here: assumption land-price-rubble); facts §5, §7 (S2, S3 [S]): a Treasury
    card played to a portfolio lowers the marker one space, and with it the land price."""
    g = _no_favors(fresh(3))
    rs = g.rs
    for i, value in enumerate(rs.treasury_values):
        g.treasury = i
        g.players[0].influence = 5  # the visit's Influence: the land price is paid in réis
        after = engine.apply_move(g, build_store_visit(engine, g, 0))
        spent = 30 - after.players[0].reis  # build_store_visit gives 30 réis
        assert spent == value + 2
    treasury_card = card_of(engine, g, rs.treasury_pile)
    g.treasury = len(rs.treasury_values) - 1
    set_hand(g, 1, [treasury_card])
    g.current = g.actor = 1
    after = engine.apply_move(g, engine.Move("portfolio", 1, card=treasury_card))
    assert after.treasury == g.treasury - 1
    land = rs.noble_actions["build-store"].land_price(after, after.players[0], engine.Ctx())
    assert land == rs.treasury_values[-2] + 2


@pytest.mark.parametrize(("players", "lots"), [(2, 5), (3, 6), (4, 6)])
def test_row_e_lots_are_covered_with_two_players(
    engine: Any, players: int, lots: int
) -> None:
    """facts §13 and §23 (S2, S4 [S]): with 2 players an overlay covers every building lot of
    row E (the 5th row), so one lot per business is gone. The number of lots per business is
    an assumption (store-lots: 6, one per row A-E plus one); with 2 players it is one fewer."""
    g = _no_favors(engine.new_game(players, (), 0))
    # the other players hold all the gold lots but one
    others = [s for s in range(players) if s != 0]
    for k in range(lots - 1):
        g.players[others[k % len(others)]].stores["gold"] += 1
    move = build_store_visit(engine, g, 0)
    assert engine.explain_move(g, move) is None  # the last gold lot is free
    g.players[others[0]].stores["gold"] += 1
    err = engine.explain_move(g, move)
    assert err is not None and err.rule == "build-store"
    assert "no free lot" in err.reason
    assert "gold" not in {m.business for m in engine.legal_moves(g) if m.kind == "visit"}


# --- Royal Favor tiles ----------------------------------------------------------------------


def test_royal_favor_tiles_return_to_the_supply_and_can_be_taken_again(
    engine: Any, fresh: Any
) -> None:
    """facts §17 (R3 [R]: one tile of each Noble per player; S6 [S]: spent to follow, the tile
    goes back; the King's Royal Favor State action gains one). A Noble whose tiles are all
    taken gives none."""
    g = _no_favors(fresh(3))
    assert g.favors == dict.fromkeys(NOBLES, 3)
    give_favor(g, 1, "manuel")
    g = engine.apply_move(g, build_store_visit(engine, g, 0))
    g.players[1].reis = 30
    g = engine.apply_move(g, engine.Move("follow", 1, state_action="officials"))
    assert g.favors["manuel"] == 3 and g.players[1].royal_favors == []
    g = finish_turn(engine, g)
    assert g.current == 1
    king = card_of(engine, g, "king")
    set_hand(g, 1, [king])
    for seat in (0, 2):
        give_favor(g, seat, "marquis")
    give_favor(g, 0, "marquis")
    assert g.favors["marquis"] == 0
    offered = {
        m.favor for m in engine.legal_moves(g)
        if m.kind == "trade" and m.state_action == "royal-favor"
    }
    assert offered == {"manuel", "king"}  # none of the Marquis' is left
    after = engine.apply_move(
        g, engine.Move("trade", 1, card=king, state_action="royal-favor", good="cloth",
                       favor="manuel")
    )
    assert after.players[1].royal_favors == ["manuel"] and after.favors["manuel"] == 2


# --- the end of the game --------------------------------------------------------------------


def test_a_second_trigger_in_the_final_round_changes_nothing(engine: Any, fresh: Any) -> None:
    """facts §21 (R1 [R]): once the end is triggered, finish the current round and play one
    more full round, then score. A player's 4th set or 3 empty piles in that last round do
    not move the end again."""
    g = _no_favors(period_two(engine, fresh(3)))
    set_rubble(g, 1, 3, cubes=g.rs.cubes_per_set - 1)
    g = _place_markers(engine, engine.apply_move(g, build_store_visit(engine, g, 1)))
    assert g.fired[-1] == "game-end.rubble"
    assert (g.game_end_round, g.final_round) == (1, 2)
    g = finish_turn(engine, g)
    turns = []
    while g.phase != "over":
        turns.append((g.round, g.current))
        if (g.round, g.current) == (2, 0):
            for pile in g.rs.piles[:3]:
                g.discard.extend(g.piles[pile])
                g.piles[pile].clear()
            set_rubble(g, 0, 3, cubes=g.rs.cubes_per_set - 1)
            g = _place_markers(engine, engine.apply_move(g, build_store_visit(engine, g, 0)))
            assert g.players[0].rubble_sets == 4
            g = finish_turn(engine, g)
            assert (g.game_end_round, g.final_round) == (1, 2)
        else:
            g = _discard_turn(engine, g)
    assert turns == [(1, 2), (2, 0), (2, 1), (2, 2)]


# --- final scoring --------------------------------------------------------------------------


def test_every_scoring_source_is_added_to_the_track_and_explained(
    engine: Any, fresh: Any
) -> None:
    """seed 000, Endgame scoring ([SEED]; facts §22): add to the wigs on the track, in order:
    ships (hull sizes), rubble sets (3 each), store majorities (Books 9/6/3, Gold 3/2/1),
    Influence and réis (1 wig per 5 réis, Influence cashed), Decrees fulfilled, Officials at
    work (15/10/5 by the Officials on completed Plans, an assumption: officials-table) and
    Royal Favors (2 each). Each line says how its points were reached."""
    g = _blank(fresh(3))
    rs = g.rs
    p = g.players[0]
    p.wigs = 11
    p.ships = [2, 3]
    set_rubble(g, 0, 2)
    p.stores.update({"books": 2, "gold": 1})
    g.players[1].stores["books"] = 1
    p.reis = 12
    p.influence = 0
    give_decree(g, 0, "decree-01")  # at least 2 Books stores: 2 wigs (decree-contents)
    give_decree(g, 0, "decree-06")  # at least 3 rubble sets: not fulfilled
    plan = next(x for x in sorted(rs.plans) if rs.plans[x] == 3)
    complete_plan(g, 0, plan)
    give_favor(g, 0, "king")
    sheet = engine.final_scores(g)
    expected = {
        "score.ships": (5, "2 + 3 = 5"),
        "score.rubble": (6, "3 × 2 = 6"),
        "score.stores": (12, "Books: 2 stores, 1st = 9"),
        "score.influence": (2, "(12 + 0) ÷ 5, rounded down = 2"),
        "score.decrees": (2, "not fulfilled, 0"),
        "score.officials": (15, "3 Officials, 1st = 15"),
        "score.favors": (2, "2 × 1 = 2"),
    }
    assert [ln.source for ln in sheet.lines[0]] == list(expected)
    for source, (points, words) in expected.items():
        line = _line(sheet, 0, source)
        assert line.points == points, source
        assert words in line.explanation, (source, line.explanation)
    assert "Gold: 1 store, 1st = 3" in _line(sheet, 0, "score.stores").explanation
    assert sheet.totals[0] == 11 + sum(pts for pts, _ in expected.values())
    assert sheet.track[0] == 11
    # Green: 2nd in Books (6), nothing else
    assert sheet.totals[1] == 6
    assert engine.ranking(g, sheet).places[0] == (0,)


def test_four_players_the_fourth_in_a_majority_scores_nothing(engine: Any, fresh: Any) -> None:
    """seed 000, Store majorities ([SEED], facts §22): the table pays the most, 2nd-most and
    3rd-most only (Cloth 9 / 6 / 3); a 4th player with stores of that type gets nothing."""
    g = _blank(fresh(4))
    for seat, n in enumerate((4, 3, 2, 1)):
        g.players[seat].stores["cloth"] = n
    sheet = engine.final_scores(g)
    assert [_line(sheet, s, "score.stores").points for s in range(4)] == [9, 6, 3, 0]


def test_two_players_tied_for_the_most_share_the_first_and_third_prizes(
    engine: Any, fresh: Any
) -> None:
    """facts §23 and seed 000, Store majorities ([SEED]; S10 [S-weak]): with 2 players only the
    most and 3rd-most columns are used, and tied players share the places they occupy,
    rounded down (FAQ): two tied for the most share Books 9 and 3, 6 each; Officials at work
    15 and 5, 10 each."""
    g = _blank(fresh(2))
    for seat in (0, 1):
        g.players[seat].stores["books"] = 2
    rs = g.rs
    two = [x for x in sorted(rs.plans) if rs.plans[x] == 2][:2]
    complete_plan(g, 0, two[0])
    complete_plan(g, 1, two[1])
    sheet = engine.final_scores(g)
    assert [_line(sheet, s, "score.stores").points for s in (0, 1)] == [6, 6]
    assert [_line(sheet, s, "score.officials").points for s in (0, 1)] == [10, 10]
    assert "(9 + 3) ÷ 2, rounded down = 6" in _line(sheet, 0, "score.stores").explanation


# --- the 2-player changes -------------------------------------------------------------------


def test_two_players_have_one_ship_of_each_colour_in_both_periods(engine: Any) -> None:
    """facts §3.1, §20 and §23 (S4 [S]): the shipyard holds (players - 1) ships of each colour:
    with 2 players one blue on one red at setup, one purple on one brown from period 2."""
    g = engine.new_game(2, (), 0)
    assert "two-player" in g.variants
    assert g.shipyard == ["red", "blue"]  # the top of the stack last: blue on top
    g = period_two(engine, g)
    assert g.shipyard == ["brown", "purple"]


def test_the_queen_variant_plays_with_the_two_player_changes(engine: Any) -> None:
    """facts §23 and §24 (S4, S11 [S]; seed 001, Take a Decree): the 2-player changes apply by
    themselves and the Queen is chosen; both hold in one game: a neutral Official in each
    office (assumption neutral-officials) and, once card 57 is face up (assumption
    queen-from-reveal), nobody takes a Decree."""
    g = engine.new_game(2, ("queen",), 0)
    assert sorted(g.variants) == ["queen", "two-player"]
    assert all(g.offices[n] == {"neutral": 1} for n in NOBLES)
    assert g.flags == []
    g.piles["treasury"].append(57)
    g.reserve["brown"].remove(57)
    g.rs.procs["reveal-top"].run(g, 0, "treasury")
    assert g.flags == ["queen"]
    assert engine.noble_name(g, "marquis") == "Queen Mariana Vitória"


# --- the Royal Court: the card, the Courtier, the Cardinal ---------------------------------


def test_a_visits_card_and_courtier_leave_the_court_at_the_end_of_the_turn(
    engine: Any, fresh: Any
) -> None:
    """seed 001, Action 3 steps 1-2 and "then take your Courtier back and discard the Noble
    card" ([SEED], facts §9 Cleanup): the Noble card goes into the Royal Court with your
    Courtier on it; after the follows and the refill the Courtier comes back and the card is
    discarded, not kept in a portfolio."""
    g = _no_favors(fresh(3))
    move = build_store_visit(engine, g, 0)
    after = engine.apply_move(g, move)
    assert after.court == [move.card] and after.courtier == 0
    assert move.card not in after.players[0].portfolio
    after = finish_turn(engine, after)
    assert after.court == [] and after.courtier is None
    assert after.discard[-1] == move.card


def test_a_visit_to_the_king_moves_the_cardinal_without_a_good(engine: Any, fresh: Any) -> None:
    """facts §8 and §16 (S6 [S]): the King's Cardinal State action moves the Cardinal and gives
    you the clergy tile it reaches, with its reward; on a visit it costs no good (seed 001,
    Action 3 step 4). How far it moves is an assumption (church-circuit: 1 space)."""
    g = _no_favors(fresh(3))
    rs = g.rs
    plan = g.players[0].plans[0]
    place_officials(g, 0, "manuel", rs.plans[plan])
    card = card_of(engine, g, "king")
    set_hand(g, 0, [card])
    first = g.church[sorted(g.church)[0]][-1]
    after = engine.apply_move(
        g, engine.Move("visit", 0, card=card, state_action="cardinal", plan=plan)
    )
    q = after.players[0]
    assert after.cardinal == 1
    assert q.clergy[-1] == first and after.church[sorted(g.church)[0]] == []
    assert q.goods == g.players[0].goods
    assert q.completed_plans == [plan]


# --- the end of the period: the hand discard ------------------------------------------------


def test_treasury_cards_discarded_at_the_period_end_give_nothing(
    engine: Any, fresh: Any
) -> None:
    """seed 000, End of the period step 2 ([SEED]; facts §20 step 3, R1 [R]): for one card of
    each Noble discarded take its bottom reward; Treasury cards give nothing."""
    g = fresh(3)
    rs = g.rs
    treasury = [
        n for n, c in sorted(rs.cards.items())
        if c.type == rs.treasury_pile and rs.cards[n].deck in ("red", "blue")
    ][:3]
    set_hand(g, 0, treasury)
    g.phase, g.period_end_by, g.period_step = "hand-discard", 0, 3
    g.discard_queue = [0, 1, 2]
    for cards in g.piles.values():
        g.discard.extend(cards)
        cards.clear()
    g = sound(engine, engine.from_json(engine.to_json(g)))
    p = g.players[0]
    after = engine.apply_move(g, engine.Move("hand-discard", 0, cards=tuple(treasury)))
    q = after.players[0]
    assert q.hand == []
    assert (q.reis, q.wigs, q.influence, q.rubble_cubes) == (
        p.reis, p.wigs, p.influence, p.rubble_cubes,
    )


# --- the Influence track at the end --------------------------------------------------------


def test_influence_cashes_only_the_real_icons_below_the_marker(engine: Any, fresh: Any) -> None:
    """seed 000, Endgame scoring row 4 ("Cash your Influence into réis (the real-spaces below
    your marker)") and facts §6 (R2 [R]: paying moves the marker left to the next real icon):
    a marker standing on an icon cashes the icons below it, as paying from there would. The
    icons' positions are an assumption (influence-reis-icons); facts §6 reads the seed as "at
    or below", which only differs when the marker stands on an icon (see the report)."""
    g = _blank(fresh(3))
    icons = sorted(g.rs.reis_icons)
    p = g.players[0]
    p.reis = 5 - 3  # with 3 réis from the track: one wig; with 2: none
    p.influence = icons[3]  # on the 4th icon: 3 icons below it
    assert _line(engine.final_scores(g), 0, "score.influence").points == 1
    p.influence = icons[2]  # on the 3rd: 2 below
    assert _line(engine.final_scores(g), 0, "score.influence").points == 0
    assert engine.can_pay_reis(g, p, 2 + 2) and not engine.can_pay_reis(g, p, 2 + 3)


def test_a_set_completed_in_the_period_end_discard_ends_nothing_more(
    engine: Any, fresh: Any
) -> None:
    """facts §20 (R1 [R]): period 1 ends once, at its first trigger (here 3 empty display
    piles), and its steps run in order: the rubble wigs (step 1) come before the hand discard
    (step 3). A card's bottom reward that completes a player's own 2nd set during that discard
    (a rubble cube here, assumption card-contents) places its marker, scores no period wigs
    and ends the period no second time; play goes on in period 2 with the next player."""
    g = fresh(3)
    rs = g.rs
    cube = next(
        n for n, c in sorted(rs.cards.items())
        if c.type in NOBLES and dict(c.reward) == {"rubble": 1} and c.deck in ("blue", "red")
    )
    set_rubble(g, 1, 1, cubes=rs.cubes_per_set - 1)
    for pile in rs.piles[:3]:
        g.discard.extend(g.piles[pile])
        g.piles[pile].clear()
    set_hand(g, 1, [cube, *g.players[1].hand[:4]])
    set_hand(g, 0, g.players[0].hand[:4])
    g.phase = "refill"
    g = engine.apply_move(g, engine.Move("draw", 0, pile=rs.piles[3]))
    assert g.fired == ["period-end.display"] and g.phase == "hand-discard"
    assert g.players[1].wigs == 3  # step 1: 3 wigs for Green's one set
    g = engine.apply_move(g, engine.Move("hand-discard", 0, cards=()))
    g = engine.apply_move(g, engine.Move("hand-discard", 1, cards=(cube,)))
    assert g.players[1].rubble_sets == 2
    g = _place_markers(engine, g)
    g = engine.apply_move(g, engine.Move("hand-discard", 2, cards=()))
    assert (g.period, g.phase, g.current) == (2, "action", 1)
    assert g.fired == ["period-end.display"]
    assert g.players[1].wigs == 3
    sound(engine, g)
