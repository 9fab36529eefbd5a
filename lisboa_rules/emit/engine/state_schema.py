"""The JSON Schema of a saved game, generated from the declared state (rules/state.yaml): the
fields of a player and of the game, their kinds' values as enums (apps validate saves with it).

Every property carries a description (the field's `text`), so the schema documents the state.
The generated engine validates saves against this same schema with a small built-in validator
(type, enum, minimum, maximum, required, properties, additionalProperties, items, maxItems,
description, and `$ref` into `$defs`), so the schema keeps to those keywords.
"""

from __future__ import annotations

import json
from typing import Any

from lisboa_rules.model.state import StateDecl, StateField, StateType
from lisboa_rules.model.types import Model, VariantInfo

# A kind with more values than this is written once, under $defs, and referenced where used.
LONG_ENUM = 10
SEAT = "a seat: an index into players"
PLAYER = "one player's board"


class _Schemas:
    def __init__(self, decl: StateDecl) -> None:
        self.decl = decl
        self.defs: dict[str, Any] = {}
        for k in decl.kinds:
            if k.values is not None and len(k.values) > LONG_ENUM:
                self.defs[k.id] = {
                    "description": k.text,
                    "type": _json_type(k.of),
                    "enum": sorted(k.values),
                }

    def field(self, f: StateField) -> dict[str, Any]:
        out = self.of(f.type, f, top=True)
        out.pop("description", None)
        if "$ref" in out:
            return out  # the small validator reads nothing beside a $ref
        out = {"description": f.text, **out}
        if f.max_items is not None:
            out["maxItems"] = f.max_items
        return out

    def of(self, t: StateType, f: StateField, top: bool = False) -> dict[str, Any]:
        """The schema of a value of type `t`, in field `f` (whose bounds apply to its ints;
        `full` applies to the field's own map, `top`)."""
        out = self._plain(t, f, top)
        if t.optional:
            if "$ref" in out:  # a nullable long kind: the enum written in place
                out = dict(self.defs[t.name])
                out.pop("description", None)
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        return out

    def _plain(self, t: StateType, f: StateField, top: bool) -> dict[str, Any]:
        if t.name == "int":
            out: dict[str, Any] = {"type": "integer"}
            if f.min is not None:
                out["minimum"] = f.min
            if f.max is not None:
                out["maximum"] = f.max
            return out
        if t.name == "seat":
            return {"description": SEAT, "type": "integer", "minimum": 0}
        if t.name == "bool":
            return {"type": "boolean"}
        if t.name == "text":
            return {"type": "string"}
        if t.name == "player":
            return self.player()
        if t.name == "list":
            return {"type": "array", "items": self.of(t.args[0], f)}
        if t.name == "map":
            key, value = t.args
            kind = self.decl.kind(key.name)
            item = self.of(value, f)
            if kind is None or kind.values is None:
                return {"type": "object", "additionalProperties": item}
            keys = [str(v) for v in kind.values]
            out = {"type": "object", "additionalProperties": False}
            if f.full and top:
                out["required"] = keys
            out["properties"] = dict.fromkeys(keys, item)
            return out
        kind = self.decl.kind(t.name)
        assert kind is not None, t
        if kind.id in self.defs:
            return {"$ref": f"#/$defs/{kind.id}"}
        if kind.values is None:
            return {"type": _json_type(kind.of)}
        return {"type": _json_type(kind.of), "enum": list(kind.values)}

    def obj(self, fields: tuple[StateField, ...]) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": False,
            "required": sorted(f.id for f in fields),
            "properties": {f.id: self.field(f) for f in fields},
        }

    def player(self) -> dict[str, Any]:
        return {"description": PLAYER, **self.obj(self.decl.player)}


def _allow_folded(items: dict[str, Any], defs: dict[str, Any], folded: tuple[str, ...]) -> None:
    """Add the folded variants to the values of a save's `variants` items (in place)."""
    ref = items.get("$ref")
    target = defs[ref.removeprefix("#/$defs/")] if isinstance(ref, str) else items
    if "enum" in target:  # (without one, any id is allowed already)
        target["enum"] = sorted({*target["enum"], *folded})


def _json_type(of: str) -> str:
    return "integer" if of == "int" else "string"


def state_schemas(
    models: list[Model], variants: list[VariantInfo], digest: str, folded: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[tuple[str, ...], dict[str, Any]]]:
    """(the schema every rule set's saved games pass, for state.schema.json and the engine's
    STATE_SCHEMA; the schema of each rule set whose saves it lets through more loosely, by
    the rule set's variants). A variant that adds ids to a kind (a fourth Noble, more cards)
    or moves a bound (the hand size) gives its rule set a schema of its own: the rules'
    saves keep theirs, and the engine reads each save against both."""
    own = [(m.variants, state_schema(m, variants, digest, folded)) for m in models]
    loose = own[0][1]
    for _, schema in own[1:]:
        loose = _union(loose, schema, loose.get("$defs", {}), schema.get("$defs", {}))
    return loose, {key: schema for key, schema in own if schema != loose}


def _union(a: Any, b: Any, defs_a: dict[str, Any], defs_b: dict[str, Any]) -> Any:
    """A schema the values of schema `a` and of schema `b` both pass (of the keywords
    _Schemas writes): enums and properties joined, the keys both require, the wider bounds."""
    if a == b or not isinstance(a, dict) or not isinstance(b, dict):
        return a
    if a.get("$ref") != b.get("$ref"):  # a kind long in one rule set only: written in place
        a, b = _inline(a, defs_a), _inline(b, defs_b)
    out: dict[str, Any] = {}
    for key in [*a, *(k for k in b if k not in a)]:
        if key not in a or key not in b:
            if key in ("minimum", "maximum", "maxItems", "required", "enum"):
                continue  # one side has no such limit
            out[key] = a[key] if key in a else b[key]
            continue
        x, y = a[key], b[key]
        if key == "enum":
            joined = [*x, *(v for v in y if v not in x)]
            same = {type(v) for v in joined}
            out[key] = sorted(joined) if len(same) == 1 and x == sorted(x) and \
                y == sorted(y) else joined
        elif key == "required":
            out[key] = [k for k in x if k in y]
        elif key == "minimum":
            out[key] = min(x, y)
        elif key in ("maximum", "maxItems"):
            out[key] = max(x, y)
        elif key == "type" and x != y:
            xs, ys = (x if isinstance(x, list) else [x]), (y if isinstance(y, list) else [y])
            out[key] = [*xs, *(t for t in ys if t not in xs)]
        elif key in ("properties", "$defs"):
            out[key] = {k: _union(x[k], y[k], defs_a, defs_b) if k in x and k in y
                        else x.get(k, y.get(k)) for k in [*x, *(k for k in y if k not in x)]}
        elif key == "additionalProperties":
            out[key] = False if x is False and y is False else \
                _union(x, y, defs_a, defs_b) if isinstance(x, dict) and isinstance(y, dict) \
                else (x if isinstance(x, dict) else y)
        elif key == "items":
            out[key] = _union(x, y, defs_a, defs_b)
        else:
            out[key] = x  # words: the first rule set's
    return out


def _inline(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    out = dict(defs[ref.removeprefix("#/$defs/")])
    out.pop("description", None)
    return out


def state_schema(
    m: Model, variants: list[VariantInfo], digest: str, folded: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The state schema for saved games of these rules (the variants are in the declaration's
    `from: variants` kind already; the argument stays for the callers). `folded`: the variants
    built into the base game, which a save lists among its variants too (the runtime's
    `_folded`: a save of other rules is refused)."""
    del variants
    s = _Schemas(m.state)
    game = s.obj(m.state.game)
    if folded:
        _allow_folded(game["properties"]["variants"]["items"], s.defs, folded)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://lisboa-rules.invalid/saved-game/state.schema.json",
        "$comment": f"Generated by lisboa-rules from rules/ (inputs sha256:{digest[:16]}). "
        "DO NOT EDIT.",
        "title": "A saved game of " + str(m.value("game", "title")),
        "description": "The complete state of a game in progress or finished, as written by "
        "the generated engine's to_json.",
        "$defs": s.defs,
        **game,
    }


HIDDEN = "what a seat may not see: the length of the list (and its top, the last item)"


def view_schema(schema: dict[str, Any], decl: StateDecl, digest: str) -> dict[str, Any]:
    """The JSON Schema of a view (the engine's `View.to_json`): the saved-game schema
    `schema` with each field that not everyone sees (rules/state.yaml `see:`) as a view
    shows it: a hidden list as {"hidden": length} (with "top" when its top shows), each list
    of a hidden map so, a hidden number or a field nobody sees as null; a player's own
    field (`owner`) either way."""
    state = json.loads(json.dumps({k: v for k, v in schema.items()
                                   if k in ("type", "additionalProperties", "required",
                                            "properties")}))
    props = state["properties"]
    player = props["players"]["items"]["properties"]
    for fields, where in ((decl.game, props), (decl.player, player)):
        for f in fields:
            if f.see != "all":
                where[f.id] = _seen(where[f.id], f)
    return {
        "$schema": schema["$schema"],
        "$id": "https://lisboa-rules.invalid/saved-game/view.schema.json",
        "$comment": f"Generated by lisboa-rules from rules/ (inputs sha256:{digest[:16]}). "
        "DO NOT EDIT.",
        "title": str(schema["title"]).replace("A saved game of", "A view of a game of", 1),
        "description": "What one seat may see of a game (the generated engine's "
        "view(game, seat).to_json()): the saved game with what the seat may not see taken out "
        "(rules/state.yaml `see:`).",
        "$defs": schema.get("$defs", {}),
        "type": "object",
        "additionalProperties": False,
        "required": ["seat", "state"],
        "properties": {
            "seat": {"description": "the seat whose view it is; null: a spectator's",
                     "type": ["integer", "null"], "minimum": 0},
            "state": {"description": "the state as the seat sees it", **state},
        },
    }


def _seen(s: dict[str, Any], f: StateField) -> dict[str, Any]:
    """The schema of field `f` (saved-game schema `s`) as a view shows it."""
    if f.see == "none":
        return {"description": s.get("description", f.text), "type": "null"}
    if f.type.name == "list":
        return _hidden_list(s, own=f.see == "owner", top=f.see == "top")
    if f.type.name == "map" and f.type.args[1].name == "list":
        out = dict(s)
        out["properties"] = {k: _hidden_list(v, own=f.see == "owner", top=f.see == "top")
                             for k, v in s["properties"].items()}
        return out
    out = dict(s)  # a number only its owner sees
    types = out.get("type", [])
    out["type"] = [*(types if isinstance(types, list) else [types]), "null"]
    return out


def _hidden_list(s: dict[str, Any], own: bool, top: bool) -> dict[str, Any]:
    """A list's schema `s` as a view shows it: {"hidden": n, "top"?: item}, or (`own`: the
    seat's own field) the list itself too."""
    hidden: dict[str, Any] = {
        "type": ["array", "object"] if own else "object",
        "additionalProperties": False,
        "required": ["hidden"],
        "properties": {"hidden": {"description": HIDDEN, "type": "integer", "minimum": 0}},
    }
    if top:
        hidden["properties"]["top"] = s["items"]
    if own:
        hidden["items"] = s["items"]
        if "maxItems" in s:
            hidden["maxItems"] = s["maxItems"]
    if "description" in s:
        hidden = {"description": s["description"], **hidden}
    return hidden
