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
