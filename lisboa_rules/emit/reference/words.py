"""Rule text in words: placeholders filled from the model, formulas said in words.

Both back ends use this: the engine for its refusal messages, the reference for its pages. The
result is a list of segments so that each format can escape text and mark assumed values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lisboa_rules.lang import expr
from lisboa_rules.lang import text as rtext
from lisboa_rules.model.types import Model, Rule

FORMULA_KEYS = ("formula", "land_price", "condition", "measure", "eligible", "per_color")


@dataclass(frozen=True)
class Segment:
    """A piece of rule text: plain words, or a value bound from the data."""

    text: str
    value: bool = False
    assumptions: tuple[str, ...] = ()
    path: tuple[str, ...] = ()


def names_of(m: Model) -> dict[str, str]:
    """Display names for ids that text may bind (Nobles, businesses, actions, decks)."""
    out: dict[str, str] = {}
    for n in m.nobles:
        out[n.id] = n.name
    for b in m.businesses:
        out[b.id] = b.name
    for na in m.noble_actions:
        out[na.id] = na.name
    for sa in m.state_actions:
        out[sa.id] = sa.name
    for d in m.decks:
        out[d.id] = d.name
    return out


def find_owner(m: Model, r: Rule) -> tuple[Any, tuple[str | int, ...]]:
    """The object that holds a rule's text, and its path (kind first)."""
    if r.owner:
        node = m.data.get(r.section)
        for key in r.owner:
            if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                node = node[key]
            elif isinstance(node, dict):
                node = node.get(key)
        if isinstance(node, dict) and node.get("text") == r.text:
            return node, (r.section, *r.owner)
    doc = m.data.get(r.section)
    found = _find(doc, r.text, (r.section,))
    return found if found is not None else ({}, (r.section,))


def _find(
    node: Any, text: str, path: tuple[str | int, ...]
) -> tuple[Any, tuple[str | int, ...]] | None:
    if isinstance(node, dict):
        if node.get("text") == text:
            return node, path
        for k, v in node.items():
            hit = _find(v, text, (*path, k))
            if hit is not None:
                return hit
    elif isinstance(node, list):
        for i, v in enumerate(node):
            hit = _find(v, text, (*path, i))
            if hit is not None:
                return hit
    return None


def formula_words(m: Model, source: str, params: dict[str, int]) -> str:
    """A formula in words; params appear as their values."""
    env = {
        v.name: expr.NameInfo("int", tuple(b.id for b in m.businesses) if v.per else None)
        for v in m.vocabulary
    }
    for k in params:
        env[k] = expr.NameInfo("int")
    try:
        f = expr.parse(source, env)
    except expr.FormulaError:
        return source
    words = {v.name: v.words for v in m.vocabulary}
    names = names_of(m)

    def say(name: str, item: str | None) -> str:
        if name in params:
            return str(params[name])
        return words.get(name, name).replace("{item}", names.get(item or "", item or ""))

    return expr.to_words(f, say)


def _assumptions_along(m: Model, path: tuple[str, ...]) -> tuple[str, ...]:
    node: Any = m.data
    found: tuple[str, ...] = ()
    for key in path:
        if isinstance(node, dict) and isinstance(node.get("assumptions"), list):
            found = tuple(node["assumptions"])
        node = rtext.lookup(node, (key,))
        if rtext.is_missing(node):
            break
    if isinstance(node, dict) and isinstance(node.get("assumptions"), list):
        found = tuple(node["assumptions"])
    return found


def segments(m: Model, text: str, local: Any) -> list[Segment]:
    """Split rule text into words and bound values."""
    names = names_of(m)
    out: list[Segment] = []
    pos = 0
    local_assumed = tuple(local.get("assumptions", ())) if isinstance(local, dict) else ()
    params = dict(local.get("params", {})) if isinstance(local, dict) else {}
    for ph in rtext.placeholders(text):
        out.append(Segment(text[pos : ph.start]))
        pos = ph.start + len(ph.raw) + 2
        value, where = rtext.resolve(ph, local, m.data)
        if rtext.is_missing(value):
            out.append(Segment("{" + ph.raw + "}"))
            continue
        if ph.path and ph.path[-1] in FORMULA_KEYS and isinstance(value, str):
            owner = (
                rtext.lookup(local, ph.path[:-1])
                if where is None
                else rtext.lookup(m.data, where[:-1])
            )
            p = dict(owner.get("params", {})) if isinstance(owner, dict) else params
            shown = formula_words(m, value, p)
        else:
            shown = rtext.format_value(value, ph.filter, lambda s: names.get(s, s))
        assumed = local_assumed if where is None else _assumptions_along(m, where)
        out.append(Segment(shown, True, assumed, ph.path))
    out.append(Segment(text[pos:]))
    return [s for s in out if s.text]


def plain_text(m: Model, r: Rule) -> str:
    """A rule's text with every placeholder filled in, as plain text."""
    local, _ = find_owner(m, r)
    return "".join(s.text for s in segments(m, r.text, local)).strip()


def plain(m: Model, text: str, local: Any) -> str:
    """Any text with placeholders filled in, as plain text."""
    return "".join(s.text for s in segments(m, text, local)).strip()
