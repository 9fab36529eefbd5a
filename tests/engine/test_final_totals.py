"""`final_totals(g)` is `tuple(final_scores(g).totals)` computed without the explanations:
checked on every state of seeded random games (every rule set the setups give, ties and empty
majorities included), and after states changed by hand."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from lisboa_rules import pipeline
from tests.conftest import setups

ROOT = Path(__file__).resolve().parents[2]


def _totals(E: Any, g: Any) -> tuple[int, ...]:
    return tuple(E.final_scores(g).totals)


def test_final_totals_equal_final_scores_on_every_state(engine: Any) -> None:
    E = engine
    checked = 0
    for k, (players, variants) in enumerate(setups(E)):
        for seed in range(6):
            g = E.new_game(players, variants, 9000 + 31 * k + seed)
            rng = random.Random(f"totals:{k}:{seed}")
            while True:
                got = E.final_totals(g)
                assert type(got) is tuple and all(type(x) is int for x in got)
                assert got == _totals(E, g), (players, variants, seed, g.turns)
                checked += 1
                if g.phase == "over":
                    break
                g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    assert checked > 1000


def test_final_totals_follow_a_changed_state(engine: Any) -> None:
    """Ties on every majority, a lone leader, nobody eligible: the same numbers."""
    E = engine
    g = E.new_game(3, (), 5)
    rng = random.Random(5)
    for _ in range(60):
        if g.phase == "over":
            break
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    for p in g.players:  # everyone tied on every store kind
        for kind in p.stores:
            p.stores[kind] = 2
    assert E.final_totals(g) == _totals(E, g)
    first = g.players[0]
    for kind in first.stores:
        first.stores[kind] = 5
    assert E.final_totals(g) == _totals(E, g)
    for p in g.players:
        for kind in p.stores:
            p.stores[kind] = 0
        p.wigs = 7
    assert E.final_totals(g) == _totals(E, g)


def test_final_totals_is_public(engine: Any) -> None:
    assert "final_totals" in engine.__all__


# A house rule whose scoring the base game has no shape of: a majority that ranks every seat
# (no eligibility) with a prize table that pays the 3rd place more than the 2nd, one whose
# eligibility reads the measure and the player, a held source without a condition column.
HOUSE = """\
kind: variant
id: house-scores
title: Other scores
applies: chosen
text: Other scoring sources.
source: [seed:000#endgame-scoring]
changes:
  scoring:
    sources:
      - $add: true
        $before: score.ships
        id: score.kept
        name: Stores kept
        short: Table
        kind: majority
        groups:
          - {id: gold, measure: stores.gold, table: [4, 2, 1]}
          - {id: books, measure: stores.books, table: [5, 0, 2]}
        text: The most stores of a type; every player is ranked.
        source: [seed:000#endgame-scoring]
      - $add: true
        id: score.fleet
        name: Fleet
        short: Table
        kind: majority
        groups:
          - {id: fleet, measure: ships, table: [7, 4, 2]}
        eligible: measure > 1 or completed_plans > 0
        text: The most Ships, for a player with two of them or a completed Plan.
        source: [seed:000#endgame-scoring]
      - $add: true
        id: score.owned
        name: Decrees owned
        short: Their wigs
        kind: held
        held: decrees
        points: wigs
        text: Each Decree you own scores the wigs it shows, fulfilled or not.
        source: [seed:000#endgame-scoring]
"""


def test_final_totals_equal_final_scores_under_a_house_rule(tmp_path: Path) -> None:
    """Majorities without eligibility and with one that reads the player, another prize
    table, a held source without conditions, in every player count (2 players: the
    2-player columns): the same numbers as the explained sheet, ties made by hand included."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    (rules / "variants" / "house-scores.yaml").write_text(HOUSE, encoding="utf-8")
    result = pipeline.compile_rules(rules)
    assert result.ok, [d.message for d in result.diagnostics if d.is_error]
    name = "lisboa_engine_house_totals"
    E = ModuleType(name)
    sys.modules[name] = E
    exec(compile(result.files["lisboa_engine.py"], f"<{name}>", "exec"), E.__dict__)
    checked = 0
    for players in (2, 3, 4):
        for seed in range(3):
            g = E.new_game(players, ("house-scores",), 40 + seed)
            rng = random.Random(f"house-totals:{players}:{seed}")
            while g.phase != "over":
                g = E.apply_move(g, rng.choice(E.legal_moves(g)))
                if rng.random() < 0.3:
                    sheet = E.final_scores(g)
                    assert len(sheet.lines[0]) == 10
                    assert E.final_totals(g) == tuple(sheet.totals), (players, seed, g.turns)
                    checked += 1
            for _ in range(20):  # ties and empty groups, made by hand
                for p in g.players:
                    p.stores["gold"] = rng.randrange(3)
                    p.stores["books"] = rng.randrange(3)
                    p.ships = [2] * rng.randrange(3)
                    p.completed_plans = p.completed_plans[: rng.randrange(2)]
                assert E.final_totals(g) == tuple(E.final_scores(g).totals)
                checked += 1
    assert checked > 300
