"""Diagrams of the game's flow as SVG text, laid out at build time. Pure, no JavaScript.

The reference builder reads the structure from the compiled model (the turn's steps and the
actions of rules/court.yaml, the phases, period-end steps and end triggers of rules/flow.yaml)
and hands it here as `Stage`s; this module only lays the boxes out and writes plain SVG 1.1:
`rect`, `path`, `text`/`tspan` with explicit font sizes and a `viewBox`, no `foreignObject`,
no CSS, no scripts, so Chromium and WeasyPrint draw the same picture. Every label goes through
`encode.html_text` (XML text and attribute escaping). No game word or number is written here:
the only words are the ones the builder passes in.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lisboa_rules.core.encode import html_text
from lisboa_rules.emit.reference import icons as icon_art

WIDTH = 640  # user units of the viewBox; the page scales the picture to its column
MARGIN = 8
FONT = "Liberation Sans, DejaVu Sans, Arial, sans-serif"
TITLE_SIZE = 12
LABEL_SIZE = 11
SUB_SIZE = 9
CHAR = 0.56  # average glyph width / font size of a sans-serif face (for wrapping)
LINE = 1.25  # line height / font size
PAD = 5
GAP = 18  # room between two stages, for the arrow
INK = "#1f1b16"
ACCENT = "#1e4f8a"
SOFT = "#e9f0f8"
MUTED = "#6b6257"
PAPER = "#ffffff"


ICON = 14  # an icon's size in a box, user units


@dataclass(frozen=True)
class Node:
    """One box: a label (bold), an optional smaller line of detail and the icons of what it
    speaks of (the aid's icons), in a row before the label."""

    label: str
    sub: str = ""
    icons: tuple[icon_art.Icon, ...] = ()


@dataclass(frozen=True)
class Stage:
    """One row of the diagram. One node is a step; several are alternatives (`one of`) or, with
    `sequence`, steps taken left to right. `caption` is printed above the row."""

    nodes: tuple[Node, ...]
    caption: str = ""
    sequence: bool = False


@dataclass(frozen=True)
class Diagram:
    name: str  # file stem under figures/ and the figure's anchor
    title: str
    stages: tuple[Stage, ...]
    loop: str = ""  # a label for an arrow from the last stage back to the first
    note: str = ""  # one line of text under the picture


def wrap(text: str, width: float, size: float) -> list[str]:
    """`text` broken into lines that fit `width` user units at font `size` (words kept whole;
    a word longer than a line stands alone)."""
    room = max(1, int(width / (size * CHAR)))
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines or [""]


def _text(
    x: float,
    y: float,
    lines: list[str],
    size: float,
    *,
    bold: bool = False,
    color: str = INK,
    anchor: str = "middle",
) -> list[str]:
    """A `text` element, one `tspan` per line; y is the first line's baseline."""
    weight = ' font-weight="bold"' if bold else ""
    out = [
        f'<text x="{x:.1f}" y="{y:.1f}" font-family="{FONT}" font-size="{size}"'
        f'{weight} fill="{color}" text-anchor="{anchor}">'
    ]
    for i, line in enumerate(lines):
        dy = "0" if i == 0 else f"{size * LINE:.2f}"
        out.append(f'<tspan x="{x:.1f}" dy="{dy}">{html_text(line)}</tspan>')
    out.append("</text>")
    return ["".join(out)]


def _icons_width(node: Node, width: float) -> float:
    """The room the node's icons take at the left of its box (none when the box is narrow:
    then they stand in a row above the label)."""
    room = len(node.icons) * (ICON + 2)
    return room if node.icons and room < width / 3 else 0


def _box_lines(node: Node, width: float) -> tuple[list[str], list[str]]:
    inner = width - 2 * PAD - _icons_width(node, width)
    return wrap(node.label, inner, LABEL_SIZE), wrap(node.sub, inner, SUB_SIZE) if node.sub else []


def _icons_above(node: Node, width: float) -> float:
    return ICON + 3 if node.icons and not _icons_width(node, width) else 0


def _box_height(node: Node, width: float) -> float:
    label, sub = _box_lines(node, width)
    return (2 * PAD + _icons_above(node, width) + len(label) * LABEL_SIZE * LINE
            + len(sub) * SUB_SIZE * LINE)


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    """A straight line with a filled head at (x2, y2)."""
    out = (
        f'<path d="M{x1:.1f} {y1:.1f} L{x2:.1f} {y2:.1f}" stroke="{ACCENT}" '
        f'stroke-width="1.2" fill="none"/>'
    )
    if y2 > y1:  # down
        head = f"M{x2 - 4:.1f} {y2 - 6:.1f} L{x2 + 4:.1f} {y2 - 6:.1f} L{x2:.1f} {y2:.1f} Z"
    elif y2 < y1:  # up
        head = f"M{x2 - 4:.1f} {y2 + 6:.1f} L{x2 + 4:.1f} {y2 + 6:.1f} L{x2:.1f} {y2:.1f} Z"
    elif x2 > x1:  # right
        head = f"M{x2 - 6:.1f} {y2 - 4:.1f} L{x2 - 6:.1f} {y2 + 4:.1f} L{x2:.1f} {y2:.1f} Z"
    else:  # left
        head = f"M{x2 + 6:.1f} {y2 - 4:.1f} L{x2 + 6:.1f} {y2 + 4:.1f} L{x2:.1f} {y2:.1f} Z"
    return out + f'<path d="{head}" fill="{ACCENT}"/>'


def render(d: Diagram) -> str:
    """The diagram as one standalone SVG document (also valid inline in HTML)."""
    body: list[str] = []
    left = MARGIN + (22 if d.loop else 0)  # room for the loop arrow on the left
    usable = WIDTH - left - MARGIN
    y: float = MARGIN + TITLE_SIZE
    body += _text(left, y, [d.title], TITLE_SIZE, bold=True, color=ACCENT, anchor="start")
    y += 8
    tops: list[tuple[float, float, float]] = []  # each stage's (top, bottom, centre x)
    for si, stage in enumerate(d.stages):
        if si:
            y += GAP
        if stage.caption:
            cap = wrap(stage.caption, usable, SUB_SIZE)
            body += _text(left, y + SUB_SIZE, cap, SUB_SIZE, color=MUTED, anchor="start")
            y += len(cap) * SUB_SIZE * LINE + 3
        n = len(stage.nodes)
        gap = 14 if stage.sequence else 8
        width = (usable - gap * (n - 1)) / n if n else usable
        height = max((_box_height(node, width) for node in stage.nodes), default=0)
        top = y
        for i, node in enumerate(stage.nodes):
            x = left + i * (width + gap)
            fill = SOFT if n == 1 else PAPER
            body.append(
                f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" '
                f'height="{height:.1f}" rx="3" fill="{fill}" stroke="{ACCENT}" '
                'stroke-width="0.8"/>'
            )
            label, sub = _box_lines(node, width)
            beside = _icons_width(node, width)
            above = _icons_above(node, width)
            row = len(node.icons) * (ICON + 2) - 2
            ix = x + PAD if beside else x + (width - row) / 2
            for k, icon in enumerate(node.icons):
                body.append(icon_art.placed(icon, ix + k * (ICON + 2), top + PAD - 1, ICON))
            cx = x + beside + (width - beside) / 2
            ty = top + PAD + above + LABEL_SIZE * 0.9
            body += _text(cx, ty, label, LABEL_SIZE, bold=True)
            if sub:
                body += _text(cx, ty + len(label) * LABEL_SIZE * LINE, sub, SUB_SIZE, color=MUTED)
            if stage.sequence and i:
                mid = top + height / 2
                body.append(_arrow(x - gap + 1, mid, x - 1, mid))
        y = top + height
        tops.append((top, y, left + usable / 2))
    for (_, bottom, cx), (top, _, _) in itertools.pairwise(tops):
        body.append(_arrow(cx, bottom + 1, cx, top - 1))
    if d.loop and tops:
        first_mid = tops[0][0] + 8
        last_mid = tops[-1][1] - 8
        x = MARGIN + 6
        body.append(
            f'<path d="M{left - 1:.1f} {last_mid:.1f} L{x:.1f} {last_mid:.1f} '
            f'L{x:.1f} {first_mid:.1f}" stroke="{ACCENT}" stroke-width="1.2" '
            'fill="none" stroke-dasharray="4 2"/>'
        )
        body.append(_arrow(x, first_mid, left - 1, first_mid))
        y += 4
        body += _text(
            left, y + SUB_SIZE, [f"\u21ba {d.loop}"], SUB_SIZE, color=ACCENT, anchor="start"
        )
        y += SUB_SIZE * LINE
    if d.note:
        note = wrap(d.note, usable, SUB_SIZE)
        body += _text(left, y + SUB_SIZE + 4, note, SUB_SIZE, color=MUTED, anchor="start")
        y += len(note) * SUB_SIZE * LINE + 4
    height = y + MARGIN
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="0 0 {WIDTH} '
        f'{height:.0f}" width="{WIDTH}" height="{height:.0f}" role="img" '
        f'aria-label="{html_text(d.title)}">'
        f"<title>{html_text(d.title)}</title>" + "".join(body) + "</svg>\n"
    )


__all__ = ["Diagram", "Node", "Stage", "render", "wrap"]
