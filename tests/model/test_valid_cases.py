"""Small valid rule sets under tests/cases/valid/: each builds without an error, and its engine
plays seeded random games to the end with its invariants holding after every move."""

from __future__ import annotations

import random
import sys
import types
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.core.inputs import ENGINE

CASES = Path(__file__).resolve().parents[1] / "cases" / "valid"
NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())


def engine_of(case: str) -> types.ModuleType:
    result = pipeline.compile_rules(CASES / case)
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, f"{case}: " + "; ".join(f"{d.span}: {d.message}" for d in errors)
    name = f"_valid_case_engine_{case.replace('-', '_')}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(compile(result.files[ENGINE], f"<{case} engine>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def test_there_are_valid_cases() -> None:
    assert NAMES, f"no rule sets under {CASES}"


@pytest.mark.parametrize("case", NAMES)
def test_a_valid_case_builds_and_its_engine_plays_to_the_end(case: str) -> None:
    engine = engine_of(case)
    base = engine.RULESETS[()]
    for count in range(base.players_min, base.players_max + 1):
        for seed in range(5):
            game = engine.new_game(count, seed=seed)
            rng = random.Random(seed)
            moves = 0
            while game.phase != "over":
                legal = engine.legal_moves(game)
                assert legal, f"{case}: no legal move in phase {game.phase}"
                game = engine.apply_move(game, rng.choice(legal))
                assert engine.check_invariants(game) == []
                moves += 1
                assert moves < 5000, f"{case}: the game does not end"
            assert engine.loads(engine.dumps(game)) == game
            sheet = engine.final_scores(game)
            places = [seat for place in engine.ranking(game, sheet).places for seat in place]
            assert sorted(places) == list(range(count))
