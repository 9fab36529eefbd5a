"""A designer's edit takes effect or is refused: the overlay refusals of a hostile-edit audit.

A variant part that changes nothing (an empty map or list, an item that only names its id), an
item named twice in one list, a player count the game is never played with, and a reference
left dangling by a variant's `$remove` (the error gets a note at the removal). Each is a
located error of one run, exit 1, nothing written. The fixtures of tests/cases/invalid/
(overlay-no-change, overlay-duplicate-item, variant-players) pin the messages and columns;
these tests pin the notes and the command line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

HEAD = """\
kind: variant
id: {id}
title: House rule
applies: {applies}
text: A house rule.
source: ["seed:001#spending-influence-to-visit"]
changes:
"""


def _house(tmp_path: Path, vid: str, changes: str, applies: str = "chosen") -> Path:
    path = tmp_path / f"{vid}.yaml"
    path.write_text(HEAD.format(id=vid, applies=applies) + changes, encoding="utf-8")
    return path


def _errors(*houses: Path) -> list[Diagnostic]:
    result = compile_rules(RULES, extra=houses)
    assert not result.ok and not result.files
    return [d for d in result.diagnostics if d.is_error]


def test_the_second_entry_of_an_item_is_refused_naming_the_first(tmp_path: Path) -> None:
    house = _house(tmp_path, "twice", "  court:\n    costs:\n"
                   "      - {id: visit-cost, params: {per_official: 2}}\n"
                   "      - {id: visit-cost, params: {minimum: 1}}\n")
    [d] = _errors(house)
    assert d.code == "duplicate-id"
    assert d.span is not None and (d.span.file, d.span.line, d.span.col) == (str(house), 11, 14)
    assert "first at line 10" in d.message
    [note] = d.related
    assert note.span is not None and (note.span.line, note.span.col) == (10, 14)


def test_a_reference_a_variant_removed_notes_the_removal(tmp_path: Path) -> None:
    house = _house(tmp_path, "no-decrees", "  nobles:\n    noble_actions:\n"
                   "      - {id: take-decree, $remove: true}\n")
    found = [d for d in _errors(house) if d.code == "unknown-reference"]
    # the cards whose event is the Noble action, the Noble whose action it is, the vocabulary
    assert len(found) >= 3, found
    for d in found:
        assert "'take-decree'" in d.message
        notes = [r for r in d.related if r.message == "variant 'no-decrees' removes it here"]
        assert len(notes) == 1, d
        assert notes[0].span is not None
        assert (notes[0].span.file, notes[0].span.line, notes[0].span.col) == (str(house), 10, 9)


def test_a_removed_name_a_formula_reads_notes_the_removal(tmp_path: Path) -> None:
    house = _house(tmp_path, "no-piles", "  vocabulary:\n    names:\n"
                   "      - {name: empty_display_piles, $remove: true}\n")
    found = _errors(house)
    assert found and all(d.code == "unknown-name" for d in found), found
    for d in found:
        assert [r.message for r in d.related] == ["variant 'no-piles' removes it here"]


def test_an_unknown_reference_nobody_removed_has_no_such_note(tmp_path: Path) -> None:
    """The note is not a rubber stamp: a misspelt id of a new card gets its did-you-mean only."""
    house = _house(tmp_path, "misspelt", "  components:\n    cards:\n"
                   "      - {$add: true, number: 500, deck: blue, type: treasury, "
                   "event: {noble_action: take-decre}}\n")
    [d] = _errors(house)
    assert d.code == "unknown-reference" and d.suggestion == "take-decree"
    assert not any("removes" in r.message for r in d.related)


def test_a_folded_variant_s_removal_is_noted_too(tmp_path: Path) -> None:
    """Folded into the base game (`--variant NAME`), the removal is in the base rule set."""
    remover = _house(tmp_path, "remover", "  nobles:\n    noble_actions:\n"
                     "      - {id: open-building, $remove: true}\n")
    result = compile_rules(RULES, ("remover",), extra=[remover])
    found = [d for d in result.diagnostics if d.code == "unknown-reference"]
    assert found and not result.ok
    for d in found:
        assert [(r.message, r.span.line if r.span else 0) for r in d.related] == [
            ("variant 'remover' removes it here", 10)], d


@pytest.mark.parametrize("count, bound", [(1, "min"), (5, "max")])
def test_a_player_count_outside_the_game_is_refused(tmp_path: Path, count: int,
                                                    bound: str) -> None:
    house = _house(tmp_path, "crowd", "  game:\n    start:\n      reis: 12\n",
                   applies=f"{{players: [3, {count}]}}")
    [d] = _errors(house)
    assert d.code == "value-out-of-range"
    assert d.span is not None and (d.span.line, d.span.col) == (4, 24)
    assert f"applies with {count} players, but the game is for 2 to 4 players" in d.message
    [note] = d.related
    assert note.message.startswith(f"players.{bound} is ")
    assert note.span is not None and note.span.file.endswith("game.yaml")


def test_a_player_count_inside_the_game_builds(tmp_path: Path) -> None:
    house = _house(tmp_path, "trio", "  game:\n    start:\n      reis: 12\n",
                   applies="{players: [3]}")
    result = compile_rules(RULES, extra=[house])
    assert result.ok, [d.full_message for d in result.diagnostics]


def test_a_variant_by_player_count_is_checked_at_its_counts_only(tmp_path: Path) -> None:
    """A house rule that gives 2-player games two colours builds: its rule set is played with 2
    players only. The proof that the setup's `rules.game.players.colors[k]` is in range read
    the seats of every count (a partial-operation in rules/flow.yaml, a file it did not
    touch), and the 3-player worked examples were checked against it ('Orange' unknown)."""
    house = _house(tmp_path, "pair", "  game:\n    players: {colors: [Yellow, Green]}\n",
                   applies="{players: [2]}")
    result = compile_rules(RULES, extra=[house])
    assert result.ok, [d.full_message for d in result.diagnostics]


def test_too_few_colours_is_one_error_at_the_colours(tmp_path: Path) -> None:
    """Three colours for four players is one mistake: the error at the colours, not another
    one in rules/flow.yaml's setup found in the 2-player rule set (where three are enough)."""
    house = _house(tmp_path, "trio", "  game:\n    players: {colors: [Yellow, Green, Orange]}\n")
    result = compile_rules(RULES, variants=["trio"], extra=[house])
    assert not result.ok and not result.files
    [d] = [d for d in result.diagnostics if d.is_error]
    assert d.code == "value-out-of-range" and "4 players need 4 colours, only 3" in d.message
    assert d.span is not None and (d.span.file, d.span.line) == (str(house), 9)


def test_every_refusal_in_one_run_exit_1_nothing_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    noop = _house(tmp_path, "noop", "  game:\n    start: {}\n")
    twice = _house(tmp_path, "twice", "  flow:\n    triggers:\n"
                   "      - {id: period-end.rubble, params: {sets: 3}}\n"
                   "      - {id: period-end.rubble, params: {sets: 4}}\n")
    crowd = _house(tmp_path, "crowd", "  game:\n    start:\n      reis: 12\n",
                   applies="{players: [6]}")
    out = tmp_path / "out"
    monkeypatch.chdir(ROOT)
    code = main(["build", "--no-cache", "--out", str(out), "--house", str(noop),
                 "--house", str(twice), "--house", str(crowd)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"{noop}:9:12: error[overlay-no-change]: variant 'noop' changes nothing in " \
           "game.start: the map is empty" in err
    assert f"{twice}:11:14: error[duplicate-id]: variant 'twice' names trigger " \
           "'period-end.rubble' of flow.triggers twice (first at line 10)" in err
    assert f"{crowd}:4:21: error[value-out-of-range]: variant 'crowd' applies with 6 " in err
    assert not out.exists()


def test_a_removed_item_a_placeholder_names_notes_the_removal(tmp_path: Path) -> None:
    """Removing the discard action left rules/provenance.yaml's placeholder
    '{court.actions.discard.reward.reis}' naming no value, and the error said nothing of the
    variant: the designer saw a base file's error only. The note names the removed id."""
    house = _house(tmp_path, "no-discard", "  court:\n    actions:\n"
                   "      - {id: discard, $remove: true}\n")
    found = _errors(house)
    assert found and all(d.code == "unknown-placeholder" for d in found), found
    for d in found:
        assert "court.actions.discard.reward.reis" in d.message
        assert [r.message for r in d.related] == ["variant 'no-discard' removes 'discard' here"]
        [note] = d.related
        assert note.span is not None
        assert (note.span.file, note.span.line, note.span.col) == (str(house), 10, 9)


def test_a_list_emptied_by_a_variant_names_the_variant(tmp_path: Path) -> None:
    """The merged file's schema refuses a list the variant left empty: the error stands at the
    rules' list (the variant wrote no list), with a note at the variant that changed that file,
    so `validate --house` points into the house rule too."""
    house = _house(tmp_path, "no-ties", "  scoring:\n    tiebreakers:\n      measures:\n"
                   + "".join(f"        - {{name: {n}, $remove: true}}\n" for n in (
                       "most wigs", "most rubble sets", "most stores", "most completed Plans",
                       "most money")))
    [d] = _errors(house)
    assert d.code == "schema-range" and "tiebreakers.measures" in d.message
    assert d.span is not None and d.span.file.endswith("scoring.yaml")
    [note] = d.related
    assert "variant 'no-ties'" in note.message
    assert note.span is not None and (note.span.file, note.span.line) == (str(house), 11)


def test_an_error_of_the_rules_lines_names_the_folded_house_rule(tmp_path: Path) -> None:
    """Folded in, a house rule is in force in every rule set, also under a combination of
    the other variants: an error it brings about in the rules' own lines names it there too,
    not only the other variant of that combination (5 players and 4 colours: the setup's
    colour of the 5th seat, found in the 2-player rule set, was blamed on 'two-player'; that
    rule set is now checked at 2 players only, and the errors left, the deck too small and
    the colours too few, name the house rule)."""
    house = _house(tmp_path, "five", "  game:\n    players: {max: 5}\n")
    result = compile_rules(RULES, variants=["five"], extra=[house])
    assert not result.ok and not result.files
    in_rules = [d for d in result.diagnostics if d.is_error and d.span is not None
                and not d.span.file.startswith(str(tmp_path))]
    assert in_rules
    for d in in_rules:
        assert any("variant 'five'" in r.message for r in d.related), d


def test_two_house_rules_that_add_one_item_in_a_place_conflict(tmp_path: Path) -> None:
    """Two house rules that add a tie-breaker of one name, each `$after` an item: a conflict
    of the two (where it goes, what it measures), not 'takes one place' (the second add was
    read as a move of an item that stays)."""
    one = _house(tmp_path, "one", "  scoring:\n    tiebreakers:\n      measures:\n"
                 "        - {$add: true, $after: most wigs, measure: influence, name: most sway}\n")
    two = _house(tmp_path, "two", "  scoring:\n    tiebreakers:\n      measures:\n"
                 "        - {$add: true, $after: most money, measure: ships, name: most sway}\n")
    errors = _errors(one, two)
    assert {d.code for d in errors} == {"overlay-conflict"}, [d.message for d in errors]
    assert all(d.span is not None and d.span.file == str(two) for d in errors)
    assert any("$after" in d.message for d in errors)
    assert any(".measure" in d.message for d in errors)
