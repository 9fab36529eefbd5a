"""House rules that change what `check_invariants` reports, written only in YAML: a chosen
variant adds an invariant of its own rule set (over each player, or over the game), and a
house rule folded into the base game adds a zone cards may be in (a new player field) to the
cards' conservation, so `all_cards` finds them there too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import load_engine

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
kind: variant
id: {id}
title: {title}
applies: chosen
text: {title}.
source: [seed:000#intro]
changes:
  state:
"""

CHOSEN = {
    "house-purse": HEAD.format(id="house-purse", title="A small purse")
    + """\
    invariants:
      - $add: true
        id: purse
        each: player
        holds: reis <= 40
        text: "{color}: more than 40 {rules.game.terms.money} ({reis})"
""",
    "house-court": HEAD.format(id="house-court", title="A small court")
    + """\
    invariants:
      - $add: true
        id: small-court
        $after: no-negative-money
        holds: len(game.court) <= 2
        text: "{len(game.court)} cards in the court"
""",
}

VAULT = (
    HEAD.format(id="house-vault", title="A vault")
    + """\
    player:
      - {$add: true, id: vault, type: "list[card]", see: all, text: cards set aside in the vault}
    invariants:
      - id: cards-conserved
        conserved:
          in: [game.discard, game.box, game.court, player.hand, player.portfolio,
               player.treasury_row, player.vault, game.piles, game.reserve]
"""
)


def _build(root: Path, name: str, files: dict[str, str], args: list[str]) -> ModuleType:
    project = root / name
    project.mkdir()
    house = []
    for vid, text in files.items():  # house-rule files beside the rules: nothing is copied
        house += ["--house", str(project / f"{vid}.yaml")]
        (project / f"{vid}.yaml").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        build = ["build", "--rules", str(ROOT / "rules"), *house, *args]
        assert main(build) == 0, f"lisboa-rules {build} failed"
    return load_engine(project / "generated" / "lisboa_engine.py", f"house_invariants_{name}")


@pytest.fixture(scope="module")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield _build(tmp_path_factory.mktemp("inv"), "chosen", CHOSEN, [])


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield _build(
        tmp_path_factory.mktemp("inv"),
        "vault",
        {"house-vault": VAULT},
        ["--variant", "house-vault"],
    )


def _court(g: Any, n: int) -> None:
    for _ in range(n):
        pile = next(p for p in g.piles.values() if p)
        g.court.append(pile.pop())


@pytest.mark.parametrize(
    ("variants", "reis", "court", "want"),
    [
        ((), 41, 3, []),
        (("house-purse",), 40, 3, []),
        (("house-purse",), 41, 0, ["{c}: more than 40 réis (41)"]),
        (("house-court",), 99, 2, []),
        (("house-court",), 99, 3, ["3 cards in the court"]),
        (
            ("house-court", "house-purse"),
            41,
            3,
            ["3 cards in the court", "{c}: more than 40 réis (41)"],
        ),
    ],
)
def test_a_chosen_house_rule_adds_an_invariant(
    chosen: ModuleType, variants: tuple[str, ...], reis: int, court: int, want: list[str]
) -> None:
    E = chosen
    g = E.new_game(3, variants=variants, seed=1)
    assert E.check_invariants(g) == []
    g.players[1].reis = reis
    _court(g, court)
    c = g.players[1].color
    assert E.check_invariants(g) == [w.format(c=c) for w in want]
    g.players[0].reis = -1  # the game's own invariants are still checked, in their order
    problems = E.check_invariants(g)
    assert problems[0] == f"{g.players[0].color}: negative réis or wigs"
    assert problems[1:] == [w.format(c=c) for w in want]


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_new_zone_for_cards_is_conserved(
    vault: ModuleType, engine: ModuleType, seat: int
) -> None:
    for E, sound in ((vault, True), (engine, False)):
        g = E.new_game(3, seed=seat)
        p = g.players[seat]
        card = p.hand.pop()
        if sound:
            p.vault.append(card)
        assert (card in E.all_cards(g)) is sound
        assert E.check_invariants(g) == ([] if sound else ["Political cards are not conserved"])
    g = vault.new_game(3, seed=seat)
    g.players[seat].vault.append(g.players[seat].hand[0])  # in two places at once
    assert vault.check_invariants(g) == ["Political cards are not conserved"]


BURN = """\
kind: variant
id: burn
title: Burnt cards
applies: chosen
text: A discarded card is burnt, out of the game.
source: [facts:§4]
changes:
  court:
    actions:
      - id: discard
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, from: hand%s}}
          - {apply: {effects: this.reward}}
          - {set: {game.phase: "'refill'"}}
        text: >-
          Instead of the four actions you may burn a card from your hand for {reward.reis}
          {game.terms.money_one}.
"""


def test_an_action_that_loses_a_card_is_refused_where_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The card the action takes goes nowhere: it built, and then from_json refused every
    saved game where a discard was legal ("Political cards are not conserved"). Now the
    build refuses it at the move, exit 1, nothing written."""
    house = tmp_path / "burn.yaml"
    house.write_text(BURN % "", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["build", "--rules", str(ROOT / "rules"), "--house", "burn.yaml"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "burn.yaml:14:20: error[step-not-conserved]: 'card' is taken from player.hand here" \
        in err
    assert "cards-conserved" in err and "game.box" in err
    assert not (tmp_path / "generated").exists()


def test_the_same_action_into_the_box_builds_and_its_games_load(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """What the error suggests (`to: game.box`) builds, and a game where cards were burnt is
    saved and loaded again."""
    E = _build(tmp_path_factory.mktemp("inv"), "burn", {"burn": BURN % ", to: game.box"}, [])
    g = E.new_game(3, variants=["burn"], seed=3)
    for _ in range(3):
        while not any(m.kind == "discard" for m in E.legal_moves(g)):
            g = E.apply_move(g, E.legal_moves(g)[0])
        move = next(m for m in E.legal_moves(g) if m.kind == "discard")
        box = len(g.box)
        g = E.apply_move(g, move)
        assert len(g.box) == box + 1 and move.card in g.box
        assert E.check_invariants(g) == []
        again = E.loads(E.dumps(g))
        assert E.dumps(again) == E.dumps(g)


VAULTS = (
    HEAD.format(id="house-vaults", title="Vaults by colour")
    + """\
    game:
      - {$add: true, id: vaults, type: "map[color, list[card]]", see: all,
         text: each colour's vault}
    invariants:
      - id: cards-conserved
        conserved:
          in: [game.discard, game.box, game.court, player.hand, player.portfolio,
               player.treasury_row, game.piles, game.reserve, game.vaults]
  court:
    actions:
      - id: discard
        steps:
          - choose: {as: card, from: hand}
            reason: card {card} is not in your hand
          - {move: {item: card, from: hand, to: "game.vaults[color]"}}
          - {apply: {effects: this.reward}}
          - {set: {game.phase: "'refill'"}}
"""
)


def test_a_card_moved_into_a_map_entry_not_there_yet_stays_in_the_game(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`to: game.vaults[color]`, a map that starts empty: the move wrote into the default list
    of `.get(color, [])`, so the card left the game, and the first discard broke
    cards-conserved (then no save where a discard was legal loaded). The entry is made now."""
    E = _build(
        tmp_path_factory.mktemp("inv"),
        "vaults",
        {"house-vaults": VAULTS},
        ["--variant", "house-vaults"],
    )
    g = E.new_game(3, seed=2)
    assert g.vaults == {}
    for _ in range(2):
        while not any(m.kind == "discard" for m in E.legal_moves(g)):
            g = E.apply_move(g, E.legal_moves(g)[0])
        move = next(m for m in E.legal_moves(g) if m.kind == "discard")
        color = g.players[move.player].color
        held = list(g.vaults.get(color, []))
        g = E.apply_move(g, move)
        assert g.vaults[color] == [*held, move.card]
        assert E.check_invariants(g) == []
        assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)


SHUFFLED_VAULTS = VAULTS.replace(
    '          - {move: {item: card, from: hand, to: "game.vaults[color]"}}\n',
    '          - {do: shuffle-vault}\n'
    '          - {move: {item: card, from: hand, to: "game.vaults[color]"}}\n',
).replace("house-vaults", "house-shuffled-vaults") + """\
  effects:
    procedures:
      - $add: true
        id: shuffle-vault
        params: {}
        steps:
          - {shuffle: "game.vaults[color]"}
"""


def test_a_shuffle_of_a_map_entry_not_there_yet_shuffles_nothing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The shuffle subscripted the entry: the first discard of a colour with no vault yet
    raised KeyError inside the engine (and from_json refused every save where it was legal).
    A missing entry is an empty list now: nothing to shuffle."""
    assert "do: shuffle-vault" in SHUFFLED_VAULTS
    E = _build(
        tmp_path_factory.mktemp("inv"),
        "shuffled",
        {"house-shuffled-vaults": SHUFFLED_VAULTS},
        ["--variant", "house-shuffled-vaults"],
    )
    g = E.new_game(3, seed=2)
    for _ in range(2):
        while not any(m.kind == "discard" for m in E.legal_moves(g)):
            g = E.apply_move(g, E.legal_moves(g)[0])
        move = next(m for m in E.legal_moves(g) if m.kind == "discard")
        color = g.players[move.player].color
        held = sorted(g.vaults.get(color, []))
        g = E.apply_move(g, move)
        assert sorted(g.vaults[color]) == sorted([*held, move.card])
        assert E.check_invariants(g) == []
        assert E.dumps(E.loads(E.dumps(g))) == E.dumps(g)
