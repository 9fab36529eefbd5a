"""Bounded cost (issue 33): a house rule whose bound on the moves of one decision, or on the work
of one step, is over the limits of `lisboa_rules/core/limits.py` is a located error
(`cost-unbounded`) that prints the bound the compiler computed (`ir/cost.py`, on the IR), before
any pass evaluates it; the compiler's own evaluation of rule expressions (`ir/const.py`) stops at
the limit before doing more; and building the declared state is linear in the size of a list of
the rules data.

Each measured case of the issue (on an older main: `repeat: 99999999999999` and nested
comprehensions in a setup step hung `build` and `validate`; `len(range(400000000))` printed
"MemoryError:" into the players' reference; `choose: {up_to: 40}` over 82 cards built, and
`legal_moves` never returned) is a house rule here, compiled by the real pipeline. No test
times anything: each asserts on the diagnostic, and the linearity test counts work.
"""

from __future__ import annotations

import copy
import math
import sys
import textwrap
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.core.codes import CODES
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.limits import MAX_MOVES, MAX_WORK
from lisboa_rules.front.loader import load_file
from lisboa_rules.ir import const, cost
from lisboa_rules.ir import expr as ir
from lisboa_rules.model.state import NOWHERE
from lisboa_rules.model.state_build import build_state

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
kind: variant
id: {id}
title: A costly house rule
applies: chosen
text: At the start everyone gains réis.
source: [seed:000#end-of-the-period]
changes:
"""

SETUP = """\
flow:
  setup:
    steps:
      - $add: true
        $after: setup.favors
        id: setup.costly
        text: Everyone gains réis.
        source: [seed:000#end-of-the-period]
"""

CARDS = "rules.components.cards.number"

# the measured cases: (name, the step added to the setup, the line of the house rule the error
# is at, the bound it prints)
SETUP_CASES = [
    ("big-repeat", """\
repeat: 99999999999999
do:
  - for_each: {as: q, in: game.players}
    do:
      - gain: {q.reis: 1}
""", 16, "1,799,999,999,999,984"),
    ("big-range", """\
for_each: {as: q, in: game.players}
do:
  - gain: {q.reis: "len(range(400000000))"}
""", 18, "400,000,006"),
    ("big-nested", f"""\
for_each: {{as: q, in: game.players}}
do:
  - gain: {{q.reis: "sum([sum([sum([len([d for d in {CARDS} if d > a + b + c]) for c in {CARDS}])
      for b in {CARDS}]) for a in {CARDS}])"}}
""", 18, "units of work"),
]


def house(tmp_path: Path, ident: str, changes: str) -> list[Diagnostic]:
    """The errors of the rules with a house rule (its `changes:` given) folded in."""
    path = tmp_path / f"{ident}.yaml"
    path.write_text(HEAD.format(id=ident) + textwrap.indent(changes, "  "))
    result = pipeline.compile_rules(ROOT / "rules", [ident], extra=[path])
    return [d for d in result.diagnostics if d.is_error]


def test_the_code_is_registered() -> None:
    assert "cost-unbounded" in CODES
    assert "1,000,000" in CODES["cost-unbounded"].explanation


@pytest.mark.parametrize(("ident", "step", "line", "bound"), SETUP_CASES,
                         ids=[c[0] for c in SETUP_CASES])
def test_a_costly_setup_step_is_a_located_error_with_its_bound(
        tmp_path: Path, ident: str, step: str, line: int, bound: str) -> None:
    diags = house(tmp_path, ident, SETUP + textwrap.indent(step, "        "))
    assert [d.code for d in diags] == ["cost-unbounded"], diags
    (d,) = diags
    assert d.span is not None and d.span.file.endswith(f"{ident}.yaml")
    assert d.span.line == line
    assert bound in d.message
    assert f"over the limit of {MAX_WORK:,}" in d.message
    assert "bound it with" in d.message  # what to do


def test_a_choice_of_up_to_40_of_82_cards_is_a_located_error_with_its_bound(
        tmp_path: Path) -> None:
    diags = house(tmp_path, "big-choose", f"""\
flow:
  moves:
    - id: hand-discard
      steps:
        - id: hand-discard.cards
          choose: {{as: cards, from: {CARDS}, up_to: 40}}
          reason: discard only cards from your hand, each once
          text: Discard up to 40 cards.
  period_end:
    steps:
      - id: period-end.hand-discard
        text: Each player may discard up to 40 cards.
""")
    assert [d.code for d in diags] == ["cost-unbounded"], diags
    (d,) = diags
    assert d.span is not None  # at the choose, with a note at the house rule that changed it
    assert any(r.span is not None and r.span.file.endswith("big-choose.yaml")
               for r in d.related)
    assert str(f"{cost.subsets(82, 0, 40):,}") in d.message
    assert "a set of up to 40 of 82 items" in d.message
    assert f"{MAX_MOVES:,} moves of one decision" in d.message


def test_a_bounded_setup_step_builds(tmp_path: Path) -> None:
    """The same shapes within the limits: no error."""
    diags = house(tmp_path, "small-repeat", SETUP + textwrap.indent("""\
repeat: 3
do:
  - for_each: {as: q, in: game.players}
    do:
      - gain: {q.reis: "len(range(10)) + len([c for c in rules.components.cards.number])"}
""", "        "))
    assert diags == []


# --- the bounds --------------------------------------------------------------------------------


def test_subsets_is_the_sum_of_binomials_and_saturates() -> None:
    assert cost.subsets(5, 0, 5) == 32
    assert cost.subsets(4, 1, 2) == 4 + 6
    assert cost.subsets(82, 0, 40) == sum(math.comb(82, i) for i in range(41))
    assert cost.subsets(10 ** 6, 0, 10 ** 6) == cost.CAP  # stops early, at the cap
    assert cost.subsets(10 ** 14, 10 ** 14, 10 ** 14) == 1  # in few steps, by symmetry
    big = 10 ** 14
    assert cost.subsets(big, big - 2, big) == 1 + big + big * (big - 1) // 2
    assert cost.subsets(10 ** 14, 10 ** 13, 10 ** 14) == cost.CAP
    assert cost.subsets(6, 2, 4) == 15 + 20 + 15
    assert cost.subsets(6, 5, 2) == 0
    comb = math.comb
    for n in range(10):
        for lo in range(-1, n + 2):
            for hi in range(-1, n + 2):
                want = sum(comb(n, i) for i in range(max(lo, 0), min(hi, n) + 1))
                assert cost.subsets(n, lo, hi) == want, (n, lo, hi)


def test_bounds_come_from_declared_sizes_and_ranges() -> None:
    c = cost.Context({"player.reis": (0, None), "game.round": (1, 9)},
                     {"player.hand": 5})
    hand = ir.PlayerField("hand", ir.Me())
    assert c.size(hand) == 5
    assert c.interval(ir.Call("len", (hand,))) == (0, 5)
    assert c.interval(ir.BinOp("*", ir.GameField("round"), ir.Lit(2))) == (2, 18)
    assert c.size(ir.Call("range", (ir.GameField("round"),))) == 9
    # a comprehension over the range, inside a comprehension over the hand: multiplied
    inner = ir.Comp(ir.Local("i"), "i", ir.Call("range", (ir.GameField("round"),)), ())
    outer = ir.Comp(ir.Call("len", (inner,)), "h", hand, ())
    assert 5 * 9 <= c.work(outer).count < 5 * 9 * 10
    assert not c.work(outer).partial
    # what no declaration bounds counts as one, and says so
    assert c.work(ir.Call("range", (ir.Local("n"),))).partial


def test_the_compilers_own_evaluation_stops_at_the_limit() -> None:
    """A constant the compiler computes (here, nested comprehensions over a list of the rules
    data: 1,000 ** 3 items) is refused once it passes the limit, before doing more."""
    data = ir.Data(list(range(1000)))
    inner = ir.Comp(ir.Local("c"), "c", data, ())
    middle = ir.Comp(ir.Call("len", (inner,)), "b", data, ())
    outer = ir.Call("sum", (ir.Comp(ir.Call("sum", (middle,)), "a", data, ()),))
    with pytest.raises(const.NotConstant, match="over the limit"):
        const.evaluate(outer, {})
    small = ir.Call("sum", (ir.Comp(ir.Call("len", (inner,)), "a", ir.Data([1, 2]), ()),))
    assert const.evaluate(small, {}) == 2000


# --- linear in the size of the input -------------------------------------------------------


class _Counted(str):
    """A text of the rules data that counts the comparisons made with it."""

    __slots__ = ()
    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _state_work(colors: int) -> int:
    """The work of building the declared state with `colors` player colours: the Python calls
    made and the comparisons of the colours (a `list.count` per colour makes no call, but
    compares every pair)."""
    data: dict[str, Any] = {}
    for f in sorted((ROOT / "rules").glob("*.yaml")):
        doc, _ = load_file(f)
        assert doc is not None
        data[doc.data["kind"]] = doc.data
    data["game"] = copy.deepcopy(data["game"])
    data["game"]["players"]["colors"] = [_Counted(f"C{i}") for i in range(colors)]
    calls = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    _Counted.compared = 0
    sys.setprofile(count)
    try:
        decl, diags = build_state(data, lambda *p, key=False: NOWHERE, lambda s: "", [])
    finally:
        sys.setprofile(None)
    assert diags == []
    assert any(k.values is not None and len(k.values) == colors for k in decl.kinds)
    return calls + _Counted.compared


def test_building_the_state_is_linear_in_a_lists_length() -> None:
    n = 500
    small, large = _state_work(n), _state_work(4 * n)
    # linear: 4 times the entries, at most 4 times the work (and a constant); quadratic
    # would be 16 times
    assert large - small <= 3 * small + 4 * n * 4, (small, large)


def test_a_costly_name_of_the_vocabulary_is_a_located_error(tmp_path: Path) -> None:
    """A name formulas read (a measure) is read where no step bounds it (scoring, triggers):
    its own work is bounded where it is written."""
    diags = house(tmp_path, "big-measure", """\
vocabulary:
  names:
    - $add: true
      name: huge_count
      value: len(range(400000000))
      scope: player
      range: [0, null]
      words: a huge count
""")
    assert [d.code for d in diags] == ["cost-unbounded"], diags
    (d,) = diags
    assert d.span is not None and d.span.file.endswith("big-measure.yaml")
    assert d.span.line == 12
    assert "name 'huge_count'" in d.message and "400,000,003 units of work" in d.message


def test_the_choices_of_one_action_multiply(tmp_path: Path) -> None:
    """Each choice within the limit, the moves of the decision over it: refused at the choice
    that passes it, with the product (32 hands to discard, times 82 cards, times 82)."""
    diags = house(tmp_path, "big-product", f"""\
flow:
  moves:
    - id: hand-discard
      steps:
        - $add: true
          $after: hand-discard.cards
          id: hand-discard.first-card
          choose: {{as: first_card, from: {CARDS}}}
          text: Name a card.
        - $add: true
          $after: hand-discard.first-card
          id: hand-discard.second-card
          choose: {{as: second_card, from: {CARDS}}}
          text: Name another card.
  period_end:
    steps:
      - id: period-end.hand-discard
        text: Each player may discard cards, and names two cards.
""")
    assert [d.code for d in diags] == ["cost-unbounded"], diags
    (d,) = diags
    assert d.span is not None and d.span.file.endswith("big-product.yaml")
    assert d.span.line == 20
    assert f"{32 * 82 * 82:,} moves ({32 * 82:,} ways to make those, times 82" in d.message


def test_a_procedure_done_is_bounded_by_the_values_it_is_given(tmp_path: Path) -> None:
    """`repeat: amount` in an effect is bounded where it is done: here with 10**14 - 1."""
    diags = house(tmp_path, "big-do", """\
flow:
  period_end:
    steps:
      - $add: true
        $after: period-end.rubble-wigs
        id: period-end.big
        text: Everyone gains Influence many times.
        source: [seed:000#end-of-the-period]
        steps:
          - {do: influence_gain, with: {amount: 99999999999999, noble: null}}
""")
    assert [d.code for d in diags] == ["cost-unbounded"], diags
    (d,) = diags
    assert d.span is not None and d.span.file.endswith("big-do.yaml")
    assert d.span.line == 17
    assert "units of work" in d.message and f"over the limit of {MAX_WORK:,}" in d.message


def test_the_engines_range_stops_at_the_work_a_step_may_do(engine: Any) -> None:
    # the compiler bounds `range(n)` by what it knows of n (a number with no declared max
    # taken as at most UNDECLARED_NUMBER); the engine holds a game that goes far beyond to
    # the work one step may do, at the step (tests/cli/test_backstop.py: where it is said)
    assert engine._RANGE_MOST == MAX_WORK
    assert engine._range(3) == [0, 1, 2] and len(engine._range(MAX_WORK)) == MAX_WORK
    with pytest.raises(ValueError, match="a step may go through"):
        engine._range(MAX_WORK + 1)
