"""The formula language's names: which a formula may read, and their declared ranges.

What each name reads is data (`value:` in rules/vocabulary.yaml, an expression of the effect
language over the declared state: lisboa_rules/model/procs.py `vocab_nodes` checks it into IR
nodes), as are its words and its range.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.ir.bounds import INF, Interval, show_interval
from lisboa_rules.lang.expr import NameInfo


def env_for(
    vocab: Mapping[str, tuple[str, str | None]],
    scopes: tuple[str, ...],
    businesses: list[str],
    params: tuple[tuple[str, int], ...] = (),
    types: Mapping[str, str] | None = None,
    aka: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, NameInfo]:
    """The names a formula in these scopes may read: vocabulary names (of the type their value
    has, a number unless said otherwise) plus its own params."""
    env: dict[str, NameInfo] = {}
    for name, (scope, per) in vocab.items():
        if scope in scopes:
            typ = (types or {}).get(name, "int")
            items = tuple(businesses) if per == "business" else None
            env[name] = NameInfo("bool" if typ == "bool" else "int", items,
                                 (aka or {}).get(name, ()))
    for name, _ in params:
        env[name] = NameInfo("int")
    return env


# --- declared ranges --------------------------------------------------------------------------
#
# A range is `[low, high]`; each bound is a whole number, null (no bound) or a data expression
# over the rules documents: a path like `game.tracks.influence.max` (a path through a list
# gives the list of values), `+ - *`, and `min`, `max`, `sum`, `count` (of a list). Bounds are
# read from the merged documents, so a variant that changes the data changes the range.

DATA_FUNCTIONS = ("min", "max", "sum", "count")
MAX_BOUND_LENGTH = 200


class BoundError(Exception):
    """A bound that does not parse or does not name whole numbers in the data."""


def resolve_range(raw: Any, data: Mapping[str, Any]) -> Interval:
    """The interval of a declared `[low, high]` range; raise BoundError."""
    if not (isinstance(raw, list) and len(raw) == 2):
        raise BoundError("a range is [low, high]")
    lo = -INF if raw[0] is None else _bound(raw[0], data)
    hi = INF if raw[1] is None else _bound(raw[1], data)
    if lo > hi:
        raise BoundError(
            f"the range's low bound {show_interval((lo, lo))} is above its high "
            f"bound {show_interval((hi, hi))}"
        )
    return (lo, hi)


def _bound(raw: Any, data: Mapping[str, Any]) -> int:
    if isinstance(raw, bool):
        raise BoundError(f"a bound is a whole number or a data expression, not {raw!r}")
    if isinstance(raw, int):
        return raw
    if not isinstance(raw, str) or len(raw) > MAX_BOUND_LENGTH:
        raise BoundError(f"a bound is a whole number or a data expression, not {raw!r}")
    try:
        tree = parse_expr(raw.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise BoundError(f"bound '{raw}' does not parse") from None
    value = _data_value(tree.body, data, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BoundError(f"bound '{raw}' is not a whole number")
    return value


def _path(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _path(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _lookup(data: Any, path: list[str], where: str) -> Any:
    if isinstance(data, list):
        out: list[Any] = []
        for item in data:
            found = _lookup(item, path, where)
            out.extend(found if isinstance(found, list) else [found])
        return out
    if not path:
        return data
    if not isinstance(data, Mapping) or path[0] not in data:
        raise BoundError(f"'{where}' names no value in the rules data")
    return _lookup(data[path[0]], path[1:], where)


def _ints(value: Any, where: str) -> list[int]:
    items = value if isinstance(value, list) else [value]
    if not items or any(isinstance(v, bool) or not isinstance(v, int) for v in items):
        raise BoundError(f"'{where}' is not a whole number or a list of them")
    return [int(v) for v in items]


def _data_value(node: ast.expr, data: Mapping[str, Any], depth: int) -> Any:
    if depth > 12:
        raise BoundError("bound is nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    path = _path(node)
    if path is not None:
        return _lookup(data, path, ".".join(path))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -sum(_ints(_data_value(node.operand, data, depth + 1), ast.unparse(node)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        a = _ints(_data_value(node.left, data, depth + 1), ast.unparse(node.left))
        b = _ints(_data_value(node.right, data, depth + 1), ast.unparse(node.right))
        if len(a) != 1 or len(b) != 1:
            raise BoundError(f"'{ast.unparse(node)}' adds up lists; use sum(...)")
        if isinstance(node.op, ast.Add):
            return a[0] + b[0]
        return a[0] - b[0] if isinstance(node.op, ast.Sub) else a[0] * b[0]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in DATA_FUNCTIONS
        and node.args
        and not node.keywords
    ):
        values = [_data_value(a, data, depth + 1) for a in node.args]
        if node.func.id == "count":
            if len(values) != 1 or not isinstance(values[0], list):
                raise BoundError(f"count() takes one list, in '{ast.unparse(node)}'")
            return len(values[0])
        flat = [
            v
            for a, value in zip(node.args, values, strict=True)
            for v in _ints(value, ast.unparse(a))
        ]
        if node.func.id == "sum":
            return sum(flat)
        return max(flat) if node.func.id == "max" else min(flat)
    raise BoundError(f"'{ast.unparse(node)}' is not allowed in a bound")
