"""The formula language: a small, safe expression language for costs, conditions and measures.

Formulas are parsed with Python's own `ast` module in `eval` mode and then checked against a
whitelist of node kinds, so the language is a strict subset of Python expressions: integers,
booleans, names, `name.item` lookups, `+ - * //`, comparisons, `and`/`or`/`not` and calls of
`max`/`min`. Nothing is ever passed to `eval`: the checked tree is lowered to the IR (`to_ir`),
which a back end prints (the generated engine's Python), evaluated by a tree walker in the
reference interpreter, and rendered to words for the rules reference. It writes no target's
code itself.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

from lisboa_rules.core.limits import INT64_MAX
from lisboa_rules.core.pyexpr import parse_expr, syntax_slip
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.bounds import ANY, BOOL, Interval, floordiv, mul, show_interval

Type = Literal["int", "bool"]

MAX_FORMULA_LENGTH = 400
MAX_FORMULA_DEPTH = 24
FUNCTIONS = ("max", "min")

_BINOPS: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "plus"),
    ast.Sub: ("-", "minus"),
    ast.Mult: ("*", "×"),
    ast.FloorDiv: ("//", "÷"),
}
_CMPOPS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Gt: (">", "more than"),
    ast.GtE: (">=", "at least"),
    ast.Lt: ("<", "less than"),
    ast.LtE: ("<=", "at most"),
    ast.Eq: ("==", "exactly"),
    ast.NotEq: ("!=", "not"),
}


class FormulaError(Exception):
    """A formula that does not parse or type-check; `col` is 0-based within the formula."""

    def __init__(self, code: str, message: str, col: int = 0, suggestion: str | None = None,
                 name: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.col = col
        self.suggestion = suggestion
        self.name = name  # the unknown name of an `unknown-name`


@dataclass(frozen=True)
class NameInfo:
    """A name a formula may read: its type and, for `name.item` names, the allowed items."""

    type: Type
    items: tuple[str, ...] | None = None
    aka: tuple[str, ...] = ()  # other words a designer may write for it (rules/vocabulary.yaml)


@dataclass(frozen=True)
class Formula:
    """A parsed, checked formula. `tree` is the `ast.Expression`; `names` the names it reads."""

    source: str
    tree: ast.Expression
    type: Type
    names: tuple[str, ...]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Formula) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)


def parse(source: str, env: Mapping[str, NameInfo]) -> Formula:
    """Parse and type-check `source` against the names in `env`; raise FormulaError."""
    if len(source) > MAX_FORMULA_LENGTH:
        raise FormulaError("expr-syntax", f"formula is longer than {MAX_FORMULA_LENGTH} characters")
    try:
        tree = parse_expr(source.strip())
    except SyntaxError as exc:
        col = max((exc.offset or 1) - 1, 0)
        msg = exc.msg
        slip = syntax_slip(source.strip())
        if slip is not None:
            msg, col = slip
        raise FormulaError("expr-syntax", f"formula does not parse: {msg}", col) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise FormulaError("expr-syntax", f"formula does not parse: {exc}") from None
    names: list[str] = []
    typ = _check(tree.body, env, names, 0)
    return Formula(source.strip(), tree, typ, tuple(dict.fromkeys(names)))


def _check(node: ast.expr, env: Mapping[str, NameInfo], names: list[str], depth: int) -> Type:
    if depth > MAX_FORMULA_DEPTH:
        raise FormulaError("expr-syntax", "formula is nested too deeply", node.col_offset)
    d = depth + 1
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "bool"
        if isinstance(node.value, int):
            if node.value > INT64_MAX:
                raise FormulaError(
                    "value-out-of-range", f"{node.value} is beyond what a game holds: a whole "
                    "number from -2**63 to 2**63 - 1 (a saved game's 64 bits)", node.col_offset)
            return "int"
        raise FormulaError(
            "expr-type",
            f"only whole numbers and true/false are allowed, not {node.value!r}",
            node.col_offset,
        )
    if isinstance(node, ast.Name):
        return _check_name(node.id, None, node.col_offset, env, names)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return _check_name(node.value.id, node.attr, node.col_offset, env, names)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _expect(node.left, "int", env, names, d)
        _expect(node.right, "int", env, names, d)
        return "int"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _expect(node.operand, "int", env, names, d)
        return "int"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _expect(node.operand, "bool", env, names, d)
        return "bool"
    if isinstance(node, ast.BoolOp):
        for value in node.values:
            _expect(value, "bool", env, names, d)
        return "bool"
    if isinstance(node, ast.Compare) and all(type(op) in _CMPOPS for op in node.ops):
        for operand in [node.left, *node.comparators]:
            _expect(operand, "int", env, names, d)
        return "bool"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in FUNCTIONS:
            raise FormulaError(
                "unknown-name",
                f"unknown function '{node.func.id}'",
                node.col_offset,
                _closest(node.func.id, FUNCTIONS),
            )
        if node.keywords or len(node.args) < 2:
            raise FormulaError(
                "expr-syntax", f"{node.func.id}() takes two or more values", node.col_offset
            )
        for arg in node.args:
            _expect(arg, "int", env, names, d)
        return "int"
    raise FormulaError(
        "expr-syntax", f"'{ast.unparse(node)}' is not allowed in a formula", node.col_offset
    )


def _expect(
    node: ast.expr, want: Type, env: Mapping[str, NameInfo], names: list[str], depth: int
) -> None:
    got = _check(node, env, names, depth)
    if got != want:
        what = "a number" if want == "int" else "a condition (true or false)"
        raise FormulaError(
            "expr-type",
            f"'{ast.unparse(node)}' is {_article(got)}, expected {what}",
            node.col_offset,
        )


def _article(typ: Type) -> str:
    return "a number" if typ == "int" else "a condition"


def _check_name(
    name: str, item: str | None, col: int, env: Mapping[str, NameInfo], names: list[str]
) -> Type:
    info = env.get(name)
    if info is None:
        raise FormulaError(
            "unknown-name", f"unknown name '{name}' in formula", col,
            next((n for n, i in env.items() if name.lower() in i.aka), None)
            or _closest(name, list(env)), name,
        )
    if info.items is not None:
        if item is None:
            raise FormulaError(
                "expr-type", f"'{name}' needs an item, as in '{name}.{info.items[0]}'", col
            )
        if item not in info.items:
            raise FormulaError(
                "unknown-name",
                f"unknown item '{item}' of '{name}'",
                col,
                _closest(item, info.items),
            )
        names.append(f"{name}.{item}")
        return info.type
    if item is not None:
        raise FormulaError("expr-type", f"'{name}' has no items", col)
    names.append(name)
    return info.type


def _closest(word: str, candidates: tuple[str, ...] | list[str]) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


# --- back ends -------------------------------------------------------------------------------


def precedence(node: ast.expr | ir.Expr) -> int:
    """How tightly a formula node (or the IR node of one) binds when written infix: `or` 1,
    `and` 2, `not` 3, comparisons 4, `+ -` 5, `* //` 6, unary minus 7, names, numbers and calls
    8."""
    if isinstance(node, ast.BoolOp):
        return 1 if isinstance(node.op, ast.Or) else 2
    if isinstance(node, ast.UnaryOp):
        return 3 if isinstance(node.op, ast.Not) else 7
    if isinstance(node, ast.Compare | ir.Compare):
        return 4
    if isinstance(node, ast.BinOp | ir.BinOp):
        return 5 if _operator(node) in ("+", "-") else 6
    if isinstance(node, ir.BoolOp):
        return 1 if node.op == "or" else 2
    if isinstance(node, ir.Not):
        return 3
    if isinstance(node, ir.Neg):
        return 7
    return 8


def _operator(node: ast.BinOp | ir.BinOp) -> str:
    return node.op if isinstance(node, ir.BinOp) else _BINOPS[type(node.op)][0]


def needs_parens(child: ast.expr | ir.Expr, parent: ast.expr | ir.Expr,
                 right: bool = False) -> bool:
    """Whether `child`, an operand of `parent` (its right operand when `right`), must be
    bracketed to keep its meaning when both are written infix: a looser child always; an
    equally tight one on the right unless both are the same `+` or `*` (`a - (b - c)`,
    `a * (b // c)`); on the left only when `*` and `//` mix (`(a // b) * c` reads plainly).
    Formula nodes and the IR nodes of formulas alike."""
    c, p = precedence(child), precedence(parent)
    if c != p:
        return c < p
    if isinstance(child, ast.BinOp | ir.BinOp) and isinstance(parent, ast.BinOp | ir.BinOp):
        ops = (_operator(child), _operator(parent))
        if right:
            return not (ops[0] == ops[1] and ops[1] in ("+", "*"))
        return ops[0] != ops[1] and "//" in ops
    unary = ast.UnaryOp | ir.Neg | ir.Not
    if isinstance(child, unary) and isinstance(parent, unary):
        return True  # `-(-a)`, `not (not a)`: never `--a`
    return isinstance(child, ast.Compare | ir.Compare)  # a chain inside a chain (never checks)


SUM_NODE = ir.BinOp("+", ir.Lit(0), ir.Lit(0))  # a value shown as `x + y + z`


def to_ir(formula: Formula, resolve: Callable[[str, str | None], ir.Expr]) -> ir.Expr:
    """The formula as an IR expression; `resolve(name, item)` gives the node for each name."""
    return _ir(formula.tree.body, resolve)


def _ir(node: ast.expr, resolve: Callable[[str, str | None], ir.Expr]) -> ir.Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return ir.Lit(node.value)
    if isinstance(node, ast.Name):
        return resolve(node.id, None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return resolve(node.value.id, node.attr)
    if isinstance(node, ast.BinOp):
        op = cast(ir.BinOpName, _BINOPS[type(node.op)][0])
        return ir.BinOp(op, _ir(node.left, resolve), _ir(node.right, resolve))
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ir.Not(_ir(node.operand, resolve))
        return ir.Neg(_ir(node.operand, resolve))
    if isinstance(node, ast.BoolOp):
        return ir.BoolOp("and" if isinstance(node.op, ast.And) else "or",
                         tuple(_ir(v, resolve) for v in node.values))
    if isinstance(node, ast.Compare):
        ops = tuple((cast(ir.CmpOpName, _CMPOPS[type(c)][0]), _ir(r, resolve))
                    for c, r in zip(node.ops, node.comparators, strict=True))
        return ir.Compare(_ir(node.left, resolve), ops)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in FUNCTIONS:
        fn: ir.Function = "max" if node.func.id == "max" else "min"
        return ir.Call(fn, tuple(_ir(a, resolve) for a in node.args))
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover


def evaluate(formula: Formula, lookup: Callable[[str, str | None], int | bool]) -> int | bool:
    """Evaluate by walking the checked tree (the reference interpreter's path; never `eval`)."""
    return _ev(formula.tree.body, lookup)


def _ev(node: ast.expr, lookup: Callable[[str, str | None], int | bool]) -> int | bool:
    if isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, int)
        return value
    if isinstance(node, ast.Name):
        return lookup(node.id, None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return lookup(node.value.id, node.attr)
    if isinstance(node, ast.BinOp):
        a, b = int(_ev(node.left, lookup)), int(_ev(node.right, lookup))
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a // b  # as in the engine; the checks prove every divisor positive
    if isinstance(node, ast.UnaryOp):
        v = _ev(node.operand, lookup)
        return (not v) if isinstance(node.op, ast.Not) else -int(v)
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_ev(v, lookup) for v in node.values)
        return any(_ev(v, lookup) for v in node.values)
    if isinstance(node, ast.Compare):
        left = _ev(node.left, lookup)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _ev(right_node, lookup)
            if not _compare(type(op), int(left), int(right)):
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        values = [int(_ev(a, lookup)) for a in node.args]
        return max(values) if node.func.id == "max" else min(values)
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover


def _compare(op: type[ast.cmpop], a: int, b: int) -> bool:
    if op is ast.Gt:
        return a > b
    if op is ast.GtE:
        return a >= b
    if op is ast.Lt:
        return a < b
    if op is ast.LtE:
        return a <= b
    if op is ast.Eq:
        return a == b
    return a != b


def to_words(formula: Formula, words: Callable[[str, str | None], str]) -> str:
    """The formula in words for the reference, e.g. 'the larger of 0 and ...'.

    Every arithmetic operand that is itself arithmetic is bracketed (clearer to a player than
    precedence: `a + b * c` reads "a plus (b × c)"); logic is bracketed by precedence
    (`needs_parens`: "not (a and b)"); a `max`/`min` or arithmetic inside a `max`/`min`'s
    arguments, and a `max`/`min` operand of arithmetic, are bracketed, so "the larger of (the
    smaller of a and b) and c" or "the larger of 0 and (a minus b)" cannot be read another
    way."""
    return _words(formula.tree.body, words, top=True)


def _words(node: ast.expr, words: Callable[[str, str | None], str], top: bool = False) -> str:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        return str(node.value)
    if isinstance(node, ast.Name):
        return words(node.id, None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return words(node.value.id, node.attr)
    if isinstance(node, ast.BinOp):
        a, b = (_operand_words(o, words) for o in (node.left, node.right))
        text = f"{a} {_BINOPS[type(node.op)][1]} {b}"
        if isinstance(node.op, ast.FloorDiv):  # the rounding said once, after the division
            text += ", rounded down"
        return text if top else f"({text})"
    if isinstance(node, ast.UnaryOp):
        inner = _words(node.operand, words, top=True)
        if needs_parens(node.operand, node) or isinstance(node.operand, ast.BinOp | ast.Call):
            inner = f"({inner})"
        return f"not {inner}" if isinstance(node.op, ast.Not) else f"minus {inner}"
    if isinstance(node, ast.BoolOp):
        joiner = " and " if isinstance(node.op, ast.And) else " or "
        parts = []
        for v in node.values:
            said = _words(v, words, top=True)
            parts.append(f"({said})" if needs_parens(v, node, True) else said)
        return joiner.join(parts)
    if isinstance(node, ast.Compare):
        # "your completed rubble sets: at least 2" reads right for singular and plural alike.
        parts = [_words(node.left, words) + ":"]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts.append(_CMPOPS[type(op)][1])
            parts.append(_words(right, words))
        return " ".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        which = "larger" if node.func.id == "max" else "smaller"
        args = [_operand_words(a, words) for a in node.args]
        return f"the {which} of " + ", ".join(args[:-1]) + " and " + args[-1]
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover


def _operand_words(node: ast.expr, words: Callable[[str, str | None], str]) -> str:
    """An operand of arithmetic or an argument of max/min: bracketed when it is itself
    arithmetic or a max/min, so "the larger of 0 and (a minus b)" and "(the smaller of a and
    b) plus c" cannot be read another way."""
    if isinstance(node, ast.Call):
        return f"({_words(node, words, top=True)})"
    return _words(node, words)


# --- interval analysis -----------------------------------------------------------------------
#
# Every number a formula reads has a declared range (the vocabulary's `range:`, a param's
# value); walking the tree with intervals gives a range that holds for every value the formula
# can take. Bounds are whole numbers, or the floats -inf/+inf for "unbounded" (never any other
# float, so the arithmetic on finite bounds stays exact).

# (the intervals and their arithmetic are the IR's: ir/bounds.py)
_BOOL: Interval = BOOL


@dataclass(frozen=True)
class RangeProblem:
    """A divisor the analysis cannot prove positive: the divisor's text, column and range."""

    code: str
    message: str
    col: int
    reads: tuple[str, ...]  # the plain names the divisor reads


def interval(
    formula: Formula, ranges: Mapping[str, Interval]
) -> tuple[Interval, list[RangeProblem]]:
    """The range of the formula's value, given the ranges of the names it reads (`name.item`
    reads the range of `name`; a name without one can be any number), and the divisors that
    may be 0 or negative."""
    problems: list[RangeProblem] = []
    return _iv(formula.tree.body, ranges, problems), problems


def _iv(
    node: ast.expr,
    ranges: Mapping[str, Interval],
    problems: list[RangeProblem],
) -> Interval:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return _BOOL
        assert isinstance(node.value, int)
        return (node.value, node.value)
    if isinstance(node, ast.Name):
        return ranges.get(node.id, ANY)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return ranges.get(node.value.id, ANY)
    if isinstance(node, ast.BinOp):
        (a, b), (c, d) = _iv(node.left, ranges, problems), _iv(node.right, ranges, problems)
        if isinstance(node.op, ast.Add):
            return (a + c, b + d)
        if isinstance(node.op, ast.Sub):
            return (a - d, b - c)
        if isinstance(node.op, ast.Mult):
            corners = [mul(a, c), mul(a, d), mul(b, c), mul(b, d)]
            return (min(corners), max(corners))
        if c < 1:
            problems.append(
                RangeProblem(
                    "divisor-not-positive",
                    f"the divisor '{ast.unparse(node.right)}' "
                    + (
                        f"is {show_interval((c, d))}"
                        if c == d
                        else "can be 0"
                        if c <= 0 <= d
                        else "can be negative"
                    )
                    + "; a divisor must be at least 1",
                    node.right.col_offset,
                    tuple(n.id for n in ast.walk(node.right) if isinstance(n, ast.Name)),
                )
            )
            return ANY
        corners = [floordiv(a, c), floordiv(a, d), floordiv(b, c), floordiv(b, d)]
        return (min(corners), max(corners))
    if isinstance(node, ast.UnaryOp):
        inner = _iv(node.operand, ranges, problems)
        if isinstance(node.op, ast.Not):
            return _BOOL
        return (-inner[1], -inner[0])
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _iv(v, ranges, problems)
        return _BOOL
    if isinstance(node, ast.Compare):
        for v in [node.left, *node.comparators]:
            _iv(v, ranges, problems)
        return _BOOL
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_iv(a, ranges, problems) for a in node.args]
        pick = max if node.func.id == "max" else min
        return (pick(lo for lo, _ in args), pick(hi for _, hi in args))
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # pragma: no cover


def outcomes(formula: Formula, ranges: Mapping[str, Interval]) -> frozenset[bool]:
    """The truth values a condition can take, given the ranges of the names it reads (as
    `interval`): {True, False} unless the ranges prove it always true ({True}) or never
    ({False}). Over-approximated (each comparison on its own intervals), so a value left out
    is one the condition can never take."""
    return _outcomes(formula.tree.body, ranges)


_BOTH = frozenset((True, False))


def _outcomes(node: ast.expr, ranges: Mapping[str, Interval]) -> frozenset[bool]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return frozenset((node.value,))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return frozenset(not v for v in _outcomes(node.operand, ranges))
    if isinstance(node, ast.BoolOp):
        each = [_outcomes(v, ranges) for v in node.values]
        stop = isinstance(node.op, ast.Or)  # the value that decides: True for `or`
        out: set[bool] = set()
        if any(stop in e for e in each):
            out.add(stop)
        if all((not stop) in e for e in each):
            out.add(not stop)
        return frozenset(out)
    if isinstance(node, ast.Compare):  # `a < b < c`: each comparison holds
        operands = [node.left, *node.comparators]
        each = [_compares(type(op), _iv(a, ranges, []), _iv(b, ranges, []))
                for op, a, b in zip(node.ops, operands[:-1], operands[1:], strict=True)]
        out = set[bool]()
        if all(True in e for e in each):
            out.add(True)
        if any(False in e for e in each):
            out.add(False)
        return frozenset(out)
    return _BOTH


def _compares(op: type[ast.cmpop], a: Interval, b: Interval) -> frozenset[bool]:
    """The truth values `x OP y` can take for x in `a` and y in `b` (whole numbers)."""
    (a0, a1), (b0, b1) = a, b
    if op is ast.Gt:
        can_true, can_false = a1 > b0, a0 <= b1
    elif op is ast.GtE:
        can_true, can_false = a1 >= b0, a0 < b1
    elif op is ast.Lt:
        can_true, can_false = a0 < b1, a1 >= b0
    elif op is ast.LtE:
        can_true, can_false = a0 <= b1, a1 > b0
    else:  # == and !=
        meet = max(a0, b0) <= min(a1, b1)
        single = a0 == a1 == b0 == b1
        can_true, can_false = (meet, not single) if op is ast.Eq else (not single, meet)
    return frozenset(v for v, can in ((True, can_true), (False, can_false)) if can)
