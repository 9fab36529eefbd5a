"""Procedures the step compiler must turn into engine code that compiles: inputs the steps
fuzzer (`python3 -m tools.fuzz --only steps`) found, written out as regression tests (a guard
of two chooses generated `out.append((v_a,, v_b))` before effects 2f22b3f)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lisboa_rules.core.diagnostics import render_text
from lisboa_rules.core.inputs import ENGINE
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]

# (file, text to find, text to put after it): a second choose in a procedure with a guard
TWO_CHOOSES = [
    ("effects.yaml", "        reason: no Royal Favor tile of that Noble is left\n",
     "      - choose: {as: other, from: rules.nobles.nobles.id}\n"
     "        reason: choose a Noble\n"),
    ("nobles.yaml", "        reason: the Plan needs more Officials than you have in the offices\n"
     "        text: Choose one of your Plans whose Officials you have in the offices.\n",
     "      - choose: {as: where, from: rules.nobles.nobles.id, optional: true}\n"
     "        reason: choose a Noble\n"),
]


@pytest.mark.parametrize("edit", TWO_CHOOSES, ids=["effect", "noble-action"])
def test_a_guard_with_two_chooses_compiles(edit: tuple[str, str, str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    name, anchor, extra = edit
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    path = tmp_path / "rules" / name
    text = path.read_text(encoding="utf-8")
    assert anchor in text, f"rules/{name} no longer holds the anchor; update TWO_CHOOSES"
    path.write_text(text.replace(anchor, anchor + extra, 1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = compile_rules(Path("rules"))
    assert result.ok, render_text(result.diagnostics)
    compile(result.files[ENGINE], "<engine>", "exec")
