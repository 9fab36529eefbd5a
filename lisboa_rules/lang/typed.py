"""The effect language's expressions: a typed subset of Python over the declared state.

Where the formula language (`expr.py`) reads numbers for costs and scores, these expressions
read and compare the state itself: the acting player's fields (`reis`, `player.hand`), the
game's (`game.favors[noble]`), locals of a procedure (`amount`, a chosen `business`), rows of
the rules' tables (`plan.officials`, `card.type`) and constants of the rules data
(`rules.game.rubble.cubes_per_set`). Allowed: whole numbers, true/false, text, `None`,
`+ - * //`, comparisons, `in` / `not in`, `is None`, `and` / `or` / `not`, `a if c else b`,
`x[i]`, `[]` and `{}` (an empty list or table), `len sum min max any all sorted`, and one-loop
comprehensions (`[b for b in businesses if stores[b] > 0]`).

Nothing is ever passed to `eval`: the checked tree is compiled to Python source for the
generated engine (`compile_expr`); the reference interpreter walks the same tree.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from lisboa_rules.core.limits import INT64_MAX
from lisboa_rules.core.pyexpr import parse_expr, syntax_slip
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import ANY as ANY
from lisboa_rules.ir.types import BOOL as BOOL
from lisboa_rules.ir.types import EFFECTS as EFFECTS
from lisboa_rules.ir.types import INT as INT
from lisboa_rules.ir.types import NONE as NONE
from lisboa_rules.ir.types import TEXT as TEXT
from lisboa_rules.ir.types import VType as VType
from lisboa_rules.ir.types import list_of as list_of

MAX_LENGTH = 600
MAX_DEPTH = 24
FUNCTIONS = ("len", "sum", "min", "max", "any", "all", "sorted", "reversed", "range", "first",
             "formula")


# the subject of an error that reads a field of a text value (a column of ids of a kind is
# text when one of them names nothing of it: pipeline.py drops what follows from that id)
READ_AS_TEXT = "read-as-text"
# the subject of an unknown name, with the name: (UNKNOWN_NAME, name)
UNKNOWN_NAME = "unknown-name"


class ExprError(Exception):
    """An expression that does not parse or type-check; `col` is 0-based in its source."""

    def __init__(self, code: str, message: str, col: int = 0,
                 suggestion: str | Callable[[], str | None] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.col = col
        # the error follows from one said where the rules data is written (an action's
        # `cost:` naming no cost, read by `cost(this.cost)`): refused, but not said again
        self.follows = False
        # what it is about, for a pass that reads it (carried to its Diagnostic's `subject`):
        # READ_AS_TEXT, a field read of a value that is text; UNKNOWN_NAME and the name
        self.subject: tuple[str, ...] = ()
        # a suggestion may be given as the function that finds it: many errors are caught
        # and dropped (a reading tried before another), and difflib is not free
        self._suggestion = suggestion

    @property
    def suggestion(self) -> str | None:
        if callable(self._suggestion):
            self._suggestion = self._suggestion()
        return self._suggestion


@dataclass(frozen=True)
class Name:
    """What a name means: its type and what it reads (an IR expression)."""

    type: VType
    ref: ir.Expr
    lo: int | None = None  # the declared bounds of an int field (for clamping writes)
    hi: int | None = None
    field: str | None = None  # "player.X" / "game.X" for a state field
    const: bool = False  # a constant of the rules: read, never written


@dataclass
class Scope:
    """Everything an expression may name. `int_kinds` are the kinds whose ids are ints (the
    others are text); `tables[kind][field]` the readable columns of a kind's rows, as
    (type, the id of the table of their values: model/procs.py `Tables`); `data(path)` a
    constant of the rules data (or raises KeyError)."""

    locals: dict[str, Name] = field(default_factory=dict)
    player: dict[str, Name] = field(default_factory=dict)
    game: dict[str, Name] = field(default_factory=dict)
    measures: dict[str, Name] = field(default_factory=dict)
    tables: dict[str, dict[str, tuple[VType, str]]] = field(default_factory=dict)
    int_kinds: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    data: Callable[[tuple[str, ...]], Any] | None = None
    this: Callable[[tuple[str, ...]], Any] | None = None  # the procedure's own row (`this.x`)
    # a formula of the rules data (`formula(rules.components.shipyard.per_color)`) as code
    formula: Callable[[str], Typed] | None = None
    kind_values: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # declared order
    kind_ids: dict[str, frozenset[Any]] = field(default_factory=dict)  # every id of a kind
    # each kind's words (`text:` in rules/state.yaml: "a State action"), for a refusal that
    # names a compulsory choice left empty
    kind_words: dict[str, str] = field(default_factory=dict)
    # the costs of the rules data (`cost('visit-cost', other_officials=n)`) and the context
    # values a cost may be given
    kind_sources: dict[tuple[str, ...], str] = field(default_factory=dict)  # rows' ids -> kind
    costs: frozenset[str] = frozenset()
    contexts: frozenset[str] = frozenset()
    # the player fields with no default: a `new` step must give them
    required: frozenset[str] = frozenset()
    # the declared `max_items` of the lists of the state (`player.hand`, `game.players`)
    items: dict[str, int] = field(default_factory=dict)
    # of those, the lists that declare a max_items (a bound the language enforces at writes)
    max_items: dict[str, int] = field(default_factory=dict)
    # other words a designer may write for a name (`aka:` in rules/vocabulary.yaml): word ->
    # the names it may mean, for the suggestion of an unknown name
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def suggest(self, word: str, candidates: list[str]) -> str | None:
        """The name to write for an unknown `word`: one it is another word for (money ->
        reis), else the closest in spelling."""
        for name in self.synonyms.get(word.lower(), ()):
            if name in candidates:
                return name
        return closest(word, candidates)

    def keys(self, src: Typed) -> ir.Keys:
        """Going through a list, or through a table's keys in the order their kind declares
        (not the order of the JSON a game was saved in)."""
        if src.type.name != "map":
            return ir.Keys(src.node, False)
        values = self.kind_values.get(src.type.args[0].name)
        return ir.Keys(src.node, True, None if values is None else tuple(values),
                       src.type.full)

    def typed(self, node: ir.Expr, t: VType, place: Name | None = None) -> Typed:
        """A checked expression of this scope."""
        return Typed(node, t, place)

    def with_locals(self, /, **names: Name) -> Scope:
        # replace(self, locals=...) without its walk over the fields: a Scope has no
        # __post_init__, so a copy of its fields is the same object replace would make
        if type(self) is not Scope:
            return replace(self, locals={**self.locals, **names})
        new = object.__new__(Scope)
        new.__dict__.update(self.__dict__)
        new.locals = {**self.locals, **names}
        return new

    def all_names(self) -> list[str]:
        return [*self.locals, *self.player, *self.game, *self.measures, "player", "game", "rules"]


def source_literal(value: str) -> str:
    """A text written as a literal of the effect language (whose expressions Python's parser
    reads: a steps' expression made by the compiler, as `'x' not in game.flags`)."""
    return repr(value)


@dataclass(frozen=True)
class Typed:
    """A checked expression: its IR node and type."""

    node: ir.Expr
    type: VType
    place: Name | None = None  # set when the expression is a state field or an entry of one


def constant(value: int | bool | str | None) -> Typed:
    """A whole number, true/false, a text or None as a checked expression."""
    node = ir.Lit(value)
    t = NONE if value is None else BOOL if isinstance(value, bool) else \
        INT if isinstance(value, int) else TEXT
    return Typed(node, t)


def parse(source: str) -> ast.expr:
    text = source.strip() if isinstance(source, str) else ""
    if not isinstance(source, str) or len(source) > MAX_LENGTH:
        raise ExprError("expr-syntax", f"an expression is text of at most {MAX_LENGTH} characters")
    try:
        tree = parse_expr(text)
    except SyntaxError as exc:
        col = max((exc.offset or 1) - 1, 0)
        msg = exc.msg
        slip = syntax_slip(text)
        if slip is not None:
            msg, col = slip
        raise ExprError("expr-syntax", f"expression does not parse: {msg}", col) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ExprError("expr-syntax", f"expression does not parse: {exc}") from None
    return tree.body


def check(source: str | int | bool | None, scope: Scope, want: VType | None = None) -> Typed:
    """Parse and type-check an expression (a YAML number or true/false is one too)."""
    if source is None or isinstance(source, int):
        t = constant(source)
    else:
        t = _Checker(scope).expr(parse(source), 0)
    if want is not None and not compatible(t.type, want, scope.int_kinds):
        raise ExprError("expr-type", f"'{source}' is {describe(t.type)}, expected {describe(want)}")
    return t


def describe(t: VType) -> str:
    if t.name == "int":
        base = "a number"
    elif t.name == "bool":
        base = "a condition (true or false)"
    elif t.name == "text":
        base = "text"
    elif t.name == "none":
        return "None"
    elif t.name == "list":
        base = f"a list of {describe(t.args[0]).removeprefix('a ').removeprefix('an ')}"
    elif t.name == "map":
        base = f"a table by {t.args[0].name}"
    else:
        base = f"a {t.name}"
    return base + (" or None" if t.optional else "")


def _numeric(t: VType, int_kinds: frozenset[str]) -> bool:
    return not t.optional and (t.name in ("int", "seat") or t.name in int_kinds)


def compatible(got: VType, want: VType, int_kinds: frozenset[str] = frozenset()) -> bool:
    """Whether a value of type `got` may stand where `want` is expected. Ids are nominal only
    between numbers and text: a kind of text ids and text mix, as do int kinds and ints."""
    if got.name == "any":
        return True
    if got.name == "none":
        return want.optional or want.name == "none"
    if got.optional and not want.optional:
        return False
    if got.name in ("list", "map") or want.name in ("list", "map"):
        return (
            got.name == want.name
            and len(got.args) == len(want.args)
            and all(compatible(a, b, int_kinds) for a, b in zip(got.args, want.args, strict=True))
        )
    return _family(got, int_kinds) == _family(want, int_kinds)


def _family(t: VType, int_kinds: frozenset[str]) -> str:
    if t.name in ("int", "seat") or t.name in int_kinds:
        return "int"
    if t.name in ("bool", "player"):
        return t.name
    return "text"


def closest(word: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


_BIN: dict[type[ast.operator], ir.BinOpName] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMP: dict[type[ast.cmpop], ir.CmpOpName] = {
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def unknown_id(scope: Scope, t: VType, value: ir.Expr) -> tuple[str, str | None] | None:
    """When `value` is an id written in the rules (a text) that is none of the kind `t`'s
    ids: what to say of it, and the nearest id; else None."""
    ids = scope.kind_ids.get(t.name)
    if ids is None or not (isinstance(value, ir.Lit) and isinstance(value.value, str)) \
            or value.value in ids:
        return None
    known = sorted(str(i) for i in ids)
    words = scope.kind_words.get(t.name) or f"a {t.name}"
    return (f"'{value.value}' is not {words}: one of {', '.join(known[:12])}"
            f"{', …' if len(known) > 12 else ''}", closest(value.value, known))


class _Checker:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.ik = scope.int_kinds

    def fail(self, node: ast.AST, message: str, code: str = "expr-type",
             suggestion: str | Callable[[], str | None] | None = None) -> ExprError:
        return ExprError(code, message, getattr(node, "col_offset", 0), suggestion)

    def expr(self, node: ast.expr, depth: int) -> Typed:
        if depth > MAX_DEPTH:
            raise self.fail(node, "expression is nested too deeply", "expr-syntax")
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, int) and not isinstance(v, bool) and v > INT64_MAX:
                raise self.fail(node, f"{v} is beyond what a game holds: a whole number from "
                                "-2**63 to 2**63 - 1 (a saved game's 64 bits)",
                                "value-out-of-range")
            if v is None or isinstance(v, int | str):
                return constant(v)
            raise self.fail(node, f"{v!r} is not a value of the effect language")
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, d)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, d)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            a, b = self.num(node.left, d), self.num(node.right, d)
            return self.t(ir.BinOp(_BIN[type(node.op)], a.node, b.node), INT)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.t(ir.Neg(self.num(node.operand, d).node), INT)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.t(ir.Not(self.cond(node.operand, d).node), BOOL)
        if isinstance(node, ast.BoolOp):
            op: Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
            parts: list[ir.Expr] = []
            checker = self
            for part in node.values:  # `x is not None and x.y`: the right side knows x is set
                parts.append(checker.cond(part, d).node)  # (`x is None or x.y` too)
                checker = _Checker(narrow(checker.scope, part, isinstance(node.op, ast.Or)))
            # a constant of the rules folded: `x or True` is True, `x and True` is x
            absorb = op == "or"
            if any(ir.truth(p) is absorb for p in parts):
                return constant(absorb)
            parts = [p for p in parts if ir.truth(p) is not (not absorb)]
            if not parts:
                return constant(not absorb)
            if len(parts) == 1:
                return self.t(parts[0], BOOL)
            return self.t(ir.BoolOp(op, tuple(parts)), BOOL)
        if isinstance(node, ast.Compare):
            return self.compare(node, d)
        if isinstance(node, ast.IfExp):
            c = self.cond(node.test, d)
            a = _Checker(narrow(self.scope, node.test)).expr(node.body, d)
            b = _Checker(narrow(self.scope, node.test, True)).expr(node.orelse, d)
            t = a.type if a.type.name != "none" else replace(b.type, optional=True)
            if b.type.name == "none":
                t = replace(a.type, optional=True)
            elif not (compatible(a.type, b.type, self.ik) or compatible(b.type, a.type, self.ik)):
                raise self.fail(node, f"the two branches of '{ast.unparse(node)}' differ: "
                                f"{describe(a.type)} and {describe(b.type)}")
            return self.t(ir.Cond(c.node, a.node, b.node), t)
        if isinstance(node, ast.Call):
            return self.call(node, d)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self.comprehension(node, d)
        if isinstance(node, ast.List):
            items = [self.expr(e, d) for e in node.elts]
            t = items[0].type if items else VType("any")  # an empty list fits any list
            for it in items[1:]:
                if not compatible(it.type, t, self.ik):
                    raise self.fail(node, "the items of a list have one type")
            return self.t(ir.ListOf(tuple(i.node for i in items)), list_of(t))
        if isinstance(node, ast.Dict) and not node.keys:  # an empty table fits any table
            return self.t(ir.EmptyTable(), VType("map", (ANY, ANY)))
        raise self.fail(node, f"'{ast.unparse(node)}' is not allowed in an expression",
                        "expr-syntax")

    # -- helpers ------------------------------------------------------------------------

    def t(self, node: ir.Expr, t: VType, place: Name | None = None) -> Typed:
        return self.scope.typed(node, t, place)

    def num(self, node: ast.expr, depth: int) -> Typed:
        t = self.expr(node, depth)
        if not _numeric(t.type, self.ik):
            raise self.fail(node, f"'{ast.unparse(node)}' is {describe(t.type)}, expected a number")
        return t

    def cond(self, node: ast.expr, depth: int) -> Typed:
        t = self.expr(node, depth)
        if t.type != BOOL:
            raise self.fail(node, f"'{ast.unparse(node)}' is {describe(t.type)}, "
                            "expected a condition (true or false)")
        return t

    def name(self, node: ast.Name) -> Typed:
        s = self.scope
        n = node.id
        if n in s.locals:
            local = s.locals[n]
            return self.t(local.ref, local.type, None if local.const else local)
        if n in s.player:
            return self.t(s.player[n].ref, s.player[n].type, s.player[n])
        if n in s.game:
            return self.t(s.game[n].ref, s.game[n].type, s.game[n])
        if n in s.measures:
            return self.t(s.measures[n].ref, s.measures[n].type)
        if n == "player":
            return self.t(ir.Me(), VType("player"))
        names = s.all_names()  # the names now (a scope's measures are added one by one)
        exc = self.fail(node, f"unknown name '{n}'", "unknown-name",
                        lambda: s.suggest(n, names))
        exc.subject = (UNKNOWN_NAME, n)
        raise exc

    def attribute(self, node: ast.Attribute, depth: int) -> Typed:
        path = _dotted(node)
        s = self.scope
        if path and path[0] == "rules":
            return self.constant(node, tuple(path[1:]), s.data, "rules")
        if path and path[0] == "this" and "this" not in s.locals:
            return self.constant(node, tuple(path[1:]), s.this, "this")
        if path and path[0] == "game" and len(path) == 2 and "game" not in s.locals:
            f = s.game.get(path[1])
            if f is None:
                raise self.fail(node, f"the game has no field '{path[1]}'", "unknown-name",
                                s.suggest(path[1], list(s.game)))
            return self.t(f.ref, f.type, f)
        base = self.expr(node.value, depth)
        if base.type.name == "player" and not base.type.optional:
            f = s.player.get(node.attr)
            if f is None:
                raise self.fail(node, f"a player has no field '{node.attr}'", "unknown-name",
                                s.suggest(node.attr, list(s.player)))
            ref = f.ref
            if isinstance(ref, ir.PlayerField):
                ref = replace(ref, of=base.node)
            return self.t(ref, f.type, f)
        columns = s.tables.get(base.type.name)
        if columns is not None and not base.type.optional:
            col = columns.get(node.attr)
            if col is None:
                raise self.fail(node, f"a {base.type.name} has no '{node.attr}'", "unknown-name",
                                closest(node.attr, list(columns)))
            return self.t(ir.Column(base.type.name, node.attr, base.node), col[0])
        if base.type.optional and (node.attr in (columns or {}) or (
                base.type.name == "player" and node.attr in s.player)):
            name = ast.unparse(node.value)
            tip = (f"test '{name} is not None and ...' (or '{name} is None or ...') first, or "
                   f"read it in an if: {name} is not None" if isinstance(node.value, ast.Name)
                   else "let a name be it, and test 'NAME is not None and ...' first")
            raise self.fail(node, f"{describe(base.type)} has no '{node.attr}': '{name}' may be "
                            f"None; {tip}")
        exc = self.fail(node, f"{describe(base.type)} has no '{node.attr}'")
        if base.type.name == "text":
            exc.subject = (READ_AS_TEXT,)
        raise exc

    def constant(self, node: ast.expr, path: tuple[str, ...],
                 lookup: Callable[[tuple[str, ...]], Any] | None, root: str) -> Typed:
        if lookup is None:
            raise self.fail(node, f"'{root}' names nothing here", "unknown-name")
        try:
            value = lookup(path)
        except KeyError as exc:
            raise self.fail(node, f"'{root}.{'.'.join(path)}' names no value in the rules data "
                            f"({exc.args[0] if exc.args else ''})", "unknown-name") from None
        t = _type_of(value)
        kind = self.scope.kind_sources.get(path) if root == "rules" else None
        if kind is not None and t.name == "list":  # the ids of a kind's rows are of that kind
            t = list_of(VType(kind))
        return self.t(ir.Data(value, (root, *path)), t)

    def subscript(self, node: ast.Subscript, depth: int) -> Typed:
        base = self.expr(node.value, depth)
        key = self.expr(node.slice, depth)
        t = base.type
        if t.optional:
            raise self.fail(node, f"'{ast.unparse(node.value)}' may be None")
        if t.name == "list":
            if not _numeric(key.type, self.ik) or key.type.name not in ("int", "seat"):
                raise self.fail(node.slice, "a list is indexed by a number")
            return self.t(ir.Index(base.node, key.node, key.type.name != "seat"), t.args[0])
        if t.name == "map":
            if not compatible(key.type, t.args[0], self.ik):
                raise self.fail(node.slice, f"'{ast.unparse(node.value)}' is indexed by "
                                f"{describe(t.args[0])}, not {describe(key.type)}")
            self.known_id(t.args[0], key.node, node.slice)
            place = None
            if base.place is not None:
                ref = ir.Index(base.node, key.node)
                place = replace(base.place, type=t.args[1], ref=ref)
            if t.full:
                return self.t(ir.Index(base.node, key.node), t.args[1], place)
            default = _default(t.args[1], self.ik)
            return self.t(ir.Get(base.node, key.node, default), t.args[1], place)
        raise self.fail(node, f"{describe(t)} cannot be indexed")

    def known_id(self, t: VType, value: ir.Expr, node: ast.expr) -> None:
        """An id written in the rules (a text) where a value of the kind `t` is compared,
        looked for or looked up: one of the kind's ids, else `unknown-reference` at it (the
        comparison could never hold, the key never be found: a misspelt id)."""
        found = unknown_id(self.scope, t, value)
        if found is not None:
            raise self.fail(node, found[0], "unknown-reference", found[1])

    def compare(self, node: ast.Compare, depth: int) -> Typed:
        pairs: list[tuple[ir.CmpOpName, ir.Expr]] = []
        first = left = self.expr(node.left, depth)
        left_node = node.left
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.expr(right_node, depth)
            sym = _CMP.get(type(op))
            if sym is None:
                raise self.fail(node, "unknown comparison", "expr-syntax")
            if sym in ("in", "not in"):
                if right.type.name not in ("list", "map"):
                    raise self.fail(right_node, f"'{ast.unparse(right_node)}' is "
                                    f"{describe(right.type)}, not a list or a table")
                item = right.type.args[0]
                if not compatible(left.type, replace(item, optional=True), self.ik):
                    raise self.fail(node, f"{describe(left.type)} is never in "
                                    f"{describe(right.type)}")
                self.known_id(item, left.node, left_node)
                if isinstance(right.node, ir.ListOf) and isinstance(right_node, ast.List):
                    for value, at in zip(right.node.items, right_node.elts, strict=True):
                        self.known_id(left.type, value, at)
            elif sym in ("is", "is not"):
                if right.type.name != "none":
                    raise self.fail(node, "'is' and 'is not' compare with None only")
                if not left.type.optional:
                    raise self.fail(node, f"'{ast.unparse(node.left)}' is never None")
            elif sym in ("==", "!="):
                ok = compatible(left.type, replace(right.type, optional=True), self.ik) or \
                    compatible(right.type, replace(left.type, optional=True), self.ik)
                if not ok:
                    raise self.fail(node, f"{describe(left.type)} and {describe(right.type)} "
                                    "never compare equal")
                for a, b, b_node in ((left, right, right_node), (right, left, left_node)):
                    self.known_id(a.type, b.node, b_node)
                    if a.type.name == "list" and isinstance(b.node, ir.ListOf) \
                            and isinstance(b_node, ast.List):  # a list of ids, written out
                        for value, at in zip(b.node.items, b_node.elts, strict=True):
                            self.known_id(a.type.args[0], value, at)
            else:
                for side, n in ((left, node.left), (right, right_node)):
                    if not _numeric(side.type, self.ik):
                        raise self.fail(n, f"'{ast.unparse(n)}' is {describe(side.type)}, "
                                        "expected a number")
            pairs.append((sym, right.node))
            left, left_node = right, right_node
        return self.t(ir.Compare(first.node, tuple(pairs)), BOOL)

    def call(self, node: ast.Call, depth: int) -> Typed:
        if isinstance(node.func, ast.Name) and node.func.id in self.scope.kinds \
                and node.func.id not in FUNCTIONS:
            # `noble(card.type)`: a text read as an id of a kind, so that its rows can be read
            if len(node.args) != 1 or node.keywords:
                raise self.fail(node, f"{node.func.id}() takes one value", "expr-syntax")
            arg = self.expr(node.args[0], depth)
            if _family(arg.type, self.ik) != _family(VType(node.func.id), self.ik):
                raise self.fail(node, f"'{ast.unparse(node.args[0])}' is {describe(arg.type)}, "
                                f"not {node.func.id} ids")
            ids = self.scope.kind_ids.get(node.func.id)
            if ids is not None and isinstance(arg.node, ir.Lit | ir.Data) \
                    and isinstance(arg.node.value, str | int) and arg.node.value not in ids:
                # an id written in the rules that no row has: every state would fail on it
                known = sorted(str(i) for i in ids)
                raise self.fail(node.args[0], f"'{arg.node.value}' is no {node.func.id} of the "
                                f"rules (they are {', '.join(known[:12])}"
                                f"{', …' if len(known) > 12 else ''})", "unknown-reference",
                                closest(str(arg.node.value), known))
            return self.t(arg.node, VType(node.func.id, (), arg.type.optional))
        if isinstance(node.func, ast.Name) and node.func.id == "cost":
            return self.cost(node, depth)
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise self.fail(node, f"unknown function '{name}'", "unknown-name",
                            closest(name, list(FUNCTIONS)))
        if node.keywords:
            if [k.arg for k in node.keywords] != ["default"] or len(node.args) != 1 \
                    or node.func.id not in ("first", "min", "max"):
                raise self.fail(node, f"{node.func.id}() takes no keywords but first(xs, "
                                "default=...), min(...) and max(...)", "expr-syntax")
            node = ast.copy_location(
                ast.Call(node.func, [*node.args, node.keywords[0].value], []), node)
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name == "formula":
            path = _dotted(node.args[0]) if len(node.args) == 1 else None
            if path is None or path[0] != "rules" or self.scope.formula is None:
                raise self.fail(node, "formula() takes a formula of the rules data, as in "
                                "formula(rules.components.shipyard.per_color)")
            source = self.constant(node.args[0], tuple(path[1:]), self.scope.data, "rules")
            text = source.node.value if isinstance(source.node, ir.Data) else None
            if not isinstance(text, str):
                raise self.fail(node, f"'{ast.unparse(node.args[0])}' is not a formula")
            try:
                return self.scope.formula(text)
            except ExprError as exc:
                raise self.fail(node, f"the formula '{text}': {exc.message}") from None
        fn = cast(ir.Function, name)
        args = [self.expr(a, depth) for a in node.args]
        if fn in ("first", "min", "max") and len(args) == 2 \
                and args[0].type.name in ("list", "map"):
            return self.defaulted(node, fn, args)
        if fn in ("min", "max") and len(args) >= 2:
            for a, n in zip(args, node.args, strict=True):
                if not _numeric(a.type, self.ik):
                    raise self.fail(n, f"{fn}() compares numbers")
            return self.t(ir.Call(fn, tuple(a.node for a in args)), INT)
        if len(args) != 1:
            raise self.fail(node, f"{fn}() takes one value", "expr-syntax")
        a = args[0]
        t = a.type
        if fn == "len":
            if t.name not in ("list", "map"):
                raise self.fail(node, f"len() counts a list or a table, not {describe(t)}")
            return self.t(ir.Call(fn, (a.node,)), INT)
        if fn in ("sum", "min", "max"):
            if t.name == "map" and _numeric(t.args[1], self.ik):
                return self.t(ir.Call(fn, (ir.Values(a.node),)), INT)
            if t.name == "list" and _numeric(t.args[0], self.ik):
                return self.t(ir.Call(fn, (a.node,)), INT)
            raise self.fail(node, f"{fn}() needs a list of numbers, not {describe(t)}")
        if fn in ("any", "all"):
            if t.name == "list" and t.args[0] == BOOL:
                return self.t(ir.Call(fn, (a.node,)), BOOL)
            raise self.fail(node, f"{fn}() needs a list of conditions, not {describe(t)}")
        if fn == "range":
            if not _numeric(t, self.ik):
                raise self.fail(node, f"range() counts up to a number, not {describe(t)}")
            return self.t(ir.Call(fn, (a.node,)), list_of(INT))
        if t.name != "list":
            raise self.fail(node, f"{fn}() needs a list, not {describe(t)}")
        if fn == "reversed":
            return self.t(ir.Call(fn, (a.node,)), t)
        if fn == "first":  # the first item of a non-empty list
            return self.t(ir.Call(fn, (a.node,)), t.args[0])
        return self.t(ir.Call("sorted", (a.node,)), t)

    def defaulted(self, node: ast.Call, fn: str, args: list[Typed]) -> Typed:
        """`first(xs, d)`, `min(xs, d)`, `max(xs, d)`: of a list (or a table's values) and
        the default an empty one gives; total where the one-argument forms are not."""
        xs, d = args
        t = xs.type
        source = ir.Values(xs.node) if t.name == "map" else xs.node
        item = t.args[-1]
        if fn != "first" and not _numeric(item, self.ik):
            raise self.fail(node, f"{fn}() needs a list of numbers, not {describe(t)}")
        if fn != "first" and not _numeric(d.type, self.ik):
            raise self.fail(node.args[1], f"the default of {fn}() is a number, not "
                            f"{describe(d.type)}")
        if fn == "first" and t.name != "list":
            raise self.fail(node, f"first() needs a list, not {describe(t)}")
        if fn == "first" and not compatible(d.type, item, self.ik) \
                and d.type.name != "none":
            raise self.fail(node.args[1], f"the default of first() is {describe(item)} as the "
                            f"items are, not {describe(d.type)}")
        out = item if fn == "first" and d.type.name != "none" else \
            replace(item, optional=True) if fn == "first" else INT
        return self.t(ir.Call(cast(ir.Function, f"{fn}_or"), (source, d.node)), out)

    def cost(self, node: ast.Call, depth: int) -> Typed:
        """`cost('visit-cost', other_officials=n)`: a cost of the rules data (rules/court.yaml),
        for the acting player, with the context values its formula reads; the id written, or
        named by the rules data (`cost(this.cost)`: an action's own cost), which the IR keeps
        (`Cost.via`: what the steps read)."""
        arg = node.args[0] if len(node.args) == 1 else None
        path = _dotted(arg) if arg is not None else None
        via: tuple[str, ...] = ()
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            cid = arg.value
        elif arg is not None and path is not None and path[0] in ("this", "rules") \
                and path[0] not in self.scope.locals:
            named = self.constant(arg, tuple(path[1:]),
                                  self.scope.this if path[0] == "this" else self.scope.data,
                                  path[0])
            if not isinstance(named.node, ir.Data) or not isinstance(named.node.value, str):
                raise self.fail(arg, f"'{ast.unparse(arg)}' names no cost (it is "
                                f"{describe(named.type)})", "expr-type")
            cid, via = named.node.value, named.node.path
        else:
            raise self.fail(node, "cost() takes the id of a cost, as in cost('sponsor-cost'), "
                            "or the rules data that names one, as in cost(this.cost)",
                            "expr-syntax")
        if cid not in self.scope.costs:
            exc = self.fail(node, f"no cost '{cid}'", "unknown-reference",
                            closest(cid, sorted(self.scope.costs)))
            # an action's cost named by its data: refused there (model/checks.py)
            exc.follows = via[-1:] in (("cost",), ("lacking_cost",))
            raise exc
        given: list[tuple[str, ir.Expr]] = []
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in self.scope.contexts:
                raise self.fail(node, f"a cost is given {', '.join(sorted(self.scope.contexts))}"
                                f", not '{kw.arg}'", "unknown-name",
                                closest(str(kw.arg), sorted(self.scope.contexts)))
            value = self.expr(kw.value, depth)
            if not _numeric(value.type, self.ik):
                raise self.fail(kw.value, f"'{ast.unparse(kw.value)}' is not a number")
            given.append((kw.arg, value.node))
        return self.t(ir.Cost(cid, tuple(given), via), INT)

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp, depth: int) -> Typed:
        if len(node.generators) != 1:
            raise self.fail(node, "a comprehension has one 'for'", "expr-syntax")
        gen = node.generators[0]
        if not isinstance(gen.target, ast.Name) or gen.is_async:
            raise self.fail(node, "a comprehension's 'for' names one variable", "expr-syntax")
        source = self.expr(gen.iter, depth)
        if source.type.name not in ("list", "map") or source.type.optional:
            raise self.fail(gen.iter, f"'{ast.unparse(gen.iter)}' is {describe(source.type)}, "
                            "not a list or a table")
        var = gen.target.id
        inner = _Checker(self.scope.with_locals(
            **{var: Name(source.type.args[0], ir.Local(var))}))
        conds = tuple(inner.cond(c, depth + 1).node for c in gen.ifs)
        elt = inner.expr(node.elt, depth + 1)
        return self.t(ir.Comp(elt.node, var, self.scope.keys(source), conds), list_of(elt.type))


def _dotted(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _type_of(value: Any) -> VType:
    if isinstance(value, Mapping):
        items = list(value.values())
        return VType("map", (TEXT, _type_of(items[0]) if items else INT))
    if value is None:
        return NONE
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list):
        return list_of(_type_of(value[0]) if value else INT)
    raise KeyError("not a number, a text or a list of them")


def _default(t: VType, int_kinds: frozenset[str] = frozenset()) -> ir.Expr:
    """What a table that may not hold a key reads for it."""
    if t.optional:
        return ir.Lit(None)
    if t.name == "list":
        return ir.ListOf(())
    if t.name == "map":
        return ir.EmptyTable()
    if t.name == "bool":
        return ir.Lit(False)
    if t.name in ("int", "seat") or t.name in int_kinds:
        return ir.Lit(0)
    return ir.Lit("")


def narrow(scope: Scope, node: ast.expr, false: bool = False) -> Scope:
    """The scope where the locals a condition proves not None are known to be set (with
    `false`, where it does not hold: `x is None` false proves x set)."""
    return _set(scope, _not_none(node, ast.Is if false else ast.IsNot))


def _set(scope: Scope, names: list[str]) -> Scope:
    """The scope where the locals `names` are known not to be None."""
    found = {n: replace(scope.locals[n], type=replace(scope.locals[n].type, optional=False))
             for n in names if n in scope.locals}
    return scope.with_locals(**found) if found else scope


def _not_none(node: ast.expr, op: type[ast.cmpop] = ast.IsNot) -> list[str]:
    """The names `x` of the parts `x is not None` of a condition that holds (with `op` Is:
    of the parts `x is None` of a condition that does not hold)."""
    joined = ast.And if op is ast.IsNot else ast.Or
    parts = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, joined) else [node]
    out = []
    for part in parts:
        if (isinstance(part, ast.Compare) and len(part.ops) == 1
                and isinstance(part.ops[0], op) and isinstance(part.left, ast.Name)
                and isinstance(part.comparators[0], ast.Constant)
                and part.comparators[0].value is None):
            out.append(part.left.id)
    return out


def narrowed_else(source: Any) -> list[str]:
    """The names a condition proves not None when it does not hold (`x is None or ...`): an
    `if` narrows them in its `else` steps."""
    return _not_none_in(source, ast.Is)


def narrowed(source: Any) -> list[str]:
    """The names a condition proves not None (`x is not None and ...`): an `if` narrows them
    in its `then` steps."""
    return _not_none_in(source, ast.IsNot)


def _not_none_in(source: Any, op: type[ast.cmpop]) -> list[str]:
    """`_not_none` of a condition's text (none for one that does not parse)."""
    if not isinstance(source, str):
        return []
    try:
        return _not_none(parse(source), op)
    except ExprError:
        return []


def narrowed_scope(scope: Scope, source: Any, false: bool = False) -> Scope:
    """`narrow` of a condition's text: the scope of an if's then steps (with `false`, of its
    else steps)."""
    return _set(scope, narrowed_else(source) if false else narrowed(source))


def data_lookup(data: Mapping[str, Any], root: str = "rules") -> Callable[[tuple[str, ...]], Any]:
    """`rules.DOC.path` constants from the merged documents (or `this.x` from a procedure's
    own row, with `root` "this"): a path through a list of rows gives the list of their
    values; a row is found by its `id` (`rules.nobles.nobles.king`)."""

    def lookup(path: tuple[str, ...]) -> Any:
        node: Any = data
        for i, key in enumerate(path):
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and any(
                isinstance(r, Mapping) and r.get("id") == key for r in node
            ):
                node = next(r for r in node if isinstance(r, Mapping) and r.get("id") == key)
            elif isinstance(node, list) and all(isinstance(r, Mapping) for r in node):
                ids = [str(r["id"]) for r in node if "id" in r]
                if ids and not any(key in r for r in node):  # neither an item nor a column
                    near = closest(key, ids)
                    hint = f"; did you mean '{near}'?" if near else ""
                    raise KeyError(f"no item '{key}' in {'.'.join((root, *path[:i]))}{hint}")
                node = [r.get(key) for r in node]
                if any(v is None for v in node):
                    raise KeyError(f"not every row has '{key}'")
            else:
                known = sorted(node) if isinstance(node, Mapping) else []
                near = closest(key, [str(k) for k in known])
                hint = f"; did you mean '{near}'?" if near else ""
                raise KeyError(f"no '{key}' after '{'.'.join((root, *path[:i]))}'{hint}")
        _type_of(node)
        if isinstance(node, list) and any(isinstance(v, list | Mapping) for v in node):
            raise KeyError("a list of plain values is expected")
        if isinstance(node, Mapping) and any(isinstance(v, list | Mapping) for v in node.values()):
            raise KeyError("a table of plain values is expected")
        return node

    return lookup
