"""One type per name (issue 33): a let or a loop that binds a name a procedure or an action
bound before to a value of another type is refused where it is written (`expr-type`), since
the engine holds the name in one variable of its function; once, not again at each later use.
A value that may be None may follow one that may be None, and a name an `if` narrowed keeps its
type."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import steps as st
from lisboa_rules.lang import typed
from lisboa_rules.lang.actions import Action, ActionChecker
from lisboa_rules.lang.typed import INT, Name, Scope, VType

CARD = VType("card")


def _scope() -> Scope:
    def field(name: str, t: VType) -> Name:
        return Name(t, ir.PlayerField(name, ir.Me()), 0, None, "player." + name)

    return Scope(locals={"seat": Name(VType("seat"), ir.Seat())},
                 player={"reis": field("reis", INT), "hand": field("hand", typed.list_of(CARD))},
                 kinds=frozenset({"card"}))


def _problems(raw: list[Any], params: tuple[st.Param, ...] = ()) -> list[st.StepProblem]:
    problems: list[st.StepProblem] = []
    steps = st.parse_steps(raw, ("effects", "x", "steps"), problems)
    assert not problems
    checker = st.StepChecker(_scope(), {}, {})
    checker.check(st.Procedure("x", params, steps, "rule.x"))
    return checker.problems


@pytest.mark.parametrize("raw", [
    [{"let": {"x": "1"}}, {"let": {"x": "hand"}}, {"gain": {"reis": "len(x)"}}],
    [{"let": {"c": "1"}}, {"for_each": {"as": "c", "in": "hand"}, "do": [{"gain": {"reis": 1}}]}],
    [{"let": {"x": "1"}}, {"if": "reis > 0", "then": [{"let": {"x": "first(hand)"}}]}],
    [{"let": {"x": "1"}}, {"let": {"x": "first(hand) if len(hand) > 0 else None"}}],
])
def test_a_name_bound_again_to_another_type_is_refused_where_it_is_written(
        raw: list[Any]) -> None:
    (problem,) = _problems(raw)
    assert problem.code == "expr-type"
    assert "keeps one type in a procedure" in problem.message
    assert problem.path[3] == 1 or problem.path[4:6] == ("then", 0)


def test_a_parameter_keeps_its_type_too() -> None:
    (problem,) = _problems([{"let": {"n": "hand"}}], (st.Param("n", INT),))
    assert problem.code == "expr-type" and "'n' is a number" in problem.message


@pytest.mark.parametrize("raw", [
    [{"let": {"x": "1"}}, {"let": {"x": "x + 1"}}],
    [{"let": {"x": "first(hand) if len(hand) > 0 else None"}},
     {"if": "x is not None", "then": [{"let": {"x": "x"}}]}],
    [{"let": {"x": "first(hand) if len(hand) > 0 else None"}},
     {"let": {"x": "first(hand) if reis > 0 else None"}}],
    [{"for_each": {"as": "c", "in": "hand"}, "do": [{"gain": {"reis": 1}}]},
     {"for_each": {"as": "c", "in": "hand"}, "do": [{"gain": {"reis": 1}}]}],
])
def test_the_same_type_again_is_no_problem(raw: list[Any]) -> None:
    assert _problems(raw) == []


def test_an_action_s_branches_share_its_names() -> None:
    problems: list[st.StepProblem] = []
    steps = st.parse_steps([
        {"choose": {"as": "go", "from": "[False, True]"}},
        {"if": "go", "then": [{"let": {"y": "1"}}, {"require": "reis > y"}],
         "else": [{"let": {"y": "hand"}}, {"require": "len(y) > 0"}]}],
        ("court", "actions", 0, "steps"), problems)
    checker = ActionChecker(_scope(), {}, {})
    checker.check_action(Action("k", "main", steps, "rule.k"))
    assert [p.code for p in checker.problems] == ["expr-type"]
