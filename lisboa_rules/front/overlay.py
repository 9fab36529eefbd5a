"""Variant overlays: partial documents merged onto the base documents, keeping source spans.

Merge rules (OpenFisca-reform style, on a copy of the base):
- a mapping merges key by key; a value `{$remove: true}` deletes the key; a key the base does
  not have is an error (overlay-unknown-key, with did-you-mean) unless it is added explicitly,
  `key: {$add: VALUE}`;
- a list whose items carry `id` (or `number`, or `color` for the Ships: the keys placeholders
  address items by, lang/text.py) merges item by item on that key; an item
  `{id: x, $remove: true}` deletes item x; an id the list does not have is an error
  (overlay-unknown-item, with did-you-mean) unless the item is a new one, `{$add: true, id: x,
  ...}` (the whole item), which is appended;
- anything else replaces the base value.
Every value keeps the span of the file it came from, so diagnostics point into the overlay.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from lisboa_rules.core.diagnostics import Diagnostic, Related, suggest
from lisboa_rules.core.source import Span, nearest
from lisboa_rules.front.schema import allowed_keys
from lisboa_rules.lang.text import IDENTITY_KEYS

Path = tuple[str | int, ...]
REMOVE = "$remove"
ADD = "$add"
AFTER = "$after"  # a new list item's place: after (or before) the item with this id
BEFORE = "$before"
# The subject of an `overlay-unknown-item` for an item a change names and the list lacks:
# (NO_ITEM, the item's word, its id, the list as the message names it)
NO_ITEM = "no-item"


@dataclass
class Doc:
    """One rules document (base or merged): data plus value and key spans by path."""

    kind: str
    data: Any
    spans: dict[Path, Span]
    key_spans: dict[Path, Span]
    files: tuple[str, ...]
    origin: dict[Path, str] = field(default_factory=dict)  # path -> variant id that set it
    where: str = ""  # how diagnostics name the root ("court", "scoring.sources[score.stores]")
    # the id of the item the root is (a scratch doc of one list item), or None: what a list
    # item without an id inside it is named after (`follow-visit.then.4`, `placed_name`)
    owner: str | None = None
    # the path of the root in its kind's document (a scratch doc's item), for the schema's
    # word on which keys a place takes
    root: Path = ()

    def span(self, path: Path, key: bool = False) -> Span:
        """The span at `path`, or the nearest enclosing one."""
        return nearest(self.key_spans if key else self.spans, path) or Span.point(self.files[0])


@dataclass(frozen=True)
class Change:
    """One value a variant sets: where, what it was, what it becomes."""

    variant: str
    kind: str
    path: Path
    before: Any
    after: Any
    span: Span
    # the path with list items named by their identity (`steps[visit-noble-action]`), as
    # `identity_path` finds it in the document the variant was laid over: two variants' changes
    # are compared by it (an index depends on what earlier variants added or removed)
    key: tuple[str | int, ...] = ()


def _identity_key(item: dict[str, Any]) -> str | None:
    """The key an item is identified by (the first of IDENTITY_KEYS it has)."""
    for key in IDENTITY_KEYS:
        if key in item and isinstance(item[key], str | int):
            return key
    return None


def placed_name(data: Any, path: Path, owner: str | None) -> str | None:
    """The name of the list at `path` of `data` whose items have no id, after its nearest
    owner with an id: `follow-visit.then` (the item N is `follow-visit.then.N`, from 0), or
    None when no owner has an id or a key on the way is no word of an id."""
    rel: list[str] = []
    node = data
    for p in path:
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            owner, rel = node["id"], []
        if isinstance(p, int):
            if not isinstance(node, list) or not 0 <= p < len(node):
                return None
            rel.append(str(p))
            node = node[p]
            continue
        if not isinstance(node, dict) or not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", p):
            return None
        rel.append(p)
        node = node.get(p)
    if owner is None or not rel or not isinstance(node, list):
        return None
    return ".".join([owner, *rel])


def _identity(item: Any) -> str | int | None:
    if isinstance(item, dict):
        for key in IDENTITY_KEYS:
            if key in item and isinstance(item[key], str | int):
                value: str | int = item[key]
                return value
    return None


def _copy_spans(
    src: dict[Path, Span], src_path: Path, dst: dict[Path, Span], dst_path: Path
) -> None:
    n = len(src_path)
    for p, s in src.items():
        if p[:n] == src_path:
            dst[dst_path + p[n:]] = s


def _drop_spans(table: dict[Path, Span], path: Path) -> None:
    n = len(path)
    for p in [p for p in table if p[:n] == path]:
        del table[p]


_SCALARS = (str, int, float, bool, type(None))


def copy_data(value: Any) -> Any:
    """A deep copy of loaded rules data (mappings, lists, scalars), as copy.deepcopy makes it
    without its memo: the loader refuses aliases, so no part of the data is shared."""
    t = type(value)
    if t is dict:
        return {k: copy_data(v) for k, v in value.items()}
    if t is list:
        return [copy_data(v) for v in value]
    if t in _SCALARS:
        return value
    return copy.deepcopy(value)


def apply_overlay(
    base: Doc,
    variant: str,
    changes: Any,
    o_spans: dict[Path, Span],
    o_keys: dict[Path, Span],
    o_path: Path,
) -> tuple[Doc, list[Change], list[Diagnostic]]:
    """Merge one variant's `changes` for this kind onto a copy of `base`."""
    out = Doc(
        base.kind,
        copy_data(base.data),
        dict(base.spans),
        dict(base.key_spans),
        base.files,
        dict(base.origin),
        base.where or base.kind,
    )
    log: list[Change] = []
    diags: list[Diagnostic] = []
    out.data = _merge(out, out.data, (), changes, o_path, o_spans, o_keys, variant, log, diags)
    return out, [c for c in log if c.before != c.after], diags


def _merge(
    out: Doc,
    cur: Any,
    path: Path,
    over: Any,
    o_path: Path,
    o_spans: dict[Path, Span],
    o_keys: dict[Path, Span],
    variant: str,
    log: list[Change],
    diags: list[Diagnostic],
) -> Any:
    here = o_spans.get(o_path) or Span(out.files[0], 1, 1, 1, 1)
    if isinstance(over, dict | list) and not over and _unchanged_by_empty(cur, over):
        diags.append(_no_change(variant, out, path, over, here))
        return cur
    if isinstance(over, dict) and isinstance(cur, dict):
        for key, value in over.items():
            sub_o = (*o_path, key)
            sub = (*path, key)
            if isinstance(value, dict) and value.get(REMOVE) is True:
                if key not in cur:
                    diags.append(_unknown_target(variant, sub, o_keys.get(sub_o, here)))
                    continue
                log.append(Change(variant, out.kind, sub, cur[key], None, o_keys.get(sub_o, here)))
                del cur[key]
                _drop_spans(out.spans, sub)
                _drop_spans(out.key_spans, sub)
                continue
            if _is_add(value):
                # Added by another variant of the combination: a conflict (reported below).
                if key in cur and out.origin.get(sub, variant) == variant:
                    diags.append(
                        Diagnostic(
                            "overlay-unknown-key",
                            f"variant '{variant}' adds '{_where(out, sub)}', which the base "
                            "rules already have (change it without $add)",
                            o_keys.get(sub_o, here),
                        )
                    )
                    continue
                _set(out, cur, key, sub, value[ADD], (*sub_o, ADD), o_spans, o_keys, variant, log)
                if sub_o in o_keys:
                    out.key_spans[sub] = o_keys[sub_o]
                continue
            if key not in cur:
                near = suggest(str(key), [str(k) for k in cur])
                allowed = None if near else allowed_keys(out.kind, (*out.root, *path))
                if allowed is not None and str(key) not in allowed:
                    # a key this place never takes: not "add it", but what it takes
                    msg = (f"{_where(out, path)} takes no key '{key}'; the keys allowed here "
                           f"are: {', '.join(allowed)}")
                    near = suggest(str(key), allowed)
                else:
                    hint = "" if near else f" (a new key is written `{key}: {{$add: VALUE}}`)"
                    msg = f"no key '{key}' in {_where(out, path)}{hint}"
                diags.append(
                    Diagnostic("overlay-unknown-key", msg, o_keys.get(sub_o, here),
                               suggestion=near)
                )
                continue
            if key in cur and isinstance(cur[key], dict | list) and isinstance(value, dict | list):
                cur[key] = _merge(
                    out, cur[key], sub, value, sub_o, o_spans, o_keys, variant, log, diags
                )
                continue
            _set(out, cur, key, sub, value, sub_o, o_spans, o_keys, variant, log)
        return cur
    if (
        isinstance(over, list)
        and isinstance(cur, list)
        and any(_identity(i) is not None for i in [*cur, *over])
    ):
        return _merge_list(out, cur, path, over, o_path, o_spans, o_keys, variant, log, diags)
    log.append(Change(variant, out.kind, path, copy.deepcopy(cur), copy.deepcopy(over), here))
    _drop_spans(out.spans, path)
    _copy_spans(o_spans, o_path, out.spans, path)
    _mark(out, path, variant)
    return copy.deepcopy(over)


def _set(
    out: Doc,
    cur: dict[str, Any],
    key: str,
    sub: Path,
    value: Any,
    sub_o: Path,
    o_spans: dict[Path, Span],
    o_keys: dict[Path, Span],
    variant: str,
    log: list[Change],
) -> None:
    before = copy.deepcopy(cur.get(key))
    cur[key] = copy.deepcopy(value)
    _drop_spans(out.spans, sub)
    _copy_spans(o_spans, sub_o, out.spans, sub)
    if sub_o in o_keys:
        out.key_spans[sub] = o_keys[sub_o]
    span = o_spans.get(sub_o) or o_keys.get(sub_o) or Span(out.files[0], 1, 1, 1, 1)
    log.append(Change(variant, out.kind, sub, before, copy.deepcopy(value), span))
    _mark(out, sub, variant)


def _merge_list(
    out: Doc,
    cur: list[Any],
    path: Path,
    over: list[Any],
    o_path: Path,
    o_spans: dict[Path, Span],
    o_keys: dict[Path, Span],
    variant: str,
    log: list[Change],
    diags: list[Diagnostic],
) -> list[Any]:
    # Re-key the spans of the base items by identity, merge, then lay them out again by index.
    index = {_identity(item): i for i, item in enumerate(cur) if _identity(item) is not None}
    # an item without an id is named by its place (`follow-visit.then.4`), so a variant can
    # change, remove or move it, or put a new one beside it, without rewriting the list
    placed = placed_name(out.data, path, out.owner)
    implicit = {f"{placed}.{i}": i for i, item in enumerate(cur)
                if placed is not None and isinstance(item, dict) and _identity(item) is None}
    for name, i in implicit.items():
        index.setdefault(name, i)
    name_of = {i: name for name, i in implicit.items()}
    items = list(cur)
    by_index_spans = _split_by_index(out.spans, path)
    by_index_keys = _split_by_index(out.key_spans, path)
    saved_spans = {i: by_index_spans.get(i, {}) for i in range(len(cur))}
    saved_keys = {i: by_index_keys.get(i, {}) for i in range(len(cur))}
    order: list[int | None] = list(range(len(cur)))
    new_items: list[tuple[Any, Path]] = []
    moves: list[tuple[int, Any, bool, Path]] = []  # (base index, anchor, after, where)
    named: dict[str | int, Path] = {}  # each identity this overlay's list names, where first
    for j, item in enumerate(over):
        ident = _identity(item)
        sub_o = (*o_path, j)
        adds = isinstance(item, dict) and item.get(ADD) is True
        if ident is not None and not adds:  # two new items of one id: the model's check
            if ident in named:
                first = _item_span(o_spans, named[ident], out)
                diags.append(
                    Diagnostic(
                        "duplicate-id",
                        f"variant '{variant}' names {_item_word(path)} '{ident}' of "
                        f"{_where(out, path)} twice (first at line {first.line}): merge the "
                        "two entries into one",
                        _item_span(o_spans, sub_o, out),
                        (Related(f"'{ident}' is first named here", first),),
                    )
                )
                continue
            named[ident] = sub_o
        if adds and ident is not None and ident in index and (
            out.origin.get((*path, index[ident]), variant) == variant
        ):
            diags.append(
                Diagnostic(
                    "overlay-unknown-item",
                    f"variant '{variant}' adds {_item_word(path)} '{ident}' to "
                    f"{_where(out, path)}, which already has one (change it without $add)",
                    _item_span(o_spans, sub_o, out),
                )
            )
            continue
        if ident is None or ident not in index:
            if isinstance(item, dict) and item.get(REMOVE) is True:
                found = _unknown_target(
                    variant,
                    (*path, str(ident)),
                    o_spans.get(sub_o, Span(out.files[0], 1, 1, 1, 1)),
                )
                if implicit:
                    found = replace(
                        found, message=found.message + _placed_hint(implicit, cur),
                        suggestion=suggest(str(ident), list(implicit)) if ident
                        else _placed_like(item, implicit, cur))
                diags.append(found)
                continue
            if not adds:
                near = suggest(str(ident), [str(i) for i in index]) if ident is not None else None
                shown = f" '{ident}'" if ident is not None else " without an id"
                hint = "" if near else " (a new item is written in full, with `$add: true`)"
                if ident is None and implicit:
                    hint = _placed_hint(implicit, cur) + (
                        " (a new item is written in full, with `$add: true`)")
                    near = _placed_like(item, implicit, cur)
                where = _where(out, path)
                diags.append(
                    Diagnostic(
                        "overlay-unknown-item",
                        f"no {_item_word(path)}{shown} in {where}{hint}",
                        _item_span(o_spans, sub_o, out),
                        suggestion=near,
                        # what is missing, for a pass that knows where else it is added
                        subject=(NO_ITEM, _item_word(path), str(ident), where)
                        if ident is not None else (),
                    )
                )
                continue
            new_items.append(({k: v for k, v in item.items() if k != ADD}, sub_o))
            continue
        i = index[ident]
        if adds and isinstance(item, dict) and (AFTER in item or BEFORE in item):
            # the same new item from another variant of the combination, placed: where it
            # goes is a value both set (a conflict, below), not a move of an item that stays
            key = AFTER if AFTER in item else BEFORE
            log.append(Change(variant, out.kind, (*path, i, key), None, item[key],
                              o_spans.get((*sub_o, key)) or _item_span(o_spans, sub_o, out)))
            item = {k: v for k, v in item.items() if k not in (AFTER, BEFORE)}
        if isinstance(item, dict) and (AFTER in item or BEFORE in item):
            # an item moved: put in its new place once the list is merged (its other keys
            # change it as usual); a step read in another order is a change of its rule
            if (AFTER in item and BEFORE in item) or adds or item.get(REMOVE) is True:
                diags.append(
                    Diagnostic(
                        "overlay-unknown-key",
                        f"{_item_word(path)} '{ident}' of {_where(out, path)} takes one place: "
                        "$after or $before, on an item that stays",
                        _item_span(o_spans, sub_o, out),
                    )
                )
                continue
            key = AFTER if AFTER in item else BEFORE
            moves.append((i, item[key], key == AFTER, sub_o))
            log.append(Change(variant, out.kind, (*path, i, key), None, item[key],
                              o_spans.get((*sub_o, key)) or _item_span(o_spans, sub_o, out)))
            _mark(out, (*path, i), variant)
            item = {k: v for k, v in item.items() if k not in (AFTER, BEFORE)}
            if set(item) == {_identity_key(item)}:
                continue  # moved, not changed
        if not adds and isinstance(item, dict) and set(item) == {_identity_key(item)}:
            what = f"{_item_word(path)} '{ident}' of {_where(out, path)}"
            span = _item_span(o_spans, sub_o, out)
            diags.append(_no_change(variant, out, (*path, i), item, span, what))
            continue
        if adds:  # the same new item from another variant of the combination: a conflict
            item = {k: v for k, v in item.items() if k != ADD}
        if isinstance(item, dict) and item.get(REMOVE) is True:
            log.append(
                Change(
                    variant,
                    out.kind,
                    (*path, i),
                    items[i],
                    None,
                    o_spans.get(sub_o, Span(out.files[0], 1, 1, 1, 1)),
                )
            )
            order[i] = None
            continue
        if ident in implicit and isinstance(item, dict) and "id" in item:
            item = {k: v for k, v in item.items() if k != "id"}  # named by its place: kept so
        # Merge the item's fields in a scratch doc rooted at the item, then put spans back.
        mine = copy.deepcopy(items[i])
        scratch = Doc(
            out.kind, mine, saved_spans[i], saved_keys[i], out.files,
            _extract_origin(out.origin, (*path, i)), f"{_where(out, path)}[{ident}]",
            ident if isinstance(ident, str) and ident not in implicit else
            name_of.get(i) or out.owner, (*out.root, *path, i),
        )
        log_local: list[Change] = []
        merged = _merge(
            scratch,
            mine,
            (),
            item,
            sub_o,
            o_spans,
            o_keys,
            variant,
            log_local,
            diags,
        )
        for ch in log_local:
            log.append(
                Change(ch.variant, ch.kind, (*path, i, *ch.path), ch.before, ch.after, ch.span)
            )
        for p, who in scratch.origin.items():
            if who == variant:
                _mark(out, (*path, i, *p), variant)
        items[i] = merged
        saved_spans[i], saved_keys[i] = scratch.spans, scratch.key_spans
    result: list[Any] = []
    for p in [p for p in out.spans if p[: len(path)] == path and len(p) > len(path)]:
        del out.spans[p]
    for p in [p for p in out.key_spans if p[: len(path)] == path and len(p) > len(path)]:
        del out.key_spans[p]
    # the layout: the base items kept, in order, with the new ones at the end or in their place
    layout: list[tuple[int | None, tuple[Any, Path] | None]] = [
        (kept, None) for kept in order if kept is not None
    ]

    def place_of(anchor: Any, after: bool, verb: str, what: Any, sub_o: Path) -> int | None:
        """Where an item put or moved after/before `anchor` goes in the layout; None (and a
        located error at the id it names, which the suggestion replaces) when no item is it."""
        for n, (kept, new) in enumerate(layout):
            if _identity(items[kept] if kept is not None else new[0] if new else None) == anchor:
                return n + 1 if after else n
            if kept is not None and name_of.get(kept) == anchor:
                return n + 1 if after else n
        known = [str(_identity(items[kept]) or name_of.get(kept))
                 for kept, _ in layout if kept is not None]
        diags.append(
            Diagnostic(
                "overlay-unknown-item",
                f"no {_item_word(path)} '{anchor}' in {_where(out, path)} to {verb} "
                f"'{what}' {'after' if after else 'before'}",
                o_spans.get((*sub_o, AFTER if after else BEFORE))
                or _item_span(o_spans, sub_o, out),
                suggestion=suggest(str(anchor), known),
            )
        )
        return None

    for item, sub_o in new_items:
        after = AFTER in item
        anchor = item.pop(AFTER, None) if after else item.pop(BEFORE, None)
        pos = None if anchor is None else place_of(anchor, after, "put", _identity(item), sub_o)
        layout.insert(len(layout) if pos is None else pos, (None, (item, sub_o)))
    for i, anchor, after, sub_o in moves:
        if order[i] is None:
            continue  # removed by the same variant: said as a removal
        place = next(n for n, (kept, _) in enumerate(layout) if kept == i)
        moved = layout.pop(place)
        pos = place_of(anchor, after, "move", _identity(items[i]), sub_o)
        layout.insert(place if pos is None else pos, moved)
    for kept, new in layout:
        k = len(result)
        if kept is not None:
            result.append(items[kept])
            for p, s in saved_spans[kept].items():
                out.spans[(*path, k, *p)] = s
            for p, s in saved_keys[kept].items():
                out.key_spans[(*path, k, *p)] = s
            continue
        assert new is not None
        item, sub_o = new
        result.append(copy.deepcopy(item))
        _copy_spans(o_spans, sub_o, out.spans, (*path, k))
        _copy_spans(o_keys, sub_o, out.key_spans, (*path, k))
        log.append(
            Change(
                variant,
                out.kind,
                (*path, k),
                None,
                copy.deepcopy(item),
                o_spans.get(sub_o, Span(out.files[0], 1, 1, 1, 1)),
            )
        )
        _mark(out, (*path, k), variant)
    return result


def _placed_hint(implicit: dict[str, int], cur: list[Any]) -> str:
    """What a hint says of the items of a list named by their place."""
    return ("; an item without an id is named by its place: "
            + ", ".join(f"`id: {n}` for `{_brief(cur[i])}`" for n, i in implicit.items()))


def _placed_like(item: Any, implicit: dict[str, int], cur: list[Any]) -> str | None:
    """The one item named by its place that shares a key and its value with `item` (the
    `do: pay-visit` a variant wrote without an id), as the id to write; None if not one."""
    if not isinstance(item, dict):
        return None
    like = [n for n, i in implicit.items() if isinstance(cur[i], dict) and any(
        not str(k).startswith("$") and cur[i].get(k) == v for k, v in item.items())]
    return f"id: {like[0]}" if len(like) == 1 else None


def _brief(item: Any) -> str:
    """An item in a few words, as a hint shows it: its first key and value."""
    if isinstance(item, dict) and item:
        key, value = next(iter(item.items()))
        text = f"{key}: {value}"
        return text if len(text) <= 40 else text[:39] + "…"
    return str(item)[:40]


def _split_by_index(table: dict[Path, Span], prefix: Path) -> dict[int, dict[Path, Span]]:
    """The entries under prefix + (i, ...), grouped by i, in one pass over the table."""
    n = len(prefix)
    out: dict[int, dict[Path, Span]] = {}
    for p, s in table.items():
        if len(p) > n and p[:n] == prefix:
            i = p[n]
            if isinstance(i, int):
                out.setdefault(i, {})[p[n + 1 :]] = s
    return out


def _extract(table: dict[Path, Span], prefix: Path) -> dict[Path, Span]:
    n = len(prefix)
    return {p[n:]: s for p, s in table.items() if p[:n] == prefix}


def _extract_origin(origin: dict[Path, str], prefix: Path) -> dict[Path, str]:
    n = len(prefix)
    return {p[n:]: v for p, v in origin.items() if p[:n] == prefix}


def _is_add(value: Any) -> bool:
    """`{$add: VALUE}`: a key the base does not have, added on purpose."""
    return isinstance(value, dict) and len(value) == 1 and ADD in value


def _where(out: Doc, path: Path) -> str:
    """How a diagnostic names `path` of `out`: "court.costs", "scoring.sources[x].groups"."""
    return ".".join([out.where or out.kind, *(str(p) for p in path)])


def _item_word(path: Path) -> str:
    """What one item of the list at `path` is called: costs -> cost, noble_actions -> noble
    action, entries -> entry."""
    name = str(path[-1]) if path else "item"
    name = name.replace("_", " ")
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name


def _item_span(o_spans: dict[Path, Span], sub_o: Path, out: Doc) -> Span:
    """The item's identity in the overlay (its `id:` value), else the item."""
    for key in IDENTITY_KEYS:
        if (*sub_o, key) in o_spans:
            return o_spans[(*sub_o, key)]
    return o_spans.get(sub_o) or Span(out.files[0], 1, 1, 1, 1)


def _unchanged_by_empty(cur: Any, over: dict[Any, Any] | list[Any]) -> bool:
    """An empty map merged onto a map, or an empty list merged onto a list of identified
    items or onto an empty list, leaves the base as it was."""
    if isinstance(over, dict):
        return isinstance(cur, dict)
    return isinstance(cur, list) and (not cur or any(_identity(i) is not None for i in cur))


def _no_change(
    variant: str, out: Doc, path: Path, over: Any, span: Span, what: str | None = None
) -> Diagnostic:
    """A part of an overlay that changes nothing (a designer's edit that would silently not
    take effect): an empty map or list, or a list item that only names its id."""
    if what is not None:
        why = f"names {what} and changes nothing in it"
        hint = "give the keys that change, or drop the entry"
    else:
        shape = "map" if isinstance(over, dict) else "list"
        why = f"changes nothing in {_where(out, path)}: the {shape} is empty"
        merges = "key by key" if shape == "map" else "item by item"
        hint = (f"a {shape} merges {merges}: give what changes, or drop the empty value; a "
                "key or item is removed with `$remove: true`")
    return Diagnostic("overlay-no-change", f"variant '{variant}' {why} ({hint})", span)


def _mark(out: Doc, path: Path, variant: str) -> None:
    out.origin[path] = variant


def _unknown_target(variant: str, path: Path, span: Span) -> Diagnostic:
    where = ".".join(str(p) for p in path)
    return Diagnostic(
        "overlay-unknown-target",
        f"variant '{variant}' removes '{where}', which the base rules do not have",
        span,
    )


def identity_path(data: Any, change: Change) -> tuple[str | int, ...]:
    """The change's path in `data` (the document the variant was laid over) with each list
    item named `[ID]` by its identity where it has one; a new item by its own identity."""
    out: list[str | int] = []
    node = data
    last = len(change.path) - 1
    for depth, p in enumerate(change.path):
        if isinstance(p, int):
            item = node[p] if isinstance(node, list) and 0 <= p < len(node) else None
            ident = _identity(change.after) if depth == last and change.before is None else None
            ident = ident if ident is not None else _identity(item)
            out.append(f"[{ident}]" if ident is not None else p)
            node = item
        else:
            out.append(p)
            node = node.get(p) if isinstance(node, dict) else None
    return tuple(out)


def _shown(kind: str, key: tuple[str | int, ...]) -> str:
    return kind + "".join(p if isinstance(p, str) and p.startswith("[") else f".{p}"
                          for p in key)


def conflicts(changes: list[Change], house: Collection[str] = ()) -> Iterator[Diagnostic]:
    """Two variants that set the same value (or one inside the other) conflict, compared by
    their `key` (the items by identity). The error stands at the second change, or at the
    change of a house rule (`house`: the variants kept outside the rules folder) when the other
    is the rules' own: the file being edited."""
    seen: dict[tuple[str, tuple[str | int, ...]], Change] = {}
    for ch in changes:
        mine_key = ch.key or ch.path
        for (kind, key), other in seen.items():
            if other.variant == ch.variant or kind != ch.kind:
                continue
            n = min(len(key), len(mine_key))
            if key[:n] == mine_key[:n]:
                mine, theirs = ch, other
                if other.variant in house and ch.variant not in house:
                    mine, theirs = other, ch
                yield Diagnostic(
                    "overlay-conflict",
                    f"variants '{theirs.variant}' and '{mine.variant}' both change "
                    f"{_shown(mine.kind, mine.key or mine.path)}, and both can be in force in "
                    f"one game (change another value in '{mine.variant}', give the two variants "
                    "player counts that do not meet, or merge them into one)",
                    mine.span,
                    (Related(f"'{theirs.variant}' changes it here", theirs.span),),
                )
        seen.setdefault((ch.kind, mine_key), ch)
