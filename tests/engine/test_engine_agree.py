"""The engine plays what the reference prints (issue 12): paying réis with Influence, Influence
gains, the warehouse, the period-end hand discard, Production, penalties; and where the engine
abstracts a rule (the Church track's unknown values, ships in the top row, the start player),
the reference prints the assumption where the rule stands.

Engine tests build states through the public API (tests/conftest.py helpers) and compute what
they expect from the rule set's own tables, so they hold for any data; reference tests read
generated/reference/rules-annotated.md (the edition that marks each assumption by its id).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import move_card, set_hand, set_rubble, sound, treasury_index

from lisboa_rules import pipeline
from lisboa_rules.core.diagnostics import render_text

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "generated" / "reference" / "rules-annotated.md"


@pytest.fixture(scope="module")
def rules_md() -> str:
    return RULES_MD.read_text(encoding="utf-8")


def rule_block(md: str, rule_id: str) -> str:
    """A rule's part of rules.md: from its anchor to the next anchor of a rule."""
    start = md.index(f'<a id="{rule_id}"></a>')
    nxt = md.find('<a id="', start + 1)
    return md[start : nxt if nxt > 0 else len(md)]


def walk_left(icons: tuple[int, ...], influence: int, reals: int) -> tuple[int, int]:
    """The rulebook's model (facts §6): for each real the marker moves left to the next space
    that shows a real icon. (influence left, réis still unpaid)."""
    for k in range(reals):
        left = [i for i in icons if i < influence]
        if not left:
            return influence, reals - k
        influence = max(left)
    return influence, 0


def _event_card(engine: Any, g: Any) -> int:
    """A Treasury card whose event touches neither réis nor Influence."""
    rs = g.rs
    for n, c in sorted(rs.cards.items()):
        keys = {k for k, _ in c.event_effects}
        if (
            c.type == rs.treasury_pile
            and c.event_action is None
            and keys
            and not keys & {"reis", "influence", "influence_gain"}
        ):
            return n
    raise AssertionError("no Treasury card with a plain event")


# --- 1. Paying réis with Influence ----------------------------------------------------------


@pytest.mark.parametrize(("influence", "value"), [(9, 1), (9, 2), (10, 1), (10, 3), (6, 2), (8, 1)])
def test_paying_reis_moves_the_marker_left_onto_the_next_real_icon(
    engine: Any, fresh: Any, influence: int, value: int
) -> None:
    g = fresh(3)
    rs = g.rs
    p = g.players[0]
    p.reis, p.influence = 0, influence
    g.treasury = treasury_index(g, value=value)
    card = _event_card(engine, g)
    set_hand(g, 0, [card, *g.players[0].hand[:4]])
    g = sound(engine, g)
    expected, unpaid = walk_left(rs.reis_icons, influence, value)
    assert unpaid == 0, "choose a case the track can pay"
    after = engine.apply_move(g, engine.Move("sponsor", 0, card=card))
    q = after.players[0]
    assert (q.reis, q.influence) == (0, expected)
    assert q.influence in rs.reis_icons  # it stands on a real icon, not beside one


@pytest.mark.parametrize("influence", [0, 1, 2, 5, 7, 8, 9, 10])
def test_endgame_cash_is_what_payments_can_draw_from_the_track(
    engine: Any, fresh: Any, influence: int
) -> None:
    """ "The real-spaces below your marker" at the end is exactly what paying can draw."""
    g = fresh(3)
    rs = g.rs
    p = g.players[0]
    p.influence = influence
    drawable = len(rs.reis_icons) - walk_left(rs.reis_icons, influence, len(rs.reis_icons))[1]
    p.reis = 0
    assert engine.can_pay_reis(g, p, drawable)
    assert not engine.can_pay_reis(g, p, drawable + 1)
    p.reis = 4 - drawable % 5 + 5  # one real more would be one wig more
    line = next(ln for ln in engine.final_scores(g).lines[0] if ln.source == "score.influence")
    assert line.points == (p.reis + drawable) // 5


def test_the_reference_pays_and_counts_by_the_same_model(rules_md: str) -> None:
    pay = rule_block(rules_md, "influence.pay-reis")
    assert "move your marker left to the next space that shows a real icon" in pay
    assert "#assumption-influence-reis-icons" in pay
    track = rule_block(rules_md, "influence.track")
    assert "#assumption-influence-reis-icons" in track
    assert "the real-spaces below your marker" in rules_md


# --- 2. Influence gains ---------------------------------------------------------------------


def _gain_card(g: Any, exclude: tuple[int, ...] = ()) -> int:
    rs = g.rs
    return next(
        n
        for n, c in sorted(rs.cards.items())
        if c.type != rs.treasury_pile
        and n not in exclude
        and dict(c.reward).get("influence_gain", 0) == 1
        and not c.penalty
    )


@pytest.mark.parametrize(("row", "ships"), [(0, 0), (1, 0), (2, 0), (1, 2), (0, 3)])
def test_a_reward_of_influence_is_a_gain_of_the_top_row(
    engine: Any, fresh: Any, row: int, ships: int
) -> None:
    g = fresh(3)
    rs = g.rs
    card = _gain_card(g)
    nobles = [n for n, c in sorted(rs.cards.items()) if c.type != rs.treasury_pile and n != card][
        ::-1
    ]  # high Influence values too
    set_hand(g, 0, [card, *g.players[0].hand[:4]])
    p = g.players[0]
    for n in nobles[:row]:
        move_card(g, n, p.portfolio)
    p.ships = [1] * ships
    p.influence = 0
    g = sound(engine, g)
    room = rs.portfolio_base + rs.portfolio_per_set * p.rubble_sets
    top = [*p.portfolio, card][-room:]
    expected = sum(rs.cards[c].influence for c in top) + rs.ship_influence * ships
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert after.players[0].influence == min(rs.influence_max, expected)


def test_no_card_encodes_a_gain_as_flat_influence(engine: Any, rules_md: str) -> None:
    for rs in engine.RULESETS.values():
        for c in rs.cards.values():
            assert dict(c.reward).get("influence", 0) <= 0, c.number
        assert any(dict(c.reward).get("influence_gain", 0) > 0 for c in rs.cards.values())
    assert "1 Influence gain" in rule_block(rules_md, "card-3")


# --- 3. The Church track --------------------------------------------------------------------


def test_the_church_track_is_no_longer_left_out(engine: Any, rules_md: str) -> None:
    # the seed's "Refill the Church track" is played (the period end refills it) and no page
    # says the rules leave the Church out
    assert "leave the Church track out" not in rules_md
    assert "assumption-church-abstracted" not in rules_md
    g = engine.new_game(3, (), 2)
    assert g.church and all(len(tiles) == 1 for tiles in g.church.values())


# --- 4. The warehouse -----------------------------------------------------------------------


def _production_trade(engine: Any, g: Any, seat: int) -> Any:
    """Seat plays a rewardless card and gives a good to the Noble of Production."""
    rs = g.rs
    noble = next(n for n in rs.nobles if "production" in n.state_actions)
    card = next(
        n
        for n, c in sorted(rs.cards.items())
        if c.type == rs.treasury_pile and c.event_action is None
    )
    set_hand(g, seat, [card, *g.players[seat].hand[:4]])
    good = noble.trade_goods[0]
    return engine.apply_move(
        g, engine.Move("trade", seat, card=card, state_action="production", good=good)
    ), good


@pytest.mark.parametrize(("sets", "spare"), [(0, 0), (0, 1), (0, 3), (1, 0), (2, 1), (1, 6)])
def test_production_fills_the_warehouse_and_no_more(
    engine: Any, fresh: Any, sets: int, spare: int
) -> None:
    g = fresh(3)
    rs = g.rs
    set_rubble(g, 0, sets)
    p = g.players[0]
    p.stores = dict.fromkeys(rs.businesses, 1)
    p.goods = dict.fromkeys(rs.businesses, 0)
    noble = next(n for n in rs.nobles if "production" in n.state_actions)
    size = rs.warehouse_base + rs.warehouse_per_set * sets
    assert engine.warehouse_size(g, 0) == size
    held = size - spare  # the good given to trade is counted here
    p.goods[noble.trade_goods[0]] = held
    after, _ = _production_trade(engine, g, 0)
    total = sum(after.players[0].goods.values())
    assert total == min(size, held - 1 + len(rs.businesses))
    assert total <= engine.warehouse_size(after, 0)


def test_the_reference_prints_the_warehouse_size(engine: Any, rules_md: str) -> None:
    rs = engine.RULESETS[()]
    block = rule_block(rules_md, "warehouse.size")
    assert f"Your warehouse holds {rs.warehouse_base} goods" in block
    assert "#assumption-warehouse-size" in block
    rubble = " ".join(rule_block(rules_md, "rubble.sets").split())
    assert f"your warehouse size by {rs.warehouse_per_set}" in rubble


# --- 5. The period-end hand discard ---------------------------------------------------------


def _hand_discard_state(engine: Any, g: Any, hand: list[int]) -> Any:
    set_hand(g, 0, hand)
    g.phase, g.period_end_by, g.period_step = "hand-discard", 0, 3
    g.discard_queue = [0, 1, 2]
    g.actor = 0
    for cards in g.piles.values():  # the period end's first step discarded the display
        g.discard.extend(cards)
        cards.clear()
    return sound(engine, engine.from_json(engine.to_json(g)))


@pytest.mark.parametrize("noble", ["manuel", "marquis", "king"])
def test_the_player_chooses_which_card_of_a_noble_gives_its_reward(
    engine: Any, fresh: Any, noble: str
) -> None:
    g = fresh(3)
    rs = g.rs
    by_reis: dict[int, int] = {}
    for n, c in sorted(rs.cards.items()):
        amount = dict(c.reward).get("reis", 0)
        if c.type == noble and amount > 0 and len(c.reward) == 1:
            by_reis.setdefault(amount, n)
    assert len(by_reis) >= 2, "two cards of this Noble with different réis rewards"
    (a_reis, a), (b_reis, b) = sorted(by_reis.items())[:2]
    g = _hand_discard_state(engine, g, [a, b])
    reis = g.players[0].reis
    gained = set()
    for move in engine.legal_moves(g):
        if set(move.cards) == {a, b}:
            gained.add(engine.apply_move(g, move).players[0].reis - reis)
    assert gained == {a_reis, b_reis}  # either card may give the reward, never both


# --- 6. Production, penalties, ships, the start player, two players -------------------------


@pytest.mark.parametrize("stores", [{}, {"books": 1}, {"gold": 1, "cloth": 2}, {"tools": 3}])
def test_production_makes_goods_only_of_the_stores_you_own(
    engine: Any, fresh: Any, stores: dict[str, int]
) -> None:
    g = fresh(3)
    rs = g.rs
    p = g.players[0]
    p.stores = dict.fromkeys(rs.businesses, 0) | stores
    before = dict(p.goods)
    after, good = _production_trade(engine, g, 0)
    gained = {b: after.players[0].goods[b] - before[b] + (b == good) for b in rs.businesses}
    assert gained == {b: int(b in stores) for b in rs.businesses}


@pytest.mark.parametrize(("reis", "influence"), [(0, 9), (1, 9), (0, 4), (0, 1), (1, 3)])
def test_a_penalty_in_reis_is_paid_like_a_payment(
    engine: Any, fresh: Any, reis: int, influence: int
) -> None:
    g = fresh(3)
    rs = g.rs
    card = next(
        n
        for n, c in sorted(rs.cards.items())
        if c.type != rs.treasury_pile
        and dict(c.penalty).get("reis", 0) <= -2
        and "reis" not in dict(c.reward)
        and "influence_gain" not in dict(c.reward)
    )
    set_hand(g, 0, [card, *g.players[0].hand[:4]])
    p = g.players[0]
    p.reis, p.influence = reis, influence
    owed = -dict(rs.cards[card].penalty)["reis"] - reis
    expected, _ = walk_left(rs.reis_icons, influence, owed)
    after = engine.apply_move(g, engine.Move("portfolio", 0, card=card))
    assert (after.players[0].reis, after.players[0].influence) == (0, expected)


@pytest.mark.parametrize(
    ("rule_id", "assumption", "words"),
    [
        ("portfolio.size", "ships-in-top-row", "takes no card slot"),
        ("state-action.cardinal", "church-circuit", "Move the Cardinal 1 space"),
        ("state-action.cardinal", "church-scoring", "Church Scoring gives you 1 Influence gain"),
        ("components.church", "clergy-limit", "you hold at most 3 clergy tiles"),
        ("components.church", "clergy-contents", "its reward at once"),
        ("period-end.refill", "church-refill", "Refill the Church track and the Decree display"),
        ("frame.players", "start-player", "first seat is the start player"),
        ("sell-goods", "penalty-shortfall", "is waived"),
        ("state-action.production", "warehouse-size", "with no store you produce"),
    ],
)
def test_each_abstraction_is_printed_where_its_rule_stands(
    rules_md: str, rule_id: str, assumption: str, words: str
) -> None:
    block = rule_block(rules_md, rule_id)
    assert f"#assumption-{assumption}" in block
    assert words in " ".join(block.split())


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (3, 4), (4, 9)])
def test_the_start_player_is_the_first_seat_as_printed(
    engine: Any, players: int, seed: int
) -> None:
    g = engine.new_game(players, (), seed)
    assert g.start_player == 0 and g.current == 0


def test_two_players_get_the_ships_the_reference_says(engine: Any, rules_md: str) -> None:
    """Fewer players, fewer ships: the shipyard's count follows the number of players in
    every game (the two-player variant does not change it), and the reference says the count
    the engine stocks with two."""
    games = {n: engine.new_game(n, (), 1) for n in (2, 3, 4)}
    sizes = {n: len(g.shipyard) for n, g in games.items()}
    assert sizes[2] < sizes[3] < sizes[4]
    per = sizes[2] // len(set(games[2].shipyard))
    block = " ".join(rule_block(rules_md, "components.shipyard").split())
    assert f"with 2, it holds {per} ship of each colour" in block
    two = " ".join(rule_block(rules_md, "variant-two-player").split())
    assert f"The shipyard holds {per} ship of each colour" in two
    assert "fewer ships" not in two


@pytest.mark.parametrize("number", [3, 8, 18])
def test_a_flat_influence_reward_is_refused_where_it_stands(tmp_path: Path, number: int) -> None:
    """A gain is written as a gain: `reward: {influence: 1}` is a located error."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    path = rules / "components.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if f"{{number: {number}," in ln)
    lines[at] = re.sub(r"reward: \{[^}]*\}", "reward: {influence: 1}", lines[at])
    path.write_text("".join(lines), encoding="utf-8")
    result = pipeline.compile_rules(rules)
    assert not result.ok
    text = render_text(result.diagnostics)
    assert f"components.yaml:{at + 1}:" in text and "reward.influence" in text, text
