"""Python literals for generated code: values are printed with `repr`, never built as strings.

`fmt` lays out nested calls, tuples, lists and dicts the way ruff's formatter would: on one
line when it fits, otherwise one element per line with a trailing comma.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lisboa_rules.core.encode import py_str

WIDTH = 100
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Raw:
    """Code that is already Python (a name or a checked expression)."""

    code: str


@dataclass(frozen=True)
class Call:
    """A call `name(arg, key=value, ...)`."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Update:
    """A dict literal that starts from another dict: `{**base, key: value}`."""

    base: str
    changes: dict[Any, Any]


def identifier(name: str) -> str:
    """Check that a generated identifier is a plain Python name (never data-driven code)."""
    if not IDENTIFIER.match(name):
        raise ValueError(f"not a safe identifier: {name!r}")
    return name


def literal(value: Any) -> str:
    """A Python literal for a scalar: strings double-quoted as ruff writes them."""
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return repr(value)
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, Raw):
        return value.code
    raise TypeError(f"no literal for {type(value).__name__}")


def fmt(value: Any, indent: int = 0, trailing: str = "", col: int | None = None) -> str:
    """Format `value` as ruff would: `indent` is the current line's indentation, `col` the
    column where the value starts (default: `indent`), `trailing` what follows it."""
    start = indent if col is None else col
    flat = _flat_within(value, WIDTH - start - len(trailing))
    if flat is not None:
        return flat
    if isinstance(value, str):
        return _long_string(value, indent, col is not None and col != indent)
    opened = _open(value)
    if opened is None:
        return _flat(value)
    head, close, items = opened
    pad = " " * (indent + 4)
    # Like black: first try the whole body on one indented line, then one item per line.
    # Black/ruff keep a call's arguments on one line when they fit; literals with more than
    # one item always get one item per line.
    literal_many = not isinstance(value, Call) and len(items) > 1
    if items and not literal_many and not _single_tuple(value):
        body = _items_within(items, WIDTH - indent - 4)
        if body is not None:
            return f"{head}\n{pad}{body}\n{' ' * indent}{close}"
    lines = []
    for i in items:
        if isinstance(i, _Item):
            lines.append(i.layout(indent + 4))
        else:
            lines.append(fmt(i, indent + 4, ","))
    return head + "\n" + "".join(f"{pad}{ln},\n" for ln in lines) + " " * indent + close


def _long_string(value: str, indent: int, after_key: bool) -> str:
    """A long string as implicit concatenation, one piece per line, broken at spaces."""
    inner = indent + 4 if after_key else indent
    whole = py_str(value)
    if after_key and inner + len(whole) <= WIDTH:
        return f"(\n{' ' * inner}{whole}\n{' ' * indent})"
    room = WIDTH - inner - 3
    pieces: list[str] = []
    rest = value
    while len(py_str(rest)) > room:
        cut = rest.rfind(" ", 0, room - 8)
        if cut <= 0:
            cut = room - 8
        pieces.append(rest[: cut + 1])
        rest = rest[cut + 1:]
    pieces.append(rest)
    pad = " " * inner
    body = f"\n{pad}".join(py_str(p) for p in pieces)
    if after_key:
        return f"(\n{pad}{body}\n{' ' * indent})"
    return body


def _single_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 1


@dataclass(frozen=True)
class _Item:
    """`key=value` or `key: value` inside a call or dict."""

    prefix: str
    value: Any

    def flat(self) -> str:
        return self.prefix + _flat(self.value)

    def layout(self, indent: int) -> str:
        return self.prefix + fmt(self.value, indent, ",", indent + len(self.prefix))


def _open(value: Any) -> tuple[str, str, list[Any]] | None:
    if isinstance(value, Call):
        items: list[Any] = list(value.args)
        items += [_Item(f"{identifier(k)}=", v) for k, v in value.kwargs]
        return f"{value.name}(", ")", items
    if isinstance(value, tuple):
        return "(", ")", list(value)
    if isinstance(value, list):
        return "[", "]", list(value)
    if isinstance(value, Update):
        return "{", "}", [Raw(f"**{value.base}"),
                          *(_Item(f"{_flat(k)}: ", v) for k, v in value.changes.items())]
    if isinstance(value, dict):
        return "{", "}", [_Item(f"{_flat(k)}: ", v) for k, v in value.items()]
    return None


def _flat(value: Any) -> str:
    if isinstance(value, Call):
        parts = [_flat(a) for a in value.args]
        parts += [f"{identifier(k)}={_flat(v)}" for k, v in value.kwargs]
        return f"{value.name}(" + ", ".join(parts) + ")"
    if isinstance(value, tuple):
        inner = ", ".join(_flat(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, Update):
        parts = [f"**{value.base}"] + [f"{_flat(k)}: {_flat(v)}" for k, v in value.changes.items()]
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    return literal(value)


class _TooLong(Exception):
    """Raised inside _walk when the flat text passes its room: stop flattening."""


def _flat_within(value: Any, room: int) -> str | None:
    """`_flat(value)` when it is at most `room` characters long, else None; gives up as soon
    as the text passes `room`, so a big literal is never flattened whole just to be broken."""
    parts: list[str] = []
    used = [0]
    try:
        _walk(value, parts, used, room)
    except _TooLong:
        return None
    return "".join(parts)


def _items_within(items: list[Any], room: int) -> str | None:
    parts: list[str] = []
    used = [0]
    try:
        for i, item in enumerate(items):
            if i:
                _put(", ", parts, used, room)
            if isinstance(item, _Item):
                _put(item.prefix, parts, used, room)
                _walk(item.value, parts, used, room)
            else:
                _walk(item, parts, used, room)
    except _TooLong:
        return None
    return "".join(parts)


def _put(text: str, parts: list[str], used: list[int], room: int) -> None:
    used[0] += len(text)
    if used[0] > room:
        raise _TooLong
    parts.append(text)


def _walk(value: Any, parts: list[str], used: list[int], room: int) -> None:
    """The same text as _flat, emitted piece by piece."""
    if isinstance(value, Call):
        _put(f"{value.name}(", parts, used, room)
        first = True
        for a in value.args:
            if not first:
                _put(", ", parts, used, room)
            first = False
            _walk(a, parts, used, room)
        for k, v in value.kwargs:
            if not first:
                _put(", ", parts, used, room)
            first = False
            _put(f"{identifier(k)}=", parts, used, room)
            _walk(v, parts, used, room)
        _put(")", parts, used, room)
    elif isinstance(value, tuple):
        _put("(", parts, used, room)
        for i, v in enumerate(value):
            if i:
                _put(", ", parts, used, room)
            _walk(v, parts, used, room)
        _put(",)" if len(value) == 1 else ")", parts, used, room)
    elif isinstance(value, list):
        _put("[", parts, used, room)
        for i, v in enumerate(value):
            if i:
                _put(", ", parts, used, room)
            _walk(v, parts, used, room)
        _put("]", parts, used, room)
    elif isinstance(value, Update | dict):
        _put("{", parts, used, room)
        first = True
        if isinstance(value, Update):
            _put(f"**{value.base}", parts, used, room)
            first = False
            pairs = value.changes.items()
        else:
            pairs = value.items()
        for k, v in pairs:
            if not first:
                _put(", ", parts, used, room)
            first = False
            _walk(k, parts, used, room)
            _put(": ", parts, used, room)
            _walk(v, parts, used, room)
        _put("}", parts, used, room)
    else:
        _put(literal(value), parts, used, room)


# --- wrapping generated statements ------------------------------------------------------------

_OPEN = "([{"
_CLOSE = ")]}"
_SPLITS = (", ", " or ", " and ", " if ", " else ", " for ", " + ", " - ")


def _scan(code: str) -> list[int]:
    """The bracket depth before each character of `code`, -1 inside string literals."""
    depth = 0
    out: list[int] = []
    quote = ""
    i = 0
    while i < len(code):
        ch = code[i]
        if quote:
            out.append(-1)
            if ch == "\\":
                out.append(-1)
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            out.append(-1)
        else:
            if ch in _CLOSE:
                depth -= 1
            out.append(depth)
            if ch in _OPEN:
                depth += 1
        i += 1
    return out


def wrap_line(line: str, width: int = 100) -> list[str]:
    """A generated statement split inside its outermost brackets so that no line is longer
    than `width` (Python joins the lines inside brackets); short lines are returned as they
    are. Splits at the top-level commas of the brackets, else at `or`/`and`/`if`/`for`/`+`."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    depths = _scan(line)
    # the outermost bracket pair holding the most text
    best: tuple[int, int] | None = None
    stack: list[int] = []
    for i, ch in enumerate(line):
        if depths[i] < 0:
            continue
        if ch in _OPEN:
            stack.append(i)
        elif ch in _CLOSE and stack:
            start = stack.pop()
            if not stack and (best is None or i - start > best[1] - best[0]):
                best = (start, i)
    if best is None or best[1] - best[0] < 4:
        return [line]
    start, end = best
    inner = line[start + 1 : end]
    inner_depth = _scan(inner)
    parts: list[str] = []
    for sep in _SPLITS:
        cuts = [i for i in range(len(inner)) if inner.startswith(sep, i)
                and inner_depth[i] == 0 and all(d == 0 for d in inner_depth[i:i + len(sep)])]
        if cuts:
            pos = 0
            for c in cuts:
                parts.append(inner[pos:c] + ("," if sep == ", " else ""))
                pos = c + (2 if sep == ", " else 1)
            parts.append(inner[pos:] + ("," if sep == ", " else ""))
            break
    if not parts:
        parts = [inner]
    head = line[: start + 1]
    tail = indent + line[end:]
    out = [head]
    for part in parts:
        out += wrap_line(indent + "    " + part.strip(), width)
    out.append(tail)
    return out
