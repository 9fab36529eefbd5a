"""A `set:` step that computes a number of the state keeps it within its declared bounds and
within what a save holds (64 bits), as a `gain:` does: a house rule that multiplies a player's
réis each turn made, after a few turns, a state whose save its own `loads` refused
("an integer beyond the signed 64-bit range")."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from conftest import ROOT, load_engine

from lisboa_rules.cli.main import main

HOUSE = """\
kind: variant
id: compound
title: Compound interest
applies: chosen
text: >-
  At the end of each turn, every player multiplies their réis by ten and adds ten, and their
  Influence becomes their réis.
source: [seed:000#end-of-the-period]
changes:
  flow:
    turn_end:
      steps:
        - $add: true
          id: turn.end.compound
          for_each: {as: q, in: game.players}
          do:
            - set: {q.reis: q.reis * 10 + 10}
            - set: {q.influence: q.reis}
          text: >-
            Every player multiplies their réis by ten and adds ten; their Influence becomes
            their réis.
"""


@pytest.fixture(scope="module")
def compound(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("compound")
    (tmp / "compound.yaml").write_text(HOUSE, encoding="utf-8")
    out = tmp / "g"
    args = ["build", "--no-cache", "--rules", str(ROOT / "rules"), "--out", str(out),
            "--house", str(tmp / "compound.yaml")]
    assert main(args) == 0
    return load_engine(out / "lisboa_engine.py", "set_bounds_compound")


def test_a_computed_set_stops_at_the_bounds_and_every_save_loads(compound: Any) -> None:
    E = compound
    for seed in range(3):
        g = E.new_game(3, variants=("compound",), seed=seed)
        rng = random.Random(seed)
        saw_edge = False
        while g.phase != "over":
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            E.loads(E.dumps(g))  # StateError: a state the engine made but cannot read
            saw_edge = saw_edge or any(p.reis == 2**63 - 1 for p in g.players)
        assert saw_edge  # the réis grew to the largest number a save holds, and stayed there
        data = json.loads(E.dumps(g))
        assert all(p["reis"] == 2**63 - 1 for p in data["players"])


def test_influence_set_from_reis_stops_at_the_track(compound: Any) -> None:
    E = compound
    g = E.new_game(3, variants=("compound",), seed=5)
    rng = random.Random(5)
    highest = 0
    while g.phase != "over":
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        highest = max(highest, *(p.influence for p in g.players))
    cap = E.STATE_SCHEMA["properties"]["players"]["items"]["properties"]["influence"]["maximum"]
    assert highest == cap  # réis far above the track: the Influence stands at its top


def test_a_number_set_from_a_constant_is_written_as_it_is() -> None:
    # the clamp is for computed values: the base engine's setup writes its numbers plainly
    text = (ROOT / "generated" / "lisboa_engine.py").read_text(encoding="utf-8")
    assert 'g.offices[v_n]["neutral"] = 0' in text
    assert "max(0, 0)" not in text
