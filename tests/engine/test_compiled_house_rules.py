"""House rules' engines compiled with mypyc against the same engines pure (issue 36's lockstep,
house rules included).

tests/engine/test_compiled_engine.py plays the engine of generated/ (the four base rule sets)
pure and compiled in lockstep. A house rule changes the engine's code, not only its tables (a
new Noble, a turn order, a choice of reward), so this builds three house rules of different
shapes, folded in, compiles each engine with mypyc (`lisboa-rules compile`, kept in the user's
cache folder keyed by the engine's source: only the first complete run after a change of the
compiler compiles them), and plays each pure and compiled in the same seeded random games, with
the same checks at every state: the same legal moves in the same order, the same state, the same
refusal of a move made for another player, and at the end the same score sheet and ranking.

A compile takes one to two minutes, so this runs in the complete suite (`--slow`) only; without
mypyc, a C compiler or Python's headers it skips, saying what is missing.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, compile_tools_or_skip, compiled_module, setups
from test_compiled_engine import play_both
from test_differential import engine_from_text

from lisboa_rules import pipeline

# a new Noble (new kinds, a new Noble action in the effect language, a fifth display pile);
# the turn order as data (counter-clockwise, the last seat starts); a choice of reward on a
# discard (a choice the move lists)
HOUSE = [ROOT / "examples" / "house-rules" / "fourth-noble.yaml",
         ROOT / "examples" / "house-rules" / "widdershins.yaml",
         ROOT / "tests" / "cases" / "house-more" / "discard-choice.yaml"]
GAMES_PER_RULE_SET = 500


def _built(house: Path) -> tuple[tuple[str, ...], str]:
    """The house rule folded into the shipped rules: (chosen, the engine's text)."""
    chosen: tuple[str, ...] = (house.stem,)
    result = pipeline.compile_rules(ROOT / "rules", chosen, extra=[house])
    assert result.ok, [d.message for d in result.diagnostics]
    return chosen, result.files["lisboa_engine.py"]


@pytest.mark.slow
@pytest.mark.parametrize("house", HOUSE, ids=[p.stem for p in HOUSE])
def test_a_house_rules_compiled_engine_plays_as_its_pure_one(
    house: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    compile_tools_or_skip()
    chosen, text = _built(house)
    assert f"{house.stem}" in text  # the house rule is in the engine that is compared
    pure: Any = engine_from_text(text, f"lisboa_engine_house_{house.stem.replace('-', '_')}")
    fast: ModuleType = compiled_module(text.encode(), tmp_path_factory)
    assert fast.VERSION == pure.VERSION and fast.Game is not pure.Game
    assert type(fast.legal_moves).__name__ != "function"  # native code
    assert setups(fast) == setups(pure)
    by_rule_set: dict[tuple[str, ...], int] = {}
    for _players, variants in setups(pure):
        by_rule_set[variants] = by_rule_set.get(variants, 0) + 1
    played = 0
    for players, variants in setups(pure):
        seeds = -(-GAMES_PER_RULE_SET // by_rule_set[variants])
        for seed in range(seeds):
            played += play_both(pure, fast, players, variants, 5000 + seed)
    assert played > 50 * GAMES_PER_RULE_SET  # the games (of about 100 moves each) reached their end
    assert chosen == (house.stem,)
