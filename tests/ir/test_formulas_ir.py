"""The formulas of the rules data (costs, scores, conditions: the formula language) go through
the IR on their way into the engine: a formula is lowered to nodes over the vocabulary's
(`emit/engine/view.py` `lower`), the engine's back end prints those nodes (`pyprint`), and what
the emitter decides about a formula (does it read a context value, which measure's function it
calls, does it hand the player on) it finds from the nodes, never from the printed code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.emit.engine.procs import Vocab
from lisboa_rules.emit.engine.view import _Functions, lower, reads_context, show_code
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.show import show
from lisboa_rules.ir.types import INT
from lisboa_rules.model.procs import Tables, state_scope, vocab_nodes
from lisboa_rules.pyprint import expr as pyprint

ENGINE = (Path(__file__).resolve().parents[2] / "generated" / "lisboa_engine.py").read_text()


@pytest.fixture(scope="module")
def model(compiled: Any) -> Any:
    return compiled.base.model


@pytest.fixture(scope="module")
def vocab(model: Any) -> Vocab:
    """The base game's vocabulary as the engine's emitter holds it."""
    scope = state_scope(model.state, model.data, model.procs.measures, Tables())
    return Vocab(vocab_nodes(model.data["vocabulary"]["names"], scope), names_of(scope))


def _fns(vocab: Vocab) -> _Functions:
    fns = _Functions()
    fns.vocab = vocab
    return fns


def _source(model: Any, sid: str) -> Any:
    return next(s for s in model.scoring if s.id == sid)


def test_a_formulas_ir_is_what_the_engine_prints(model: Any, vocab: Vocab) -> None:
    s = _source(model, "score.influence")  # (reis + influence_reis) // reis_per_wig
    node = lower(s.formula, s.params, vocab)
    # a param is its number; a name is the vocabulary's node (a measure, by its id)
    assert show(node) == "(// (+ (measure reis) (measure influence_reis)) 5)"
    code = pyprint.bare(pyprint.expr(node, vocab.names))
    assert code == "(p.reis + _m_influence_reis(g, p)) // 5"
    assert f"    return {code}\n" in ENGINE  # the formula's function
    assert f"        w3 = {code}\n" in ENGINE  # inlined in the final totals

    cost = next(c for c in model.costs if c.id == "visit-cost")
    node = lower(cost.formula, cost.params, vocab)
    assert f"    return {pyprint.bare(pyprint.expr(node, vocab.names))}\n" in ENGINE


def test_a_per_item_names_item_is_put_in_its_slot(model: Any, vocab: Vocab) -> None:
    assert ir.Slot("item") in ir.walk(vocab.nodes["stores"][1])
    s = _source(model, "score.stores")
    gold = next(g for g in s.groups if g.id == "gold")  # stores.gold
    node = lower(gold.measure, s.params, vocab)
    assert ir.Slot("item") not in ir.walk(node)
    assert show(node) == '(at player.stores "gold")'
    assert _fns(vocab).inline(node) == 'p.stores["gold"]'
    assert f'    ms0_0 = [{_fns(vocab).inline(node)} for p in players]' in ENGINE


def test_a_formula_reading_a_context_value_is_found_from_its_nodes(
        model: Any, vocab: Vocab) -> None:
    fns = _fns(vocab)
    cost = next(c for c in model.costs if c.id == "visit-cost")
    node = lower(cost.formula, cost.params, vocab)
    assert reads_context(node)
    assert ir.Context("other_officials") in ir.walk(node)
    assert fns.inline(node) is None  # only its own function is given the context `x`
    ships = lower(_source(model, "score.ships").formula, (), vocab)
    assert not reads_context(ships)
    assert fns.inline(ships) == "sum(p.ships)"
    # a majority's eligibility reads the count, which the scorer holds in `m`
    stores = _source(model, "score.stores")  # eligible: measure > 0
    node = lower(stores.eligible, stores.params, vocab)
    given: dict[ir.Expr, str] = {vocab.nodes["measure"][1]: "m"}
    assert reads_context(node) and not reads_context(node, given)
    assert fns.inline(node, given) == "m > 0"
    assert not pyprint.reads_state(node, pyprint.holding(vocab.names, given))
    assert "    ok0_0 = [m > 0 for m in ms0_0]\n" in ENGINE
    officials = _source(model, "score.officials")  # eligible: completed_plans > 0
    node = lower(officials.eligible, officials.params, vocab)
    assert not reads_context(node, given)
    assert pyprint.reads_state(node, vocab.names)


def test_a_measures_call_is_found_from_the_nodes_and_made_once(
        model: Any, vocab: Vocab) -> None:
    s = _source(model, "score.influence")
    node = lower(s.formula, s.params, vocab)
    calls = pyprint.calls(node, vocab.names)
    assert [c.id for c in calls] == ["influence_reis"]
    held: dict[ir.Expr, str] = {calls[0]: "c3_0"}
    assert _fns(vocab).inline(node, held) == "(p.reis + c3_0) // 5"
    shown: list[str] = []
    assert show_code(s.formula, s.params, vocab, shown, held) == \
        'f"({p.reis} + {c3_0}) ÷ 5, rounded down"'
    assert shown == ["p.reis", "c3_0"]
    assert "        c3_0 = _m_influence_reis(g, p)\n        w3 = (p.reis + c3_0) // 5\n" in ENGINE


def test_the_score_track_is_read_from_the_nodes() -> None:
    """A tie-breaker reads the final total in place of the score track, unless it hands the
    player on (to a measure's function, which may read the track)."""
    track = ir.PlayerField("wigs", ir.Me())
    total: dict[ir.Expr, str] = {track: "w"}
    short = ir.Measure("short", ir.BinOp("+", track, ir.PlayerField("reis", ir.Me())), INT)
    names = pyprint.Names(measure=lambda mid, t, code: f"_m_{mid}")
    assert not pyprint.hands_on_player(short, names)
    assert pyprint.bare(pyprint.expr(short, pyprint.holding(names, total))) == "w + p.reis"
    looping = ir.Measure("loop", ir.Call("sum", (ir.Comp(
        ir.Local("c"), "c", ir.Keys(ir.PlayerField("hand", ir.Me()), False), ()),)), INT)
    assert pyprint.is_function(looping, names)
    assert pyprint.hands_on_player(ir.BinOp("+", track, looping), names)
    assert pyprint.expr(looping, pyprint.holding(names, total)) == "_m_loop(g, p)"
    assert pyprint.hands_on_player(ir.Me(), names)


def test_substitute_replaces_equal_nodes_and_keeps_the_rest() -> None:
    node = ir.BinOp("+", ir.Slot("item"), ir.Call("max", (ir.Slot("item"), ir.Lit(1))))
    got = ir.substitute(node, {ir.Slot("item"): ir.Lit(3)})
    assert got == ir.BinOp("+", ir.Lit(3), ir.Call("max", (ir.Lit(3), ir.Lit(1))))
    unchanged = ir.Compare(ir.PlayerField("reis", ir.Me()), ((">", ir.Lit(2)),))
    assert ir.substitute(unchanged, {ir.Slot("item"): ir.Lit(3)}) is unchanged
