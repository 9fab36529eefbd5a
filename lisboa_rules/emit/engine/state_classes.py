"""The engine's state classes (`Player`, `Game`), generated from the declared state
(rules/state.yaml): one view per class, which the engine template lays out.

Each field becomes a slot, an annotated attribute with its `text` as a comment, and a parameter
of `__init__` with its default. The classes are plain classes with `__slots__` and explicit
methods, not dataclasses: the same module compiles with mypyc (`lisboa-rules compile`), where a
dataclass is slower and the `object.__new__` / `__dict__` shortcuts fail at run time. `_copy()`
is a shallow copy (every field shared) and `clone()` copies each mutable field in the way its type
needs (`self.hand[:]`, `{k: v.copy() for k, v in self.offices.items()}`); the game's `_take(c)`
sets every field to a shallow copy's again (a move tried in place, taken back); `__eq__` and
`__repr__` are those a dataclass would have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from lisboa_rules.core.encode import py_comment
from lisboa_rules.emit.engine.pyfmt import fmt, identifier, literal, wrap_line
from lisboa_rules.emit.engine.runtime import runtime_constant
from lisboa_rules.model.state import StateDecl, StateField, StateType

CLASSES = {"player": "Player", "game": "Game"}
COMMENT_WIDTH = 92


@dataclass
class FieldView:
    name: str
    annotation: str
    comments: list[str]
    copy: str | None  # the expression clone() assigns, or None: shared (immutable)
    param: str = ""  # the parameter of __init__, with its default
    init: str = ""  # the value __init__ assigns (a fresh one for a mutable default)
    data: Expr = ""  # the code of its plain JSON data, from the local `v` holding its value


@dataclass
class ClassView:
    name: str
    fields: list[FieldView] = field(default_factory=list)

    def names(self, col: int) -> str:
        """The field names as a Python tuple literal, written from column `col`."""
        return fmt(tuple(f.name for f in self.fields), 0, col=col)

    def slots(self) -> str:
        """The field names, sorted (as ruff keeps `__slots__`), in the class's `__slots__`."""
        extra = RS_SLOTS if self.name == "Game" else ()
        return fmt(tuple(sorted([*extra, *(f.name for f in self.fields)])), 4, col=16)

    def data(self) -> str:
        """`_game_data` / `_player_data`: the state's plain JSON data, made field by field in
        the declared shapes (see `data_code`)."""
        fn = f"_{self.name.lower()}_data"
        pad = "    "
        arg = self.name.lower()[0]
        out = [
            f"def {fn}({arg}: {self.name}) -> dict[str, Any]:",
            f'{pad}"""What `_plain` makes of each field of `{arg}` (`_{self.name.upper()}_FIELDS`),'
            " in order: a value",
            f"{pad}of the declared shape is copied here, any other is left to `_plain` (the same"
            " data,",
            f'{pad}or the same error)."""',
            f"{pad}d: dict[str, Any] = {{}}",
            f"{pad}v: Any",
        ]
        for f in self.fields:
            out.append(f"{pad}v = {arg}.{f.name}")
            out += lay(f.data, pad, f'd["{f.name}"] = ')
        out.append(f"{pad}return d")
        return "\n".join(out)

    def methods(self) -> str:
        """`__init__`, `_copy`, `clone`, `_take` (the game's) and `__eq__` of the class,
        indented in it."""
        return "\n".join(class_methods(self.name, self.fields, self.name == "Game"))


def annotation(t: StateType, decl: StateDecl) -> str:
    """The Python type of a declared type."""
    if t.name == "list":
        out = f"list[{annotation(t.args[0], decl)}]"
    elif t.name == "map":
        out = f"dict[{annotation(t.args[0], decl)}, {annotation(t.args[1], decl)}]"
    elif t.name == "player":
        out = "Player"
    elif t.name == "bool":
        out = "bool"
    elif t.name in ("int", "seat"):
        out = "int"
    elif t.name == "text":
        out = "str"
    else:
        kind = decl.kind(t.name)
        out = "int" if kind is not None and kind.of == "int" else "str"
    return f"{out} | None" if t.optional else out


class Shape(Protocol):
    """A type as the copies read it: a state field's (`StateType`) or a value's (`VType`)."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> Sequence[Shape]: ...
    @property
    def optional(self) -> bool: ...


def copy_code(t: Shape, code: str, depth: int = 0, anew: bool = False,
              whole: bool = True) -> str | None:
    """An expression that copies the value `code` of type `t` deeply, or None when the value is
    immutable (an int, a text, an id) and can be shared. `anew`: the value may be any sequence
    or mapping (a constant of the engine is a tuple), so its copy is made with `list()` and
    `dict()`; `whole`: `code` binds tighter than `in`, `.` and `is` (not `a if c else b`,
    which is bracketed where they follow it)."""
    held = code if whole else f"({code})"
    if t.name == "player":
        out = f"{held}.clone()"
    elif t.name == "list":
        inner = copy_code(t.args[0], f"v{depth}", depth + 1, anew)
        flat = f"list({code})" if anew else f"{held}[:]"
        out = flat if inner is None else f"[{inner} for v{depth} in {held}]"
    elif t.name == "map":
        inner = copy_code(t.args[1], f"v{depth}", depth + 1, anew)
        flat = f"dict({code})" if anew else f"{held}.copy()"
        out = (
            flat
            if inner is None
            else f"{{k{depth}: {inner} for k{depth}, v{depth} in {held}.items()}}"
        )
    else:
        return None
    if t.optional:
        return f"None if {held} is None else {out}"
    return out


@dataclass(frozen=True)
class Cond:
    """`then if test else other`: the code `data_code` lays out (`lay`)."""

    then: Expr
    test: str
    other: Expr


@dataclass(frozen=True)
class Comp:
    """A comprehension: `[item for x in v]`, or `{key: item for k, w in v.items()}`."""

    open: str
    key: str  # "" for a list's
    item: Expr
    clause: str
    close: str


Expr = str | Cond | Comp


def flat(e: Expr) -> str:
    """`e` on one line."""
    if isinstance(e, str):
        return e
    if isinstance(e, Cond):
        return f"{flat(e.then)} if {e.test} else {flat(e.other)}"
    item = flat(e.item)
    if e.key:
        item = f"{e.key}: ({item})" if isinstance(e.item, Cond) else f"{e.key}: {item}"
    return f"{e.open}{item} {e.clause}{e.close}"


def lay(e: Expr, pad: str, head: str = "", tail: str = "", width: int = 100) -> list[str]:
    """The lines of `pad + head + e + tail`, `e` split as ruff splits it where one line is
    longer than `width`."""
    one = f"{pad}{head}{flat(e)}{tail}"
    if len(one) <= width or isinstance(e, str):
        return [one]
    inner = pad + "    "
    if isinstance(e, Cond):
        if len(f"{inner}{flat(e)}") <= width:  # the whole in brackets of its own, on one line
            return [f"{pad}{head}(", f"{inner}{flat(e)}", f"{pad}){tail}"]
        return [
            f"{pad}{head}(",
            *lay(e.then, inner),
            f"{inner}if {e.test}",
            *lay(e.other, inner, "else "),
            f"{pad}){tail}",
        ]
    key = f"{e.key}: " if e.key else ""
    inside = f"{inner}{key}{flat(e.item)} {e.clause}"
    if isinstance(e.item, Cond) and e.key:
        inside = f"{inner}{key}({flat(e.item)}) {e.clause}"
    if len(inside) <= width:  # the item and its clause on one line between the brackets
        return [f"{pad}{head}{e.open}", inside, f"{pad}{e.close}{tail}"]
    return [
        f"{pad}{head}{e.open}",
        *lay(e.item, inner, key),
        f"{inner}{e.clause}",
        f"{pad}{e.close}{tail}",
    ]


def data_code(t: StateType, decl: StateDecl, code: str, depth: int) -> Expr:
    """The code that makes what the runtime's `_plain(code, depth)` makes of the value `code`
    (a name) of type `t`: the declared shape inlined (a list of ints copied as
    `[x1 if type(x1) is int else _plain(x1, 1) for x1 in v]`), and `_plain` for any value not of
    it (a state changed by hand: the same data, or the same error) and for a list or table as
    deep as the runtime's `_NESTING` (which `_plain` refuses)."""
    plain = f"_plain({code}, {depth})"
    if t.is_container and depth >= runtime_constant("_NESTING"):
        return plain
    if t.name == "list":
        item = f"x{depth + 1}"
        made = Comp(
            "[", "", data_code(t.args[0], decl, item, depth + 1), f"for {item} in {code}", "]"
        )
        return Cond(made, f"type({code}) is list", plain)
    if t.name == "map":
        key, item = f"k{depth + 1}", f"w{depth + 1}"
        text = annotation(StateType(t.args[0].name), decl) == "str"
        made_key = f"({key} if type({key}) is str else str({key}))" if text else f"str({key})"
        made = Comp(
            "{",
            made_key,
            data_code(t.args[1], decl, item, depth + 1),
            f"for {key}, {item} in {code}.items()",
            "}",
        )
        return Cond(made, f"type({code}) is dict", plain)
    if t.name == "player":  # a Player is no JSON value (but in the game's `players`)
        return plain
    test = f"type({code}) is {annotation(StateType(t.name), decl)}"
    return Cond(code, f"{code} is None or {test}" if t.optional else test, plain)


# How the game's `players` are made, as the runtime's generic form makes them: each Player by
# `_player_data` (its fields at depth 2: the list is at 0, the player's table at 1), anything
# else set there by hand field by field by name; the list iterated whatever it is.
PLAYERS_DATA = Comp(
    "[",
    "",
    Cond("_player_data(x1)", "type(x1) is Player", "_fields_plain(x1, _PLAYER_FIELDS, 2)"),
    "for x1 in v",
    "]",
)


def field_data(scope: str, f: StateField, decl: StateDecl) -> Expr:
    """The code of the plain JSON data of a field of `Game` or `Player` held in `v`."""
    if scope == "game" and f.id == "players":
        return PLAYERS_DATA
    return data_code(f.type, decl, "v", 2 if scope == "player" else 0)


def param_code(f: StateField, name: str, annotation: str) -> tuple[str, str]:
    """The parameter of `__init__` for a field and the value it assigns: a mutable default is
    None in the signature and a fresh value in the body (as `default_factory` makes it)."""
    if f.required:
        return f"{name}: {annotation}", name
    value: Any = f.default
    if isinstance(value, list | dict):
        fresh = fmt(value, 0, col=80) if value else ("[]" if isinstance(value, list) else "{}")
        if "\n" in fresh:
            raise ValueError(f"the default of {name} is too long for one line")
        optional = annotation if annotation.endswith("| None") else f"{annotation} | None"
        return f"{name}: {optional} = None", f"{fresh} if {name} is None else {name}"
    return f"{name}: {annotation} = {literal(value)}", name


def _call(pad: str, head: str, args: list[str]) -> list[str]:
    """`head(arg, ...)` laid out as ruff writes it (one line, or the arguments on their own)."""
    return wrap_line(f"{pad}{head}({', '.join(args)})")


# The game's rule set, resolved once per state (`Game.rs`): kept in two slots that are not
# fields (not saved, not compared), with the variants it was resolved for; and the log of what
# happened of a game that records (`record`, `events`), shared by copies, never changed; and the
# journal of a move being tried in place (`_tried`), None otherwise and in every copy.
RS_SLOTS = ("_log", "_rs", "_rs_of", "_undo")


def class_methods(cls: str, fields: list[FieldView], deep_players: bool) -> list[str]:
    """The methods of a state class, one line each, indented in the class (the game's, with
    `deep_players`, also keep its rule set: RS_SLOTS)."""
    pad = "        "
    params = ", ".join(["self", *[f.param for f in fields]])
    out = wrap_line(f"    def __init__({params}) -> None:")
    for f in fields:
        out += wrap_line(f"{pad}self.{f.name} = {f.init}")
    if deep_players:
        # not resolved yet (None: no list made and thrown away by every copy, which sets both)
        out += [
            f"{pad}self._rs: RuleSet | None = None",
            f"{pad}self._rs_of: list[str] | None = None",
            f"{pad}self._log = None",
            f"{pad}self._undo = None",
        ]
    keep = [
        f"{pad}c._rs = self._rs",
        f"{pad}c._rs_of = self._rs_of",
        f"{pad}c._log = self._log",
        f"{pad}return c",
    ]
    out += [
        "",
        f"    def _copy(self) -> {cls}:",
        f'{pad}"""A shallow copy: every field is shared with this one."""',
    ]
    made = [f"self.{f.name}" for f in fields]
    out += _call(pad, "c = " + cls if deep_players else f"return {cls}", made)
    out += keep if deep_players else []
    doc = (
        "A deep copy, fast enough for the move generator."
        if deep_players
        else "A copy that shares nothing mutable with this one."
    )
    out += ["", f"    def clone(self) -> {cls}:", f'{pad}"""{doc}"""']
    made = [f.copy or f"self.{f.name}" for f in fields]
    out += _call(pad, "c = " + cls if deep_players else f"return {cls}", made)
    out += keep if deep_players else []
    if deep_players:
        out += [
            "",
            f"    def _take(self, c: {cls}) -> None:",
            f'{pad}"""Every field set to `c`\'s (shared, not copied): the fields a move tried in',
            f'{pad}place (`_tried`) set, put back from the shallow copy taken before it."""',
            *[f"{pad}self.{f.name} = c.{f.name}" for f in fields],
        ]
    out += [
        "",
        "    def __eq__(self, other: object) -> bool:",
        f"{pad}if type(other) is not {cls}:",
        f"{pad}    return NotImplemented",
    ]
    tests = [f"self.{f.name} == other.{f.name}" for f in fields]
    one = f"{pad}return " + " and ".join(tests)
    if len(one) <= 100:
        out.append(one)
    else:
        out += [
            f"{pad}return (",
            f"{pad}    {tests[0]}",
            *[f"{pad}    and {t}" for t in tests[1:]],
            f"{pad})",
        ]
    out += ["", "    def __repr__(self) -> str:"]
    out += wrap_line(f'{pad}return f"{cls}({{_fields_repr(self, _{cls.upper()}_FIELDS)}})"')
    return out


def _comments(text: str) -> list[str]:
    words = " ".join(text.split()).split(" ")
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > COMMENT_WIDTH:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    if cur:
        lines.append(cur)
    return [py_comment(line) for line in lines]


def state_classes(decl: StateDecl) -> dict[str, ClassView]:
    """The views of `Player` and `Game`, by scope."""
    out: dict[str, ClassView] = {}
    for scope, name in CLASSES.items():
        view = ClassView(name)
        for f in decl.fields(scope):
            # the code below is written in the class, about `self`
            fid = identifier(f.id)
            ann = annotation(f.type, decl)
            param, init = param_code(f, fid, ann)
            view.fields.append(
                FieldView(
                    fid,
                    ann,
                    _comments(f.text),
                    copy_code(f.type, f"self.{fid}"),
                    param,
                    init,
                    field_data(scope, f, decl),
                )
            )
        out[scope] = view
    return out


def value_class(
    cls: str, fields: list[tuple[str, str, str | None]], names: str, code: bool = False
) -> str:
    """`__init__`, `__eq__`, `__hash__` and `__repr__` of an immutable value class (`Move`,
    `Ctx`) whose fields are (name, annotation, default or None: required), as a frozen
    dataclass would have them; `names` is the code of the tuple of the field names. With
    `code`, also `_code`: the fields as one tuple (a move's code, as the generators make it)."""
    pad = "        "
    params = ", ".join(
        ["self", *[f"{n}: {a}" + ("" if d is None else f" = {d}") for n, a, d in fields]]
    )
    out = wrap_line(f"    def __init__({params}) -> None:")
    out += [f"{pad}self.{n} = {n}" for n, _a, _d in fields] or [f"{pad}pass"]
    attrs = [f"self.{n}" for n, _a, _d in fields]
    if code and len(attrs) > 1:
        out += [
            "",
            "    def _code(self) -> tuple[Any, ...]:",
            f'{pad}"""Its fields as one tuple, in order: its code, as the move generators make',
            f'{pad}it (`{cls}(*code)` is the value again)."""',
        ]
        out += _call(pad, "return ", attrs)
    out += [
        "",
        "    def __eq__(self, other: object) -> bool:",
        f"{pad}if type(other) is not {cls}:",
        f"{pad}    return NotImplemented",
    ]
    tests = [f"self.{n} == other.{n}" for n, _a, _d in fields] or ["True"]
    one = f"{pad}return " + " and ".join(tests)
    if len(one) <= 100:
        out.append(one)
    else:
        out += [
            f"{pad}return (",
            f"{pad}    {tests[0]}",
            *[f"{pad}    and {t}" for t in tests[1:]],
            f"{pad})",
        ]
    values = ", ".join(f"self.{n}" for n, _a, _d in fields) + ("," if len(fields) == 1 else "")
    out += ["", "    def __hash__(self) -> int:"]
    out += wrap_line(f"{pad}return hash(({values}))")
    out += ["", "    def __repr__(self) -> str:"]
    out += wrap_line(f'{pad}return f"{cls}({{_fields_repr(self, {names})}})"')
    return "\n".join(out)
