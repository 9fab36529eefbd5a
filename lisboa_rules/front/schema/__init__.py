"""The packaged JSON schemas (`*.schema.json`, one per document kind) and their offline Registry.

Every schema has an absolute `$id` under https://lisboa-rules.invalid/schema/ so that relative
`$ref`s such as `common.schema.json#/$defs/id` resolve inside one `referencing.Registry`. The
registry has no `retrieve` hook, so an unknown `$ref` fails fast instead of touching the network.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

if TYPE_CHECKING:  # imported when first needed: a valid document never needs them (quick.py)
    from jsonschema import Draft202012Validator
    from referencing import Registry

SUFFIX = ".schema.json"
BASE_ID = "https://lisboa-rules.invalid/schema/"

Schema = dict[str, Any]


@dataclass(frozen=True, eq=False)
class SchemaSet:
    """A consistent set of schemas: by file name, by document kind, and their Registry (made
    when first used, so that a build whose documents are all valid never imports jsonschema or
    referencing: see quick.py)."""

    schemas: Mapping[str, Schema]
    by_kind: Mapping[str, Schema]
    _validators: dict[str, Draft202012Validator] = field(default_factory=dict, repr=False)

    @classmethod
    def from_schemas(cls, schemas: Mapping[str, Schema], check: bool = True) -> SchemaSet:
        """Index schemas by `kind`; `check` validates each against the 2020-12 meta-schema
        (the packaged ones skip it at run time: tests/test_validate.py checks them)."""
        by_kind: dict[str, Schema] = {}
        for name in sorted(schemas):
            schema = schemas[name]
            if check:
                from jsonschema import Draft202012Validator

                Draft202012Validator.check_schema(schema)
            kind = _kind_of(schema)
            if kind is None:
                continue  # shared definitions such as common.schema.json
            if kind in by_kind:
                raise ValueError(f"two schemas declare kind {kind!r} (second: {name})")
            by_kind[kind] = schema
        return cls(dict(schemas), by_kind)

    def uri(self, name: str) -> str:
        """The URI of the schema named `name` (its `$id`, else one under BASE_ID)."""
        return str(self.schemas[name].get("$id", BASE_ID + name))

    @functools.cached_property
    def by_uri(self) -> dict[str, Schema]:
        """Every schema by its URI (what `$ref`s resolve against)."""
        return {self.uri(name): self.schemas[name] for name in sorted(self.schemas)}

    @functools.cached_property
    def registry(self) -> Registry[Any]:
        """The offline Registry of every schema (referencing; imported here, when needed)."""
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        return Registry().with_resources(
            (uri, Resource.from_contents(s, DRAFT202012)) for uri, s in self.by_uri.items()
        )

    def kinds(self) -> list[str]:
        """Return the known document kinds, sorted."""
        return sorted(self.by_kind)

    def validator(self, kind: str) -> Draft202012Validator:
        """Return the (cached) validator for one kind; KeyError when unknown."""
        from jsonschema import Draft202012Validator

        cached = self._validators.get(kind)
        if cached is None:
            cached = Draft202012Validator(self.by_kind[kind], registry=self.registry)
            self._validators[kind] = cached
        return cached


def inline_refs(schema: Schema, registry: Registry[Any]) -> Schema:
    """A copy of `schema` in which every `$ref` is replaced by the schema it points at.

    Validation is the same (a `$ref` with sibling keywords becomes an `allOf` next to them,
    which is what `$ref` means in 2020-12), but the validator no longer resolves references
    at every use: about half of the validation time. A reference back into itself (a
    recursive schema) is kept, made absolute, so it still resolves through the registry. A
    schema with nested `$id`s or anchors is returned as it is (they would change the base).
    """
    if _has_nested_base(schema, top=True):
        return schema
    base = str(schema.get("$id", ""))
    resolver = registry.resolver()

    def walk(node: Any, base: str, stack: tuple[str, ...]) -> Any:
        """Inline the refs of one schema (a dict or a boolean), looking only where the
        vocabulary puts subschemas: a key named `$ref` under `properties`, or a `$ref`
        inside `const`/`enum`/`default`, is data and stays as it is."""
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref":
                continue
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: walk(v, base, stack) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(v, base, stack) for v in value]
            elif key in _SCHEMA_ONE:
                out[key] = walk(value, base, stack)
            else:
                out[key] = value
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return out
        target = urljoin(base, ref)
        if target in stack or not base:
            out["$ref"] = target
            return out
        contents = resolver.lookup(target).contents
        if not isinstance(contents, (dict, bool)) or (
            isinstance(contents, dict) and _has_nested_base(contents, top=False)
        ):
            out["$ref"] = target
            return out
        inlined = walk(contents, urldefrag(target).url, (*stack, target))
        if not out:
            return inlined
        out["allOf"] = [*out.get("allOf", []), inlined]
        return out

    result = walk(schema, base, (base,) if base else ())
    return result if isinstance(result, dict) else schema


# Where JSON Schema 2020-12 puts subschemas (everything else is data or annotations).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})  # fmt: skip
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else",
                         "contains", "propertyNames", "unevaluatedItems",
                         "unevaluatedProperties", "additionalItems"})  # fmt: skip


def _has_nested_base(node: Any, top: bool) -> bool:
    """Whether a schema sets `$id`, `$anchor` or `$dynamicAnchor` below its top level."""
    if isinstance(node, list):
        return any(_has_nested_base(item, False) for item in node)
    if not isinstance(node, dict):
        return False
    keys = ("$anchor", "$dynamicAnchor", "$dynamicRef") if top else (
        "$id", "$anchor", "$dynamicAnchor", "$dynamicRef")
    if any(k in node for k in keys):
        return True
    return any(_has_nested_base(v, False) for v in node.values())


def _kind_of(schema: Schema) -> str | None:
    """Return the `properties.kind.const` of a document schema, if it has one."""
    kind = schema.get("properties", {}).get("kind", {})
    const = kind.get("const") if isinstance(kind, dict) else None
    return const if isinstance(const, str) else None


@functools.cache
def packaged() -> SchemaSet:
    """Load and check the schemas shipped inside the package (once per process)."""
    found: dict[str, Schema] = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(SUFFIX) and entry.is_file():
            found[entry.name] = json.loads(entry.read_text(encoding="utf-8"))
    return SchemaSet.from_schemas(found, check=False)


# Tests swap in ad-hoc schemas with `monkeypatch.setattr(schema, "override", SchemaSet(...))`.
override: SchemaSet | None = None


def active() -> SchemaSet:
    """Return the schema set in use: a test override, else the packaged one."""
    return override if override is not None else packaged()


# A `source:` of a house rule's values: the designer's own words (free text, or a list of
# them), or a citation; and it may be left out. A citation of the rules' sources is asked for
# only in rules/ (`$defs/source` of common.schema.json).
HOUSE_SOURCE: Schema = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    "description": "Where this comes from, in your own words (optional in a house rule)",
}
_HOUSE: dict[int, tuple[SchemaSet, SchemaSet]] = {}


def house(sset: SchemaSet) -> SchemaSet:
    """The schemas a house rule's values are held to (a house-rule file given with `--house`,
    and a document of the rules it changed): those of `sset`, but where they ask for a
    `source:` (a citation of the rules' sources: `$defs/source`) it is optional and may be
    free text (HOUSE_SOURCE). Made once for each set."""
    cached = _HOUSE.get(id(sset))
    if cached is None or cached[0] is not sset:
        loose = {name: _free_source(schema) for name, schema in sset.schemas.items()}
        cached = (sset, SchemaSet.from_schemas(loose, check=False))
        _HOUSE[id(sset)] = cached
    return cached[1]


def _free_source(node: Any) -> Any:
    """A copy of a schema whose `source:` is HOUSE_SOURCE and required nowhere (every
    `source` key of the schemas is one: tests/front/test_house_schema.py)."""
    if isinstance(node, list):
        return [_free_source(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _free_source(value) for key, value in node.items()}
    defs = out.get("$defs")
    if isinstance(defs, dict) and "source" in defs:
        out["$defs"] = {**defs, "source": dict(HOUSE_SOURCE)}
    required = out.get("required")
    if isinstance(required, list) and "source" in required:
        out["required"] = [key for key in required if key != "source"]
    return out


def schema_for_kind(kind: str) -> Schema | None:
    """Return the schema of a document kind, or None when the kind is unknown."""
    return active().by_kind.get(kind)


def all_schemas() -> dict[str, Schema]:
    """Return every schema by file name."""
    return dict(active().schemas)


def kinds() -> list[str]:
    """Return the known document kinds, sorted."""
    return active().kinds()


def registry() -> Registry[Any]:
    """Return the offline Registry holding every schema."""
    return active().registry


def dump_schema(schema: Schema) -> str:
    """Return canonical JSON text for a schema (sorted keys, 2-space indent, final newline)."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_schemas() -> dict[str, str]:
    """Return file name -> canonical JSON text, for `lisboa-rules schema` and generated/schema/."""
    return {name: dump_schema(s) for name, s in sorted(all_schemas().items())}


def allowed_keys(kind: str, path: tuple[str | int, ...]) -> list[str] | None:
    """The keys the schema of `kind` allows in the mapping at `path` of a document (list
    indexes as ints), in the schema's order; None when the schema does not say (a mapping of
    free names, a recursive reference, a kind it does not know)."""
    sset = active()
    top = sset.by_kind.get(kind)
    if top is None:
        return None
    nodes: list[Any] = [inline_refs(top, sset.registry)]
    for part in path:
        nodes = [n for node in nodes for n in _step(node, part)]
    keys: list[str] = []
    for node in (b for n in nodes for b in _branches(n)):
        if "$ref" in node or "patternProperties" in node or node.get(
                "additionalProperties", False) is not False:
            return None
        keys.extend(k for k in node.get("properties", {}) if k not in keys)
    return keys or None


def _branches(node: Any) -> list[Schema]:
    """A subschema and the ones its allOf/anyOf/oneOf hold (what may apply at one place)."""
    if not isinstance(node, dict):
        return []
    out = [node]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, ()):
            out.extend(_branches(sub))
    return out


def _step(node: Any, part: str | int) -> list[Schema]:
    """The subschemas of the value at key or index `part` of what `node` allows."""
    out: list[Schema] = []
    for branch in _branches(node):
        if isinstance(part, int):
            items = branch.get("items")
            if isinstance(items, dict):
                out.append(items)
        else:
            prop = branch.get("properties", {}).get(part)
            if isinstance(prop, dict):
                out.append(prop)
    return out
