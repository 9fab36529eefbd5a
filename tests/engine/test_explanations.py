"""Explanations keep precedence: a formula shown with its values (the engine's score lines),
and a formula in words (the reference), bracket an operand that is itself a sum or another
expression, so `2 * ship_hull_total` reads `2 × (3 + 4) = 14`, never `2 × 3 + 4 = 14`.

The shown values are checked by meaning, not only by text: the arithmetic they print, read
with the usual precedence, gives the formula's value.
"""

from __future__ import annotations

import ast
import functools
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.emit.engine.procs import Vocab
from lisboa_rules.emit.engine.view import show_code
from lisboa_rules.lang import expr
from lisboa_rules.model.procs import state_scope, vocab_nodes
from lisboa_rules.pyprint import expr as pyprint
from tools import interp

ROOT = Path(__file__).resolve().parents[2]
NAMES = {n: expr.NameInfo("int") for n in ("reis", "rubble_sets", "royal_favors", "ship_hull_total",
                                          "wigs", "influence")}
PLAYER = {"reis": 12, "rubble_sets": 2, "royal_favors": ["a", "b", "c"], "ships": [3, 4],
          "wigs": 7, "influence": 5}


@functools.cache
def _vocab() -> Vocab:
    """What each formula name reads in the base game's engine (rules/vocabulary.yaml)."""
    m = interp.rule_sets(ROOT / "rules")[()]
    assert m.procs is not None
    scope = state_scope(m.state, m.data, m.procs.measures)
    return Vocab(vocab_nodes(m.data["vocabulary"]["names"], scope), names_of(scope))


def _code(name: str) -> str:
    """A formula name's value as the engine reads it."""
    return pyprint.bare(pyprint.expr(_vocab().nodes[name][1], _vocab().names))


def _show(source: str, ships: list[int] | None = None) -> tuple[str, int]:
    """The formula shown with PLAYER's values, and its value."""
    f = expr.parse(source, NAMES)
    code = show_code(f, (), _vocab())
    assert code is not None, source
    p = SimpleNamespace(**{**PLAYER, "ships": PLAYER["ships"] if ships is None else ships})
    shown = eval(compile(ast.parse(code, mode="eval"), "<show>", "eval"), {}, {"p": p, "g": None})
    value = expr.evaluate(f, lambda name, item: eval(_code(name), {}, {"p": p}))
    return shown, int(value)


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("2 * ship_hull_total", "2 × (3 + 4)"),
        ("ship_hull_total * 2", "(3 + 4) × 2"),
        ("ship_hull_total // 2", "(3 + 4) ÷ 2, rounded down"),
        ("2 - ship_hull_total", "2 - (3 + 4)"),
        ("ship_hull_total - 2", "3 + 4 - 2"),
        ("2 + ship_hull_total", "2 + 3 + 4"),
        ("-ship_hull_total + 20", "-(3 + 4) + 20"),
        ("reis * (rubble_sets + wigs)", "12 × (2 + 7)"),
        ("(reis + rubble_sets) // wigs", "(12 + 2) ÷ 7, rounded down"),
        ("reis - (rubble_sets - wigs)", "12 - (2 - 7)"),
        ("reis - rubble_sets - wigs", "12 - 2 - 7"),
        ("reis // (rubble_sets * influence)", "12 ÷ (2 × 5), rounded down"),
        ("reis * rubble_sets // influence", "(12 × 2) ÷ 5, rounded down"),
        ("reis // rubble_sets * influence", "(12 ÷ 2, rounded down) × 5"),
        ("reis + rubble_sets * wigs", "12 + 2 × 7"),
        ("max(0, min(reis, rubble_sets + 1)) * 2", "max(0, min(12, 2 + 1)) × 2"),
        ("max(ship_hull_total, 2) * 3", "max(3 + 4, 2) × 3"),
        ("min(2 * ship_hull_total, reis - (wigs - influence))", "min(2 × (3 + 4), 12 - (7 - 5))"),
    ],
)
def test_shown_values_keep_precedence(source: str, shown: str) -> None:
    text, value = _show(source)
    assert text == shown
    # Read back with the usual precedence, the shown arithmetic is the formula's value.
    python = text.replace("×", "*").replace("÷", "//").replace(", rounded down", "")
    assert eval(python) == value, (text, value)  # digits and operators only


@pytest.mark.parametrize(
    ("ships", "shown"), [([], "2 × 0"), ([5], "2 × 5"), ([3, 4], "2 × (3 + 4)"),
                         ([1, 2, 3], "2 × (1 + 2 + 3)")])
def test_a_sum_of_one_term_needs_no_brackets(ships: list[int], shown: str) -> None:
    assert _show("2 * ship_hull_total", ships)[0] == shown


def _words(source: str) -> str:
    names = {**NAMES, "big": expr.NameInfo("bool"), "small": expr.NameInfo("bool")}
    return expr.to_words(expr.parse(source, names), lambda name, item: name.upper())


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("reis * (rubble_sets + wigs)", "REIS × (RUBBLE_SETS plus WIGS)"),
        ("(reis + rubble_sets) // wigs", "(REIS plus RUBBLE_SETS) ÷ WIGS, rounded down"),
        ("reis - (rubble_sets - wigs)", "REIS minus (RUBBLE_SETS minus WIGS)"),
        ("max(min(reis, wigs), influence)",
         "the larger of (the smaller of REIS and WIGS) and INFLUENCE"),
        ("min(reis, max(wigs, influence))",
         "the smaller of REIS and (the larger of WIGS and INFLUENCE)"),
        ("-(reis + wigs)", "minus (REIS plus WIGS)"),
        ("not (big and small)", "not (BIG and SMALL)"),
        ("big and (small or reis > 2)", "BIG and (SMALL or REIS: more than 2)"),
        ("(big or small) and not big", "(BIG or SMALL) and not BIG"),
    ],
)
def test_formula_words_keep_precedence(source: str, words: str) -> None:
    assert _words(source) == words


@pytest.mark.parametrize(
    ("source", "words"),
    [
        # arithmetic inside max/min: not "the larger of 0 and REIS minus WIGS"
        ("max(0, reis - wigs)", "the larger of 0 and (REIS minus WIGS)"),
        ("max(reis + wigs, 2)", "the larger of (REIS plus WIGS) and 2"),
        ("min(2 * reis, wigs)", "the smaller of (2 × REIS) and WIGS"),
        # max/min inside arithmetic: not "the smaller of REIS and WIGS plus INFLUENCE"
        ("min(reis, wigs) + influence", "(the smaller of REIS and WIGS) plus INFLUENCE"),
        ("max(reis, wigs) * 2", "(the larger of REIS and WIGS) × 2"),
        ("reis - min(wigs, 2)", "REIS minus (the smaller of WIGS and 2)"),
        ("min(reis, wigs) // 2", "(the smaller of REIS and WIGS) ÷ 2, rounded down"),
        ("-max(reis, wigs) + 2", "minus (the larger of REIS and WIGS) plus 2"),
        ("max(0, 2 * reis - min(wigs, 2))",
         "the larger of 0 and ((2 × REIS) minus (the smaller of WIGS and 2))"),
    ],
)
def test_formula_words_bracket_max_and_min_operands(source: str, words: str) -> None:
    assert _words(source) == words


# --- a house rule that doubles the Ships' score ---------------------------------------------------

HOUSE_SHIPS = """\
kind: variant
id: house-ships
title: Proud fleets
applies: chosen
text: Ships score twice their hull size.
source: [seed:000#endgame-scoring]
changes:
  scoring:
    sources:
      - id: score.ships
        formula: 2 * ship_hull_total
        short: Twice the total of their hull sizes
        text: Each Ship in your portfolio scores twice its hull size.
"""


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[tuple[str, ...], Any]]:
    project = tmp_path_factory.mktemp("house-ships")
    shutil.copytree(ROOT / "rules", project / "rules")
    (project / "rules" / "variants" / "house-ships.yaml").write_text(HOUSE_SHIPS, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        assert main(["build", "--no-cache"]) == 0
    import importlib.util

    path = project / "generated" / "lisboa_engine.py"
    spec = importlib.util.spec_from_file_location("house_ships_engine", path)
    assert spec is not None and spec.loader is not None
    engine = importlib.util.module_from_spec(spec)
    sys.modules["house_ships_engine"] = engine
    spec.loader.exec_module(engine)
    return engine, interp.rule_sets(project / "rules")


@pytest.mark.parametrize(
    ("ships", "said"),
    [([3, 4], "2 × (3 + 4) = 14"), ([2, 3, 4], "2 × (2 + 3 + 4) = 18"), ([5], "2 × 5 = 10"),
     ([], "2 × 0 = 0")],
)
def test_the_doubled_ships_score_is_explained_with_brackets(
    house: tuple[Any, dict[tuple[str, ...], Any]], ships: list[int], said: str
) -> None:
    E, models = house
    g = E.new_game(3, ("house-ships",))
    g.players[1].ships = list(ships)
    sheet = E.final_scores(g)
    line = next(ln for ln in sheet.lines[1] if ln.source == "score.ships")
    assert f": {said} (2 × " in line.explanation, line.explanation
    assert line.points == 2 * sum(ships)
    # The reference interpreter scores the same saved game alike.
    state = E.to_json(g)
    ref = interp.score(interp.model_for(models, state), state)
    assert ref.by_source(1)["score.ships"] == line.points
    assert ref.totals == sheet.totals
