"""A name that may be None is known to be set where a condition proves it: after
`x is not None and`, and after `x is None or` and in the `else` of `... if x is None else`
(Python reads the right side only when the left is false). Reading a field of it elsewhere is
refused with the tests that would prove it set."""

from __future__ import annotations

from pathlib import Path

from conftest import load_engine

from lisboa_rules import pipeline
from tools.fuzz_effects import play_engine

ROOT = Path(__file__).resolve().parents[2]

HOUSE = """\
kind: variant
id: house
title: House rule
applies: chosen
text: A house act.
source: [facts:§4]
changes:
  court:
    actions:
      - $add: true
        id: house-act
        name: A house act
        procedure: house-act
        text: Instead of the four actions you may carry out the house act.
        steps:
          - let: {top: "game.discard[-1] if len(game.discard) > 0 else None"}
"""


def _compile(tmp_path: Path, steps: str) -> pipeline.CompileResult:
    house = tmp_path / "house.yaml"
    house.write_text(HOUSE + steps + "          - {set: {game.phase: \"'refill'\"}}\n",
                     encoding="utf-8")
    return pipeline.compile_rules(ROOT / "rules", ("house",), extra=(house,))


def test_a_name_is_set_after_is_none_or_and_in_the_else_of_is_none(tmp_path: Path) -> None:
    result = _compile(tmp_path, (
        "          - require: top is None or top.influence >= 0\n"
        "            reason: the top card of the discard pile gives no Influence\n"
        "          - {gain: {reis: \"0 if top is None else top.influence\"}}\n"))
    assert result.ok, [d.full_message for d in result.diagnostics]
    engine = result.files["lisboa_engine.py"]
    assert "0 if (v_top is None) else _T_card_influence[v_top]" in engine
    path = tmp_path / "lisboa_engine.py"
    path.write_text(engine, encoding="utf-8")
    E = load_engine(path, "narrowed_engine")
    g = E.new_game(2, (), 0)
    assert any(m.kind == "house-act" for m in E.legal_moves(g))  # the game begins empty
    stage, detail, _, played = play_engine(E, lambda _: None, 1)
    assert (stage, detail) == ("", ""), detail
    assert played == 3


def test_a_field_of_a_name_that_may_be_none_says_how_to_test_it(tmp_path: Path) -> None:
    result = _compile(tmp_path, (
        "          - require: top.influence >= 0\n"
        "            reason: the top card of the discard pile gives no Influence\n"))
    [d] = [d for d in result.diagnostics if d.is_error]
    assert d.code == "expr-type" and d.span is not None and d.span.line == 17
    assert ("a card or None has no 'influence': 'top' may be None; test 'top is not None "
            "and ...' (or 'top is None or ...') first") in d.message


def test_is_none_and_proves_nothing(tmp_path: Path) -> None:
    """Only the side Python reads when the test fails is narrowed: `x is None and x.y` and
    `x.y if x is None else 0` still read a field of None."""
    result = _compile(tmp_path, (
        "          - require: top is None and top.influence >= 0\n"
        "            reason: no\n"
        "          - {gain: {reis: \"top.influence if top is None else 0\"}}\n"))
    errors = [d for d in result.diagnostics if d.is_error]
    assert [(d.code, d.span.line if d.span else 0) for d in errors] == [
        ("expr-type", 17), ("expr-type", 19)], [d.full_message for d in errors]


def test_the_else_steps_of_if_is_none_read_the_name_as_set(tmp_path: Path) -> None:
    """`if: top is None` (or `top is None or ...`): its else steps read `top` as set; its
    then steps, and the steps after the if, do not."""
    result = _compile(tmp_path, (
        "          - if: top is None\n"
        "            then:\n"
        "              - {gain: {reis: 1}}\n"
        "            else:\n"
        "              - {gain: {reis: top.influence}}\n"))
    assert result.ok, [d.full_message for d in result.diagnostics]
    path = tmp_path / "lisboa_engine.py"
    path.write_text(result.files["lisboa_engine.py"], encoding="utf-8")
    E = load_engine(path, "narrowed_else_engine")
    stage, detail, _, _ = play_engine(E, lambda _: None, 1)
    assert (stage, detail) == ("", ""), detail
    refused = _compile(tmp_path, (
        "          - if: top is None\n"
        "            then:\n"
        "              - {gain: {reis: top.influence}}\n"
        "          - {gain: {reis: top.influence}}\n"))
    assert [d.code for d in refused.diagnostics if d.is_error] == ["expr-type", "expr-type"]
