"""The printed index's page numbers: mark the index's targets, find their pages, fill them in.

The reference's index (templates/reference/_find.html.jinja) lists, for each term, links to its
anchors inside `<span class="locs">`. A browser page has no page numbers, so `lisboa-rules pdf`
prints the rules twice (Chromium has no CSS `target-counter`):

1. `mark(html)` puts a marker text (`QQIX<n>QQ`, absolutely positioned, so it takes no room and
   the layout does not move) at the start of every element whose id an index entry points at;
2. the printed PDF's text is read page by page (lisboa_rules.outputs.pdftext) and `locate`
   finds the page of each marker;
3. `fill(html, pages)` writes the page numbers into the index (each page once per term, in
   order; the definition's page in bold), and the page is printed again without markers.

The index is the last chapter, so its new numbers move no page before it. WeasyPrint needs no
markers: its layout lists the anchors on each page (lisboa_rules.cli.reference.print_indexed).
Pure: strings in, strings out.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Mapping, Sequence

_LOCS = re.compile(r'<span class="locs">(.*?)</span></li>', re.S)
_LOC = re.compile(r'<a class="pg( def)?" href="#([^"]+)" data-ix="[^"]+">.*?</a>', re.S)
_MARK = "QQIX{}QQ"
_MARK_STYLE = (
    "position:absolute;font:2px monospace;line-height:2px;color:rgba(0,0,0,0.05);white-space:nowrap"
)


def anchors(html: str) -> list[str]:
    """The ids the index points at, each once, in the order of the index."""
    out: list[str] = []
    for locs in _LOCS.finditer(html):
        for loc in _LOC.finditer(locs.group(1)):
            a = _html.unescape(loc.group(2))
            if a not in out:
                out.append(a)
    return out


def marker(i: int) -> str:
    return _MARK.format(i)


def mark(html: str, targets: Sequence[str]) -> str:
    """`html` with the marker of target i placed first inside the element whose id is
    targets[i] (inside the first cell of a table row)."""
    for i, target in enumerate(targets):
        span = f'<span class="ixmark" style="{_MARK_STYLE}">{marker(i)}</span>'
        ident = re.escape(_html.escape(target, quote=True))
        m = re.search(rf'<(\w+)\b[^>]*\sid="{ident}"[^>]*>', html)
        if m is None:
            continue
        at = m.end()
        if m.group(1).lower() == "tr":
            cell = re.compile(r"<t[dh]\b[^>]*>").search(html, at)
            at = cell.end() if cell else at
        html = html[:at] + span + html[at:]
    return html


def locate(pages: Sequence[str], targets: Sequence[str]) -> dict[str, int]:
    """The (1-based) page on which each target's marker printed; targets not found are left
    out. `pages` are the pages' texts."""
    out: dict[str, int] = {}
    squashed = [re.sub(r"\s+", "", p) for p in pages]
    for i, target in enumerate(targets):
        needle = marker(i)
        for n, text in enumerate(squashed, start=1):
            if needle in text:
                out[target] = n
                break
    return out


def fill(html: str, pages: Mapping[str, int]) -> str:
    """The index with its page numbers: per term, each page once, in page order, the
    definition's page (`def`) in bold; a target without a page is left out."""

    def entry(m: re.Match[str]) -> str:
        seen: dict[int, tuple[str, bool]] = {}
        for loc in _LOC.finditer(m.group(1)):
            target = _html.unescape(loc.group(2))
            page = pages.get(target)
            if page is None:
                continue
            first = seen.get(page)
            seen[page] = (
                first[0] if first else loc.group(2),
                bool(loc.group(1)) or bool(first and first[1]),
            )
        links = [
            f'<a class="pg{" def" if bold else ""}" href="#{href}">{page}</a>'
            for page, (href, bold) in sorted(seen.items())
        ]
        return f'<span class="locs pages">{", ".join(links)}</span></li>'

    return _LOCS.sub(entry, html)


__all__ = ["anchors", "fill", "locate", "mark", "marker"]
