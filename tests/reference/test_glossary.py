"""The glossary (rules/vocabulary.yaml `glossary:`) and the index of its terms.

Checked: every term of the data is in the glossary of rules.html and rules.md, in alphabetical
order, its definition's placeholders filled from the data (a changed number changes the words)
and its rules linked; a duplicate term, a rule or related term that does not exist and an
unknown key are located errors with the existing codes, all in one run; the page-number pass
(emit.reference.pageindex) marks, locates and fills the index's pages.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lisboa_rules import pipeline
from lisboa_rules.emit.reference import pageindex
from lisboa_rules.emit.reference.render import RULES_HTML, RULES_MD

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"


def _copy(tmp_path: Path, edits: list[tuple[str, str]], rel: str = "vocabulary.yaml") -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    path = target / rel
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return target


def _glossary(rules: Path = RULES) -> list[dict[str, object]]:
    result = pipeline.compile_rules(rules)
    assert result.compiled is not None
    return list(result.compiled.base.model.data["vocabulary"]["glossary"])


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    result = pipeline.compile_rules(RULES)
    assert result.ok
    return result.files


def test_every_term_is_defined_in_both_pages_in_order(files: dict[str, str]) -> None:
    terms = [str(e["term"]) for e in _glossary()]
    assert len(terms) >= 10
    html, md = files[RULES_HTML], files[RULES_MD]
    shown = re.findall(r"<dt id=\"term-[^\"]+\"><dfn>([^<]+)</dfn></dt>", html)
    assert sorted(shown) == sorted(terms)
    fold = [t.casefold().replace("é", "e") for t in shown]
    assert fold == sorted(fold)
    for t in terms:
        assert f"**{t}**:" in md, t


def test_every_rule_a_term_names_is_linked(files: dict[str, str]) -> None:
    html = files[RULES_HTML]
    for e in _glossary():
        start = html.index(f"<dfn>{e['term']}</dfn>")
        entry = html[start:html.index("</dd>", start)]
        for rid in e.get("rules", ()):  # type: ignore[attr-defined]
            assert f'href="#{rid}"' in entry, (e["term"], rid)


@pytest.mark.parametrize(("rel", "old", "new", "term", "want"), [
    ("game.yaml", "  max_sets: 5", "  max_sets: 6", "Rubble set", "room for 6"),
    ("game.yaml", "  money: réis", "  money: cruzados", "Réis", "your cruzados fall short"),
    ("game.yaml", "  hand: 5", "  hand: 4", "Political card", "You hold 4"),
])
def test_a_changed_value_changes_the_definition(
        tmp_path: Path, rel: str, old: str, new: str, term: str, want: str) -> None:
    result = pipeline.compile_rules(_copy(tmp_path, [(old, new)], rel))
    assert result.ok, [d.message for d in result.diagnostics]
    html = result.files[RULES_HTML]
    start = html.index(f"<dfn>{term}</dfn>")
    entry = re.sub(r"<[^>]+>", "", html[start:html.index("</dd>", start)])
    assert want in " ".join(entry.split())


def _errors(rules: Path) -> list[tuple[str, str, int]]:
    result = pipeline.compile_rules(rules)
    assert not result.ok
    return [(d.code, d.message, d.span.line if d.span else 0) for d in result.diagnostics
            if d.severity == "error"]


def _line_of(rules: Path, needle: str, nth: int = 1, exact: bool = False) -> int:
    lines = (rules / "vocabulary.yaml").read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, line in enumerate(lines)
            if (line.strip() == needle if exact else needle in line)]
    return hits[nth - 1]


@pytest.mark.parametrize("dupe", ["Influence", "influence", "ROYAL FAVOR"])
def test_a_duplicate_term_is_a_located_error(tmp_path: Path, dupe: str) -> None:
    rules = _copy(tmp_path, [("  - term: Wigs\n", f"  - term: {dupe}\n    text: Again.\n"
                              "    source: [facts:§6]\n  - term: Wigs\n")])
    errors = _errors(rules)
    assert [(c, line) for c, m, line in errors if "glossary term" in m] == [
        ("duplicate-id", _line_of(rules, f"- term: {dupe}", 2 if dupe == "Influence" else 1,
                                  exact=True))]


@pytest.mark.parametrize(("old", "new", "wrong", "suggested", "needle"), [
    ("rules: [visit]\n    see: [Royal Court, Follow]",
     "rules: [visits]\n    see: [Royal Court, Follow]", "rule 'visits'", "visit",
     "rules: [visits]"),
    ("rules: [visit]\n    see: [Royal Court, Follow]",
     "rules: [visit]\n    see: [Royal Courts, Follow]", "glossary term 'Royal Courts'",
     "Royal Court", "see: [Royal Courts"),
    ("see: [Noble, Noble action]", "see: [Noble, Nobel action]", "glossary term 'Nobel action'",
     "Noble action", "Nobel action"),
])
def test_an_unknown_rule_or_term_is_a_located_error_with_a_suggestion(
        tmp_path: Path, old: str, new: str, wrong: str, suggested: str, needle: str) -> None:
    rules = _copy(tmp_path, [(old, new)])
    result = pipeline.compile_rules(rules)
    found = [d for d in result.diagnostics if wrong in d.message]
    assert len(found) == 1, [d.message for d in result.diagnostics]
    d = found[0]
    assert d.code == "unknown-reference" and d.suggestion == suggested
    assert d.span is not None and d.span.file.endswith("vocabulary.yaml")
    assert d.span.line == _line_of(rules, needle)


def test_every_glossary_error_in_one_run(tmp_path: Path) -> None:
    rules = _copy(tmp_path, [
        ("rules: [visit]\n    see: [Royal Court, Follow]",
         "rules: [visits]\n    see: [Royal Courts, Follow]"),
        ("  - term: Wigs\n", "  - term: Plan\n    text: Twice.\n    source: [facts:§9]\n"
         "  - term: Wigs\n"),
        ("    rules: [portfolio.size, sell-goods]\n    source: [facts:§5]",
         "    rules: [portfolio.size, sell-goods]\n    source: [facts:§55]"),
    ])
    codes = sorted(c for c, _, _ in _errors(rules))
    assert codes == ["duplicate-id", "unknown-reference", "unknown-reference", "unknown-source"]


def test_an_unknown_key_in_an_entry_is_a_schema_error(tmp_path: Path) -> None:
    rules = _copy(tmp_path, [("  - term: Wigs\n", "  - term: Wigs\n    meaning: score\n")])
    errors = _errors(rules)
    assert [c for c, _, _ in errors] == ["schema-unknown-key"]
    assert errors[0][2] == _line_of(rules, "meaning: score")


# --- the page-number pass ------------------------------------------------------------------------

PAGE = ('<html><head></head><body><section id="a"><p>Alpha</p></section>'
        '<table><tr id="b"><td>Beta</td></tr></table><dt id="term-c">Gamma</dt>'
        '<ul class="terms"><li><span class="term">T</span> <span class="locs">'
        '<a class="pg def" href="#term-c" data-ix="term-c">Glossary</a><span class="sep">, </span>'
        '<a class="pg" href="#a" data-ix="a">A</a><span class="sep">, </span>'
        '<a class="pg" href="#b" data-ix="b">B</a></span></li>'
        '<li><span class="term">U</span> <span class="locs">'
        '<a class="pg def" href="#b" data-ix="b">Glossary</a></span></li></ul></body></html>')


def test_mark_puts_one_marker_in_each_target() -> None:
    targets = pageindex.anchors(PAGE)
    assert targets == ["term-c", "a", "b"]
    marked = pageindex.mark(PAGE, targets)
    for i in range(len(targets)):
        assert marked.count(pageindex.marker(i)) == 1
    assert re.search(r'<section id="a"><span class="ixmark"[^>]*>QQIX1QQ</span>', marked)
    assert re.search(r'<tr id="b"><td><span class="ixmark"[^>]*>QQIX2QQ</span>Beta', marked)
    assert "position:absolute" in marked  # takes no room: the layout does not move


@pytest.mark.parametrize(("pages", "want_t", "want_u"), [
    ({"term-c": 9, "a": 2, "b": 5}, ["2", "5", "9"], ["5"]),
    ({"term-c": 3, "a": 3, "b": 1}, ["1", "3"], ["1"]),  # one page once; def stays bold
    ({"term-c": 4, "a": 2}, ["2", "4"], []),  # a target that did not print is left out
])
def test_fill_writes_each_page_once_in_order(
        pages: dict[str, int], want_t: list[str], want_u: list[str]) -> None:
    filled = pageindex.fill(PAGE, pages)
    t, u = re.findall(r'<span class="locs pages">(.*?)</span></li>', filled)
    assert re.findall(r">(\d+)</a>", t) == want_t
    assert re.findall(r">(\d+)</a>", u) == want_u
    bold = re.findall(r'<a class="pg def" href="#[^"]+">(\d+)</a>', t)
    assert bold == [str(pages["term-c"])]


def test_locate_finds_markers_split_across_lines() -> None:
    pages = ["cover", "QQIX\n1QQ and QQIX0QQ", "x QQ IX2QQ"]
    assert pageindex.locate(pages, ["a", "b", "c"]) == {"b": 2, "a": 2, "c": 3}


def test_an_unreadable_first_pass_prints_the_index_without_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lisboa_rules.cli import reference as cli

    printed: list[str] = []

    def fake(html: str, work: Path, target: Path) -> None:
        printed.append(html)
        target.write_bytes(b"%PDF-1.4 not a real one")

    html = pipeline.compile_rules(RULES).files[RULES_HTML]
    cli.print_indexed("fake", fake, html, tmp_path, tmp_path / "x.pdf")
    assert len(printed) == 2
    assert "QQIX0QQ" in printed[0] and printed[1] == html  # marked, then as it was
    assert "index has no page numbers" in capsys.readouterr().err


def test_a_page_without_an_index_prints_once(tmp_path: Path) -> None:
    from lisboa_rules.cli import reference as cli

    printed: list[str] = []
    page = pipeline.compile_rules(RULES).files["reference/player-aid.html"]
    cli.print_indexed("fake", lambda h, w, t: printed.append(h), page, tmp_path, tmp_path / "a")
    assert printed == [page]


@pytest.mark.slow  # the complete suite (--slow)
def test_weasyprint_numbers_the_index_from_its_layout(tmp_path: Path) -> None:
    from lisboa_rules.cli import reference as cli

    weasyprint = cli._weasyprint()
    if weasyprint is None:  # not installed, or its system libraries (Pango) are missing
        pytest.skip("WeasyPrint is not installed or lacks Pango (pip install -e '.[pdf]')")

    html = pipeline.compile_rules(RULES).files[RULES_HTML]
    targets = pageindex.anchors(html)
    laid_out = weasyprint.HTML(string=html, base_url=str(tmp_path)).render()
    where: dict[str, int] = {}
    for n, page in enumerate(laid_out.pages, start=1):
        for a in page.anchors:
            where.setdefault(a, n)
    printed: list[str] = []
    cli.print_indexed("weasyprint", lambda h, w, t: printed.append(h), html, tmp_path,
                      tmp_path / "r.pdf")
    assert len(printed) == 1 and printed[0] == pageindex.fill(html, where)
    assert all(t in where for t in targets)
    numbers = re.findall(r'<a class="pg(?: def)?" href="#[^"]+">(\d+)</a>', printed[0])
    assert len(numbers) >= len(_glossary())


def test_the_noble_action_is_taken_through_events_too(files: dict[str, str]) -> None:
    # seed 001: "Each Noble has one big action, done when you visit him, follow him, or through
    # some events" - the reference said the visit and the follow only
    md = files[RULES_MD]
    entry = md[md.index('<a id="term-noble-action"></a>'):].split("\n")[1]
    assert "or through some events" in entry and "](#sponsor)" in entry
