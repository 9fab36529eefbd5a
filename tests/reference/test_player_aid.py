"""The player aid: one double-sided A4 sheet (two printed pages at most) from the model.

Checked, for the standard game and with house rules folded in (a fourth Noble, a new period-end
step): the aid names the turn's steps, every action of the turn and its cost, every Noble with
the names of its State actions and Noble action, the end triggers and every scoring source and
table, all read from the compiled model; it cites nothing that is not on it (no assumption mark,
no link); its templates name nothing of the game. In Chromium it prints on at most two A4 (or
Letter) pages, names every action and Noble there, and splits no box across pages.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_browser import _print, _split_elements, browser  # noqa: F401

from lisboa_rules import pipeline
from lisboa_rules.cli.reference import with_paper
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
def test_the_aid_cites_nothing_that_is_not_on_it(tmp_path: Path, variants: tuple[str, ...]) -> None:
    files = _compile(tmp_path, variants).files
    html, md = files[AID_HTML], files[AID_MD]
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    for href in re.findall(r'href="([^"]*)"', html):
        assert href.startswith("#") and href[1:] in ids, href
    assert "<sup" not in html and "†" not in html
    assert "†" not in md and not re.search(r"\]\((?!#)", md)
    for target in re.findall(r"\]\(#([^)]+)\)", md):
        assert f'<a id="{target}"></a>' in md, target


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
