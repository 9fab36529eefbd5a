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
from lisboa_rules.core.limits import INT64_MAX, INT64_MIN
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
# What each `pattern` of the schemas (front/schema/) asks for, in words: no message prints a
# regular expression (tests/front/test_validate_words.py fails on a pattern missing here)
_END = "(?![\\s\\S])"
PATTERN_WORDS: dict[str, str] = {
    "^[a-z][a-z0-9_]*" + _END:
        "a name: lower-case letters, digits and underscores, starting with a letter "
        "(e.g. points_per_set)",
    "^[a-z][a-z0-9]*(-[a-z0-9]+)*" + _END:
        "an id: lower-case letters and digits, words joined by single hyphens, starting with "
        "a letter (e.g. my-action)",
    "^[a-z][a-z0-9]*(-[a-z0-9]+)*(\\.[a-z0-9]+(-[a-z0-9]+)*)*" + _END:
        "a rule id: ids (lower-case letters, digits, single hyphens, starting with a letter) "
        "joined by dots (e.g. period-end.clean-up)",
    "^(seed:[0-9]{3}#[a-z0-9-]+|facts:§[0-9]+(\\.[0-9]+)?)" + _END:
        "a citation of the rules' sources: 'seed:' with three digits, '#' and a section in "
        "lower-case letters, digits and hyphens (e.g. seed:000#end-of-the-game), or 'facts:§' "
        "with a number (e.g. facts:§24)",
    "^game\\.[a-z][a-z0-9_]*" + _END:
        "a field of the game: 'game.' and a name of lower-case letters, digits and underscores "
        "(e.g. game.period)",
    "^(game|player)\\.[a-z][a-z0-9_]*" + _END:
        "a field of the state: 'game.' or 'player.' and a name of lower-case letters, digits "
        "and underscores (e.g. player.score)",
    "^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*" + _END:
        "a dotted path: names of lower-case letters, digits and underscores joined by dots, "
        "the first starting with a letter (e.g. components.cards)",
    "^\\$[^\\n\\r]*" + _END:
        "a JSON path on one line, starting with '$' (e.g. $.players[0].score)",
    "^[a-z][a-z0-9_-]*" + _END:
        "a kind: lower-case letters, digits, underscores and hyphens, starting with a letter "
        "(e.g. seat)",
    "^\\S{1,2}" + _END: "one or two characters, without spaces",
    "^[\\s\\S]*\\S[\\s\\S]*" + _END: "words (at least one character that is not a space)",
    "^[a-z][a-z0-9_.-]*" + _END:
        "a name: lower-case letters, digits, underscores, dots and hyphens, starting with a "
        "letter",
    "^#[0-9a-fA-F]{6}" + _END:
        "a colour written '#' and six hexadecimal digits, #rrggbb (e.g. #a0522d)",
    "^\\{[a-z][a-z0-9_.]*\\}" + _END:
        "a placeholder in braces: '{' a dotted lower-case name '}' (e.g. {item.name})",
    "^[a-z][a-z0-9_.]*(-[a-z0-9_]+)*" + _END:
        "the id of a procedure: lower-case letters, digits, underscores, dots and single "
        "hyphens, starting with a letter (e.g. period-end.clean-up)",
}
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


def _validator(kind: str, sset: schemas.SchemaSet) -> Any:
    """The strict-typed validator of one kind for the schema set `sset` (cached)."""
    key = (id(sset), kind)
    cached = _VALIDATORS.get(key)
    if cached is None or cached[0] is not sset:
        schema = schemas.inline_refs(sset.by_kind[kind], sset.registry)
        cached = (sset, _strict_validator()(schema, registry=sset.registry))
        _VALIDATORS[key] = cached
    return cached[1]


def _quick(kind: str, sset: schemas.SchemaSet) -> quick.Check | None:
    """The quick yes/no check of one kind for the schema set `sset` (cached); None when the
    schema uses something quick.py does not implement."""
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
    # a house rule's values (its own file, or a document of the rules it changed) are held to
    # the house schemas: their `source:` optional free text (front/schema `house`)
    sset = schemas.active()
    if doc.extra or doc.house:
        sset = schemas.house(sset)
    huge = list(_beyond_64_bits(doc, _Where(doc), data, ()))
    check = _quick(kind, sset)
    if check is not None and check(data):
        return sort_diagnostics(huge) if huge else check_names(doc)
    errors = _validator(kind, sset).iter_errors(data)
    found = _diagnose(doc, errors)
    # the names of a document the schema accepts (front/names.py)
    return sort_diagnostics([*found, *huge] if found or huge else check_names(doc))


def _beyond_64_bits(doc: LoadedDoc, where: _Where, value: Any, path: PathTuple
                    ) -> Iterator[Diagnostic]:
    """A `schema-range` at every whole number of the document that a saved game cannot hold
    (signed 64 bits, core/limits.py): the engine would start or reach a state its own saves
    refuse, and the backstop's games would report it at the step that first wrote it."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _beyond_64_bits(doc, where, v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _beyond_64_bits(doc, where, v, (*path, i))
    elif isinstance(value, int) and not isinstance(value, bool) and not (
            INT64_MIN <= value <= INT64_MAX):
        msg = (f"{_at(_shorten(str(value), _MAX_SHOWN), path, where)} is beyond what a game "
               "holds: a whole number from -2**63 to 2**63 - 1 (a saved game's 64 bits)")
        yield Diagnostic("schema-range", msg, doc.span_for(path))


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


def pattern_words(pattern: str, schema: Any = None) -> str:
    """What a schema `pattern` asks for, in words (never the regular expression itself)."""
    words = PATTERN_WORDS.get(pattern)
    if words is not None:
        return words
    described = schema.get("description") if isinstance(schema, Mapping) else None
    return str(described) if described else "of the form expected here"


class _Where:
    """Where a value of the validated document was written: a merged document's value is
    named by its path in the file it comes from (a house rule's `changes.flow.triggers[0]`,
    not the merged `triggers[4]`)."""

    def __init__(self, doc: LoadedDoc) -> None:
        self.doc = doc
        self._by_pos: dict[str, dict[tuple[int, int, int, int], PathTuple]] = {}

    def _own(self, file: str, span: Span) -> PathTuple | None:
        spans = self.doc.origins.get(file)
        if spans is None:
            return None
        index = self._by_pos.get(file)
        if index is None:
            index = {}
            for p, sp in sorted(spans.items(), key=lambda kv: len(kv[0])):
                index.setdefault((sp.line, sp.col, sp.end_line, sp.end_col), p)
            self._by_pos[file] = index
        return index.get((span.line, span.col, span.end_line, span.end_col))

    def address(self, path: PathTuple) -> str:
        """The readable address of `path`, in the file its value was written in."""
        spans = self.doc.spans
        for i in range(len(path), 0, -1):
            span = spans.get(path[:i])
            if span is None:
                continue
            own = self._own(span.file, span)
            if own is not None:
                return format_address((*own, *path[i:]))
            break
        return format_address(path)

    def parent_address(self, path: PathTuple, key: str) -> str:
        """The readable address of the mapping at `path` that holds `key`, named after where
        the key was written (a key a house rule adds to a base item: the house rule's item)."""
        span = self.doc.spans.get((*path, key))
        own = self._own(span.file, span) if span is not None else None
        while own and isinstance(own[-1], str) and own[-1].startswith("$"):
            own = own[:-1]  # the value of `key: {$add: VALUE}`
        if own:
            return format_address(own[:-1])
        return self.address(path)


def _diagnose(doc: LoadedDoc, errors: Iterable[ValidationError]) -> list[Diagnostic]:
    """Pick one error per location (all per-key ones), map them, drop redundant ones."""
    where = _Where(doc)
    groups: dict[PathTuple, list[ValidationError]] = defaultdict(list)
    for error in errors:
        groups[tuple(error.absolute_path)].append(error)
    found: list[_Found] = []
    for group in groups.values():
        for error in _representatives(group):
            found.extend(_map_error(doc, error, where))
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


def _map_error(doc: LoadedDoc, error: ValidationError, where: _Where) -> Iterator[_Found]:
    """Translate one jsonschema error into zero or more diagnostics."""
    path: PathTuple = tuple(error.absolute_path)
    keyword = str(error.validator)
    if keyword == "additionalProperties":
        yield from _unknown_keys(doc, error, path, where)
    elif keyword == "required":
        yield from _missing_keys(doc, error, path, where)
    elif keyword == "uniqueItems" and (pair := _repeated(error.instance)) is not None:
        first, again, item = pair
        message = _at(f"items must be unique; {_literal(item)} is listed again",
                      path, where) + ": list it once"
        note = Related("first listed here", doc.span_for((*path, first)))
        yield _Found(Diagnostic("schema-invalid", message, doc.span_for((*path, again)), (note,)),
                     path)
    else:
        code, message, suggestion = _describe_error(error, keyword)
        span = doc.span_for(path)
        diag = Diagnostic(code, _at(message, path, where), span, suggestion=suggestion)
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
        msg = f"{_describe(value)} is not {pattern_words(str(expected), error.schema)}"
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


def _unknown_keys(doc: LoadedDoc, error: ValidationError, path: PathTuple, where: _Where
                  ) -> Iterator[_Found]:
    """Yield one schema-unknown-key per extra key, at the key, with the keys allowed there
    and a did-you-mean."""
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
        at = where.parent_address(path, key) if path else ""
        place = f" in {at}" if at else ""
        msg = f"unknown key '{key}'{place}"
        if allowed:
            msg += f"; the keys allowed here are: {', '.join(allowed)}"
        elif patterns:
            msg += "; keys here must be " + " or ".join(
                pattern_words(p) for p in patterns)
        span = doc.span_for((*path, key), key=True)
        yield _Found(Diagnostic("schema-unknown-key", msg, span, suggestion=guess), path, guess)


def _missing_keys(doc: LoadedDoc, error: ValidationError, path: PathTuple, where: _Where
                  ) -> Iterator[_Found]:
    """Yield one schema-required per missing key, at the object's key (or its start)."""
    instance = error.instance
    if not isinstance(instance, dict):
        return
    span = doc.span_for(path, key=True) if path else Span.point(doc.display)
    required: Any = error.validator_value
    for key in required:
        if key in instance:
            continue
        place = f" in {where.address(path)}" if path else " at the top level"
        msg = f"missing required key '{key}'{place}"
        prop = (error.schema.get("properties") or {}).get(key) if isinstance(
            error.schema, dict) else None
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list):
            msg += f": add {key}: " + " | ".join(str(v) for v in prop["enum"])
        yield _Found(Diagnostic("schema-required", msg, span), path, key)


def _at(message: str, path: PathTuple, where: _Where) -> str:
    """Append the readable address of `path` (in the file the user wrote) to a message."""
    return f"{message} at {where.address(path)}" if path else message


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
