"""The house rules of examples/house-rules/, each a structural change written in YAML alone.

Each example is copied with rules/ into a project of its own (rules/variants/NAME.yaml) and
built by the CLI, folded into the base game (`build --variant NAME`) and as an option chosen at
setup (`build`); the generated engines are imported and played on constructed or seeded
states, and the references read. Every file of examples/house-rules/ is found by
`test_every_example_builds_*`, so a change of the compiler or of rules/ that breaks one fails
here. An example that YAML cannot express yet is in BLOCKED: its build is a strict xfail, so
the day the compiler accepts it the test says so.
"""

from __future__ import annotations

import html as html_lib
import importlib.util
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from conftest import (
    card_of,
    drop_favors,
    finish_turn,
    give_favor,
    place_officials,
    set_hand,
    set_rubble,
    sound,
)

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "house-rules"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))

# Examples the compiler refuses today, with the diagnostic it gives (see each file's header).
BLOCKED: dict[str, str] = {}

# What each example's redline page (built unfolded) lists among its changes.
REDLINE = {
    "period-tax": "period-end.tax",
    "period-one-grant": "period-end.royal-grant",
    "warehouse-bonus": "house.merchant-prize",
    "wig-race": "game-end.wigs",
    "rubble-bounty": "On: rubble-set-completed",
    "fourth-noble": "Endow a church",
    "goods-scoring": "Goods left in your warehouse",
    "influence-tiebreak": "most Influence",
    "tithe-effect": "Id: tithe",
    "followed-events": "Followable",
    "both-state-actions": "visit-second-state-action",
    "store-tithe": "On: store-built",
    "pioneer-grant": "build-store.pioneer-grant",
    "merchant-prize-any-period": "house.merchant-prize-any",
    "guild-purse": "On: store-built",
    "cheap-follow": "follow-visit.pay",
    "hand-noble": "Endow a church",
    "stores-by-count": "Stores by count",
    "widdershins": "Widdershins: play goes counter-clockwise",
}

# Words each example's folded reference prints and the base reference does not.
NEW_WORDS = {
    "period-tax": "The Crown's tax: every player pays 1 real",
    "period-one-grant": "The royal grant: at the end of the first period only",
    "warehouse-bonus": "the first player to hold 5 goods scores 2 wigs at once",
    "wig-race": "triggered as soon as a player has 40 wigs",
    "rubble-bounty": "each rubble set you complete scores 1 wig at once",
    "fourth-noble": "Endow a church: pay 3 réis, score 2 wigs and take 1 rubble cube",
    "goods-scoring": "Goods left in your warehouse",
    "influence-tiebreak": "then most Influence, then most rubble sets",
    "tithe-effect": "The tithe: for each point, give up 1 real",
    "followed-events": "With this house rule, the other players may follow the event",
    "both-state-actions": "you may then take his other State action too",
    "store-tithe": "The tithe: for each point, give up 1 real",
    "pioneer-grant": "The pioneer's grant: if no player has a store in that business yet",
    "merchant-prize-any-period": "at any time of the game, the first player to hold 6 goods",
    "guild-purse": "The guild's purse: take 2 réis for the new store.",
    "cheap-follow": "The cheap follow: pay 1 real for the follow, not the visit's Influence.",
    "hand-noble": "Endow a church: pay 3 réis, score 2 wigs and take 1 rubble cube",
    "stores-by-count": "Stores by count: each store you own scores 2 wigs",
    "widdershins": "Widdershins: play goes counter-clockwise",
}


@dataclass
class Build:
    engine: ModuleType
    md: str  # reference/rules-annotated.md (the edition with every id and the full redline)
    html: str  # reference/rules-annotated.html


_BUILDS: dict[tuple[str, bool], Build] = {}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def _rules(names: tuple[str, ...], *files: Path) -> list[str]:
    """The build's options for the rules with these examples (and files) added as house rules
    (`--house`: nothing is copied)."""
    house = [EXAMPLES / f"{name}.yaml" for name in names] + list(files)
    return ["--rules", str(ROOT / "rules"), *(a for f in house for a in ("--house", str(f)))]


def _build(
    tmp_factory: pytest.TempPathFactory,
    name: str,
    fold: bool,
    capsys: pytest.CaptureFixture[str] | None = None,
) -> Build:
    """The example built folded (`--variant NAME`) or unfolded, once per test session."""
    key = (name, fold)
    if key not in _BUILDS:
        tmp = tmp_factory.mktemp(f"{name}-{'folded' if fold else 'option'}")
        out = tmp / "generated"
        args = ["build", "--no-cache", *_rules((name,)), "--out", str(out)]
        if fold:
            args += ["--variant", name]
        if capsys is not None:
            capsys.readouterr()
        code = main(args)
        err = capsys.readouterr().err if capsys is not None else ""
        assert code == 0, f"lisboa-rules {' '.join(args)} failed:\n{err}"
        assert "warning" not in err, err
        tag = re.sub(r"\W", "_", f"{name}_{fold}")
        _BUILDS[key] = Build(
            _load(out / "lisboa_engine.py", f"house_example_{tag}"),
            (out / "reference" / "rules-annotated.md").read_text(encoding="utf-8"),
            (out / "reference" / "rules-annotated.html").read_text(encoding="utf-8"),
        )
    return _BUILDS[key]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The unmodified rules, built the same way."""
    tmp = tmp_path_factory.mktemp("base")
    assert main(["build", "--no-cache", *_rules(()), "--out", str(tmp / "g")]) == 0
    return Build(
        _load(tmp / "g" / "lisboa_engine.py", "house_example_base"),
        (tmp / "g" / "reference" / "rules-annotated.md").read_text(encoding="utf-8"),
        (tmp / "g" / "reference" / "rules-annotated.html").read_text(encoding="utf-8"),
    )


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    def get(name: str) -> ModuleType:
        return _build(tmp_path_factory, name, True).engine

    return get


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def _blocked(name: str) -> None:
    if name in BLOCKED:
        pytest.xfail(f"not expressible yet: {BLOCKED[name]}")


# --- every example builds, folded and as an option, and its reference shows it -------------


def test_the_examples_are_there() -> None:
    assert len(NAMES) >= 7, NAMES
    for name in NAMES:
        doc = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
        assert doc["id"] == name and doc["kind"] == "variant"
        head = (EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8").splitlines()
        assert head[1].startswith("# House rule:"), name  # the comment header
        assert any(line.startswith("# What it changes:") for line in head[:12]), name
        assert name in NEW_WORDS, f"add the words {name}'s reference prints to NEW_WORDS"
        assert name in REDLINE, f"add what {name}'s redline page lists to REDLINE"


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_every_example_builds_folded(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    base: Build,
    name: str,
) -> None:
    if name in BLOCKED:
        pytest.xfail(f"not expressible yet: {BLOCKED[name]}")
    b = _build(tmp_path_factory, name, True, capsys)
    assert [v["id"] for v in b.engine.GAME_INFO["folded_variants"]] == [name]
    assert tuple(b.engine.new_game(3).variants) == ()


# Folded, a house rule is part of the base game: the reference has no redline page for it; its
# steps (effects, hooks) are printed in the Effects chapter.
REFERENCE_GAPS: dict[str, str] = {}


def _reference_cases() -> list[Any]:
    out = []
    for name in NAMES:
        reason = BLOCKED.get(name) or REFERENCE_GAPS.get(name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", _reference_cases())
def test_folded_reference_shows_the_change(
    tmp_path_factory: pytest.TempPathFactory, base: Build, name: str
) -> None:
    b = _build(tmp_path_factory, name, True)
    words = NEW_WORDS[name]
    assert words in _text(b.html) and words in b.md.replace("\\", "")
    assert words not in _text(base.html)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_every_example_builds_as_an_option(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Unfolded (no example changes rules/state.yaml), the example is a variant chosen at
    setup, with its own redline page in the reference listing its changes."""
    doc = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
    if "state" in doc["changes"]:
        pytest.skip("a change of rules/state.yaml is built folded only")
    _blocked(name)
    b = _build(tmp_path_factory, name, False, capsys)
    E = b.engine
    assert name in E.VARIANTS and (name,) in E.RULESETS
    g = E.new_game(3, (name,), 0)
    assert tuple(g.variants) == (name,)
    sound(E, g)
    page = re.search(
        rf'<section class="variant-page" id="variant-{name}">(.*?)</section>', b.html, re.DOTALL
    )
    assert page is not None, f"no redline page for {name}"
    text = _text(page.group(1))
    assert doc["title"] in text and "Changes, base" in text
    assert REDLINE[name] in text, text
    assert re.search(r"<table class=\"redline\">.*?<ins>", page.group(1), re.DOTALL)


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", NAMES)
def test_every_example_as_an_option_loads_its_saves(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A seeded game with the example chosen, every state saved and loaded back: the engine
    never refuses its own saves (a fourth Noble's ids are in the schema of his rule set, a
    followed event's follow phase is a phase a save may be in)."""
    doc = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
    if "state" in doc["changes"]:
        pytest.skip("a change of rules/state.yaml is built folded only")
    _blocked(name)
    E = _build(tmp_path_factory, name, False, capsys).engine
    for seed in range(2):
        g = E.new_game(3, (name,), seed)
        rng = random.Random(seed)
        while g.phase != "over":
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            saved = E.dumps(g)
            assert E.dumps(E.loads(saved)) == saved


def test_base_build_check_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    """The examples live outside rules/: the committed generated/ stays up to date."""
    capsys.readouterr()
    assert (
        main(
            [
                "build",
                "--check",
                "--no-cache",
                "--rules",
                str(ROOT / "rules"),
                "--out",
                str(ROOT / "generated"),
            ]
        )
        == 0
    ), capsys.readouterr().err


# --- 1. a new step in a procedure ----------------------------------------------------------


def _end_period_now(E: Any, g: Any) -> Any:
    """Make the period end pending and finish the turn with a discard: the end of the period
    runs up to the hand discard."""
    g.period_end_by = g.current
    card = g.players[g.current].hand[0]
    g = E.apply_move(g, E.Move("discard", g.current, card=card))
    g = finish_turn(E, g)
    assert g.phase == "hand-discard"
    return g


@pytest.mark.parametrize(("seed", "broke"), [(0, None), (1, 2), (5, 1), (2, 0)])
def test_period_tax_takes_one_real_from_each(
    base: Build, folded: Any, seed: int, broke: int | None
) -> None:
    """`broke`: a seat (counted from the current player) with no réis, who pays nothing
    (the current player earns a real by discarding first, and pays it)."""
    results = {}
    for label, E in (("base", base.engine), ("house", folded("period-tax"))):
        g = E.new_game(3, (), seed)
        if broke is not None:
            broke_seat = (g.current + broke) % 3
            g.players[broke_seat].reis = 0
        before = [p.reis for p in g.players]
        wigs = [p.wigs for p in g.players]
        g = _end_period_now(E, g)
        results[label] = [p.reis - b for p, b in zip(g.players, before, strict=True)]
        results[label + "-wigs"] = [p.wigs - w for p, w in zip(g.players, wigs, strict=True)]
        sound(E, g)
    g = base.engine.new_game(3, (), seed)
    broke_seat = None if broke in (None, 0) else (g.current + broke) % 3
    tax = [b - (0 if s == broke_seat else 1) for s, b in enumerate(results["base"])]
    assert results["house"] == tax
    assert results["house-wigs"] == results["base-wigs"]


def test_period_tax_is_listed_in_place(base: Build, folded: Any) -> None:
    steps = [s.id for s in folded("period-tax").RULESETS[()].period_end]
    expected = [s.id for s in base.engine.RULESETS[()].period_end]
    expected.insert(expected.index("period-end.rubble-wigs") + 1, "period-end.tax")
    assert steps == expected


def test_period_tax_only_when_chosen(tmp_path_factory: pytest.TempPathFactory) -> None:
    E = _build(tmp_path_factory, "period-tax", False).engine
    assert "period-end.tax" not in [s.id for s in E.RULESETS[()].period_end]
    assert "period-end.tax" in [s.id for s in E.RULESETS[("period-tax",)].period_end]
    for chosen, paid in (((), 0), (("period-tax",), 1)):
        g = E.new_game(3, chosen, 3)
        seat = (g.current + 1) % 3
        before = g.players[seat].reis
        g = _end_period_now(E, g)
        assert g.players[seat].reis == before - paid


@pytest.mark.parametrize("period", [1, 2])
@pytest.mark.parametrize("without_favor", [(), (0,), (1, 2)])
def test_royal_grant_only_at_the_end_of_period_one(
    base: Build, folded: Any, period: int, without_favor: tuple[int, ...]
) -> None:
    E = folded("period-one-grant")
    steps = [s.id for s in E.RULESETS[()].period_end]
    assert steps.index("period-end.royal-grant") == steps.index("period-end.hand-discard") - 1
    reis = {}
    for label, engine in (("base", base.engine), ("house", E)):
        g = engine.new_game(3, (), 2)
        g.period = period
        for seat in without_favor:
            drop_favors(g, seat)
        g = _end_period_now(engine, g)
        reis[label] = [p.reis for p in g.players]
    gain = [h - b for h, b in zip(reis["house"], reis["base"], strict=True)]
    assert gain == [2 if period == 1 and s in without_favor else 0 for s in range(3)]


# --- 1b. a new step inside a Noble action, placed by the id of one of its steps --------------


def _build_a_store(
    E: Any, g: Any, seat: int, business: str, sponsor: bool, built: tuple[tuple[int, str], ...]
) -> Any:
    """Seat builds a store in `business` (by a visit to Manuel or a sponsored event), with
    rich réis and Influence; `built`: the stores already on the board, (seat offset from the
    builder, business) each."""
    for offset, where in built:
        g.players[(seat + offset) % 3].stores[where] += 1
    p = g.players[seat]
    if sponsor:
        card = card_of(E, g, "treasury", event_action="build-store")
        move = E.Move("sponsor", seat, card=card, business=business)
    else:
        card = card_of(E, g, "manuel")
        move = E.Move("visit", seat, card=card, business=business)
    set_hand(g, seat, [*p.hand[:4], card])
    p.reis, p.influence = 30, 10
    return E.apply_move(g, move)


@pytest.mark.parametrize(
    ("business", "sponsor", "built", "grant"),
    [
        ("gold", False, (), 2),  # the first store of all
        ("books", True, (), 2),  # a sponsored event builds it the same way
        ("gold", False, ((1, "gold"),), 0),  # another player was there first
        ("tools", True, ((0, "tools"), (2, "tools")), 0),  # so were you
        ("cloth", False, ((1, "gold"), (2, "books"), (0, "tools")), 2),  # other businesses
    ],
)
def test_pioneer_grant_for_the_first_store_of_a_business(
    base: Build,
    folded: Any,
    business: str,
    sponsor: bool,
    built: tuple[tuple[int, str], ...],
    grant: int,
) -> None:
    """(réis, stores, rubble cubes) after building a store, house rule minus rules. The grant
    counts the stores before the new one is placed: placed after `build-store.pay`, the new
    step runs before `build-store.place` (at the end of the list, it would pay nothing)."""
    out = {}
    for label, E in (("base", base.engine), ("house", folded("pioneer-grant"))):
        g = E.new_game(3, (), 6)
        seat = g.current
        g = _build_a_store(E, g, seat, business, sponsor, built)
        p = g.players[seat]
        assert p.stores[business] == 1 + sum(1 for o, b in built if o == 0 and b == business)
        out[label] = (p.reis, dict(p.stores), p.rubble_cubes)
        sound(E, g)
    (h_reis, h_stores, h_cubes), (b_reis, b_stores, b_cubes) = out["house"], out["base"]
    assert (h_reis - b_reis, h_stores, h_cubes) == (grant, b_stores, b_cubes)


@pytest.mark.parametrize(("follower_builds", "grant"), [("gold", 0), ("books", 2)])
def test_pioneer_grant_once_per_business_across_a_follow(
    folded: Any, follower_builds: str, grant: int
) -> None:
    """The visitor opens gold and takes the grant; a follower who builds in gold too takes
    none, one who opens another business takes it."""
    E = folded("pioneer-grant")
    g = E.new_game(3, (), 7)
    seat = g.current
    follower = (seat + 1) % 3
    drop_favors(g, (seat + 2) % 3)
    give_favor(g, follower, "manuel")
    g.players[follower].reis, g.players[follower].influence = 30, 10
    price = g.rs.treasury_values[g.treasury] + 2  # the land price: Treasury + 2 rubble
    g = _build_a_store(E, g, seat, "gold", False, ())
    assert g.players[seat].reis == 30 - price + 2
    assert (g.phase, g.actor) == ("follow", follower)
    reis = g.players[follower].reis
    g = E.apply_move(g, E.Move("follow", follower, noble_action=True, business=follower_builds))
    assert g.players[follower].stores[follower_builds] == 1
    assert reis - g.players[follower].reis == price - grant  # the follow costs Influence
    sound(E, g)


def test_pioneer_grant_only_when_chosen(tmp_path_factory: pytest.TempPathFactory) -> None:
    E = _build(tmp_path_factory, "pioneer-grant", False).engine
    for chosen, grant in (((), 0), (("pioneer-grant",), 2)):
        g = E.new_game(3, chosen, 6)
        seat = g.current
        price = g.rs.treasury_values[g.treasury] + 2
        g = _build_a_store(E, g, seat, "gold", False, ())
        assert g.players[seat].reis == 30 - price + grant


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_pioneer_grant_is_printed_in_place(
    tmp_path_factory: pytest.TempPathFactory, fmt: str
) -> None:
    """The folded reference's Build a Store card lists the new step where it runs: after the
    payment, before the rubble; the option's redline page too."""
    words = ["...pay the land price...", NEW_WORDS["pioneer-grant"], "...and take the rubble"]
    for fold in (True, False):
        b = _build(tmp_path_factory, "pioneer-grant", fold)
        page = b.md if fmt == "md" else b.html
        # the card (folded), or the steps of the redline page (an option)
        page = page[page.index('id="build-store"' if fold else "Steps that read differently") :]
        page = page.replace("\\", "") if fmt == "md" else _text(page)
        at = [page.find(w) for w in words]
        assert -1 not in at and at == sorted(at), (fold, at)


# --- 2. a new trigger on a state measure --------------------------------------------------


def _discard_turn(E: Any, g: Any) -> Any:
    card = g.players[g.current].hand[0]
    return E.apply_move(g, E.Move("discard", g.current, card=card))


@pytest.mark.parametrize(
    ("goods", "fires"),
    [
        ({"gold": 5}, True),
        ({"gold": 2, "books": 3}, True),
        ({"gold": 4}, False),
        ({"cloth": 1, "tools": 1, "books": 1}, False),
    ],
)
def test_merchant_prize_fires_on_the_goods_held(
    base: Build, folded: Any, goods: dict[str, int], fires: bool
) -> None:
    E = folded("warehouse-bonus")
    g = E.new_game(3, (), 0)
    seat = (g.current + 1) % 3
    g.players[seat].goods = {**dict.fromkeys(g.players[seat].goods, 0), **goods}
    wigs = [p.wigs for p in g.players]
    g = _discard_turn(E, g)
    assert ("house.merchant-prize" in g.fired) == fires
    assert [p.wigs - w for p, w in zip(g.players, wigs, strict=True)] == [
        2 if fires and s == seat else 0 for s in range(3)
    ]
    assert g.period_end_by is None and g.game_end_round is None  # it ends nothing
    if fires:  # once a game: a second full warehouse scores nothing
        other = (seat + 1) % 3
        g.players[other].goods.update({"tools": 6})
        w = g.players[other].wigs
        g = finish_turn(E, g)
        g = _discard_turn(E, g)
        assert g.players[other].wigs == w
        assert g.fired.count("house.merchant-prize") == 1
    # the base game has no such trigger
    gb = base.engine.new_game(3, (), 0)
    gb.players[seat].goods.update({"gold": 6})
    gb = _discard_turn(base.engine, gb)
    assert gb.fired == []


def test_merchant_prize_not_in_period_two(folded: Any) -> None:
    E = folded("warehouse-bonus")
    g = E.new_game(3, (), 0)
    g.period = 2
    g.players[0].goods["gold"] = 6
    g = _discard_turn(E, g)
    assert "house.merchant-prize" not in g.fired


@pytest.mark.parametrize(
    ("period", "wigs", "ends"), [(2, 40, True), (2, 55, True), (2, 39, False), (1, 45, False)]
)
def test_wig_race_ends_the_game(
    base: Build, folded: Any, period: int, wigs: int, ends: bool
) -> None:
    for label, E in (("house", folded("wig-race")), ("base", base.engine)):
        g = E.new_game(3, (), 1)
        g.period = period
        seat = (g.current + 2) % 3
        g.players[seat].wigs = wigs
        g = _discard_turn(E, g)
        fired = label == "house" and ends
        assert ("game-end.wigs" in g.fired) == fired
        assert (g.game_end_round is not None) == fired
        if fired:
            assert g.final_round == g.game_end_round + g.rs.extra_rounds


# --- 3. a hook on an event ----------------------------------------------------------------


def _store_visit(E: Any, g: Any, seat: int) -> Any:
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis = 30
    g.players[seat].influence = 10
    return E.apply_move(g, E.Move("visit", seat, card=card, business="gold"))


@pytest.mark.parametrize(("cubes", "sets"), [(0, 0), (1, 0), (2, 1), (5, 2)])
def test_rubble_bounty_on_each_completed_set(
    base: Build, folded: Any, cubes: int, sets: int
) -> None:
    out = {}
    for label, E in (("base", base.engine), ("house", folded("rubble-bounty"))):
        g = E.new_game(3, (), 4)
        seat = g.current
        set_rubble(g, seat, 1, cubes=cubes)
        g = _store_visit(E, g, seat)
        assert g.players[seat].rubble_sets == 1 + sets
        out[label] = g.players[seat].wigs
        sound(E, g)
    assert out["house"] - out["base"] == sets


def test_rubble_bounty_from_a_card_reward(base: Build, folded: Any) -> None:
    """The event is raised by the effect `rubble` wherever it is named: a card's reward too."""
    out = {}
    for label, E in (("base", base.engine), ("house", folded("rubble-bounty"))):
        g = E.new_game(3, (), 0)
        seat = g.current
        set_rubble(g, seat, 0, cubes=2)
        card = card_of(E, g, "manuel", reward=(("rubble", 1),))
        set_hand(g, seat, [*g.players[seat].hand[:4], card])
        g = E.apply_move(g, E.Move("portfolio", seat, card=card))
        assert g.players[seat].rubble_sets == 1
        out[label] = g.players[seat].wigs
    assert out["house"] == out["base"] + 1


# --- 4. a fourth Noble --------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_fourth_noble_has_office_plaza_favors_and_pile(folded: Any, players: int) -> None:
    E = folded("fourth-noble")
    g = sound(E, E.new_game(players, (), players))
    assert [n.id for n in g.rs.nobles][-1] == "patriarch"
    assert "patriarch" in g.offices and "patriarch" in g.plazas
    assert g.favors["patriarch"] == players
    assert list(g.piles)[-1] == "patriarch"
    assert g.piles["patriarch"] and {g.rs.cards[c].type for c in g.piles["patriarch"]} == {
        "patriarch"
    }
    cards = [n for n, c in g.rs.cards.items() if c.type == "patriarch"]
    assert sorted(cards) == list(range(83, 91))
    if players == 2:  # the 2-player neutral Officials sit in his office too
        assert g.offices["patriarch"].get("neutral", 0) == g.offices["manuel"].get("neutral", 0) > 0


@pytest.mark.parametrize(("state_action", "reis"), [(None, 10), ("plan", 3), ("ship", 10)])
def test_fourth_noble_visit_endows_a_church(
    folded: Any, state_action: str | None, reis: int
) -> None:
    E = folded("fourth-noble")
    g = E.new_game(3, (), 7)
    seat = g.current
    p = g.players[seat]
    card = card_of(E, g, "patriarch")
    set_hand(g, seat, [*p.hand[:4], card])
    p.reis, p.influence = reis, 5
    move = E.Move("visit", seat, card=card, state_action=state_action)
    assert move in E.legal_moves(g)
    cost = E.visit_cost(g, seat, "patriarch")
    ship_cost = g.rs.ships[g.shipyard[-1]][1] if state_action == "ship" else 0
    p.reis = max(p.reis, ship_cost + 3) if state_action == "ship" else p.reis
    before = (p.wigs, p.reis, p.rubble_cubes, len(p.plans), len(p.ships))
    g = E.apply_move(g, move)
    q = g.players[seat]
    if state_action != "ship":  # a Ship gains Influence
        assert q.influence == 5 - cost
    assert q.wigs == before[0] + 2
    assert q.reis == before[1] - 3 - ship_cost
    assert q.rubble_cubes == before[2] + 1
    assert len(q.plans) == before[3] + (state_action == "plan")
    assert len(q.ships) == before[4] + (state_action == "ship")
    sound(E, g)


def test_fourth_noble_visit_refused_without_the_endowment(folded: Any) -> None:
    E = folded("fourth-noble")
    g = E.new_game(3, (), 7)
    seat = g.current
    p = g.players[seat]
    card = card_of(E, g, "patriarch")
    set_hand(g, seat, [*p.hand[:4], card])
    p.reis, p.influence, p.wigs = 0, 0, 10  # no réis, no real icon; wigs pay the visit
    assert not [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
    with pytest.raises(E.IllegalMove, match="endowment costs 3"):
        E.apply_move(g, E.Move("visit", seat, card=card))


def test_fourth_noble_can_be_followed_and_take_markers_and_favors(folded: Any) -> None:
    E = folded("fourth-noble")
    g = E.new_game(3, (), 7)
    seat = g.current
    follower = (seat + 1) % 3
    give_favor(g, follower, "patriarch")
    g.players[follower].reis, g.players[follower].influence = 10, 10
    card = card_of(E, g, "patriarch")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis, g.players[seat].influence = 10, 10
    g = E.apply_move(g, E.Move("visit", seat, card=card))
    assert (g.phase, g.actor, g.visit) == ("follow", follower, "patriarch")
    w = g.players[follower].wigs
    g = E.apply_move(g, E.Move("follow", follower, noble_action=True))
    assert g.players[follower].wigs == w + 2
    assert "patriarch" not in g.players[follower].royal_favors  # returned to his stack
    sound(E, g)
    # a Rubble Set marker may be placed on him
    g2 = E.new_game(3, (), 7)
    s = g2.current
    set_rubble(g2, s, 0, cubes=2)
    c = card_of(E, g2, "patriarch")
    set_hand(g2, s, [*g2.players[s].hand[:4], c])
    g2.players[s].reis, g2.players[s].influence = 10, 10
    g2 = E.apply_move(g2, E.Move("visit", s, card=c))
    assert g2.phase == "marker"
    assert E.Move("marker", s, noble="patriarch") in E.legal_moves(g2)
    g2 = E.apply_move(g2, E.Move("marker", s, noble="patriarch"))
    assert g2.players[s].markers.get("patriarch") == 1


# --- 5. a new scoring source ----------------------------------------------------------------


@pytest.mark.parametrize("goods", [(0, 3, 8), (2, 5, 6), (6, 0, 1)])
def test_goods_scoring_line(base: Build, folded: Any, goods: tuple[int, int, int]) -> None:
    E = folded("goods-scoring")
    ids = [s.id for s in E.RULESETS[()].scoring]
    base_ids = [s.id for s in base.engine.RULESETS[()].scoring]
    assert ids == [*base_ids[:1], "score.goods", *base_ids[1:]]  # after score.ships
    totals = {}
    for label, engine in (("house", E), ("base", base.engine)):
        g = engine.new_game(3, (), 0)
        for p, n in zip(g.players, goods, strict=True):
            p.goods = dict.fromkeys(p.goods, 0)
            p.goods["books"], p.goods["gold"] = n // 2, n - n // 2
        sheet = engine.final_scores(g)
        totals[label] = sheet.totals
        if label == "house":
            lines = [
                next(ln for ln in sheet.lines[s] if ln.source == "score.goods") for s in range(3)
            ]
            assert [ln.points for ln in lines] == [n // 3 for n in goods]
    assert [h - b for h, b in zip(totals["house"], totals["base"], strict=True)] == [
        n // 3 for n in goods
    ]


# --- 6. a new tie-breaker -------------------------------------------------------------------


@pytest.mark.parametrize("extra", [0, 4])
def test_influence_breaks_the_tie(base: Build, folded: Any, extra: int) -> None:
    """Seat 0 has a rubble set more, seat 1 more Influence, both the same total: the rules
    rank seat 0 first, the house rule seat 1."""
    places = {}
    for label, E in (("base", base.engine), ("house", folded("influence-tiebreak"))):
        g = E.new_game(3, (), 0)
        for p in g.players:
            p.reis, p.wigs = 0, extra
        set_rubble(g, 0, 1)
        g.players[1].wigs += 3  # rules/scoring.yaml score.rubble: 3 wigs a set
        g.players[0].influence, g.players[1].influence = 2, 4  # the same réis at the end
        g.players[2].wigs = 0
        sheet = E.final_scores(g)
        assert sheet.totals[0] == sheet.totals[1] > sheet.totals[2]
        places[label] = E.ranking(g, sheet).places
    assert places["base"][:2] == ((0,), (1,))
    assert places["house"][:2] == ((1,), (0,))
    names = [n for n, _ in folded("influence-tiebreak").RULESETS[()].tiebreakers]
    assert names[:2] == ["most wigs", "most Influence"]


# --- 7. a new kind of effect --------------------------------------------------------------


@pytest.mark.parametrize(("reis", "paid"), [(5, 2), (1, 1), (0, 0)])
def test_tithe_effect_on_a_card(folded: Any, reis: int, paid: int) -> None:
    _blocked("tithe-effect")
    E = folded("tithe-effect")
    g = E.new_game(3, (), 0)
    seat = g.current
    p = g.players[seat]
    set_hand(g, seat, [*p.hand[:4], 24])
    p.reis, p.influence = reis, 2
    g = E.apply_move(g, E.Move("portfolio", seat, card=24))
    assert g.players[seat].reis == reis - paid
    assert g.players[seat].influence == 2 + paid - 1  # the card's penalty: 1 Influence


def _store_tithe_run(E: Any, reis: int | None, after_cost: int, sponsor: bool) -> Any:
    """Seat builds a gold store (visit or sponsored event) with `after_cost` Influence left
    after the visit and `reis` réis (None: exactly the land price and the event's cost)."""
    g = E.new_game(3, (), 6)
    seat = g.current
    p = g.players[seat]
    if sponsor:
        card = card_of(E, g, "treasury", event_action="build-store")
        move = E.Move("sponsor", seat, card=card, business="gold")
    else:
        card = card_of(E, g, "manuel")
        move = E.Move("visit", seat, card=card, business="gold")
    set_hand(g, seat, [*p.hand[:4], card])
    p.influence = 10
    cost = 0 if sponsor else E.visit_cost(g, seat, "manuel")
    p.influence = after_cost + cost
    treasury = g.rs.treasury_values[g.treasury]
    price = treasury + 2 + (treasury if sponsor else 0)  # land price: Treasury + 2 rubble
    p.reis = price if reis is None else reis
    return E.apply_move(g, move).players[seat]


@pytest.mark.parametrize("sponsor", [False, True])
@pytest.mark.parametrize(
    ("reis", "after_cost", "change"),
    [(30, 5, (-1, 1, 0)), (None, 5, (0, 0, 0)), (30, 9, (-1, 1, 1)), (30, 10, (-1, 0, 1))],
)
def test_store_tithe_on_each_store_built(
    base: Build,
    folded: Any,
    sponsor: bool,
    reis: int | None,
    after_cost: int,
    change: tuple[int, int, int],
) -> None:
    """(réis, Influence, wigs) after building a store, house rule minus rules: the tithe takes a
    real for an Influence (none without a real left; a gain that reaches 10 scores a wig)."""
    h = _store_tithe_run(folded("store-tithe"), reis, after_cost, sponsor)
    b = _store_tithe_run(base.engine, reis, after_cost, sponsor)
    assert sum(h.stores.values()) == sum(b.stores.values()) == 1
    assert (h.reis - b.reis, h.influence - b.influence, h.wigs - b.wigs) == change


# --- 8. a changed action structure: builds, but the engine ignores it ---------------------


# --- 6. an action's structure: followable events, a second State action on a visit ----------


def _event_turn(E: Any, g: Any, effects: tuple[tuple[str, int], ...] = (("reis", 3),)) -> Any:
    """The player to act sponsors an event with these effects (réis enough to pay it)."""
    seat = g.current
    card = card_of(E, g, g.rs.treasury_pile, event_effects=effects)
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.players[seat].reis = 20
    return E.apply_move(g, E.Move("sponsor", seat, card=card))


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_followed_events_offer_a_follow_to_each_holder(base: Build, folded: Any, seed: int) -> None:
    E = folded("followed-events")
    g = _event_turn(E, E.new_game(3, (), seed))
    assert g.phase == "follow"
    seat = g.current
    follower = g.actor
    assert follower == (seat + 1) % 3 and g.players[follower].royal_favors
    moves = E.legal_moves(g)
    assert sorted(m.kind for m in moves if m.kind != "follow") == ["decline"]
    # one follow per Royal Favor held, paying the event réis first (no part chosen in
    # Influence), and more where the follower chooses to cover a part with Influence
    follows = [m for m in moves if m.kind == "follow"]
    assert sorted(m.noble for m in follows if m.event_influence is None) == \
        sorted(set(g.players[follower].royal_favors))
    assert {m.noble for m in follows} == set(g.players[follower].royal_favors)
    # the base game: nobody follows an event, the turn goes on with the refill
    b = _event_turn(base.engine, base.engine.new_game(3, (), seed))
    assert b.phase == "refill" and b.visit is None


@pytest.mark.parametrize(("reis", "ok"), [(20, True), (0, False)])
def test_following_an_event_pays_it_returns_a_favor_and_takes_it(
    folded: Any, reis: int, ok: bool
) -> None:
    E = folded("followed-events")
    g = _event_turn(E, E.new_game(3, (), 0))
    f = g.actor
    p = g.players[f]
    p.reis, p.influence = reis, 0
    noble = p.royal_favors[0]
    favors = g.favors[noble]
    price = g.rs.costs["sponsor-cost"](g, p, E._NO_CTX)
    move = E.Move("follow", f, noble=noble)
    if not ok:
        err = E.explain_move(g, move)
        assert err is not None and err.rule == "sponsor-cost"
        assert move not in E.legal_moves(g)
        return
    after = E.apply_move(g, move)
    q = after.players[f]
    assert q.reis == reis - price + 3  # paid the event, took its 3 réis
    assert noble not in q.royal_favors and after.favors[noble] == favors + 1
    assert after.treasury == g.treasury  # the Treasury marker moved once, for the sponsor
    assert after.actor != f  # the next holder, or the refill of the sponsor's hand


def test_followed_events_in_random_games(folded: Any) -> None:
    """Every listed move plays, the state stays sound, and events do get followed."""
    E = folded("followed-events")
    followed = 0
    for seed in range(6):
        g = E.new_game(3, (), seed)
        rng = random.Random(seed)
        while g.phase != "over":
            move = rng.choice(E.legal_moves(g))
            followed += move.kind == "follow" and g.visit is None
            g = E.apply_move(g, move)
            sound(E, g)
    assert followed > 0


def test_both_state_actions_on_a_visit(base: Build, folded: Any) -> None:
    E = folded("both-state-actions")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    moves = [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
    pairs = {(m.state_action, m.second_state_action) for m in moves}
    assert pairs == {(None, None), ("officials", None), ("plan", None), ("officials", "plan"),
                     ("plan", "officials")}
    m = next(m for m in moves if (m.state_action, m.second_state_action) == ("officials", "plan"))
    after = E.apply_move(g, m)
    p, q = g.players[seat], after.players[seat]
    assert q.officials == p.officials - 2 and len(q.plans) == len(p.plans) + 1
    assert after.offices["manuel"].get(p.color, 0) == 2
    # the same State action twice, or a second without a first, is refused with its reason
    for first, second in (("officials", "officials"), (None, "plan")):
        bad = E.Move("visit", seat, card=card, state_action=first, second_state_action=second,
                     business=m.business)
        err = E.explain_move(g, bad)
        assert err is not None and "other State action" in err.reason
    # the base game's moves have no such field
    assert "second_state_action" not in base.engine._MOVE_FIELDS


@pytest.mark.parametrize("blocked", ["officials", "plan"])
def test_second_state_action_blocked_by_a_good(folded: Any, blocked: str) -> None:
    E = folded("both-state-actions")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g.blocked.append(blocked)
    moves = [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]
    assert all(blocked not in (m.state_action, m.second_state_action) for m in moves)
    other = "plan" if blocked == "officials" else "officials"
    bad = E.Move("visit", seat, card=card, state_action=other, second_state_action=blocked,
                 business=moves[0].business)
    err = E.explain_move(g, bad)
    assert err is not None and err.rule == "nobles.state-actions-blocked"


def test_a_second_royal_favor_is_a_choice_of_its_own(folded: Any) -> None:
    """The King's two State actions both on one visit: the Royal Favor the second takes is
    the move's `second_favor` (renamed with `choices:`), not the first's `favor`."""
    E = folded("both-state-actions")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "king")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    p = g.players[seat]
    p.plans.append(g.plan_supply.pop())  # so that the King's Noble action can be taken
    place_officials(g, seat, "manuel", g.rs.plans[p.plans[-1]])
    moves = [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card
             and m.second_state_action == "royal-favor"]
    assert moves and all(m.second_favor is not None and m.favor is None for m in moves)
    m = moves[0]
    after = E.apply_move(g, m)
    assert after.players[seat].royal_favors.count(m.second_favor) == \
        g.players[seat].royal_favors.count(m.second_favor) + 1


@pytest.mark.parametrize("favor", ["king", "nobody"])
def test_a_renamed_choice_is_refused_by_its_own_name(folded: Any, favor: str) -> None:
    """A second State action that takes no Royal Favor refuses a move giving `second_favor`
    (any value) in the words of the choice the player sees, `second favor`, as the reference
    interpreter does; the first State action's refusal still names `favor`. (The engine named
    the choice by the effect's own name, `favor`, for both.)"""
    E = folded("both-state-actions")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    m = next(m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card
             and (m.state_action, m.second_state_action) == ("officials", "plan"))
    words = {"second_favor": "this move does not choose second favor",
             "favor": "this move does not choose favor"}
    for name, reason in words.items():
        bad = E.Move.from_json({**m.to_json(), name: favor})
        err = E.explain_move(g, bad)
        assert err is not None and (err.rule, err.reason) == ("visit", reason), (name, err)
        with pytest.raises(E.IllegalMove, match=reason + r" \("):
            E.apply_move(g, bad)


# --- what the examples had to work around ----------------------------------------------------


def _variant_build(tmp_path: Path, name: str, text: str, capsys: Any) -> tuple[int, str]:
    house = tmp_path / f"{name}.yaml"
    house.write_text(text, encoding="utf-8")
    capsys.readouterr()
    args = ["build", "--no-cache", *_rules((), house), "--variant", name]
    code = main([*args, "--out", str(tmp_path / "g")])
    return code, capsys.readouterr().err


def test_two_house_rules_that_add_names_are_chosen_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variant adds one vocabulary name (`$add: true`, matched by `name`), so two house rules
    that add names do not conflict: both are options of one build."""
    for name in ("goods-scoring", "warehouse-bonus"):
        text = (EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8")
        assert text.count("{$add: true, name:") == 1 and text.count("{name:") == 0
    capsys.readouterr()
    code = main(["build", "--no-cache", *_rules(("goods-scoring", "warehouse-bonus")), "--out",
                 str(tmp_path / "g")])
    assert code == 0, capsys.readouterr().err
    E = _load(tmp_path / "g" / "lisboa_engine.py", "house_two_names")
    g = E.new_game(3, ("goods-scoring", "warehouse-bonus"), 1)
    ids = [s.id for s in g.rs.scoring]
    assert "score.goods" in ids and any(t.id == "house.merchant-prize" for t in g.rs.triggers)


@pytest.mark.parametrize("param", ["influence", "reis"])
def test_a_param_named_like_a_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], param: str
) -> None:
    """Either it builds (the field is still the field) or a located diagnostic in the variant
    says why; never uncompilable generated code."""
    text = (EXAMPLES / "fourth-noble.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "params: {price: 3, wigs: 2}", f"params: {{price: 3, wigs: 2, {param}: 5}}"
    )
    text = text.replace(
        "ranges: {price: [0, null], wigs: [0, null]}",
        f"ranges: {{price: [0, null], wigs: [0, null], {param}: [0, null]}}",
    )
    assert f"{param}: 5}}" in text
    code, err = _variant_build(tmp_path, "fourth-noble", text, capsys)
    assert "generated-invalid" not in err, err
    if code != 0:  # refused, at the variant's line
        assert f"{tmp_path / 'fourth-noble.yaml'}:" in err, err
        return
    # built: the steps still read the player's réis and wigs, not the param
    E = _load(tmp_path / "g" / "lisboa_engine.py", f"house_shadow_{param}")
    g = E.new_game(3, (), 7)
    seat = g.current
    p = g.players[seat]
    card = card_of(E, g, "patriarch")
    set_hand(g, seat, [*p.hand[:4], card])
    p.reis, p.influence, p.wigs = 0, 0, 10
    assert not [m for m in E.legal_moves(g) if m.kind == "visit" and m.card == card]


@pytest.mark.parametrize("name", ["period-tax", "period-one-grant"])
def test_the_reference_prints_the_period_steps_the_engine_runs(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    """The folded reference numbers the end of the period's steps in the engine's order,
    the new one in its place."""
    b = _build(tmp_path_factory, name, True)
    steps = [s.id for s in b.engine.RULESETS[()].period_end]
    printed = re.findall(r'^\d+\. <a id="(period-end\.[a-z-]+)"></a>', b.md, re.MULTILINE)
    assert printed == steps


@pytest.mark.parametrize("noble", ["manuel", "patriarch"])
def test_fourth_noble_royal_favor_of_his(folded: Any, noble: str) -> None:
    """The King's Royal Favor State action (here by a trade) offers the new Noble's tiles like
    the others'."""
    E = folded("fourth-noble")
    g = E.new_game(3, (), 1)
    seat = g.current
    card = card_of(E, g, "king")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    move = E.Move("trade", seat, card=card, state_action="royal-favor", favor=noble, good="gold")
    assert move in E.legal_moves(g)
    supply = g.favors[noble]
    g = E.apply_move(g, move)
    assert g.favors[noble] == supply - 1 and noble in g.players[seat].royal_favors
    sound(E, g)


@pytest.mark.xfail(
    strict=True,
    reason="game.blocked (rules/state.yaml) is a list of State action ids, not keyed by Noble: "
    "a good on Manuel's Plan also blocks the Patriarch's Plan",
)
def test_fourth_noble_shared_state_action_blocked_apart(folded: Any) -> None:
    E = folded("fourth-noble")
    g = E.new_game(3, (), 0)
    seat = g.current
    card = card_of(E, g, "manuel")
    set_hand(g, seat, [*g.players[seat].hand[:4], card])
    g = E.apply_move(g, E.Move("trade", seat, card=card, state_action="plan", good="tools"))
    assert g.phase == "follow" or g.phase == "refill"
    # the next player, still in this turn's blocked state, visits the Patriarch
    g = finish_turn(E, g)
    g.blocked = ["plan"]  # as left by a trade at Manuel's Plan this turn
    seat = g.current
    p = g.players[seat]
    card = card_of(E, g, "patriarch")
    set_hand(g, seat, [*p.hand[:4], card])
    p.reis, p.influence = 10, 10
    plans = [m for m in E.legal_moves(g) if m.kind == "visit" and m.state_action == "plan"]
    assert plans, "the Patriarch's Plan is blocked by a good on Manuel's"


_PAD = "\n            "


@pytest.mark.parametrize("loop", [
    f"for_each: {{as: sa, in: noble.state_actions}}{_PAD}do:{_PAD}  - apply: "
    "{effects: sa.effects, noble: noble}",
    f"repeat: 2{_PAD}do:{_PAD}  - choose: {{as: extra, from: noble.state_actions}}",
])
def test_a_choice_inside_a_loop_of_an_action_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loop: str
) -> None:
    """A move makes each choice once: steps that choose or refuse inside a loop of an action
    are a located step-order error, not a loop that silently chooses nothing."""
    text = f"""kind: variant
id: loopy
title: Loopy
applies: chosen
text: A visit takes every State action.
source: [seed:001#action-3-visit-a-noble]
changes:
  court:
    actions:
      - id: visit
        steps:
          - $add: true
            $after: visit-state-action-effects
            id: visit-all
            {loop}
"""
    code, err = _variant_build(tmp_path, "loopy", text, capsys)
    assert code == 1
    assert "loopy.yaml:15:" in err and "error[step-order]" in err and "inside a loop" in err
    assert not (tmp_path / "g").exists()
