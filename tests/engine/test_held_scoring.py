"""A house-rule scoring source of the generic `held` kind, written in YAML alone: each item a
player holds in a list field of rules/state.yaml scores the points its table row shows (when
the row's condition holds, if the source names a condition column). The generated engine
scores it, with the explanation in the data's words, the reference interpreter (tools/)
agrees, and a held source that names an unknown field, table or column is a located error."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from lisboa_rules import pipeline
from tools import interp

ROOT = Path(__file__).resolve().parents[2]


def _variant(name: str, source: str) -> str:
    return f"""\
kind: variant
id: {name}
title: A house rule
applies: chosen
text: A house-rule scoring source.
source: [seed:000#endgame-scoring]
changes:
  scoring:
    sources:
      - $add: true
{source}"""


# (variant, the source's lines, the player field it reads, the item table's points column)
HOUSE = {
    # each completed Plan scores the Officials it shows
    "house-built": (
        """\
        id: score.built
        name: Plans built
        short: Their Officials
        kind: held
        held: completed_plans
        points: officials
        text: Each completed Plan scores the Officials it shows.
        source: [seed:000#endgame-scoring]
""",
        "completed_plans",
        "officials",
    ),
    # each Plan not yet completed scores its Officials too (placed first)
    "house-open": (
        """\
        $before: score.ships
        id: score.open
        name: Open Plans
        short: Their Officials
        kind: held
        held: plans
        points: officials
        text: Each Plan you have not completed scores the Officials it shows.
        source: [seed:000#endgame-scoring]
""",
        "plans",
        "officials",
    ),
    # each Decree scores its wigs once more, fulfilled or not (no condition column)
    "house-owned": (
        """\
        id: score.owned
        name: Decrees owned
        short: Their wigs, fulfilled or not
        kind: held
        held: decrees
        points: wigs
        text: Each Decree you own scores the wigs it shows, fulfilled or not.
        source: [seed:000#endgame-scoring]
""",
        "decrees",
        "wigs",
    ),
}


def _engine(text: str, name: str) -> ModuleType:
    module = ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    return module


def _rules(tmp_path: Path, variants: dict[str, str]) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    for name, text in variants.items():
        (rules / "variants" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return rules


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, dict[Any, Any]]:
    """One engine with every house rule as a chosen variant, and the models by rule set."""
    tmp = tmp_path_factory.mktemp("held")
    rules = _rules(tmp, {n: _variant(n, src) for n, (src, _, _) in HOUSE.items()})
    result = pipeline.compile_rules(rules)
    assert result.ok and result.compiled is not None, [d.message for d in result.diagnostics]
    models = {rs.key: rs.model for rs in result.compiled.rulesets}
    return _engine(result.files["lisboa_engine.py"], "lisboa_engine_held"), models


def _rows(column: str) -> dict[Any, int]:
    """Each item's points, read from the table of rules/components.yaml that has `column`."""
    table = {"officials": "plans", "wigs": "decrees"}[column]
    data = yaml.safe_load((ROOT / "rules" / "components.yaml").read_text(encoding="utf-8"))
    return {row["id"]: row[column] for row in data[table]}


def _deal(g: Any, rng: random.Random) -> None:
    """Hand out random Plans (completed and not) and Decrees from the supplies."""
    for p in g.players:
        for _ in range(rng.randrange(0, 3)):
            if g.plan_supply:
                p.completed_plans.append(g.plan_supply.pop())
        for _ in range(rng.randrange(0, 3)):
            if g.plan_supply:
                p.plans.append(g.plan_supply.pop())
        for _ in range(rng.randrange(0, 3)):
            pool = g.decree_deck or g.decree_display
            if pool:
                p.decrees.append(pool.pop())


@pytest.mark.parametrize("name", sorted(HOUSE))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_held_source_written_in_yaml_scores(
    house: tuple[ModuleType, dict[Any, Any]], name: str, players: int
) -> None:
    E, models = house
    _, field, column = HOUSE[name]
    points = _rows(column)
    sid = next(
        s.id
        for s in models[(name,)].scoring
        if s.held == field and s.kind == "held" and s.id not in {"score.decrees"}
    )
    rng = random.Random(players * 31 + len(name))
    for trial in range(6):
        g = E.new_game(players, (name,), seed=trial)
        if trial:
            _deal(g, rng)
        sheet = E.final_scores(g)
        base = E.new_game(players, (), seed=trial)
        for attr in ("plans", "completed_plans", "decrees"):
            for p, q in zip(base.players, g.players, strict=True):
                setattr(p, attr, list(getattr(q, attr)))
        plain = E.final_scores(base)
        state = json.loads(E.dumps(g))
        ref = interp.score(models[g.rs.key], state)
        for seat, p in enumerate(g.players):
            lines = {ln.source: ln for ln in sheet.lines[seat]}
            held = getattr(p, field)
            want = sum(points[i] for i in held)
            assert lines[sid].points == want, (name, seat, held)
            # the other sources score as without the house rule, and the total adds it
            others = {s: ln.points for s, ln in lines.items() if s != sid}
            assert others == {ln.source: ln.points for ln in plain.lines[seat]}
            assert sheet.totals[seat] == plain.totals[seat] + want
            assert ref.by_source(seat)[sid] == want
            assert ref.totals[seat] == sheet.totals[seat]
            # the explanation: each item with its points, then the sum of several; none when
            # empty
            title = next(s.name for s in models[(name,)].scoring if s.id == sid)
            if held:  # each item by its name (its id humanized: "Plan 03" for plan-03)
                named = {it.id: it.name for src in g.rs.scoring if src.id == sid
                         for it in src.items}
                assert all(named[i] == i[:1].upper() + i[1:].replace("-", " ") for i in held)
                parts = "; ".join(f"{named[i]} {points[i]}" for i in held)
                sums = " + ".join(str(points[i]) for i in held)
                assert lines[sid].explanation == (f"{title}: {parts}; {sums} = {want}"
                                                  if len(held) > 1 else f"{title}: {parts}")
            else:
                assert lines[sid].explanation == f"{title}: none = 0"
        # the source sits where the YAML put it, and the sheet's JSON names the data's word
        order = [ln.source for ln in sheet.lines[0]]
        assert order.index(sid) == (0 if name == "house-open" else len(order) - 1)
        assert sheet.to_json()["players"][0]["sources"][0].keys() == {
            "source",
            "wigs",
            "explanation",
        }


BAD = [
    # an unknown player field, with a did-you-mean
    ("held: completed_plan\n", "points: officials\n", "unknown-reference", "completed_plans"),
    # a field that is no list
    ("held: reis\n", "points: officials\n", "unknown-reference", None),
    # a column some rows of the table lack (Treasury cards show no Influence)
    ("held: hand\n", "points: influence\n", "unknown-reference", None),
    # an unknown column, with a did-you-mean
    ("held: completed_plans\n", "points: oficials\n", "unknown-reference", "officials"),
]


@pytest.mark.parametrize(("held", "points", "code", "hint"), BAD)
def test_a_held_source_names_a_list_field_and_its_columns(
    tmp_path: Path, held: str, points: str, code: str, hint: str | None
) -> None:
    source = f"""\
        id: score.bad
        name: A bad source
        short: Nothing
        kind: held
        {held}        {points}        text: Nothing.
        source: [seed:000#endgame-scoring]
"""
    result = pipeline.compile_rules(_rules(tmp_path, {"house-bad": _variant("house-bad", source)}))
    assert not result.ok
    errors = [d for d in result.diagnostics if d.is_error]
    assert [d.code for d in errors] == [code], [d.message for d in errors]
    assert errors[0].span.file.endswith("house-bad.yaml")
    assert errors[0].suggestion == hint


@pytest.mark.parametrize("track", ["wig", "decrees", "color"])
def test_the_score_track_is_a_whole_number_field(tmp_path: Path, track: str) -> None:
    rules = _rules(tmp_path, {})
    path = rules / "scoring.yaml"
    text = path.read_text(encoding="utf-8")
    assert "\ntrack: wigs\n" in text
    path.write_text(text.replace("\ntrack: wigs\n", f"\ntrack: {track}\n"), encoding="utf-8")
    result = pipeline.compile_rules(rules)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [d.code for d in errors] == ["unknown-reference"], [d.message for d in errors]
    assert errors[0].span.file.endswith("scoring.yaml")
    assert errors[0].suggestion == ("wigs" if track == "wig" else errors[0].suggestion)


@pytest.mark.parametrize(
    ("of", "names", "hint"),
    [
        # the groups are business ids: each is named by its business
        ("business", ["Gold", "Books"], None),
        # no kind: the groups are named by the source
        (None, ["Goods kept", "Goods kept"], None),
        # an unknown kind, with a did-you-mean
        ("busines", None, "business"),
    ],
)
def test_majority_groups_are_named_by_the_kind_they_are(
    tmp_path: Path, of: str | None, names: list[str] | None, hint: str | None
) -> None:
    """A majority source's groups are named by the rows of the kind its `of` names (the
    data's words); without one, by the source; an unknown kind is a located error."""
    source = f"""\
        id: score.kept
        name: Goods kept
        short: Table
        kind: majority
{f"        of: {of}" if of else ""}
        groups:
          - {{id: gold, measure: stores.gold, table: [4, 2, 1]}}
          - {{id: books, measure: stores.books, table: [4, 2, 1]}}
        text: The most goods of a type.
        source: [seed:000#endgame-scoring]
"""
    rules = _rules(tmp_path, {"house-kept": _variant("house-kept", source)})
    result = pipeline.compile_rules(rules)
    errors = [d for d in result.diagnostics if d.is_error]
    if names is None:
        assert [d.code for d in errors] == ["unknown-reference"], [d.message for d in errors]
        assert errors[0].suggestion == hint
        return
    assert result.ok and result.compiled is not None, [d.message for d in errors]
    E = _engine(result.files["lisboa_engine.py"], f"lisboa_engine_kept_{of}")
    g = E.new_game(3, ("house-kept",), seed=3)
    for p, gold, books in zip(g.players, (2, 1, 0), (1, 3, 0), strict=True):
        p.stores["gold"], p.stores["books"] = gold, books
    line = next(ln for ln in E.final_scores(g).lines[0] if ln.source == "score.kept")
    assert line.explanation == (
        f"Goods kept: {names[0]}: 2, 1st = 4; {names[1]}: 1, 2nd = 2 = 4 + 2 = 6"
    )
    assert line.points == 6


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('type: "list[decree]", see: all, text: Decrees owned',
         'type: "list[decre]", see: all, text: Decrees owned'),
        ("{id: wigs, type: int, see: all, min: 0,", "{id: wigs, type: innt, see: all, min: 0,"),
    ],
)
def test_a_broken_field_is_reported_once_where_it_is_declared(
    tmp_path: Path, old: str, new: str
) -> None:
    """A held source's field or the score track whose declaration has an error of its own:
    the error is in rules/state.yaml, not repeated where scoring reads the field."""
    rules = _rules(tmp_path, {})
    path = rules / "state.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = pipeline.compile_rules(rules)
    errors = [d for d in result.diagnostics if d.is_error]
    assert any(d.span.file.endswith("state.yaml") for d in errors)
    # (a formula that reads the broken field is reported where it is, as before)
    assert not [
        d.message
        for d in errors
        if d.span.file.endswith("scoring.yaml") and d.code == "unknown-reference"
    ]
