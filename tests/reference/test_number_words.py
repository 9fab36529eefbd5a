"""A number the rules print before a term's words agrees with them (rules/game.yaml `terms`):
a house rule that changes the number changes the words ("1 Plan" -> "2 Plans")."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, compiled_with

from lisboa_rules import pipeline
from lisboa_rules.lang import text as rtext

UNITS = {"plan": ("Plan", "Plans"), "rubble_set_marker": ("Rubble Set marker",
                                                            "Rubble Set markers"),
         "marker": ("marker", "markers")}


def test_the_words_after_a_number_agree_with_it() -> None:
    said = "take {n} Plan from the top"
    pos = said.index("}") + 1
    assert rtext.agreeing(said, pos, 2, UNITS) == (" Plans", pos + len(" Plan"))
    assert rtext.agreeing(said, pos, 1, UNITS) == (" Plan", pos + len(" Plan"))
    # the plural written, for one: the singular
    said = "{n} Plans each"
    assert rtext.agreeing(said, 3, 1, UNITS) == (" Plan", 3 + len(" Plans"))
    # the longest term's words that fit: "Rubble Set markers", not "marker"
    said = "{n} Rubble Set markers"
    assert rtext.agreeing(said, 3, 1, UNITS) == (" Rubble Set marker", len(said))
    # whole words only, and only right after the number
    assert rtext.agreeing("{n} Planets", 3, 2, UNITS) is None
    assert rtext.agreeing("{n} of the Plans", 3, 2, UNITS) is None
    assert rtext.agreeing("{n} Plan-cards", 3, 2, UNITS) is None  # a word of its own


GENEROUS = """\
kind: variant
id: generous
title: A generous start
applies: chosen
text: Every player starts with more, and the game ends later.
source: [seed:000#end-of-the-game]
changes:
  game:
    start:
      plans: 2
      royal_favors: 2
  flow:
    game_end:
      extra_rounds: 2
"""


def test_a_house_rules_numbers_carry_their_words(tmp_path: Path) -> None:
    page = compiled_with(GENEROUS, tmp_path, fold=True).files["reference/rules.md"]
    assert "Each player takes 2 Plans from the top of the Plan supply." in page
    assert "2 Royal Favor tiles of D. José I" in page
    assert "then play 2 more full rounds, then score" in page
    base = pipeline.compile_rules(ROOT / "rules", ()).files["reference/rules.md"]
    assert "Each player takes 1 Plan from the top of the Plan supply." in base
    assert "then play 1 more full round, then score" in base


def test_a_text_that_prints_no_ascii_number_is_left_as_it_is(tmp_path: Path) -> None:
    # '²' is a digit to str.isdigit() and no number to int(): a title of it once crashed the
    # reference ("internal error: ValueError")
    result = compiled_with("kind: variant\nid: squared\ntitle: Squared\napplies: chosen\n"
                           "text: The game is called squared.\nsource: our group\n"
                           "changes:\n  game:\n    title: \"\u00b2\"\n", tmp_path, fold=True)
    assert "# \u00b2" in result.files["reference/rules.md"]


SPARSE = """\
kind: variant
id: sparse
title: A sparse game
applies: chosen
text: One card in hand, one cube a set, one Decree on show, two wigs at the top of the track.
source: [facts:§3.2]
changes:
  game:
    start: {hand: 1}
    tracks:
      influence: {wig_at_max: 2}
    rubble: {cubes_per_set: 1}
  components:
    decree_display: {size: 1}
"""


def test_words_between_a_number_and_its_noun_follow_it(tmp_path: Path) -> None:
    # a number printed before an adjective or a noun of its own ("5 face-up Decrees", "5 blue
    # cards", "every 3 cubes") kept its plural when a house rule made it 1; a limit said as
    # "at most one per gain" contradicted a reward of 2 wigs
    page = compiled_with(SPARSE, tmp_path, fold=True).files["reference/rules.md"]
    assert "Each player holds a hand of 1 Political card." in page
    assert "Each player starts with 1 card of the blue deck;" in page
    assert "you gain 2 wigs, only once per gain." in page
    assert "each rubble set takes 1 rubble cube." in page
    assert "a rubble set takes 1 rubble cube |" in page  # its note
    assert "The Decree display shows 1 Decree face up." in page  # the rule and the glossary
    assert page.count("The Decree display shows 1 Decree face up.") == 2
    for wrong in ("1 Political cards", "1 blue cards", "1 face-up Decrees", "every 1 cubes",
                  "1 Decree lie", "at most one per gain"):
        assert wrong not in page
