"""quick.py answers "valid?" exactly as jsonschema does (validate.py asks it first and only runs
jsonschema on documents it calls invalid), and a build of valid rules never imports jsonschema."""

from __future__ import annotations

import copy
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lisboa_rules.front import quick, schema, validate
from lisboa_rules.front.loader import load_file, load_text

ROOT = Path(__file__).resolve().parents[2]
BASE = "https://lisboa-rules.invalid/schema/"


def _jsonschema_valid(sset: schema.SchemaSet, kind: str, data: Any) -> bool:
    """jsonschema's verdict, with validate.py's strict integer and number."""
    strict = validate._strict_validator()
    return not any(strict(sset.by_kind[kind], registry=sset.registry).iter_errors(data))


def _documents() -> list[tuple[str, Any]]:
    """Every rules document the repository has: rules/, the test cases, the examples."""
    found: list[tuple[str, Any]] = []
    kinds = set(schema.packaged().by_kind)
    for folder in ("rules", "tests/cases", "examples"):
        for path in sorted((ROOT / folder).rglob("*.y*ml")):
            doc, _ = load_file(path)
            if doc is None or not isinstance(doc.data, dict):
                continue
            if doc.data.get("kind") in kinds:
                found.append((path.relative_to(ROOT).as_posix(), doc.data))
    return found


DOCUMENTS = _documents()
ODD_VALUES: list[Any] = [
    0,
    -1,
    1,
    2.5,
    math.inf,
    -math.inf,
    math.nan,
    True,
    False,
    None,
    "",
    "x",
    "Not An Id",
    "a" * 300,
    [],
    [1],
    ["x"],
    {},
    {"x": 1},
]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _mutate(data: Any, rng: random.Random) -> Any:
    """One random change: a value replaced, a key dropped or added, an item dropped or doubled."""
    data = copy.deepcopy(data)
    path = rng.choice(_paths(data)[1:])
    parent = data
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    what = rng.randrange(4)
    if what == 0:
        parent[last] = rng.choice(ODD_VALUES)
    elif what == 1:
        del parent[last]
    elif what == 2 and isinstance(parent[last], dict):
        parent[last][rng.choice(["extra", "kind", "id", "x-y", "text"])] = rng.choice(ODD_VALUES)
    elif isinstance(parent, list):
        parent.insert(int(last), copy.deepcopy(parent[last]))
    else:
        parent[last] = rng.choice(ODD_VALUES)
    return data


def test_every_packaged_kind_has_a_quick_check() -> None:
    sset = schema.packaged()
    assert sset.by_kind
    for kind, s in sset.by_kind.items():
        assert quick.compile_schema(s, sset.by_uri) is not None, kind


def test_the_repository_has_documents_of_every_kind() -> None:
    assert {d["kind"] for _, d in DOCUMENTS} == set(schema.packaged().by_kind)


@pytest.mark.parametrize(("name", "data"), DOCUMENTS, ids=[n for n, _ in DOCUMENTS])
def test_quick_verdict_is_jsonschemas_on_every_document(name: str, data: Any) -> None:
    sset = schema.packaged()
    kind = data["kind"]
    check = quick.compile_schema(sset.by_kind[kind], sset.by_uri)
    assert check is not None
    assert check(data) == _jsonschema_valid(sset, kind, data)


@pytest.mark.parametrize("seed", range(8))
def test_quick_verdict_is_jsonschemas_on_mutated_documents(seed: int) -> None:
    """40 random one-change mutations of the repository's documents per seed (320 in all)."""
    sset = schema.packaged()
    rng = random.Random(seed)
    invalid = 0
    for _ in range(40):
        _, data = rng.choice(DOCUMENTS)
        kind = data["kind"]
        mutated = _mutate(data, rng)
        if not isinstance(mutated, dict) or mutated.get("kind") != kind:
            continue
        check = quick.compile_schema(sset.by_kind[kind], sset.by_uri)
        assert check is not None
        want = _jsonschema_valid(sset, kind, mutated)
        assert check(mutated) == want, mutated
        invalid += not want
    assert invalid > 0  # the mutations do reach invalid documents


COMMON = {
    "$id": BASE + "common.schema.json",
    "$defs": {
        "id": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "tree": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
        },
    },
}
TOP = {
    "$id": BASE + "t.schema.json",
    "type": "object",
    "properties": {
        "kind": {"const": "t"},
        "n": {"type": "integer", "minimum": 1, "maximum": 5},
        "x": {"type": "number", "exclusiveMinimum": 0},
        "flag": {"const": True},
        "zero": {"enum": [0, "none", [1, 2], {"a": 1}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 3}]},
        "any": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
        "notx": {"not": {"const": "x"}},
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": False,
            "minItems": 1,
        },
        "map": {
            "type": "object",
            "propertyNames": {"$ref": "common.schema.json#/$defs/id"},
            "minProperties": 1,
            "additionalProperties": {"type": "integer"},
        },
        "pp": {
            "type": "object",
            "patternProperties": {"^a": {"type": "string"}, "^b": {}},
            "properties": {"c": {"type": "boolean"}},
            "additionalProperties": False,
        },
        "tree": {"$ref": "common.schema.json#/$defs/tree"},
        "s": {"$ref": "common.schema.json#/$defs/id", "maxLength": 3},
        "set": {"type": "array", "uniqueItems": True},
        "ints": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        "any_list": {"uniqueItems": False},
    },
    "required": ["kind"],
}
TINY = {"common.schema.json": COMMON, "t.schema.json": TOP}

SEMANTIC_CASES: list[dict[str, Any]] = [
    {"kind": "t"},
    {},
    {"kind": "u"},
    {"kind": "t", "n": 1},
    {"kind": "t", "n": 0},
    {"kind": "t", "n": True},
    {"kind": "t", "n": 2.0},
    {"kind": "t", "n": 6},
    {"kind": "t", "x": math.inf},
    {"kind": "t", "x": math.nan},
    {"kind": "t", "x": 0},
    {"kind": "t", "x": 0.5},
    {"kind": "t", "x": False},
    {"kind": "t", "flag": 1},
    {"kind": "t", "flag": True},
    {"kind": "t", "zero": False},
    {"kind": "t", "zero": 0.0},
    {"kind": "t", "zero": [1, 2]},
    {"kind": "t", "zero": [True, 2]},
    {"kind": "t", "zero": {"a": 1}},
    {"kind": "t", "zero": {"a": True}},
    {"kind": "t", "one": 4},
    {"kind": "t", "one": 3.5},
    {"kind": "t", "one": 1},
    {"kind": "t", "one": 2.5},
    {"kind": "t", "any": None},
    {"kind": "t", "any": "a"},
    {"kind": "t", "any": "ab"},
    {"kind": "t", "notx": "x"},
    {"kind": "t", "notx": "y"},
    {"kind": "t", "pair": ["a"]},
    {"kind": "t", "pair": ["a", 1]},
    {"kind": "t", "pair": ["a", 1, 2]},
    {"kind": "t", "pair": [1]},
    {"kind": "t", "pair": []},
    {"kind": "t", "map": {}},
    {"kind": "t", "map": {"ok": 1}},
    {"kind": "t", "map": {"Bad": 1}},
    {"kind": "t", "map": {"ok": "1"}},
    {"kind": "t", "pp": {"ax": "s", "bx": 1, "c": True}},
    {"kind": "t", "pp": {"ax": 1}},
    {"kind": "t", "pp": {"d": 1}},
    {"kind": "t", "pp": {"c": 1}},
    {"kind": "t", "tree": {"kids": [{"kids": []}, {}]}},
    {"kind": "t", "tree": {"kids": [{"x": 1}]}},
    {"kind": "t", "s": "abc"},
    {"kind": "t", "s": "abcd"},
    {"kind": "t", "s": "A"},
    {"kind": "t", "s": 3},
    {"kind": "t", "n": "3"},
    # uniqueItems: JSON equality (true is not 1, 1 is 1.0), lists and mappings by value, and
    # jsonschema's own way of looking (sorted neighbours, else every pair)
    {"kind": "t", "set": []},
    {"kind": "t", "set": [3, 2]},
    {"kind": "t", "set": [3, 3]},
    {"kind": "t", "set": [2, 3, 3]},
    {"kind": "t", "set": [3, 2, 3]},
    {"kind": "t", "set": [1, True]},
    {"kind": "t", "set": [0, False]},
    {"kind": "t", "set": [True, True]},
    {"kind": "t", "set": [1, 1.0]},
    {"kind": "t", "set": ["a", "b", "a"]},
    {"kind": "t", "set": ["1", 1]},
    {"kind": "t", "set": [None, None]},
    {"kind": "t", "set": [[1], [True]]},
    {"kind": "t", "set": [[1], [1.0]]},
    {"kind": "t", "set": [{"a": 1}, {"a": True}]},
    {"kind": "t", "set": [{"a": 1}, {"a": 1}]},
    {"kind": "t", "set": [math.nan, math.nan]},
    {"kind": "t", "set": [1, math.nan, 1]},
    {"kind": "t", "set": [1, "x", {"a": 1}, 1]},
    {"kind": "t", "set": "not a list"},
    {"kind": "t", "ints": [3, 3]},
    {"kind": "t", "ints": [2, 3]},
    {"kind": "t", "any_list": [3, 3]},
]


@pytest.mark.parametrize("case", SEMANTIC_CASES, ids=[str(c) for c in SEMANTIC_CASES])
def test_quick_verdict_is_jsonschemas_on_tricky_values(case: dict[str, Any]) -> None:
    """True is not 1, 2.0 is not an integer here, .inf is not a number, items after the
    prefix, exactly one of oneOf, property names, pattern properties, recursive refs, items
    repeated."""
    sset = schema.SchemaSet.from_schemas(TINY)
    check = quick.compile_schema(sset.by_kind["t"], sset.by_uri)
    assert check is not None
    assert check(case) == _jsonschema_valid(sset, "t", case)


@pytest.mark.parametrize(
    "extra",
    [
        {"uniqueItems": 1},
        {"format": "email"},
        {"multipleOf": 2},
        {"if": {"type": "string"}, "then": {"minLength": 2}},
        {"items": {"$id": "nested.json"}},
        {"type": "char"},
        {"dependentRequired": {"a": ["b"]}},
    ],
)
def test_what_quick_does_not_implement_goes_to_jsonschema(
    extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unimplemented keyword, an anchor, a foreign or nested base: no quick check, and the
    document is validated by jsonschema (its errors are still reported)."""
    top = copy.deepcopy(TOP)
    top["properties"]["u"] = extra
    sset = schema.SchemaSet.from_schemas({**TINY, "t.schema.json": top}, check=False)
    assert quick.compile_schema(sset.by_kind["t"], sset.by_uri) is None
    monkeypatch.setattr(schema, "override", sset)
    doc, diags = load_text("kind: t\nn: 0\n", "rules/t.yaml")
    assert doc is not None and not diags
    assert [d.code for d in validate.validate(doc)] == ["schema-range"]


@pytest.mark.parametrize(
    "ref", ["#anchor", "#/$defs/missing", "https://example.com/s.json", "common.schema.json#thing"]
)
def test_a_ref_quick_cannot_resolve_means_no_quick_check(ref: str) -> None:
    top = copy.deepcopy(TOP)
    top["properties"]["u"] = {"$ref": ref}
    sset = schema.SchemaSet.from_schemas({**TINY, "t.schema.json": top}, check=False)
    assert quick.compile_schema(sset.by_kind["t"], sset.by_uri) is None


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("kind: t\nn: 0\n", ["schema-range"]),
        ("kind: t\nflag: 1\nn: true\n", ["schema-enum", "schema-type"]),
        ("kind: t\npp: {d: 1}\n", ["schema-unknown-key"]),
        ("kind: t\n", []),
    ],
)
def test_validate_reports_the_same_with_the_quick_check(
    text: str, codes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sset = schema.SchemaSet.from_schemas(TINY)
    monkeypatch.setattr(schema, "override", sset)
    doc, _ = load_text(text, "rules/t.yaml")
    assert doc is not None
    assert sorted(d.code for d in validate.validate(doc)) == codes


def test_a_build_of_valid_rules_never_imports_jsonschema(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from lisboa_rules.cli import main\n"
        f"rc = main.main(['build', '--no-cache', '--out', {str(tmp_path / 'out')!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jsonschema', 'referencing', 'rpds', 'attrs', 'attr'))\n"
        "print(rc, heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"
