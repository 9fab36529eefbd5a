"""An assumption's stated value prints the numbers it restates through placeholders, so a
house rule that changes them changes the appendix too (docs/reference/rules-files.md): the
Officials' table, the Treasury marker's start and the Noble of the starting Royal Favor tile
were plain words, and the printed notes kept the base game's values under a house rule that
changed them. A placeholder reaches an item whose id has dots (`score.officials`) by that id.
"""

from __future__ import annotations

from pathlib import Path

from lisboa_rules.lang import text as rtext
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
RULES_MD = "reference/rules.md"

HOUSE = """\
kind: variant
id: dearer-officials
title: Dearer Officials
applies: chosen
text: >-
  Officials at work pays more, the Treasury starts lower and the Marquis grants the first
  Royal Favor.
source: ["seed:000#officials-at-work"]
changes:
  scoring:
    sources:
      - id: score.officials
        groups:
          - {id: officials, table: [21, 13, 7]}
  game:
    tracks:
      treasury:
        start_value: 4
    start:
      royal_favor_of: marquis
"""


def test_a_placeholder_reaches_an_item_by_an_id_with_dots() -> None:
    data = {"sources": [{"id": "score.a", "n": 1}, {"id": "score", "b": {"n": 2}},
                        {"id": "x.y.z", "n": 3}]}
    assert rtext.lookup(data, ("sources", "score.a", "n")) == 1
    assert rtext.lookup(data, ("sources", "score", "b", "n")) == 2
    assert rtext.lookup(data, ("sources", "x", "y", "z", "n")) == 3
    assert rtext.lookup(data, ("sources", "1", "b", "n")) == 2
    assert rtext.is_missing(rtext.lookup(data, ("sources", "score", "a", "m")))
    assert rtext.is_missing(rtext.lookup(data, ("sources", "x", "y", "n")))


def test_the_notes_follow_a_house_rule_that_changes_what_they_state(tmp_path: Path) -> None:
    house = tmp_path / "dearer-officials.yaml"
    house.write_text(HOUSE, encoding="utf-8")
    result = compile_rules(RULES, variants=["dearer-officials"], extra=[house])
    assert result.ok, [str(d) for d in result.diagnostics if d.is_error]
    page = result.files[RULES_MD]
    notes = page[page.index('<a id="notes"></a>'):]
    assert "Officials at work pays 21, 13, 7" in notes
    assert "15, 10, 5" not in notes and "15 / 10 / 5" not in notes
    assert "start on 4" in notes and "start on 6" not in notes
    assert "Royal Favor tile is of Marquis de Pombal" in notes


def test_the_extra_pick_words_follow_its_number_of_markers(tmp_path: Path) -> None:
    """Two markers may buy two more Decrees: the words said "a second Decree" and "the two
    picks" whatever `max_markers` was."""
    house = tmp_path / "two-extra.yaml"
    house.write_text(HOUSE.split("changes:")[0].replace("dearer-officials", "two-extra")
                     + "changes:\n  nobles:\n    noble_actions:\n"
                     "      - {id: take-decree, extra_pick: {max_markers: 2}}\n",
                     encoding="utf-8")
    result = compile_rules(RULES, variants=["two-extra"], extra=[house])
    assert result.ok, [str(d) for d in result.diagnostics if d.is_error]
    page = result.files[RULES_MD]
    said = page[page.index("Extra Decree:"):][:300]
    assert "at most 2 markers" in said
    assert "second Decree" not in said and "two picks" not in said
