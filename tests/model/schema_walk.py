"""The keys of the rules' schemas and their instances in rules/ (tests/model/test_schema_keys.py).

A key is named by its schema file and a path: from the schema's root (`/tracks/influence/max`)
or from one of its `$defs` (`$defs/step/choose/as`); `[]` is an item of a list, `*` a key of a
map (`additionalProperties`, `patternProperties`). A `$ref` is not followed by the walk of the
keys (the definition it names is walked once, from its own root), but the walk of the data
follows it, so an instance is named by the key of the schema that declares it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from lisboa_rules.front.loader import load_file

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "lisboa_rules" / "front" / "schema"
RULES = ROOT / "rules"
SUFFIX = ".schema.json"

Key = tuple[str, str]  # (schema file, path)
DataPath = tuple[str | int, ...]


def schemas() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(SCHEMAS.glob(f"*{SUFFIX}"))}


SCHEMA = schemas()


def schema_keys() -> dict[str, set[str]]:
    """Every key path of every schema, by file."""
    out: dict[str, set[str]] = {}
    for name, doc in SCHEMA.items():
        keys: set[str] = set()
        _walk(doc, "", keys)
        for d, node in doc.get("$defs", {}).items():
            _walk(node, f"$defs/{d}", keys)
        out[name] = keys
    return out


def _subschemas(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for kw in ("oneOf", "anyOf", "allOf"):
        yield from node.get(kw, [])
    for kw in ("if", "then", "else"):
        if isinstance(node.get(kw), dict):
            yield node[kw]


def _walk(node: Any, path: str, keys: set[str]) -> None:
    if not isinstance(node, dict):
        return
    for k, sub in node.get("properties", {}).items():
        keys.add(f"{path}/{k}")
        _walk(sub, f"{path}/{k}", keys)
    subs = list(node.get("patternProperties", {}).values())
    if isinstance(node.get("additionalProperties"), dict):
        subs.append(node["additionalProperties"])
    for sub in subs:
        keys.add(f"{path}/*")
        _walk(sub, f"{path}/*", keys)
    if isinstance(node.get("items"), dict):
        _walk(node["items"], f"{path}/[]", keys)
    for sub in node.get("prefixItems", []):
        _walk(sub, f"{path}/[]", keys)
    for sub in _subschemas(node):
        _walk(sub, path, keys)


# --- the data ---------------------------------------------------------------------------------


def rules_docs() -> dict[str, Any]:
    """Each file of rules/ (its path inside the folder) and its data, as the loader reads it."""
    out = {}
    for p in sorted(RULES.rglob("*.yaml")):
        doc, diags = load_file(p)
        assert doc is not None, diags
        out[p.relative_to(RULES).as_posix()] = doc.data
    return out


def _resolve(ref: str, file: str) -> tuple[str, str, dict[str, Any]]:
    target, _, frag = ref.partition("#")
    f = target or file
    node: Any = SCHEMA[f]
    parts = [x for x in frag.split("/") if x]
    for part in parts:
        node = node[part]
    return f, "/".join(parts), node


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _fits(value: Any, node: dict[str, Any], file: str) -> bool:
    if "$ref" in node:
        f, _, n = _resolve(node["$ref"], file)
        return _fits(value, n, f)
    if "const" in node:
        return bool(node["const"] == value)
    t = node.get("type")
    if t is None:
        return True
    types = t if isinstance(t, list) else [t]
    for x in types:
        if x == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if x in _TYPES and isinstance(value, _TYPES[x]) and not (
                x != "boolean" and isinstance(value, bool)):
            return True
    return False


def instances(docs: dict[str, Any]) -> dict[Key, list[tuple[str, DataPath]]]:
    """Where each key of the schemas is written in the data: (file, path of its value)."""
    kinds = {str(s["properties"]["kind"]["const"]): name for name, s in SCHEMA.items()
             if "kind" in s.get("properties", {})}
    found: dict[Key, list[tuple[str, DataPath]]] = {}
    for rel, data in docs.items():
        file = kinds[data["kind"]]
        _data(data, SCHEMA[file], file, "", rel, (), found)
    return found


def _data(value: Any, node: Any, file: str, path: str, rel: str, at: DataPath,
          found: dict[Key, list[tuple[str, DataPath]]]) -> None:
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        f, root, n = _resolve(node["$ref"], file)
        _data(value, n, f, root, rel, at, found)
    for sub in _subschemas(node):
        if _fits(value, sub, file):
            _data(value, sub, file, path, rel, at, found)
    if isinstance(value, dict):
        props = node.get("properties", {})
        pats = node.get("patternProperties", {})
        extra = node.get("additionalProperties")
        for k, v in value.items():
            if k in props:
                sub, key = props[k], f"{path}/{k}"
            else:
                sub = next((s for p, s in pats.items() if re.search(p, str(k))), None)
                if sub is None and isinstance(extra, dict):
                    sub = extra
                if sub is None:
                    continue
                key = f"{path}/*"
            where = found.setdefault((file, key), [])
            if (rel, (*at, k)) not in where:
                where.append((rel, (*at, k)))
            _data(v, sub, file, key, rel, (*at, k), found)
    elif isinstance(value, list):
        items = node.get("items")
        for i, v in enumerate(value):
            pre = node.get("prefixItems", [])
            sub = pre[i] if i < len(pre) else items
            if isinstance(sub, dict):
                _data(v, sub, file, f"{path}/[]", rel, (*at, i), found)


# --- a change of one instance -----------------------------------------------------------------


def get(data: Any, at: DataPath) -> Any:
    for p in at:
        data = data[p]
    return data


def changed(value: Any) -> Any:
    """Another value of the same shape: a bool flipped, a number + 1, a string with its first
    number + 1 (or a word added), a list without its last item (or with its only one twice),
    a map with its first value changed."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value < 9 else value - 1
    if isinstance(value, str):
        m = re.search(r"\d+", value)
        if m:
            return f"{value[:m.start()]}{int(m.group()) + 1}{value[m.end():]}"
        return f"{value} Changed."
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value * 2
    if isinstance(value, dict) and value:
        k = next(iter(value))
        return {**value, k: changed(value[k])}
    if value is None:
        return 1
    raise AssertionError(f"no change written for {value!r}")


def mutate(docs: dict[str, Any], rel: str, at: DataPath, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(docs)
    *head, last = at
    get(out[rel], tuple(head))[last] = value
    return out


def write(docs: dict[str, Any], rules: Path) -> Path:
    for rel, data in docs.items():
        p = rules / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100000),
                     encoding="utf-8")
    return rules


_STAMP = re.compile(
    r"sha256\)?:? ?[0-9a-f]{16,64}|\+rules[0-9a-f]{12}|(\.yaml):\d+(:\d+)?"
)


def normal(text: str) -> str:
    """An output without what names the files' bytes and lines (the inputs' digest, also in the
    engine package's version `X.Y.Z+rules<digest>`, and positions): the same data written
    again gives the same text."""
    return _STAMP.sub(lambda m: f"{m.group(1)}:N" if m.group(1) else "sha256", text)
