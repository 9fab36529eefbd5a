"""Every kind of step has, end to end: a statement of the IR it is checked into
(lang/steps.py, lang/actions.py -> ir/stmt.py), a printer case (the Python back end prints it,
emit/engine/lower.py and moves.py), an interpreter case (tools/interp_steps.py gives each
statement class its meaning) and words (the reference prints the step's own `text:`); and a
dispatch over the statements that forgets a class fails the type check (each ends in
`assert_never`: shown by running mypy on dispatches that leave one out)."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path
from typing import Any

import optional
import pytest

from lisboa_rules.emit.engine.moves import MovePrinter
from lisboa_rules.emit.engine.names import EngineNames
from lisboa_rules.ir import stmt as S
from lisboa_rules.lang import steps as st
from lisboa_rules.lang.actions import Action, ActionChecker
from lisboa_rules.model.checked import check_steps
from lisboa_rules.model.procs import LocatedChecker, Tables

ROOT = Path(__file__).resolve().parents[2]
WHERE = "rules/x.yaml:1"

# a step of each kind, in a procedure (with a Noble parameter `noble`) or an action, and the
# statement classes of the IR it is checked into there
PROC: dict[str, tuple[dict[str, Any], set[type]]] = {
    "gain": ({"gain": {"reis": 1}}, {S.Change}),
    "set": ({"set": {"reis": 2}}, {S.Change}),
    "let": ({"let": {"x": "reis + 1"}}, {S.Let}),
    "move": ({"move": {"item": "first(hand)", "from": "hand"}}, {S.MoveItem}),
    "drop": ({"drop": "markers[noble]"}, {S.Drop}),
    "require": ({"require": "reis > 0", "reason": "you have no réis"}, {S.Require}),
    "choose": ({"choose": {"as": "card", "from": "hand"}}, {S.Choose}),
    "if": ({"if": "reis > 0", "then": [{"gain": {"reis": 1}}]}, {S.If}),
    "for_each": ({"for_each": {"as": "c", "in": "hand"}, "do": [{"gain": {"reis": 1}}]},
                 {S.ForEach}),
    "repeat": ({"repeat": 2, "do": [{"gain": {"reis": 1}}]}, {S.Repeat}),
    "do": ({"do": "pay-reis", "with": {"amount": 1}}, {S.Do}),
    "raise": ({"raise": "no-such-event"}, {S.Raise}),
    "shuffle": ({"shuffle": "hand"}, {S.Shuffle}),
}
ACTION: dict[str, tuple[list[dict[str, Any]], set[type]]] = {
    "apply": ([{"choose": {"as": "noble", "from": "game.favors"}},
               {"choose": {"as": "state_action", "from": "noble.state_actions"}},
               {"apply": {"effects": "state_action.effects", "noble": "noble"}}],
              {S.ApplyChoose}),
}


@pytest.fixture(scope="module")
def rules(compiled: Any) -> Any:
    m = compiled.base.model
    tables = Tables()
    return m, tables, check_steps(m, tables)


def _required(checked: Any) -> dict[str, str]:
    """A value for each field a new player must be given: the first player's (a field of a
    player of the game, of the same type)."""
    return {name: f"game.players[0].{name}" for name in sorted(checked.scope.required)}


def _proc(rules: Any, kind: str, raw: dict[str, Any],
          where: tuple[str | int, ...] = ("effects", "effects", 0, "steps")
          ) -> tuple[S.Proc, list[Any]]:
    m, tables, checked = rules
    problems: list[st.StepProblem] = []
    step = {**raw, "id": f"k-{kind}", "text": f"Words of the {kind} step."}
    steps = st.parse_steps([step], where, problems)
    assert not problems
    proc = st.Procedure(f"k-{kind}", (st.Param("noble", st.VType("noble")),), steps, "rule.k")
    checker = LocatedChecker(checked.scope, m.procs.procs, m.procs.hooks, tables.values,
                             m.procs.effects)
    return checker.check(proc), checker.problems


def _printer(rules: Any, checked_procs: dict[str, S.Proc]) -> MovePrinter:
    m, tables, checked = rules
    engine = EngineNames(tables)
    return MovePrinter(engine.names(checked.scope), lambda q: q.replace("-", "_"),
                       lambda path: WHERE, {**checked.procs, **checked_procs}, engine.values,
                       effect_ids=m.procs.effects, table_name=engine.table)


def _classes(items: tuple[Any, ...]) -> set[type]:
    return {type(x) for x in items}


def test_every_kind_of_step_has_a_sample_here() -> None:
    assert {*PROC, *ACTION, "new"} == set(st.KINDS)


@pytest.mark.parametrize("kind", sorted(PROC))
def test_a_step_is_checked_into_its_statement_and_printed(rules: Any, kind: str) -> None:
    raw, want = PROC[kind]
    proc, problems = _proc(rules, kind, raw)
    assert problems == []
    assert _classes((*proc.guard, *proc.effects)) == want
    opts, why, run = _printer(rules, {proc.id: proc}).procedure(proc)
    code = "\n\n".join("\n".join(f) for f in (opts, why, run)).replace("STEM__", "x")
    compile(code, "<printed>", "exec")  # Python, whatever it says
    if want & {S.Require, S.Choose}:  # a guard: the refusal names the rule
        assert any(line.strip().startswith('return ("rule.k", ') for line in why), why
    else:  # an effect: its comment says where the rules write it
        assert f"    # {WHERE} k-{kind}" in run


def test_a_new_player_is_a_statement_of_its_own(rules: Any) -> None:
    _m, _tables, checked = rules
    raw = {"new": "game.players", "with": _required(checked)}
    proc, problems = _proc(rules, "new", raw, ("flow", "setup", "steps"))  # the setup's only
    assert problems == []
    assert _classes(proc.effects) == {S.New}
    run = _printer(rules, {proc.id: proc}).procedure(proc).run
    assert any(".append(Player(" in line for line in run)


@pytest.mark.parametrize("kind", sorted(ACTION))
def test_an_action_s_step_is_checked_into_its_item_and_printed(rules: Any, kind: str) -> None:
    m, tables, checked = rules
    raws, want = ACTION[kind]
    problems: list[st.StepProblem] = []
    steps = st.parse_steps(raws, ("court", "actions", 0, "steps"), problems)
    checker = ActionChecker(checked.scope, m.procs.procs, m.procs.hooks, tables.values,
                            m.procs.effects)
    action = checker.check_action(Action("k", "main", steps, "rule.k"))
    assert problems == [] and checker.problems == []
    found: set[type] = set()
    todo: list[Any] = list(action.items)
    while todo:  # an item that branches holds the items after it
        x = todo.pop()
        found.add(type(x))
        if isinstance(x, S.ApplyChoose):
            todo += x.rest
    assert want <= found
    code = _printer(rules, {}).action(action, "k")
    lines = [line for f in code.lines() for line in f]
    assert any('g.rs.fx["' in line for line in lines)


def _cased(path: str) -> set[str]:
    """The classes of `ir.stmt` (`S.X`) a module names in the patterns of its `case`s."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass) and isinstance(node.cls, ast.Attribute) \
                and isinstance(node.cls.value, ast.Name) and node.cls.value.id == "S":
            out.add(node.cls.attr)
    return out


def test_every_statement_class_has_an_interpreter_case_and_a_printer_case() -> None:
    """The interpreter and the printers each name every statement class in the `case`
    patterns of their dispatches (each ending in `assert_never`, so that a class they forget
    fails mypy)."""
    def names(*unions: Any) -> set[str]:
        return {c.__name__ for u in unions for c in typing.get_args(u)}

    want = {"tools/interp_steps.py": names(S.Stmt, S.GuardStmt, S.Item),
            "lisboa_rules/emit/engine/lower.py": names(S.Stmt, S.GuardStmt),
            "lisboa_rules/emit/engine/moves.py": names(S.Stmt, S.GuardStmt, S.Item)}
    for path, classes in want.items():
        missing = classes - _cased(path)
        assert not missing, (path, sorted(missing))


def test_every_kind_of_step_has_words_in_the_reference(compiled: Any) -> None:
    """The reference prints each step's own words (`text:`), whatever its kind."""
    from lisboa_rules.emit.reference.render import _Builder

    raws = [raw for raw, _w in PROC.values()] + [ACTION["apply"][0][-1],
                                                  {"new": "game.players"}]
    texts = [{**raw, "text": f"Words {i}."} for i, raw in enumerate(raws)]
    problems: list[st.StepProblem] = []
    steps = st.parse_steps(texts, ("effects", "effects", 0, "steps"), problems)
    assert not problems and {type(s) for s in steps} == set(st.STEP_CLASSES)
    b = _Builder(compiled, "")
    shown = b._steps(steps, {}, compiled.base.model, ())
    said = ["".join(p.text for p in x.text) for x in shown]
    assert said == [f"Words {i}." for i in range(len(raws))]


def _dispatch(name: str, union: str, classes: list[str]) -> str:
    cases = " | ".join(f"S.{k}()" for k in classes)
    return (f"def {name}(s: S.{union}) -> int:\n"
            "    match s:\n"
            f"        case {cases}:\n"
            "            return 1\n"
            "        case _:\n"
            "            assert_never(s)\n")


def test_a_dispatch_over_the_statements_that_forgets_one_fails_mypy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = ["from typing import assert_never\n\nfrom lisboa_rules.ir import stmt as S\n"]
    want: dict[str, str] = {}
    for union in ("Stmt", "Item"):
        names = [c.__name__ for c in typing.get_args(getattr(S, union))]
        parts.append(_dispatch(f"every_{union}", union, names))
        for left_out in names:
            fn = f"{union}_without_{left_out}"
            parts.append(_dispatch(fn, union, [n for n in names if n != left_out]))
            want[fn] = left_out
    snippet = tmp_path / "dispatch.py"
    snippet.write_text("\n\n".join(parts), encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    mypy_api = optional.module("mypy.api", "dev")
    out, err, status = mypy_api.run([
        "--config-file", str(ROOT / "pyproject.toml"), "--strict", "--no-incremental",
        "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent", str(snippet)])
    assert status == 1, out + err
    lines = snippet.read_text(encoding="utf-8").splitlines()
    failed: dict[str, str] = {}
    for m in re.finditer(r"dispatch\.py:(\d+): error: (.*)", out):
        line, message = int(m.group(1)), m.group(2)
        assert "assert_never" in lines[line - 1], m.group(0)
        got = re.search(r'incompatible type "(?:[\w.]+\.)?(\w+)"', message)
        assert got is not None, message
        fn = next(x for x in reversed(lines[:line]) if x.startswith("def "))
        failed[fn.split("(")[0].removeprefix("def ")] = got.group(1)
    assert failed == want, out
