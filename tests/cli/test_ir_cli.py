"""`lisboa-rules ir`: the checked IR of the rules' procedures and actions, where each
expression is written, for people debugging a rule; a house rule's change shows in it."""

from __future__ import annotations

import json
from typing import Any

from conftest import ROOT, run_cli

# where pay-reis's `let: {from_hand: ...}` is written (read from the rules, not pinned)
FROM_HAND = next(i for i, line in enumerate(
    (ROOT / "rules" / "effects.yaml").read_text(encoding="utf-8").splitlines(), 1)
    if "let: {from_hand:" in line)


def test_a_procedure_shows_each_expression_where_it_is_written(
    capsys: Any, monkeypatch: Any
) -> None:
    code, out, _ = run_cli(["ir", "--procedure", "pay-reis"], capsys, monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "pay-reis:"
    at = lines.index(f"  rules/effects.yaml:{FROM_HAND} let/from_hand: "
                     "min(reis, max(0, amount - part))")
    assert lines[at + 1] == "    (min player.reis (max 0 (- amount part))) : int"
    assert "    (> (measure influence_reis) 0) : bool" in lines


def test_an_action_of_a_turn_is_named_action_kind(capsys: Any, monkeypatch: Any) -> None:
    code, out, _ = run_cli(["ir", "--procedure", "action:visit"], capsys, monkeypatch)
    assert code == 0
    assert "    player.hand : list[card]" in out.splitlines()


def test_an_unknown_procedure_is_refused_with_a_suggestion(capsys: Any, monkeypatch: Any) -> None:
    code, out, err = run_cli(["ir", "--procedure", "pay-reiss"], capsys, monkeypatch)
    assert code == 1 and out == ""
    assert "no procedure or action 'pay-reiss'; did you mean 'pay-reis'?" in err


def test_json_rows_name_the_procedure_the_place_the_type_and_the_ir(
    capsys: Any, monkeypatch: Any
) -> None:
    code, out, _ = run_cli(["ir", "--format", "json"], capsys, monkeypatch)
    assert code == 0
    rows = json.loads(out)
    assert {r["procedure"] for r in rows} >= {"pay-reis", "action:visit"}
    row = next(r for r in rows if r["procedure"] == "pay-reis" and r["key"] == "let/from_hand")
    assert row == {"procedure": "pay-reis", "at": f"rules/effects.yaml:{FROM_HAND}",
                   "key": "let/from_hand",
                   "source": "min(reis, max(0, amount - part))", "type": "int",
                   "ir": "(min player.reis (max 0 (- amount part)))"}


def test_a_house_rule_folded_in_shows_its_procedure(capsys: Any, monkeypatch: Any) -> None:
    """A house rule's new effect (examples/house-rules/tithe-effect.yaml) is in the IR of the
    rules it is folded into, and not in the base game's."""
    house = ROOT / "examples" / "house-rules" / "tithe-effect.yaml"
    code, out, err = run_cli(["ir", "--house", str(house), "--variant", "tithe-effect",
                              "--procedure", "tithe"], capsys, monkeypatch)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "tithe:"
    assert "    (> player.reis 0) : bool" in lines
    code, _, err = run_cli(["ir", "--procedure", "tithe"], capsys, monkeypatch)
    assert code == 1 and "no procedure or action 'tithe'" in err




def test_statements_show_a_procedure_as_the_back_ends_print_it(
    capsys: Any, monkeypatch: Any
) -> None:
    """`--statements`: the guard and the effects, each statement with what it reads and
    writes (a gain with the bounds of its place, and whether it is kept within them)."""
    code, out, _ = run_cli(["ir", "--statements", "--procedure", "pay-visit"], capsys,
                           monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "proc pay-visit(noble: noble, cost: int, due: int)"
    assert lines[1] == "  guard" and "  effects" in lines
    assert "      gain player.influence [0..10] (neg cost) floor ceil" in lines
    assert any(x.startswith("    require (or (>= player.influence cost)") for x in lines)


def test_statements_show_an_action_with_each_branch_going_on(
    capsys: Any, monkeypatch: Any
) -> None:
    """An action's item that branches on a choice holds the items after it in each branch:
    the follower's next step comes after each procedure a Noble action may name."""
    code, out, _ = run_cli(["ir", "--statements", "--procedure", "action:follow", "--format",
                            "json"], capsys, monkeypatch)
    assert code == 0
    (row,) = json.loads(out)
    lines = row["ir"]
    assert lines[0] == 'action follow in phase follow rule "follow"'
    at = [k for k, x in enumerate(lines) if x.lstrip().startswith('case "build-store"')]
    assert len(at) == 2  # a Noble action followed, and an event's
    after = [lines[k + 1].strip() for k in at]
    assert after[0] == "(run next-follower seat true)"
    assert after[1].startswith("apply (bundle card.event_effects event")
