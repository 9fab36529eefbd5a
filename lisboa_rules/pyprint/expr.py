"""The IR's expressions printed as Python for the generated engine.

Every compound expression is printed in parentheses, so a printed expression can stand in any
other; `bare` takes one pair off where the context needs none. The names the engine gives
what the rules name come from here: a local `x` is `v_x`, the acting player `p`, a field
`p.reis` / `g.favors`; a long constant, a column of a table and a long measure are named by
the `Names` the printer is given (the emitter's tables, shared by the rule sets of a build).
A value the generated code holds in a local is printed as that local (`holding`). What the
printed code reads (`printed`, `calls`, `reads_state`, `hands_on_player`) is found from the
nodes and the printer's own decisions, never by reading the code back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from lisboa_rules.core import names
from lisboa_rules.core.encode import py_str
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.types import VType

LONG = 40  # a constant whose code is longer is named once (`Names.constant`)
LONG_MEASURE = 60  # a measure whose code is longer is a function of its own


@dataclass(frozen=True)
class Names:
    """How the engine names what the rules name once: a long constant (by its code), a column
    of a kind's table, a measure's function (by its id, annotation and code), and the kinds
    whose ids are ints or text (for annotations)."""

    constant: Callable[[str, Any], str] | None = None
    table: Callable[[str, str], str] | None = None
    measure: Callable[[str, str, str], str] | None = None
    int_kinds: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    slot: str = "{name}__"  # how a slot is printed (its name upper-cased in {name})
    # what was printed already, by node (the checker prints each node it builds, so a
    # parent's children are found here, not printed again); None: nothing is kept
    memo: dict[int, tuple[ir.Expr, str]] | None = field(default=None, compare=False, repr=False)
    # values the generated code holds in locals of its own, by node: such a node is printed
    # as its local (`holding`); `plain` is these names without them, which a measure's
    # function is printed with
    held: Mapping[ir.Expr, str] = field(default_factory=dict, compare=False, repr=False)
    plain: Names | None = field(default=None, compare=False, repr=False)


PLAIN = Names()


def holding(n: Names, held: Mapping[ir.Expr, str]) -> Names:
    """`n`, printing each node of `held` (and each node equal to it) as the name of the local
    that holds its value: a value the generated code computes once, or has at hand."""
    base = n.plain or n
    if not held:
        return base
    return replace(base, held=dict(held), plain=base, memo=None)


def local(name: str) -> str:
    """The Python name of a local of the effect language (a name of the rules' grammar, which
    the front end checked where it is written: asserted again here)."""
    return "v_" + names.check(name)


def bare(code: str) -> str:
    """`code` without one pair of parentheses around all of it."""
    if not (code.startswith("(") and code.endswith(")")):
        return code
    depth = 0
    for i, ch in enumerate(code):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(code) - 1:
            return code
    inner = code[1:-1]
    depth = 0
    quote = ""
    for ch in inner:  # a tuple keeps its parentheses
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            return code
    return inner or code


def constant(value: Any) -> str:
    """A constant of the rules data as Python: lists become tuples (folded by the compiler)."""
    if isinstance(value, list | tuple):
        items = [constant(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{constant(k)}: {constant(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return py_str(value)
    return repr(value)


def annotation(t: VType, n: Names = PLAIN) -> str:
    """The Python annotation of a value of type t; a kind's id is an int or a str
    (`int_kinds`, `kinds`), which mypyc compiles to typed operations."""
    if t.name in ("int", "seat") or t.name in n.int_kinds:
        base = "int"
    elif t.name == "text" or t.name in n.kinds:
        base = "str"
    elif t.name == "bool":
        base = "bool"
    elif t.name == "list":
        base = f"Sequence[{annotation(t.args[0], n)}]"
    elif t.name == "map":
        base = f"dict[{annotation(t.args[0], n)}, {annotation(t.args[1], n)}]"
    elif t.name == "player":
        base = "Player"
    else:
        base = "Any"
    return f"{base} | None" if t.optional and base != "Any" else base


def _named(code: str, value: Any, n: Names) -> str:
    """A constant's code, or the name a long one is given (by its code; `value`: what it is)."""
    return n.constant(code, value) if len(code) > LONG and n.constant is not None else code


def expr(node: ir.Expr, n: Names = PLAIN) -> str:
    """The node as Python, fully parenthesised where it is compound."""
    if n.held:
        local = n.held.get(node)
        if local is not None:
            return local
    memo = n.memo
    if memo is None:
        return _expr(node, n)
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    code = _expr(node, n)
    memo[id(node)] = (node, code)
    return code


def _expr(node: ir.Expr, n: Names) -> str:
    match node:
        case ir.Lit(value=v):
            return py_str(v) if isinstance(v, str) else repr(v)
        case ir.Data(value=v):
            code = constant(v)
            # a long list or table is named once; a text stays a literal (where the words of
            # the rules are, whatever their length, the code is the same)
            return code if isinstance(v, str) else _named(code, v, n)
        case ir.Local(name=name):
            return local(name)
        case ir.Arg(name=name):
            return names.check(name)
        case ir.Seat():
            return "seat"
        case ir.Me():
            return "p"
        case ir.Slot(name=name):
            return n.slot.format(name=name.upper())
        case ir.Context(name=name):
            return f"x.{names.check(name)}"
        case ir.PlayerField(field=f, of=of):
            return f"{expr(of, n)}.{f}"
        case ir.GameField(field=f):
            return f"g.{f}"
        case ir.Column(kind=kind, column=col, key=key):
            if n.table is None:
                raise ValueError(f"no name for the column {kind}.{col}")
            return f"{n.table(kind, col)}[{expr(key, n)}]"
        case ir.Measure(id=mid, body=body, type=t):
            plain = n.plain or n
            code = bare(expr(body, plain))
            if plain.measure is not None and _long(code):
                return f"{plain.measure(mid, annotation(t), code)}(g, p)"
            return code if plain is n else bare(expr(body, n))
        case ir.Index(base=b, key=k):
            return f"{expr(b, n)}[{expr(k, n)}]"
        case ir.Get(base=b, key=k, default=d):
            return f"{expr(b, n)}.get({expr(k, n)}, {expr(d, n)})"
        case ir.BinOp(op=op, left=a, right=b):
            return f"({_operand(a, n)} {op} {_operand(b, n)})"
        case ir.Neg(operand=x):
            return f"(-{_operand(x, n)})"
        case ir.Not(operand=x):
            return f"(not {_operand(x, n)})"
        case ir.BoolOp(op=op, values=vs):
            return "(" + f" {op} ".join(_operand(v, n) for v in vs) + ")"
        case ir.Compare(left=left, ops=ops):
            parts = []
            lhs = _operand(left, n)
            for cmp, right in ops:
                rhs = _operand(right, n)
                parts.append(f"{lhs} {cmp} {rhs}")
                lhs = rhs
            return "(" + " and ".join(parts) + ")"
        case ir.Cond(test=c, then=a, orelse=b):
            return f"({expr(a, n)} if {expr(c, n)} else {expr(b, n)})"
        case ir.Call(fn=fn, args=args):
            return _call(fn, args, n)
        case ir.Values(table=t):
            return f"{expr(t, n)}.values()"
        case ir.Keys(source=s, is_table=is_table, order=order, full=full):
            src = expr(s, n)
            if not is_table:
                return src
            if order is None:
                return f"sorted({src})"
            const = _named(constant(list(order)), list(order), n)
            return const if full else f"[k for k in {const} if k in {src}]"
        case ir.ListOf(items=items):
            return "[" + ", ".join(expr(i, n) for i in items) + "]"
        case ir.EmptyTable():
            return "{}"
        case ir.Comp():
            return f"[{_comp(node, n)}]"
        case ir.Cost(id=cid, given=given):
            if not given:
                ctx = "_NO_CTX"
            elif len(given) == 1:  # one value: the engine's cache of contexts by that name
                ctx = f"_ctx_{names.check(given[0][0])}({bare(expr(given[0][1], n))})"
            else:
                ctx = "_ctx(" + ", ".join(f"{names.check(k)}={expr(v, n)}"
                                          for k, v in given) + ")"
            return f"g.rs.costs[{py_str(cid)}](g, p, {ctx})"
        case _:
            assert_never(node)


_COMPOUND = (ir.BinOp, ir.Neg, ir.Not, ir.BoolOp, ir.Compare, ir.Cond)


def _operand(node: ir.Expr, n: Names) -> str:
    """An operand of an operator: a measure printed in place is its body without brackets
    (where it stands alone), so here, where it is compound, it gets them back:
    `2 * warehouse_room` is twice the whole measure, not `2 * 6 + ... - goods`."""
    code = expr(node, n)
    if isinstance(node, ir.Measure) and isinstance(node.body, _COMPOUND) \
            and not is_function(node, n):
        return f"({code})"
    return code


def _comp(node: ir.Comp, n: Names) -> str:
    where = "".join(f" if {expr(c, n)}" for c in node.conds)
    return f"{expr(node.elt, n)} for {local(node.var)} in {expr(node.source, n)}{where}"


def _call(fn: ir.Function, args: tuple[ir.Expr, ...], n: Names) -> str:
    if fn == "range":
        return f"_range({bare(expr(args[0], n))})"  # the runtime's: bounded
    if fn == "reversed":
        return f"list(reversed({expr(args[0], n)}))"
    if fn == "first":  # the first item of a non-empty list
        a = args[0]
        if isinstance(a, ir.Comp):
            return f"next({_comp(a, n)})"
        return f"{expr(a, n)}[0]"
    if fn == "first_or":  # the first item, or the default of an empty list
        a, d = args
        items = f"({_comp(a, n)})" if isinstance(a, ir.Comp) else f"iter({expr(a, n)})"
        return f"next({items}, {expr(d, n)})"
    if fn in ("min_or", "max_or"):
        a, d = args
        items = f"({_comp(a, n)})" if isinstance(a, ir.Comp) else expr(a, n)
        return f"{fn[:3]}({items}, default={expr(d, n)})"
    if fn in ("any", "all") and len(args) == 1 and isinstance(args[0], ir.Comp):
        return f"{fn}({_comp(args[0], n)})"  # a generator: each item tested as it comes
    if fn == "sum" and len(args) == 1 and isinstance(args[0], ir.Comp):
        # a generator: no list made (and mypyc compiles `sum` of one into a loop)
        return f"sum({_comp(args[0], n)})"
    return f"{fn}({', '.join(expr(a, n) for a in args)})"


# --- what printed code reads -------------------------------------------------------------------


def _long(code: str) -> bool:
    """Whether a measure's code is a function of its own: a long one, or one that loops."""
    return " for " in code or len(code) > LONG_MEASURE


def is_function(node: ir.Measure, n: Names = PLAIN) -> bool:
    """Whether the measure is printed as a call of a function of its own, `_m_x(g, p)` (a long
    one, or one that loops), rather than in place."""
    plain = n.plain or n
    return plain.measure is not None and _long(bare(expr(node.body, plain)))


def _printed_children(node: ir.Expr) -> tuple[ir.Expr, ...]:
    """A node's children in the order their code is printed."""
    if isinstance(node, ir.Cond):
        return (node.then, node.test, node.orelse)  # `then if test else orelse`
    if isinstance(node, ir.Comp):
        return (node.elt, node.source, *node.conds)  # `[elt for v in source if cond]`
    return ir.children(node)


def printed(node: ir.Expr, n: Names = PLAIN) -> Iterator[ir.Expr]:
    """The nodes whose code the node's code holds, in the order it is printed: a measure
    printed in place is its body's nodes, one printed as a call is itself alone; a held node
    (`holding`) is printed as its local, so it and what is inside it are not there."""
    if n.held and node in n.held:
        return
    yield node
    if isinstance(node, ir.Measure):
        if not is_function(node, n):
            yield from printed(node.body, n)
        return
    for c in _printed_children(node):
        yield from printed(c, n)


def calls(node: ir.Expr, n: Names = PLAIN) -> list[ir.Measure]:
    """The measures the node's code calls the functions of (`is_function`), each once, in the
    order their calls are printed."""
    found: list[ir.Measure] = []
    for x in printed(node, n):
        if isinstance(x, ir.Measure) and is_function(x, n) and x not in found:
            found.append(x)
    return found


def reads_state(node: ir.Expr, n: Names = PLAIN) -> bool:
    """Whether the node's code names the game `g` or the acting player `p`: reads a field, or
    hands them to a measure's function or a cost."""
    return any(isinstance(x, ir.Me | ir.GameField | ir.Cost)
               or (isinstance(x, ir.Measure) and is_function(x, n)) for x in printed(node, n))


def uses_player(node: ir.Expr, n: Names = PLAIN) -> bool:
    """Whether the node's code names the acting player `p` (a field of theirs, the player
    itself, a cost or a measure's function handed them)."""
    return any(isinstance(x, ir.Me | ir.Cost) or (isinstance(x, ir.Measure) and is_function(x, n))
               for x in printed(node, n))


def hands_on_player(node: ir.Expr, n: Names = PLAIN) -> bool:
    """Whether the node's code hands the acting player `p` itself on (to a measure's function,
    a cost, or as a value), rather than only reading its fields (`p.reis`)."""
    if n.held and node in n.held:
        return False
    if isinstance(node, ir.PlayerField) and isinstance(node.of, ir.Me):
        return False
    if isinstance(node, ir.Me | ir.Cost):
        return True
    if isinstance(node, ir.Measure):
        return is_function(node, n) or hands_on_player(node.body, n)
    return any(hands_on_player(c, n) for c in ir.children(node))
