"""Rule text in words: placeholders filled from the model, formulas said in words.

Both back ends use this: the engine for its refusal messages, the reference for its pages. The
result is a list of segments so that each format can escape text and mark assumed values.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, assert_never, cast

from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.show import show
from lisboa_rules.lang import expr
from lisboa_rules.lang import text as rtext
from lisboa_rules.model.types import Model, Rule, find_owner

FORMULA_KEYS = ("formula", "land_price", "condition", "measure", "eligible", "per_color")


@dataclass(frozen=True)
class Segment:
    """A piece of rule text: plain words, or a value bound from the data."""

    text: str
    value: bool = False
    assumptions: tuple[str, ...] = ()
    path: tuple[str, ...] = ()


_T = TypeVar("_T")
# What `_per_model` found, for the last models it was asked of: (model, function, value). The
# model itself is kept, so it is found by identity (a built model is never changed) and no
# other model can take its address while it is here.
_FOUND: list[tuple[Model, Callable[[Model], Any], Any]] = []


def _per_model(fn: Callable[[Model], _T]) -> Callable[[Model], _T]:
    """`fn` of a model, found once per model: the reference asks for its names and words for
    every text it prints. The value is shared between callers: read it only."""

    def once(m: Model) -> _T:
        for seen, f, value in _FOUND:
            if seen is m and f is fn:
                return cast(_T, value)
        value = fn(m)
        _FOUND.insert(0, (m, fn, value))
        del _FOUND[32:]
        return value

    once.__doc__ = fn.__doc__
    return once


@_per_model
def names_of(m: Model) -> dict[str, str]:
    """Display names for ids that text may bind (Nobles, businesses, actions, decks)."""
    out: dict[str, str] = {}
    for n in m.nobles:
        out[n.id] = n.name
    for b in m.businesses:
        out[b.id] = b.name
    for na in m.noble_actions:
        out[na.id] = na.name
    for sa in m.state_actions:
        out[sa.id] = sa.name
    for d in m.decks:
        out[d.id] = d.name
    for c in m.costs:  # a cost an action names (`lacking_cost: wigs-for-influence`)
        out[c.id] = c.name
    return out


def parse_formula(m: Model, source: str, params: Mapping[str, int]) -> expr.Formula | None:
    """A formula parsed against the vocabulary and `params` (None when it does not parse)."""
    env = {
        v.name: expr.NameInfo("int", tuple(b.id for b in m.businesses) if v.per else None)
        for v in m.vocabulary
    }
    for k in params:
        env[k] = expr.NameInfo("int")
    try:
        return expr.parse(source, env)
    except expr.FormulaError:
        return None


PARAMS = ("this", "params")  # where a param of a formula lives: its owner's `params:`


def formula_ir(m: Model, source: str, params: Mapping[str, int],
               given: Mapping[str, int] | None = None) -> ir.Expr | None:
    """A formula as the IR the reference says (None when it does not parse): a param is its
    value, read from the rules data (`ir.Data` at `this.params.<name>`, so its name still says
    the unit it counts); a name of the vocabulary is kept by its name, given where the formula
    is used: `ir.Slot(name)`, and a per-item name `stores.gold` the entry of its item,
    `ir.Index(ir.Slot("stores"), ir.Lit("gold"))`. (The engine's resolve puts what the name
    reads in its place instead, which loses the name.) `given` names are parsed as plain
    numbers and kept as slots (an example's values, see `formula_steps`)."""
    values = {**params, **(given or {})}
    f = parse_formula(m, source, values)
    if f is None:
        return None

    def resolve(name: str, item: str | None) -> ir.Expr:
        if name in params:
            return ir.Data(values[name], (*PARAMS, name))
        slot = ir.Slot(name)
        return slot if item is None else ir.Index(slot, ir.Lit(item))

    return expr.to_ir(f, resolve)


def formula_words(
    m: Model, source: str, params: Mapping[str, int], unit: str | None = None,
    anyone: bool = False,
) -> str:
    """A formula in words a rulebook prints; params appear as their values.

    `unit` is the plural noun the formula's value counts (e.g. the game's score term), when
    the caller knows it; otherwise a `<noun>_per_<noun>` param names it (see `Sayer`).
    `anyone`: the condition holds for any player, not the reader ("a player has at least 2
    ...", not "you have ...": a trigger of every player).
    """
    node = formula_ir(m, source, params)
    if node is None:
        return source
    return Sayer(m, params, unit, anyone).say(node)


def formula_steps(
    m: Model, source: str, params: Mapping[str, int], given: Mapping[str, int]
) -> str:
    """A formula with every name given a value, as the arithmetic a player does:
    `1 + 1 × 3 = 4`; a `max`/`min` with a number that does not bite is left out, one that
    does is shown as `raised to`/`lowered to`. Empty when there is nothing to compute (a
    single name or number)."""
    values = {**params, **given}
    node = formula_ir(m, source, params, given)
    if not isinstance(node, ir.BinOp | ir.Call | ir.Neg):
        return ""
    shown, result = _arith(node, values), _value(node, values)
    if shown.endswith(f"ed to {result}"):  # a bound that bites already says the result
        return shown
    return f"{shown} = {result}"


# --- words for expression shapes -------------------------------------------------------------
#
# Patterns on the shape of an expression, never on its names: `k * max(0, a - b)` reads "k for
# each <b> you lack for <a>", `k * a` "k for each of <a>", `a + k` "<a> plus k", `a // k` "1 for
# every full k of <a>", `max(k, a)` "<a>, but never less than k", `a >= k` "you have at least k
# <a>" (for a name the vocabulary words "your ..."). The nouns are the vocabulary's words; the
# unit a number counts is the caller's (the score term for scoring) or, for a param named
# `<x>_per_<y>`, the vocabulary's words for <x> (a name) or the game's terms (`score`/`score_one`
# pairs): `wigs_per_influence` counts wigs, `reis_per_wig` réis per wig.
#
# The shapes are read on the formula's IR (`formula_ir`): a number is an `ir.Lit` or a param's
# `ir.Data`, a noun a name's `ir.Slot` (or the `ir.Index` of a per-item name's item).

_OPWORDS: dict[str, str] = {"+": "plus", "-": "minus", "*": "times"}
_CMPWORDS: dict[str, str] = {">": "more than", ">=": "at least", "<": "fewer than",
                             "<=": "at most", "==": "exactly", "!=": "other than"}
_ISWORDS: dict[str, str] = {">": "is more than", ">=": "is at least", "<": "is less than",
                            "<=": "is at most", "==": "is", "!=": "is not"}
_SYMBOLS: dict[str, str] = {"+": "+", "-": "−", "*": "×", "//": "÷"}


class Unsayable(ValueError):
    """An IR node no formula of the formula language holds (a field of the state, a local, a
    measure's node, a table...): the reference has no words for it and says so rather than
    guess."""


def bare(words: str) -> str:
    """Vocabulary words without their article or possessive: `your Ships` -> `Ships`."""
    for prefix in ("your ", "the "):
        if words.startswith(prefix):
            return words[len(prefix):]
    return words


def named(node: ir.Expr) -> tuple[str, str | None] | None:
    """The name of the formula language a node of `formula_ir` keeps, with its item:
    `ir.Slot("ships")` -> ("ships", None), `ir.Index(ir.Slot("stores"), ir.Lit("gold"))` ->
    ("stores", "gold"); None for any other node."""
    match node:
        case ir.Slot(name=name):
            return name, None
        case ir.Index(base=ir.Slot(name=name), key=ir.Lit(value=str() as item)):
            return name, item
        case _:
            return None


def _refuse(node: ir.Expr) -> Unsayable:
    return Unsayable(f"no formula holds {show(node)}: the reference has no words for it")


@_per_model
def _vocab_words(m: Model) -> dict[str, str]:
    """Each name of the formula language, in its vocabulary words."""
    return {v.name: v.words for v in m.vocabulary}


@_per_model
def _numbers_of_terms(m: Model) -> tuple[dict[str, str], dict[str, str]]:
    """From the game's `X` / `X_one` terms: plural -> singular, and singular -> plural."""
    terms = m.data.get("game", {}).get("terms", {}) if isinstance(m.data, dict) else {}
    terms = terms if isinstance(terms, dict) else {}
    one: dict[str, str] = {}
    many: dict[str, str] = {}
    for key, plural in terms.items():
        single = terms.get(f"{key}_one")
        if isinstance(plural, str) and isinstance(single, str) and not key.endswith("_one"):
            one[plural] = single
            many[single] = plural
    return one, many


class Sayer:
    """Says a formula's IR in words (see the patterns above)."""

    def __init__(self, m: Model, params: Mapping[str, int], unit: str | None = None,
                 anyone: bool = False) -> None:
        self.params = dict(params)
        self.unit = unit
        self.has = "a player has" if anyone else "you have"  # who a comparison is of
        self.vocab = dict(_vocab_words(m))  # its own: a caller may say a name otherwise
        self.names = names_of(m)
        # plural -> singular, and singular -> plural, from the game's `X` / `X_one` terms
        self.one, self.many = _numbers_of_terms(m)

    # -- nouns --------------------------------------------------------------------------------

    def name(self, node: ir.Expr) -> str:
        """A name of the formula language in its vocabulary words (its item's name in them)."""
        found = named(node)
        if found is None:
            raise _refuse(node)
        name, item = found
        shown = "" if item is None else self.names.get(item, item)
        return self.vocab.get(name, name).replace("{item}", shown)

    def number(self, node: ir.Expr) -> int | None:
        """A number written in the formula, or a param's value; None for anything else."""
        match node:
            case ir.Lit(value=int() as v) if not isinstance(v, bool):
                return v
            case ir.Data(value=int() as v):
                return v
            case _:
                return None

    def noun(self, word: str) -> str:
        """A unit word as the vocabulary or the terms say it (plural)."""
        if word in self.vocab:
            return bare(self.vocab[word])
        return self.many.get(word, word)

    def units(self, node: ir.Expr) -> tuple[str | None, str | None]:
        """(unit of the number, unit it is per) from a param named `<x>_per_<y>`."""
        if isinstance(node, ir.Data) and node.path and "_per_" in node.path[-1]:
            x, _, y = node.path[-1].partition("_per_")
            known = set(self.vocab) | set(self.many) | set(self.one)
            return (self.noun(x) if x in known else None, self.noun(y) if y in known else None)
        return None, None

    def count(self, n: int, unit: str | None) -> str:
        if not unit:
            return str(n)
        return f"{n} {self.one.get(unit, unit) if n == 1 else unit}"

    # -- the walk -------------------------------------------------------------------------------

    def say(self, node: ir.Expr) -> str:
        """The node in words; `Unsayable` for a node no formula holds."""
        n = self.number(node)
        if n is not None:
            return str(n)
        match node:
            case ir.Lit(value=bool() as v):
                return "true" if v else "false"
            case ir.Slot():
                return self.name(node)
            case ir.Index() if named(node) is not None:
                return self.name(node)
            case ir.BinOp(op="+" | "-" | "*" | "//"):
                return self.binop(node)
            case ir.Neg(operand=x):
                return f"minus {self.inner(x)}"
            case ir.Not(operand=x):
                return f"not {self.inner(x)}"
            case ir.BoolOp(op=op, values=vs):
                return f" {op} ".join(self.inner(v) if isinstance(v, ir.BoolOp) else self.say(v)
                                      for v in vs)
            case ir.Compare(ops=ops) if all(o in _ISWORDS for o, _ in ops):
                return self.compare(node)
            case ir.Call(fn="max" | "min"):
                return self.call(node)
            # what no formula holds: a formula reads numbers and names, never the state, a
            # local, a table or a measure's node, nor any other operator or function
            case ir.Lit() | ir.Data() | ir.Local() | ir.Arg() | ir.Seat() | ir.Me() \
                    | ir.Context() | ir.PlayerField() | ir.GameField() | ir.Column() \
                    | ir.Measure() | ir.Index() | ir.Get() | ir.BinOp() | ir.Compare() \
                    | ir.Cond() | ir.Call() | ir.Values() | ir.Keys() | ir.ListOf() \
                    | ir.EmptyTable() | ir.Comp() | ir.Cost():
                raise _refuse(node)
            case _:
                assert_never(node)

    def inner(self, node: ir.Expr) -> str:
        """A sub-expression that is not a single noun or number, bracketed."""
        said = self.plain(node)
        simple = named(node) is not None or isinstance(node, ir.Lit | ir.Data)
        return said if simple else f"({said})"

    def plain(self, node: ir.Expr) -> str:
        """A sub-expression in words without a unit (units belong to the whole formula)."""
        unit, self.unit = self.unit, None
        try:
            return self.say(node)
        finally:
            self.unit = unit

    def binop(self, node: ir.BinOp) -> str:
        left, right, op = node.left, node.right, node.op
        if op == "*":
            k, other = (right, left) if self.number(right) is not None else (left, right)
            n = self.number(k)
            if n is not None and self.number(other) is None:
                unit = self.units(k)[0] or self.unit
                lack = self.lack(other)
                if lack is not None:
                    return f"{self.count(n, unit)} for each {lack}"
                if named(other) is not None:
                    return f"{self.count(n, unit)} for each of {self.name(other)}"
                return f"{self.count(n, unit)} for each 1 of {self.group(other)}"
        if op == "//":
            n = self.number(right)
            if n is not None:
                each, per = self.units(right)
                unit = per or self.unit
                return f"{self.count(1, unit)} for every full {self.count(n, each)} " \
                       f"in {self.group(left)}"
            return f"{self.inner(left)} divided by {self.inner(right)}, rounded down"
        if op in ("+", "-"):
            n = self.number(right)
            if n is not None and self.number(left) is None:
                word = "plus" if op == "+" else "minus"
                return f"{self.plain(left)} {word} {self.count(n, self.unit)}"
        if op not in _OPWORDS:
            raise _refuse(node)  # pragma: no cover - `say` takes only these operators
        return f"{self.operand(left)} {_OPWORDS[op]} {self.operand(right)}"

    def operand(self, node: ir.Expr) -> str:
        if isinstance(node, ir.BinOp) and node.op == "*" and \
                any(self.number(x) is not None for x in (node.left, node.right)):
            return self.plain(node)  # "a plus 1 for each of b" reads without brackets
        return self.inner(node)

    def group(self, node: ir.Expr) -> str:
        """Several values taken together: `a + b` -> "a and b together"."""
        if isinstance(node, ir.BinOp) and node.op == "+":
            return f"{self.plain(node.left)} and {self.plain(node.right)} together"
        return self.plain(node)

    def lack(self, node: ir.Expr) -> str | None:
        """`max(0, a - b)` (either order, `b` a name): "<b> you lack for <a>", or None for
        other shapes."""
        if not (isinstance(node, ir.Call) and node.fn == "max" and len(node.args) == 2):
            return None
        zero = [a for a in node.args if self.number(a) == 0]
        diff = [a for a in node.args if isinstance(a, ir.BinOp) and a.op == "-"]
        if len(zero) != 1 or len(diff) != 1:
            return None
        d = diff[0]
        assert isinstance(d, ir.BinOp)
        if named(d.right) is None:
            return None
        b = self.name(d.right)
        if b.startswith("your "):
            return f"{bare(b)} you lack for {self.plain(d.left)}"
        return f"point by which {b} falls short of {self.plain(d.left)}"

    def call(self, node: ir.Call) -> str:
        larger = node.fn == "max"
        nums = [a for a in node.args if self.number(a) is not None]
        rest = [a for a in node.args if self.number(a) is None]
        if len(node.args) == 2 and len(nums) == 1 and len(rest) == 1:
            n = self.number(nums[0])
            bound = "less" if larger else "more"
            lack = self.lack(node)
            if lack is not None:
                return f"the {lack}"
            return f"{self.say(rest[0])}, but never {bound} than {self.count(n or 0, self.unit)}"
        which = "larger" if larger else "smaller"
        args = [self.inner(a) for a in node.args]
        return f"the {which} of " + ", ".join(args[:-1]) + " and " + args[-1]

    def compare(self, node: ir.Compare) -> str:
        left = node.left
        if len(node.ops) == 1:
            op, right = node.ops[0]
            n = self.number(right)
            if n is not None and named(left) is not None:
                said = self.name(left)
                if said.startswith("your "):
                    if (op == ">" and n == 0) or (op == ">=" and n == 1):
                        return f"{self.has} any {bare(said)}"
                    return f"{self.has} {_CMPWORDS[op]} {n} {bare(said)}"
                return f"{said} {_ISWORDS[op]} {n}"
            if n is not None and isinstance(left, ir.BinOp) and left.op == "+":
                return f"{_CMPWORDS[op]} {n} of {self.group(left)}"
        parts = [self.inner(left)]
        for op, right in node.ops:
            parts += [_ISWORDS[op], self.inner(right)]
        return " ".join(parts)


def _given(node: ir.Expr, values: Mapping[str, int]) -> ir.Expr:
    """A formula's IR with each name's value in its place (a per-item name's, as its name's)."""
    found = {x: named(x) for x in ir.walk(node)}
    return ir.substitute(node, {x: ir.Lit(values[nm[0]]) for x, nm in found.items()
                                if nm is not None})


def _value(node: ir.Expr, values: Mapping[str, int]) -> int:
    return int(const.evaluate(_given(node, values), {}))


def _arith(node: ir.Expr, values: Mapping[str, int]) -> str:
    """An expression with its values, in the symbols of arithmetic (see `formula_steps`): a
    number the formula is given (written in it, or a param) is fixed, a name is given."""
    found = named(node)
    if found is not None:
        return str(values[found[0]])
    match node:
        case ir.Lit(value=v) | ir.Data(value=v):
            return str(v)
        case ir.BinOp(op=op, left=a, right=b) if op in _SYMBOLS:
            left, right = _arith(a, values), _arith(b, values)
            if isinstance(a, ir.BinOp) and expr.needs_parens(a, node):
                left = f"({left})"
            if isinstance(b, ir.BinOp) and expr.needs_parens(b, node, True):
                right = f"({right})"
            if isinstance(a, ir.Call) and op in ("*", "//"):
                left = f"({left})"
            if isinstance(b, ir.Call) and op in ("*", "//"):
                right = f"({right})"
            text = f"{left} {_SYMBOLS[op]} {right}"
            return f"{text}, rounded down" if op == "//" else text
        case ir.Neg(operand=x):
            return f"−{_arith(x, values)}"
        case ir.Call(fn="max" | "min" as fn, args=args):
            larger = fn == "max"
            if len(args) == 2:
                fixed = [isinstance(a, ir.Lit | ir.Data) for a in args]
                if fixed.count(True) == 1:
                    bound_node, other = (args[0], args[1]) if fixed[0] else (args[1], args[0])
                    inner, bound = _value(other, values), _value(bound_node, values)
                    shown = _arith(other, values)
                    if (inner < bound) if larger else (inner > bound):
                        return f"{shown} = {inner}, {'raised' if larger else 'lowered'} to " \
                               f"{bound}"
                    return shown
            which = "the larger of" if larger else "the smaller of"
            return f"{which} " + ", ".join(_arith(a, values) for a in args)
        case _:  # a number formula holds no condition, nor anything no formula holds
            raise _refuse(node)


def _assumptions_along(m: Model, path: tuple[str, ...]) -> tuple[str, ...]:
    node: Any = m.data
    found: tuple[str, ...] = ()
    for key in path:
        if isinstance(node, dict) and isinstance(node.get("assumptions"), list):
            found = tuple(node["assumptions"])
        node = rtext.lookup(node, (key,))
        if rtext.is_missing(node):
            break
    if isinstance(node, dict) and isinstance(node.get("assumptions"), list):
        found = tuple(node["assumptions"])
    return found


def player_count_names(m: Model) -> frozenset[str]:
    """The names of the vocabulary that are the number of players (`value: len(game.players)`)."""
    want = ast.dump(parse_expr("len(game.players)"))
    out = set()
    for row in m.data.get("vocabulary", {}).get("names", ()):
        value = row.get("value") if isinstance(row, Mapping) else None
        try:
            if isinstance(value, str) and ast.dump(parse_expr(value.strip())) == want:
                out.add(str(row.get("name")))
        except (SyntaxError, ValueError, RecursionError):
            continue
    return frozenset(out)


def at_players(m: Model, source: str, params: Mapping[str, int], players: int) -> int | None:
    """The value of a formula that reads only the number of players (and numbers and its
    params), with `players` playing; None for a formula that reads anything else."""
    node = formula_ir(m, source, params)
    if node is None:
        return None
    read = {x[0] for x in map(named, ir.walk(node)) if x is not None}
    counts = player_count_names(m)
    if not read or not read <= counts:
        return None
    try:
        return _value(node, dict.fromkeys(read, players))
    except (ArithmeticError, ValueError, TypeError):
        return None


_DIGITS = re.compile(r"[0-9]+")  # ASCII digits: str.isdigit() takes '²' too


def segments(m: Model, text: str, local: Any, players: int | None = None) -> list[Segment]:
    """Split rule text into words and bound values. With `players` (a text for that number
    of players only: a variant that applies by it), a formula of the number of players is
    said as its value then, not in words ("1", not "the number of players minus 1")."""
    names = names_of(m)
    units = rtext.unit_filters(m.data.get("game", {}).get("terms"))
    out: list[Segment] = []
    pos = 0
    local_assumed = tuple(local.get("assumptions", ())) if isinstance(local, dict) else ()
    params = dict(local.get("params", {})) if isinstance(local, dict) else {}
    for ph in rtext.placeholders(text):
        out.append(Segment(text[pos : ph.start]))
        pos = ph.start + len(ph.raw) + 2
        value, where = rtext.resolve(ph, local, m.data)
        if rtext.is_missing(value):
            out.append(Segment("{" + ph.raw + "}"))
            continue
        if ph.path and ph.path[-1] in FORMULA_KEYS and isinstance(value, str):
            owner = (
                rtext.lookup(local, ph.path[:-1])
                if where is None
                else rtext.lookup(m.data, where[:-1])
            )
            p = dict(owner.get("params", {})) if isinstance(owner, dict) else params
            then = at_players(m, value, p, players) if players is not None else None
            shown = formula_words(m, value, p) if then is None else str(then)
        else:
            shown = rtext.format_value(value, ph.filter, lambda s: names.get(s, s))
        assumed = local_assumed if where is None else _assumptions_along(m, where)
        if ph.filter in units and isinstance(value, int) and not isinstance(value, bool):
            number, unit = rtext.counted(value, units[ph.filter])  # the value, then its unit
            out += [Segment(number, True, assumed, ph.path), Segment(" " + unit)]
            continue
        out.append(Segment(shown, True, assumed, ph.path))
        if _DIGITS.fullmatch(shown):  # a number before a term's words: they agree with it
            found = rtext.agreeing(text, pos, int(shown), units)
            if found is not None:
                words, pos = found
                out.append(Segment(words))
    out.append(Segment(text[pos:]))
    return [s for s in out if s.text]


def plain_text(m: Model, r: Rule) -> str:
    """A rule's text with every placeholder filled in, as plain text."""
    local, _ = find_owner(m, r)
    return "".join(s.text for s in segments(m, r.text, local)).strip()


def plain(m: Model, text: str, local: Any) -> str:
    """Any text with placeholders filled in, as plain text."""
    return "".join(s.text for s in segments(m, text, local)).strip()


# --- data values in words --------------------------------------------------------------------
#
# The reference prints the rules' tables (the cards, the clergy tiles, a variant's changes) in
# these words, and the engine's `component` and `move_words` say the same rows and ids in them.


def _folded(word: str) -> str:
    """A word lower-case and without accents: `Réis` -> `reis`."""
    return "".join(c for c in unicodedata.normalize("NFD", word.lower())
                   if not unicodedata.combining(c))


def humanize(key: str) -> str:
    """A data key as a heading: `trade_goods` -> `Trade goods`."""
    text = key.replace("_", " ").replace("-", " ").strip()
    return text[:1].upper() + text[1:]


def bare_label(label: str) -> str:
    """Vocabulary words without the possessive, as a label: `your Ships` -> `Ships`."""
    for prefix in ("your ", "the "):
        if label.startswith(prefix):
            label = label[len(prefix):]
            break
    return label[:1].upper() + label[1:]


class DataWords:
    """The rules' data values in words: an id by its name, amounts of the vocabulary's things
    counted as a rulebook writes them, a record's keys labelled."""

    def __init__(self, m: Model) -> None:
        self.m = m
        self.names = names_of(m)
        self.vocab = {v.name: v.words for v in m.vocabulary}
        # the game's terms by their key, (singular, plural) words (`X_one`, `X`): what an
        # amount of an effect named like a term counts (`{rubble: 1}` is "1 rubble cube")
        self.terms = rtext.unit_filters(
            m.data.get("game", {}).get("terms", {}) if isinstance(m.data, dict) else {})

    def value_name(self, value: Any, named: bool = True) -> str:
        """A data value in words; ids become names when `named` (references, not colours)."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str):
            return self.names.get(value, value) if named else value
        if isinstance(value, list):
            return ", ".join(self.value_name(v, named) for v in value)
        if isinstance(value, dict):
            label = value.get("name", value.get("title"))
            if isinstance(label, str) and len(value) <= 2:
                return label
            counted = self.counted(value)
            if counted:
                return counted
            return "; ".join(f"{self.key_label(str(k))}: {self.value_name(v, named)}"
                             for k, v in value.items() if k not in ("source", "assumptions"))
        if value is None:
            return "—"
        return str(value)

    def counted(self, value: Mapping[str, Any]) -> str:
        """Amounts of things the vocabulary names, as a rulebook writes them: `{reis: 1,
        influence: 2}` -> `1 real, 2 Influence` (singulars from the game's terms); empty when
        a key is not a vocabulary name or a value not a whole number."""
        sayer = Sayer(self.m, {})

        def unit(key: str) -> str:  # the vocabulary's words, else the game's term
            if key in sayer.vocab and "{" not in sayer.vocab[key]:
                return bare(sayer.vocab[key])
            return self.terms[key][1] if key in self.terms else ""

        if not value or not all(unit(k) and isinstance(n, int) and not isinstance(n, bool)
                                for k, n in value.items()):
            return ""
        # amounts by their size (a penalty of `coins: -2` is "2 coins": the column or the words
        # around say which way it goes); a mix of gains and losses keeps its signs
        if len({n < 0 for n in value.values()}) > 1:
            return ""
        return ", ".join(sayer.count(abs(n), unit(k)) for k, n in value.items())

    def row_noun(self, key: str) -> str:
        """What one row of a list of the rules is, as a column's heading: the list's key in
        words, singular where a term of the game gives it (`decrees` -> `Decree`)."""
        label = humanize(key)
        for single, plural in self.terms.values():
            if plural.lower() == label.lower():
                return single[:1].upper() + single[1:]
        return label

    def effect_label(self, key: str) -> str:
        """An effect's id as a heading: its id in words (`key_label`), spelt as the game's term
        of the same key spells those words (`royal_favor` -> `Royal Favor`, as in "Royal Favor
        tile", not `Royal favor`)."""
        label = self.key_label(key)
        if key not in self.names and key not in self.vocab and key in self.terms:
            single = self.terms[key][0]
            if single.lower().startswith(label.lower()):
                return label[:1] + single[1:len(label)]
        return label

    def key_label(self, key: str) -> str:
        """A data key as words: the vocabulary's words for it, else the key humanized, each
        word spelt as the game's terms spell it (`neutral_officials_per_office` -> `Neutral
        Officials per office`)."""
        if key in self.names:
            return self.names[key]
        words = self.vocab.get(key)
        if words is not None and "{" not in words:
            return bare_label(words)
        said = " ".join(self.spelling.get(_folded(w), w) for w in humanize(key).split(" "))
        return said[:1].upper() + said[1:]

    @functools.cached_property
    def spelling(self) -> dict[str, str]:
        """Each word of the game's terms by its lower-case, unaccented form, where the terms
        spell it one way only (`officials` -> `Officials`, `reis` -> `réis`)."""
        seen: dict[str, set[str]] = {}
        for single, plural in self.terms.values():
            for w in (*plural.split(" "), *single.split(" ")):
                seen.setdefault(_folded(w), set()).add(w)
        return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}

    # -- a row of a table of the rules, for the engine's `component` ----------------------------

    def row_name(self, row: Any, key: str | None, ident: Any, noun: str) -> str:
        """A row's name: its `name` (or `title`); else its id, a text humanized (`Tile 01`),
        a number after the noun of its kind (`Card 12`), followed by the names of the ids it
        refers to (`Card 12 (Blue deck, the Baron)`)."""
        head = self.row_head(row, ident, noun)
        if isinstance(row, dict) and isinstance(row.get("name", row.get("title")), str):
            return head
        refs = [self.names.get(v) or humanize(v) for k, v in row.items()
                if k not in _NOT_SAID and k != key and k not in FORMULA_KEYS
                and isinstance(v, str) and v] if isinstance(row, dict) else []
        return f"{head} ({', '.join(refs)})" if refs else head

    def row_head(self, row: Any, ident: Any, noun: str) -> str:
        """A row's name without the ids it refers to (see `row_name`)."""
        if isinstance(row, dict):
            label = row.get("name", row.get("title"))
            if isinstance(label, str):
                return label
        if isinstance(ident, str):  # (not by the names of other kinds' ids: a colour is no deck)
            return humanize(ident)
        return f"{noun} {ident}".strip()

    def row_words(self, row: Any, key: str | None, ident: Any, noun: str) -> str:
        """A row in one line: its name, then each of its values labelled, in the reference's
        words (`value_name`); a formula said in words, a rule text with its placeholders
        filled; the row's id, name and provenance and empty values left out."""
        name = self.row_head(row, ident, noun)
        if not isinstance(row, dict):
            return name
        parts = []
        for k, v in row.items():
            if k in _NOT_SAID or k == key or v in (None, "", [], {}):
                continue
            if k in ("name", "title") and v == name:
                continue
            if k in FORMULA_KEYS and isinstance(v, str):
                params = row.get("params")
                shown = self.formula(v, params if isinstance(params, dict) else {})
            elif k == "text" and isinstance(v, str):
                shown = plain(self.m, v, row)
            else:
                shown = self.value_name(v)
            parts.append(f"{self.key_label(str(k))}: {shown}")
        return f"{name}: {'; '.join(parts)}" if parts else name

    def formula(self, source: str, params: Mapping[str, Any]) -> str:
        """A formula of a row in words (its source when the reference has no words for its
        shape)."""
        numbers = {k: v for k, v in params.items() if isinstance(v, int)}
        try:
            return formula_words(self.m, source, numbers)
        except Unsayable:
            return source


# a row's keys no line of words says: where its data comes from, and its steps (a procedure's
# rules, which the reference prints as rules)
_NOT_SAID = ("source", "assumptions", "steps", "params", "ranges")
