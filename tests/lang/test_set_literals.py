"""A number written in the rules and set in the state must fit it (issue 33): below a declared
minimum, past a declared maximum or past what a save holds (64 bits), a literal `set:` skipped
the clamp a computed value gets and made a state the engine's own `loads` refused; it is
refused where it is written. A computed value is kept within the bounds in play."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import steps as st
from lisboa_rules.lang.typed import INT, Name, Scope
from lisboa_rules.pipeline import compile_rules


def _scope() -> Scope:
    return Scope(player={"reis": Name(INT, ir.PlayerField("reis", ir.Me()), 0, None,
                                      "player.reis"),
                         "influence": Name(INT, ir.PlayerField("influence", ir.Me()), 0, 10,
                                           "player.influence")})


def _problems(raw: list[Any]) -> list[st.StepProblem]:
    problems: list[st.StepProblem] = []
    steps = st.parse_steps(raw, ("effects", "x", "steps"), problems)
    checker = st.StepChecker(_scope(), {}, {})
    checker.check(st.Procedure("x", (), steps, "rule.x"))
    return problems + checker.problems


@pytest.mark.parametrize(("raw", "shown"), [
    ({"set": {"reis": -1}}, "-1 is outside what this place holds (0 to 9223372036854775807"),
    ({"set": {"influence": 11}}, "11 is outside what this place holds (0 to 10"),
    ({"set": {"reis": 2 ** 70}}, f"{2 ** 70} is outside"),
])
def test_a_written_number_outside_the_place_is_refused(raw: dict[str, Any], shown: str) -> None:
    (problem,) = _problems([raw])
    assert problem.code == "value-out-of-range" and shown in problem.message
    assert problem.path[-2:] == ("set", next(iter(raw["set"])))


@pytest.mark.parametrize("raw", [
    {"gain": {"reis": str(2 ** 70)}},
    {"gain": {"reis": f"influence + {2 ** 63}"}},
    {"require": f"reis < {10 ** 30}", "reason": "too rich"},
])
def test_a_number_past_what_a_save_holds_in_an_expression_is_refused(raw: dict[str, Any]) -> None:
    """A number written in an expression larger than a save holds: it built, and play clamped
    every value it made (a gain of 2**70 réis gave 2**63 - 1)."""
    (problem,) = _problems([raw])
    assert problem.code == "value-out-of-range", problem
    assert "beyond what a game holds" in problem.message


@pytest.mark.parametrize("raw", [{"set": {"reis": 0}}, {"set": {"influence": 10}},
                                 {"set": {"reis": "influence - 20"}}])
def test_a_number_that_fits_or_a_computed_one_is_set(raw: dict[str, Any]) -> None:
    assert _problems([raw]) == []


def test_a_bound_raised_past_a_written_number_points_at_both(tmp_path: Path) -> None:
    """A declared bound moved past a number a step writes: the error is at the step, with a
    note where the bound is written (the rules data the declaration names), so a designer
    who changed the bound sees what it broke."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    game = tmp_path / "rules" / "game.yaml"
    data = yaml.safe_load(game.read_text(encoding="utf-8"))
    low = data["tracks"]["influence"]["min"]
    text = game.read_text(encoding="utf-8")
    at = re.search(r"(?m)^  influence:\n    min: (\d+)$", text)
    assert at is not None and int(at[1]) == low
    game.write_text(text[:at.start(1)] + str(low + 1) + text[at.end(1):], encoding="utf-8")
    result = compile_rules(tmp_path / "rules")
    found = [d for d in result.diagnostics if d.code == "value-out-of-range"]
    assert found and not result.ok
    line = text[:at.start(1)].count("\n") + 1
    notes = [r for d in found for r in d.related]
    assert any(r.span is not None and r.span.file.endswith("game.yaml")
               and r.span.line == line and "min of player.influence" in r.message
               for r in notes), [str(d) for d in found]
