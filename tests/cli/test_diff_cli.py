"""`lisboa-rules diff NAME`: every value and rule a variant changes, base -> variant."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lisboa_rules.cli.main import main
from lisboa_rules.pipeline import variant_changes

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^  (?P<address>\S+): (?P<before>.*) -> (?P<after>.*)  "
                  r"\((?P<file>[^:()]+):(?P<line>\d+):(?P<col>\d+)\)$")


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["diff", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _section(out: str, title: str) -> list[str]:
    """The indented lines under the heading that starts with `title`."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    body = []
    for ln in lines[start + 1:]:
        if not ln.startswith("  "):
            break
        body.append(ln)
    return body


@pytest.mark.parametrize("name", ["two-player", "queen"])
def test_every_change_of_a_real_variant_is_listed(
        name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    changes, _ = variant_changes(Path("rules"), name)
    assert changes, f"variant {name} changes nothing?"
    code, out, err = _diff(capsys, name)
    assert code == 0, err
    assert out.startswith(f"variant {name}: ")
    rows = [m for ln in _section(out, "values") if (m := LINE.match(ln))]
    assert len(rows) == len(changes)
    for row, change in zip(rows, changes, strict=True):
        assert row["file"] == f"rules/variants/{name}.yaml"
        assert (int(row["line"]), int(row["col"])) == (change.span.line, change.span.col)
        assert row["address"].startswith(change.kind + ".")
    callouts = _section(out, "callouts")
    assert callouts and all("{" not in ln for ln in callouts)  # placeholders filled in


def test_two_player_values(monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = _diff(capsys, "two-player")
    assert code == 0
    rows = {m["address"]: m for ln in out.splitlines() if (m := LINE.match(ln))}
    # the seed: with 2 players only the most and 3rd-most columns are used
    assert rows["scoring.majority.columns"]["after"] == "[1, 3]"
    # list items are named by their id, not by their position
    lots = [a for a in rows if a.startswith("nobles.noble_actions[build-store].lots.")]
    assert lots, out
    assert "applies with 2 players" in out.splitlines()[0]
    assert re.search(r"^  score\.stores: With 2 players", out, re.MULTILINE)


def test_queen_values(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = _diff(capsys, "queen")
    assert code == 0
    rows = {m["address"]: m for ln in out.splitlines() if (m := LINE.match(ln))}
    forbid = rows["nobles.noble_actions[take-decree].forbidden_by_flag"]
    assert (forbid["before"], forbid["after"]) == ("(absent)", "queen")
    assert rows["nobles.nobles[marquis].reign"]["before"] == "(absent)"
    assert "chosen at setup" in out.splitlines()[0]
    assert re.search(r"^  take-decree: .*Queen", out, re.MULTILINE)


def test_json_format(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = _diff(capsys, "two-player", "--format", "json")
    assert code == 0
    data = json.loads(out)
    changes, _ = variant_changes(Path("rules"), "two-player")
    assert data["variant"] == "two-player" and data["applies"] == {"players": [2]}
    assert [v["before"] for v in data["values"]] == [c.before for c in changes]
    assert [v["after"] for v in data["values"]] == [c.after for c in changes]
    assert {c["rule"] for c in data["callouts"]} >= {"score.stores"}


def test_unknown_variant(monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _diff(capsys, "quen")
    assert code == 1 and out == ""
    assert ("error[unknown-variant]: no variant named 'quen' (the variants: queen, two-player); "
            "did you mean 'queen'?") in err
    code, out, _ = _diff(capsys, "quen", "--format", "json")
    assert code == 1
    assert json.loads(out)[0]["suggestion"] == "queen"


HOUSE = """\
kind: variant
id: house
title: House rules
applies: chosen
text: Dearer visits, no display trigger, no extra Decree.
source: [seed:001#spending-influence-to-visit]
changes:
  court:
    costs:
      - id: visit-cost
        params: {per_official: 2}
  flow:
    triggers:
      - {id: period-end.display, $remove: true}
  nobles:
    noble_actions:
      - id: take-decree
        extra_pick: {$remove: true}
        steps:
          - id: take-decree.choose
            choose: {max: 1}
            count_rule: {$remove: true}
            count_reason: {$remove: true}
            reason: take a Decree from the display
            text: Take one Decree from the display.
          - {id: take-decree.pay-markers, $remove: true}
"""


def test_changed_removed_values_and_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A house rule that changes a value, removes a list item and removes a key (and, since
    the Noble action's steps read the removed key, changes those steps, by their ids, so that
    they do not)."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "rules" / "variants" / "house.yaml").write_text(HOUSE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = _diff(capsys, "house", "--rules", "rules")
    assert code == 0, err
    rows = {m["address"]: m for ln in out.splitlines() if (m := LINE.match(ln))}
    per_official = rows["court.costs[visit-cost].params.per_official"]
    assert (per_official["after"], per_official["file"], per_official["line"]) == (
        "2", "rules/variants/house.yaml", "11")
    assert rows["flow.triggers[period-end.display]"]["after"] == "(absent)"
    assert rows["nobles.noble_actions[take-decree].extra_pick"]["after"] == "(absent)"
    rules = "\n".join(_section(out, "rules that read differently"))
    assert re.search(r"^  visit-cost:\n    - .*\n    \+ .*2 per Official", rules, re.MULTILINE)
    assert re.search(r"^  period-end\.display:\n    - .*\n    \+ \(absent\)$", rules,
                     re.MULTILINE)
    assert re.search(r"^  take-decree\.extra-pick:\n", rules, re.MULTILINE)
    assert _section(out, "callouts") == ["  (none)"]


def test_a_house_file_outside_the_rules_is_diffed_like_one_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`diff --house FILE NAME`, as `validate` and `build` take it: the same values and rules
    as from rules/variants/, positions in the house file; its errors located there, exit 1."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "rules" / "variants" / "house.yaml").write_text(HOUSE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, inside, err = _diff(capsys, "house", "--rules", "rules")
    assert code == 0, err
    (tmp_path / "rules" / "variants" / "house.yaml").unlink()
    mine = Path("mine.yaml")  # shown as given, relative to the working directory
    mine.write_text(HOUSE, encoding="utf-8")
    code, _, err = _diff(capsys, "house", "--rules", "rules")
    assert code == 1 and "no variant named 'house'" in err
    code, outside, err = _diff(capsys, "house", "--rules", "rules", "--house", str(mine))
    assert code == 0, err
    assert outside == inside.replace("rules/variants/house.yaml", str(mine))
    assert f"({mine}:11:" in outside
    mine.write_text(HOUSE.replace("params: {per_official: 2}", "params: {per_oficial: 2}"),
                    encoding="utf-8")
    code, out, err = _diff(capsys, "house", "--rules", "rules", "--house", str(mine))
    assert code == 1 and out == ""
    assert f"{mine}:11:18: error[overlay-unknown-key]: no key 'per_oficial'" in err
