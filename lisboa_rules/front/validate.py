"""Stage 2, schema: `LoadedDoc` -> Diagnostics from the kind's JSON schema, at real YAML positions.

All errors are reported (`iter_errors`), one per location: errors are grouped by instance path
and `best_match` picks the representative (descending into anyOf/oneOf). Unknown keys point at
the key, everything else at the value, and messages carry a readable address (`players.max`).

A document is first checked with quick.py (a yes/no answer with jsonschema's semantics, without
jsonschema); only one it calls invalid goes through jsonschema, imported then, for the errors.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lisboa_rules.core.diagnostics import Diagnostic, Related, sort_diagnostics, suggest
from lisboa_rules.core.source import PathTuple, Span, format_address
from lisboa_rules.front import quick
from lisboa_rules.front import schema as schemas
from lisboa_rules.front.loader import LoadedDoc
from lisboa_rules.front.names import check_names

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_RANGE = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
    }
)
# Keywords whose errors name different keys of one object, so all of them are kept.
_PER_KEY = frozenset({"additionalProperties", "required"})
_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "null": "nothing (null)",
}
_YAML11_BOOLS = {"yes": "true", "no": "false", "on": "true", "off": "false", "y": "true"}
_MAX_SHOWN = 60  # characters of a value quoted in a message


def _is_integer(checker: object, instance: object) -> bool:
    """JSON Schema's `integer` also accepts 5.0 and 1e308; rules data needs a real int."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: object, instance: object) -> bool:
    """A finite number: .inf and .nan pass every bound check, so they are not numbers here."""
    if isinstance(instance, bool):
        return False
    if isinstance(instance, float):
        return math.isfinite(instance)
    return isinstance(instance, int)


@functools.cache
def _strict_validator() -> Any:
    """Draft 2020-12 with the strict `integer` and `number` above (jsonschema imported here)."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
            {"integer": _is_integer, "number": _is_number}
        ),
    )


_VALIDATORS: dict[tuple[int, str], Any] = {}
_QUICK: dict[tuple[int, str], Any] = {}


def _validator(kind: str) -> Any:
    """The strict-typed validator of one kind for the active schema set (cached)."""
    sset = schemas.active()
    key = (id(sset), kind)
    cached = _VALIDATORS.get(key)
    if cached is None or cached[0] is not sset:
        schema = schemas.inline_refs(sset.by_kind[kind], sset.registry)
        cached = (sset, _strict_validator()(schema, registry=sset.registry))
        _VALIDATORS[key] = cached
    return cached[1]


def _quick(kind: str) -> quick.Check | None:
    """The quick yes/no check of one kind for the active schema set (cached); None when the
    schema uses something quick.py does not implement."""
    sset = schemas.active()
    key = (id(sset), kind)
    cached = _QUICK.get(key)
    if cached is None or cached[0] is not sset:
        cached = (sset, quick.compile_schema(sset.by_kind[kind], sset.by_uri))
        _QUICK[key] = cached
    check: quick.Check | None = cached[1]
    return check


@dataclass(frozen=True)
class _Found:
    """A diagnostic before rendering, plus what the required-key suppression needs."""

    diag: Diagnostic
    path: PathTuple
    key: str | None = None  # unknown key's suggestion, or the missing required key


def validate(doc: LoadedDoc) -> list[Diagnostic]:
    """Validate one document against the schema its `kind` selects; never raises."""
    data = doc.data
    if not isinstance(data, dict):
        msg = f"expected a mapping with a 'kind' at the top level, got {_describe(data)}"
        return [Diagnostic("schema-type", msg, doc.span_for(()))]
    known = schemas.kinds()
    if "kind" not in data:
        msg = f"missing 'kind' at the top level (one of: {', '.join(known)})"
        return [Diagnostic("missing-kind", msg, Span.point(doc.display))]
    kind = data["kind"]
    if not isinstance(kind, str) or kind not in known:
        return [_unknown_kind(doc, kind, known)]
    check = _quick(kind)
    if check is not None and check(data):
        return check_names(doc)
    errors = _validator(kind).iter_errors(data)
    found = _diagnose(doc, errors)
    # the names of a document the schema accepts (front/names.py)
    return sort_diagnostics(found or check_names(doc))


def validate_all(docs: Sequence[LoadedDoc], singletons: Iterable[str] = ()) -> list[Diagnostic]:
    """Validate every document, and report kinds in `singletons` that appear more than once."""
    diags = [d for doc in docs for d in validate(doc)]
    single = set(singletons)
    first: dict[str, LoadedDoc] = {}
    for doc in docs:
        kind = doc.data.get("kind") if isinstance(doc.data, dict) else None
        if not isinstance(kind, str) or kind not in single:
            continue
        if kind in first:
            note = Related(f"first '{kind}' document", first[kind].span_for(("kind",)))
            msg = f"only one '{kind}' document is allowed"
            diags.append(Diagnostic("duplicate-kind", msg, doc.span_for(("kind",)), (note,)))
        else:
            first[kind] = doc
    return sort_diagnostics(diags)


def _unknown_kind(doc: LoadedDoc, kind: object, known: list[str]) -> Diagnostic:
    """Return the unknown-kind diagnostic with the closest known kind as suggestion."""
    guess = suggest(kind, known) if isinstance(kind, str) else None
    shown = _literal(kind) if isinstance(kind, str) else _describe(kind)
    msg = f"unknown kind {shown} (known kinds: {', '.join(known)})"
    return Diagnostic("unknown-kind", msg, doc.span_for(("kind",)), suggestion=guess)


def _diagnose(doc: LoadedDoc, errors: Iterable[ValidationError]) -> list[Diagnostic]:
    """Pick one error per location (all per-key ones), map them, drop redundant ones."""
    groups: dict[PathTuple, list[ValidationError]] = defaultdict(list)
    for error in errors:
        groups[tuple(error.absolute_path)].append(error)
    found: list[_Found] = []
    for group in groups.values():
        for error in _representatives(group):
            found.extend(_map_error(doc, error))
    return _suppress_redundant(found)


def _representatives(group: list[ValidationError]) -> list[ValidationError]:
    """Return every per-key error of a location plus the best match of the others."""
    keep = [e for e in group if e.validator in _PER_KEY]
    rest = [e for e in group if e.validator not in _PER_KEY]
    if rest:
        from jsonschema.exceptions import best_match

        best = best_match(rest)
        if best is not None:
            keep.append(best)
    return keep


def _suppress_redundant(found: list[_Found]) -> list[Diagnostic]:
    """Drop a missing-key error when an unknown key right there is probably its typo."""
    typos = {(f.path, f.key) for f in found if f.diag.code == "schema-unknown-key" and f.key}
    return [
        f.diag for f in found if not (f.diag.code == "schema-required" and (f.path, f.key) in typos)
    ]


def _map_error(doc: LoadedDoc, error: ValidationError) -> Iterator[_Found]:
    """Translate one jsonschema error into zero or more diagnostics."""
    path: PathTuple = tuple(error.absolute_path)
    keyword = str(error.validator)
    if keyword == "additionalProperties":
        yield from _unknown_keys(doc, error, path)
    elif keyword == "required":
        yield from _missing_keys(doc, error, path)
    elif keyword == "uniqueItems" and (pair := _repeated(error.instance)) is not None:
        first, again, item = pair
        message = _at(f"items must be unique; {_literal(item)} is listed again",
                      path) + ": list it once"
        note = Related("first listed here", doc.span_for((*path, first)))
        yield _Found(Diagnostic("schema-invalid", message, doc.span_for((*path, again)), (note,)),
                     path)
    else:
        code, message, suggestion = _describe_error(error, keyword)
        span = doc.span_for(path)
        diag = Diagnostic(code, _at(message, path), span, suggestion=suggestion)
        yield _Found(diag, path)


def _repeated(items: Any) -> tuple[int, int, Any] | None:
    """The positions of an item and of its first repeat in a list, and the item (equal as
    JSON Schema compares: `true` is not 1), or None."""
    if not isinstance(items, list):
        return None
    for j, item in enumerate(items):
        for i in range(j):
            if quick.equal(items[i], item):
                return i, j, item
    return None


def _describe_error(error: ValidationError, keyword: str) -> tuple[str, str, str | None]:
    """Return (code, message, suggestion) for a value-level error."""
    value = error.instance
    expected: Any = error.validator_value
    if keyword == "type":
        return "schema-type", _type_message(expected, value), _type_hint(error)
    if keyword in ("enum", "const"):
        choices = list(expected) if keyword == "enum" else [expected]
        words = [c for c in choices if isinstance(c, str)]
        guess = suggest(value, words) if isinstance(value, str) else None
        return "schema-enum", _enum_message(value, choices), guess
    if keyword in _RANGE:
        return "schema-range", _range_message(keyword, expected, value), None
    if keyword == "pattern":
        msg = f"{_describe(value)} does not match the pattern {expected}"
        return "schema-pattern", msg, None
    if keyword in ("anyOf", "oneOf") and isinstance(expected, list) and expected and all(
            isinstance(b, dict) and set(b) == {"required"} for b in expected):
        # each branch requires keys (a trigger `ends:` something or `do:`es steps)
        given = value if isinstance(value, dict) else {}
        met = [b for b in expected if all(k in given for k in b["required"])]
        if met:  # oneOf, more than one branch met (a name's `value:` and `context:`)
            keys = [k for b in met for k in b["required"]]
            return ("schema-invalid", f"only one of {' or '.join(repr(k) for k in keys)} may "
                    "be given", None)
        keys = [k for b in expected for k in b["required"] if k not in given]
        return ("schema-required", f"missing required key: one of "
                f"{' or '.join(repr(k) for k in keys)} is needed", None)
    return "schema-invalid", f"invalid value: {_shorten(error.message, 200).rstrip('.')}", None


def _unknown_keys(doc: LoadedDoc, error: ValidationError, path: PathTuple) -> Iterator[_Found]:
    """Yield one schema-unknown-key per extra key, at the key, with a did-you-mean."""
    instance = error.instance
    if not isinstance(instance, dict):
        return
    parent: Any = error.schema if isinstance(error.schema, Mapping) else {}
    allowed = list(parent.get("properties", {}))
    patterns = list(parent.get("patternProperties", {}))
    unused = [k for k in allowed if k not in instance] or allowed
    for key in instance:
        if key in allowed or any(re.search(p, key) for p in patterns):
            continue
        guess = suggest(key, unused)
        where = f" in {format_address(path)}" if path else ""
        msg = f"unknown key '{key}'{where}"
        if not allowed and patterns:
            msg += f"; keys here must match {' or '.join(patterns)}"
        span = doc.span_for((*path, key), key=True)
        yield _Found(Diagnostic("schema-unknown-key", msg, span, suggestion=guess), path, guess)


def _missing_keys(doc: LoadedDoc, error: ValidationError, path: PathTuple) -> Iterator[_Found]:
    """Yield one schema-required per missing key, at the object's key (or its start)."""
    instance = error.instance
    if not isinstance(instance, dict):
        return
    span = doc.span_for(path, key=True) if path else Span.point(doc.display)
    required: Any = error.validator_value
    for key in required:
        if key in instance:
            continue
        where = f" in {format_address(path)}" if path else " at the top level"
        msg = f"missing required key '{key}'{where}"
        prop = (error.schema.get("properties") or {}).get(key) if isinstance(
            error.schema, dict) else None
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list):
            msg += f": add {key}: " + " | ".join(str(v) for v in prop["enum"])
        yield _Found(Diagnostic("schema-required", msg, span), path, key)


def _at(message: str, path: PathTuple) -> str:
    """Append the readable address of `path` to a message."""
    return f"{message} at {format_address(path)}" if path else message


def _type_message(expected: Any, value: Any) -> str:
    """Return `expected an integer, got string '3'`."""
    types = [expected] if isinstance(expected, str) else list(expected)
    names = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
    return f"expected {names}, got {_describe(value)}"


def _type_hint(error: ValidationError) -> str | None:
    """Suggest `true`/`false` for YAML 1.1 habits like `yes` where a boolean is expected."""
    expected: Any = error.validator_value
    wants_bool = expected == "boolean" or (isinstance(expected, list) and "boolean" in expected)
    if wants_bool and isinstance(error.instance, str):
        return _YAML11_BOOLS.get(error.instance.lower())
    return None


def _enum_message(value: Any, choices: list[Any]) -> str:
    """Return `'buld' is not one of 'royal', 'build'` (or `expected 'game', got ...`)."""
    if len(choices) == 1:
        return f"expected {_literal(choices[0])}, got {_describe(value)}"
    shown = ", ".join(_literal(c) for c in choices[:12])
    more = ", ..." if len(choices) > 12 else ""
    return f"{_describe(value)} is not one of {shown}{more}"


def _range_message(keyword: str, limit: Any, value: Any) -> str:
    """Return a plain-words message for a size or bound violation."""
    size = len(value) if isinstance(value, (list, str, dict)) else None
    templates = {
        "minimum": f"{_literal(value)} is less than the minimum of {limit}",
        "maximum": f"{_literal(value)} is greater than the maximum of {limit}",
        "exclusiveMinimum": f"{_literal(value)} must be greater than {limit}",
        "exclusiveMaximum": f"{_literal(value)} must be less than {limit}",
        "multipleOf": f"{_literal(value)} is not a multiple of {limit}",
        "minItems": f"expected at least {_count(limit, 'item')}, got {size}",
        "maxItems": f"expected at most {_count(limit, 'item')}, got {size}",
        "minLength": f"expected at least {_count(limit, 'character')}, got {size}",
        "maxLength": f"expected at most {_count(limit, 'character')}, got {size}",
        "minProperties": f"expected at least {_count(limit, 'key')}, got {size}",
        "maxProperties": f"expected at most {_count(limit, 'key')}, got {size}",
    }
    return templates[keyword]


def _count(n: Any, word: str) -> str:
    """Return `1 item` / `2 items`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(value: Any) -> str:
    """Describe a YAML value with its type, e.g. `string '3'`, `integer 3`, `a list`."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        if math.isnan(value):
            return "not-a-number .nan"
        if math.isinf(value):
            return f"infinite number {'-' if value < 0 else ''}.inf"
        return f"number {value}"
    if isinstance(value, str):
        return f"string {_literal(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _literal(value: Any) -> str:
    """Render a schema value the way it would be written in YAML."""
    if isinstance(value, str):
        return "'" + _shorten(value, _MAX_SHOWN) + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    try:
        return _shorten(str(value), _MAX_SHOWN)
    except ValueError:  # an int too long for str(); the loader refuses those, but be safe
        return "a number with thousands of digits"


def _shorten(text: str, limit: int) -> str:
    """Cut long text with an ellipsis so one huge value cannot flood the terminal."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
