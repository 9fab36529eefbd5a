"""The player aid: one double-sided A4 sheet (two printed pages) from the model, read at a glance.

Checked, for the standard game and with house rules folded in (a fourth Noble, a new period-end
step): the aid names the turn's steps, every action of the turn and its cost (each cost once,
beside its action), every Noble with the names of its State actions and Noble action, the end
triggers (saying that the period or the game ends) and every scoring source and table, all read
from the compiled model; the icons (rules/vocabulary.yaml `icons:`) with their key, one meaning
each, a Noble's default icon and a declared one, the icons' located errors; every assumed value
marked and explained on the sheet itself, no link leaving it; its templates name nothing of the
game. In Chromium it prints on two A4 (and Letter) pages, each with two columns filled to nine
tenths, no heading parted from its text, no box split across pages; detector tests show that
the fill and heading checks fail on pages that break them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_browser import _columns, _print, _split_elements, browser  # noqa: F401

from lisboa_rules import pipeline
from lisboa_rules.cli.reference import with_paper
from lisboa_rules.emit.reference import icons
from lisboa_rules.emit.reference.render import AID_HTML, AID_MD
from lisboa_rules.model.types import Model
from lisboa_rules.outputs.pdftext import read_pdf

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
HOUSE = ROOT / "examples" / "house-rules"
TEMPLATES = ROOT / "lisboa_rules" / "templates" / "reference"
A4 = (595.28, 841.89)
LETTER = (612.0, 792.0)
SETS = [(), ("fourth-noble",), ("period-tax",)]


def _compile(tmp_path: Path, variants: tuple[str, ...]) -> pipeline.CompileResult:
    rules = RULES
    if variants:
        rules = tmp_path / "rules"
        shutil.copytree(RULES, rules)
        for v in variants:
            shutil.copy(HOUSE / f"{v}.yaml", rules / "variants" / f"{v}.yaml")
    result = pipeline.compile_rules(rules, variants)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    return result


def _model(result: pipeline.CompileResult) -> Model:
    assert result.compiled is not None
    return result.compiled.base.model


def _text(html: str) -> str:
    body = html[html.index("<body"):]
    return " ".join(re.sub(r"<[^>]+>", " ", body).replace("&#39;", "'").split())


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _names(m: Model) -> list[str]:
    """What the aid must name: the turn's steps, the actions of the turn, every Noble and its
    State and Noble actions, the end procedures, the scoring sources and their tables' groups."""
    rules = {r.id: r for r in m.rules}
    sas = {a.id: a.name for a in m.state_actions}
    nas = {a.id: a.name for a in m.noble_actions}
    out = [rules[str(t["id"])].title for t in m.value("flow", "turn")]
    out += [a.name for a in m.actions if a.number is not None]
    for n in m.nobles:
        out += [n.name, *(sas[s] for s in n.state_actions), nas[n.noble_action]]
    out += [s.rule.title for s in m.period_end]
    out += [rules[str(m.value("flow", k, "id"))].title for k in ("period_end", "game_end")]
    for s in m.scoring:
        out += [s.name, *(g.name for g in s.groups)]
    return out


@pytest.mark.parametrize("variants", SETS, ids=lambda v: "+".join(v) or "standard")
def test_the_aid_names_everything_of_the_model(tmp_path: Path, variants: tuple[str, ...]) -> None:
    result = _compile(tmp_path, variants)
    m = _model(result)
    text = _text(result.files[AID_HTML])
    md = result.files[AID_MD].replace("\\", "")
    for name in _names(m):
        assert name in text, name
        assert name in md, name
    costs = {c.id: c for c in m.costs}
    for a in m.actions:  # what each action costs stands at it
        if a.number is not None and a.cost:
            start = text.index(f"{a.number}. {a.name}")
            assert costs[a.cost].name in text[start:start + 2000], a.name
    for t in m.triggers:
        assert all(f"Period {p}" in text or str(p) in text for p in t.periods)


def test_a_fourth_noble_is_on_the_aid(tmp_path: Path) -> None:
    base = _model(_compile(tmp_path / "a", ()))
    four = _model(_compile(tmp_path / "b", ("fourth-noble",)))
    added = [n for n in four.nobles if n.id not in {b.id for b in base.nobles}]
    assert len(added) == 1
    html = _compile(tmp_path / "c", ("fourth-noble",)).files[AID_HTML]
    assert added[0].name in _text(html)
    assert html.count('<div class="aid-card">') == \
        len(four.nobles) + len([a for a in four.actions if a.number is not None])


@pytest.mark.parametrize("variants", SETS, ids=lambda v: "+".join(v) or "standard")
def test_the_aid_marks_what_it_assumes_and_cites_only_itself(
        tmp_path: Path, variants: tuple[str, ...]) -> None:
    """Every value the rules assume keeps its numbered mark, and each mark leads to the sheet's
    own note saying what is assumed (the Decrees' placeholder table is marked); no link leaves
    the sheet."""
    result = _compile(tmp_path, variants)
    m = _model(result)
    html, md = result.files[AID_HTML], result.files[AID_MD]
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    for href in re.findall(r'href="([^"]*)"', html):
        assert href.startswith("#") and href[1:] in ids, href
    assert "†" not in html and "†" not in md and not re.search(r"\]\((?!#)", md)
    for target in re.findall(r"\]\(#([^)]+)\)", md):
        assert f'<a id="{target}"></a>' in md, target
    numbers = {a.id: i + 1 for i, a in enumerate(m.assumptions)}
    marked = set(re.findall(r'<sup class="note"><a href="#note-(\d+)"', html))
    assert marked and marked == set(re.findall(r'<li value="(\d+)" id="note-\d+"', html))
    decrees = str(numbers[m.value("components", "decrees_assumptions")[0]])
    scoring = html[html.index('id="aid-scoring"'):]
    mark = f'<sup class="note"><a href="#note-{decrees}"'
    assert re.search(rf'<h3>[^<]*(<span class="v"></span>)?{mark}', scoring)
    note = re.search(rf'id="note-{decrees}">([^<]*)</li>', html)
    assert note is not None and note.group(1).split()[:2] == \
        m.assumptions[int(decrees) - 1].value.split()[:2]


def test_each_cost_stands_once_beside_its_action_and_no_step_has_a_checkbox(
        tmp_path: Path) -> None:
    result = _compile(tmp_path, ())
    m = _model(result)
    html, md = result.files[AID_HTML], result.files[AID_MD]
    text = _text(html)
    for c in m.costs:
        assert html.count(f"<b>{c.name}:</b>") == 1, c.name
        assert md.count(f"**{c.name}:**") == 1, c.name
    for a in m.actions:  # its cost is printed inside its own card
        if a.number is not None and a.cost:
            card = html[html.index(f"{a.number}. {a.name}"):]
            card = card[:card.index('<div class="aid-card">') if '<div class="aid-card">' in card
                        else len(card)]
            assert f"<b>{next(c.name for c in m.costs if c.id == a.cost)}:</b>" in card
    assert "☐" not in html and "☐" not in md and "[ ]" not in md
    assert "<ol class=\"steps\">" in html and "ol.check" not in html
    for kind in {t.ends for t in m.triggers}:  # each end says that it ends, and when
        assert re.search(rf"The {kind} ends at the end of the \w+ in which:|The end of the "
                         rf"{kind} is triggered in the \w+ in which:", text), kind
    # the game goes on for a round after its trigger's (rules/flow.yaml extra_rounds): its
    # trigger's round is not said to be the last one
    assert "The end of the game is triggered in the round in which:" in text
    assert "The game ends at the end of the round in which" not in text
    assert "then play 1 more full round" in text


def test_a_variant_callout_stands_with_the_action_it_changes(tmp_path: Path) -> None:
    """A variant's callout at a Noble's action (its `rule:`) is printed in that Noble's box,
    right after what the box says of that action: row E with Build a Store, the Queen with
    Take a Decree; not together at the end of the Nobles, under the last Noble."""
    result = _compile(tmp_path, ())
    m = _model(result)
    assert result.compiled is not None
    md, html = result.files[AID_MD], result.files[AID_HTML]
    section = md[md.index('<a id="aid-nobles"></a>'):]
    section = section[:section.index("\n<a id=")]
    boxes = {n.id: section[section.index(f"**{n.name}**"):] for n in m.nobles}
    for n in m.nobles:  # each box up to the next one
        later = [boxes[n.id].index(f"**{o.name}**") for o in m.nobles
                 if o.id != n.id and f"**{o.name}**" in boxes[n.id]]
        boxes[n.id] = boxes[n.id][:min(later, default=len(boxes[n.id]))]
    actions = {a.rule.id: (a.name, n) for n in m.nobles for a in
               (*m.state_actions, *m.noble_actions)
               if a.id in n.state_actions or a.id == n.noble_action}
    placed = 0
    for v in result.compiled.variants:
        for c in v.callouts:
            if c.rule not in actions:
                continue
            name, noble = actions[c.rule]
            blocks = boxes[noble.id].split("\n\n")
            # the action each of the box's callouts of this variant follows
            follows = [next(b for b in reversed(blocks[:i]) if re.match(
                r"- \*\*(State|Noble) action: ", b)) for i, b in enumerate(blocks)
                if b.startswith(f"> **◆ {v.title}:**")]
            assert any(f" action: {name}:**" in f for f in follows), (c.rule, follows)
            # in the HTML too: inside the Noble's box, after the action's line
            card = html[html.index(f"<span>{noble.name}"):]
            card = card[:card.index("</div>")]
            assert card.index(f"{name}:</b>") < card.index(f'<span class="flag">{v.title}'), \
                c.rule
            placed += 1
    assert placed >= 2  # row E at Build a Store, the Queen at Take a Decree


def _icon_terms(html: str) -> list[str]:
    key = html[html.index('<div class="key"'):]
    key = key[:key.index("</div>")]
    return re.findall(r'<svg class="icon"[^>]*aria-label="([^"]+)"', key)


@pytest.mark.parametrize("variants", SETS, ids=lambda v: "+".join(v) or "standard")
def test_the_key_lists_every_icon_the_sheet_draws_each_with_one_meaning(
        tmp_path: Path, variants: tuple[str, ...]) -> None:
    result = _compile(tmp_path, variants)
    m = _model(result)
    html = result.files[AID_HTML]
    key = _icon_terms(html)
    assert len(key) == len(set(key))  # one meaning each
    drawn = set(re.findall(r'<svg class="icon"[^>]*aria-label="([^"]+)"', html))
    assert drawn == set(key)
    for n in m.nobles:  # every Noble and every good has its icon, in the key and at him
        assert n.name in key, n.name
        card = html[html.index(f"<span>{n.name}"):][:3000]
        for g in n.trade_goods:
            assert f'aria-label="{next(b.name for b in m.businesses if b.id == g)}"' in card
    for b in m.businesses:
        assert b.name in key
    # the same term is drawn the same way wherever it stands
    svgs: dict[str, set[str]] = {}
    for svg in re.findall(r'<svg class="icon".*?</svg>', html):
        svgs.setdefault(re.findall(r'aria-label="([^"]+)"', svg)[0], set()).add(svg)
    assert all(len(v) == 1 for v in svgs.values())


def test_a_noble_without_an_icon_gets_the_default_and_a_declared_one_is_drawn(
        tmp_path: Path) -> None:
    four = _compile(tmp_path / "a", ("fourth-noble",))
    m = _model(four)
    base = {n.id for n in _model(_compile(tmp_path / "b", ())).nobles}
    added = next(n for n in m.nobles if n.id not in base)
    html = four.files[AID_HTML]
    assert added.name in _icon_terms(html)
    svg = re.search(rf'<svg class="icon"[^>]*aria-label="{re.escape(added.name)}".*?</svg>', html)
    assert svg is not None and f">{added.name[0].upper()}</text>" in svg.group()
    assert "#ffffff" in svg.group()  # the default: a white circle with his initial
    # a house rule that declares his icon: drawn as declared
    rules = tmp_path / "c" / "rules"
    shutil.copytree(RULES, rules)
    shutil.copy(HOUSE / "fourth-noble.yaml", rules / "variants" / "fourth-noble.yaml")
    (rules / "variants" / "his-icon.yaml").write_text(
        "kind: variant\nid: his-icon\ntitle: His icon\napplies: chosen\n"
        "text: The fourth Noble's icon.\nsource: [facts:§8]\nchanges:\n  vocabulary:\n"
        "    icons:\n      - {$add: true, id: fourth, shape: shield, fill: '#123456', "
        f"stroke: '#654321', glyph: Z, of: [{added.id}]}}\n", encoding="utf-8")
    result = pipeline.compile_rules(rules, ("fourth-noble", "his-icon"))
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    html = result.files[AID_HTML]
    svg = re.search(rf'<svg class="icon"[^>]*aria-label="{re.escape(added.name)}".*?</svg>', html)
    assert svg is not None and "#123456" in svg.group() and ">Z</text>" in svg.group()


@pytest.mark.parametrize(("entry", "code", "message"), [
    ("{id: x, term: X, shape: circle, fill: '#000000', stroke: '#000000', of: [wigz]}",
     "unknown-reference", "unknown name, Noble, business or action 'wigz'"),
    ("{id: x, term: X, shape: circle, fill: '#000000', stroke: '#000000', of: [wigs]}",
     "duplicate-id", "'wigs' has two icons"),
    ("{id: x, shape: circle, fill: '#000000', stroke: '#000000', of: [ships]}",
     "missing-text", "icon 'x' has no `term`"),
    ("{id: wig, term: X, shape: circle, fill: '#000000', stroke: '#000000', of: [plaza]}",
     "duplicate-id", "icon 'wig' is defined twice"),
])
def test_a_wrong_icon_is_a_located_error(tmp_path: Path, entry: str, code: str,
                                         message: str) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    path = rules / "vocabulary.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("\nglossary:", f"\n  - {entry}\nglossary:", 1)  # the last icon
    path.write_text(text, encoding="utf-8")
    line = text[:text.index(entry)].count("\n") + 1
    result = pipeline.compile_rules(rules)
    found = [d for d in result.diagnostics if d.code == code and message in d.message]
    assert found, [f"{d.code}: {d.message}" for d in result.diagnostics]
    assert found[0].span is not None and found[0].span.line == line


def test_the_shapes_drawn_are_the_schemas() -> None:
    schema = json.loads((ROOT / "lisboa_rules" / "front" / "schema" /
                         "vocabulary.schema.json").read_text(encoding="utf-8"))
    enum = schema["properties"]["icons"]["items"]["properties"]["shape"]["enum"]
    assert sorted(enum) == sorted(icons.SHAPES)
    for shape in enum:  # each a few plain SVG elements, coloured by the icon
        art = icons.body(icons.Icon("x", "X", shape, "#010203", "#040506", "", "Q"))
        assert "#010203" in art and "#040506" in art and ">Q</text>" in art
    with pytest.raises(ValueError):
        icons.body(icons.Icon("x", "X", "circle", "red;x", "#000000"))


def test_the_aid_templates_name_nothing_of_the_game() -> None:
    m = _model(pipeline.compile_rules(RULES))
    words = [w for w in _names(m) if len(w) > 3]
    for path in TEMPLATES.glob("player-aid.*.jinja"):
        text = path.read_text(encoding="utf-8")
        for w in words:
            assert w not in text, (path.name, w)


# --- printed by Chromium -------------------------------------------------------------------------

def _printed(chromium: Any, tmp_path: Path, html: str) -> list[tuple[tuple[float, float], str]]:
    path = tmp_path / "player-aid.html"
    path.write_text(html, encoding="utf-8")
    return read_pdf(_print(chromium, path))


@pytest.mark.browser
@pytest.mark.parametrize("variants", SETS, ids=lambda v: "+".join(v) or "standard")
def test_the_aid_prints_on_one_sheet_and_names_every_action_and_noble(
        browser: Any, tmp_path: Path, variants: tuple[str, ...]) -> None:  # noqa: F811
    result = _compile(tmp_path, variants)
    m = _model(result)
    printed = _printed(browser, tmp_path, result.files[AID_HTML])
    assert 1 <= len(printed) <= 2
    for (w, h), _ in printed:
        assert abs(w - A4[0]) < 1.5 and abs(h - A4[1]) < 1.5
    text = _squash(" ".join(t for _, t in printed))
    for a in m.actions:
        if a.number is not None:
            assert _squash(a.name) in text, a.name
    for n in m.nobles:
        assert _squash(n.name) in text, n.name
    for s in m.scoring:
        assert _squash(s.name) in text, s.name


@pytest.mark.browser
def test_the_aid_prints_on_one_letter_sheet(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    html = with_paper(pipeline.compile_rules(RULES).files[AID_HTML], "letter")
    printed = _printed(browser, tmp_path, html)
    assert 1 <= len(printed) <= 2
    assert all(abs(w - LETTER[0]) < 1.5 and abs(h - LETTER[1]) < 1.5 for (w, h), _ in printed)


@pytest.mark.browser
def test_no_box_of_the_aid_is_split(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "player-aid.html"
    path.write_text(_compile(tmp_path, ("fourth-noble",)).files[AID_HTML], encoding="utf-8")
    count, split, found = _split_elements(browser, path)
    assert count > 20 and found == count
    assert split == []


# --- the sheet's columns and headings, printed -------------------------------------------------

FILL = 0.9  # no column more than a tenth empty


@pytest.mark.browser
@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_each_side_fills_its_two_columns_and_keeps_headings_with_their_text(
        browser: Any, paper: str) -> None:  # noqa: F811
    """The standard game's sheet, printed on A4 and on Letter: two pages, each with two columns
    filled to at least nine tenths of the page (from its top to the column's last block), and
    no heading parted from what follows it (same page, same column, right under it)."""
    html = with_paper(pipeline.compile_rules(RULES).files[AID_HTML], paper)
    fills, parted, pages = _columns(browser, html)
    assert pages == 2, fills
    assert all(len(cols) == 2 for cols in fills), fills
    assert all(f >= FILL for cols in fills for f in cols), fills
    assert parted == []


EXAMPLES = [(p.stem,) for p in sorted(HOUSE.glob("*.yaml"))]


@pytest.mark.browser
@pytest.mark.sampled(3)
@pytest.mark.parametrize("variants", EXAMPLES, ids=lambda v: "+".join(v))
def test_a_house_rule_sheet_fills_its_columns_and_keeps_its_headings_with_their_text(
        browser: Any, tmp_path: Path, variants: tuple[str, ...]) -> None:  # noqa: F811
    """A house rule changes what the sheet holds (a Noble more, a step more): the compiler
    sizes the type again, so it still fills its two sides and no more."""
    html = _compile(tmp_path, variants).files[AID_HTML]
    for paper in ("a4", "letter"):
        fills, parted, pages = _columns(browser, with_paper(html, paper))
        assert pages == 2 and all(len(cols) == 2 for cols in fills), (paper, fills)
        assert all(f >= FILL for cols in fills for f in cols), (paper, fills)
        assert parted == [], paper


_SHEET = ("<!DOCTYPE html><meta charset=utf-8><style>@page{size:A4;margin:10mm}"
          "body{margin:0}.cols{columns:2;column-fill:balance}"
          "p{margin:0;font:10px/15px serif}h2{margin:0;font:bold 14px/20px sans-serif;"
          "break-after:avoid}</style>"
          "<div class=cols>BODY</div>")
_LINE = "<p>one line</p>"
_COLUMN = 68  # lines of 15px in a column of A4 less 2 x 10mm (1047px)


@pytest.mark.browser
def test_the_fill_check_sees_a_column_left_empty(browser: Any) -> None:  # noqa: F811
    fills, _, pages = _columns(browser, _SHEET.replace("BODY", _LINE * 2 * _COLUMN))
    assert pages == 1 and len(fills[0]) == 2 and min(fills[0]) >= FILL, fills
    short = _SHEET.replace("BODY", _LINE * _COLUMN + "<p style='break-before:column'>x</p>"
                           + _LINE * 20)  # the second column two thirds empty
    fills, _, _ = _columns(browser, short)
    assert len(fills[0]) == 2 and fills[0][0] >= FILL and fills[0][1] < 0.4, fills
    few = _SHEET.replace("BODY", _LINE * 40)  # two columns a third full
    fills, _, _ = _columns(browser, few)
    assert len(fills[0]) == 2 and max(fills[0]) < 0.4, fills


@pytest.mark.browser
def test_the_heading_check_sees_a_heading_parted_from_its_text(browser: Any) -> None:  # noqa: F811
    kept = _SHEET.replace("BODY", _LINE * 30 + "<h2>Heading</h2>" + _LINE * 30)
    _, parted, _ = _columns(browser, kept)
    assert parted == []
    # a heading at the foot of a column, its text forced into the next column; the next page
    apart = _SHEET.replace("BODY", _LINE * 30 + "<h2>Heading</h2>"
                           "<p style='break-before:column'>next</p>" + _LINE * 10)
    _, parted, _ = _columns(browser, apart)
    assert len(parted) == 1, parted
    paged = apart.replace("break-before:column", "break-before:page").replace(
        "columns:2", "columns:auto")  # one column: the text forced onto the next page
    _, parted, pages = _columns(browser, paged)
    assert pages == 2 and len(parted) == 1, parted


def test_the_readme_shows_the_printed_aid() -> None:
    """The README shows both sides of the printed aid, a modest picture that
    tools/aid_picture.py remakes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/player-aid.png)" in readme and "tools/aid_picture.py" in readme
    picture = ROOT / "docs" / "player-aid.png"
    data = picture.read_bytes()
    assert data.startswith(b"\x89PNG") and 20_000 < len(data) < 300_000
    assert (ROOT / "tools" / "aid_picture.py").exists()
