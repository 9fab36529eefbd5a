"""The printed reference, checked in a real browser: Debian's chromium driven by Playwright.

The pages are compiled fresh from rules/ and printed with `page.pdf(prefer_css_page_size=True)`
after `emulate_media("print")`, as a designer's "Print" would. The PDF is read back with a tiny
PDF text reader (Chromium writes plain page trees and ToUnicode maps), so these tests need no PDF
library and no poppler.

Checked: A4 pages, more than one page, `N / M` page numbers in every footer, no table row,
procedure, short rule card, example or callout split across two pages (marker text is placed at
the top and the bottom of each such element before printing; both must land on the same page),
nothing wider than the page, the one-page player aid, `--paper letter`, and the `pdf` command.

Locally a missing chromium (or Playwright) skips these tests; in CI (env CI set) it fails them.
"""

from __future__ import annotations

import os
import re
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.cli.reference import with_paper
from lisboa_rules.emit.reference.render import AID_HTML, RULES_HTML

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
A4 = (595.28, 841.89)  # points
LETTER = (612.0, 792.0)
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]
# Elements that must never be split across two pages.
KEEP_TOGETHER = ("tr", "ol.steps", "section.rule:not(.long)", "figure.example", "aside.callout",
                 "div.flow", "ol.check > li")


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
        _unavailable("playwright is not installed (pip install -e '.[test]')")
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


# --- a tiny PDF reader: page sizes and per-page text ---------------------------------------------

_OBJ = re.compile(rb"(\d+) 0 obj\s*(.*?)\s*endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)


def _objects(pdf: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in _OBJ.finditer(pdf)}


def _stream(body: bytes) -> bytes:
    m = _STREAM.search(body)
    if m is None:
        return b""
    data = m.group(1)
    if b"/FlateDecode" not in body[: m.start()]:
        return data
    try:
        return zlib.decompress(data)
    except zlib.error:  # the data ended in a CR, taken for the line break before endstream
        return zlib.decompress(data + b"\r")


def _ref(body: bytes, key: bytes) -> int | None:
    m = re.search(rb"/" + key + rb"\s+(\d+) 0 R", body)
    return int(m.group(1)) if m else None


def _cmap(data: bytes) -> dict[int, str]:
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for lo, hi, dst in re.findall(
                rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            start = int(dst, 16)
            for i, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(start + i)
    return out


def _page_ids(objs: dict[int, bytes], node_id: int) -> Iterator[int]:
    node = objs[node_id]
    if re.search(rb"/Type\s*/Pages\b", node):
        kids = re.search(rb"/Kids\s*\[(.*?)\]", node, re.S)
        assert kids is not None
        for k in re.findall(rb"(\d+) 0 R", kids.group(1)):
            yield from _page_ids(objs, int(k))
    else:
        yield node_id


def read_pdf(pdf: bytes) -> list[tuple[tuple[float, float], str]]:
    """Each page's (width, height) in points and its text, in drawing order."""
    assert pdf.startswith(b"%PDF"), "not a PDF"
    objs = _objects(pdf)
    root_id = _ref(pdf[pdf.rindex(b"trailer"):], b"Root")
    assert root_id is not None, "no document catalog (a compressed xref?)"
    pages_id = _ref(objs[root_id], b"Pages")
    assert pages_id is not None
    cmaps: dict[int, dict[int, str]] = {}
    out = []
    for pid in _page_ids(objs, pages_id):
        page = objs[pid]
        box = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]",
                        page)
        assert box is not None
        x0, y0, x1, y1 = (float(v) for v in box.groups())
        fonts: dict[bytes, dict[int, str]] = {}
        font_dict = re.search(rb"/Font\s*<<(.*?)>>", page, re.S)
        if font_dict:
            for name, num in re.findall(rb"/(\w+)\s+(\d+) 0 R", font_dict.group(1)):
                fid = int(num)
                if fid not in cmaps:
                    tu = _ref(objs[fid], b"ToUnicode")
                    cmaps[fid] = _cmap(_stream(objs[tu])) if tu else {}
                fonts[name] = cmaps[fid]
        contents = re.search(rb"/Contents\s+(?:(\d+) 0 R|\[(.*?)\])", page, re.S)
        assert contents is not None
        ids = [int(contents.group(1))] if contents.group(1) else \
            [int(x) for x in re.findall(rb"(\d+) 0 R", contents.group(2))]
        content = b"\n".join(_stream(objs[i]) for i in ids)
        font: dict[int, str] = {}
        text: list[str] = []
        for tok in re.finditer(rb"/(\w+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>|\b(ET)\b", content):
            if tok.group(1) is not None:
                font = fonts.get(tok.group(1), {})
            elif tok.group(2) is not None:
                hx = tok.group(2).decode()
                step = 4 if len(hx) % 4 == 0 and max(font, default=0) > 255 else 2
                text.append("".join(font.get(int(hx[i:i + step], 16), "")
                                    for i in range(0, len(hx), step)))
            else:
                text.append("\n")
        out.append(((x1 - x0, y1 - y0), "".join(text)))
    return out


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
    assert len(pages) > 1
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
        'line-height:3px;color:rgba(0,0,0,0.05);white-space:nowrap;pointer-events:none';
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


def test_player_aid_is_one_a4_page_with_every_period_end_step(
        browser: Any, pages: dict[str, Path]) -> None:
    pdf = _print(browser, pages[AID_HTML])
    printed = read_pdf(pdf)
    assert len(printed) == 1
    (w, h), text = printed[0]
    assert abs(w - A4[0]) < 1.5 and abs(h - A4[1]) < 1.5
    result = pipeline.compile_rules(RULES)
    assert result.compiled is not None
    model = result.compiled.base.model
    for step in model.period_end:
        assert _squash(step.rule.title) in _squash(text)
    for source in model.scoring:
        assert _squash(source.name) in _squash(text)


def test_paper_letter_prints_on_letter(browser: Any, pages: dict[str, Path]) -> None:
    html = with_paper(pages[AID_HTML].read_text(encoding="utf-8"), "letter")
    printed = read_pdf(_print(browser, pages[AID_HTML], html=html))
    (w, h), _ = printed[0]
    assert abs(w - LETTER[0]) < 1.5 and abs(h - LETTER[1]) < 1.5
    assert len(printed) == 1  # the aid still fits one page on Letter


def test_pdf_command_prints_with_chromium(
        browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pdf", "--rules", str(RULES), "--out", str(tmp_path),
                 "--backend", "chromium"]) == 0
    printed = read_pdf((tmp_path / "rules.pdf").read_bytes())
    assert len(printed) > 1
    assert all(abs(w - A4[0]) < 1.5 and abs(h - A4[1]) < 1.5 for (w, h), _ in printed)
    assert len(read_pdf((tmp_path / "player-aid.pdf").read_bytes())) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["player-aid.pdf", "rules.pdf"]
    assert "chromium" in capsys.readouterr().err
