"""One mistake, one error: a step whose binding is refused (a `let` of a cost a variant
removed, a `choose` from an unknown list) is reported once; the later steps that use the
name it would have bound are not reported again as unknown names."""

from __future__ import annotations

import re
from pathlib import Path

from lisboa_rules import pipeline
from lisboa_rules.core.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[2]


def _diags(tmp_path: Path, changes: str) -> list[Diagnostic]:
    """The diagnostics of the rules with a house rule that makes `changes` (YAML under
    `changes:`, indented two spaces)."""
    house = tmp_path / "house.yaml"
    house.write_text(
        "kind: variant\nid: house\ntitle: House rule\napplies: chosen\ntext: A house rule.\n"
        "source: [seed:001#action-4-sponsor-an-event]\nchanges:\n" + changes,
        encoding="utf-8",
    )
    compiled, diags = pipeline.analyse(ROOT / "rules", (), None, (house,))
    assert compiled is None
    return diags


def _errors(tmp_path: Path, changes: str) -> list[str]:
    return [f"{d.code}: {d.full_message}" for d in _diags(tmp_path, changes) if d.is_error]


def test_a_removed_cost_is_one_error_per_use_not_one_per_later_step(tmp_path: Path) -> None:
    errors = _errors(tmp_path, "  court:\n    costs:\n      - {id: sponsor-cost, $remove: true}\n")
    # a use: written in a step, or an action's `cost: sponsor-cost` its steps read (this.cost)
    uses = sum(text.count("cost('sponsor-cost')") + text.count("cost: sponsor-cost")
               for text in (p.read_text(encoding="utf-8") for p in (ROOT / "rules").glob("*.yaml")))
    assert uses >= 1
    assert all(re.match(r"unknown-reference: (no|unknown) cost 'sponsor-cost'", e)
               for e in errors), errors
    assert len(errors) == uses, errors


def test_an_action_cost_naming_no_cost_stands_at_its_cost_key(tmp_path: Path) -> None:
    """An action's `cost:` that names a removed cost is said once, at that key (not over the
    whole action), and not again at the step that reads it (`cost(this.cost)`)."""
    diags = _diags(tmp_path, "  court:\n    costs:\n      - {id: sponsor-cost, $remove: true}\n")
    lines = (ROOT / "rules" / "court.yaml").read_text(encoding="utf-8").splitlines()
    at_key = [d for d in diags if d.is_error and d.span is not None
              and lines[d.span.line - 1].strip().startswith("cost: sponsor-cost")]
    assert len(at_key) == 1, [d.full_message for d in diags]
    assert at_key[0].span.end_line == at_key[0].span.line
    assert not any("this.cost" in d.full_message for d in diags if d.is_error)


def test_a_name_never_bound_is_still_an_unknown_name(tmp_path: Path) -> None:
    """The suppression is only for names whose binding failed: a name no step binds at all is
    reported where it is used."""
    errors = _errors(
        tmp_path,
        "  court:\n    actions:\n      - id: discard\n        steps:\n"
        "          - choose: {as: card, from: hand}\n"
        "          - {move: {item: kard, from: hand, to: game.discard}}\n",
    )
    assert any(re.match(r"unknown-name: unknown name 'kard'", e) for e in errors), errors


def test_a_choice_from_an_unknown_list_is_one_error(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        "  court:\n    actions:\n      - id: discard\n        steps:\n"
        "          - choose: {as: card, from: hands}\n"
        "          - {move: {item: card, from: hand, to: game.discard}}\n"
        "          - {apply: {effects: this.reward}}\n"
        "          - {set: {game.phase: \"'refill'\"}}\n",
    )
    assert len(errors) == 1 and "'hands'" in errors[0], errors


def test_a_typo_beside_a_name_whose_binding_failed_is_still_reported(tmp_path: Path) -> None:
    """The suppression of `x` (its `let` was refused) hid every other unknown name of the same
    expression: `reiss` in `x >= 0 and reiss >= 0` came out only after the cost was fixed. The
    other names are checked with `x` bound to anything; the refused `x` is still not reported."""
    errors = _errors(
        tmp_path,
        "  court:\n    actions:\n      - id: discard\n        steps:\n"
        "          - choose: {as: card, from: hand}\n"
        "          - let: {x: \"cost('nosuch-cost')\"}\n"
        "          - require: x >= 0 and reiss >= 0\n"
        "            reason: no\n"
        "          - {move: {item: card, from: hand, to: game.discard}}\n"
        "          - {gain: {reis: x}}\n"
        "          - {set: {game.phase: \"'refill'\"}}\n",
    )
    assert len(errors) == 2, errors
    assert errors[0].startswith("unknown-reference: no cost 'nosuch-cost'"), errors
    assert errors[1].startswith("unknown-name: unknown name 'reiss'"), errors


def test_every_display_pile_spelt_like_a_noble_is_reported(tmp_path: Path) -> None:
    """Two Nobles' piles misspelt: each is said at its pile (the cards of both Nobles are not
    reported, so the second was said nowhere)."""
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    comp = rules / "components.yaml"
    text = comp.read_text(encoding="utf-8")
    assert "piles: [treasury, manuel, marquis, king]" in text
    comp.write_text(text.replace("piles: [treasury, manuel, marquis, king]",
                                 "piles: [treasury, manuel, marqius, kign]"), encoding="utf-8")
    compiled, diags = pipeline.analyse(rules)
    assert compiled is None
    said = sorted((d.suggestion, d.span.col) for d in diags if d.is_error)
    assert said == [("king", 38), ("marquis", 29)], [d.full_message for d in diags]


def test_a_removed_nobles_icon_is_not_also_missing_its_term(tmp_path: Path) -> None:
    """A Noble's icon needs no `term` (the key prints his name): with the Noble removed, the
    icon's `of:` names nothing, which is said; that it now lacks a term follows from it."""
    diags = _diags(tmp_path, "  nobles:\n    nobles:\n      - {id: king, $remove: true}\n")
    at_icons = [d for d in diags if d.is_error and d.span is not None
                and d.span.file.endswith("vocabulary.yaml")]
    assert [d.code for d in at_icons] == ["unknown-reference"], \
        [d.full_message for d in at_icons]


def test_a_removed_business_is_said_at_every_rule_that_names_it_in_one_run(
        tmp_path: Path) -> None:
    """Removing a business breaks formulas that read it (unknown-name) and lists that name it
    (unknown-reference): both are said in the same run, not the lists only after the formulas
    are mended; a majority group that is no business is one error, not also its measure's."""
    diags = _diags(tmp_path, "  game:\n    businesses:\n      - {id: gold, $remove: true}\n")
    errors = [d for d in diags if d.is_error]
    codes = {d.code for d in errors}
    assert codes == {"unknown-name", "unknown-reference"}, [d.full_message for d in errors]
    assert any(d.message == "unknown good 'gold'" for d in errors)
    lines = {(d.span.file, d.span.line) for d in errors if d.span is not None}
    assert len(lines) == len(errors), [d.full_message for d in errors]  # one error a place


def test_an_item_left_out_for_its_own_formula_is_not_also_unknown(tmp_path: Path) -> None:
    """A cost whose formula has an unknown name is left out of the model; the actions that
    name it name what is there, so only the formula's error is said."""
    errors = _errors(tmp_path, "  court:\n    costs:\n      - {id: visit-cost, formula: "
                               "\"max(minimum, influence_modifer)\"}\n")
    assert [e.split(":")[0] for e in errors] == ["unknown-name"], errors


def test_a_number_shown_in_a_refusal_takes_a_term_of_the_game(tmp_path: Path) -> None:
    """`{EXPR|TERM}` in a step's words shows a number with a term of `game.terms`; a term the
    game does not have is refused where it is written, with the nearest one."""
    errors = _errors(
        tmp_path,
        "  court:\n    actions:\n      - id: pass\n        steps:\n"
        "          - require: len(hand) == 0\n"
        "            reason: you still hold {len(hand)|cardz}\n"
        "          - {set: {game.phase: \"'refill'\"}}\n",
    )
    assert len(errors) == 1 and errors[0].startswith(
        "unknown-placeholder: unknown filter 'cardz'"), errors
    assert "did you mean 'card'" in errors[0] or "did you mean 'cards'" in errors[0], errors
