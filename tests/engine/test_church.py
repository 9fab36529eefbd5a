"""Rule cases of the seeds' last rules (issue 34): the Church track, the Cardinal and the
clergy tiles, Church Scoring and the period-end refill (facts §3.1, §6, §16, §20); paying réis
with any part in Influence as the player's choice (facts §6, R2); Ship cards in the top row of
the portfolio, counted in a Church Scoring (facts §5, §6).

The numbers the sources leave open (the Cardinal's step, the holding limit, the Church
Scoring's gains, the clergy tiles' rewards, the real icons) are assumptions of
rules/provenance.yaml: the tests read them from rules/components.yaml and the engine's rule
set, so they hold for any data, and check the procedure around them.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import ROOT, at_the_church, finish_turn, period_two, set_hand, sound

COMPONENTS = yaml.safe_load((ROOT / "rules" / "components.yaml").read_text(encoding="utf-8"))
CHURCH = COMPONENTS["church"]
TILES = {t["id"]: dict(t["reward"]) for t in COMPONENTS["clergy"]}
NOBLES_DATA = yaml.safe_load((ROOT / "rules" / "nobles.yaml").read_text(encoding="utf-8"))
STEP = next(s for s in NOBLES_DATA["state_actions"] if s["id"] == "cardinal")["effects"]["cardinal"]
SPACES = CHURCH["spaces"]


def _plain_card(g: Any, type_: str) -> int:
    """A card of this Noble whose reward and penalty are in réis only (no Influence)."""
    return next(
        n for n, c in sorted(g.rs.cards.items())
        if c.type == type_ and {k for k, _ in (*c.reward, *c.penalty)} <= {"reis"}
    )


def _tile_of(g: Any, kind: str) -> str:
    """A clergy tile in the bag whose reward is of one kind only (`wigs`, `reis`, ...)."""
    return next(t for t in g.clergy_bag if set(TILES[t]) == {kind})


def _lay(g: Any, space: str, tile: str) -> None:
    """Put `tile` (from the bag) on `space`, its tile back in the bag."""
    g.clergy_bag.remove(tile)
    g.clergy_bag.extend(g.church[space])
    g.church[space][:] = [tile]


def _cardinal_trade(E: Any, g: Any) -> Any:
    """The player whose turn it is plays a plain King card to the portfolio and gives a good
    to the King for the Cardinal State action."""
    seat = g.current
    card = _plain_card(g, "king")
    set_hand(g, seat, [card])
    good = next(n for n in g.rs.nobles if n.id == "king").trade_goods[0]
    g.players[seat].goods[good] = 1
    sound(E, g)
    return E.apply_move(g, E.Move("trade", seat, card=card, state_action="cardinal", good=good))


def test_the_setup_lays_out_the_church_track(engine: Any) -> None:
    """facts §3.1 (S4): the clergy tiles go into the bag and one lies face up on each of the
    track's spaces; facts §3.2 (S2): each player starts with a clergy tile; the Cardinal
    starts on the Church icon (assumption church-circuit)."""
    for players in (2, 3, 4):
        g = sound(engine, engine.new_game(players, (), 5))
        assert sorted(g.church) == sorted(SPACES) and len(SPACES) == 6
        assert all(len(g.church[s]) == 1 for s in SPACES)
        assert [len(p.clergy) for p in g.players] == [1] * players
        assert len(g.clergy_bag) == len(TILES) - len(SPACES) - players and len(TILES) == 37
        assert g.cardinal == 0 and g.clergy_given_up == []


def test_the_cardinal_moves_and_gives_the_tile_reached(engine: Any, fresh: Any) -> None:
    """facts §16 (S6): moving the Cardinal gives you the clergy tile reached, whose benefit
    comes at once; the other tiles stay face up where they are."""
    g = fresh(3)
    tile = _tile_of(g, "wigs")
    reached = SPACES[STEP - 1]
    _lay(g, reached, tile)
    before = {s: list(g.church[s]) for s in SPACES}
    wigs = g.players[0].wigs
    after = sound(engine, _cardinal_trade(engine, g))
    q = after.players[0]
    assert after.cardinal == STEP
    assert after.church[reached] == [] and q.clergy[-1] == tile
    assert q.wigs == wigs + TILES[tile]["wigs"]
    assert {s: after.church[s] for s in SPACES if s != reached} == \
        {s: before[s] for s in SPACES if s != reached}


def test_an_empty_space_gives_nothing(engine: Any, fresh: Any) -> None:
    """A tile taken is gone until the track is refilled: the Cardinal reaching an empty space
    gives no tile."""
    g = fresh(3)
    reached = SPACES[STEP - 1]
    g.clergy_given_up.extend(g.church[reached])
    g.church[reached].clear()
    held = list(g.players[0].clergy)
    after = sound(engine, _cardinal_trade(engine, g))
    assert after.cardinal == STEP and after.players[0].clergy == held


def test_the_holding_limit_gives_up_the_oldest_tile(engine: Any, fresh: Any) -> None:
    """facts §16: a limit on the clergy tiles you hold (its value: assumption clergy-limit);
    taking one more gives up your oldest."""
    g = fresh(3)
    p = g.players[0]
    limit = CHURCH["holding_limit"]
    while len(p.clergy) < limit:
        p.clergy.append(g.clergy_bag.pop())
    oldest = p.clergy[0]
    tile = _tile_of(g, "wigs")
    _lay(g, SPACES[STEP - 1], tile)
    after = sound(engine, _cardinal_trade(engine, g))
    q = after.players[0]
    assert len(q.clergy) == limit and q.clergy[-1] == tile and oldest not in q.clergy
    assert after.clergy_given_up == [oldest]


@pytest.mark.parametrize("ships", [[], [2], [1, 3]])
def test_church_scoring_is_a_gain_of_the_top_row_ships_included(
    engine: Any, fresh: Any, ships: list[int]
) -> None:
    """facts §6 (R2 [R]): Church Scoring is an Influence gain: the Influence values of the
    Noble cards and Ships in your portfolio's top row (facts §5: Ships go into the top row);
    facts §16 (S10): it happens when the Cardinal reaches the Church icon."""
    g = at_the_church(fresh(3))
    rs = g.rs
    p = g.players[0]
    p.influence, p.ships = 0, list(ships)
    church = {s: list(g.church[s]) for s in SPACES}
    held = list(p.clergy)
    after = sound(engine, _cardinal_trade(engine, g))
    q = after.players[0]
    assert after.cardinal == (len(SPACES) + STEP) % (len(SPACES) + 1)
    top = sum(rs.cards[c].influence for c in q.portfolio) + rs.ship_influence * len(ships)
    assert engine.influence_gain(after, 0) == top
    assert q.influence == min(rs.influence_max, top * CHURCH["scoring_gains"])
    assert (after.church, q.clergy) == (church, held)  # the Church icon holds no tile


def test_the_period_end_refills_the_church_track(engine: Any, fresh: Any) -> None:
    """seed 000 (end of the period), facts §20 (R1): refill the Church track and the Decree
    display if needed; during a period the track is not refilled (assumption church-refill)."""
    g = fresh(3)
    taken = SPACES[STEP - 1]
    after = finish_turn(engine, _cardinal_trade(engine, g))
    assert after.church[taken] == [] and after.turns == 1  # the end of a turn leaves it empty
    after = fresh(3)
    for s in SPACES[:3]:  # tiles taken during the period
        after.clergy_given_up.extend(after.church[s])
        after.church[s].clear()
    empty = [s for s in SPACES if not after.church[s]]
    bag = len(after.clergy_bag)
    on_track = {s: list(after.church[s]) for s in SPACES if after.church[s]}
    ended = sound(engine, period_two(engine, after))
    assert all(len(ended.church[s]) == 1 for s in SPACES)
    assert len(ended.clergy_bag) == bag - len(empty)
    assert {s: ended.church[s] for s in on_track} == on_track  # full spaces keep their tile


def test_the_church_words_come_from_the_data() -> None:
    """The reference says what the engine plays: the Cardinal's step, the holding limit and
    the refill, from the data (rules text with placeholders)."""
    md = (ROOT / "generated" / "reference" / "rules.md").read_text(encoding="utf-8")
    text = " ".join(md.split())
    assert f"Move the Cardinal {STEP} space around its circuit" in text
    assert f"you hold at most {CHURCH['holding_limit']} clergy tiles" in text
    assert "Refill the Church track and the Decree display if needed" in text
    assert "leave the Church track out" not in text


# --- paying réis with any part in Influence (facts §6, R2) -------------------------------------


def _icons_below(g: Any, influence: int) -> int:
    return sum(1 for i in g.rs.reis_icons if i < influence)


def _walk(g: Any, influence: int, reals: int) -> int:
    for _ in range(reals):
        left = [i for i in g.rs.reis_icons if i < influence]
        if not left:
            break
        influence = max(left)
    return influence


def _event_state(engine: Any, fresh: Any, reis: int, influence: int) -> tuple[Any, int, int]:
    """Seat 0 holds a Treasury card whose event touches neither réis nor Influence; the
    state, the card and the event's price."""
    g = fresh(3)
    card = next(
        n for n, c in sorted(g.rs.cards.items())
        if c.type == g.rs.treasury_pile and c.event_action is None
        and not {k for k, _ in c.event_effects} & {"reis", "influence", "influence_gain"}
    )
    set_hand(g, 0, [card])
    p = g.players[0]
    p.reis, p.influence = reis, influence
    price = g.rs.treasury_values[g.treasury]
    return sound(engine, g), card, price


@pytest.mark.parametrize(("reis", "influence"), [(20, 10), (3, 10), (0, 10), (6, 4), (2, 0)])
def test_every_split_of_a_payment_is_offered(
    engine: Any, fresh: Any, reis: int, influence: int
) -> None:
    """facts §6 (R2 [R]): you may cover any part of a réis payment with Influence. The move
    carries the part: none (réis first, Influence for what they lack) or each larger part
    the track can pay, every split once."""
    g, card, price = _event_state(engine, fresh, reis, influence)
    cash = _icons_below(g, influence)
    least = max(0, price - reis)  # what réis cannot pay
    moves = [m for m in engine.legal_moves(g) if m.kind == "sponsor" and m.card == card]
    if reis + cash < price:
        assert moves == []
        return
    parts = sorted(m.event_influence for m in moves if m.event_influence is not None)
    assert parts == list(range(least + 1, min(price, cash) + 1))
    assert sum(m.event_influence is None for m in moves) == 1
    for m in moves:
        part = least if m.event_influence is None else m.event_influence
        q = engine.apply_move(g, m).players[0]
        assert (q.reis, q.influence) == (reis - (price - part), _walk(g, influence, part))


@pytest.mark.parametrize(("reis", "influence", "part"), [(20, 10, 7), (20, 4, 3), (3, 10, 2),
                                                          (3, 10, -1), (20, 0, 1)])
def test_an_illegal_split_is_refused_with_its_reason(
    engine: Any, fresh: Any, reis: int, influence: int, part: int
) -> None:
    """A part larger than the payment or than the track can pay, or one that leaves more in
    réis than the player holds (or says nothing more than leaving the choice out), is refused,
    naming the rule and the parts allowed."""
    g, card, price = _event_state(engine, fresh, reis, influence)
    cash = _icons_below(g, influence)
    move = engine.Move("sponsor", 0, card=card, event_influence=part)
    err = engine.explain_move(g, move)
    assert err is not None and err.rule == "influence.pay-reis", err
    least, most = max(0, price - reis), min(price, cash)
    assert f"you cover {least} with Influence if you choose nothing" in str(err)
    assert f"up to {most}" in str(err)
    assert move not in engine.legal_moves(g)
    with pytest.raises(engine.IllegalMove):
        engine.apply_move(g, move)


def test_a_ship_and_a_land_price_take_the_split_too(engine: Any, fresh: Any) -> None:
    """The Ship's cost (trade for the Ship State action) and a store's land price (the visit's
    Noble action) are payments in réis: each move carries its own part."""
    g = fresh(3)
    p = g.players[0]
    card = _plain_card(g, "marquis")
    set_hand(g, 0, [card])
    p.reis, p.influence = 20, 10
    good = next(n for n in g.rs.nobles if n.id == "marquis").trade_goods[0]
    p.goods[good] = 1
    ships = [m for m in engine.legal_moves(g)
             if m.kind == "trade" and m.state_action == "ship" and m.good == good]
    cost = g.rs.ships[g.shipyard[-1]][1]
    assert sorted(m.ship_influence for m in ships if m.ship_influence is not None) == \
        list(range(1, min(cost, _icons_below(g, 10)) + 1))
    m = next(m for m in ships if m.ship_influence == 1)
    after = engine.apply_move(g, m)
    reward = dict(g.rs.cards[card].reward).get("reis", 0) + dict(g.rs.cards[card].penalty).get(
        "reis", 0)
    q = after.players[0]
    assert q.reis == 20 + reward - (cost - 1)
    assert q.ships == [g.rs.ships[g.shipyard[-1]][0]]  # built, in the top row
    visits = [m for m in engine.legal_moves(fresh(3)) if m.kind == "visit"
              and m.business is not None]
    assert any(m.price_influence is None for m in visits)
