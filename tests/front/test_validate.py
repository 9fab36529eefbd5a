"""Schema validation mapped to codes, YAML positions, addresses and did-you-mean hints.

Uses tiny ad-hoc schemas (swapped in with monkeypatch) so the tests pin the mapping logic,
not the real rules format.
"""

from __future__ import annotations

import json
import socket
import textwrap
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable

from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.core.source import Span
from lisboa_rules.front import schema
from lisboa_rules.front.loader import LoadedDoc, load_text
from lisboa_rules.front.validate import _describe_error, validate, validate_all

BASE = "https://lisboa-rules.invalid/schema/"

COMMON: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": BASE + "common.schema.json",
    "$defs": {
        "id": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "effect": {
            "type": "object",
            "additionalProperties": False,
            "required": ["gain"],
            "properties": {"gain": {"type": "integer"}},
        },
        "cost": {
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["reis"],
                    "properties": {"reis": {"type": "integer"}, "wigs": {"type": "integer"}},
                },
            ]
        },
    },
}

ACTION: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": BASE + "action.schema.json",
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "id", "phase", "effects"],
    "properties": {
        "kind": {"const": "action"},
        "id": {"$ref": "common.schema.json#/$defs/id"},
        "phase": {"enum": ["royal", "build", "trade", "decree"]},
        "players": {
            "type": "object",
            "additionalProperties": False,
            "required": ["min", "max"],
            "properties": {
                "min": {"type": "integer", "minimum": 1},
                "max": {"type": "integer", "maximum": 4},
            },
        },
        "effects": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "common.schema.json#/$defs/effect"},
        },
        "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
        "cost": {"$ref": "common.schema.json#/$defs/cost"},
        "optional": {"type": "boolean"},
        "params": {
            "type": "object",
            "additionalProperties": False,
            "patternProperties": {"^[a-z_]+$": {"type": "integer"}},
        },
        "name": {"type": "string", "minLength": 1},
    },
}

GAME: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": BASE + "game.schema.json",
    "type": "object",
    "properties": {"kind": {"const": "game"}, "title": {"type": "string"}},
}

VALID = """\
kind: action
id: build-store
phase: build
effects:
  - gain: 2
"""


@pytest.fixture(autouse=True)
def tiny_schemas(monkeypatch: pytest.MonkeyPatch) -> schema.SchemaSet:
    """Use the ad-hoc schemas for every test in this module (except the packaged ones)."""
    sset = schema.SchemaSet.from_schemas(
        {"common.schema.json": COMMON, "action.schema.json": ACTION, "game.schema.json": GAME}
    )
    monkeypatch.setattr(schema, "override", sset)
    return sset


def load(text: str, name: str = "a.yaml") -> LoadedDoc:
    """Load YAML that must parse."""
    doc, diags = load_text(textwrap.dedent(text), name)
    assert diags == [] and doc is not None
    return doc


def check(text: str) -> list[Diagnostic]:
    """Validate YAML text."""
    return validate(load(text))


def where(d: Diagnostic) -> tuple[str, int, int]:
    """Return (code, line, col) of a diagnostic."""
    assert d.span is not None
    return d.code, d.span.line, d.span.col


def test_valid_document_has_no_diagnostics() -> None:
    assert check(VALID) == []


def test_unknown_key_points_at_the_key_with_suggestion() -> None:
    (d,) = check(VALID + "phsae: build\n")
    assert where(d) == ("schema-unknown-key", 6, 1)
    assert d.message.startswith("unknown key 'phsae'; the keys allowed here are: ")
    assert d.suggestion is None  # 'phase' is already present, so it is not offered
    (d,) = check(VALID.replace("phase: build\n", "phase: build\nnmae: x\n"))
    assert (where(d), d.suggestion) == (("schema-unknown-key", 4, 1), "name")


def test_typo_of_a_required_key_reports_only_the_unknown_key() -> None:
    diags = check(VALID.replace("effects:", "efects:"))
    assert [(where(d), d.suggestion) for d in diags] == [(("schema-unknown-key", 4, 1), "effects")]


def test_one_diagnostic_per_unknown_key() -> None:
    diags = check(VALID + "players: {min: 1, max: 2, mni: 1, xyz: 3}\n")
    assert [where(d) for d in diags] == [
        ("schema-unknown-key", 6, 27),
        ("schema-unknown-key", 6, 35),
    ]
    assert diags[0].message == "unknown key 'mni' in players; the keys allowed here are: min, max"


def test_pattern_properties_keys_are_allowed_and_others_explained() -> None:
    assert check(VALID + "params: {bonus_x: 2}\n") == []
    (d,) = check(VALID + "params: {Bonus: 2}\n")
    assert where(d) == ("schema-unknown-key", 6, 10)
    assert "keys here must be" in d.message
    assert "^" not in d.message  # never the regular expression


def test_missing_required_key_points_at_the_objects_key() -> None:
    (d,) = check(VALID + "players:\n  min: 1\n")
    assert where(d) == ("schema-required", 6, 1)
    assert d.message == "missing required key 'max' in players"


def test_missing_required_top_level_key_points_at_the_start() -> None:
    (d,) = check("kind: action\nid: x\neffects: [{gain: 1}]\n")
    assert where(d) == ("schema-required", 1, 1)
    assert d.message == ("missing required key 'phase' at the top level: add phase: royal | build"
                         " | trade | decree")


def test_type_error_at_the_value_with_address() -> None:
    (d,) = check(VALID + "players:\n  min: 1\n  max: '4'\n")
    assert where(d) == ("schema-type", 8, 8)
    assert d.message == "expected an integer, got string '4' at players.max"


def test_yaml11_boolean_habit_gets_a_hint() -> None:
    (d,) = check(VALID + "optional: yes\n")
    assert d.code == "schema-type" and d.suggestion == "true"
    assert "got string 'yes'" in d.message


def test_enum_with_suggestion() -> None:
    (d,) = check(VALID.replace("phase: build", "phase: buld"))
    assert where(d) == ("schema-enum", 3, 8)
    assert d.message == "string 'buld' is not one of 'royal', 'build', 'trade', 'decree' at phase"
    assert d.suggestion == "build"


def test_range_errors() -> None:
    (d,) = check(VALID + "players: {min: 0, max: 4}\n")
    assert where(d) == ("schema-range", 6, 16)
    assert d.message == "0 is less than the minimum of 1 at players.min"
    (d,) = check(VALID.replace("effects:\n  - gain: 2\n", "effects: []\n"))
    assert d.code == "schema-range" and "at least 1 item, got 0" in d.message
    (d,) = check(VALID + "name: ''\n")
    assert d.code == "schema-range" and "at least 1 character" in d.message


def test_a_number_beyond_64_bits_is_refused_where_it_is_written() -> None:
    # a saved game holds signed 64-bit numbers: a value of the rules beyond them would start
    # or reach a state the engine's own saves refuse
    for fine in (2**63 - 1, -(2**63)):
        assert check(VALID.replace("gain: 2", f"gain: {fine}")) == []
    for huge in (2**63, -(2**63) - 1, 10**29):
        (d,) = check(VALID.replace("gain: 2", f"gain: {huge}"))
        assert where(d) == ("schema-range", 5, 11)
        assert d.message == (f"{huge} at effects[0].gain is beyond what a game holds: a whole "
                             "number from -2**63 to 2**63 - 1 (a saved game's 64 bits)")
    # with the schema's own errors, in one run
    found = check(VALID.replace("gain: 2", f"gain: {2**64}").replace("phase: build", "phase: x"))
    assert sorted(d.code for d in found) == ["schema-enum", "schema-range"]


def test_pattern_error_via_cross_file_ref() -> None:
    (d,) = check(VALID.replace("id: build-store", "id: Build Store"))
    assert where(d) == ("schema-pattern", 2, 5)
    assert "^" not in d.message and d.message.endswith("at id")  # words, never the regex


def test_other_keywords_are_schema_invalid() -> None:
    (d,) = check(VALID + "tags: [port, port]\n")
    assert d.message[0].islower() and not d.message.endswith(".")
    # a repeated item: at the repeat, with a note at the first
    assert where(d) == ("schema-invalid", 6, 14)
    assert "'port' is listed again at tags" in d.message
    (first,) = d.related
    assert first.span is not None and (first.span.line, first.span.col) == (6, 8)


def test_nested_list_address() -> None:
    (d,) = check(VALID + "  - gain: x\n")
    assert where(d) == ("schema-type", 6, 11)
    assert d.message.endswith("at effects[1].gain")


def test_any_of_reports_the_best_branch() -> None:
    assert check(VALID + "cost: 3\n") == []
    assert check(VALID + "cost: {reis: 2}\n") == []
    (d,) = check(VALID + "cost: {reis: 2, wgis: 1}\n")
    assert (where(d), d.suggestion) == (("schema-unknown-key", 6, 17), "wigs")
    (d,) = check(VALID + "cost: -1\n")
    assert d.code == "schema-range"


def test_all_errors_are_reported_sorted() -> None:
    text = VALID.replace("phase: build", "phase: x") + "players: {min: '1', max: 9}\nzzz: 1\n"
    assert [where(d) for d in check(text)] == [
        ("schema-enum", 3, 8),
        ("schema-type", 6, 16),
        ("schema-range", 6, 26),
        ("schema-unknown-key", 7, 1),
    ]


def test_key_order_does_not_change_the_result() -> None:
    a = check("kind: action\nid: X\nphase: q\neffects: []\n")
    b = check("effects: []\nphase: q\nid: X\nkind: action\n")
    assert [(d.code, d.message) for d in a] == [(d.code, d.message) for d in reversed(b)]
    assert {d.code for d in a} == {"schema-pattern", "schema-enum", "schema-range"}


def test_missing_kind() -> None:
    (d,) = check("id: x\n")
    assert where(d) == ("missing-kind", 1, 1)
    assert "action, game" in d.message


def test_unknown_kind_with_suggestion() -> None:
    (d,) = check("kind: acton\n")
    assert (where(d), d.suggestion) == (("unknown-kind", 1, 7), "action")
    (d,) = check("kind: 3\n")
    assert d.code == "unknown-kind" and d.suggestion is None


def test_top_level_must_be_a_mapping() -> None:
    (d,) = check("- kind: action\n")
    assert where(d) == ("schema-type", 1, 1)


def test_duplicate_singleton_kind() -> None:
    docs = [load("kind: game\n", "rules/a.yaml"), load("kind: game\n", "rules/b.yaml")]
    diags = validate_all(docs, singletons=["game"])
    assert [d.code for d in diags] == ["duplicate-kind"]
    assert diags[0].span == Span("rules/b.yaml", 1, 7, 1, 11)
    assert diags[0].related[0].span == Span("rules/a.yaml", 1, 7, 1, 11)
    assert validate_all(docs) == []


def test_validators_are_cached(tiny_schemas: schema.SchemaSet) -> None:
    assert tiny_schemas.validator("action") is tiny_schemas.validator("action")


def test_unknown_ref_fails_fast_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", no_network)
    bad = {
        "$id": BASE + "bad.schema.json",
        "properties": {"kind": {"const": "bad"}, "x": {"$ref": "https://example.com/s.json"}},
    }
    sset = schema.SchemaSet.from_schemas({"bad.schema.json": bad})
    with pytest.raises(Unresolvable):
        list(sset.validator("bad").iter_errors({"kind": "bad", "x": 1}))


def test_two_schemas_with_one_kind_are_refused() -> None:
    with pytest.raises(ValueError, match="kind 'game'"):
        schema.SchemaSet.from_schemas({"a.schema.json": GAME, "b.schema.json": dict(GAME)})


# --- the packaged schemas ----------------------------------------------------------------


def test_packaged_schemas_load_and_are_canonical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "override", None)
    packaged = schema.packaged()
    assert packaged.by_kind, "no document kinds found in lisboa_rules/front/schema/*.schema.json"
    for name, s in packaged.schemas.items():
        Draft202012Validator.check_schema(s)
        assert s["$id"] == BASE + name
    exported = schema.export_schemas()
    assert set(exported) == set(packaged.schemas)
    for name, text in exported.items():
        assert text.endswith("}\n")
        assert json.loads(text) == packaged.schemas[name]
        assert (
            text
            == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
    assert schema.kinds() == sorted(packaged.by_kind)
    kind = schema.kinds()[0]
    assert schema.schema_for_kind(kind) is packaged.by_kind[kind]
    assert schema.schema_for_kind("no-such-kind") is None


def test_inlined_refs_validate_like_the_refs_and_leave_data_alone() -> None:
    """schema.inline_refs: same verdicts as the original schema, including a property named
    `$ref`, a `$ref` inside `const`, a `$ref` with siblings and a recursive one."""
    from jsonschema import Draft202012Validator
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    from lisboa_rules.front.schema import inline_refs

    base = "https://example.invalid/"
    common = {"$id": base + "c.json", "$defs": {
        "id": {"type": "string", "pattern": "^[a-z]+$"},
        "node": {"type": "object", "additionalProperties": False,
                 "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}},
    }}
    top = {"$id": base + "t.json", "type": "object", "additionalProperties": False,
           "properties": {
               "$ref": {"type": "integer"},
               "c": {"const": {"$ref": "c.json#/$defs/id"}},
               "i": {"$ref": "c.json#/$defs/id", "maxLength": 3},
               "n": {"$ref": "c.json#/$defs/node"},
           }}
    registry = Registry().with_resources(
        [(s["$id"], DRAFT202012.create_resource(s)) for s in (top, common)])
    inlined = inline_refs(top, registry)
    assert "$ref" in inlined["properties"]  # a property name, not a reference
    assert inlined["properties"]["c"] == top["properties"]["c"]  # data, untouched
    assert "$ref" not in inlined["properties"]["i"]
    cases = [{"$ref": 1}, {"$ref": "x"}, {"c": {"$ref": "c.json#/$defs/id"}}, {"c": "id"},
             {"i": "abc"}, {"i": "abcd"}, {"i": "AB"}, {"n": {"kids": [{"kids": []}]}},
             {"n": {"kids": [{"x": 1}]}}]
    for case in cases:
        want = sorted(e.message for e in Draft202012Validator(top, registry=registry)
                      .iter_errors(case))
        got = sorted(e.message for e in Draft202012Validator(inlined, registry=registry)
                     .iter_errors(case))
        assert got == want, case


# --- patterns: no trailing newline (issue 11, item 8) ----------------------------------------


def _patterns(node: Any) -> list[str]:
    """Every `pattern` and `patternProperties` key in a schema."""
    out: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "pattern" and isinstance(v, str):
                out.append(v)
            elif k == "patternProperties" and isinstance(v, dict):
                out.extend(v)
            out.extend(_patterns(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_patterns(v))
    return out


def test_no_packaged_pattern_accepts_a_trailing_newline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's `$` matches before a final newline; every pattern ends with a guard that is
    the same in Python's re and in ECMA-262 (editors), never `$` or `\\Z`."""
    import re

    monkeypatch.setattr(schema, "override", None)
    found = [p for s in schema.packaged().schemas.values() for p in _patterns(s)]
    assert len(found) >= 7
    for p in found:
        assert p.startswith("^") and p.endswith("(?![\\s\\S])"), p
        assert not re.search(r"(?<!\\)\$|\\Z", p), p


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('kind: vocabulary\nnames:\n  - {name: "wigs\\n", scope: player, words: w}\n', 3),
        ('kind: vocabulary\nnames:\n  - {name: "wigs\\r\\n", scope: player, words: w}\n', 3),
        ('kind: vocabulary\nnames:\n  - {name: "wigs\\n\\n", scope: player, words: w}\n', 3),
        (
            'kind: provenance\nsources:\n  - {id: "facts:§6\\n", title: t}\n'
            "assumptions: []\ndifferences: []\n",
            3,
        ),
        (
            'kind: court\ncosts:\n  - {id: "visit-cost\\n", name: n, formula: "1", params: {},'
            " text: t, source: [facts:§6]}\nactions: []\n",
            3,
        ),
        (
            "kind: court\ncosts:\n  - {id: visit-cost, name: n, formula: '1', params: {},"
            ' text: t, source: ["facts:§6\\n"]}\nactions: []\n',
            3,
        ),
        (
            "kind: court\ncosts:\n  - {id: visit-cost, name: n, formula: '1',"
            ' params: {"sets\\n": 1}, text: t, source: [facts:§6]}\nactions: []\n',
            3,
        ),
        (
            'kind: examples\nexamples:\n  - {id: "example.ships\\n", title: t, rule: score.ships,'
            " text: t, players: [], show: [], source: [facts:§6]}\n",
            3,
        ),
    ],
)
def test_an_id_with_a_trailing_newline_is_refused(
    monkeypatch: pytest.MonkeyPatch, text: str, line: int
) -> None:
    monkeypatch.setattr(schema, "override", None)
    diags = validate(load(text))
    assert [
        d
        for d in diags
        if d.span is not None
        and d.span.line == line
        and d.code in ("schema-pattern", "schema-unknown-key")
    ], diags


@pytest.mark.parametrize(
    "text",
    [
        "kind: vocabulary\nnames:\n  - {name: wigs, value: wigs, scope: player, words: w}\n",
        "kind: vocabulary\nnames:\n  - {name: w2_x, value: wigs, scope: player, words: w}\n",
    ],
)
def test_plain_ids_still_pass(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(schema, "override", None)
    assert validate(load(text)) == []


# --- worked examples seat the game's players (issue 11, item 8) -------------------------------


def _examples_with(tmp_path: Any, players: str) -> list[Diagnostic]:
    import shutil
    from pathlib import Path

    from lisboa_rules import pipeline

    root = Path(__file__).resolve().parents[2]
    rules = tmp_path / "rules"
    shutil.copytree(root / "rules", rules)
    (rules / "examples.yaml").write_text(
        "kind: examples\nexamples:\n  - id: example.ships\n    title: Ships\n"
        "    rule: score.ships\n    text: Some Ships.\n    players:\n"
        + players
        + "    show: [score.ships]\n    source: [seed:000#more-examples]\n"
    )
    _, diags = pipeline.analyse(rules)
    return [d for d in diags if d.is_error]


def _seat(*colors: str) -> str:
    return "".join(f"      - {{color: {c}, ships: [2]}}\n" for c in colors)


@pytest.mark.parametrize(
    ("colors", "code", "line"),
    [
        (("Yellow", "Green", "Orange", "Blue", "Yellow"), "value-out-of-range", 8),  # 5 players
        (("Yellow", "Green", "Orange", "Blue", "Red", "Purple"), "value-out-of-range", 8),
        (("Yellow",), "value-out-of-range", 8),  # 1 player
        (("Yellow", "Purple"), "unknown-reference", 9),  # unknown colour
        (("Yellow", "green"), "unknown-reference", 9),  # colours are exact
        (("Yellow", "Yellow\n"), "unknown-reference", 9),
        (("Yellow", "Yellow", "Green"), "duplicate-id", 9),  # one colour twice
    ],
)
def test_worked_examples_seat_the_games_players(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, colors: tuple[str, ...], code: str, line: int
) -> None:
    monkeypatch.setattr(schema, "override", None)
    seats = _seat(*(json.dumps(c) for c in colors))
    diags = _examples_with(tmp_path, seats)
    assert (code, line) in [(d.code, d.span.line) for d in diags if d.span is not None], diags
    assert all(d.span is not None and d.span.file.endswith("examples.yaml") for d in diags)


@pytest.mark.parametrize("colors", [("Yellow", "Green"), ("Blue", "Orange", "Green", "Yellow")])
def test_worked_examples_with_the_games_players_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, colors: tuple[str, ...]
) -> None:
    monkeypatch.setattr(schema, "override", None)
    assert _examples_with(tmp_path, _seat(*colors)) == []


def test_a_choice_of_keys_says_which_is_missing_or_that_only_one_is_given() -> None:
    schema = {
        "type": "object",
        "properties": {"value": {"type": "string"}, "context": {"type": "string"}},
        "oneOf": [{"required": ["value"]}, {"required": ["context"]}],
    }
    validator = Draft202012Validator(schema)
    (none,) = validator.iter_errors({})
    assert _describe_error(none, "oneOf")[:2] == (
        "schema-required", "missing required key: one of 'value' or 'context' is needed")
    # both given: nothing is missing (it said "one of  is needed", as schema-required)
    (both,) = validator.iter_errors({"value": "a", "context": "b"})
    assert _describe_error(both, "oneOf")[:2] == (
        "schema-invalid", "only one of 'value' or 'context' may be given")
