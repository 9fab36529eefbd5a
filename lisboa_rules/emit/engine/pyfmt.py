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


def identical(a: Any, b: Any) -> bool:
    """Whether two values are the same literal to `fmt` (so they format the same): the same
    types all the way down (a bool is not an int, a tuple not a list), equal scalars, dicts
    with the same items in the same order. False says nothing: compare `fmt`s then."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t is str or t is int or t is bool:
        return bool(a == b)
    if t is tuple or t is list:
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if t is dict:
        return len(a) == len(b) and all(
            identical(ka, kb) and identical(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True))
    if t is Raw:
        return bool(a.code == b.code)
    if t is Call:
        return (a.name == b.name and identical(a.args, b.args)
                and identical(a.kwargs, b.kwargs))
    if t is Update:
        return a.base == b.base and identical(a.changes, b.changes)
    return False


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
# The procedures' code is written on one line per statement; a line longer than the engine's
# line length is split the way ruff format (black's style) splits it, so that the generated
# engine stays `ruff format` clean: at the last bracket pair, and inside it at the delimiters of
# the lowest precedence (commas, with a trailing comma; comprehension `for`/`if`; `if`/`else`;
# `or`; `and`; comparisons; `+`/`-`), operators leading. A statement's condition or value with
# several such delimiters gets the parentheses ruff adds around it.

_OPEN = "([{"
_CLOSE = ")]}"
_PRIORITIES: tuple[tuple[str, ...], ...] = (
    (", ",),
    (" for ", " if "),  # in a comprehension
    (" if ", " else "),
    (" or ",),
    (" and ",),
    (" not in ", " is not ", " in ", " is ", " <= ", " >= ", " < ", " > ", " == ", " != "),
    (" + ", " - "),
    (" * ", " // "),
)
_STATEMENT = ("if ", "elif ", "while ", "return ", "for ")


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
            if ch == "\\" and i + 1 < len(code):
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


def _cuts(text: str, seps: tuple[str, ...], depth: list[int] | None = None
          ) -> list[tuple[int, str]]:
    """Where the separators stand at bracket depth 0 of `text` (outside strings), read left
    to right: at each place the first separator of `seps` that stands there (`depth`: the
    text's _scan, when known)."""
    found: dict[int, int] = {}  # place -> the index in `seps` of the first one there
    for k, sep in enumerate(seps):
        at = text.find(sep)
        while at >= 0:
            if at not in found or found[at] > k:
                found[at] = k
            at = text.find(sep, at + 1)
    if not found:
        return []
    if depth is None:
        depth = _scan(text)
    out: list[tuple[int, str]] = []
    after = 0  # the scan goes on after the last separator taken
    for at in sorted(found):
        if at < after:
            continue
        for sep in seps[found[at]:]:
            if text.startswith(sep, at) and not any(depth[at:at + len(sep)]):
                out.append((at, sep))
                after = at + len(sep)
                break
    return out


def _delimiters(text: str) -> tuple[tuple[str, ...], list[tuple[int, str]]]:
    """The lowest-precedence delimiters at depth 0 of `text`, and where they are."""
    depth = _scan(text)
    comprehension = bool(_cuts(text, (" for ",), depth))
    for group in _PRIORITIES:
        if group == (" for ", " if ") and not comprehension:
            continue
        if group == (" if ", " else ") and comprehension:
            continue
        found = _cuts(text, group, depth)
        if found:
            return group, found
    return (), []


def _split(text: str, group: tuple[str, ...], cuts: list[tuple[int, str]]) -> list[str]:
    parts: list[str] = []
    pos = 0
    for at, sep in cuts:
        if sep == ", ":
            parts.append(text[pos:at] + ",")
            pos = at + 2
        else:
            parts.append(text[pos:at])
            pos = at + 1  # the operator leads the next line
    last = text[pos:]
    parts.append(last + ("," if group == (", ",) and last.strip() else ""))
    return [p.strip() for p in parts if p.strip()]


def wrap_line(line: str, width: int = 100) -> list[str]:
    """A generated statement split inside its brackets so that no line is longer than
    `width`; short lines are returned as they are. (A function of its arguments alone, kept
    for the process: the rule sets of a build write many of the same long lines.)"""
    if len(line) <= width:
        return [line]
    key = (line, width)
    found = _WRAPPED.get(key)
    if found is None:
        if len(_WRAPPED) >= _WRAPPED_MAX:  # a long process (the fuzzer) starts again
            _WRAPPED.clear()
        found = _WRAPPED[key] = tuple(_wrapped(line, width))
    return list(found)


_WRAPPED: dict[tuple[str, int], tuple[str, ...]] = {}
_WRAPPED_MAX = 20_000


def _wrapped(line: str, width: int) -> list[str]:
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    for kw in _STATEMENT:  # a condition with several delimiters gets parentheses
        if body.startswith(kw) and body.endswith(":") and kw != "for ":
            inner = body[len(kw):-1]
            _, cuts = _delimiters(inner)
            if len(cuts) >= 2 or (cuts and not inner.endswith(tuple(_CLOSE))):
                return [indent + kw + "(", *_lines(indent + "    ", inner, width),
                        indent + "):"]
    depths = _scan(line)
    if body.startswith("def "):  # a signature splits its parameters
        start = line.index("(")
        end = next(i for i in range(start + 1, len(line)) if line[i] == ")" and depths[i] == 0)
        return [line[: start + 1], *_lines(indent + "    ", line[start + 1 : end], width),
                indent + line[end:]]
    # the last bracket pair at depth 0 (the right-hand split)
    end = max((i for i, ch in enumerate(line) if ch in _CLOSE and depths[i] == 0), default=-1)
    if end < 0:
        return [line]
    start = max(i for i in range(end) if line[i] in _OPEN and depths[i] == 0)
    if end - start < 2:
        return [line]
    head = line[: start + 1]
    tail = indent + line[end:]
    inner = line[start + 1 : end]
    commas = _cuts(inner, (", ",))
    if commas and line[start] == "(" and not (
            start and (line[start - 1].isalnum() or line[start - 1] in "_)]")):
        # a tuple split over lines: one item a line, as ruff's formatter does, even when
        # its items would fit on one line (a call's arguments may share one)
        parts = [wrap_line(indent + "    " + part, width)
                 for part in _split(inner, (", ",), commas)]
        return [head, *[x for lines in parts for x in lines], tail]
    return [head, *_lines(indent + "    ", inner, width), tail]


def _lines(indent: str, text: str, width: int) -> list[str]:
    """The contents of a bracket pair on lines of their own."""
    one = indent + text
    if len(one) <= width and not text.rstrip().endswith(","):
        return [one]  # it fits on one line (a trailing comma keeps it split)
    group, cuts = _delimiters(text)
    if not cuts:
        return wrap_line(one, width)
    out: list[str] = []
    for part in _split(text, group, cuts):
        out += wrap_line(indent + part, width)
    return out
