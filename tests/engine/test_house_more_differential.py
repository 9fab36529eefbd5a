"""The house rules of tests/cases/house-more/ that change what a move may do (a new choice, a
choice made compulsory or bounded, a new Noble, a Noble action that refuses, events followed
without a Royal Favor), built folded: the engine's compiled moves and refusals against the
reference interpreter walking the same steps, on the states of random games (as
test_differential.py does for the examples of examples/house-rules/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_differential import SCALE, ActionDiffer, compare_actions, engine_from_text, models_of

from lisboa_rules import pipeline

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "tests" / "cases" / "house-more"

# each house rule, with what only it lists or refuses
ACTIONS = {
    "admiral": "value state_action harbour-dues",
    "compulsory-state-action": "moves visit",
    "decree-fee": "moves visit",
    "discard-choice": "field take_influence",
    "event-follow-fee": "moves follow",
    "short-discard": "moves hand-discard",
}


@pytest.mark.sampled(2)
@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_house_rule_actions_agree(name: str) -> None:
    result = pipeline.compile_rules(ROOT / "rules", (name,), extra=[HOUSE / f"{name}.yaml"])
    assert result.ok and result.compiled is not None, [d.message for d in result.diagnostics]
    house = engine_from_text(result.files["lisboa_engine.py"], f"lisboa_engine_more_{name}")
    diff = ActionDiffer(house, models_of(result.compiled))
    compare_actions(diff, SCALE, seed0=4700, states=40)
    diff.assert_agree()
    assert diff.counts["plays listed"] > 100 * SCALE
    assert diff.counts[ACTIONS[name]] > 0, dict(diff.counts)
