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
