"""Icons as SVG text, drawn from a generic description. Pure, no game word.

An icon of the rules (rules/vocabulary.yaml `icons:`) is a shape from a small generic set,
a fill and a stroke colour and an optional glyph of one or two characters; this module draws it
in a 20 x 20 box, as an inline `<svg>` for a page (`inline`) or as a `<g>` placed inside another
picture (`placed`, for the diagrams). Every word goes through `encode.html_text`; colours are
checked by the schema (`#rrggbb`) and checked again here, so nothing but a colour reaches an
attribute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lisboa_rules.core.encode import html_text

BOX = 20  # the icon's box, in user units
FONT = "Liberation Sans, DejaVu Sans, Arial, sans-serif"
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")

# Each shape as SVG elements in the 20 x 20 box; `{f}` the fill, `{s}` the stroke.
SHAPES: dict[str, str] = {
    "circle": '<circle cx="10" cy="10" r="8.6" fill="{f}" stroke="{s}" stroke-width="1.3"/>',
    "square": '<rect x="2" y="2" width="16" height="16" rx="2" fill="{f}" stroke="{s}" '
              'stroke-width="1.3"/>',
    "diamond": '<path d="M10 1.2 L18.8 10 L10 18.8 L1.2 10 Z" fill="{f}" stroke="{s}" '
               'stroke-width="1.3" stroke-linejoin="round"/>',
    "hexagon": '<path d="M10 1.3 L17.6 5.6 L17.6 14.4 L10 18.7 L2.4 14.4 L2.4 5.6 Z" '
               'fill="{f}" stroke="{s}" stroke-width="1.3" stroke-linejoin="round"/>',
    "triangle": '<path d="M10 1.8 L18.6 17.6 L1.4 17.6 Z" fill="{f}" stroke="{s}" '
                'stroke-width="1.3" stroke-linejoin="round"/>',
    "shield": '<path d="M3 2.5 L17 2.5 L17 9.5 C17 14 13.5 16.8 10 18.5 C6.5 16.8 3 14 3 9.5 Z" '
              'fill="{f}" stroke="{s}" stroke-width="1.3" stroke-linejoin="round"/>',
    "card": '<rect x="4" y="1.5" width="12" height="17" rx="1.6" fill="{f}" stroke="{s}" '
            'stroke-width="1.3"/>',
    "pawn": '<circle cx="10" cy="5.2" r="3.4" fill="{f}" stroke="{s}" stroke-width="1.2"/>'
            '<path d="M4 18.4 C4 12.5 6.5 9.6 10 9.6 C13.5 9.6 16 12.5 16 18.4 Z" fill="{f}" '
            'stroke="{s}" stroke-width="1.2" stroke-linejoin="round"/>',
    "house": '<path d="M2.5 9 L10 2 L17.5 9 L17.5 18 L2.5 18 Z" fill="{f}" stroke="{s}" '
             'stroke-width="1.3" stroke-linejoin="round"/>'
             '<rect x="8" y="12" width="4" height="6" fill="{s}"/>',
    "cube": '<path d="M10 2 L17.5 5.8 L17.5 14.2 L10 18 L2.5 14.2 L2.5 5.8 Z" fill="{f}" '
            'stroke="{s}" stroke-width="1.2" stroke-linejoin="round"/>'
            '<path d="M2.5 5.8 L10 9.6 L17.5 5.8 M10 9.6 L10 18" fill="none" stroke="{s}" '
            'stroke-width="1.1"/>',
    "scroll": '<path d="M4 3 L16 3 L16 15.5 C16 17.5 14.5 18 13 18 L4 18 Z" fill="{f}" '
              'stroke="{s}" stroke-width="1.3" stroke-linejoin="round"/>'
              '<path d="M6.5 7 L13.5 7 M6.5 10 L13.5 10 M6.5 13 L11 13" stroke="{s}" '
              'stroke-width="1.1"/>',
    "hull": '<path d="M1.5 10.5 L18.5 10.5 L15.5 16.5 L4.5 16.5 Z" fill="{f}" stroke="{s}" '
            'stroke-width="1.3" stroke-linejoin="round"/>'
            '<path d="M10 10.5 L10 2 L15.5 8.5 L10 8.5" fill="{f}" stroke="{s}" '
            'stroke-width="1.1" stroke-linejoin="round"/>',
    "star": '<path d="M10 1.3 L12.5 7.1 L18.7 7.5 L13.9 11.5 L15.5 17.7 L10 14.3 L4.5 17.7 '
            'L6.1 11.5 L1.3 7.5 L7.5 7.1 Z" fill="{f}" stroke="{s}" stroke-width="1.1" '
            'stroke-linejoin="round"/>',
}


@dataclass(frozen=True)
class Icon:
    """One icon: its id, what it means (the key's words), and how it is drawn."""

    id: str
    term: str
    shape: str
    fill: str
    stroke: str
    ink: str = ""
    glyph: str = ""


def _colour(value: str) -> str:
    if not _COLOUR.fullmatch(value):
        raise ValueError(f"not a colour: {value!r}")
    return value


def body(icon: Icon) -> str:
    """The icon's elements in its 20 x 20 box (no `<svg>` around them)."""
    shape = SHAPES.get(icon.shape, SHAPES["circle"])
    out = shape.format(f=_colour(icon.fill), s=_colour(icon.stroke))
    if icon.glyph:
        size = 10 if len(icon.glyph) == 1 else 8
        ink = _colour(icon.ink or icon.stroke)
        out += (f'<text x="10" y="{10 + size * 0.36:.1f}" font-family="{FONT}" '
                f'font-size="{size}" font-weight="bold" fill="{ink}" '
                f'text-anchor="middle">{html_text(icon.glyph)}</text>')
    return out


def inline(icon: Icon, size: float = 11) -> str:
    """The icon as an inline `<svg>` of `size` points, titled with its term."""
    return (f'<svg class="icon" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {BOX} {BOX}" '
            f'width="{size}pt" height="{size}pt" role="img" aria-label="{html_text(icon.term)}">'
            f'<title>{html_text(icon.term)}</title>{body(icon)}</svg>')


def placed(icon: Icon, x: float, y: float, size: float) -> str:
    """The icon as a group drawn at (x, y), `size` user units wide, inside another SVG."""
    return (f'<g transform="translate({x:.1f} {y:.1f}) scale({size / BOX:.3f})">'
            f'<title>{html_text(icon.term)}</title>{body(icon)}</g>')


def default(term: str) -> Icon:
    """The icon of a Noble or a business the rules give none: a white circle with the first
    letter of its name."""
    glyph = next((c for c in term if c.isalnum()), "?").upper()
    return Icon("", term, "circle", "#ffffff", "#6b6257", "#1f1b16", glyph)


__all__ = ["BOX", "SHAPES", "Icon", "body", "default", "inline", "placed"]
