"""Rule text: `{placeholders}` bound to data values, checked at build time, rendered for print.

A placeholder is `{path}` or `{path|filter}`. The path is looked up first in the object that
holds the text (`{params.sets}`), then in the merged documents from the document kind down
(`{game.start.hand}`); list items with an `id` are addressed by it
(`{nobles.nobles.king.name}`). Filters: `ordinal` (2 -> 2nd), `count` (a list's length),
`chain` (names joined by ', then '), and one per term of the game with a singular (`game.terms`:
`money` and `money_one`): a number with that term, singular for 1 (`{reward.reis|money}` ->
`1 real`, `2 réis`; the words are the data's). A number a placeholder prints right before
the words of such a term agrees with them (`{game.start.tokens} token`: `1 token`, `2 tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

PLACEHOLDER = re.compile(r"\{([^{}\s]*)\}")
FILTERS = ("ordinal", "count", "chain")
_MISSING = object()
# how list items are addressed (overlays, placeholders); `term`: the glossary's entries, so
# that a variant changes one of them instead of writing the whole glossary again
IDENTITY_KEYS = ("id", "number", "color", "name", "term")
# A list index in a placeholder: ASCII digits only (str.isdigit() and int() also take '²', '٣'
# and '３'), and short enough for int() whatever the interpreter's digit limit.
_INDEX = re.compile(r"[0-9]{1,9}")
# what continues a word: a term's words followed by it are part of another word ("token-cards")
_WORD_GOES_ON = re.compile(r"[\w-]")


@dataclass(frozen=True)
class Placeholder:
    start: int  # offset of '{' in the text
    path: tuple[str, ...]
    filter: str | None
    raw: str


def placeholders(text: str) -> Iterator[Placeholder]:
    """Every `{...}` in `text`, parsed (an empty or malformed one has an empty path)."""
    for m in PLACEHOLDER.finditer(text):
        raw = m.group(1)
        path_text, _, filt = raw.partition("|")
        path = tuple(path_text.split(".")) if path_text else ()
        yield Placeholder(m.start(), path, filt or None, raw)


def lookup(node: Any, path: tuple[str, ...]) -> Any:
    """Walk `path` through dicts and id-keyed lists; return _MISSING when it does not exist.
    An id with dots in it (`score.officials`) spans as many keys of the path as it has parts:
    `scoring.sources.score.officials.groups`."""
    k = 0
    while k < len(path):
        key = path[k]
        k += 1
        if isinstance(node, dict):
            if key not in node:
                return _MISSING
            node = node[key]
        elif isinstance(node, list):
            ids = {_identity(i): i for i in reversed(node) if isinstance(i, dict)}
            if key in ids:
                node = ids[key]
                continue
            if _INDEX.fullmatch(key) and int(key) < len(node):
                node = node[int(key)]
                continue
            dotted = next((j for j in range(len(path), k, -1)
                           if ".".join(path[k - 1:j]) in ids), None)
            if dotted is None:
                return _MISSING
            node, k = ids[".".join(path[k - 1:dotted])], dotted
        else:
            return _MISSING
    return node


def _identity(item: dict[str, Any]) -> str | None:
    for name in IDENTITY_KEYS:
        if name in item:
            return str(item[name])
    return None


def is_missing(value: Any) -> bool:
    """True when `lookup` found nothing."""
    return value is _MISSING


def resolve(
    ph: Placeholder, local: Any, documents: dict[str, Any]
) -> tuple[Any, tuple[str, ...] | None]:
    """Value of a placeholder and, when global, the (kind, *path) it came from."""
    value = lookup(local, ph.path)
    if not is_missing(value):
        return value, None
    if ph.path and ph.path[0] in documents:
        value = lookup(documents[ph.path[0]], ph.path[1:])
        if not is_missing(value):
            return value, ph.path
    return _MISSING, None


# The last terms `unit_filters` read and what it found in them: a reference asks for every
# text it prints (thousands of times a build), always of the same few rule sets' terms. Kept
# with the terms themselves and compared by identity and then by value, so a mapping changed
# in place (or another one at the same address) is read again.
_UNITS: list[tuple[dict[str, Any], dict[str, Any], dict[str, tuple[str, str]]]] = []


def unit_filters(terms: Any) -> dict[str, tuple[str, str]]:
    """The filters that count in a term of the game: each key K of `game.terms` that has a
    `K_one`, with its (singular, plural) words. The mapping returned is shared: read it only."""
    if not isinstance(terms, dict):
        return {}
    for seen, copy, found in _UNITS:
        if seen is terms and copy == terms:
            return found
    found = {k: (terms[f"{k}_one"], v) for k, v in terms.items()
             if not k.endswith("_one") and isinstance(v, str)
             and isinstance(terms.get(f"{k}_one"), str)}
    _UNITS.insert(0, (terms, dict(terms), found))
    del _UNITS[8:]
    return found


def agreeing(text: str, pos: int, n: int, units: dict[str, tuple[str, str]]
             ) -> tuple[str, int] | None:
    """Where a number is printed before `text[pos:]`, and that goes on with a space and the
    words of a term of the game (singular or plural, the longest that fits, as a whole
    word): those words as they agree with `n` (" token" for 1, " tokens" for 2), and the
    position after them. None when no term's words follow."""
    best: tuple[str, int] | None = None
    for one, many in units.values():
        for said in (one, many):
            end = pos + 1 + len(said)
            if (text.startswith(" " + said, pos) and not _WORD_GOES_ON.match(text, end)
                    and (best is None or end > best[1])):
                best = (" " + (one if n == 1 else many), end)
    return best


def counted(n: int, words: tuple[str, str]) -> tuple[str, str]:
    """An amount and its unit (singular for one), as two pieces: `2`, `réis`. An amount is said
    by its size: a negative one (a penalty of `reis: -3`) reads `3 réis`, as the rulebook
    says it, since the words around it ("pay", "penalty") say which way it goes."""
    size = abs(n)
    return str(size), words[0] if size == 1 else words[1]


def ordinal(n: int) -> str:
    """2 -> '2nd', 11 -> '11th'."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}" + {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def format_value(value: Any, filt: str | None, name_of: Callable[[str], str]) -> str:
    """Plain text for a bound value (the reference escapes it for its own format)."""
    if filt == "ordinal" and isinstance(value, int) and not isinstance(value, bool):
        return ordinal(value)
    if filt == "count" and isinstance(value, list | dict):
        return str(len(value))
    if filt == "chain" and isinstance(value, list):
        return ", then ".join(_item_name(v, name_of) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_item_name(v, name_of) for v in value)
    if isinstance(value, str):
        return name_of(value)
    return str(value)


def _item_name(v: Any, name_of: Callable[[str], str]) -> str:
    if isinstance(v, dict):
        return str(v.get("name", v.get("id", "")))
    return name_of(v) if isinstance(v, str) else str(v)


def _printable_item(v: Any) -> bool:
    """Whether an item of a list prints as words: a value, or an item with a name or an id (a
    card, which has neither, would print as nothing)."""
    if isinstance(v, dict):
        return any(isinstance(v.get(k), str) and v.get(k) for k in ("name", "id"))
    return isinstance(v, str | int) and (not isinstance(v, str) or bool(v))


def filter_fits(value: Any, filt: str | None) -> bool:
    """Whether the filter applies to this kind of value."""
    if filt is None:
        return not isinstance(value, dict) and not (
            isinstance(value, list) and not all(_printable_item(v) for v in value))
    if filt == "ordinal":
        return isinstance(value, int) and not isinstance(value, bool)
    if filt == "count":
        return isinstance(value, list | dict)
    if filt == "chain":
        return isinstance(value, list) and all(_printable_item(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)  # a number of a term
