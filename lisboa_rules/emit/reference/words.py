"""Rule text in words: placeholders filled from the model, formulas said in words.

Both back ends use this: the engine for its refusal messages, the reference for its pages. The
result is a list of segments so that each format can escape text and mark assumed values.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


def formula_words(
    m: Model, source: str, params: Mapping[str, int], unit: str | None = None
) -> str:
    """A formula in words a rulebook prints; params appear as their values.

    `unit` is the plural noun the formula's value counts (e.g. the game's score term), when
    the caller knows it; otherwise a `<noun>_per_<noun>` param names it (see `Sayer`).
    """
    f = parse_formula(m, source, params)
    if f is None:
        return source
    return Sayer(m, params, unit).say(f.tree.body)


def formula_steps(
    m: Model, source: str, params: Mapping[str, int], given: Mapping[str, int]
) -> str:
    """A formula with every name given a value, as the arithmetic a player does:
    `1 + 1 × 3 = 4`; a `max`/`min` with a number that does not bite is left out, one that
    does is shown as `raised to`/`lowered to`. Empty when there is nothing to compute (a
    single name or number)."""
    values = {**params, **given}
    f = parse_formula(m, source, values)
    if f is None:
        return ""
    body = f.tree.body
    if not isinstance(body, ast.BinOp | ast.Call | ast.UnaryOp):
        return ""
    shown, result = _arith(body, values, set(params)), _value(body, values)
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

_OPWORDS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times"}
_CMPWORDS = {ast.Gt: "more than", ast.GtE: "at least", ast.Lt: "fewer than",
             ast.LtE: "at most", ast.Eq: "exactly", ast.NotEq: "other than"}
_ISWORDS = {ast.Gt: "is more than", ast.GtE: "is at least", ast.Lt: "is less than",
            ast.LtE: "is at most", ast.Eq: "is", ast.NotEq: "is not"}
_SYMBOLS = {ast.Add: "+", ast.Sub: "−", ast.Mult: "×", ast.FloorDiv: "÷"}


def bare(words: str) -> str:
    """Vocabulary words without their article or possessive: `your Ships` -> `Ships`."""
    for prefix in ("your ", "the "):
        if words.startswith(prefix):
            return words[len(prefix):]
    return words


class Sayer:
    """Says an expression of the formula language in words (see the patterns above)."""

    def __init__(self, m: Model, params: Mapping[str, int], unit: str | None = None) -> None:
        self.params = dict(params)
        self.unit = unit
        self.vocab = {v.name: v.words for v in m.vocabulary}
        self.names = names_of(m)
        terms = m.data.get("game", {}).get("terms", {}) if isinstance(m.data, dict) else {}
        terms = terms if isinstance(terms, dict) else {}
        # plural -> singular, and singular -> plural, from the game's `X` / `X_one` terms
        self.one: dict[str, str] = {}
        self.many: dict[str, str] = {}
        for key, plural in terms.items():
            single = terms.get(f"{key}_one")
            if isinstance(plural, str) and isinstance(single, str) and not key.endswith("_one"):
                self.one[plural] = single
                self.many[single] = plural

    # -- nouns --------------------------------------------------------------------------------

    def name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            item = node.attr
            return self.vocab.get(node.value.id, node.value.id).replace(
                "{item}", self.names.get(item, item))
        assert isinstance(node, ast.Name)
        return self.vocab.get(node.id, node.id).replace("{item}", "")

    def number(self, node: ast.expr) -> int | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.params:
            return self.params[node.id]
        return None

    def noun(self, word: str) -> str:
        """A unit word as the vocabulary or the terms say it (plural)."""
        if word in self.vocab:
            return bare(self.vocab[word])
        return self.many.get(word, word)

    def units(self, node: ast.expr) -> tuple[str | None, str | None]:
        """(unit of the number, unit it is per) from a param named `<x>_per_<y>`."""
        if isinstance(node, ast.Name) and node.id in self.params and "_per_" in node.id:
            x, _, y = node.id.partition("_per_")
            known = set(self.vocab) | set(self.many) | set(self.one)
            return (self.noun(x) if x in known else None, self.noun(y) if y in known else None)
        return None, None

    def count(self, n: int, unit: str | None) -> str:
        if not unit:
            return str(n)
        return f"{n} {self.one.get(unit, unit) if n == 1 else unit}"

    # -- the walk -------------------------------------------------------------------------------

    def say(self, node: ast.expr) -> str:
        n = self.number(node)
        if n is not None:
            return str(n)
        if isinstance(node, ast.Constant):
            return "true" if node.value else "false"
        if isinstance(node, ast.Name | ast.Attribute):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            inner = self.inner(node.operand)
            return f"not {inner}" if isinstance(node.op, ast.Not) else f"minus {inner}"
        if isinstance(node, ast.BoolOp):
            joiner = " and " if isinstance(node.op, ast.And) else " or "
            return joiner.join(self.inner(v) if isinstance(v, ast.BoolOp) else self.say(v)
                               for v in node.values)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.call(node)
        raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover

    def inner(self, node: ast.expr) -> str:
        """A sub-expression that is not a single noun or number, bracketed."""
        said = self.plain(node)
        simple = isinstance(node, ast.Name | ast.Attribute | ast.Constant)
        return said if simple else f"({said})"

    def plain(self, node: ast.expr) -> str:
        """A sub-expression in words without a unit (units belong to the whole formula)."""
        unit, self.unit = self.unit, None
        try:
            return self.say(node)
        finally:
            self.unit = unit

    def binop(self, node: ast.BinOp) -> str:
        left, right, op = node.left, node.right, node.op
        if isinstance(op, ast.Mult):
            k, other = (right, left) if self.number(right) is not None else (left, right)
            n = self.number(k)
            if n is not None and self.number(other) is None:
                unit = self.units(k)[0] or self.unit
                lack = self.lack(other)
                if lack is not None:
                    return f"{self.count(n, unit)} for each {lack}"
                if isinstance(other, ast.Name | ast.Attribute):
                    return f"{self.count(n, unit)} for each of {self.name(other)}"
                return f"{self.count(n, unit)} for each 1 of {self.group(other)}"
        if isinstance(op, ast.FloorDiv):
            n = self.number(right)
            if n is not None:
                each, per = self.units(right)
                unit = per or self.unit
                return f"{self.count(1, unit)} for every full {self.count(n, each)} " \
                       f"in {self.group(left)}"
            return f"{self.inner(left)} divided by {self.inner(right)}, rounded down"
        if isinstance(op, ast.Add | ast.Sub):
            n = self.number(right)
            if n is not None and self.number(left) is None:
                word = "plus" if isinstance(op, ast.Add) else "minus"
                return f"{self.plain(left)} {word} {self.count(n, self.unit)}"
        word = _OPWORDS[type(op)]
        return f"{self.operand(left)} {word} {self.operand(right)}"

    def operand(self, node: ast.expr) -> str:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and \
                any(self.number(x) is not None for x in (node.left, node.right)):
            return self.plain(node)  # "a plus 1 for each of b" reads without brackets
        return self.inner(node)

    def group(self, node: ast.expr) -> str:
        """Several values taken together: `a + b` -> "a and b together"."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return f"{self.plain(node.left)} and {self.plain(node.right)} together"
        return self.plain(node)

    def lack(self, node: ast.expr) -> str | None:
        """`max(0, a - b)` (either order): "<b> you lack for <a>", or None for other shapes."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "max" and len(node.args) == 2):
            return None
        zero = [a for a in node.args if self.number(a) == 0]
        diff = [a for a in node.args if isinstance(a, ast.BinOp) and isinstance(a.op, ast.Sub)]
        if len(zero) != 1 or len(diff) != 1:
            return None
        d = diff[0]
        assert isinstance(d, ast.BinOp)
        if not isinstance(d.right, ast.Name | ast.Attribute):
            return None
        b = self.name(d.right)
        if b.startswith("your "):
            return f"{bare(b)} you lack for {self.plain(d.left)}"
        return f"point by which {b} falls short of {self.plain(d.left)}"

    def call(self, node: ast.Call) -> str:
        assert isinstance(node.func, ast.Name)
        larger = node.func.id == "max"
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

    def compare(self, node: ast.Compare) -> str:
        if len(node.ops) == 1:
            op, right = node.ops[0], node.comparators[0]
            n = self.number(right)
            left = node.left
            if n is not None and isinstance(left, ast.Name | ast.Attribute):
                said = self.name(left)
                if said.startswith("your "):
                    if isinstance(op, ast.Gt) and n == 0:
                        return f"you have any {bare(said)}"
                    return f"you have {_CMPWORDS[type(op)]} {n} {bare(said)}"
                return f"{said} {_ISWORDS[type(op)]} {n}"
            if n is not None and isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
                return f"{_CMPWORDS[type(op)]} {n} of {self.group(left)}"
        parts = [self.inner(node.left)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts += [_ISWORDS[type(op)], self.inner(right)]
        return " ".join(parts)


def _value(node: ast.expr, values: Mapping[str, int]) -> int:
    f = expr.Formula(ast.unparse(node), ast.Expression(node), "int", ())
    got = expr.evaluate(f, lambda name, item: values[name])
    return int(got)


def _arith(node: ast.expr, values: Mapping[str, int], fixed: set[str]) -> str:
    """An expression with its values, in the symbols of arithmetic (see `formula_steps`)."""
    if isinstance(node, ast.Name):
        return str(values[node.id])
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.BinOp):
        left, right = _arith(node.left, values, fixed), _arith(node.right, values, fixed)
        if isinstance(node.left, ast.BinOp) and expr.needs_parens(node.left, node):
            left = f"({left})"
        if isinstance(node.right, ast.BinOp) and expr.needs_parens(node.right, node, True):
            right = f"({right})"
        if isinstance(node.left, ast.Call) and isinstance(node.op, ast.Mult | ast.FloorDiv):
            left = f"({left})"
        if isinstance(node.right, ast.Call) and isinstance(node.op, ast.Mult | ast.FloorDiv):
            right = f"({right})"
        text = f"{left} {_SYMBOLS[type(node.op)]} {right}"
        return f"{text}, rounded down" if isinstance(node.op, ast.FloorDiv) else text
    if isinstance(node, ast.UnaryOp):
        return f"−{_arith(node.operand, values, fixed)}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2:
        larger = node.func.id == "max"
        consts = [a for a in node.args if isinstance(a, ast.Constant) or (
            isinstance(a, ast.Name) and a.id in fixed)]
        others = [a for a in node.args if a not in consts]
        if len(consts) == 1 and len(others) == 1:
            inner, bound = _value(others[0], values), _value(consts[0], values)
            shown = _arith(others[0], values, fixed)
            if (inner < bound) if larger else (inner > bound):
                return f"{shown} = {inner}, {'raised' if larger else 'lowered'} to {bound}"
            return shown
    parts = ", ".join(_arith(a, values, fixed) for a in getattr(node, "args", ()))
    which = "the larger of" if getattr(getattr(node, "func", None), "id", "") == "max" \
        else "the smaller of"
    return f"{which} {parts}"



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


def segments(m: Model, text: str, local: Any) -> list[Segment]:
    """Split rule text into words and bound values."""
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
            shown = formula_words(m, value, p)
        else:
            shown = rtext.format_value(value, ph.filter, lambda s: names.get(s, s))
        assumed = local_assumed if where is None else _assumptions_along(m, where)
        if ph.filter in units and isinstance(value, int) and not isinstance(value, bool):
            number, unit = rtext.counted(value, units[ph.filter])  # the value, then its unit
            out += [Segment(number, True, assumed, ph.path), Segment(" " + unit)]
            continue
        out.append(Segment(shown, True, assumed, ph.path))
    out.append(Segment(text[pos:]))
    return [s for s in out if s.text]


def plain_text(m: Model, r: Rule) -> str:
    """A rule's text with every placeholder filled in, as plain text."""
    local, _ = find_owner(m, r)
    return "".join(s.text for s in segments(m, r.text, local)).strip()


def plain(m: Model, text: str, local: Any) -> str:
    """Any text with placeholders filled in, as plain text."""
    return "".join(s.text for s in segments(m, text, local)).strip()
