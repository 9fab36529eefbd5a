"""A house rule's `source:` is optional free text, and its schema says so (front/schema
`house`): a house-rule file, and a document of the rules a house rule changed, are validated
against the house schemas, in which `$defs/source` takes free text and no object requires a
`source`; a file of rules/ is held to the packaged schemas, which ask for a citation."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from lisboa_rules.front import schema as schemas

VARIANT: dict[str, Any] = {
    "kind": "variant",
    "id": "my-house",
    "title": "My house rule",
    "applies": "chosen",
    "text": "Some house rule.",
    "changes": {},
}


def _errors(sset: schemas.SchemaSet, data: dict[str, Any]) -> list[str]:
    v = Draft202012Validator(sset.by_kind["variant"], registry=sset.registry)
    return [e.message for e in v.iter_errors(data)]


def test_the_house_schema_takes_free_text_and_no_source() -> None:
    strict = schemas.packaged()
    house = schemas.house(strict)
    assert house is schemas.house(strict)  # made once
    for data in (
        VARIANT,
        {**VARIANT, "source": "my friend Bob"},
        {**VARIANT, "source": ["an idea of our table", "Bob, 2026"]},
        {**VARIANT, "source": ["seed:000#intro"]},
    ):
        assert _errors(house, data) == [], data
    assert _errors(house, {**VARIANT, "source": 5})
    assert any("'source' is a required property" in m for m in _errors(strict, VARIANT))
    assert _errors(strict, {**VARIANT, "source": "my friend Bob"})


def test_every_source_key_is_a_source_and_only_it_is_loosened() -> None:
    strict = schemas.packaged()
    house = schemas.house(strict)
    for name, schema in strict.schemas.items():
        required = [k for k in _required(schema) if k != "source"]
        assert _required(house.schemas[name]) == required, name
        assert all(
            ref == "common.schema.json#/$defs/source" or ref == "#/$defs/source"
            for ref in _source_refs(schema)
        ), name
    assert house.schemas["common.schema.json"]["$defs"]["source"] == schemas.HOUSE_SOURCE


def _required(node: Any) -> list[str]:
    """Every `required` key of a schema, in order."""
    if isinstance(node, list):
        return [k for item in node for k in _required(item)]
    if not isinstance(node, dict):
        return []
    own = list(node["required"]) if isinstance(node.get("required"), list) else []
    return own + [k for key, value in node.items() if key != "required" for k in _required(value)]


def _source_refs(node: Any) -> list[Any]:
    """What each `source` property of a schema refers to."""
    if isinstance(node, list):
        return [r for item in node for r in _source_refs(item)]
    if not isinstance(node, dict):
        return []
    props = node.get("properties")
    own = [props["source"].get("$ref")] if isinstance(props, dict) and "source" in props else []
    return own + [r for value in node.values() for r in _source_refs(value)]
