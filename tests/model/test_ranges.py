"""Numbers that pass the schema but would break the engine (issue 11, item 7).

Every divisor must be provably at least 1 and every amount paid provably at least 0, for all
values the names a formula reads can take: the ranges are declared in the data
(`rules/vocabulary.yaml` `range:`, a param owner's `ranges:`), bound to the game's data where
they can be, and every formula is checked against them by interval analysis. Each case is a
house rule (a variant) over a copy of the real rules, compiled by the real pipeline.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from lisboa_rules import pipeline
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.ir import bounds
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import expr
from lisboa_rules.lang.vocab import BoundError, resolve_range
from lisboa_rules.pyprint import expr as pyprint

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
kind: variant
id: house
title: A house rule
applies: chosen
text: A house rule.
source: [seed:000#intro]
changes:
"""


@pytest.fixture()
def rules(tmp_path: Path) -> Path:
    """A private copy of the real rules folder."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    return tmp_path / "rules"


def compile_variant(rules: Path, changes: str) -> list[Diagnostic]:
    """Compile the rules with a house rule whose `changes:` are given; the errors. These house
    rules change formulas without their words on purpose, so text-stale (tested in
    test_house_rules.py) is left out."""
    (rules / "variants" / "house.yaml").write_text(HEAD + textwrap.indent(changes, "  "))
    _, diags = pipeline.analyse(rules)
    return [d for d in diags if d.is_error and d.code != "text-stale"]


def codes_at_house(diags: list[Diagnostic]) -> list[tuple[str, int]]:
    """(code, line) of the errors located in the house rule's file."""
    return sorted(
        (d.code, d.span.line)
        for d in diags
        if d.span is not None and d.span.file.endswith("variants/house.yaml")
    )


# --- divisors --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, -5, -1000])
def test_a_param_divisor_that_is_not_positive_is_an_error_at_the_param(
    rules: Path, value: int
) -> None:
    diags = compile_variant(
        rules,
        f"scoring:\n  sources:\n    - {{id: score.influence, params: {{reis_per_wig: {value}}}}}\n",
    )
    found = [d for d in diags if d.code == "divisor-not-positive"]
    assert found, diags
    assert all(d.span is not None and d.span.file.endswith("house.yaml") for d in found)
    assert {d.span.line for d in found if d.span} == {10}
    assert "reis_per_wig" in found[0].message
    # The note points at the formula that divides.
    assert any(r.span and r.span.file.endswith("scoring.yaml") for r in found[0].related)


@pytest.mark.parametrize("value", [1, 5, 1000])
def test_a_positive_param_divisor_builds(rules: Path, value: int) -> None:
    diags = compile_variant(
        rules,
        f"scoring:\n  sources:\n    - {{id: score.influence, params: {{reis_per_wig: {value}}}}}\n",
    )
    assert diags == []


@pytest.mark.parametrize("value", [10**12, -(10**12), 1001, 2**63])
def test_a_huge_param_is_refused_by_the_schema(rules: Path, value: int) -> None:
    diags = compile_variant(
        rules,
        f"scoring:\n  sources:\n    - {{id: score.influence, params: {{reis_per_wig: {value}}}}}\n",
    )
    assert [d.code for d in diags] == ["schema-range"]


def divide(formula: str) -> str:
    """A change that puts `formula` where its names can be read: a scoring source for the
    player's names and its param, the Sponsor cost (kept non-negative) for `players`."""
    if "players" in formula:
        return (
            "court:\n  costs:\n    - {id: sponsor-cost, "
            "example: {$add: {treasury_value: 4, reis: 3, players: 3}}, "
            f"formula: 'max(0, treasury_value + {formula})'}}\n"
        )
    return f"scoring:\n  sources:\n    - {{id: score.favors, formula: '{formula}'}}\n"


@pytest.mark.parametrize(
    "formula",
    [
        "reis // wigs",  # wigs can be 0
        "reis // stores.gold",  # a per-business name
        "reis // (players - 2)",  # 2 players: 0
        "reis // (completed_plans - 1)",
        "reis // max(0, rubble_sets)",
        "reis // (2 - players)",  # only 0 and negatives
        "reis // -wigs_per_favor",  # a param, negated
        "reis // (wigs_per_favor - 2)",  # a param that makes it 0
        "reis // 0",
        "(reis // 1) // (wigs * 0)",
    ],
)
def test_a_divisor_whose_range_includes_zero_is_an_error(rules: Path, formula: str) -> None:
    diags = compile_variant(rules, divide(formula))
    assert codes_at_house(diags) == [("divisor-not-positive", 10)], diags


@pytest.mark.parametrize(
    "formula",
    [
        "reis // players",
        "reis // max(1, wigs)",
        "reis // (wigs + 1)",
        "reis // (players - 1)",
        "reis // wigs_per_favor",
        "(reis + influence_reis) // (rubble_sets * 2 + 3)",
    ],
)
def test_a_divisor_proven_positive_builds(rules: Path, formula: str) -> None:
    assert compile_variant(rules, divide(formula)) == []


def test_divisor_ranges_follow_the_data(rules: Path) -> None:
    """`players` ranges over game.players: raising the minimum to 3 makes `players - 2` safe."""
    change = divide("reis // (players - 2)")
    assert codes_at_house(compile_variant(rules, change)) == [("divisor-not-positive", 10)]
    game = rules / "game.yaml"
    game.write_text(game.read_text().replace("  min: 2\n  max: 4\n", "  min: 3\n  max: 4\n", 1))
    (rules / "variants" / "two-player.yaml").unlink()
    diags = compile_variant(rules, change)
    assert [d for d in diags if d.code == "divisor-not-positive"] == []


# --- amounts paid ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "line"),
    [
        ("court:\n  costs:\n    - {id: visit-cost, params: {minimum: -1}}\n", 10),
        ("court:\n  costs:\n    - {id: visit-cost, params: {minimum: -10, per_official: 0}}\n", 10),
        ("court:\n  costs:\n    - {id: sponsor-cost, formula: treasury_value - 2}\n", 10),
        ("court:\n  costs:\n    - {id: sponsor-cost, formula: '-treasury_value'}\n", 10),
        (
            "court:\n  costs:\n    - {id: wigs-for-influence, params: {wigs_per_influence: -1}}\n",
            10,
        ),
        ("nobles:\n  noble_actions:\n    - {id: build-store, params: {rubble_cost: -2}}\n", 10),
        (
            "nobles:\n  noble_actions:\n    - {id: build-store, land_price: rubble_cost - wigs}\n",
            10,
        ),
    ],
)
def test_an_amount_paid_that_can_be_negative_is_an_error(
    rules: Path, change: str, line: int
) -> None:
    diags = compile_variant(rules, change)
    assert ("formula-out-of-range", line) in codes_at_house(diags), diags


@pytest.mark.parametrize(
    "change",
    [
        "court:\n  costs:\n    - {id: visit-cost, params: {minimum: 0, per_official: 2}}\n",
        "court:\n  costs:\n    - {id: visit-cost, params: {minimum: 3, per_official: 0}}\n",
        "court:\n  costs:\n    - {id: sponsor-cost, formula: 'max(0, treasury_value - 2)'}\n",
        "nobles:\n  noble_actions:\n    - {id: build-store, params: {rubble_cost: 0}}\n",
    ],
)
def test_an_amount_paid_that_is_never_negative_builds(rules: Path, change: str) -> None:
    assert compile_variant(rules, change) == []


# --- declared param ranges -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "param"),
    [
        # a rival Official costing more than the whole Influence track
        ("court:\n  costs:\n    - {id: visit-cost, params: {per_official: 11}}\n", "per_official"),
        (
            "court:\n  costs:\n    - {id: visit-cost, params: {per_official: 1000}}\n",
            "per_official",
        ),
        ("court:\n  costs:\n    - {id: visit-cost, params: {per_official: -1}}\n", "per_official"),
        ("court:\n  costs:\n    - {id: visit-cost, params: {minimum: 11}}\n", "minimum"),
        ("flow:\n  triggers:\n    - {id: period-end.rubble, params: {sets: 6}}\n", "sets"),
        ("flow:\n  triggers:\n    - {id: game-end.rubble, params: {sets: 0}}\n", "sets"),
        ("flow:\n  triggers:\n    - {id: game-end.display, params: {piles: 5}}\n", "piles"),
    ],
)
def test_a_param_outside_its_declared_range_is_an_error_at_the_param(
    rules: Path, change: str, param: str
) -> None:
    diags = compile_variant(rules, change)
    found = [d for d in diags if d.code == "value-out-of-range"]
    assert len(found) == 1, diags
    assert found[0].span is not None and found[0].span.file.endswith("house.yaml")
    assert found[0].span.line == 10
    assert f"param '{param}'" in found[0].message


def test_param_ranges_are_bound_to_the_track(rules: Path) -> None:
    """per_official's range ends at the Influence track's max: shrink the track, and 6 fails."""
    change = "court:\n  costs:\n    - {id: visit-cost, params: {per_official: 6}}\n"
    assert compile_variant(rules, change) == []
    game = rules / "game.yaml"
    text = game.read_text()
    game.write_text(
        re.sub(r"reis_icons: \[[0-9, ]*\]", "reis_icons: [1, 3, 5]",
               text.replace("    max: 10\n", "    max: 5\n", 1), count=1)
    )
    diags = compile_variant(rules, change)
    found = [d for d in diags if d.code == "value-out-of-range"]
    # the param, and the worked example whose Green holds 10 Influence, now off the track
    assert sorted("param 'per_official'" in d.message for d in found) == [False, True], found
    assert "Influence 10 is off the track (0 to 5)" in next(
        d.message for d in found if "param" not in d.message)


@pytest.mark.parametrize(
    ("ranges", "words"),
    [
        ("{rubble_cost: [0, game.tracks.nope]}", "names no value"),
        ("{rubble_cost: [5, 1]}", "above its high"),
        ("{no_such_param: {$add: [0, 1]}}", "unknown param"),  # added on purpose: not a typo
        ("{rubble_cost: [0, 'count(game.start.reis)']}", "count() takes one list"),
        ("{rubble_cost: [0, '__import__(1)']}", "not allowed"),
    ],
)
def test_a_broken_declared_range_is_a_located_error(rules: Path, ranges: str, words: str) -> None:
    diags = compile_variant(
        rules, f"nobles:\n  noble_actions:\n    - {{id: build-store, ranges: {ranges}}}\n"
    )
    assert [(d.code, d.span.line if d.span else 0) for d in diags] == [("unknown-reference", 10)], (
        diags
    )
    assert words in diags[0].message


def test_a_vocabulary_range_that_names_no_data_is_a_located_error(rules: Path) -> None:
    vocab = rules / "vocabulary.yaml"
    vocab.write_text(
        vocab.read_text().replace(
            "range: [0, game.rubble.max_sets]", "range: [0, game.rubble.nope]"
        )
    )
    _, diags = pipeline.analyse(rules)
    errors = [d for d in diags if d.is_error]
    assert [d.code for d in errors] == ["unknown-reference"]
    assert errors[0].span is not None and errors[0].span.file.endswith("vocabulary.yaml")


def test_every_vocabulary_name_declares_a_range() -> None:
    names = yaml.safe_load((ROOT / "rules" / "vocabulary.yaml").read_text())["names"]
    assert [n["name"] for n in names if "range" not in n] == []


def test_a_worked_example_outside_a_names_range_is_an_error(rules: Path) -> None:
    diags = compile_variant(
        rules,
        "court:\n  costs:\n    - {id: visit-cost, example: {influence_modifier: 7, "
        "other_officials_in_office: -1}}\n",
    )
    assert sorted(d.code for d in diags) == ["value-out-of-range", "value-out-of-range"], diags


# --- the interval analysis itself ------------------------------------------------------------

ENV = {n: expr.NameInfo("int") for n in ("a", "b", "c")}
RANGES: dict[str, bounds.Interval] = {"a": (-3, 5), "b": (1, 4), "c": (0, bounds.INF)}


def brute(source: str, values: dict[str, list[int]]) -> tuple[int, int]:
    """The exact range of a formula over small value sets (for the sound-and-tight check)."""
    f = expr.parse(source, ENV)
    seen: list[int] = []
    for a in values["a"]:
        for b in values["b"]:
            for c in values["c"]:
                env = {"a": a, "b": b, "c": c}
                seen.append(int(expr.evaluate(f, lambda n, _i, env=env: env[n])))
    return min(seen), max(seen)


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("a + b", (-2, 9)),
        ("a - b", (-7, 4)),
        ("a * b", (-12, 20)),
        ("-a", (-5, 3)),
        ("a // b", (-3, 5)),
        ("(a - 10) // b", (-13, -2)),
        ("max(a, 0) // 2", (0, 2)),
        ("min(a, b) * 2", (-6, 8)),
        ("a * 0 + c * 0", (0, 0)),
        ("max(0, c - 7)", (0, bounds.INF)),
        ("-c", (-bounds.INF, 0)),
        ("c // b", (0, bounds.INF)),
        ("a // (c + 1)", (-3, 5)),
    ],
)
def test_interval_of_formulas(source: str, want: bounds.Interval) -> None:
    got, problems = expr.interval(expr.parse(source, ENV), RANGES)
    assert problems == []
    assert got == want


@pytest.mark.parametrize("source", ["a + b * 2", "a // b - b", "max(a, b) // min(b, 2)", "a * a"])
def test_interval_contains_every_value(source: str) -> None:
    lo, hi = expr.interval(expr.parse(source, ENV), RANGES)[0]
    vlo, vhi = brute(source, {"a": list(range(-3, 6)), "b": [1, 2, 3, 4], "c": [0]})
    assert lo <= vlo and vhi <= hi


@pytest.mark.parametrize(
    ("source", "divisor"),
    [
        ("a // a", "a"),
        ("b // (b - 1)", "b - 1"),
        ("b // c", "c"),
        ("1 // (a * 0)", "a * 0"),
        ("b // -b", "-b"),
        ("b // (b - 4)", "b - 4"),
        ("1 // x", "x"),
    ],
)
def test_divisors_that_may_be_zero_or_negative(source: str, divisor: str) -> None:
    env = {**ENV, "x": expr.NameInfo("int")}  # x has no declared range: any number
    _, problems = expr.interval(expr.parse(source, env), RANGES)
    assert [p.code for p in problems] == ["divisor-not-positive"]
    assert f"'{divisor}'" in problems[0].message


def test_interpreter_floor_division_is_the_engines() -> None:
    """No more `x // 0 == 0`: the tree walker divides exactly as the engine's compiled code."""
    f = expr.parse("a // b", ENV)
    for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (10**12, 7), (1, 0), (-3, 0)]:
        code = pyprint.expr(expr.to_ir(f, lambda n, _i, a=a, b=b: ir.Lit({"a": a, "b": b}[n])))
        try:
            engine: object = eval(code, {"__builtins__": {}})
        except ZeroDivisionError as exc:
            engine = type(exc)
        try:
            walked: object = expr.evaluate(f, lambda n, _i, a=a, b=b: {"a": a, "b": b}[n])
        except ZeroDivisionError as exc:
            walked = type(exc)
        assert walked == engine, (a, b)


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ([0, "game.tracks.influence.max"], (0, 10)),
        ([0, None], (0, bounds.INF)),
        ([None, 3], (-bounds.INF, 3)),
        (
            [
                "min(game.tracks.treasury.spaces.modifier)",
                "max(game.tracks.treasury.spaces.modifier)",
            ],
            (-1, 1),
        ),
        ([0, "count(components.plans)"], (0, 20)),
        ([0, "sum(components.plans.officials)"], (0, 41)),
        ([0, "game.start.officials * (game.players.max - 1) + 1"], (0, 25)),
        (["-game.tracks.influence.max", "max(2, 3, game.periods)"], (-10, 3)),
    ],
)
def test_bounds_read_the_rules_data(raw: list[Any], want: bounds.Interval) -> None:
    data = {
        k: yaml.safe_load((ROOT / "rules" / f"{k}.yaml").read_text())
        for k in ("game", "components")
    }
    assert resolve_range(raw, data) == want


@pytest.mark.parametrize(
    "raw",
    [
        [0],
        [0, 1, 2],
        [0, "game"],
        [0, "game.title"],
        [0, "open('x')"],
        [0, "game.start.reis.x"],
        [0, "1 +"],
        [0, True],
        [0, 1.5],
        [3, 2],
        [0, "game.businesses.id"],
        [0, "x" * 500],
    ],
)
def test_bad_bounds_raise_bound_error(raw: list[Any]) -> None:
    data = {
        k: yaml.safe_load((ROOT / "rules" / f"{k}.yaml").read_text())
        for k in ("game", "components")
    }
    with pytest.raises(BoundError):
        resolve_range(raw, data)


# --- context names: what the model says they are -----------------------------------------------


@pytest.mark.parametrize(("minimum", "ok"), [(0, False), (1, True), (3, True)])
def test_the_cost_a_lacking_cost_reads_is_the_visit_costs_value(
    rules: Path, minimum: int, ok: bool
) -> None:
    """wigs-for-influence reads `cost`, the visit cost: at least `minimum`."""
    diags = compile_variant(
        rules,
        "court:\n  costs:\n"
        f"    - {{id: visit-cost, params: {{minimum: {minimum}}}}}\n"
        "    - {id: wigs-for-influence, formula: 'wigs_per_influence * max(0, cost - influence)"
        " + 10 // cost'}\n",
    )
    assert (codes_at_house(diags) == []) is ok, diags
    if not ok:
        assert codes_at_house(diags) == [("divisor-not-positive", 11)]


@pytest.mark.parametrize(
    ("measure", "ok"),
    [
        ("stores.gold", False),
        ("stores.gold + 1", True),
        ("stores.gold - 1", False),
        ("max(1, stores.gold)", True),
    ],
)
def test_the_measure_an_eligibility_reads_is_its_sources_measures(
    rules: Path, measure: str, ok: bool
) -> None:
    diags = compile_variant(
        rules,
        "scoring:\n  sources:\n    - id: score.stores\n      eligible: 10 // measure > 0\n"
        f"      groups:\n        - {{id: gold, measure: '{measure}'}}\n"
        "        - {id: tools, measure: stores.tools + 1}\n"
        "        - {id: books, measure: stores.books + 1}\n"
        "        - {id: cloth, measure: stores.cloth + 1}\n",
    )
    assert (codes_at_house(diags) == []) is ok, diags
    if not ok:
        assert codes_at_house(diags) == [("divisor-not-positive", 11)]


# --- worked examples seat players the engine could reach (review of issue 11, item 8) ----------

EXAMPLE_PLAYER = "      - {color: Green, ships: [2, 3, 3]}\n"


@pytest.mark.parametrize(
    ("player", "code", "words"),
    [
        ("{color: Green, ships: [2, 3, 99]}", "value-out-of-range", "hull size 99"),
        ("{color: Green, ships: [5]}", "value-out-of-range", "hull size 5"),
        ("{color: Green, rubble_sets: 99}", "value-out-of-range", "rubble sets"),
        ("{color: Green, rubble_sets: 6}", "value-out-of-range", "rubble sets"),
        ("{color: Green, influence: 11}", "value-out-of-range", "Influence"),
        ("{color: Green, influence: 1000}", "value-out-of-range", "Influence"),
        ("{color: Green, stores: {gold: 99}}", "value-out-of-range", "stores"),
        ("{color: Green, stores: {gold: 5, books: 4}}", "value-out-of-range", "stores"),
        ("{color: Green, decrees: [decree-01, decree-01]}", "duplicate-id", "decree-01"),
        ("{color: Green, completed_plans: [plan-01, plan-01]}", "duplicate-id", "plan-01"),
        ("{color: Green, royal_favors: [king, king, king, king]}", "value-out-of-range", "king"),
    ],
)
def test_a_worked_example_player_the_engine_cannot_reach_is_an_error(
    rules: Path, player: str, code: str, words: str
) -> None:
    """A worked example's player is built in the engine and scored: one holding a Ship no ship
    is, more rubble sets or stores than the board holds, Influence off the track, or a Decree,
    Plan or Royal Favor tile that does not exist that often was printed as a result."""
    examples = rules / "examples.yaml"
    text = examples.read_text(encoding="utf-8")
    assert EXAMPLE_PLAYER in text
    line = text[: text.index(EXAMPLE_PLAYER)].count("\n") + 1
    examples.write_text(text.replace(EXAMPLE_PLAYER, f"      - {player}\n", 1), encoding="utf-8")
    _, diags = pipeline.analyse(rules)
    found = [d for d in diags if d.is_error]
    assert [(d.code, d.span.line if d.span else 0) for d in found] == [(code, line)], found
    assert words in found[0].message


@pytest.mark.parametrize(
    "player",
    [
        "{color: Green, ships: [1, 2, 3, 4]}",
        "{color: Green, rubble_sets: 5, influence: 10}",
        "{color: Green, stores: {gold: 4, books: 4}}",
        "{color: Green, royal_favors: [king, king, king]}",
    ],
)
def test_a_worked_example_player_at_the_bounds_builds(rules: Path, player: str) -> None:
    examples = rules / "examples.yaml"
    text = examples.read_text(encoding="utf-8")
    examples.write_text(text.replace(EXAMPLE_PLAYER, f"      - {player}\n", 1), encoding="utf-8")
    _, diags = pipeline.analyse(rules)
    assert [d for d in diags if d.is_error] == []


# --- trigger conditions the declared ranges decide ---------------------------------------------

BOOLS = {**ENV, "t": expr.NameInfo("bool")}


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("a > 5", {False}),  # a is -3..5
        ("a >= 5", {True, False}),
        ("a >= -3", {True}),
        ("b <= 4 and c >= 0", {True}),
        ("b > 4 or a > 5", {False}),
        ("b > 4 or a == 5", {True, False}),
        ("not (a < 6)", {False}),
        ("a * 0 == 0", {True}),
        ("a * 0 != 0", {False}),
        ("b == 0", {False}),
        ("0 < b < 5", {True}),
        ("2 < b < 1", {False}),
        ("1 < b < 2", {True, False}),  # over-approximated: each comparison on its own
        ("c // b >= 0", {True}),
        ("c > 1", {True, False}),
        ("t", {True, False}),
        ("True", {True}),
        ("False or t", {True, False}),
        ("a > 5 and t", {False}),
    ],
)
def test_outcomes_of_conditions(source: str, want: set[bool]) -> None:
    assert expr.outcomes(expr.parse(source, BOOLS), RANGES) == want


@pytest.mark.parametrize("source", [
    "a > b", "a >= b and b > 2", "a == b or c < 1", "not (a < b < 4)", "a * b > 12",
    "max(a, b) == 5", "a - b <= -7", "a // b < -2", "c - a >= 8",
])
def test_outcomes_hold_every_truth_value_the_condition_takes(source: str) -> None:
    """Sound: a truth value the condition takes for some values in range is never left out
    (only a value it can never take is)."""
    f = expr.parse(source, ENV)
    seen = {bool(expr.evaluate(f, lambda n, _i, env=env: env[n]))
            for env in ({"a": a, "b": b, "c": c} for a in range(-3, 6) for b in range(1, 5)
                        for c in range(0, 12))}
    assert seen <= expr.outcomes(f, RANGES)


BOOM = """\
flow:
  triggers:
    - $add: true
      id: house.boom
      periods: any
      scope: game
      condition: treasury_value >= high
      params: {high: 9}
      ranges: {high: [1, null]}
      do:
        - for_each: {as: q, in: game.players}
          do:
            - gain: {q.reis: 5}
      text: When the Treasury value reaches {params.high}, every player takes 5 réis.
      source: [seed:000#intro]
"""


def test_a_trigger_that_can_never_fire_is_an_error_at_its_condition(rules: Path) -> None:
    """The Treasury track's values are 1..6 (the range of treasury_value, read from the
    track's spaces): a trigger at 9 never fires. The error is at its condition, with the
    range, and notes at the param and at the declared range."""
    diags = compile_variant(rules, BOOM)
    assert codes_at_house(diags) == [("trigger-never-fires", 14)], diags
    (d,) = diags
    assert d.message == (
        "trigger 'house.boom' can never fire: its condition `treasury_value >= high` is false "
        "for every value in the declared ranges (treasury_value is 1..6, high is 9): change "
        "the condition or its params, or remove the trigger")
    notes = {r.message: r.span for r in d.related}
    assert notes["'high' is 9 here"] is not None
    at = notes["the range of 'treasury_value' (1..6) is declared here"]
    assert at is not None and at.file.endswith("vocabulary.yaml")


def test_the_range_follows_the_data(rules: Path) -> None:
    """A Treasury track whose top space shows 9: the same trigger can fire, and builds."""
    game = rules / "game.yaml"
    text = game.read_text()
    for old, new in (("{value: 6, modifier: 1}", "{value: 9, modifier: 1}"),
                     ("start_value: 6", "start_value: 9")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    game.write_text(text)
    assert compile_variant(rules, BOOM) == []


def test_a_trigger_that_always_fires_is_an_error_at_its_condition(rules: Path) -> None:
    change = BOOM.replace("treasury_value >= high", "treasury_value >= high - 8")
    diags = compile_variant(rules, change)
    assert codes_at_house(diags) == [("trigger-always-fires", 14)], diags
    assert "its condition `treasury_value >= high - 8` is true for every value in the " \
        "declared ranges (treasury_value is 1..6, high is 9)" in diags[0].message


@pytest.mark.parametrize("change", [
    "flow:\n  triggers:\n    - {id: period-end.rubble, params: {sets: 6}}\n",  # never
    "flow:\n  triggers:\n    - {id: game-end.rubble, params: {sets: 0}}\n",  # always
])
def test_a_param_outside_its_range_is_one_error_not_two(rules: Path, change: str) -> None:
    """The condition can no longer change its truth because the param left its declared
    range: that is the error, said once."""
    assert [d.code for d in compile_variant(rules, change)] == ["value-out-of-range"]


def test_a_changed_param_is_blamed_where_it_is_changed(rules: Path) -> None:
    """A base trigger whose param the house rule changes (its range left out, so only the
    condition can say it): the error stands at the house rule's param, with a note at the
    condition in rules/flow.yaml."""
    flow = rules / "flow.yaml"
    text = flow.read_text()
    flow.write_text(text.replace("    ranges: {sets: [1, game.rubble.max_sets]}\n", "", 1))
    diags = compile_variant(
        rules, "flow:\n  triggers:\n    - {id: period-end.rubble, params: {sets: 6}}\n")
    assert codes_at_house(diags) == [("trigger-never-fires", 10)], diags
    assert [r.message for r in diags[0].related][:1] == ["in this formula"]


@pytest.mark.parametrize("source", [f"a * {2 ** 63}", f"{10 ** 30} - b", f"c < {2 ** 64}"])
def test_a_number_past_what_a_save_holds_in_a_formula_is_refused(source: str) -> None:
    """A formula's number larger than a saved game's 64 bits: it built, and a score or a cost
    of that size could not be saved or sent."""
    with pytest.raises(expr.FormulaError) as caught:
        expr.parse(source, ENV)
    assert caught.value.code == "value-out-of-range"
    assert source.index(caught.value.message.split()[0]) == caught.value.col


def test_the_largest_number_a_save_holds_is_a_formula_number() -> None:
    assert expr.parse(f"a + {2 ** 63 - 1}", ENV).type == "int"
