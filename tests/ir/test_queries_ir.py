"""The engine's public queries and its checks of a state are IR in the model: a compiled query
holds its types (`VType`) and its value (an IR expression), the invariants and the saved-game
checks are IR statements (`ir/program.py`), none of them Python; the Python back end
(`emit/engine/queries.py`, `emit/engine/checks.py`) prints from them the functions the engine
of generated/ has."""

from __future__ import annotations

import dataclasses
import re
import shutil
import sys
import types
from pathlib import Path
from typing import Any

from lisboa_rules import pipeline
from lisboa_rules.core.inputs import ENGINE
from lisboa_rules.emit.engine import checks as C
from lisboa_rules.emit.engine.names import names_of
from lisboa_rules.emit.engine.pyfmt import wrap_line
from lisboa_rules.emit.engine.queries import python_queries, query_view
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import program as prog
from lisboa_rules.ir.show import show
from lisboa_rules.ir.types import BOOL, INT, TEXT, VType
from lisboa_rules.lang import typed
from lisboa_rules.model.procs import Tables, state_scope, with_formulas
from lisboa_rules.model.queries import Query, QueryArg, compile_queries
from lisboa_rules.model.state_invariants import compile_checks, compile_invariants, measures_of

ROOT = Path(__file__).resolve().parents[2]
GENERATED = (ROOT / "generated" / "lisboa_engine.py").read_text(encoding="utf-8")


def _scope(model: Any, tables: Tables) -> typed.Scope:
    base = state_scope(model.state, model.data, model.procs.measures, tables)
    return with_formulas(base, model.data["vocabulary"]["names"])


def _queries(model: Any, scope: typed.Scope, rows: Any = None) -> tuple[list[Query], list[Any]]:
    if rows is None:
        rows = model.data["vocabulary"].get("queries") or []
    return compile_queries(rows, model.state, scope)


def _no_python(obj: Any) -> None:
    """A model object holds no code: no field named so, and no text but names and words."""
    for f in dataclasses.fields(obj):
        assert f.name not in ("code", "annotation", "of"), (type(obj).__name__, f.name)


# ---- queries -----------------------------------------------------------------------------


SHOWN = {
    "visit_cost": ("player", INT, "(cost visit-cost other_officials=(- (sum (values (at "
                   "game.offices noble_id))) (at (at game.offices noble_id) player.color "
                   "else 0)))"),
    "wigs_due": ("player", INT, "(cost wigs-for-influence cost=cost)"),
    "can_pay_reis": ("p", BOOL, "(>= (+ player.reis (measure influence_reis)) amount)"),
    "noble_name": (None, TEXT, "(column noble.name noble_id)"),
    "warehouse_size": ("seat", INT, "(+ rules.game.warehouse.base_size (* "
                       "rules.game.warehouse.per_rubble_set player.rubble_sets))"),
    "influence_gain": ("seat", INT, "(measure influence_per_gain)"),
}


def test_a_compiled_query_holds_ir_not_python(compiled: Any) -> None:
    m = compiled.base.model
    queries, problems = _queries(m, _scope(m, Tables()))
    assert not problems
    assert {q.name for q in queries} == set(SHOWN)
    for q in queries:
        _no_python(q)
        for a in q.args:
            _no_python(a)
            assert isinstance(a.type, VType)
        acting, returns, shown = SHOWN[q.name]
        assert (q.acting, q.returns, show(q.value)) == (acting, returns, shown)
    visit = next(q for q in queries if q.name == "visit_cost")
    assert visit.args == (QueryArg("player", "seat", "a seat", VType("seat")),
                          QueryArg("noble_id", "noble", "a Noble", VType("noble"),
                                   visit.args[1].ids))
    assert visit.args[1].ids == ("manuel", "marquis", "king")


def test_the_printed_queries_are_the_engine_s_functions(compiled: Any) -> None:
    tables = Tables()  # shared by the rule sets, as the build shares them
    per_ruleset, keys = [], []
    for rs in compiled.rulesets:
        scope = _scope(rs.model, tables)
        queries, problems = _queries(rs.model, scope)
        assert not problems
        per_ruleset.append(python_queries(queries, names_of(scope, tables)))
        keys.append(rs.key)
    view = query_view(per_ruleset, keys)
    assert view.names == list(SHOWN)
    for function in view.functions:
        assert function in GENERATED, function
    for name, value in view.tables:
        assert f"{name} = {value}\n" in GENERATED
    # a query a variant changes dispatches to its rule set's function
    assert any(f.startswith("def _query_noble_name_2(g: Game, noble_id: str) -> str:")
               for f in view.functions)


def _row(name: str, value: str, args: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"name": name, "args": args or [], "value": value, "words": "A query."}


def test_a_query_without_a_player_reads_the_game_alone(compiled: Any) -> None:
    """Whether a value reads a player is read on the IR (a player's field, their seat, a cost,
    a measure that does), not on printed code: a query with no seat or player may read a
    measure of the game, which the printer then writes out in the query rather than call it
    as a function of the game and a player."""
    m = compiled.base.model
    tables = Tables()
    scope = _scope(m, tables)
    rows = [_row("piles_empty", "empty_display_piles"), _row("treasury", "treasury_value"),
            _row("my_reis", "reis"), _row("cost_now", "cost('wigs-for-influence', cost=1)"),
            _row("my_gain", "influence_per_gain + 1")]
    queries, problems = _queries(m, scope, rows)
    assert [q.name for q in queries] == ["piles_empty", "treasury"]
    assert [p.message for p in problems] == [
        f"query '{n}' reads a player's state, but it has no seat or player argument: give it "
        "one" for n in ("my_reis", "cost_now", "my_gain")]
    assert all(p.code == "unknown-name" and p.path[-1] == "value" for p in problems)
    printed = python_queries(queries, names_of(scope, tables))
    assert [(q.acting, q.code) for q in printed] == [
        (None, "len([v_q for v_q in _K1 if (len(g.piles[v_q]) == 0)])"),
        (None, "(1, 2, 3, 4, 5, 6)[g.treasury]")]
    with_player = python_queries(_queries(m, scope, [_row(
        "piles_seen", "empty_display_piles", [{"name": "seat", "kind": "seat"}])])[0],
        names_of(scope, tables))
    assert [(q.acting, q.code) for q in with_player] == [
        ("p = g.players[seat]", "_m_empty_display_piles(g, p)")]


HOUSE = """\
kind: variant
id: house-game-queries
title: Questions about the game
applies: chosen
text: The engine answers a question about the game alone.
source: [seed:001#spending-influence-to-visit]
changes:
  vocabulary:
    queries:
      - $add: true
        name: piles_empty
        args: []
        value: empty_display_piles
        words: The display piles that are empty.
"""


def test_a_query_of_the_game_alone_runs_in_the_engine(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "rules", project / "rules")
    (project / "rules" / "variants" / "house-game-queries.yaml").write_text(HOUSE, "utf-8")
    result = pipeline.compile_rules(project / "rules", ("house-game-queries",))
    errors = [d for d in result.diagnostics if d.is_error]
    assert not errors, "; ".join(f"{d.span}: {d.code}: {d.message}" for d in errors)
    module = types.ModuleType("_game_queries_engine")
    sys.modules[module.__name__] = module
    try:
        exec(compile(result.files[ENGINE], "<game-queries>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    g = module.new_game(3)
    assert module.piles_empty(g) == len([k for k in g.piles if not g.piles[k]])
    first = next(iter(g.piles))
    g.piles[first] = []
    assert module.piles_empty(g) == len([k for k in g.piles if not g.piles[k]]) >= 1


# ---- checks of a state -------------------------------------------------------------------


def _walk_stmts(body: tuple[prog.Stmt, ...]) -> list[prog.Stmt]:
    out: list[prog.Stmt] = []
    for s in body:
        out.append(s)
        if isinstance(s, prog.EachPlayer):
            out += s.body
    return out


def test_the_invariants_are_ir_statements(compiled: Any) -> None:
    m = compiled.base.model
    scope = state_scope(m.state, m.data, measures_of(m.data), Tables())
    checks, problems = compile_invariants(m.state, scope, lambda inv: inv.id)
    assert not problems
    assert [type(s).__name__ for s in checks.body] == [
        "EachPlayer", "Conserved", "Conserved", "Conserved", "Conserved", "Counted"]
    for s in _walk_stmts(checks.body):
        _no_python(s)
        for e in prog.expressions(s):
            assert isinstance(e, ir.Lit | ir.Data | ir.Local | ir.PlayerField | ir.GameField
                              | ir.BoolOp | ir.Compare | ir.Call | ir.BinOp | ir.Comp
                              | ir.Values | ir.Keys | ir.Get | ir.Index | ir.Not | ir.Seat
                              | ir.Measure | ir.Column | ir.Cond | ir.Me)
    first = checks.body[0]
    assert isinstance(first, prog.EachPlayer)
    money = first.body[0]
    assert money.note == "no-negative-money"
    assert show(money.test) == "(and (>= player.reis 0) (>= player.wigs 0))"
    assert [p if isinstance(p, str) else (show(p.value), p.text) for p in money.words] == [
        ("player.color", True), ": negative ", ("rules.game.terms.money", True), " or ",
        ("rules.game.terms.score", True)]
    cards = checks.body[1]
    assert isinstance(cards, prog.Conserved) and cards.kind == "card"
    assert cards.ids == tuple(sorted(cards.ids))
    clergy = checks.body[4]  # the clergy tiles: on the Church track, in the bag, given up, held
    assert isinstance(clergy, prog.Conserved) and clergy.kind == "clergy"
    favors = checks.body[5]
    assert isinstance(favors, prog.Counted)
    assert (favors.kind, show(favors.total)) == ("noble", "(len game.players)")
    assert favors.zones == (prog.Zone("game", "favors", True),
                            prog.Zone("player", "royal_favors", False))
    assert [ls.kind for ls in checks.listers] == ["card", "decree", "plan", "clergy"]
    assert checks.listers[0].of == INT and checks.listers[1].of == TEXT


def _without_notes(code: str) -> str:
    code = re.sub(r"\n *# rules/state\.yaml:\d+ [\w-]+", "", code)
    return re.sub(r"_K\d+", "_K", code)  # a long constant's name: the order it was named in


def test_the_printed_checks_are_the_engine_s(compiled: Any) -> None:
    m = compiled.base.model
    tables = Tables()
    scope = state_scope(m.state, m.data, measures_of(m.data), tables)
    names = names_of(scope, tables)
    invariants, _ = compile_invariants(m.state, scope)
    for ls in invariants.listers:
        lines = C.lister(ls, C.lister_stem(ls.kind))
        assert "\n".join(w for line in lines for w in wrap_line(line)) in GENERATED
    body = C.invariants(invariants, names, C.lister_stem, lambda stem, values: stem)
    check = ["def _invariants(g: Game) -> list[str]:",
             '    """What is wrong with a state: the invariants of rules/state.yaml that '
             'fail, in order."""', "    problems: list[str] = []", *body, "    return problems"]
    assert "\n".join(w for line in check for w in wrap_line(line)) in _without_notes(GENERATED)
    saved, _ = compile_checks(m.state, scope)
    assert isinstance(saved.body[0], prog.SeatOf) and not saved.listers
    for s in _walk_stmts(saved.body):
        _no_python(s)
    ships = next(h for s in saved.body if isinstance(s, prog.EachPlayer) for h in s.body
                 if h.at is not None and any(isinstance(p, prog.Shown) for p in h.at))
    assert [p if isinstance(p, str) else show(p.value) for p in ships.at or ()] == [
        "$.players[", "seat", "].ships"]
    lines = ["def _state_checks(g: Game) -> tuple[str, str] | None:",
             '    """Why a saved game cannot be loaded: the JSON path and the words of the',
             '    first check of rules/state.yaml that fails, else None."""',
             *C.state_checks(saved, names), "    return None"]
    assert _without_notes("\n".join(w for line in lines for w in wrap_line(line))) \
        in _without_notes(GENERATED)


def test_a_check_over_the_game_that_reads_the_player_is_refused(compiled: Any) -> None:
    m = compiled.base.model
    scope = state_scope(m.state, m.data, measures_of(m.data), Tables())
    decl = m.state
    bad = dataclasses.replace(decl.checks[0], each=None, holds="reis >= 0", path=("checks", 0))
    _, problems = compile_checks(dataclasses.replace(decl, checks=(bad,)), scope)
    assert [(p.code, p.path) for p in problems] == [("expr-type", ("checks", 0, "holds"))]
    assert "reads the acting player (in 'reis >= 0')" in problems[0].message
