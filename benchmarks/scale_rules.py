"""Make a scaled copy of the rules: k times the Political cards and k times the Decrees.

The copy is textual, so every other line of rules/ (and every span) stays as written:

- every card line of `rules/components.yaml` is repeated k times; copy c > 0 adds c * STEP to
  the card number, where STEP is the first power of ten above the largest number, so numbers stay
  unique and the original cards (which variants refer to, e.g. the Queen's card 57) keep theirs;
  each deck and each display pile gets exactly k times its cards, so the piles stay balanced;
- every Decree line is repeated k times; copy c > 0 gets the id `<id>-x<c>`, same condition, same
  wigs.

Nothing else changes (Nobles, Plans, flow, scoring, variants), so the build does k times the
card and Decree work on top of a fixed amount of everything else.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

CARD_LINE = re.compile(r"^(\s*- \{number: )(\d+)(,.*)$")
DECREE_LINE = re.compile(r"^(\s*- \{id: )([a-z][a-z0-9-]*)(,.*)$")


def scale_components(text: str, k: int) -> str:
    """Return components.yaml with k copies of each card and each Decree (k >= 1)."""
    if k < 1:
        raise ValueError("scale must be at least 1")
    lines = text.splitlines(keepends=True)
    numbers = [int(m.group(2)) for ln in lines if (m := CARD_LINE.match(ln))]
    if not numbers:
        raise ValueError("no card lines found in components.yaml")
    step = 10 ** len(str(max(numbers)))
    out: list[str] = []
    section = ""
    cards: list[str] = []
    decrees: list[str] = []

    def flush() -> None:
        for c in range(k):
            for ln in cards:
                m = CARD_LINE.match(ln)
                assert m is not None
                out.append(f"{m.group(1)}{int(m.group(2)) + c * step}{m.group(3)}\n")
        for c in range(k):
            for ln in decrees:
                m = DECREE_LINE.match(ln)
                assert m is not None
                new_id = m.group(2) if c == 0 else f"{m.group(2)}-x{c}"
                out.append(f"{m.group(1)}{new_id}{m.group(3)}\n")
        cards.clear()
        decrees.clear()

    for ln in lines:
        top = re.match(r"^([a-z_]+):", ln)
        if top:
            flush()
            section = top.group(1)
        if section == "cards" and CARD_LINE.match(ln):
            cards.append(ln)
        elif section == "decrees" and DECREE_LINE.match(ln):
            decrees.append(ln)
        else:
            out.append(ln)
    flush()
    return "".join(out)


def make_scaled_rules(rules_dir: Path, dest: Path, k: int) -> Path:
    """Copy rules_dir to dest (replacing it) with components.yaml scaled k times; return dest."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(rules_dir, dest)
    comp = dest / "components.yaml"
    comp.write_text(scale_components(comp.read_text(encoding="utf-8"), k), encoding="utf-8")
    state = dest / "state.yaml"
    state.write_text(bound_display(state.read_text(encoding="utf-8")), encoding="utf-8")
    return dest


DISPLAY_LINE = re.compile(r"^(\s*- \{id: decree_display, type: \"list\[decree\]\", )(.*)$", re.M)


def bound_display(text: str) -> str:
    """state.yaml with the Decree display's `max_items` declared (it shows
    components.decree_display.size Decrees, however many the deck holds): the cost check bounds
    a Decree choice by the display, which it would otherwise bound by every Decree (2 of 240 at
    x10: more moves than one decision may list). A house rule of the base game could overfill
    the display, so rules/ does not declare it; these scaled copies play the base game."""
    out, n = DISPLAY_LINE.subn(r"\1max_items: components.decree_display.size, \2", text)
    if n != 1:
        raise ValueError("no decree_display line found in state.yaml")
    return out


def count_items(text: str) -> tuple[int, int]:
    """(cards, Decrees) in a components.yaml text."""
    cards = decrees = 0
    section = ""
    for ln in text.splitlines():
        top = re.match(r"^([a-z_]+):", ln)
        if top:
            section = top.group(1)
        if section == "cards" and CARD_LINE.match(ln):
            cards += 1
        elif section == "decrees" and DECREE_LINE.match(ln):
            decrees += 1
    return cards, decrees
