"""The SVG diagrams of the turn, the period end and the game end (emit.reference.diagrams).

Checked: plain SVG 1.1 that both Chromium and WeasyPrint draw (well-formed XML, a viewBox, an
explicit font size on every text, no foreignObject, script, style or CSS variable); drawn inline
in rules.html, linked from rules.md and written as files under reference/figures/; every box
is the data's own (each action, turn step, period-end step and trigger); a house rule that adds
a period-end step, or a changed number, changes the picture; labels are escaped.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.emit.reference import diagrams
from lisboa_rules.emit.reference.render import RULES_HTML, RULES_MD, build_document

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
HOUSE = ROOT / "examples" / "house-rules"
SVG = "{http://www.w3.org/2000/svg}"
NAMES = ("turn", "period-end", "game-end")


def _compile(rules: Path = RULES, variants: tuple[str, ...] = ()) -> pipeline.CompileResult:
    result = pipeline.compile_rules(rules, variants)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    return result


def _edited(tmp_path: Path, rel: str, old: str, new: str) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    path = target / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return target


def _figures(files: dict[str, str]) -> dict[str, str]:
    return {Path(k).stem: v for k, v in files.items() if k.startswith("reference/figures/")}


def _texts(svg: str) -> str:
    """The words an SVG draws, tspans joined by spaces (a wrapped label reads whole)."""
    root = ET.fromstring(svg[svg.index("<svg"):])
    return " ".join(" ".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def base() -> pipeline.CompileResult:
    return _compile()


def test_three_figures_are_written_as_svg_files(base: pipeline.CompileResult) -> None:
    figs = _figures(base.files)
    assert sorted(figs) == sorted(NAMES)
    for name, svg in figs.items():
        assert "DO NOT EDIT" in svg[:400], name
        root = ET.fromstring(svg[svg.index("<svg"):])
        assert root.tag == f"{SVG}svg" and root.get("version") == "1.1", name
        assert re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox") or ""), name


@pytest.mark.parametrize("name", NAMES)
def test_plain_svg_that_every_printer_draws(base: pipeline.CompileResult, name: str) -> None:
    svg = _figures(base.files)[name]
    root = ET.fromstring(svg[svg.index("<svg"):])
    tags = {el.tag.removeprefix(SVG) for el in root.iter()}
    # the aid's icons are groups (`g`, placed with a transform) of the same plain shapes
    assert tags <= {"svg", "title", "rect", "path", "circle", "g", "text", "tspan"}, tags
    assert "foreignObject" not in svg and "<script" not in svg and "<style" not in svg
    assert "var(" not in svg and "style=" not in svg
    texts = list(root.iter(f"{SVG}text"))
    assert texts and all(re.fullmatch(r"\d+(\.\d+)?", t.get("font-size") or "") for t in texts)


def test_drawn_inline_in_the_html_and_linked_from_the_markdown(
        base: pipeline.CompileResult) -> None:
    html, md = base.files[RULES_HTML], base.files[RULES_MD]
    for name in NAMES:
        svg = _figures(base.files)[name]
        inline = svg[svg.index("<svg"):]
        assert inline in html, name
        assert f"](figures/{name}.svg)" in md, name
    assert "<img" not in html


def test_every_box_is_the_datas_own(base: pipeline.CompileResult) -> None:
    assert base.compiled is not None
    m = base.compiled.base.model
    figs = {k: _squash(_texts(v)) for k, v in _figures(base.files).items()}
    numbered = [a for a in m.actions if a.number is not None]
    assert numbered
    for a in numbered:
        assert a.name in figs["turn"], a.name
    for t in m.value("flow", "turn"):
        assert t["name"] in figs["turn"], t["name"]
    for s in m.period_end:
        assert s.rule.title in figs["period-end"], s.id
    for sc in m.scoring:
        assert sc.name in figs["game-end"], sc.name
    ends = {"period": figs["period-end"], "game": figs["game-end"]}
    for tr in m.triggers:
        assert all(f"{p}" in ends[tr.ends] for p in tr.periods)


def test_a_house_rule_that_adds_a_period_end_step_draws_it(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    shutil.copy(HOUSE / "period-tax.yaml", rules / "variants" / "period-tax.yaml")
    before = _squash(_texts(_figures(_compile(rules).files)["period-end"]))
    result = _compile(rules, ("period-tax",))
    assert result.compiled is not None
    new = [s for s in result.compiled.base.model.period_end if s.id == "period-end.tax"]
    assert new
    after = _squash(_texts(_figures(result.files)["period-end"]))
    assert new[0].rule.title in after and new[0].rule.title not in before
    assert len(re.findall(r"\b\d+\. ", after)) == len(re.findall(r"\b\d+\. ", before)) + 1


@pytest.mark.parametrize(("rel", "old", "new", "figure", "want"), [
    ("flow.yaml", "extra_rounds: 1", "extra_rounds: 3", "game-end", "(3 of 3)"),
    ("flow.yaml", "name: Refill your hand", "name: Draw back up", "turn", "Draw back up"),
    ("court.yaml", "name: Sell Goods", "name: Sell Wares", "turn", "Sell Wares"),
    ("flow.yaml", "    condition: empty_display_piles >= piles\n    params: {piles: 3}\n    "
     "ranges: {piles: [1, count(components.display.piles)]}\n    text: >-\n      The first",
     "    condition: empty_display_piles >= piles\n    params: {piles: 1}\n    "
     "ranges: {piles: [1, count(components.display.piles)]}\n    text: >-\n      The first",
     "period-end", "1"),
])
def test_a_changed_name_or_number_changes_the_picture(
        tmp_path: Path, rel: str, old: str, new: str, figure: str, want: str) -> None:
    before = _squash(_texts(_figures(_compile().files)[figure]))
    after = _squash(_texts(_figures(_compile(_edited(tmp_path, rel, old, new)).files)[figure]))
    if want.isdigit():  # a number: it stands once more in the picture than before
        assert len(re.findall(rf"\b{want}\b", after)) > len(re.findall(rf"\b{want}\b", before))
    else:
        assert want in after and want not in before


def test_labels_are_escaped(tmp_path: Path) -> None:
    rules = _edited(tmp_path, "court.yaml", "name: Sell Goods", "name: 'Sell <b>Goods</b> & \"x\"'")
    svg = _figures(_compile(rules).files)["turn"]
    assert "<b>" not in svg and "&lt;b&gt;Goods&lt;/b&gt;" in svg  # (the label may wrap anywhere)
    assert "&amp;" in svg and "&#34;x&#34;" in svg
    ET.fromstring(svg[svg.index("<svg"):])  # still well-formed


def test_wrap_keeps_every_word_and_fits_the_width() -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    for width in (40.0, 90.0, 200.0):
        lines = diagrams.wrap(text, width, 10)
        assert " ".join(lines) == text
        room = int(width / (10 * diagrams.CHAR))
        assert all(len(line) <= room or " " not in line for line in lines)


def test_the_document_carries_the_figures(base: pipeline.CompileResult) -> None:
    assert base.compiled is not None
    doc = build_document(base.compiled, base.files["lisboa_engine.py"])
    assert [f.file for f in doc.figures] == [f"figures/{n}.svg" for n in NAMES]


def test_the_figures_draw_the_aids_icons_where_they_show_their_terms(
        base: pipeline.CompileResult) -> None:
    """An action's box shows the icons of the cards it plays, an end's trigger the icons of
    what its condition counts: the same icons as the player aid (drawn from rules/)."""
    assert base.compiled is not None
    m = base.compiled.base.model
    figs = _figures(base.files)
    icons = m.data["vocabulary"]["icons"]

    def titles(svg: str) -> set[str]:
        return set(re.findall(r"<g transform=[^>]*><title>([^<]+)</title>", svg))

    for a in m.actions:
        if a.number is not None:
            terms = {str(i["term"]) for i in icons if a.id in i["of"]}
            assert terms and terms <= titles(figs["turn"]), a.id
    for t in m.triggers:
        terms = {str(i["term"]) for i in icons
                 if "term" in i and set(i["of"]) & set(t.condition.names)}
        name = "period-end" if t.ends == "period" else "game-end"
        assert terms <= titles(figs[name]), t.id
    assert any(titles(figs[n]) for n in ("period-end", "game-end"))
    aid = base.files["reference/player-aid.html"]  # drawn alike in the figures and the aid
    for svg in figs.values():
        for body in re.findall(r"<g transform=[^>]*><title>[^<]+</title>(.*?)</g>", svg):
            assert body in aid
