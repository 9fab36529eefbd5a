"""`lisboa-rules explain CODE` teaches each code with an example (issue 37): every registered
code has a summary, an explanation, a wrong example and its fix, and `explain` prints them;
where the wrong example is a piece of a house rule, it really gives its code, and its fix
does not."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.core.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

HEAD = """\
kind: variant
id: my-house
title: My house rule
applies: chosen
text: Some house rule.
"""

TRIGGER = HEAD + "changes:\n  flow:\n    triggers:\n      - id: period-end.rubble\n        {}\n"
# a trigger of the house rule's own, its condition the example
NEW_TRIGGER = HEAD + ("changes:\n  flow:\n    triggers:\n      - $add: true\n"
                      "        id: house.late\n        period: 2\n        scope: game\n"
                      "        params: {one: 1}\n"
                      "        do:\n          - {gain: {reis: 1}, text: Take 1 real.}\n"
                      "        text: The player whose turn it is takes {params.one|money}.\n"
                      "        {}\n")
# Where each code's wrong example stands in a house rule: `{}` is the example, indented as the
# line holding it (one place for all its examples, or one for each). The examples are the
# registry's own (lisboa_rules/core/codes.py).
PLACES: dict[str, str | tuple[str, ...]] = {
    "yaml-syntax": HEAD + "{}\n",
    "duplicate-key": HEAD + "{}\n",
    "schema-pattern": HEAD.replace("id: my-house\n", "") + "{}\n",
    "schema-unknown-key": HEAD.replace("title: My house rule\n", "") + "{}\n",
    "expr-syntax": (
        HEAD + "changes:\n  court:\n    costs:\n      - id: sponsor-cost\n        {}\n",
        TRIGGER,
    ),
    "unknown-name": TRIGGER,
    "unknown-source": TRIGGER,
    "overlay-unknown-item": HEAD + "changes:\n  court:\n    {}\n",
    "overlay-unknown-key": HEAD + "changes:\n  flow:\n    triggers:\n      {}\n",
    "text-stale": HEAD + "changes:\n  scoring:\n    sources:\n      {}\n",
    "trigger-never-fires": NEW_TRIGGER,
    "trigger-always-fires": NEW_TRIGGER,
    "turn-order-skips": HEAD + "changes:\n  flow:\n    turn_order:\n      {}\n",
    "items-over-max": (
        HEAD + "changes:\n  flow:\n    moves:\n      - id: draw\n        steps:\n"
        '          - choose: {as: pile, from: game.piles, where: "len(game.piles[it]) > 0"}\n'
        "            reason: the {pile} pile is empty\n"
        "            text: Take the face-up top card of a display pile of your choice...\n"
        "          {}\n"
        "          - {do: reveal-top, with: {pile: pile}, text: ...and turn the next card of "
        "that pile face up.}\n",
        HEAD + "changes:\n  flow:\n    setup:\n      steps:\n        - id: setup.hands\n"
        "          text: Deal each player {game.start.hand} cards or more, sorted...\n"
        "          do:\n            {}\n            - set: {q.hand: sorted(q.hand)}\n",
    ),
}


def test_every_code_has_a_summary_an_explanation_and_an_example() -> None:
    for code in CODES.values():
        assert code.summary and code.explanation, code.name
        assert code.examples, f"{code.name}: give a `bad:` example and its `fix:`"
        for bad, fix in code.examples:
            assert bad and fix and bad != fix, code.name


@pytest.mark.parametrize("name", sorted(CODES))
def test_explain_prints_the_example_and_its_fix(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", name]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name} (") and CODES[name].summary in out
    for bad, fix in CODES[name].examples:
        for line in (*bad.splitlines(), *fix.splitlines()):
            assert line in out, (name, line)
    assert "bad:" in out and "fix:" in out


def _codes(tmp_path: Path, place: str, piece: str) -> list[str]:
    indent = place.split("{}")[0].rsplit("\n", 1)[-1]
    text = place.replace("{}", textwrap.indent(piece, indent)[len(indent) :])
    path = tmp_path / "house.yaml"
    path.write_text(text, encoding="utf-8")
    _, diags = pipeline.analyse(RULES, extra=(path,))
    return [d.code for d in diags if d.is_error]


@pytest.mark.parametrize("name", sorted(PLACES))
def test_the_wrong_example_gives_its_code_and_the_fix_does_not(tmp_path: Path, name: str) -> None:
    places = PLACES[name]
    for i, (bad, fix) in enumerate(CODES[name].examples):
        place = places if isinstance(places, str) else places[i]
        assert name in _codes(tmp_path, place, bad), bad
        assert name not in _codes(tmp_path, place, fix), fix
