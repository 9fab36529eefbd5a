"""The rules reference (Markdown, HTML, player aid): contents from the data, links, escaping,
worked examples that are the engine's, provenance, determinism, and the `pdf` command's fallback.

Fast and browser-free; the printed layout is checked in test_browser.py.
"""

from __future__ import annotations

import re
import shutil
import sys
import types
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules.cli import reference as reference_cli
from lisboa_rules.cli.main import main
from lisboa_rules.core.inputs import variant_handout
from lisboa_rules.emit import ENGINE, emit_engine
from lisboa_rules.emit.engine.procs import Lowered, lower
from lisboa_rules.emit.reference import render as reference
from lisboa_rules.emit.reference import words
from lisboa_rules.emit.reference.render import (
    AID_HTML,
    AID_MD,
    RULES_ANNOTATED_HTML,
    RULES_ANNOTATED_MD,
    RULES_HTML,
    RULES_MD,
    Document,
    VariantView,
    build_document,
    md_text,
)
from lisboa_rules.emit.reference.words import formula_steps, formula_words, plain_text
from lisboa_rules.model.compiled import Compiled
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


def _lowered(compiled: Compiled) -> Lowered:
    """The compiled rule sets' procedures lowered (the pass pipeline.py runs before emit)."""
    return lower([rs.model for rs in compiled.rulesets], compiled.names)


@pytest.fixture(scope="module")
def engine_source(compiled: Compiled) -> str:
    return emit_engine(compiled, _lowered(compiled))[ENGINE]


@pytest.fixture(scope="module")
def files(compiled: Compiled, engine_source: str) -> dict[str, str]:
    return reference.render(compiled, engine_source)


@pytest.fixture(scope="module")
def doc(compiled: Compiled, engine_source: str) -> Document:
    return build_document(compiled, engine_source)


def edited_rules(tmp_path: Path, edits: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of rules/ with exact text replacements (each must match once)."""
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    for rel, pairs in edits.items():
        path = target / rel
        text = path.read_text(encoding="utf-8")
        for old, new in pairs:
            assert text.count(old) == 1, f"{rel}: {old!r} found {text.count(old)} times"
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return target


def compile_ok(rules: Path) -> dict[str, str]:
    result = compile_rules(rules)
    assert result.ok, [f"{d.code}: {d.message}" for d in result.diagnostics]
    return result.files


class _Ids(HTMLParser):
    """Every element id, every #href, and the text inside each element with an id."""

    VOID = frozenset({"br", "meta", "img", "hr", "input", "link", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.text: dict[str, str] = {}
        self.open: list[tuple[str, str | None]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append(tag)
        if a.get("href", "") and str(a["href"]).startswith("#"):
            self.hrefs.append(str(a["href"])[1:])
        if tag in self.VOID:
            return
        ident = a.get("id")
        if ident:
            self.ids.append(ident)
            self.text[ident] = ""
        self.open.append((tag, ident))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        while self.open:
            t, _ = self.open.pop()
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, ident in self.open:
            if ident:
                self.text[ident] += data


def parse_html(html: str) -> _Ids:
    p = _Ids()
    p.feed(html)
    p.close()
    return p


def squash(text: str) -> str:
    return " ".join(text.split())


# --- structure: anchors, links, tags ---------------------------------------------------------


def test_outputs_are_both_editions_the_aid_a_handout_per_variant_and_the_figures(
        compiled: Compiled, files: dict[str, str]) -> None:
    figures = [f for f in files if f.startswith("reference/figures/")]
    assert figures and all(f.endswith(".svg") for f in figures)
    handouts = [variant_handout(v.id, fmt) for v in compiled.variants for fmt in ("md", "html")]
    assert sorted(f for f in files if f not in figures) == sorted(
        [RULES_MD, RULES_HTML, RULES_ANNOTATED_MD, RULES_ANNOTATED_HTML, AID_MD, AID_HTML,
         *handouts])


def test_every_rule_has_an_anchor_and_a_tag(compiled: Compiled, files: dict[str, str]) -> None:
    """The annotated edition tags every rule with its id; the players' edition keeps the
    anchors (links and the engine's refusals still land) but prints no id."""
    for rules_html, rules_md, tagged in ((RULES_ANNOTATED_HTML, RULES_ANNOTATED_MD, True),
                                         (RULES_HTML, RULES_MD, False)):
        html = parse_html(files[rules_html])
        md = files[rules_md]
        for r in compiled.base.model.rules:
            assert html.ids.count(r.id) == 1, r.id
            tag = f'<a class="tag" href="#{r.id}">{r.id}</a>'
            assert (tag in files[rules_html]) is tagged, (rules_html, r.id)
            assert md.count(f'<a id="{r.id}"></a>') == 1, r.id
            assert (f"`{r.id}`" in md) is tagged, (rules_md, r.id)


def test_ids_are_unique_and_every_link_lands(files: dict[str, str]) -> None:
    targets = {}
    pages_html = [RULES_HTML, RULES_ANNOTATED_HTML, AID_HTML,
                  *(p for p in files if p.endswith(".html") and "/variant-" in p)]
    pages_md = [RULES_MD, RULES_ANNOTATED_MD, AID_MD,
                *(p for p in files if p.endswith(".md") and "/variant-" in p)]
    for rel in pages_html:
        parsed = parse_html(files[rel])
        dupes = {i for i in parsed.ids if parsed.ids.count(i) > 1}
        assert not dupes, f"{rel}: duplicate ids {sorted(dupes)}"
        targets[Path(rel).name] = set(parsed.ids)
    for rel in pages_md:
        targets[Path(rel).name] = set(re.findall(r'<a id="([^"]+)"></a>', files[rel]))
    for rel in pages_html + pages_md:
        text = files[rel]
        links = re.findall(r'href="([^"]*)"', text) + re.findall(r"\]\(([^)\s]*#[^)\s]*)\)", text)
        assert links or rel in (AID_HTML, AID_MD), rel  # the aid links nowhere off the sheet
        for href in links:
            page, _, anchor = href.partition("#")
            assert anchor in targets[page or Path(rel).name], f"{rel}: {href} leads nowhere"


def test_rule_text_is_printed_with_values_filled_in(compiled: Compiled,
                                                   files: dict[str, str]) -> None:
    m = compiled.base.model
    html = parse_html(files[RULES_HTML])
    md = squash(files[RULES_MD].replace("\\", ""))
    for r in m.rules:
        if not r.text.strip():
            continue
        words = squash(plain_text(m, r))
        assert words in squash(html.text[r.id]), r.id
        assert words in md, r.id
    for f in (files[RULES_HTML], files[RULES_MD], files[AID_HTML], files[AID_MD]):
        assert not re.search(r"\{[a-z_]+(\.[a-z_0-9-]+)+(\|[a-z]+)?\}", f), "unfilled placeholder"


def test_contents_and_chapters(doc: Document, files: dict[str, str]) -> None:
    html = files[RULES_HTML]
    toc = html[html.index('<nav class="toc"'):html.index("</nav>")]
    for ch in doc.chapters:
        assert f'href="#{ch.id}"' in toc
        assert f'id="{ch.id}"' in html


def test_nobles_table_lists_state_and_noble_actions(compiled: Compiled,
                                                   files: dict[str, str]) -> None:
    m = compiled.base.model
    html = parse_html(files[RULES_HTML])
    names = {a.id: a.name for a in m.state_actions} | {a.id: a.name for a in m.noble_actions}
    for n in m.nobles:
        row = squash(html.text[f"nobles-{n.id}"])
        assert n.name in row and n.title in row
        for sa in n.state_actions:
            assert names[sa] in row
        assert names[n.noble_action] in row


def test_costs_in_words_with_a_computed_example(compiled: Compiled,
                                                files: dict[str, str]) -> None:
    m = compiled.base.model
    html = parse_html(files[RULES_HTML])
    shown = 0
    for c in m.costs:
        text = squash(html.text[c.id])
        assert formula_words(m, c.formula.source, dict(c.params)) in text
        worked = formula_steps(m, c.formula.source, dict(c.params), dict(c.example))
        if worked:  # a formula with something to compute shows its arithmetic
            assert re.search(re.escape(worked), text), c.id
            shown += 1
        else:  # one name: no "4 = 4"
            assert "Example" not in text, c.id
    assert shown >= 2


def test_visit_cost_example_is_computed(compiled: Compiled, files: dict[str, str]) -> None:
    # rules/court.yaml: modifier 1, 3 other Officials, 1 per Official, at least 0: cost 4
    html = parse_html(files[RULES_HTML])
    assert "1 + 1 × 3 = 4" in squash(html.text["visit-cost"])


def test_period_and_game_end_are_numbered_procedures(compiled: Compiled,
                                                     files: dict[str, str]) -> None:
    m = compiled.base.model
    html = files[RULES_HTML]
    section = html[html.index('id="period-end"'):]
    steps = section[section.index('<ol class="steps">'):section.index("</ol>")]
    assert [s.id for s in m.period_end] == re.findall(r'<li id="([^"]+)">', steps)
    md = files[RULES_MD]
    for i, s in enumerate(m.period_end, start=1):
        assert re.search(rf"^{i}\. <a id=\"{re.escape(s.id)}\"></a>", md, re.M), s.id
    assert 'id="game-end"' in html


def test_scoring_table_majorities_ties_and_tiebreakers(compiled: Compiled,
                                                       files: dict[str, str]) -> None:
    m = compiled.base.model
    md = files[RULES_MD]
    ids = {s.id for s in m.scoring}
    rows = [r for r in re.findall(r"^\| (\d+) \| \[([^\]]+)\]\(#([^)]+)\) \| (.*) \|$", md, re.M)
            if r[2] in ids]
    assert [(int(n), sid) for n, _, sid, _ in rows[: len(m.scoring)]] == \
        [(i, s.id) for i, s in enumerate(m.scoring, start=1)]
    names = m.value("scoring", "majority", "column_names")
    for src in m.scoring:
        for g in src.groups:
            assert f"| {md_text(g.name)} | " + " | ".join(str(v) for v in g.table) + " |" in md
        if src.groups:
            assert "| " + " | ".join(names) + " |" in md
    html = parse_html(files[RULES_HTML])
    assert "score.ties" in html.ids
    tb = squash(html.text["tiebreakers"])
    for t in m.tiebreakers:
        assert t.name in tb


def test_variant_callouts_stand_at_the_rules_they_change(compiled: Compiled,
                                                         files: dict[str, str]) -> None:
    html = parse_html(files[RULES_HTML])
    seen = 0
    for v in compiled.variants:
        for c in v.callouts:
            inside = squash(html.text[c.rule])
            assert v.title in inside and "all changes" in inside, (v.id, c.rule)
            seen += 1
    assert seen >= 2  # the 2-player and Queen callouts


def test_two_player_callout_uses_the_two_player_values(files: dict[str, str]) -> None:
    # rules/variants/two-player.yaml sets neutral_officials_per_office to 1 (base: 0); the
    # callout's placeholder must show the variant's value.
    html = parse_html(files[RULES_HTML])
    assert "With 2 players, 1 neutral Official sits" in squash(html.text["visit-cost"])


def test_redline_lists_every_change_of_every_variant(compiled: Compiled, doc: Document,
                                                     files: dict[str, str]) -> None:
    views = {b.id: b for ch in doc.chapters for b in ch.blocks if isinstance(b, VariantView)}
    html = parse_html(files[RULES_ANNOTATED_HTML])
    for v in compiled.variants:
        rs = next(r for r in compiled.rulesets if r.key == (v.id,))
        view = views[v.id]
        assert len(view.changes) == len(rs.changes) > 0
        page = squash(html.text[f"variant-{v.id}"])
        for row in view.changes:
            assert squash(row.after) in page
            assert squash("".join(p.text for p in row.what)) in page
    two = [r for r in views["two-player"].changes if "olumns" in r.what[0].text]
    assert two and two[0].before.count(",") == 2 and two[0].after.count(",") == 1


def test_flow_diagram_from_the_data(compiled: Compiled, files: dict[str, str]) -> None:
    m = compiled.base.model
    md = files[RULES_MD]
    block = md[md.index("```mermaid"):]
    block = block[:block.index("```", 3)]
    html = files[RULES_HTML]
    flow = html[html.index('<div class="flow"'):]
    for t in m.value("flow", "turn"):
        title = m.rule(t["id"])
        assert title is not None
        assert title.title in block
        assert f'href="#{t["id"]}"' in flow
    for s in m.period_end:
        assert s.rule.title in block and f'href="#{s.id}"' in flow
    assert "period-end" in flow and "game-end" in flow


def test_every_assumption_is_listed_with_value_and_reason(compiled: Compiled,
                                                          files: dict[str, str]) -> None:
    m = compiled.base.model
    html = parse_html(files[RULES_ANNOTATED_HTML])
    md = files[RULES_ANNOTATED_MD]
    for a in m.assumptions:
        # The stated value prints the data it restates through placeholders.
        value = "".join(s.text for s in words.segments(m, a.value, None))
        assert "{" not in value, value
        row = squash(html.text[f"assumption-{a.id}"])
        assert a.id in row and squash(value) in row and squash(a.reason) in row
        assert f'<a id="assumption-{a.id}"></a>' in md
        assert md_text(value) in md and md_text(a.reason) in md
    for d in m.differences:
        assert squash(d.text) in squash(html.text[f"difference-{d.id}"])
    for s, title in m.sources:
        assert title in html.text[re.sub(r"[^a-z0-9.]+", "-", f"source-{s}".lower()).strip("-")]


def test_assumed_values_are_marked(compiled: Compiled, files: dict[str, str]) -> None:
    html = files[RULES_ANNOTATED_HTML]
    parsed = parse_html(html)
    marks = set(re.findall(r'<sup class="as"><a href="#assumption-([^"]+)"', html))
    used = {a for r in compiled.base.model.rules for a in r.provenance.assumptions}
    assert used <= marks
    # a rule resting on an assumption carries its dagger at the rule
    for r in compiled.base.model.rules:
        for a in r.provenance.assumptions:
            assert f'href="#assumption-{a}"' in html[html.index(f'id="{r.id}"'):], r.id
    assert "assumption-officials-table" in parsed.ids


# --- worked examples: computed by the engine ---------------------------------------------------


def _engine(compiled: Compiled) -> types.ModuleType:
    name = "_test_reference_engine"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(emit_engine(compiled, _lowered(compiled))[ENGINE], ENGINE, "exec"),
             module.__dict__)
    finally:
        del sys.modules[name]
    return module


def _score(engine: Any, compiled: Compiled, players: list[dict[str, Any]]) -> Any:
    businesses = [b.id for b in compiled.base.model.businesses]
    game = engine.new_game(len(players))
    built = []
    for given in players:
        p = engine.Player(color=given["color"])
        p.stores = dict.fromkeys(businesses, 0)
        p.goods = dict.fromkeys(businesses, 0)
        for k, v in given.items():
            if k == "stores":
                p.stores.update(v)
            elif k != "color":
                setattr(p, k, v)
        built.append(p)
    game.players = built
    return engine.final_scores(game)


def _example(doc: Document, ident: str) -> Any:
    for ch in doc.chapters:
        for b in ch.blocks:
            for e in getattr(b, "examples", ()):
                if e.id == ident:
                    return e
            for child in getattr(b, "children", ()):
                for e in child.examples:
                    if e.id == ident:
                        return e
    raise AssertionError(f"no example {ident}")


def _wigs(example: Any, color: str, source: str) -> int:
    col = example.colors.index(color)
    return int(next(w for sid, _, w in example.rows if sid == source)[col])


def test_the_seed_examples_come_out_of_the_engine(doc: Document) -> None:
    # seed 000, "More examples": Green's size-2 and two size-3 ships score 8; Orange's 3 rubble
    # sets 9; Yellow's two Decrees 2 + 6 = 8; Green's King and Marquis favors 4.
    assert _wigs(_example(doc, "example.ships"), "Green", "score.ships") == 8
    assert _wigs(_example(doc, "example.rubble"), "Orange", "score.rubble") == 9
    decrees = _example(doc, "example.decrees")
    assert _wigs(decrees, "Yellow", "score.decrees") == 8
    yellow = dict(decrees.explanations)["Yellow"][0]
    assert re.search(r"\b2 \+ [^=]*\b6\b|decree-01 2 \+ decree-02 6", yellow), yellow
    # Green's one Decree, not fulfilled: its words alone, no sum of one number ("0 = 0")
    green = dict(decrees.explanations)["Green"][0]
    assert green.endswith("not fulfilled, 0") and " = " not in green, green
    assert _wigs(_example(doc, "example.favors"), "Green", "score.favors") == 4


def test_store_tie_example_shares_the_places(doc: Document) -> None:
    # Books prizes 9/6/3: Yellow and Green tied for most share (9 + 6) // 2 = 7 each.
    tie = _example(doc, "example.store-tie")
    assert "tied" in dict(tie.explanations)["Yellow"][0]
    yellow, green = _wigs(tie, "Yellow", "score.stores"), _wigs(tie, "Green", "score.stores")
    assert green == (9 + 6) // 2 and yellow == green + 3  # plus the only Gold store: 3


def test_two_player_example_runs_with_the_two_player_rules(doc: Document) -> None:
    ex = _example(doc, "example.two-player-majority")
    assert [v for v, _ in ex.variants] == ["two-player"]
    # Books 9/6/3 with the most and 3rd-most columns only: 9 and 3.
    assert _wigs(ex, "Green", "score.stores") == 3 + 6  # 3rd-most Books plus most Tools


def test_every_example_is_the_engines_score(compiled: Compiled, doc: Document,
                                            files: dict[str, str]) -> None:
    engine = _engine(compiled)
    m = compiled.base.model
    html = parse_html(files[RULES_HTML])
    assert m.examples
    for ex in m.examples:
        sheet = _score(engine, compiled, [dict(p) for p in ex.players])
        view = _example(doc, ex.id)
        for i, color in enumerate(sheet.colors):
            for line in sheet.lines[i]:
                if line.source in ex.show:
                    assert _wigs(view, color, line.source) == line.points
                    assert squash(line.explanation) in squash(html.text[ex.id])
        assert ex.id in html.text[ex.rule] or ex.id in html.ids


# --- the data drives the numbers ----------------------------------------------------------------


def test_a_changed_value_changes_the_reference(tmp_path: Path, files: dict[str, str]) -> None:
    rules = edited_rules(tmp_path, {
        "scoring.yaml": [("params: {wigs_per_set: 3}", "params: {wigs_per_set: 4}"),
                         ("table: [9, 6, 3]}\n      - {id: cloth",
                          "table: [11, 6, 3]}\n      - {id: cloth")],
        "court.yaml": [("params: {minimum: 0, per_official: 1}",
                        "params: {minimum: 0, per_official: 2}")],
    })
    changed = compile_ok(rules)
    md, before = changed[RULES_MD], files[RULES_MD]
    assert "| Books | 11 | 6 | 3 |" in md and "| Books | 11 | 6 | 3 |" not in before
    # the rubble example is re-scored by the engine: 3 sets x 4 wigs
    assert "Orange: Completed rubble sets: 4 × 3 = 12" in squash(md) or \
        re.search(r"\| \[Completed rubble sets\]\(#score\.rubble\) \| 0 \| 0 \| 12 \|", md)
    assert "1 + 2 × 3 = 7" in md  # the visit cost example: 1 + 2 per Official x 3
    assert "4 wigs for each of your completed rubble sets" in md
    assert "Each completed rubble set scores 4 wigs" in md
    aid = changed[AID_MD]
    # (the aid names a row's icons in words before it: "[Books, store] Books")
    assert re.search(r"\| (\[[^\]|]*\] )?Books \| 11 \| 6 \| 3 \|", aid) and "4 each" in aid


def test_hostile_strings_are_escaped(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script> | *b* [l](javascript:x) & `c` \\ # h'
    rules = edited_rules(tmp_path, {
        "nobles.yaml": [("name: Manuel da Maia", f"name: '{evil}'")],
        "game.yaml": [("title: Years and periods", "title: '# Years | <b>and</b> periods'")],
        "provenance.yaml": [
            ("reason: Only one weak source gives the accepted goods (facts §10, S10).",
             'reason: "first line\\n# second | line <img src=x onerror=alert(1)>"')],
        "flow.yaml": [("name: Play a card", "name: 'Play ``` a \"card\" -->|x|; end'")],
    })
    out = compile_ok(rules)
    html = out[RULES_HTML]
    assert "<script>" not in html and "<img" not in html and "<b>and</b>" not in html
    assert "&lt;script&gt;" in html
    assert "onerror" not in html.split("&lt;img")[0][-200:]
    md = out[RULES_MD]
    assert not re.search(r"(?<!\\)<(script|img|b>)", md), "raw HTML from data in Markdown"
    assert "\\<script\\>" in md and "\\| \\*b\\*" in md
    _tables_are_well_formed(md)
    mermaid = md[md.index("```mermaid") + 3:]
    mermaid = mermaid[:mermaid.index("```")]
    assert '"card"' not in mermaid and "-->|x|" not in mermaid and "#34;card#34;" in mermaid
    for rel in (AID_HTML, AID_MD):
        assert "<script>" not in out[rel]


def _unescaped_pipes(line: str) -> int:
    count = 0
    for m in re.finditer(r"(\\*)\|", line):
        if len(m.group(1)) % 2 == 0:
            count += 1
    return count


def _tables_are_well_formed(md: str) -> None:
    table: list[str] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {_unescaped_pipes(row) for row in table}
            assert len(widths) == 1, "ragged table:\n" + "\n".join(table)
            assert re.fullmatch(r"\|(-{3}\||-{2}:\|)+", table[1]), table[1]
            table = []


def test_markdown_tables_are_well_formed(files: dict[str, str]) -> None:
    for rel in (RULES_MD, AID_MD):
        _tables_are_well_formed(files[rel])


def test_md_escape_neutralises_markup() -> None:
    assert md_text("a|b") == "a\\|b"
    assert md_text("# head") == "\\# head"
    assert md_text("1. item") == "1\\. item"
    assert md_text("x\ny") == "x y"
    assert md_text("<b>&amp;</b>") == "\\<b\\>\\&amp;\\</b\\>"
    assert md_text("[a](b) *c* _d_ `e` \\") == "\\[a\\](b) \\*c\\* \\_d\\_ \\`e\\` \\\\"


def test_bad_callout_placeholder_fails_the_build_without_traceback(tmp_path: Path) -> None:
    rules = edited_rules(tmp_path, {"variants/two-player.yaml": [
        ("{game.start.neutral_officials_per_office}", "{game.start.nope}")]})
    result = compile_rules(rules)
    assert not result.ok and not result.files
    # The compiler checks callout text like rule text: a located error in the variant file.
    assert any(d.code == "unknown-placeholder" and d.span is not None
               and d.span.file.endswith("variants/two-player.yaml") for d in result.diagnostics)


def test_an_example_the_rules_no_longer_allow_is_a_located_error(tmp_path: Path) -> None:
    # Raising players.min to 3 makes the 2-player example impossible: the build refuses it at
    # the example's players, with a note at the player counts (issue 11: examples seat the
    # game's players).
    rules = edited_rules(tmp_path, {"game.yaml": [("  min: 2\n", "  min: 3\n")]})
    result = compile_rules(rules)
    errors = [d for d in result.diagnostics if d.is_error]
    assert result.compiled is None and not result.files
    assert [d.code for d in errors] == ["value-out-of-range"]
    assert "example.two-player-majority" in errors[0].message and "3 to 4" in errors[0].message
    assert errors[0].span is not None and errors[0].span.file.endswith("examples.yaml")
    assert any(r.span and r.span.file.endswith("game.yaml") for r in errors[0].related)


def test_no_examples_document_is_fine(tmp_path: Path) -> None:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    (target / "examples.yaml").unlink()
    out = compile_ok(target)
    assert 'class="example"' not in out[RULES_HTML]


# --- determinism and headers --------------------------------------------------------------------


def test_deterministic_with_a_do_not_edit_header(compiled: Compiled, engine_source: str,
                                                 files: dict[str, str]) -> None:
    assert reference.render(compiled, engine_source) == files
    for rel, text in files.items():
        head = text[:600]
        assert "DO NOT EDIT" in head and compiled.digest in head, rel
        assert not re.search(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", text), rel
        assert text.endswith("\n") and not text.endswith("\n\n")
        assert not re.search(r"[ \t]+$", text, re.M), rel
    assert files[RULES_HTML].startswith("<!DOCTYPE html>")


def test_html_is_standalone_a4_print_css(files: dict[str, str]) -> None:
    for rel in (RULES_HTML, AID_HTML):
        html = files[rel]
        assert not re.search(r"<(link|script)\b|\bsrc=", html), rel
        css = html[html.index("<style>"):html.index("</style>")]
        assert "size: A4" in css and "counter(page)" in css and "counter(pages)" in css
        assert "thead { display: table-header-group; }" in css
        assert "tr { break-inside: avoid; }" in css


# --- the pdf command -----------------------------------------------------------------------------


def test_pdf_without_a_backend_says_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(reference_cli, "_weasyprint", lambda: None)
    monkeypatch.setattr(reference_cli, "find_chromium", lambda: None)
    assert main(["pdf", "--rules", str(RULES), "--out", str(tmp_path / "dist")]) == 2
    err = capsys.readouterr().err
    assert "no PDF back end" in err and "chromium" in err and "weasyprint" in err.lower()
    assert not (tmp_path / "dist").exists()


def test_pdf_uses_the_chosen_printer_and_paper(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[tuple[str, Path]] = []

    def fake(html: str, work: Path, target: Path) -> None:
        printed.append((html, target))
        target.write_bytes(b"%PDF-1.4 fake")

    pick: Callable[[str], tuple[str, Any]] = lambda backend: ("fake", fake)  # noqa: E731
    monkeypatch.setattr(reference_cli, "choose_printer", pick)
    out = tmp_path / "dist"
    assert main(["pdf", "--rules", str(RULES), "--out", str(out), "--paper", "letter"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["player-aid-letter.pdf",
                                                      "rules-letter.pdf"]
    assert all("@page { size: letter; }" in html for html, _ in printed)


def test_pdf_reports_rule_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = edited_rules(tmp_path, {"court.yaml": [("per_official: 1}", "per_official: 1")]})
    assert main(["pdf", "--rules", str(rules), "--out", str(tmp_path / "d")]) == 1
    assert "error[" in capsys.readouterr().err


def test_with_paper() -> None:
    page = "<html><head><style>@page { size: A4; }</style></head><body></body></html>"
    assert reference_cli.with_paper(page, "a4") == page
    letter = reference_cli.with_paper(page, "letter")
    assert letter.index("size: letter") > letter.index("size: A4")
    assert letter.index("size: letter") < letter.index("</head>")


def test_an_engine_that_does_not_compile_leaves_the_examples_empty(compiled: Compiled) -> None:
    # The writer reports generated-invalid for the engine; the reference must not crash first.
    out = reference.render(compiled, "def broken(:\n")
    html = parse_html(out[RULES_HTML])
    assert "does not compile" in html.text["example.ships"]


def test_a_move_of_the_flow_is_printed_beside_its_rule(files: dict[str, str]) -> None:
    # the period end's hand discard and the placing of a Rubble Set marker printed in the
    # turn's chapter, under "Turn order", as if they were steps of every turn; the marker's
    # card was headed by the move's id ("Rubble sets: Marker")
    md = files["reference/rules.md"]

    def at(anchor: str) -> int:
        return md.index(f'<a id="{anchor}"></a>')

    def chapter(anchor: str) -> str:
        return md[:at(anchor)].rsplit("\n## ", 1)[1].split("\n", 1)[0]

    assert chapter("move-hand-discard") == chapter("period-end")
    assert chapter("period-end").startswith("5. End of the period")
    assert at("period-end.refill") < at("move-hand-discard") < at("figure-period-end")
    assert at("rubble.sets") < at("move-marker") < at("setup")
    assert chapter("move-draw") == "2. The turn"
    assert at("turn.refill-board") < at("move-draw") < at("game-flow")
    assert "#### Rubble sets: Place a Rubble Set marker" in md
    assert "#### Refill your hand: Draw a card" in md
    assert "Marker\n" not in md


def test_a_hooks_event_is_said_in_words(files: dict[str, str]) -> None:
    # a hook's card printed its event's id as words, "When rubble set completed", and the
    # Queen's handout "When card revealed": rules/effects.yaml `events:` says each event
    md = files["reference/rules.md"]
    assert "*When a rubble set is completed, in [Rubble](#effect-rubble):*" in md
    queen = files[variant_handout("queen", "md")]
    assert "*When a card of the display is turned face up, in [Reveal the top card]" in queen
    for page in (md, queen):
        assert "When rubble set completed" not in page and "When card revealed" not in page


def test_a_list_of_components_heads_its_rows_by_what_they_are(files: dict[str, str]) -> None:
    # the Decrees' and the clergy tiles' tables headed their first column "Id" (a word of the
    # data) on the players' pages and the aid
    for page in ("reference/rules.md", "reference/player-aid.md"):
        assert "| Id |" not in files[page], page
    assert "| Decree | Condition | Wigs |" in files["reference/rules.md"]
    assert "| \\# | Condition | Wigs |" in files["reference/player-aid.md"]  # its rows: "01"
    assert "| Clergy | Reward |" in files["reference/rules.md"]


def test_the_flows_edge_says_each_period_once(files: dict[str, str]) -> None:
    # "Period 1: a player has ... or Period 1: the number of empty display piles ..."
    md = files["reference/rules.md"]
    assert ('-->|"Period 1: a player has at least 2 completed rubble sets or the number of empty '
            'display piles is at least 3"|') in md
    assert "or Period 1:" not in md and "or Period 2:" not in md
