"""The printed reference, checked in a real browser: Debian's chromium driven by Playwright.

The pages are compiled fresh from rules/ and printed with `page.pdf(prefer_css_page_size=True)`
after `emulate_media("print")`, as a designer's "Print" would. The PDF is read back with the
package's tiny PDF text reader (lisboa_rules.outputs.pdftext: Chromium writes plain page trees and
ToUnicode maps), the one the `pdf` command reads its index pass with: no PDF library, no poppler.

Checked: A4 pages, more than one page, `N / M` page numbers in every footer, no table row,
procedure, short rule card, example or callout split across two pages (marker text is placed at
the top and the bottom of each such element before printing; both must land on the same page),
nothing wider than the page, the `pdf` command; the diagrams drawn in the printed page; the
index's page numbers (printed by the `pdf` command in two passes: each number is a page of the
final PDF that shows the term); no page left more than half empty before a chapter (marker text at
each chapter's start and end, read back with its position); headings kept with their text and
orphans/widows set; screenshots of the printed pages under the test's tmp_path. The player aid
has its own file (test_player_aid.py).

Locally a missing chromium (or Playwright) skips these tests; in CI (env CI set) it fails them.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.emit.reference.render import AID_HTML, RULES_HTML
from lisboa_rules.outputs.pdftext import read_pdf, read_runs

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
A4 = (595.28, 841.89)  # points
LETTER = (612.0, 792.0)
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]
# Elements that must never be split across two pages.
KEEP_TOGETHER = ("tr", "ol.steps", "section.rule:not(.long)", "figure.example", "aside.callout",
                 "div.flow", "ol.check > li", "figure.diagram", "div.aid-card")


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests must run in CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    exe = shutil.which("chromium")
    if exe is None:
        _unavailable("no chromium on the PATH (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    result = pipeline.compile_rules(RULES)
    assert result.ok, [d.message for d in result.diagnostics]
    out = tmp_path_factory.mktemp("reference")
    paths = {}
    for rel in (RULES_HTML, AID_HTML):
        path = out / Path(rel).name
        path.write_text(result.files[rel], encoding="utf-8")
        paths[rel] = path
    return paths


def _print(browser: Any, path: Path, prepare: str | None = None,
           html: str | None = None) -> bytes:
    page = browser.new_page()
    try:
        if html is None:
            page.goto(path.as_uri())
        else:
            page.set_content(html)
        page.emulate_media(media="print")
        if prepare:
            page.evaluate(prepare)
        pdf: bytes = page.pdf(prefer_css_page_size=True, print_background=True)
        return pdf
    finally:
        page.close()


@pytest.fixture(scope="module")
def rules_pdf(browser: Any, pages: dict[str, Path]) -> bytes:
    return _print(browser, pages[RULES_HTML])


# --- the PDF reader: the package's own (lisboa_rules.outputs.pdftext) -----------------------


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --- the tests -----------------------------------------------------------------------------------


def test_reader_reads_what_chromium_prints(browser: Any, tmp_path: Path) -> None:
    html = ("<!DOCTYPE html><meta charset=utf-8><style>@page{size:A4}</style>"
            "<p>Réis – 1</p><p style='break-before:page'>second page</p>")
    pdf = _print(browser, tmp_path / "x.html", html=html)
    pages = read_pdf(pdf)
    assert [_squash(t) for _, t in pages] == ["Réis–1", "secondpage"]


def test_rules_print_on_several_a4_pages(rules_pdf: bytes) -> None:
    pages = read_pdf(rules_pdf)
    assert 10 < len(pages) < 60
    for (w, h), _ in pages:
        assert abs(w - A4[0]) < 1.5 and abs(h - A4[1]) < 1.5, (w, h)


def test_every_page_has_its_number_in_the_footer(rules_pdf: bytes) -> None:
    pages = read_pdf(rules_pdf)
    n = len(pages)
    for i, (_, text) in enumerate(pages, start=1):
        assert f"{i}/{n}" in _squash(text), f"page {i}: no '{i} / {n}' footer"


MARK_JS = """(selectors) => {
  let n = 0;
  const hosts = [];
  for (const sel of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      if (hosts.includes(el)) continue;
      hosts.push(el);
    }
  }
  for (const el of hosts) {
    const host = el.tagName === 'TR' ? el.cells[0] : el;
    if (!host) continue;
    host.style.position = 'relative';
    for (const [edge, tag] of [['top', 'S'], ['bottom', 'E']]) {
      const m = document.createElement('span');
      m.textContent = 'QQ' + tag + n + 'QQ';
      m.style.cssText = 'position:absolute;left:0;' + edge + ':0;font:3px monospace;' +
        'line-height:3px;color:rgba(0,0,0,0.05);white-space:nowrap;pointer-events:none;' +
        'text-indent:0';
      host.appendChild(m);
    }
    n += 1;
  }
  return n;
}"""


def _split_elements(browser: Any, path: Path, html: str | None = None
                    ) -> tuple[int, list[int], int]:
    """(elements marked, indexes of those split across pages, elements whose markers printed)."""
    page = browser.new_page()
    try:
        if html is None:
            page.goto(path.as_uri())
        else:
            page.set_content(html)
        page.emulate_media(media="print")
        count = page.evaluate(MARK_JS, list(KEEP_TOGETHER))
        pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    finally:
        page.close()
    pages = [_squash(t) for _, t in read_pdf(pdf)]
    where: dict[str, list[int]] = {}
    for i, text in enumerate(pages):
        for tag, num in re.findall(r"QQ([SE])(\d+)QQ", text):
            where.setdefault(f"{tag}{num}", []).append(i)
    split = [k for k in range(count) if where.get(f"S{k}") != where.get(f"E{k}")]
    found = sum(1 for k in range(count) if f"S{k}" in where and f"E{k}" in where)
    return count, split, found


def test_split_detector_sees_a_split_row(browser: Any, tmp_path: Path) -> None:
    tall = "<tr><td>" + "line<br>" * 40 + "</td></tr>"
    html = ("<!DOCTYPE html><style>@page{size:A4;margin:10mm} tr{break-inside:auto}</style>"
            f"<table>{tall * 3}</table>")
    count, split, found = _split_elements(browser, tmp_path / "x.html", html)
    assert count == found == 3
    assert split  # 120 lines of text cannot stay on one page each without a split


def test_no_row_step_list_or_card_is_split_across_pages(
        browser: Any, pages: dict[str, Path]) -> None:
    count, split, found = _split_elements(browser, pages[RULES_HTML])
    assert count > 100  # rows, step lists, cards, examples, callouts
    assert found == count, "some marker text did not reach the PDF"
    assert split == [], f"{len(split)} of {count} elements are split across two pages"


def _overflow(browser: Any, path: Path, html: str | None = None) -> tuple[int, list[str]]:
    """The page box's content width in CSS px, and the elements that stick out of it."""
    page = browser.new_page()
    try:
        if html is None:
            page.goto(path.as_uri())
        else:
            page.set_content(html)
        page.emulate_media(media="print")
        # The page box's content width: A4 minus the @page side margins in force.
        width: int = page.evaluate("""() => {
          const mm = v => v.endsWith('mm') ? parseFloat(v) * 96 / 25.4 : parseFloat(v);
          let left = 0, right = 0;
          for (const sheet of document.styleSheets) for (const r of sheet.cssRules) {
            if (r.type === CSSRule.PAGE_RULE && r.selectorText === '') {
              if (r.style.marginLeft) left = mm(r.style.marginLeft);
              if (r.style.marginRight) right = mm(r.style.marginRight);
            }
          }
          return Math.floor(210 * 96 / 25.4 - left - right);
        }""")
        page.set_viewport_size({"width": width, "height": 1100})
        overflow: list[str] = page.evaluate("""() => {
          const doc = document.documentElement;
          const bad = [];
          if (doc.scrollWidth > doc.clientWidth) bad.push('document ' + doc.scrollWidth);
          for (const el of document.body.querySelectorAll('*')) {
            const r = el.getBoundingClientRect();
            if (r.width > 0 && (r.right > doc.clientWidth + 0.5 || r.left < -0.5))
              bad.push(el.tagName + '#' + (el.id || el.className) + ' ' + Math.round(r.right));
          }
          return bad.slice(0, 10);
        }""")
        return width, overflow
    finally:
        page.close()


def test_overflow_detector_sees_a_wide_table(browser: Any, tmp_path: Path) -> None:
    html = ("<!DOCTYPE html><style>@page{size:A4;margin:20mm 15mm}</style>"
            "<table><tr><td>" + "unbreakable" * 30 + "</td></tr></table>")
    width, overflow = _overflow(browser, tmp_path / "x.html", html)
    assert width == int(180 * 96 / 25.4)
    assert overflow


def test_nothing_is_wider_than_the_page(browser: Any, pages: dict[str, Path]) -> None:
    for rel, path in pages.items():
        width, overflow = _overflow(browser, path)
        assert 500 < width < 794
        assert overflow == [], f"{rel} wider than the page at {width}px: {overflow}"


def test_table_headers_repeat_on_every_page(browser: Any, pages: dict[str, Path]) -> None:
    page = browser.new_page()
    try:
        page.goto(pages[RULES_HTML].as_uri())
        page.emulate_media(media="print")
        displays = page.evaluate(
            "[...document.querySelectorAll('thead')].map(e => getComputedStyle(e).display)")
    finally:
        page.close()
    assert displays and set(displays) == {"table-header-group"}


def test_pdf_command_prints_with_chromium(
        browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pdf", "--rules", str(RULES), "--out", str(tmp_path),
                 "--backend", "chromium"]) == 0
    printed = read_pdf((tmp_path / "rules.pdf").read_bytes())
    assert len(printed) > 1
    assert all(abs(w - A4[0]) < 1.5 and abs(h - A4[1]) < 1.5 for (w, h), _ in printed)
    assert 1 <= len(read_pdf((tmp_path / "player-aid.pdf").read_bytes())) <= 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["player-aid.pdf", "rules.pdf"]
    assert "chromium" in capsys.readouterr().err


# --- pictures, index, page fill, screenshots ---------------------------------------------


def test_the_diagrams_are_drawn_in_the_printed_page(
        browser: Any, pages: dict[str, Path], rules_pdf: bytes) -> None:
    page = browser.new_page()
    try:
        page.goto(pages[RULES_HTML].as_uri())
        page.emulate_media(media="print")
        boxes = page.evaluate("""() => [...document.querySelectorAll('figure.diagram > svg')]
          .map(s => { const r = s.getBoundingClientRect();
                      return [s.closest('figure').id, r.width, r.height,
                              s.querySelectorAll('rect').length]; })""")
    finally:
        page.close()
    result = pipeline.compile_rules(RULES)
    assert result.compiled is not None
    names = sorted(f.split("/")[-1][:-4] for f in result.files if f.endswith(".svg"))
    assert sorted(b[0] for b in boxes) == [f"figure-{n}" for n in names]
    assert all(w > 300 and h > 50 and rects >= 3 for _, w, h, rects in boxes), boxes
    text = _squash(" ".join(t for _, t in read_pdf(rules_pdf)))
    for step in result.compiled.base.model.period_end:  # an SVG's words reach the PDF
        assert _squash(f"{step.rule.title}") in text


def _index(pages: list[str], terms: list[str]) -> dict[str, list[int]]:
    """The page numbers the printed index gives each term (the index is the last heading
    'Index'; each term is followed by its numbers)."""
    # each page's "N / M" footer is not a number of the index
    text = "\n".join(re.sub(r"\b\d+\s*/\s*\d+\b", " ", p) for p in pages)
    body = text[text.rindex("Index"):]
    out: dict[str, list[int]] = {}
    for i, term in enumerate(terms):
        start = body.index(term) + len(term)
        end = body.index(terms[i + 1], start) if i + 1 < len(terms) else len(body)
        out[term] = [int(n) for n in re.findall(r"\b(\d+)\b", body[start:end])]
    return out


def _labels(html: str) -> dict[str, list[str]]:
    """Each index term with the titles of its targets (the links' labels before the pages are
    filled in): a target's page shows its title, if not the term itself."""
    out: dict[str, list[str]] = {}
    for term, locs in re.findall(
            r'<span class="term">([^<]+)</span> <span class="locs">(.*?)</span></li>', html):
        out[unescape(term)] = [unescape(t) for t in re.findall(r">([^<]+)</a>", locs)]
    return out


def _wrong_pages(index: dict[str, list[int]], pages: list[str],
                 labels: dict[str, list[str]] | None = None) -> list[tuple[str, int]]:
    """(term, page) for every number of the index whose page shows neither the term nor the
    title of one of its targets."""
    squashed = [_squash(p).casefold() for p in pages]
    labels = labels or {}

    def shown(term: str, n: int) -> bool:
        return 1 <= n <= len(pages) and any(
            _squash(w).casefold() in squashed[n - 1] for w in (term, *labels.get(term, ())))

    return [(term, n) for term, numbers in index.items() for n in numbers if not shown(term, n)]


@pytest.fixture(scope="module")
def printed_by_the_command(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    assert main(["pdf", "--rules", str(RULES), "--out", str(out), "--backend", "chromium"]) == 0
    return out


def test_the_index_gives_the_pages_of_the_printed_pdf(printed_by_the_command: Path) -> None:
    pages = [t for _, t in read_pdf((printed_by_the_command / "rules.pdf").read_bytes())]
    result = pipeline.compile_rules(RULES)
    assert result.compiled is not None
    glossary = result.compiled.base.model.data["vocabulary"]["glossary"]
    doc_terms = re.findall(r'<span class="term">([^<]+)</span>', result.files[RULES_HTML])
    assert sorted(doc_terms) == sorted(str(e["term"]) for e in glossary)
    index = _index(pages, doc_terms)
    for e in glossary:  # every term: its definition's page and one per rule, each page once
        numbers = index[str(e["term"])]
        assert numbers and numbers == sorted(set(numbers)), (e["term"], numbers)
        assert len(numbers) <= 1 + len(e.get("rules", ()))
    assert _wrong_pages(index, pages, _labels(result.files[RULES_HTML])) == []
    assert "QQIX" not in "".join(pages)  # the first pass's markers are gone


def test_the_index_check_sees_a_wrong_number(printed_by_the_command: Path) -> None:
    pages = [t for _, t in read_pdf((printed_by_the_command / "rules.pdf").read_bytes())]
    html = pipeline.compile_rules(RULES).files[RULES_HTML]
    terms = re.findall(r'<span class="term">([^<]+)</span>', html)
    index = _index(pages, terms)
    for shift in (1, -1):
        shifted = {t: [n + shift for n in ns] for t, ns in index.items()}
        assert _wrong_pages(shifted, pages, _labels(html))


# A marker at the start and at the end of every chapter; a chapter that begins a page right after
# the page its predecessor ended on must not leave that page more than half empty.
CHAPTER_JS = """() => {
  const chapters = [...document.querySelectorAll('section.chapter')];
  chapters.forEach((ch, i) => {
    ch.style.position = 'relative';
    for (const [edge, tag] of [['top', 'B'], ['bottom', 'N']]) {
      const m = document.createElement('span');
      m.textContent = 'QQ' + tag + i + 'QQ';
      m.style.cssText = 'position:absolute;left:0;' + edge + ':0;font:3px monospace;' +
        'line-height:3px;color:rgba(0,0,0,0.05);white-space:nowrap';
      ch.appendChild(m);
    }
  });
  const mm = v => v.endsWith('mm') ? parseFloat(v) * 96 / 25.4 : parseFloat(v);
  let top = 0, bottom = 0;
  for (const sheet of document.styleSheets) for (const r of sheet.cssRules) {
    if (r.type === CSSRule.PAGE_RULE && r.selectorText === '') {
      if (r.style.marginTop) top = mm(r.style.marginTop);
      if (r.style.marginBottom) bottom = mm(r.style.marginBottom);
    }
  }
  return [chapters.length, 297 * 96 / 25.4 - top - bottom];
}"""


def _half_empty(browser: Any, path: Path, html: str | None = None) -> tuple[int, list[str]]:
    """(chapters, pages left more than half empty before a chapter that starts a new page)."""
    page = browser.new_page()
    try:
        if html is None:
            page.goto(path.as_uri())
        else:
            page.set_content(html)
        page.emulate_media(media="print")
        count, height = page.evaluate(CHAPTER_JS)
        pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    finally:
        page.close()
    where: dict[str, tuple[int, float]] = {}
    for n, (_, runs) in enumerate(read_runs(pdf)):
        line = ""
        for y, text in runs:
            line = line + text if text != "\n" else ""
            for tag, i in re.findall(r"QQ([BN])(\d+)QQ", line):
                # Chromium draws page n's body at y = n * height onwards (one long column cut
                # into pages of the content box's height): y on its own page.
                where.setdefault(f"{tag}{i}", (n, y - n * height))
    bad = []
    for i in range(1, count):
        begin, end = where.get(f"B{i}"), where.get(f"N{i - 1}")
        assert begin is not None and end is not None, f"chapter {i}: a marker did not print"
        if begin[0] == end[0] + 1 and end[1] < height / 2:
            bad.append(f"page {end[0] + 1}: chapter {i - 1} ends at {end[1]:.0f}px of "
                       f"{height:.0f}px, chapter {i} starts the next page")
    return count, bad


def test_page_fill_detector_sees_a_half_empty_page(browser: Any, tmp_path: Path) -> None:
    short = "<section class='chapter' style='break-before:page'><h2>X</h2><p>one line</p></section>"
    html = ("<!DOCTYPE html><style>@page{size:A4;margin:16mm 15mm 18mm}</style>"
            f"<main>{short * 3}</main>")
    count, bad = _half_empty(browser, tmp_path / "x.html", html)
    assert count == 3 and len(bad) == 2
    full = "<section class='chapter'><h2>X</h2>" + "<p>line</p>" * 30 + "</section>"
    count, bad = _half_empty(browser, tmp_path / "y.html",
                             html.replace(short * 3, full * 3))
    assert count == 3 and bad == []


# The sheet's columns and headings, read back from the printed PDF: a marker at the bottom of
# every innermost block (a heading, paragraph, list item, table row, row of a trigger) gives
# where each column ends; in the order the page draws them, a marker well above the one before
# starts the next column. A marker at the bottom of each heading and one at the top of what
# follows it say whether they stayed together (same page, same column, one under the other).
FILL_JS = """(sel) => {
  // a table's rows (it may run on in the next column); of tables side by side (runs of one
  // table), the first one's rows only
  const leaf = 'h1,h2,h3,h4,p,li,dt,dd,aside,tr,.trig,.cost,.or';
  const roots = [...document.querySelectorAll(sel)];
  let n = 0;
  const mark = (el, tag, edge) => {
    el.style.position = 'relative';
    const m = document.createElement('span');
    m.textContent = 'QQ' + tag + 'QQ';
    m.style.cssText = 'position:absolute;left:0;' + edge + ':0;font:3px monospace;' +
      'line-height:3px;color:rgba(0,0,0,0.05);white-space:nowrap;text-indent:0';
    el.appendChild(m);
  };
  const within = s => roots.flatMap(r => [...r.querySelectorAll(s)]);
  for (const el of within(leaf)) {
    if (el.querySelector(leaf) || el.closest('thead')) continue;
    const table = el.closest('table');
    if (table && table.previousElementSibling && table.previousElementSibling.tagName === 'TABLE')
      continue;
    mark(el, 'F' + n, 'bottom');
    n += 1;
  }
  let h = 0;
  for (const el of within('h1,h2,h3,h4')) {
    const next = el.nextElementSibling;
    if (!next) continue;
    mark(el, 'H' + h, 'bottom');
    mark(next, 'K' + h, 'top');
    h += 1;
  }
  const mm = v => v.endsWith('mm') ? parseFloat(v) * 96 / 25.4 : parseFloat(v) || 0;
  let top = 0, bottom = 0;
  for (const sheet of document.styleSheets) for (const r of sheet.cssRules) {
    if (r.type === CSSRule.PAGE_RULE && r.selectorText === '') {
      if (r.style.marginTop) top = mm(r.style.marginTop);
      if (r.style.marginBottom) bottom = mm(r.style.marginBottom);
    }
  }
  return [n, h, top + bottom];
}"""


def _columns(browser: Any, html: str, root: str = ".cols"
             ) -> tuple[list[list[float]], list[str], int]:
    """Each printed page's columns as the share of the page's height each one fills (from the
    top of the page to its last block), the headings parted from what follows them, and the
    number of pages. `root`: the part of the page whose columns count."""
    page = browser.new_page()
    try:
        page.set_content(html)
        page.emulate_media(media="print")
        count, heads, margins = page.evaluate(FILL_JS, root)
        pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    finally:
        page.close()
    printed = read_runs(pdf)
    where: dict[str, tuple[int, float]] = {}
    for n, ((_, h), runs) in enumerate(printed):
        height = h * 96 / 72 - margins  # the page's body, in CSS px
        line = ""
        for y, text in runs:
            line = line + text if text != "\n" else ""
            for tag in re.findall(r"QQ([FHK]\d+)QQ", line):
                where.setdefault(tag, (n, y - n * height))
    heights = [h * 96 / 72 - margins for (_, h), _ in printed]
    pages: list[list[float]] = [[] for _ in printed]
    last: list[float | None] = [None for _ in printed]
    for k in range(count):
        if f"F{k}" not in where:
            continue
        n, y = where[f"F{k}"]
        prev = last[n]
        if prev is None or y < prev - heights[n] / 4:  # a new column starts at the top
            pages[n].append(y)
        else:
            pages[n][-1] = max(pages[n][-1], y)
        last[n] = y
    fills = [[round(y / heights[n], 3) for y in cols] for n, cols in enumerate(pages)]
    parted = []
    for k in range(heads):
        head, body = where.get(f"H{k}"), where.get(f"K{k}")
        if head is None or body is None:
            parted.append(f"heading {k}: a marker did not print")
        elif head[0] != body[0] or not 0 <= body[1] - head[1] < heights[head[0]] / 10:
            parted.append(f"heading {k} on page {head[0] + 1} at {head[1]:.0f}px, "
                          f"what follows on page {body[0] + 1} at {body[1]:.0f}px")
    return fills, parted, len(printed)


def test_no_chapter_break_leaves_a_page_half_empty(browser: Any, pages: dict[str, Path]) -> None:
    count, bad = _half_empty(browser, pages[RULES_HTML])
    assert count > 5
    assert bad == []


def test_headings_stay_with_their_text_and_no_orphan_lines(
        browser: Any, pages: dict[str, Path]) -> None:
    page = browser.new_page()
    try:
        page.goto(pages[RULES_HTML].as_uri())
        page.emulate_media(media="print")
        style = page.evaluate("""() => {
          const get = (sel, prop) => [...document.querySelectorAll(sel)]
            .map(e => getComputedStyle(e)[prop]);
          return {h: [...get('h2', 'breakAfter'), ...get('h3', 'breakAfter'),
                      ...get('h4', 'breakAfter')],
                  orphans: [...get('p', 'orphans'), ...get('li', 'orphans'),
                            ...get('dd', 'orphans')],
                  widows: [...get('p', 'widows'), ...get('li', 'widows'),
                           ...get('dd', 'widows')]};
        }""")
    finally:
        page.close()
    assert style["h"] and set(style["h"]) == {"avoid"}
    assert style["orphans"] and min(int(v) for v in style["orphans"]) >= 2
    assert style["widows"] and min(int(v) for v in style["widows"]) >= 2


def screenshots(browser: Any, path: Path, out: Path, pdf_pages: int) -> list[Path]:
    """A look at the printed pages: the print layout, one A4-high PNG per printed page."""
    page = browser.new_page(viewport={"width": 794, "height": 1123})
    shots = []
    try:
        page.goto(path.as_uri())
        page.emulate_media(media="print")
        height = page.evaluate("document.documentElement.scrollHeight")
        for i in range(min(pdf_pages, max(1, -(-height // 1123)))):
            target = out / f"{path.stem}-{i + 1:02d}.png"
            page.screenshot(path=str(target), full_page=True, timeout=120000,
                            clip={"x": 0, "y": i * 1123, "width": 794, "height": 1123})
            shots.append(target)
    finally:
        page.close()
    return shots


def test_screenshots_of_the_printed_pages(
        browser: Any, pages: dict[str, Path], rules_pdf: bytes, tmp_path: Path) -> None:
    n = len(read_pdf(rules_pdf))
    shots = screenshots(browser, pages[RULES_HTML], tmp_path, n)
    shots += screenshots(browser, pages[AID_HTML], tmp_path, 2)
    assert len(shots) >= 3
    for shot in shots:
        data = shot.read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000, shot
