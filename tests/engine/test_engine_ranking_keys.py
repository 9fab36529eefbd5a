"""The generated tie-breaker keys (`_RANKERS`) and the measures compiled to a bisection.

`ranking` reads each rule set's tie-breaker chain from one generated straight-line function
(`_RANKERS`): every measure of rules/scoring.yaml `tiebreakers` inlined, the score track read as
the player's final total. These tests rank random states of every rule set, and of rule sets
whose house rule adds a tie-breaker of another shape (the track inside an expression, a measure
compiled to a function of its own, which reads a copy of the player), and compare the keys with
the rule set's tie-breaker functions evaluated on the player with the final total on the track
(`RULESETS[key].tiebreakers`, what the tools read). A measure that counts constant numbers on one
side of a value (`len([i for i in ICONS if i < influence])`) compiles to a bisection: the same
count for every value, checked here on the compiled code. No timing is asserted.
"""

from __future__ import annotations

import copy
import inspect
import random
import shutil
from bisect import bisect_left
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import load_engine, setups

from lisboa_rules.cli.main import main
from lisboa_rules.emit.engine.names import EngineNames
from lisboa_rules.emit.engine.procs import counted_by_bisection, counted_by_comparisons
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from lisboa_rules.model.procs import Tables
from lisboa_rules.pyprint import expr as pyprint

ROOT = Path(__file__).resolve().parents[2]


def _expected_keys(E: Any, g: Any, totals: tuple[int, ...]) -> list[tuple[int, ...]]:
    out = []
    for p, total in zip(g.players, totals, strict=True):
        final = copy.copy(p)
        final.wigs = total
        out.append(tuple(fn(g, final, E.Ctx()) for _, fn in g.rs.tiebreakers))
    return out


def _check(E: Any, g: Any) -> None:
    sheet = E.final_scores(g)
    rank = E.ranking(g, sheet)
    keys = _expected_keys(E, g, sheet.totals)
    assert list(rank.keys) == keys
    assert rank.names == tuple(name for name, _ in g.rs.tiebreakers)
    # places: by the keys, highest first; equal keys share a place
    flat = [s for place in rank.places for s in place]
    assert sorted(flat) == list(range(len(g.players)))
    for a, b in zip(rank.places, rank.places[1:], strict=False):
        assert keys[a[0]] > keys[b[0]]
    for place in rank.places:
        assert len({keys[s] for s in place}) == 1
    # the state is not changed by ranking (the track keeps its own value)
    assert tuple(p.wigs for p in g.players) == sheet.track


def _play_and_check(E: Any, seed: int) -> int:
    checked = 0
    for players, key in setups(E):
        g = E.new_game(players, key, seed)
        rng = random.Random(f"rank-keys:{seed}:{players}:{key}")
        step = 0
        while g.phase != "over":
            if step % 11 == 0:
                _check(E, g)
                checked += 1
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            step += 1
        _check(E, g)
        checked += 1
    return checked


def test_every_rule_set_has_a_ranker(engine: Any) -> None:
    assert set(engine._RANKERS) == set(engine.RULESETS)


@pytest.mark.parametrize("seed", range(2))
def test_generated_keys_agree_with_the_tiebreakers(engine: Any, seed: int) -> None:
    assert _play_and_check(engine, seed) > 50


def test_keys_read_the_final_total_not_the_track(engine: Any) -> None:
    """Players equal on the track and apart after scoring: the first key is the total."""
    for seed, players in ((4, 3), (5, 4), (6, 2)):
        g = engine.new_game(players, (), seed)
        for i, p in enumerate(g.players):
            p.wigs = 5
            p.reis = 5 * i  # rules/scoring.yaml score.influence: a wig per 5 réis
        sheet = engine.final_scores(g)
        assert len(set(sheet.totals)) == players  # apart after scoring
        rank = engine.ranking(g, sheet)
        assert [k[0] for k in rank.keys] == list(sheet.totals)
        assert rank.places == tuple((s,) for s in reversed(range(players)))
        _check(engine, g)


# --- house rules that add a tie-breaker of another shape --------------------------------------

_TIEBREAKS = {
    # the track inside an expression: inlined, the track read as the final total
    "track-and-money": "wigs + reis",
    # a measure compiled to a function of its own (`_m_...(g, p)`): the chain reads a copy
    "cashed-influence": "influence_reis",
    # both in one measure
    "track-and-plans": "wigs * 2 - officials_on_completed_plans",
}


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    """One engine per tie-breaker, its variant folded into the base game."""
    out = {}
    for name, measure in _TIEBREAKS.items():
        tmp = tmp_path_factory.mktemp(name)
        shutil.copytree(ROOT / "rules", tmp / "rules")
        (tmp / "rules" / "variants" / f"{name}.yaml").write_text(
            f"kind: variant\nid: {name}\ntitle: Tie-break {name}\napplies: chosen\n"
            "text: Players tied on wigs are separated first by another measure.\n"
            "source: [seed:000#tiebreakers]\n"
            "changes:\n  scoring:\n    tiebreakers:\n      measures:\n"
            "        - {$add: true, $after: most wigs, "
            f"measure: '{measure}', name: most {name}}}\n",
            encoding="utf-8",
        )
        args = ["build", "--no-cache", "--rules", str(tmp / "rules"), "--out", str(tmp / "g")]
        assert main([*args, "--variant", name]) == 0
        tag = name.replace("-", "_")
        out[name] = load_engine(tmp / "g" / "lisboa_engine.py", f"rank_keys_{tag}")
    return out


@pytest.mark.parametrize("name", sorted(_TIEBREAKS))
def test_house_tiebreaker_keys_agree(house: dict[str, ModuleType], name: str) -> None:
    E = house[name]
    assert [n for n, _ in E.RULESETS[()].tiebreakers][:2] == ["most wigs", f"most {name}"]
    assert set(E._RANKERS) == set(E.RULESETS)
    assert _play_and_check(E, 3) > 20


@pytest.mark.parametrize("name", sorted(_TIEBREAKS))
def test_house_tiebreaker_reads_the_final_total(house: dict[str, ModuleType], name: str) -> None:
    """Scoring moves the players apart; the house measure sees each player's final total."""
    E = house[name]
    g = E.new_game(3, (), 1)
    for i, p in enumerate(g.players):
        p.wigs = 4
        p.reis = 5 * i
        p.influence = 2 * i
    sheet = E.final_scores(g)
    _check(E, g)
    keys = E.ranking(g, sheet).keys
    if "track" in name:  # the measure changes with the total, not with the track (all 4)
        final = _expected_keys(E, g, sheet.totals)
        on_track = _expected_keys(E, g, sheet.track)
        assert [k[1] for k in keys] == [k[1] for k in final]
        if sheet.totals != sheet.track:
            assert [k[1] for k in keys] != [k[1] for k in on_track]


# --- a count of constant numbers compiled to a bisection --------------------------------------

_NUMBERS = {"a": [1, 3, 5, 7, 8, 9], "b": [9, 3, 1], "c": [4, -2, 4, 0], "d": [2], "f": [5, 1],
            "g": [0, 6, 2], "h": [1, 2], "long": list(range(40, 0, -3)), "mixed": [1, True],
            "names": ["x", "y"]}


def _count_scope() -> tuple[typed.Scope, dict[str, tuple[str, Any]], Any]:
    """Two numbers `e` and `k`, lists of numbers of the rules data, a kind `level` of int ids
    (0, 5, 10) and a table of every level; long constants are named (the code -> names), by
    the names printed with (the third)."""
    scope = typed.Scope(
        locals={n: typed.Name(typed.INT, ir.Local(n)) for n in ("e", "k")},
        game={"marks": typed.Name(typed.VType("map", (typed.VType("level"), typed.INT)),
                                  ir.GameField("marks"), field="game.marks")},
        int_kinds=frozenset({"level"}), kinds=frozenset({"level"}),
        kind_values={"level": (10, 0, 5)}, data=typed.data_lookup({"n": _NUMBERS}))
    engine = EngineNames(Tables())
    return scope, engine.constants, engine.names(scope)


_COUNTS = [
    "len([i for i in rules.n.a if i < e])",
    "len([v for v in rules.n.b if e >= v])",
    "len([v for v in rules.n.c if v <= e])",
    "len([v for v in rules.n.d if e < v])",
    "2 * len([v for v in rules.n.b if v > e + 1]) - 1",
    "len([v for v in rules.n.f if v >= (e if k > 0 else 3)]) + k",
    "k * len([v for v in rules.n.g if e > v]) + len([v for v in rules.n.h if v < k])",
    "len([v for v in rules.n.long if v < e - k])",  # a long list: its sorted numbers named
    "len([x for x in game.marks if x > e])",  # the ids of a kind, in the order it declares
]


def _run(code: str, named: dict[str, tuple[str, Any]], e: int, k: int) -> Any:
    env: dict[str, Any] = {"v_e": e, "v_k": k, "_bisect_left": bisect_left}
    env |= {name: eval(c) for c, (name, _value) in named.items()}  # their code, in a test
    return eval(code, env)


@pytest.mark.parametrize("source", _COUNTS)
def test_count_of_constants_is_a_bisection(source: str) -> None:
    scope, named, names = _count_scope()
    node = typed.check(source, scope).node
    code = pyprint.bare(pyprint.expr(node, names))
    fast = counted_by_bisection(node, names)
    assert "len([" not in fast and "_bisect_left(" in fast, fast
    for e in range(-4, 45):
        for k in (0, 1, 3):
            assert _run(fast, named, e, k) == _run(code, named, e, k), (fast, e, k)


_WHOLE = [c for c in _COUNTS if c.startswith("len(") and ") +" not in c]


@pytest.mark.parametrize("source", [*_WHOLE, "len([v for v in rules.n.c if v > e])",
                                    "len([v for v in rules.n.c if e <= v])"])
def test_a_measure_that_is_a_count_of_a_few_constants_is_compared_in_turn(source: str) -> None:
    """A measure whose whole body counts a few constant numbers on one side of a value is
    printed as comparisons with those numbers sorted (no call: native ints when compiled),
    the same count for every value, duplicates and each side included; a long list stays a
    bisection."""
    scope, named, names = _count_scope()
    node = typed.check(source, scope).node
    code = pyprint.bare(pyprint.expr(node, names))
    steps = counted_by_comparisons(node, names)
    if "rules.n.long" in source:
        assert steps is None
        return
    assert steps is not None and "_bisect_left" not in "\n".join(steps), steps
    body = "\n".join("    " + x for x in steps)
    env: dict[str, Any] = {}
    exec(f"def measure(v_e, v_k):\n{body}", env)  # the printed statements, in a test
    for e in range(-4, 45):
        for k in (0, 1, 3):
            assert env["measure"](e, k) == _run(code, named, e, k), (steps, e, k)


def test_other_bodies_are_not_compared_in_turn() -> None:
    scope, _named, names = _count_scope()
    for source in ("2 * len([v for v in rules.n.b if v > e + 1]) - 1",
                   "len([v for v in rules.n.d if v == e])", "len([v for v in [1, 2] if v < e])"):
        assert counted_by_comparisons(typed.check(source, scope).node, names) is None, source


@pytest.mark.parametrize(
    "source",
    [
        "len([q for q in rules.n.names if q != 'x'])",  # not numbers
        "len([v for v in rules.n.d if v < v])",  # compared with itself
        "len([v for v in rules.n.mixed if v < e])",  # a bool is not a number here
        "len([v for v in rules.n.d if v == e])",  # not one side of a value
        "len([v * 2 for v in rules.n.d if v < e])",  # not the numbers themselves
        "sum([v for v in rules.n.d if v < e])",
        "len([v for v in [1, 2] if v < e])",  # a list written in the rules, not a constant
        "len([v for v in rules.n.d if v < e and v > k])",  # not one comparison
    ],
)
def test_other_code_is_left_as_it_is(source: str) -> None:
    scope, _named, names = _count_scope()
    node = typed.check(source, scope).node
    assert counted_by_bisection(node, names) == pyprint.bare(pyprint.expr(node, names))


def test_the_engines_count_of_icons_is_a_bisection(engine: Any) -> None:
    """rules/vocabulary.yaml influence_reis counts the réis icons below the marker: compiled to
    comparisons with the icons (a few numbers), it gives the count of the rules' icons on
    every space of the track."""
    assert "if n_ <= " in inspect.getsource(engine._m_influence_reis)
    g = engine.new_game(3, (), 0)
    p = g.players[0]
    for influence in range(g.rs.influence_max + 1):
        p.influence = influence
        want = len([i for i in g.rs.reis_icons if i < influence])
        assert engine._m_influence_reis(g, p) == want
