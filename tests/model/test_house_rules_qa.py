"""New house rules, written before the checks that will write them (tests/cases/house-qa/):
each kind of change the project's issues name, with other numbers, steps, events and measures
than examples/house-rules/ and tests/cases/house-more/, and edge cases (an item removed, a list
replaced, steps moved, a hook that raises another event, a variant that changes nothing,
variants by player count).

Each file is built by the CLI with rules/ (`--house FILE`) as an option chosen at setup (or
applied by player count) and folded in (`--variant NAME`); seeded random games play to the end
with every save loaded back (the engine must never refuse its own saves), each test below
asserts what the rule's text says, and the references print its words. The files of
tests/cases/house-qa/refused/ must be refused with an error at the file's own line, saying
what is wrong.
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
)

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "tests" / "cases" / "house-qa"
REFUSED = HOUSE / "refused"
NAMES = sorted(p.stem for p in HOUSE.glob("*.yaml"))

# Words the folded reference (rules.md) prints for each house rule, which the base one does not
# (a rule that applies by player count: its handout, variant-NAME.md).
NEW_WORDS = {
    "big-hands": "With two or three players, every player holds 6 cards instead of 5.",
    "bishop": "The Blessing: score 1 wig per completed Plan you hold, then take 1 rubble cube.",
    "decree-deck-end": "The first period also ends as soon as the Decree deck holds 4 Decrees",
    "decree-influence": "Decrees carry weight: gain 1 Influence per Decree taken.",
    "double-discard": "discard one or two cards from your hand for 1 real each",
    "king-gold-only": "Manuel: Tools, Gold; the Marquis: Books, Gold; the King: Gold",
    "king-herald": "The King's herald: take 1 real.",
    "new-event": "The plan bonus: take 1 real.",
    "no-cardinal": "[Royal Favor](#state-action.royal-favor) · [Plan](#state-action.plan) | [Open",
    "no-follows": "Nobody may follow the visit",
    "no-markers": "No Rubble Set markers: a completed set gives none.",
    "noble-first": "You must first take the Noble's Noble action...",
    "nothing": "rules reference (with The rules as they are)",
    "officials-patron": "the first player with 6 Officials in the offices scores 3 wigs at once",
    "period-interest": "Interest: every player takes 1 real for every 4 réis they hold",
    "petition": "pay the petition cost to carry out that Noble's Noble action",
    "portfolio-tiebreak": "then most money, then most cards in the portfolio wins",
    "prestige": "Each prestige point scores 2 wigs.",
    "rubble-plus-one": "Each completed rubble set scores 4 wigs.",
    "rubble-wig-effect": "while your board has room, and scores 1 wig at once",
    "scholar-score": "every 2 of your Officials still in the offices score 1 wig",
    "shared-events": "anyone may follow an event for 2 wigs",
    "store-rubble-chain": "Builders' rubble: take 1 more rubble cube.",
    "three-four-display": "The Decree display shows ~~8~~ **6** Decrees face up.",
    "turn-end-no-decree-refill": "The Decree display is not refilled: it waits for the end",
    "turn-limit": "the end of the game is also triggered once 60 turns have been played",
}

BY_COUNT = {"big-hands", "three-four-display"}  # built as options only (fold-by-players)
FOLDED_ONLY = {"prestige"}  # changes rules/state.yaml: valid folded only (state-variant)


_BUILDS: dict[tuple[str, bool], HouseBuild] = {}


def _build(tmp: pytest.TempPathFactory, name: str | None, fold: bool) -> HouseBuild:
    """Rules with this house rule (none: the base rules), folded or as an option, once."""
    return build_house(tmp, HOUSE, name, fold, "house_qa", _BUILDS)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return _build(tmp_path_factory, None, False).engine


@pytest.fixture(scope="module")
def option(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """option(NAME): the engine with the house rule as an option (NAME chosen at new_game)."""
    return lambda name: _build(tmp_path_factory, name, False).engine


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """folded(NAME): the engine with the house rule folded into the base game."""
    return lambda name: _build(tmp_path_factory, name, True).engine


def _flat(md: str) -> str:
    return re.sub(r"\s+", " ", md.replace("\\", ""))


def _discard(E: Any, g: Any) -> Any:
    return E.apply_move(g, E.Move("discard", g.current, card=g.players[g.current].hand[0]))


def _hand_with(E: Any, g: Any, noble: str, **want: Any) -> int:
    seat = g.current
    card = card_of(E, g, noble, **want)
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    return card


# --- every house rule: validates, builds, plays and saves, and its words are printed ---------


def test_the_house_rules_are_there() -> None:
    assert len(NAMES) >= 20, NAMES
    assert sorted(NEW_WORDS) == NAMES
    readme = (HOUSE / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        doc = yaml.safe_load((HOUSE / f"{name}.yaml").read_text(encoding="utf-8"))
        assert doc["id"] == name and doc["kind"] == "variant"
        assert f"`{name}`" in readme, name
    for path in REFUSED.glob("*.yaml"):
        assert f"`{path.stem}`" in readme, path.stem


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_validate_finds_no_problem(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    args = ["validate", "--rules", str(ROOT / "rules"), "--house", str(HOUSE / f"{name}.yaml")]
    if name in FOLDED_ONLY:
        args += ["--variant", name]
    assert main(args) == 0, capsys.readouterr().err


def _play(E: Any, players: int, chosen: tuple[str, ...], seed: int) -> Any:
    """A seeded random game to its end: the invariants hold after every move, and every state
    saved is loaded back as it was."""
    g = E.new_game(players, chosen, seed)
    rng = random.Random(seed)
    while g.phase != "over":
        moves = E.legal_moves(g)
        assert moves, (players, seed, g.phase)
        g = E.apply_move(g, rng.choice(moves))
        assert E.check_invariants(g) == [], (players, seed)
        saved = E.dumps(g)
        assert E.dumps(E.loads(saved)) == saved
    sheet = E.final_scores(g)
    assert len(E.ranking(g, sheet).places) >= 1
    return g


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_seeded_games_play_and_every_save_loads(option: Any, folded: Any, name: str) -> None:
    """As an option (chosen, or by player count) and folded; every player count it is for."""
    E = folded(name) if name in FOLDED_ONLY else option(name)
    counts = E.VARIANTS[name].players if name in E.VARIANTS else ()
    chosen = () if counts or name not in E.VARIANTS else (name,)
    for players in counts or (2, 3, 4):
        g = _play(E, players, chosen, players)
        assert (name in g.variants) == (name in E.VARIANTS)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", sorted(set(NAMES) - BY_COUNT))
def test_the_folded_reference_prints_it(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    words = NEW_WORDS[name]
    md = _build(tmp_path_factory, name, True).md
    assert words in _flat(md)
    assert words not in _flat(_build(tmp_path_factory, None, False).md)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", sorted(set(NAMES) - FOLDED_ONLY))
def test_the_option_has_its_handout(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    b = _build(tmp_path_factory, name, False)
    doc = yaml.safe_load((HOUSE / f"{name}.yaml").read_text(encoding="utf-8"))
    page = b.pages[name]
    assert doc["title"] in page and _flat(doc["text"]) in _flat(page)
    if name in BY_COUNT:
        assert NEW_WORDS[name] in _flat(page)
    for anchor in re.findall(r"\(rules\.md#([^)]+)\)", page):
        assert f'<a id="{anchor}"></a>' in b.md, anchor


# --- refused house rules: an error at the file, saying what is wrong -------------------------

# file -> (code, line of the first error in the file, words of its message)
REFUSALS = {
    "big-hands-for-all": ("value-out-of-range", 11,
                          "a hand is 6 cards"),
    "bishop-card-type": ("unknown-reference", 45, "'bishp'; did you mean 'bishop'?"),
    "bishop-noble-action": ("unknown-reference", 19, "'blesing'; did you mean 'blessing'?"),
    "bishop-pile": ("unknown-reference", 38,
                    "display pile 'bisop' is no Noble's, and the Treasury cards' pile is another"),
    "bishop-state-action": ("unknown-reference", 18,
                            "unknown State action 'oficials'; did you mean 'officials'?"),
    "callout-typo": ("unknown-reference", 9,
                     "has a callout for unknown rule 'rubble.setz'; did you mean 'rubble.sets'?"),
    "decree-params": ("unknown-reference", 18,
                      "names no kind 'decrees' (a type is int, bool, text, seat, a kind of "
                      "rules/state.yaml, list[T] or map[K, T]); did you mean 'list[decree]'?"),
    "duel-clash": ("overlay-conflict", 11,
                   "variants 'two-player' and 'duel-clash' both change scoring.majority.columns"),
    "hook-loop": ("step-cycle", 17, "procedures call each other in a loop: echo -> echo"),
    "idle-trigger": ("schema-required", 11,
                     "one of 'ends' or 'do' is needed at changes.flow.triggers[0]"),
    "last-period-end": ("value-out-of-range", 14,
                        "ends period 2, the last: the last period ends with the game, so it "
                        "would never fire"),
    "misspelt-event": ("unknown-reference", 24,
                       "'rubble-set-complete', which no step raises; did you mean "
                       "'rubble-set-completed'?"),
    "move-stale-words": ("text-stale", 14,
                         "changes the place of 'visit-do-noble-action', but its `text:` still "
                         "reads"),
    "move-unknown-anchor": ("overlay-unknown-item", 13,
                            "no step 'visit-state-actoin' in court.actions[visit].steps to move "
                            "'visit-noble-action' before; did you mean 'visit-state-action'?"),
    "never-fires": ("trigger-never-fires", 15,
                    "trigger 'house.impossible' can never fire: its condition `rubble_sets > "
                    "most` is false for every value in the declared ranges (rubble_sets is 0..5, "
                    "most is 5)"),
    "prestige-chosen": ("state-variant", 16, "fold it in with --variant prestige-chosen"),
    "treasury-boom": ("trigger-never-fires", 15,
                      "trigger 'house.boom' can never fire: its condition `treasury_value >= "
                      "high` is false for every value in the declared ranges (treasury_value is "
                      "1..6, high is 9)"),
}


def test_every_refused_file_is_listed() -> None:
    assert sorted(p.stem for p in REFUSED.glob("*.yaml")) == sorted(REFUSALS)


@pytest.mark.sampled(4)
@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_a_wrong_house_rule_is_refused_at_its_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, line, words = REFUSALS[name]
    path = REFUSED / f"{name}.yaml"
    out = tmp_path / "out"
    for cmd in (["validate"], ["build", "--no-cache", "--out", str(out)]):
        capsys.readouterr()
        assert main([*cmd, "--rules", str(ROOT / "rules"), "--house", str(path)]) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err
        at = re.compile(rf"^(?:.*/)?refused/{re.escape(name)}\.yaml:(\d+):\d+: ")
        mine = [ln for ln in err.splitlines() if at.match(ln)]
        assert mine, err
        # the error, or (when it stands in the rules it broke) its note here
        first = next((ln for ln in mine if f"[{code}]" in ln), mine[0])
        m = at.match(first)
        assert m is not None and int(m.group(1)) == line, (first, err)
        assert words in err, err
        assert not out.exists()  # nothing written


def test_a_folded_house_rule_has_its_callouts_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Folded in (`--variant`), a callout at a misspelt rule is refused as when chosen (it was
    built, the callout printed nowhere)."""
    out = tmp_path / "out"
    capsys.readouterr()
    args = ["build", "--no-cache", "--rules", str(ROOT / "rules"), "--out", str(out),
            "--house", str(REFUSED / "callout-typo.yaml"), "--variant", "callout-typo"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert re.search(r"refused/callout-typo\.yaml:9:\d+: error\[unknown-reference\]: .*"
                     r"'rubble\.setz'; did you mean 'rubble\.sets'\?", err), err
    assert not out.exists()


def test_the_folded_callout_stands_at_its_rule(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A folded house rule's callout is printed at its rule, as the rules' own words (no link to
    a page of changes the folded reference does not have)."""
    md = _build(tmp_path_factory, "no-markers", True).md
    at = md.index('<a id="rubble.sets"></a>')
    callout = md.index("> **◆ No Rubble Set markers:**", at)
    assert callout < md.index("<a id=", at + 1) + 2000
    line = md[callout:md.index("\n", callout)]
    assert "a completed set gives none" in line and "all changes" not in line


def _a_cube_from_a_set(g: Any) -> tuple[int, int]:
    """The current seat holds 2 rubble cubes and a King card whose reward is 1 more (a set of
    3 when it is put in the portfolio): the seat and the card."""
    seat = g.current
    card = next(n for n, c in sorted(g.rs.cards.items())
                if c.type == "king" and dict(c.reward).get("rubble") == 1)
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].rubble_cubes = 2
    return seat, card


def test_no_rubble_set_markers(base: Any, option: Any) -> None:
    E = option("no-markers")
    for engine, chosen, phase in ((E, ("no-markers",), "refill"), (base, (), "marker")):
        g = engine.new_game(3, chosen, 0)
        seat, card = _a_cube_from_a_set(g)
        after = engine.apply_move(g, engine.Move("portfolio", seat, card=card))
        assert after.players[seat].rubble_sets == 1 and after.phase == phase
        assert engine.check_invariants(after) == []
        assert engine.dumps(engine.loads(engine.dumps(after))) == engine.dumps(after)


# --- a new action --------------------------------------------------------------------------


def test_a_petition_carries_out_a_noble_action_without_a_visit(option: Any) -> None:
    """The new action's `do: noble.noble_action` (no let between): a Manuel card builds a
    store for the petition cost and the land price, spending no Influence; a Marquis card takes
    a Decree; without the cost, it is refused with its rule."""
    E = option("petition")
    g = E.new_game(3, ("petition",), 0)
    seat = g.current
    card = _hand_with(E, g, "manuel")
    p = g.players[seat]
    p.reis, p.influence = 20, 2
    price = g.rs.treasury_values[g.treasury] + 2  # the land price
    moves = [m for m in E.legal_moves(g) if m.kind == "petition" and m.card == card]
    assert {m.business for m in moves} == {"gold", "tools", "books", "cloth"}
    after = E.apply_move(g, moves[0])
    q = after.players[seat]
    assert (q.reis, q.influence, sum(q.stores.values())) == (20 - 3 - price, 2, 1)
    assert card in after.discard and after.phase == "refill"
    g = E.new_game(3, ("petition",), 0)
    card = _hand_with(E, g, "marquis")
    move = next(m for m in E.legal_moves(g) if m.kind == "petition" and m.card == card)
    assert len(E.apply_move(g, move).players[g.current].decrees) == 1
    g.players[g.current].reis, g.players[g.current].influence = 2, 0
    err = E.explain_move(g, move)
    assert err is not None and err.rule == "petition-cost" and "costs 3" in err.reason


@pytest.mark.parametrize("chosen", [True, False])
def test_a_double_discard_and_its_words(option: Any, chosen: bool) -> None:
    """One or two cards for a real each; a refusal quotes the words of the rule set the game
    is played by (the variant's, when chosen; the one-card discard's, when not)."""
    E = option("double-discard")
    g = E.new_game(3, ("double-discard",) if chosen else (), 0)
    moves = [m for m in E.legal_moves(g) if m.kind == "discard"]
    if chosen:
        assert sorted({len(m.cards) for m in moves}) == [1, 2] and len(moves) == 5 + 10
        reis = g.players[0].reis
        after = E.apply_move(g, next(m for m in moves if len(m.cards) == 2))
        assert (after.players[0].reis - reis, len(after.players[0].hand)) == (2, 3)
        bad = E.Move("discard", 0, cards=())
    else:
        assert len(moves) == 5
        bad = E.Move("discard", 0, card=999)
    err = E.explain_move(g, bad)
    assert err is not None and err.rule == "discard"
    one_or_two = "discard one or two cards from your hand" in err.rule_text
    assert one_or_two == chosen, err.rule_text
    with pytest.raises(E.IllegalMove) as raised:
        E.apply_move(g, bad)
    assert ("one or two cards" in str(raised.value)) == chosen


# --- steps added to, removed from, and moved in procedures -----------------------------------


def _period_end_now(E: Any, g: Any) -> Any:
    """The current player triggers the end of the period; the turn ends; every player
    discards nothing."""
    g.period_end_by = g.current
    g = finish_turn(E, _discard(E, g))
    while g.phase == "hand-discard":
        g = E.apply_move(g, E.Move("hand-discard", g.actor, cards=()))
    return g


def test_period_interest_at_the_very_end_of_the_period(base: Any, option: Any) -> None:
    E = option("period-interest")
    reis = {}
    for label, engine, chosen in (("base", base, ()), ("house", E, ("period-interest",))):
        g = engine.new_game(3, chosen, 0)
        for p, r in zip(g.players, (3, 8, 13), strict=True):
            p.reis = r
        g = _period_end_now(engine, g)
        assert g.period == 2
        reis[label] = [p.reis for p in g.players]
    # after everything else of the period end: 1 real per 4 réis then held
    assert reis["house"] == [r + r // 4 for r in reis["base"]]
    assert [s.id for s in E.RULESETS[("period-interest",)].period_end][-1] == (
        "period-end.interest")


def test_the_decree_display_waits_for_the_period_end(base: Any, option: Any) -> None:
    E = option("turn-end-no-decree-refill")
    for engine, chosen, shown in ((E, ("turn-end-no-decree-refill",), 7), (base, (), 8)):
        g = engine.new_game(3, chosen, 0)
        g.players[1].decrees.append(g.decree_display.pop())
        g = finish_turn(engine, _discard(engine, g))
        assert len(g.decree_display) == shown
        g = _period_end_now(engine, g)
        assert len(g.decree_display) == 8  # the period end refills it


def test_noble_first_carries_out_the_noble_action_before_the_state_action(
    base: Any, option: Any
) -> None:
    """A visit to Manuel that cannot pay the land price, choosing a blocked State action: the
    Noble action, now first, refuses it first."""
    E = option("noble-first")
    rules = {}
    for label, engine, chosen in (("house", E, ("noble-first",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        card = _hand_with(engine, g, "manuel")
        p = g.players[g.current]
        p.influence, p.reis = 3, 0
        g.blocked = ["plan"]
        err = engine.explain_move(
            g, engine.Move("visit", g.current, card=card, state_action="plan", business="gold"))
        assert err is not None
        rules[label] = err.reason
    assert "the land price" in rules["house"]
    assert rules["base"] == "a good sits on that State action this turn"
    court = yaml.safe_load((ROOT / "rules" / "court.yaml").read_text(encoding="utf-8"))
    steps = next(a for a in court["actions"] if a["id"] == "visit")["steps"]
    assert [s.get("id") for s in steps].index("visit-state-action") < [
        s.get("id") for s in steps].index("visit-do-noble-action")  # the rules' own order


# --- triggers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("period", "fires"), [(2, True), (1, False)])
def test_the_patron_of_the_offices(option: Any, period: int, fires: bool) -> None:
    E = option("officials-patron")
    g = E.new_game(3, ("officials-patron",), 0)
    g.period = period
    seat = (g.current + 1) % 3
    place_officials(g, seat, "manuel", 3)
    place_officials(g, seat, "king", 3)
    wigs = g.players[seat].wigs
    g = _discard(E, g)
    assert ("house.patron" in g.fired) == fires
    assert g.players[seat].wigs - wigs == (3 if fires else 0)
    assert g.period_end_by is None and g.game_end_round is None


@pytest.mark.parametrize("deck", [5, 6])
def test_the_end_of_the_turn_can_end_the_period(base: Any, option: Any, deck: int) -> None:
    """The Decree display is refilled from the deck at the end of the turn: when that leaves
    4 Decrees in the deck, the period ends after this turn, for the player whose turn it was
    (not after the next player's turn, as it would if the triggers were only checked after a
    move)."""
    E = option("decree-deck-end")
    for engine, chosen in ((E, ("decree-deck-end",)), (base, ())):
        g = engine.new_game(3, chosen, 0)
        seat = g.current
        while len(g.decree_deck) > deck:
            g.players[2].decrees.append(g.decree_deck.pop())
        g.players[2].decrees.append(g.decree_display.pop())  # one to refill
        g = finish_turn(engine, _discard(engine, g))
        ends = engine is E and deck == 5
        assert ("period-end.decrees" in g.fired) == ends
        assert (g.phase == "hand-discard") == ends
        if ends:
            assert g.period_end_by == seat and g.turns == 1
            assert g.players[g.actor] is g.players[seat]  # the discard starts with its trigger


@pytest.mark.parametrize("seat_in_round", [0, 2])
def test_the_hourglass_ends_the_game_in_the_round_of_the_60th_turn(
    option: Any, seat_in_round: int
) -> None:
    E = option("turn-limit")
    g = E.new_game(3, ("turn-limit",), 0)
    g.period, g.turns, g.round = 2, 59, 20
    g.current = g.actor = seat_in_round
    g = finish_turn(E, _discard(E, g))
    assert g.fired == ["game-end.hourglass"]
    assert g.game_end_round == 20 and g.final_round == 21


# --- hooks -----------------------------------------------------------------------------------


def test_the_kings_herald_on_a_revealed_king_card(base: Any, option: Any) -> None:
    E = option("king-herald")
    gains = {}
    for label, engine, chosen in (("house", E, ("king-herald",)), ("base", base, ())):
        g = finish_turn_to_refill(engine, engine.new_game(3, chosen, 0))
        seat = g.current
        kings = list(g.piles["king"])[-2:]
        assert len(kings) == 2 and {g.rs.cards[c].type for c in kings} == {"king"}
        reis = g.players[seat].reis
        g = engine.apply_move(g, engine.Move("draw", seat, pile="king"))
        gains[label] = g.players[seat].reis - reis
    assert gains == {"house": 1, "base": 0}


def finish_turn_to_refill(E: Any, g: Any) -> Any:
    g = _discard(E, g)
    assert g.phase == "refill"
    return g


@pytest.mark.parametrize("markers", [0, 1])
def test_decrees_carry_weight(base: Any, option: Any, markers: int) -> None:
    E = option("decree-influence")
    gained = {}
    for label, engine, chosen in (("house", E, ("decree-influence",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        seat = g.current
        card = _hand_with(engine, g, "marquis")
        p = g.players[seat]
        p.influence = 5
        set_rubble(g, seat, markers)
        p.markers["marquis"] = markers
        p.markers_left -= markers
        move = max((m for m in engine.legal_moves(g) if m.kind == "visit" and m.card == card
                    and m.state_action is None), key=lambda m: len(m.decrees))
        assert len(move.decrees) == 1 + markers
        gained[label] = engine.apply_move(g, move).players[seat].influence
    assert gained["house"] - gained["base"] == 1 + markers


def test_builders_rubble_completes_a_set_that_scores(base: Any, option: Any) -> None:
    """A hook on store-built whose rubble completes a set: the hook on rubble-set-completed
    scores 2 wigs, and the set's Rubble Set marker is placed first (the base hook)."""
    E = option("store-rubble-chain")
    out = {}
    for label, engine, chosen in (("house", E, ("store-rubble-chain",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        seat = g.current
        card = _hand_with(engine, g, "manuel")
        p = g.players[seat]
        p.influence, p.reis, p.rubble_cubes = 5, 20, 1
        move = next(m for m in engine.legal_moves(g)
                    if m.kind == "visit" and m.card == card and m.state_action is None)
        after = engine.apply_move(g, move)
        q = after.players[seat]
        out[label] = (q.rubble_cubes, q.rubble_sets, q.wigs - p.wigs, after.phase)
        sound(engine, after)
    assert out["house"] == (0, 1, 2, "marker")
    assert out["base"] == (2, 0, 0, "refill")


def test_a_new_event_raised_by_an_effect(base: Any, option: Any) -> None:
    E = option("new-event")
    paid = {}
    for label, engine, chosen in (("house", E, ("new-event",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        seat = g.current
        card = _hand_with(engine, g, "manuel")
        g.players[seat].influence = 5
        move = next(m for m in engine.legal_moves(g)
                    if m.kind == "visit" and m.card == card and m.state_action == "plan")
        after = engine.apply_move(g, move)
        assert len(after.players[seat].plans) == len(g.players[seat].plans) + 1
        paid[label] = g.players[seat].reis - after.players[seat].reis
    assert paid["base"] - paid["house"] == 1


# --- a variant that changes nothing ----------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_nothing_plays_the_same_games(base: Any, option: Any, players: int) -> None:
    E = option("nothing")
    a, b = E.new_game(players, ("nothing",), 5), E.new_game(players, (), 5)
    rng = random.Random(players)
    while a.phase != "over":
        ma, mb = E.legal_moves(a), E.legal_moves(b)
        assert [m.to_json() for m in ma] == [m.to_json() for m in mb]
        k = rng.randrange(len(ma))
        a, b = E.apply_move(a, ma[k]), E.apply_move(b, mb[k])
    assert E.final_scores(a).totals == E.final_scores(b).totals


# --- scoring and tie-breakers ----------------------------------------------------------------


def test_men_of_letters_formula_of_three_measures(option: Any) -> None:
    E = option("scholar-score")
    g = E.new_game(3, ("scholar-score",), 0)
    p = g.players[0]
    p.decrees += [g.decree_display.pop(), g.decree_display.pop()]
    p.completed_plans.append(g.plan_supply.pop())
    place_officials(g, 0, "manuel", 3)
    place_officials(g, 0, "king", 2)
    sheet = E.final_scores(g)
    line = next(ln for ln in sheet.lines[0] if ln.source == "score.scholar")
    assert line.points == (2 + 1) // 2 + 5 // 2
    assert [s.id for s in g.rs.scoring].index("score.scholar") == [
        s.id for s in g.rs.scoring].index("score.decrees") + 1


def test_the_fuller_portfolio_breaks_the_last_tie(base: Any, option: Any) -> None:
    E = option("portfolio-tiebreak")
    places = {}
    for label, engine, chosen in (("house", E, ("portfolio-tiebreak",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        for p in g.players:
            p.reis, p.influence, p.wigs = 0, 0, 10
        g.players[2].portfolio.append(g.players[2].hand.pop())
        sheet = engine.final_scores(g)
        assert len(set(sheet.totals)) == 1
        places[label] = engine.ranking(g, sheet).places
    assert places == {"house": ((2,), (0, 1)), "base": ((0, 1, 2),)}


@pytest.mark.parametrize("sets", [0, 2, 3])
def test_rubble_pays_one_wig_more_per_set(base: Any, option: Any, sets: int) -> None:
    E = option("rubble-plus-one")
    points = []
    for engine, chosen in ((E, ("rubble-plus-one",)), (base, ())):
        g = engine.new_game(3, chosen, 0)
        set_rubble(g, 1, sets)
        sheet = engine.final_scores(g)
        points.append(next(ln.points for ln in sheet.lines[1] if ln.source == "score.rubble"))
    assert points[0] - points[1] == sets


def test_a_wig_at_once_with_every_set(base: Any, option: Any) -> None:
    E = option("rubble-wig-effect")
    out = {}
    for label, engine, chosen in (("house", E, ("rubble-wig-effect",)), ("base", base, ())):
        g = engine.new_game(3, chosen, 0)
        seat, card = _a_cube_from_a_set(g)
        wigs = g.players[seat].wigs
        after = engine.apply_move(g, engine.Move("portfolio", seat, card=card))
        out[label] = (after.players[seat].rubble_sets, after.players[seat].wigs - wigs)
    assert out == {"house": (1, 1), "base": (1, 0)}


# --- variants by player count ----------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_three_four_display(option: Any, players: int) -> None:
    E = option("three-four-display")
    g = E.new_game(players, (), 0)
    assert ("three-four-display" in g.variants) == (players > 2)
    assert len(g.decree_display) == (8 if players == 2 else 6)
    # three display piles empty: the first period ends with 2 players only
    for pile in list(g.piles)[1:]:
        g.discard.extend(g.piles[pile])
        g.piles[pile] = []
    g = _discard(E, g)
    assert ("period-end.display" in g.fired) == (players == 2)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_big_hands_for_two_or_three(option: Any, players: int) -> None:
    """Valid although the starting deck cannot deal 4 hands of 6: it never has to. The saves
    of each player count load (their own schema: 6 cards are no more than a hand)."""
    E = option("big-hands")
    g = E.new_game(players, (), 1)
    assert {len(p.hand) for p in g.players} == {6 if players < 4 else 5}
    assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)
    with pytest.raises(E.BadArgument):
        E.new_game(4, ("big-hands",), 1)
    if players == 4:  # a 4-player save with a hand of 6 is no save of these rules
        data = E.to_json(g)
        data["players"][0]["hand"].append(data["piles"]["manuel"].pop())
        with pytest.raises(E.StateError):
            E.from_json(data)


# --- a fourth Noble --------------------------------------------------------------------------


def test_the_bishop_as_an_option_has_his_saves(option: Any) -> None:
    E = option("bishop")
    g = E.new_game(3, ("bishop",), 2)
    assert g.favors["bishop"] == 3 and "bishop" in g.offices and g.piles["bishop"]
    assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)
    # a game of the rules without him: his ids are none of its ids
    data = E.to_json(E.new_game(3, (), 2))
    data["favors"]["bishop"] = 0
    with pytest.raises(E.StateError, match="bishop"):
        E.from_json(data)
    # and one with him needs his
    data = E.to_json(g)
    del data["favors"]["bishop"]
    with pytest.raises(E.StateError, match="bishop"):
        E.from_json(data)


def test_the_blessing_on_a_visit_and_as_an_event(option: Any) -> None:
    E = option("bishop")
    g = E.new_game(3, ("bishop",), 2)
    seat = g.current
    card = _hand_with(E, g, "bishop")
    p = g.players[seat]
    p.influence = 5
    p.completed_plans += [g.plan_supply.pop(), g.plan_supply.pop()]
    move = next(m for m in E.legal_moves(g)
                if m.kind == "visit" and m.card == card and m.state_action is None)
    after = E.apply_move(g, move)
    assert after.players[seat].wigs - p.wigs == 2 and after.players[seat].rubble_cubes == 1
    # card 89: a Treasury card whose event is his Noble action
    g = E.new_game(3, ("bishop",), 2)
    seat = g.current
    set_hand(g, seat, [*g.players[seat].hand[:4], 89])
    g.players[seat].reis = 20
    g.players[seat].completed_plans.append(g.plan_supply.pop())
    after = E.apply_move(g, E.Move("sponsor", seat, card=89))
    assert after.players[seat].wigs - g.players[seat].wigs == 1


# --- a list replaced, an item removed --------------------------------------------------------


def test_the_king_takes_only_gold(base: Any, option: Any) -> None:
    E = option("king-gold-only")
    for engine, chosen, goods in ((E, ("king-gold-only",), {"gold"}),
                                  (base, (), {"cloth", "gold"})):
        g = engine.new_game(3, chosen, 0)
        found = {m.good for m in engine.legal_moves(g)
                 if m.kind == "trade" and m.state_action in ("cardinal", "royal-favor")}
        assert found == goods


def test_without_the_cardinal(base: Any, option: Any) -> None:
    E = option("no-cardinal")
    g = E.new_game(3, ("no-cardinal",), 0)
    assert {m.state_action for m in E.legal_moves(g) if m.kind == "trade"} == {
        "officials", "plan", "production", "royal-favor", "ship"}
    # a visit to the King offers his new pair
    card = _king_visit(E, g)
    assert {m.state_action for m in E.legal_moves(g) if m.kind == "visit" and m.card == card} \
        == {None, "royal-favor", "plan"}


def _king_visit(E: Any, g: Any) -> int:
    """A King card in the current player's hand, and a Plan they can open with his Noble
    action."""
    seat = g.current
    card = _hand_with(E, g, "king")
    p = g.players[seat]
    p.influence = 5
    p.plans.append(g.plan_supply.pop())
    place_officials(g, seat, "manuel", g.rs.plans[p.plans[-1]])
    return card


# --- follows ---------------------------------------------------------------------------------


def test_private_audiences(base: Any, option: Any) -> None:
    E = option("no-follows")
    for engine, chosen, phase in ((E, ("no-follows",), "refill"), (base, (), "follow")):
        g = engine.new_game(3, chosen, 0)
        card = _king_visit(engine, g)
        move = next(m for m in engine.legal_moves(g) if m.kind == "visit" and m.card == card
                    and m.state_action == "royal-favor")
        # every other player holds the King's Royal Favor from the start
        assert engine.apply_move(g, move).phase == phase


def test_shared_events_for_two_wigs(option: Any) -> None:
    E = option("shared-events")
    g = E.new_game(3, ("shared-events",), 0)
    seat = g.current
    card = card_of(E, g, g.rs.treasury_pile, event_effects=(("reis", 3),))
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis = 20
    g = E.apply_move(g, E.Move("sponsor", seat, card=card))
    assert (g.phase, g.actor, g.visit) == ("follow", (seat + 1) % 3, None)
    assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)  # a save in an event's follows loads
    f = g.actor
    p = g.players[f]
    p.reis, p.wigs = 10, 3
    price = g.rs.treasury_values[g.treasury]
    favors = list(p.royal_favors)
    after = E.apply_move(g, E.Move("follow", f))
    q = after.players[f]
    assert (q.wigs, q.reis, q.royal_favors) == (1, 10 - price + 3, favors)
    # without 2 wigs, the follow is refused with the rule's words
    after.players[after.actor].wigs = 1
    err = E.explain_move(after, E.Move("follow", after.actor))
    assert err is not None and "costs 2 wigs" in err.reason


# --- a new player field, folded --------------------------------------------------------------


def test_prestige_is_earned_and_scored(folded: Any) -> None:
    E = folded("prestige")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = _king_visit(E, g)
    move = next(m for m in E.legal_moves(g)
                if m.kind == "visit" and m.card == card and m.state_action is None)
    after = E.apply_move(g, move)
    assert after.players[seat].prestige == 1
    line = next(ln for ln in E.final_scores(after).lines[seat] if ln.source == "score.prestige")
    assert line.points == 2
