"""A quick yes/no check of a document against its JSON schema, without jsonschema.

Almost every document a build validates is valid, and jsonschema's `iter_errors` walks every
value of it with generators and a new validator per level; importing jsonschema (and
`referencing`, `attrs`, `rpds`) is also about a quarter of the time a build spends importing.
So validation asks this module first: `compile_schema` turns a schema into nested closures that
answer "valid or not" with the semantics jsonschema gives that schema (Draft 2020-12, with the
strict `integer` and `number` of validate.py). Only a document it calls invalid goes through
jsonschema (validate.py), which finds the errors and their locations. The answer is only a
shortcut: when this module and jsonschema disagree on an invalid document, jsonschema's verdict
is the one reported; a document called valid here must be valid for jsonschema too
(tests/front/test_quick_check.py checks both on every fixture and on mutated documents).

Only the keywords the packaged schemas use are implemented. A schema with any other keyword
(`format`, `multipleOf`, `if`, `$dynamicRef`, ...), a `$ref` this module cannot
resolve on its own (an anchor, a nested `$id`, a schema outside the set) or an unknown type
makes `compile_schema` return None, and then jsonschema validates every document of that kind.
Standard library only.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sized
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

Check = Callable[[Any], bool]

# Keywords that never make a document invalid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "definitions", "$comment", "title",
                          "description", "examples", "default", "deprecated", "readOnly",
                          "writeOnly"})  # fmt: skip


class Unsupported(Exception):
    """The schema uses something this module does not implement (jsonschema is used then)."""


def _is_number(x: Any) -> bool:
    """validate.py's `number`: an int that is not a bool, or a finite float."""
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return math.isfinite(x)
    return isinstance(x, int)


_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "number": _is_number,
}

_TRUE, _FALSE = object(), object()


def _unbool(x: Any) -> Any:
    return _TRUE if x is True else _FALSE if x is False else x


def equal(one: Any, two: Any) -> bool:
    """jsonschema's equality (`_utils.equal`): True is not 1, lists and mappings recursively."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, (list, tuple)) and isinstance(two, (list, tuple)):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(k in two and equal(v, two[k]) for k, v in one.items())
    return bool(_unbool(one) == _unbool(two))


def unique(items: list[Any]) -> bool:
    """jsonschema's `uniqueItems` (`_utils.uniq`), the way it looks included: the items
    sorted (True and False apart from 1 and 0) and each compared with the next by `equal`, or,
    when they cannot be sorted, each with every one before it."""
    try:
        ordered = sorted(_unbool(i) for i in items)
        return not any(equal(a, b) for a, b in itertools.pairwise(ordered))
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in items:
            item = _unbool(item)
            if any(equal(x, item) for x in seen):
                return False
            seen.append(item)
        return True


def compile_schema(schema: Any, resources: Mapping[str, Any]) -> Check | None:
    """A function data -> valid?, for `schema` (its `$ref`s resolved among `resources`, the
    schemas by `$id`); None when the schema uses anything not implemented here."""
    try:
        return _Compiler(resources).compile(schema, str(_get(schema, "$id", "")), top=True)
    except (Unsupported, re.error, TypeError, ValueError, KeyError, IndexError):
        return None


def _get(schema: Any, key: str, default: Any) -> Any:
    return schema.get(key, default) if isinstance(schema, dict) else default


class _Compiler:
    def __init__(self, resources: Mapping[str, Any]) -> None:
        self.resources = resources
        self.refs: dict[str, list[Check]] = {}  # absolute target -> cell (recursion-safe)

    def compile(self, schema: Any, base: str, top: bool = False) -> Check:
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise Unsupported("a schema that is not an object or a boolean")
        if not top and any(k in schema for k in ("$id", "$anchor", "$dynamicAnchor")):
            raise Unsupported("a nested base URI or anchor")
        checks: list[Check] = []
        for key, value in schema.items():
            if key in _ANNOTATIONS:
                continue
            make = getattr(self, "_k_" + key.lstrip("$"), None)
            if make is None or key.startswith("_"):
                raise Unsupported(key)
            checks.append(make(value, schema, base))
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        parts = tuple(checks)
        return lambda x: all(c(x) for c in parts)

    # -- references -----------------------------------------------------------------------

    def _k_ref(self, ref: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(ref, str):
            raise Unsupported("$ref")
        target = urljoin(base, ref)
        cell = self.refs.get(target)
        if cell is None:
            cell = []
            self.refs[target] = cell
            url, fragment = urldefrag(target)
            if url not in self.resources:
                raise Unsupported("a $ref outside the schema set")
            node = self.resources[url]
            if fragment:
                if not fragment.startswith("/"):
                    raise Unsupported("an anchor")
                for part in fragment[1:].split("/"):
                    part = unquote(part).replace("~1", "/").replace("~0", "~")
                    node = node[int(part)] if isinstance(node, list) else node[part]
            cell.append(self.compile(node, url, top=not fragment))
        return lambda x: cell[0](x)

    # -- any instance ---------------------------------------------------------------------

    def _k_type(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            raise Unsupported("type")
        tests = tuple(_TYPES[n] for n in names)
        if len(tests) == 1:
            return tests[0]
        return lambda x: any(t(x) for t in tests)

    def _k_const(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return lambda x: equal(x, value)

    def _k_enum(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, list):
            raise Unsupported("enum")
        choices = tuple(value)
        return lambda x: any(equal(c, x) for c in choices)

    def _subs(self, value: Any, base: str) -> tuple[Check, ...]:
        if not isinstance(value, list) or not value:
            raise Unsupported("an empty or malformed list of subschemas")
        return tuple(self.compile(s, base) for s in value)

    def _k_allOf(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        subs = self._subs(value, base)
        return lambda x: all(s(x) for s in subs)

    def _k_anyOf(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        subs = self._subs(value, base)
        return lambda x: any(s(x) for s in subs)

    def _k_oneOf(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        subs = self._subs(value, base)

        def one_of(x: Any) -> bool:
            found = False
            for s in subs:
                if s(x):
                    if found:
                        return False
                    found = True
            return found

        return one_of

    def _k_not(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        sub = self.compile(value, base)
        return lambda x: not sub(x)

    # -- numbers and strings --------------------------------------------------------------

    def _bound(self, value: Any, test: Callable[[Any, Any], bool]) -> Check:
        if not _is_number(value):
            raise Unsupported("a bound that is not a number")
        return lambda x: not _is_number(x) or test(x, value)

    def _k_minimum(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._bound(value, lambda x, v: not x < v)

    def _k_maximum(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._bound(value, lambda x, v: not x > v)

    def _k_exclusiveMinimum(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._bound(value, lambda x, v: not x <= v)

    def _k_exclusiveMaximum(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._bound(value, lambda x, v: not x >= v)

    def _size(self, value: Any, kind: type[Sized], test: Callable[[int, int], bool]) -> Check:
        if not isinstance(value, int) or isinstance(value, bool):
            raise Unsupported("a size that is not an integer")
        return lambda x: not isinstance(x, kind) or test(len(x), value)

    def _k_minLength(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, str, lambda n, v: n >= v)

    def _k_maxLength(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, str, lambda n, v: n <= v)

    def _k_minItems(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, list, lambda n, v: n >= v)

    def _k_maxItems(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, list, lambda n, v: n <= v)

    def _k_minProperties(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, dict, lambda n, v: n >= v)

    def _k_maxProperties(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        return self._size(value, dict, lambda n, v: n <= v)

    def _k_pattern(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, str):
            raise Unsupported("pattern")
        search = re.compile(value).search
        return lambda x: not isinstance(x, str) or search(x) is not None

    # -- arrays ---------------------------------------------------------------------------

    def _k_items(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        prefix = len(_get(schema, "prefixItems", []))
        sub = self.compile(value, base)
        return lambda x: not isinstance(x, list) or all(sub(i) for i in x[prefix:])

    def _k_prefixItems(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        subs = self._subs(value, base)
        return lambda x: not isinstance(x, list) or all(s(i) for s, i in zip(subs, x, strict=False))

    def _k_uniqueItems(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, bool):
            raise Unsupported("uniqueItems")
        if not value:
            return lambda x: True
        return lambda x: not isinstance(x, list) or unique(x)

    # -- objects --------------------------------------------------------------------------

    def _k_required(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, list):
            raise Unsupported("required")
        keys = tuple(value)
        return lambda x: not isinstance(x, dict) or all(k in x for k in keys)

    def _k_properties(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, dict):
            raise Unsupported("properties")
        subs = tuple((k, self.compile(s, base)) for k, s in value.items())

        def properties(x: Any) -> bool:
            return not isinstance(x, dict) or all(s(x[k]) for k, s in subs if k in x)

        return properties

    def _k_patternProperties(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        if not isinstance(value, dict):
            raise Unsupported("patternProperties")
        subs = tuple((re.compile(p).search, self.compile(s, base)) for p, s in value.items())

        def pattern_properties(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            return all(s(v) for search, s in subs for k, v in x.items() if search(k))

        return pattern_properties

    def _k_additionalProperties(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        known = frozenset(_get(schema, "properties", {}))
        patterns = "|".join(_get(schema, "patternProperties", {}))
        search = re.compile(patterns).search if patterns else None
        sub = self.compile(value, base)

        def additional(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            for k, v in x.items():
                if k in known or (search is not None and search(k)):
                    continue
                if not sub(v):
                    return False
            return True

        return additional

    def _k_propertyNames(self, value: Any, schema: dict[str, Any], base: str) -> Check:
        sub = self.compile(value, base)
        return lambda x: not isinstance(x, dict) or all(sub(k) for k in x)
