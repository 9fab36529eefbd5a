"""The move generators' constants: a choice from a constant without repeats goes through it
as it is (with repeats, each item still once), and a let that depends only on such a choice
reads a table made at compile time, with the value the code gives for each item, or stays code
(it reads the state, it fails for an item, it computes big numbers or sequences)."""

from __future__ import annotations

from typing import Any

import pytest

from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import typed
from lisboa_rules.lang.actions import ActionCompiler
from lisboa_rules.lang.typed import Name, Scope


def _compiler(tables: dict[str, dict[Any, Any]], constants: dict[str, str]) -> ActionCompiler:
    return ActionCompiler(
        Scope(),
        {},
        {},
        lambda q: q,
        lambda path: "rules/x.yaml:1",
        table_values=tables,
        constants=constants,
    )


@pytest.mark.parametrize(
    ("code", "constants", "tables", "distinct"),
    [
        ("_K1", {'("a", "b", "c")': "_K1"}, {}, True),
        ("_K1", {'("a", "b", "a")': "_K1"}, {}, False),
        ("_K2", {'("a", "b")': "_K1", "(1, 2, 2)": "_K2"}, {}, False),
        ('("x", "y")', {}, {}, True),
        ('("x", "x")', {}, {}, False),
        ("_T_k_col[v_a]", {}, {"_T_k_col": {"m": ["a", "b"], "n": ["c"]}}, True),
        ("_T_k_col[v_a]", {}, {"_T_k_col": {"m": ["a", "b"], "n": ["c", "c"]}}, False),
        ("_T_k_col[v_a]", {}, {"_T_k_col": {"m": [["a"], ["a"]]}}, False),  # not hashable
        ("_T_k_col[v_a]", {}, {"_T_k_col": {"m": "ab"}}, False),  # not a list
        ("_T_other[v_a]", {}, {"_T_k_col": {"m": ["a"]}}, False),  # a table it does not know
        ("p.hand", {}, {}, False),
    ],
)
def test_a_choice_goes_through_a_constant_as_it_is_only_without_repeats(
    code: str, constants: dict[str, str], tables: dict[str, dict[Any, Any]], distinct: bool
) -> None:
    assert _compiler(tables, constants)._distinct(code, False) is distinct


TABLE = {"m": ["a", "b"], "n": ["c"]}
FIRST = 'next(v_n for v_n in ("m", "n") if (v_sa in _T_k_col[v_n]))'


@pytest.mark.parametrize(
    ("code", "values", "want"),
    [
        (FIRST, ("a", "b", "c"), {"a": "m", "b": "m", "c": "n"}),
        (f"len(_T_k_col[{FIRST}])", ("a", "c"), {"a": 2, "c": 1}),
        ("sorted(_K1)[0] + v_sa", ("a", "b"), {"a": "xa", "b": "xb"}),
        ("tuple(x for x in _K1 if x != v_sa)", ("x", "y"), {"x": ("z",), "y": ("z", "x")}),
    ],
)
def test_a_let_of_a_constant_choice_reads_a_table_made_at_compile_time(
    code: str, values: tuple[Any, ...], want: dict[Any, Any]
) -> None:
    tables: dict[str, dict[Any, Any]] = {"_T_k_col": TABLE}
    comp = _compiler(tables, {'("z", "x")': "_K1"})
    bound = Name(typed.TEXT, ir.Local("sa"))
    comp.domains["sa"] = (values, bound)
    scope = Scope(locals={"sa": bound})
    got = comp._folded("noble", code, scope)
    assert got is not None
    name = got.removesuffix("[v_sa]")
    assert tables[name] == want
    # the same values again share the table; other values get one of their own
    assert comp._folded("noble", code, scope) == got
    comp.domains["sa"] = (values[:1], bound)
    other = comp._folded("noble", code, scope)
    assert other is not None and other != got


@pytest.mark.parametrize(
    ("code", "values"),
    [
        ("p.goods[v_sa]", ("a",)),  # reads the state
        ("g.blocked.count(v_sa)", ("a",)),
        (FIRST, ("a", "zz")),  # fails for an item (no first)
        ("_T_k_col[v_sa]", ("m", "q")),  # a missing key
        ("len(v_sa) ** 99", ("a",)),  # a power
        ("(v_sa,) * 10", ("a",)),  # a repetition
        ("len(v_sa) << 40", ("a",)),
        ("sum(range(len(v_sa)))", ("a",)),  # range is not offered
        ("_T_k_col[v_sa] if v_sa else v_other", ("m",)),  # a second choice
        ("[v_sa]", (None, "m")),  # None (an optional choice) is no key
        ("{v_sa: 1}", ("m",)),  # a dict is no constant of a table
    ],
)
def test_a_let_that_is_not_a_constant_of_the_choice_stays_code(
    code: str, values: tuple[Any, ...]
) -> None:
    tables: dict[str, dict[Any, Any]] = {"_T_k_col": TABLE}
    comp = _compiler(tables, {})
    bound = Name(typed.TEXT, ir.Local("sa"))
    comp.domains["sa"] = (values, bound)
    scope = Scope(locals={"sa": bound, "other": Name(typed.TEXT, ir.Local("other"))})
    assert comp._folded("noble", code, scope) is None
    assert list(tables) == ["_T_k_col"]


def test_a_let_of_a_choice_bound_again_stays_code() -> None:
    """The name chosen from constants was bound again since (a let, a narrowing): the values
    it may have are not known any more."""
    comp = _compiler({"_T_k_col": TABLE}, {})
    comp.domains["sa"] = (("a",), Name(typed.TEXT, ir.Local("sa")))
    scope = Scope(locals={"sa": Name(typed.TEXT, ir.Local("sa"))})  # equal, but another binding
    assert comp._folded("noble", FIRST, scope) is None
