"""The setup as data: new_game runs the steps of rules/flow.yaml `setup`.

A start value changed in the rules, or a setup step added or changed by a variant, changes the
game new_game deals, and nothing else: the same seed still deals the same cards. The reference
interpreter (tools/interp_steps.py) runs the same setup steps on an empty game and deals
exactly the game the engine deals; the reference prints the setup's steps in their words.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from conftest import load_engine

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from tools import interp_steps

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "generated" / "lisboa_engine.py"
COLORS = yaml.safe_load((ROOT / "rules" / "game.yaml").read_text(encoding="utf-8"))["players"][
    "colors"
]


@pytest.fixture(scope="module")
def engine() -> ModuleType:
    return load_engine(ENGINE, "setup_data_engine")


def _build(
    tmp: Path, edit: Any, variant: str | None = None, fold: bool = False
) -> tuple[ModuleType, str]:
    """rules/ copied, changed by `edit(rules_dir)`, built; the engine and the reference."""
    shutil.copytree(ROOT / "rules", tmp / "rules")
    edit(tmp / "rules")
    args = ["build", "--no-cache", "--rules", str(tmp / "rules"), "--out", str(tmp / "g")]
    if fold and variant:
        args += ["--variant", variant]
    assert main(args) == 0
    tag = re.sub(r"\W", "_", tmp.name)
    return (
        load_engine(tmp / "g" / "lisboa_engine.py", f"setup_data_{tag}"),
        (tmp / "g" / "reference" / "rules.md").read_text(encoding="utf-8"),
    )


def _replace(path: str, old: str, new: str) -> Any:
    def edit(rules: Path) -> None:
        f = rules / path
        text = f.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        f.write_text(text.replace(old, new), encoding="utf-8")

    return edit


# --- start values: the data the setup steps read --------------------------------------------

START_VALUES = [
    ("game.yaml", "  reis: 10\n", "  reis: 13\n", lambda p: p.reis, 13),
    (
        "game.yaml",
        "  influence: 2\n  hand: 5",
        "  influence: 4\n  hand: 5",
        lambda p: p.influence,
        4,
    ),
    (
        "game.yaml",
        "  rubble_set_markers: 5\n",
        "  rubble_set_markers: 3\n",
        lambda p: p.markers_left,
        3,
    ),
    ("game.yaml", "  hand: 5\n", "  hand: 4\n", lambda p: len(p.hand), 4),
    (
        "game.yaml",
        "royal_favor_of: king",
        "royal_favor_of: manuel",
        lambda p: p.royal_favors,
        ["manuel"],
    ),
    # a value written in the setup's steps themselves (the runtime once held it)
    (
        "flow.yaml",
        '"q.goods[b]": 1}',
        '"q.goods[b]": 2}',
        lambda p: sorted(p.goods.values()),
        [2, 2, 2, 2],
    ),
]


@pytest.mark.parametrize(
    ("path", "old", "new", "read", "want"),
    START_VALUES,
    ids=["reis", "influence", "markers", "hand", "favor-of", "goods"],
)
def test_a_start_value_in_the_rules_starts_the_game_with_it(
    tmp_path: Path, engine: ModuleType, path: str, old: str, new: str, read: Any, want: Any
) -> None:
    E, _ = _build(tmp_path, _replace(path, old, new))
    for players in (2, 3, 4):
        g = E.new_game(players, seed=5)
        base = engine.new_game(players, seed=5)
        assert [read(p) for p in g.players] == [want] * players
        assert [read(p) for p in base.players] != [want] * players
        # the rest of the game is dealt as before
        assert g.decree_display == base.decree_display
        assert g.plan_supply == base.plan_supply


def test_the_treasury_start_value_is_read_from_the_track(tmp_path: Path) -> None:
    E, _ = _build(tmp_path, _replace("game.yaml", "start_value: 6", "start_value: 3"))
    g = E.new_game(3, seed=1)
    assert E.RULESETS[tuple(g.variants)].treasury_values[g.treasury] == 3


# --- setup steps: added or changed by a variant ------------------------------------------------

WIGS_STEP = """\
kind: variant
id: head-start
title: A head start
applies: chosen
text: Every player starts with 2 wigs.
source: [seed:000#intro]
changes:
  flow:
    setup:
      steps:
        - $add: true
          $after: setup.players
          id: setup.head-start
          for_each: {as: q, in: game.players}
          text: Every player starts with 2 wigs on the score track.
          do:
            - gain: {q.wigs: 2}
"""

LAST_SEAT_STEP = """\
kind: variant
id: last-seat-starts
title: The last seat starts
applies: chosen
text: The player in the last seat is the start player.
source: [seed:000#intro]
changes:
  flow:
    setup:
      steps:
        - id: setup.start-player
          set: {game.actor: seats - 1, game.current: seats - 1, game.start_player: seats - 1}
          text: The player in the last seat is the start player and plays first.
"""

SHUFFLED_SEATS = """\
kind: variant
id: random-seats
title: Random seats
applies: chosen
text: The colours are dealt at random.
source: [seed:000#intro]
changes:
  flow:
    setup:
      steps:
        - $add: true
          $after: setup.players
          id: setup.random-seats
          shuffle: game.players
          text: Shuffle the players' seats.
"""


def _wigs(E: ModuleType, g: Any) -> bool:
    return [p.wigs for p in g.players] == [2] * len(g.players)


def _last_seat(E: ModuleType, g: Any) -> bool:
    n = len(g.players)
    return g.actor == g.current == g.start_player == n - 1 and E.legal_moves(g)[0].player == n - 1


def _random_seats(E: ModuleType, g: Any) -> bool:
    colors = [p.color for p in g.players]
    return colors != list(COLORS[: len(colors)])


VARIANTS = [
    ("head-start", WIGS_STEP, _wigs, "Every player starts with 2 wigs on the score track."),
    (
        "last-seat-starts",
        LAST_SEAT_STEP,
        _last_seat,
        "The player in the last seat is the start player and plays first.",
    ),
    ("random-seats", SHUFFLED_SEATS, _random_seats, "Shuffle the players' seats."),
]


@pytest.mark.parametrize(("name", "text", "holds", "words"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_setup_step_written_in_a_variant_changes_the_start(
    tmp_path: Path, engine: ModuleType, name: str, text: str, holds: Any, words: str
) -> None:
    def edit(rules: Path) -> None:
        (rules / "variants" / f"{name}.yaml").write_text(text, encoding="utf-8")

    E, ref = _build(tmp_path, edit, name, fold=True)
    seeds = range(12)
    # (a shuffle of the seats leaves the first order on some seeds: most change it)
    changed = [holds(E, E.new_game(players, seed=seed)) for players in (3, 4) for seed in seeds]
    assert sum(changed) >= len(changed) * 2 // 3
    assert not any(
        holds(engine, engine.new_game(players, seed=seed)) for players in (3, 4) for seed in seeds
    )
    # printed in place, among the setup's steps
    setup = ref[ref.index('<a id="setup"></a>') :]
    setup = setup[: setup.index("<a id=", 20)]
    assert words in setup


def test_a_setup_step_of_a_chosen_variant_only_when_chosen(
    tmp_path: Path, engine: ModuleType
) -> None:
    def edit(rules: Path) -> None:
        (rules / "variants" / "head-start.yaml").write_text(WIGS_STEP, encoding="utf-8")

    E, _ = _build(tmp_path, edit)
    for seed in range(4):
        assert _wigs(E, E.new_game(3, ["head-start"], seed=seed))
        plain = E.new_game(3, seed=seed)
        assert not _wigs(E, plain)
        assert E.dumps(plain) == engine.dumps(engine.new_game(3, seed=seed))


# --- the interpreter deals the same game --------------------------------------------------------


@pytest.fixture(scope="module")
def models() -> dict[tuple[str, ...], Any]:
    compiled, diags = pipeline.analyse(ROOT / "rules")
    assert compiled is not None, [d.message for d in diags]
    return {rs.key: rs.model for rs in compiled.rulesets}


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("variants", [(), ("queen",)])
def test_the_interpreter_runs_the_setup_as_the_engine_does(
    engine: ModuleType, models: dict[tuple[str, ...], Any], players: int, variants: tuple[str, ...]
) -> None:
    key = engine.variants_for(players, variants)
    for seed in (0, 1, 7, -3, 2**40):
        blank = engine.to_json(engine.Game(variants=list(key), seed=seed, players=[]))
        ref = interp_steps.run(models[key], blank, 0, "setup", (players,))
        assert ref == engine.to_json(engine.new_game(players, variants, seed))


def test_the_setup_is_one_seeded_stream(engine: ModuleType) -> None:
    """The same seed deals the same game; another seed another one (decks, Decrees, Plans)."""
    a, b, c = (engine.new_game(4, seed=s) for s in (11, 11, 12))
    assert engine.dumps(a) == engine.dumps(b)
    assert (a.reserve, a.decree_deck, a.plan_supply) != (c.reserve, c.decree_deck, c.plan_supply)
