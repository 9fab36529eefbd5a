"""House rules that add a saved-game check (rules/state.yaml `checks:`), written only in YAML:
a chosen variant adds a check over each player or over the game, and a house rule folded into
the base game adds one too. A save that breaks it is refused by `from_json` / `loads` with the
check's JSON path and words; the same save loads without the house rule. A check that does
not compile is a located error.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import load_engine

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

HEAD = """\
kind: variant
id: {id}
title: {title}
applies: chosen
text: {title}.
source: [seed:000#intro]
changes:
  state:
"""

CHOSEN = {
    "house-purse": HEAD.format(id="house-purse", title="A small purse")
    + """\
    checks:
      - $add: true
        id: purse
        each: player
        holds: reis <= 40
        at: "$.players[{seat}].reis"
        text: "{color}: more than 40 {rules.game.terms.money} ({reis})"
""",
    "house-short": HEAD.format(id="house-short", title="A short game")
    + """\
    checks:
      - $add: true
        id: short-game
        holds: turns <= 30 or phase == 'over'
        at: $.turns
        text: "{turns} turns: the house game ends after 30"
""",
}

FOLDED = (
    HEAD.format(id="house-wigs", title="Few wigs")
    + """\
    checks:
      - $add: true
        id: few-wigs
        each: player
        holds: wigs < 90
        at: "$.players[{seat}].wigs"
        text: "{color} has {wigs} {rules.game.terms.score}: the house limit is 89"
"""
)


def _build(root: Path, name: str, files: dict[str, str], args: list[str]) -> ModuleType:
    project = root / name
    project.mkdir()
    house = []
    for vid, text in files.items():  # house-rule files beside the rules: nothing is copied
        house += ["--house", str(project / f"{vid}.yaml")]
        (project / f"{vid}.yaml").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        build = ["build", "--rules", str(ROOT / "rules"), *house, *args]
        assert main(build) == 0, f"lisboa-rules {build} failed"
    return load_engine(project / "generated" / "lisboa_engine.py", f"house_checks_{name}")


@pytest.fixture(scope="module")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield _build(tmp_path_factory.mktemp("chk"), "chosen", CHOSEN, [])


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield _build(
        tmp_path_factory.mktemp("chk"),
        "folded",
        {"house-wigs": FOLDED},
        ["--variant", "house-wigs"],
    )


Change = Callable[[dict[str, Any]], None]


def _set_player(seat: int, field: str, value: int) -> Change:
    return lambda d: d["players"][seat].update({field: value})


CASES: list[tuple[tuple[str, ...], int, Change, str | None, str]] = [
    # (variants, players, change, refused at (None: loads), words)
    (
        ("house-purse",),
        3,
        _set_player(1, "reis", 41),
        "$.players[1].reis",
        "more than 40 réis (41)",
    ),
    (
        ("house-purse",),
        2,
        _set_player(0, "reis", 77),
        "$.players[0].reis",
        "more than 40 réis (77)",
    ),
    (("house-purse",), 3, _set_player(2, "reis", 40), None, ""),
    ((), 3, _set_player(1, "reis", 41), None, ""),
    (("house-short",), 3, lambda d: d.update(turns=31), "$.turns", "31 turns: the house game"),
    (("house-short",), 4, lambda d: d.update(turns=99), "$.turns", "99 turns: the house game"),
    (("house-short",), 3, lambda d: d.update(turns=12), None, ""),
    (("house-purse", "house-short"), 3, lambda d: d.update(turns=40), "$.turns", "40 turns"),
    ((), 4, lambda d: d.update(turns=99), None, ""),
]


@pytest.mark.parametrize(
    ("variants", "players", "change", "at", "words"),
    CASES,
    ids=[f"{'+'.join(c[0]) or 'base'}-{c[3] or 'loads'}-{i}" for i, c in enumerate(CASES)],
)
def test_a_chosen_house_rule_adds_a_saved_game_check(
    chosen: ModuleType,
    variants: tuple[str, ...],
    players: int,
    change: Change,
    at: str | None,
    words: str,
) -> None:
    E = chosen
    g = E.new_game(players, variants=variants, seed=players)
    data = copy.deepcopy(E.to_json(g))
    change(data)
    if at is None:
        assert E.to_json(E.from_json(copy.deepcopy(data))) == data
        return
    for load in (lambda: E.from_json(copy.deepcopy(data)), lambda: E.loads(json.dumps(data))):
        with pytest.raises(E.StateError) as exc:
            load()
        assert exc.value.path == at
        assert words in str(exc.value)
        assert str(exc.value).startswith(at + ": ")


@pytest.mark.parametrize(
    ("seat", "wigs", "refused"), [(0, 90, True), (2, 120, True), (1, 89, False)]
)
def test_a_folded_house_rule_adds_a_saved_game_check(
    folded: ModuleType, engine: ModuleType, seat: int, wigs: int, refused: bool
) -> None:
    for E, house in ((folded, True), (engine, False)):
        data = E.to_json(E.new_game(3, seed=seat))
        data["players"][seat]["wigs"] = wigs
        if not (house and refused):
            assert E.from_json(copy.deepcopy(data)) is not None
            continue
        with pytest.raises(E.StateError) as exc:
            E.from_json(data)
        color = data["players"][seat]["color"]
        assert exc.value.path == f"$.players[{seat}].wigs"
        assert str(exc.value) == (
            f"$.players[{seat}].wigs: {color} has {wigs} wigs: the house limit is 89"
        )


BAD = {
    "unknown field": ("holds: coins <= 40", "unknown-name"),
    "not a condition": ("holds: len(game.court)", "expr-type"),
    "a player's field over the game": ("holds: reis <= 40", "expr-type"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_broken_check_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    holds, code = BAD[name]
    each = "" if name == "a player's field over the game" else "        each: player\n"
    text = (
        HEAD.format(id="house-bad", title="A bad check")
        + "    checks:\n      - $add: true\n        id: bad\n"
        + each
        + f"        {holds}\n"
        + "        at: $.players\n        text: bad\n"
    )
    project = tmp_path / "p"
    project.mkdir()
    (project / "house-bad.yaml").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        assert main(["build", "--rules", str(ROOT / "rules"), "--house", "house-bad.yaml"]) == 1
    err = capsys.readouterr().err
    assert f"error[{code}]" in err, err
    assert "house-bad.yaml:" in err or "state.yaml:" in err, err
    assert not (project / "generated").exists()
