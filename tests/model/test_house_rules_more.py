"""More house rules written in YAML alone, of the kinds issue 14 names, each different from
examples/house-rules/ (tests/cases/house-more/*.yaml, kept out of examples/ so that generated/
and the reference's counts stay as they are):

- a trigger on a game-level measure (the Treasury value), whose steps pay every player;
- a hook on another event (`building-opened`);
- a step at the start of the end of the turn (`flow.turn_end`);
- steps at the start and in the middle of a Noble action (Take a Decree);
- a Noble with a new State action of his own and a Noble action that reads the other players;
  a Treasury card whose event is that Noble action;
- a changed action structure: a new choice in the Discard action (a list without ids,
  written again), and a visit whose State action is no longer optional;
- a step's choice changed to `up_to` N (the period-end hand discard);
- a majority scoring source over another zone (the Ships);
- a tie-breaker inserted in the middle, and one removed; a scoring source removed, with
  its worked example and the glossary entry that named it (changed by its term);
- a variant for one player count (4 players), a changed formula with its words, and a
  setup step;
- followable events without Royal Favors (the Follow's `else:` branch and the shared
  procedure `next-follower` written again).

Each file is built by the CLI with rules/ (`--house FILE`), folded in (`--variant NAME`) and as
an option; the generated engines play seeded random games to the end with their invariants
holding, and each test below asserts the behaviour the rule's text gives, against the base
engine where it helps. The references print the rule's words.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from conftest import (
    HouseBuild,
    build_house,
    card_of,
    finish_turn,
    place_officials,
    set_hand,
    set_rubble,
    sound,
    treasury_index,
)

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "tests" / "cases" / "house-more"
NAMES = sorted(p.stem for p in HOUSE.glob("*.yaml"))

# Words the folded reference (rules.md) prints for each house rule, which the base one does not.
NEW_WORDS = {
    "admiral": "The Levy: every other player who has réis gives you 1 real, and you score 1 wig.",
    "building-favour": "The King's gratitude: gain 1 Influence.",
    "compulsory-state-action": "Take one of this Noble's two State actions, without paying a good "
                               "(not possible when a good sits on that State action this turn).",
    "decree-fee": "The notary's fee: pay 1 real for each Decree taken...",
    "decree-tiebreak": "then most stores, then most Decrees, then most completed Plans wins",
    "discard-choice": "for 1 real or 1 Influence, as you choose",
    "early-plan": "Every player takes the top Plan of the Plan supply.",
    "event-follow-fee": "anyone may follow an event for 1 Influence",
    "fleet-majority": "Compare how many Ships each player owns. No Ship, no wigs.",
    "four-player-pace": "With four players, the end of the game is triggered at a player's 3rd",
    "richer-cash": "then score 1 wig more per 3 Influence on the track",
    "short-discard": "Discard up to 2 cards from your hand",
    "spent-favours": "You return it to follow a visit to that Noble; it scores nothing at the end.",
    "treasury-relief": "the first time the Treasury value is 2 or less, every player takes 3 réis",
    "turn-stipend": "The stipend: if the player whose turn it was has no réis left",
}

# By player count: built as an option (folded, it would apply whatever the number of players).
BY_COUNT = {"four-player-pace"}


_BUILDS: dict[tuple[str, bool], HouseBuild] = {}


def _build(tmp: pytest.TempPathFactory, name: str | None, fold: bool) -> HouseBuild:
    """Rules with this house rule (none: the base rules), folded or as an option, once."""
    return build_house(tmp, HOUSE, name, fold, "house_more", _BUILDS)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return _build(tmp_path_factory, None, False).engine


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """house(NAME): the engine with the house rule folded in (by count: as an option)."""

    def get(name: str) -> ModuleType:
        return _build(tmp_path_factory, name, name not in BY_COUNT).engine

    return get


def _flat(md: str) -> str:
    return re.sub(r"\s+", " ", md.replace("\\", ""))


# --- every house rule: validates, builds, plays, and its words are printed -------------------


def test_the_house_rules_are_there() -> None:
    assert len(NAMES) >= 10, NAMES
    assert sorted(NEW_WORDS) == NAMES
    for name in NAMES:
        doc = yaml.safe_load((HOUSE / f"{name}.yaml").read_text(encoding="utf-8"))
        assert doc["id"] == name and doc["kind"] == "variant"


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_validate_finds_no_problem(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main(
        ["validate", "--rules", str(ROOT / "rules"), "--house", str(HOUSE / f"{name}.yaml")]
    )
    assert code == 0, capsys.readouterr().err


@pytest.mark.sampled(2)
@pytest.mark.parametrize("name", NAMES)
def test_seeded_random_games_play_to_the_end(house: Any, name: str) -> None:
    """Every listed move plays, the invariants hold after each and each state saved loads
    back, for 2, 3 and 4 players."""
    E = house(name)
    for players in (2, 3, 4):
        for seed in range(2):
            g = E.new_game(players, (), seed)
            rng = random.Random(seed)
            while g.phase != "over":
                moves = E.legal_moves(g)
                assert moves, (players, seed, g.phase)
                g = E.apply_move(g, rng.choice(moves))
                assert E.check_invariants(g) == [], (players, seed)
                saved = E.dumps(g)  # the engine never refuses its own saves
                assert E.dumps(E.loads(saved)) == saved, (players, seed)
            sheet = E.final_scores(g)
            assert len(E.ranking(g, sheet).places) >= 1


@pytest.mark.parametrize("name", sorted(set(NAMES) - BY_COUNT))
def test_the_folded_reference_prints_it(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    words = NEW_WORDS[name]
    assert words in _flat(_build(tmp_path_factory, name, True).md)
    assert words not in _flat(_build(tmp_path_factory, None, False).md)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_the_option_has_its_redline_page(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    b = _build(tmp_path_factory, name, False)
    doc = yaml.safe_load((HOUSE / f"{name}.yaml").read_text(encoding="utf-8"))
    page = b.pages[name]
    assert doc["title"] in page
    assert "<ins>" in page or "**" in page  # something is marked as new
    # each anchor the handout links to in the rules exists there
    for anchor in re.findall(r"\(rules\.md#([^)]+)\)", page):
        assert f'<a id="{anchor}"></a>' in b.md, anchor


# --- a trigger on a game-level measure ---------------------------------------------------


def _discard(E: Any, g: Any) -> Any:
    return E.apply_move(g, E.Move("discard", g.current, card=g.players[g.current].hand[0]))


@pytest.mark.parametrize(
    ("period", "value", "fires"), [(2, 2, True), (2, 1, True), (2, 3, False), (1, 1, False)]
)
def test_treasury_relief_pays_everyone_once(
    base: Any, house: Any, period: int, value: int, fires: bool
) -> None:
    gains = {}
    for label, E in (("base", base), ("house", house("treasury-relief"))):
        g = E.new_game(3, (), 0)
        g.period = period
        g.treasury = treasury_index(g, value=value)
        before = [p.reis for p in g.players]
        g = _discard(E, g)
        gains[label] = [p.reis - b for p, b in zip(g.players, before, strict=True)]
        assert ("house.treasury-relief" in g.fired) == (fires and label == "house")
        assert g.period_end_by is None and g.game_end_round is None  # it ends nothing
        if label == "house" and fires:  # once a game
            g = finish_turn(E, g)
            before = [p.reis for p in g.players]
            seat = g.current
            g = _discard(E, g)
            assert [p.reis - b for p, b in zip(g.players, before, strict=True)] == [
                int(s == seat) for s in range(3)
            ]
            assert g.fired.count("house.treasury-relief") == 1
    assert [h - b for h, b in zip(gains["house"], gains["base"], strict=True)] == [
        3 if fires else 0
    ] * 3


# --- a hook on the event building-opened ---------------------------------------------------


@pytest.mark.parametrize(("influence", "wig"), [(3, 0), (9, 0), (10, 1)])
def test_building_favour_gains_influence_when_a_building_opens(
    base: Any, house: Any, influence: int, wig: int
) -> None:
    """(Influence, wigs) after a King visit that opens a building, house minus base: 1
    Influence more; a gain that reaches the track's top scores its wig too."""
    out = {}
    for label, E in (("base", base), ("house", house("building-favour"))):
        g = E.new_game(3, (), 0)
        seat = g.current
        card = card_of(E, g, "king")
        set_hand(g, seat, [*g.players[seat].hand[:4], card])
        p = g.players[seat]
        p.plans.append(g.plan_supply.pop())
        place_officials(g, seat, "manuel", g.rs.plans[p.plans[-1]])
        p.influence = influence
        move = next(
            m
            for m in E.legal_moves(g)
            if m.kind == "visit" and m.card == card and m.state_action is None
        )
        q = E.apply_move(g, move).players[seat]
        assert len(q.completed_plans) == 1
        out[label] = (q.influence, q.wigs)
    assert out["house"][0] - out["base"][0] == 1  # the visit cost 1: 10 is reached again
    assert out["house"][1] - out["base"][1] == wig


# --- a step at the start of the end of the turn ----------------------------------------------


@pytest.mark.parametrize(("reis", "stipend"), [(0, 1), (2, 0)])
def test_turn_stipend_at_the_end_of_the_turn(
    base: Any, house: Any, reis: int, stipend: int
) -> None:
    E = house("turn-stipend")
    for engine, due in ((E, stipend), (base, 0)):
        g = engine.new_game(3, (), 1)
        seat = g.current
        g = _discard(engine, g)
        g.players[seat].reis = reis
        before = [p.reis for p in g.players]
        g = finish_turn(engine, g)
        assert g.current != seat
        assert [p.reis - b for p, b in zip(g.players, before, strict=True)] == [
            due if s == seat else 0 for s in range(3)
        ]


# --- steps at the start and in the middle of a Noble action ----------------------------------


def _decree_visit(E: Any, reis: int, influence: int, markers: int) -> tuple[Any, Any, int]:
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "marquis")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    p = g.players[seat]
    p.reis, p.influence = reis, influence
    set_rubble(g, seat, markers)
    p.markers["marquis"] = markers
    p.markers_left -= markers
    return g, card, seat


@pytest.mark.parametrize("markers", [0, 1])
def test_decree_fee_per_decree_taken(base: Any, house: Any, markers: int) -> None:
    paid = {}
    for label, E in (("base", base), ("house", house("decree-fee"))):
        g, card, seat = _decree_visit(E, 5, 5, markers)
        moves = [
            m
            for m in E.legal_moves(g)
            if m.kind == "visit" and m.card == card and m.state_action is None
        ]
        move = max(moves, key=lambda m: len(m.decrees))
        assert len(move.decrees) == 1 + markers
        after = E.apply_move(g, move)
        paid[label] = g.players[seat].reis - after.players[seat].reis
        assert len(after.players[seat].decrees) == 1 + markers
    assert paid == {"base": 0, "house": 1 + markers}


def test_decree_fee_refuses_a_visit_that_cannot_pay(base: Any, house: Any) -> None:
    """No réis and 1 Influence, spent on the visit: nothing left to cash for the fee."""
    E = house("decree-fee")
    g, card, seat = _decree_visit(E, 0, 1, 0)
    assert not [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
    err = E.explain_move(g, E.Move("visit", seat, card=card, decrees=(g.decree_display[0],)))
    assert err is not None and "notary's fee is 1 real" in err.reason
    gb, card_b, _ = _decree_visit(base, 0, 1, 0)
    assert [m for m in base.legal_moves(gb) if m.kind == "visit" and m.card == card_b]


# --- a Noble with a new State action and a Noble action over the other players ---------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_admiral_has_office_favors_pile_and_cards(house: Any, players: int) -> None:
    E = house("admiral")
    g = sound(E, E.new_game(players, (), players))
    assert [n.id for n in g.rs.nobles][-1] == "admiral"
    assert "admiral" in g.offices and g.favors["admiral"] == players
    assert list(g.piles)[-1] == "admiral" and g.piles["admiral"]
    assert {g.rs.cards[c].type for c in g.piles["admiral"]} == {"admiral"}


def test_admiral_visit_harbour_dues_and_levy(house: Any) -> None:
    E = house("admiral")
    g = E.new_game(3, (), 7)
    seat = g.current
    poor = (seat + 2) % 3
    for s in range(3):
        g.players[s].reis = 0 if s == poor else 5
    card = card_of(E, g, "admiral")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].influence = 5
    moves = [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
    assert {m.state_action for m in moves} == {None, "production", "harbour-dues"}
    move = next(m for m in moves if m.state_action == "harbour-dues")
    after = E.apply_move(g, move)
    reis = [p.reis for p in after.players]
    # 5 + 3 dues + 1 from the one other player with réis; the poor player gives nothing
    assert reis[seat] == 9 and reis[(seat + 1) % 3] == 4 and reis[poor] == 0
    assert after.players[seat].wigs == g.players[seat].wigs + 1
    sound(E, after)


def test_admiral_levy_as_a_sponsored_event(house: Any) -> None:
    E = house("admiral")
    g = E.new_game(3, (), 7)
    seat = g.current
    set_hand(g, seat, [*g.players[seat].hand[:4], 85])  # red 85: the event is the Levy
    g.players[seat].reis = 20
    price = g.rs.treasury_values[g.treasury]
    before = [p.reis for p in g.players]
    after = E.apply_move(g, E.Move("sponsor", seat, card=85))
    assert [p.reis - b for p, b in zip(after.players, before, strict=True)] == [
        2 - price if s == seat else -1 for s in range(3)
    ]


def test_admiral_harbour_dues_by_trade(house: Any) -> None:
    E = house("admiral")
    g = E.new_game(3, (), 7)
    goods = {
        m.good for m in E.legal_moves(g) if m.kind == "trade" and m.state_action == "harbour-dues"
    }
    assert goods == {"cloth", "tools"}  # the Admiral's trade goods


# --- changed action structures ---------------------------------------------------------------


@pytest.mark.parametrize(("take_influence", "reis", "influence"), [(False, 1, 0), (True, 0, 1)])
def test_discard_choice(house: Any, take_influence: bool, reis: int, influence: int) -> None:
    E = house("discard-choice")
    g = E.new_game(3, (), 0)
    seat = g.current
    moves = [m for m in E.legal_moves(g) if m.kind == "discard"]
    assert len(moves) == 2 * len(g.players[seat].hand)  # each card, for a real or Influence
    move = next(m for m in moves if m.take_influence == take_influence)
    p, q = g.players[seat], E.apply_move(g, move).players[seat]
    assert (q.reis - p.reis, q.influence - p.influence) == (reis, influence)


def test_discard_choice_at_the_top_of_the_track_scores_a_wig(house: Any) -> None:
    E = house("discard-choice")
    g = E.new_game(3, (), 0)
    seat = g.current
    g.players[seat].influence = 10
    move = next(m for m in E.legal_moves(g) if m.kind == "discard" and m.take_influence)
    q = E.apply_move(g, move).players[seat]
    assert (q.influence, q.wigs) == (10, 1)


def test_compulsory_state_action_on_a_visit(base: Any, house: Any) -> None:
    for E, expected in (
        (house("compulsory-state-action"), {"officials", "plan"}),
        (base, {None, "officials", "plan"}),
    ):
        g = E.new_game(3, (), 0)
        seat = g.current
        card = card_of(E, g, "manuel")
        set_hand(g, seat, [*g.players[seat].hand[:4], card])
        moves = [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
        assert {m.state_action for m in moves} == expected
        if None not in expected:
            err = E.explain_move(g, E.Move("visit", seat, card=card, business=moves[0].business))
            assert err is not None
            # the step's own words show the State action chosen; with none chosen the refusal
            # asks for one, in the words of its kind (rules/state.yaml), never "None is not..."
            assert (err.rule, err.reason) == ("visit", "choose a State action")
            assert "None" not in str(err)
            g.blocked = ["officials", "plan"]  # both blocked: no visit to Manuel at all
            assert not [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]


def _period_end_now(E: Any, g: Any) -> Any:
    g.period_end_by = g.current
    g = _discard(E, g)
    g = finish_turn(E, g)
    assert g.phase == "hand-discard"
    return g


def test_short_discard_at_most_two_cards(base: Any, house: Any) -> None:
    for E, most in ((house("short-discard"), 2), (base, 5)):
        g = _period_end_now(E, E.new_game(3, (), 0))
        hand = g.players[g.actor].hand
        assert len(hand) == 5
        moves = E.legal_moves(g)
        assert max(len(m.cards) for m in moves) == most
        three = E.Move("hand-discard", g.actor, cards=tuple(hand[:3]))
        err = E.explain_move(g, three)
        assert (err is None) == (most >= 3)
        if err is not None:  # the number, not the expression min(2, len(hand))
            assert err.reason == "choose at most 2 of them"


def test_short_discard_words_the_period_end_too(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The hand-discard move has no words of its own: the period-end rule it names (`rule:`)
    words it. The house rule changed the move and the move's step text, and the reference
    still said "each player may discard any number of cards" at the end of a period (text-stale
    did not look there). Without its period-end words it is refused now, at the change, with a
    note at the words; a callout on that rule addresses them as well."""
    md = _flat(_build(tmp_path_factory, "short-discard", True).md)
    assert "each player may discard up to 2 cards from hand" in md
    assert "any number of cards" not in md
    text = (HOUSE / "short-discard.yaml").read_text(encoding="utf-8")
    alone = text[: text.index("    period_end:")]
    code, err = _validate(tmp_path, "short-discard", alone, capsys)
    assert code == 1, err
    found = [line for line in err.splitlines() if "error[" in line]
    assert len(found) == 1 and "error[text-stale]" in found[0], err
    assert found[0].startswith(f"{tmp_path / 'short-discard.yaml'}:14:"), found
    assert "whose words are those of 'period-end.hand-discard'" in found[0]
    assert "rules/flow.yaml:" in err and "note: the text of 'period-end.hand-discard'" in err
    called = alone.replace("changes:\n", "callouts:\n  - rule: period-end.hand-discard\n"
                           "    text: With this house rule, each player discards at most 2 "
                           "cards.\n    source: [seed:000#end-of-the-period]\nchanges:\n")
    code, err = _validate(tmp_path, "short-discard", called, capsys)
    assert code == 0, err


# --- a majority over the Ships --------------------------------------------------------------


@pytest.mark.parametrize(
    ("ships", "points"),
    [
        (([1, 2], [4], []), [6, 3, 0]),
        (([1, 2], [4], [1, 1]), [4, 1, 4]),  # two tied for most share 6 + 3, rounded down
        (([], [], []), [0, 0, 0]),
    ],
)
def test_fleet_majority(
    base: Any, house: Any, ships: tuple[list[int], ...], points: list[int]
) -> None:
    E = house("fleet-majority")
    ids = [s.id for s in E.RULESETS[()].scoring]
    assert ids[-2:] == ["score.fleet", "score.favors"]
    totals = {}
    for label, engine in (("house", E), ("base", base)):
        g = engine.new_game(3, (), 0)
        for p, s in zip(g.players, ships, strict=True):
            p.ships = list(s)
        sheet = engine.final_scores(g)
        totals[label] = sheet.totals
        if label == "house":
            assert [
                next(ln.points for ln in sheet.lines[s] if ln.source == "score.fleet")
                for s in range(3)
            ] == points
    assert [h - b for h, b in zip(totals["house"], totals["base"], strict=True)] == points


# --- a tie-breaker in the middle, and one removed --------------------------------------------


def test_decree_tiebreak(base: Any, house: Any) -> None:
    """Seats 0 and 1 tie on wigs, rubble sets and stores; seat 0 has a completed Plan and
    more money, seat 1 a Decree more: the rules rank seat 0 first, the house rule seat 1."""
    E = house("decree-tiebreak")
    assert [n for n, _ in E.RULESETS[()].tiebreakers] == [
        "most wigs",
        "most rubble sets",
        "most stores",
        "most Decrees",
        "most completed Plans",
    ]
    places = {}
    for label, engine in (("base", base), ("house", E)):
        g = engine.new_game(3, (), 0)
        for p in g.players:
            p.reis, p.influence, p.wigs, p.royal_favors = 0, 0, 0, []
        g.favors = dict.fromkeys(g.favors, 3)
        g.players[0].completed_plans.append(g.plan_supply.pop())
        g.players[0].reis = 4  # under 5: no wig for it
        g.players[1].decrees.append(g.decree_display.pop())
        sheet = engine.final_scores(g)
        base_pts = {s: sheet.totals[s] for s in range(3)}
        # even the totals out with wigs on the track
        top = max(base_pts[0], base_pts[1])
        g.players[0].wigs += top - base_pts[0]
        g.players[1].wigs += top - base_pts[1]
        sheet = engine.final_scores(g)
        assert sheet.totals[0] == sheet.totals[1]
        places[label] = engine.ranking(g, sheet).places
    assert places["base"][0] == (0,)
    assert places["house"][0] == (1,)


def test_decree_tiebreak_money_no_longer_counts(house: Any) -> None:
    E = house("decree-tiebreak")
    g = E.new_game(3, (), 0)
    for p in g.players:
        p.reis, p.influence, p.wigs = 0, 0, 10
    g.players[0].reis = 4
    sheet = E.final_scores(g)
    assert sheet.totals[0] == sheet.totals[1] == sheet.totals[2]
    assert E.ranking(g, sheet).places[0] == (0, 1, 2)  # shared: no money tie-breaker


# --- a variant for one player count ----------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_four_player_pace_only_with_four(house: Any, players: int) -> None:
    E = house("four-player-pace")
    g = E.new_game(players, (), 0)
    assert ("four-player-pace" in g.variants) == (players == 4)
    assert {p.reis for p in g.players} == {12 if players == 4 else 10}
    g.period = 2
    seat = (g.current + 1) % players
    set_rubble(g, seat, 3)
    g = _discard(E, g)
    assert ("game-end.rubble" in g.fired) == (players == 4)


# --- a changed formula with its words --------------------------------------------------------


@pytest.mark.parametrize(
    ("reis", "influence", "points"), [(8, 0, 2), (3, 6, 1 + 2), (0, 10, 1 + 3)]
)
def test_richer_cash_scores_influence_too(
    house: Any, reis: int, influence: int, points: int
) -> None:
    """(réis + the réis the Influence cashes into) // 4 + Influence // 3 (Influence 6 cashes
    into 3 réis, 10 into 6)."""
    E = house("richer-cash")
    g = E.new_game(3, (), 0)
    g.players[0].reis, g.players[0].influence = reis, influence
    sheet = E.final_scores(g)
    assert next(ln.points for ln in sheet.lines[0] if ln.source == "score.influence") == points


def test_a_changed_formula_without_its_words_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (HOUSE / "richer-cash.yaml").read_text(encoding="utf-8")
    text = text[: text.index("        short:")]  # the formula and params, not the words
    house = tmp_path / "richer-cash.yaml"
    house.write_text(text, encoding="utf-8")
    capsys.readouterr()
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(house)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{house}:" in err and "error[text-stale]" in err and "score.influence" in err


# --- a setup step in the middle --------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_early_plan_at_setup(base: Any, house: Any, players: int) -> None:
    E = house("early-plan")
    g, b = E.new_game(players, (), 3), base.new_game(players, (), 3)
    # the same shuffle: the house step (right after the shuffle) takes the top Plans, the first
    # seat first; the base's starting Plan of each player comes after it
    assert [p.plans for p in g.players] == [
        [q.plans[0], x] for q, x in zip(b.players, reversed(b.plan_supply[-players:]), strict=True)
    ]
    assert g.plan_supply == b.plan_supply[:-players]
    sound(E, g)


# --- followable events, for Influence instead of a Royal Favor -------------------------------


def _event(E: Any, g: Any) -> Any:
    seat = g.current
    card = card_of(E, g, g.rs.treasury_pile, event_effects=(("reis", 3),))
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis = 20
    return E.apply_move(g, E.Move("sponsor", seat, card=card))


def test_event_follow_fee_offers_a_follow_to_everyone(base: Any, house: Any) -> None:
    E = house("event-follow-fee")
    g = E.new_game(3, (), 0)
    for p in g.players:  # nobody holds a Royal Favor tile
        for n in p.royal_favors:
            g.favors[n] += 1
        p.royal_favors = []
    g = _event(E, g)
    seat = g.current
    assert (g.phase, g.actor) == ("follow", (seat + 1) % 3)
    f = g.actor
    p = g.players[f]
    p.reis, p.influence = 10, 3
    price = g.rs.treasury_values[g.treasury]
    after = E.apply_move(g, E.Move("follow", f))
    q = after.players[f]
    assert (q.influence, q.reis) == (2, 10 - price + 3)
    assert after.treasury == g.treasury
    assert after.actor == (seat + 2) % 3  # the next player may follow too
    # without Influence, a follow is refused with the rule's reason
    after.players[after.actor].influence = 0
    err = E.explain_move(after, E.Move("follow", after.actor))
    assert err is not None and "costs 1 Influence" in err.reason
    # the base game: nobody follows an event
    b = _event(base, base.new_game(3, (), 0))
    assert b.phase == "refill"


def test_event_follow_fee_visits_still_need_the_favor(house: Any) -> None:
    E = house("event-follow-fee")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].influence = 5
    g = E.apply_move(g, next(m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card))
    # every player starts with the King's Royal Favor only: nobody may follow Manuel
    assert g.phase == "refill"


# --- a scoring source removed, and what named it ---------------------------------------------


@pytest.mark.parametrize("favors", [0, 1, 3])
def test_spent_favours_score_nothing(base: Any, house: Any, favors: int) -> None:
    E = house("spent-favours")
    assert "score.favors" not in [s.id for s in E.RULESETS[()].scoring]
    totals = {}
    for label, engine in (("house", E), ("base", base)):
        g = engine.new_game(3, (), 0)
        g.players[1].royal_favors = ["king"] * favors
        g.favors["king"] = 3 - favors - 2  # seats 0 and 2 keep their start tile
        sheet = engine.final_scores(g)
        assert all(ln.source != "score.favors" for ln in sheet.lines[1]) == (label == "house")
        totals[label] = sheet.totals
    assert totals["base"][1] - totals["house"][1] == 2 * favors  # 2 wigs a tile in the rules
    assert totals["base"][0] - totals["house"][0] == 2


def test_spent_favours_keeps_the_rest_of_the_glossary(tmp_path_factory: Any) -> None:
    """The glossary's entries are matched by their term: the variant changes one entry, the
    others stay (a list without ids would be replaced by the variant's one entry)."""
    folded = _flat(_build(tmp_path_factory, "spent-favours", True).md)
    plain = _flat(_build(tmp_path_factory, None, False).md)
    assert folded.count('<a id="term-') == plain.count('<a id="term-') >= 19
    assert "each tile still held at the end of the game scores" in plain
    assert "each tile still held at the end of the game scores" not in folded


def _validate(tmp_path: Path, name: str, text: str, capsys: Any) -> tuple[int, str]:
    house = tmp_path / f"{name}.yaml"
    house.write_text(text, encoding="utf-8")
    capsys.readouterr()
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(house)])
    return code, capsys.readouterr().err


def test_a_removal_that_leaves_references_names_the_variant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the example and the glossary entry, the references to the removed source are
    errors at the rules' lines, each with a note at the variant's removal, and no look-alike
    ('did you mean score.stores') to change them to."""
    text = (HOUSE / "spent-favours.yaml").read_text(encoding="utf-8")
    text = text[: text.index("  # what named the removed source")]
    code, err = _validate(tmp_path, "spent-favours", text, capsys)
    assert code == 1
    lines = err.splitlines()
    errors = [i for i, ln in enumerate(lines) if "error[unknown-reference]" in ln]
    assert {lines[i].split(":")[0] for i in errors} == {
        "rules/examples.yaml",
        "rules/vocabulary.yaml",
    }
    for i in errors:
        assert "'score.favors'" in lines[i] and "did you mean" not in lines[i]
        assert lines[i + 1].startswith(f"{tmp_path / 'spent-favours.yaml'}:11:")
        assert "note: variant 'spent-favours' removes it here" in lines[i + 1]


def test_an_error_in_the_rules_a_variant_brought_about_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The choice made compulsory alone: the visit's later steps that test it for None no
    longer type-check; the errors stand at rules/court.yaml and name the variant's change."""
    text = (HOUSE / "compulsory-state-action.yaml").read_text(encoding="utf-8")
    text = text[: text.index("          - id: visit-state-action-blocked")]
    code, err = _validate(tmp_path, "compulsory-state-action", text, capsys)
    assert code == 1
    lines = err.splitlines()
    errors = [i for i, ln in enumerate(lines) if "error[expr-type]" in ln]
    assert len(errors) == 2
    for i in errors:
        assert lines[i].startswith("rules/court.yaml:") and "is never None" in lines[i]
        note = lines[i + 1]
        assert note.startswith(f"{tmp_path / 'compulsory-state-action.yaml'}:")
        assert "note: with variant 'compulsory-state-action'" in note
    # the rules alone have no such error: no note on the errors of rules/ the rules have anyway
    capsys.readouterr()
    assert main(["validate", "--rules", str(ROOT / "rules")]) == 0
