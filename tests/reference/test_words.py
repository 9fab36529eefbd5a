"""Formulas in words a rulebook prints, by the shape of the expression, never by its names.

`words.formula_words` says `k * max(0, a - b)` as "k for each <b> you lack for <a>", `a + k` as
"<a> plus k", `a // k` as "1 for every full k in <a>", `max(k, a)` as "<a>, but never less than
k" and a comparison as "you have at least k <a>"; the nouns are the vocabulary's words and the
units the game's terms. Every pattern is checked on formulas the rules do not have, with other
numbers and other nouns (a vocabulary with other words), and through rules/ edits that change a
number or a formula: the words follow.
"""

from __future__ import annotations

import itertools
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from lisboa_rules.core.inputs import RULES_ANNOTATED_MD, RULES_MD
from lisboa_rules.emit.reference.words import (
    Sayer,
    Unsayable,
    formula_ir,
    formula_steps,
    formula_words,
)
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import INT
from lisboa_rules.model.types import Model
from lisboa_rules.pipeline import analyse, compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
ALGEBRA = ("×", "the larger of", "the smaller of", "÷", ": at least", ": more than")


@pytest.fixture(scope="module")
def m() -> Model:
    c, diags = analyse(RULES)
    assert c is not None, [d.message for d in diags]
    return c.base.model


def _vocab(m: Model) -> dict[str, str]:
    return {v.name: v.words for v in m.vocabulary}


@pytest.mark.parametrize(("n", "unit"), [(1, "1 wig"), (2, "2 wigs"), (7, "7 wigs")])
@pytest.mark.parametrize("order", ["k * max(0, cost - influence)",
                                   "max(cost - influence, 0) * k"])
def test_a_rate_per_missing_amount(m: Model, n: int, unit: str, order: str) -> None:
    """`k * max(0, a - b)`: "k for each <b> you lack for <a>"; a param `<x>_per_<y>` names the
    unit from the vocabulary (`wigs`) and the game's terms (one `wig`)."""
    source = order.replace("k", "wigs_per_influence")
    said = formula_words(m, source, {"wigs_per_influence": n})
    assert said == f"{unit} for each Influence you lack for the cost"
    # a param without a unit in its name: the bare number
    assert formula_words(m, order.replace("k", "rate"), {"rate": n}) == \
        f"{n} for each Influence you lack for the cost"


@pytest.mark.parametrize(("n", "money"), [(1, "1 real"), (2, "2 réis"), (5, "5 réis")])
@pytest.mark.parametrize("name", ["treasury_value", "influence_modifier", "players"])
def test_a_value_plus_a_number(m: Model, n: int, money: str, name: str) -> None:
    """`a + k` with the caller's unit (a price counts the game's money): "<a> plus k réis"."""
    said = formula_words(m, f"{name} + extra", {"extra": n}, "réis")
    assert said == f"{_vocab(m)[name]} plus {money}"
    assert formula_words(m, f"{name} - extra", {"extra": n}) == f"{_vocab(m)[name]} minus {n}"


@pytest.mark.parametrize("floor", [0, 1, 3])
@pytest.mark.parametrize("per", [1, 2])
def test_a_clamped_sum(m: Model, floor: int, per: int) -> None:
    said = formula_words(
        m, "max(minimum, influence_modifier + per_official * other_officials_in_office)",
        {"minimum": floor, "per_official": per})
    assert said == (f"the Influence modifier plus {per} for each of the other players' "
                    f"Officials in the Noble's office, but never less than {floor}")
    low = formula_words(m, "min(ships, cap)", {"cap": floor})
    assert low == f"your Ships, but never more than {floor}"


@pytest.mark.parametrize("n", [1, 4, 5, 10])
def test_a_rounded_down_share(m: Model, n: int) -> None:
    said = formula_words(m, "(reis + influence_reis) // reis_per_wig", {"reis_per_wig": n},
                         "wigs")
    assert said == (f"1 wig for every full {n} {'real' if n == 1 else 'réis'} in your réis and "
                    "the réis your Influence cashes into together")
    assert formula_words(m, "ships // k", {"k": n}) == f"1 for every full {n} in your Ships"


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize(("op", "word"), [(">=", "at least"), (">", "more than"),
                                          ("<=", "at most"), ("==", "exactly")])
def test_comparisons(m: Model, n: int, op: str, word: str) -> None:
    """A name the vocabulary words "your ..." reads "you have ...", another "... is ..."."""
    said = "any" if (op, n) == (">=", 1) else f"{word} {n}"  # at least 1 is any (no singular)
    assert formula_words(m, f"rubble_sets {op} {n}", {}) == \
        f"you have {said} completed rubble sets"
    assert formula_words(m, f"stores.books {op} k", {"k": n}) == \
        f"you have {said} Books stores"
    assert formula_words(m, f"treasury_value {op} {n}", {}).startswith("the Treasury value is ")
    assert formula_words(m, f"stores.gold + stores.cloth {op} {n}", {}) == \
        f"{word} {n} of your Gold stores and your Cloth stores together"
    assert formula_words(m, "completed_plans > 0", {}) == "you have any completed Plans"


@pytest.mark.parametrize("source", [
    "wigs_per_set * rubble_sets", "wigs_per_influence * max(0, cost - influence)",
    "max(minimum, influence_modifier + per_official * other_officials_in_office)",
    "(reis + influence_reis) // reis_per_wig", "rubble_sets >= 2", "measure > 0",
])
def test_no_algebra_in_the_words(m: Model, source: str) -> None:
    params = {"wigs_per_set": 3, "wigs_per_influence": 1, "minimum": 0, "per_official": 1,
              "reis_per_wig": 5}
    said = formula_words(m, source, params, "wigs")
    assert not any(a in said for a in ALGEBRA), said


def test_the_nouns_are_the_vocabularys(m: Model) -> None:
    """Other words in rules/vocabulary.yaml, other words in print: nothing is keyed on names."""
    other = replace(m, vocabulary=tuple(
        replace(v, words=f"your {v.name.replace('_', ' ')} counters") for v in m.vocabulary))
    assert formula_words(other, "k * max(0, cost - influence)", {"k": 2}) == \
        "2 for each influence counters you lack for your cost counters"
    assert formula_words(other, "rubble_sets >= 3", {}) == \
        "you have at least 3 rubble sets counters"


@pytest.mark.parametrize(("source", "params", "given", "sums"), [
    ("max(minimum, influence_modifier + per_official * other_officials_in_office)",
     {"minimum": 0, "per_official": 1}, {"influence_modifier": 1,
                                         "other_officials_in_office": 3}, "1 + 1 × 3 = 4"),
    ("max(minimum, influence_modifier + per_official * other_officials_in_office)",
     {"minimum": 0, "per_official": 2}, {"influence_modifier": -1,
                                         "other_officials_in_office": 0},
     "-1 + 2 × 0 = -1, raised to 0"),
    ("wigs_per_influence * max(0, cost - influence)", {"wigs_per_influence": 2},
     {"cost": 4, "influence": 1}, "2 × (4 − 1) = 6"),
    ("(reis + influence_reis) // reis_per_wig", {"reis_per_wig": 5},
     {"reis": 7, "influence_reis": 2}, "(7 + 2) ÷ 5, rounded down = 1"),
    ("treasury_value", {}, {"treasury_value": 4}, ""),  # nothing to compute: no "4 = 4"
    ("treasury_value + rubble_cost", {"rubble_cost": 2}, {"treasury_value": 4}, "4 + 2 = 6"),
])
def test_examples_show_the_arithmetic(m: Model, source: str, params: dict[str, int],
                                      given: dict[str, int], sums: str) -> None:
    assert formula_steps(m, source, params, given) == sums


# --- the words are said from the IR -------------------------------------------------------------
#
# A formula is lowered to the IR (`formula_ir`: a vocabulary name kept as a slot, a per-item
# name the entry of its item, a param its value from the rules data) and the Sayer reads the
# nodes; a node no formula holds is refused, never guessed at.

K = ir.Data(2, ("this", "params", "wigs_per_influence"))


def test_a_formula_is_lowered_keeping_its_names(m: Model) -> None:
    node = formula_ir(m, "stores.gold + wigs_per_influence * max(0, cost - influence)",
                      {"wigs_per_influence": 2})
    assert isinstance(node, ir.BinOp) and node.op == "+"
    assert node.left == ir.Index(ir.Slot("stores"), ir.Lit("gold"))
    assert isinstance(node.right, ir.BinOp)
    k, lack = node.right.left, node.right.right
    assert isinstance(k, ir.Data) and (k.value, k.path) == (K.value, K.path)
    assert lack == ir.Call("max", (ir.Lit(0), ir.BinOp("-", ir.Slot("cost"),
                                                        ir.Slot("influence"))))
    assert formula_ir(m, "stores.gold +", {}) is None  # no formula: nothing to say


@pytest.mark.parametrize(("node", "unit", "said"), [
    (ir.BinOp("*", K, ir.Call("max", (ir.Lit(0), ir.BinOp("-", ir.Slot("cost"),
                                                            ir.Slot("influence"))))),
     None, "2 wigs for each Influence you lack for the cost"),
    (ir.Compare(ir.Index(ir.Slot("stores"), ir.Lit("books")), ((">=", ir.Lit(2)),)), None,
     "you have at least 2 Books stores"),
    (ir.BinOp("+", ir.Slot("treasury_value"), ir.Lit(3)), "réis",
     "the Treasury value plus 3 réis"),
    (ir.BoolOp("or", (ir.Not(ir.Compare(ir.Slot("rubble_sets"), ((">", ir.Lit(0)),))),
                      ir.Lit(True))), None,
     "not (you have any completed rubble sets) or true"),
])
def test_hand_built_ir_is_said_in_words(m: Model, node: ir.Expr, unit: str | None,
                                        said: str) -> None:
    assert Sayer(m, {}, unit).say(node) == said


@pytest.mark.parametrize("source", [
    "wigs_per_set * rubble_sets", "wigs_per_influence * max(0, cost - influence)",
    "max(minimum, influence_modifier + per_official * other_officials_in_office)",
    "(reis + influence_reis) // reis_per_wig", "stores.gold + stores.cloth >= 2",
    "not (ships > 1) and min(ships, 2) == 2",
])
def test_formula_words_say_the_formulas_ir(m: Model, source: str) -> None:
    params = {"wigs_per_set": 3, "wigs_per_influence": 1, "minimum": 0, "per_official": 1,
              "reis_per_wig": 5}
    node = formula_ir(m, source, params)
    assert node is not None
    assert formula_words(m, source, params, "wigs") == Sayer(m, params, "wigs").say(node)


@pytest.mark.parametrize("node", [
    ir.PlayerField("reis", ir.Me()),  # the state: a formula reads it through a name
    ir.Measure("ships", ir.PlayerField("ships", ir.Me()), INT),  # the engine's node of a name
    ir.Local("c"),
    ir.Context("other_officials"),
    ir.Cost("visit-cost", ()),
    ir.Lit("text"),
    ir.Index(ir.ListOf((ir.Lit(1),)), ir.Lit(0)),
    ir.BinOp("%", ir.Slot("ships"), ir.Lit(2)),
    ir.Compare(ir.Lit(1), (("in", ir.ListOf((ir.Lit(1),))),)),
    ir.Call("len", (ir.Slot("ships"),)),
    ir.BinOp("+", ir.Slot("ships"), ir.GameField("favors")),  # inside a formula's node too
])
def test_the_sayer_refuses_a_node_no_formula_holds(m: Model, node: ir.Expr) -> None:
    with pytest.raises(Unsayable, match="no formula holds"):
        Sayer(m, {}).say(node)


def test_a_param_is_said_by_its_value(m: Model) -> None:
    """Wherever it stands: the name of a param is the rules data's, never the rulebook's."""
    assert formula_words(m, "k >= 2", {"k": 3}) == "3 is at least 2"
    # a param named as a vocabulary name is its value too, not the name's words
    assert formula_words(m, "cost >= 2", {"cost": 3}) == "3 is at least 2"
    assert formula_words(m, "2 * max(0, influence - cost)", {"cost": 3}) == \
        "2 for each 1 of your Influence minus 3, but never less than 0"


def _edited(tmp_path: Path, rel: str, old: str, new: str) -> dict[str, str]:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    path = target / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = compile_rules(target)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    return result.files


def _say_and_unsay(files: dict[str, str], wanted: list[str], gone: str) -> None:
    """Both editions of the reference say every `wanted` sentence and no longer say `gone`."""
    for page in (RULES_MD, RULES_ANNOTATED_MD):
        text = " ".join(files[page].replace("\\", "").split())
        for w in wanted:
            assert w in text, (page, w)
        assert gone not in text, (page, gone)


@pytest.mark.parametrize(("rel", "old", "new", "wanted", "gone"), [
    ("court.yaml", "params: {wigs_per_influence: 1}", "params: {wigs_per_influence: 2}",
     ["2 wigs for each Influence you lack for the cost", "Cost 4, Influence 1: 2 × (4 − 1) = 6"],
     "1 wig for each Influence you lack"),
    ("nobles.yaml", "params: {rubble_cost: 2}", "params: {rubble_cost: 3}",
     ["the Treasury value plus 3 réis"], "the Treasury value plus 2 réis"),
    ("scoring.yaml", "params: {reis_per_wig: 5}", "params: {reis_per_wig: 4}",
     ["1 wig for every full 4 réis in"], "1 wig for every full 5 réis in"),
    # a house-rule-style change of the formula itself: a surcharge on every visit
    ("court.yaml",
     "formula: max(minimum, influence_modifier + per_official * other_officials_in_office)\n"
     "    params: {minimum: 0, per_official: 1}",
     "formula: max(minimum, influence_modifier + per_official * other_officials_in_office "
     "+ surcharge)\n    params: {minimum: 0, per_official: 1, surcharge: 2}",
     ["Officials in the Noble's office plus 2, but never less than 0", "1 + 1 × 3 + 2 = 6"],
     "1 + 1 × 3 = 4"),
])
def test_a_changed_number_or_formula_changes_the_words(
        tmp_path: Path, rel: str, old: str, new: str, wanted: list[str], gone: str) -> None:
    _say_and_unsay(_edited(tmp_path, rel, old, new), wanted, gone)


def test_no_three_cards_in_a_row_share_a_title() -> None:
    """Card titles in the players' edition: never the same title twice in a row (the triggers
    are titled by what triggers them)."""
    files = compile_rules(RULES).files
    titles = [re.sub(r"<sup>.*?</sup>|\s*`[^`]*`$", "", t)  # marks and (annotated) ids aside
              for page in (RULES_MD, RULES_ANNOTATED_MD)
              for t in re.findall(r"^#### (.+)$", files[page], re.M)]
    assert titles
    repeats = [a for a, b in itertools.pairwise(titles) if a == b]
    assert not repeats, repeats


# Amounts in rule text: `{path|money}` / `{path|score}` print a number with the game's term for
# it (rules/game.yaml `terms`: `money` and `money_one`), singular for 1. The rule texts wrote
# the term after a number (`for {reward.reis} {game.terms.money_one}`), so a house rule giving
# 2 réis for a discard read "for 2 real".
@pytest.mark.parametrize(("rel", "old", "new", "wanted", "gone"), [
    ("court.yaml", "reward: {reis: 1}", "reward: {reis: 2}",
     ["discard a card from your hand for 2 réis.", "discarding a card gives 2 réis"], "2 real"),
    ("game.yaml", "  reis: 10\n", "  reis: 1\n",
     ["Each player starts with 1 real, 2 Influence", "Each player takes a colour, 1 real,"],
     "starts with 1 réis"),
    ("game.yaml", "wig_at_max: 1", "wig_at_max: 2", ["you gain 2 wigs, only once per"],
     "2 wig,"),
    ("scoring.yaml", "params: {reis_per_wig: 5}", "params: {reis_per_wig: 1}",
     ["score 1 wig per 1 real, rounded down"], "per 1 réis"),
    # the words are the data's: other terms, other words
    ("game.yaml", "  money: réis\n  money_one: real\n", "  money: ducats\n  money_one: ducat\n",
     ["discard a card from your hand for 1 ducat.", "Each player starts with 10 ducats,"],
     "for 1 real"),
])
def test_an_amount_is_worded_by_its_number(
        tmp_path: Path, rel: str, old: str, new: str, wanted: list[str], gone: str) -> None:
    _say_and_unsay(_edited(tmp_path, rel, old, new), wanted, gone)


@pytest.mark.parametrize(("placeholder", "message", "suggestion"), [
    # the filters: ordinal, count, chain and every term of game.terms (money, score, ...)
    ("{reward.reis|monney}", "unknown filter 'monney' (one of: ordinal, count, chain, money, "
     "score, ", "money"),
    ("{reward|money}", "placeholder '{reward|money}' does not name a printable value", None),
    # a list whose items have no name or id (the cards) printed as ", , , ...": refused
    ("{components.cards}", "placeholder '{components.cards}' does not name a printable value "
     "(its items have no names to print)", "{components.cards|count}"),
    ("{components.cards|chain}", "placeholder '{components.cards|chain}' does not name a "
     "printable value", "{components.cards|count}"),
])
def test_an_amount_filter_is_checked(
        tmp_path: Path, placeholder: str, message: str, suggestion: str | None) -> None:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    court = target / "court.yaml"
    court.write_text(court.read_text(encoding="utf-8").replace(
        "{reward.reis|money}", placeholder), encoding="utf-8")
    found = [d for d in compile_rules(target).diagnostics if d.is_error]
    assert [(d.code, d.message[:len(message)], d.suggestion) for d in found] == \
        [("unknown-placeholder", message, suggestion)]
    assert found[0].span is not None and found[0].span.file.endswith("court.yaml")


def test_an_effects_amount_is_counted_in_the_games_terms() -> None:
    # `{rubble: 1}` printed "Rubble: 1" on every card that gives a rubble cube, `{influence_gain:
    # 1}` "Influence gain: 1", a State action's effects "Royal favor: 1" and "Cardinal: 1", and
    # the Effects chapter headed one "Royal favor": the effect's id, not the game's words
    page = compile_rules(RULES).files[RULES_MD]
    card = page[page.index('<a id="card-2">'):].split("\n", 1)[0]
    assert "| 1 rubble cube | 2 réis |" in card
    card = page[page.index('<a id="card-3">'):].split("\n", 1)[0]
    assert "| 1 Influence gain |" in card
    for said in ("**Effects:** 1 Royal Favor tile",
                 "**Effects:** 2 Officials into the Noble's office",
                 "**Effects:** 1 space of the Cardinal's circuit", "#### Royal Favor\n"):
        assert said in page, said
    for wrong in ("Rubble: 1", "Influence gain: 1", "Royal favor", "Cardinal: 1",
                  "Officials to office: 2"):
        assert wrong not in page, wrong


def test_a_data_keys_label_spells_the_games_words_as_its_terms_do() -> None:
    # a variant's "Numbers and lists" printed "Setup › Neutral officials per office", the
    # game's Officials in lower case
    from lisboa_rules.emit.reference.words import DataWords

    result = compile_rules(RULES)
    assert result.compiled is not None
    dw = DataWords(result.compiled.base.model)
    assert dw.key_label("neutral_officials_per_office") == "Neutral Officials per office"
    assert dw.key_label("reis_icons") == "Réis icons"
    assert dw.key_label("rubble_set_markers") == "Rubble set markers"  # spelt both ways: kept
    assert "Neutral Officials per office" in result.files[RULES_MD]
