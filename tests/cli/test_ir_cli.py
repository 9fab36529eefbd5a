"""`lisboa-rules ir`: the checked IR of the rules' procedures and actions, where each
expression is written, for people debugging a rule; a house rule's change shows in it."""

from __future__ import annotations

import json
from typing import Any

from conftest import ROOT, run_cli


def test_a_procedure_shows_each_expression_where_it_is_written(
    capsys: Any, monkeypatch: Any
) -> None:
    code, out, _ = run_cli(["ir", "--procedure", "pay-reis"], capsys, monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "pay-reis:"
    at = lines.index("  rules/effects.yaml:92 let/from_hand: min(reis, amount)")
    assert lines[at + 1] == "    (min player.reis amount) : int"
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
    assert row == {"procedure": "pay-reis", "at": "rules/effects.yaml:92", "key": "let/from_hand",
                   "source": "min(reis, amount)", "type": "int",
                   "ir": "(min player.reis amount)"}


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


