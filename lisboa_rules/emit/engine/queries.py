"""The engine's public queries (`queries:` of rules/vocabulary.yaml) as functions.

Each query becomes one public function of the generated engine with its name: its arguments
checked in order (BadArgument, through the runtime's `_seat_arg`, `_id_arg`, ...), then its value
for the acting player; what is no Game is BadArgument, and a Game changed by hand that fails it is
refused as every entry point refuses one (`_broken`: StateError at the field's path). A query
that reads alike in every rule set is one straight-line function; one that differs (a variant
changes its value) goes to the function of the game's rule set. The model's queries
(`model/queries.py`: their types and values as IR) are printed first, each rule set's with the
names its engine gives what the rules name (`python_queries`).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.core.encode import py_docstring, py_str
from lisboa_rules.emit.engine.pyfmt import fmt, identifier, wrap_line
from lisboa_rules.ir.reads import reads_player
from lisboa_rules.ir.types import TEXT
from lisboa_rules.model.queries import Query
from lisboa_rules.pyprint import expr as pyprint
from lisboa_rules.pyprint.expr import Names


@dataclass(frozen=True)
class PyArg:
    """A query's argument as the engine checks it: `annotation` its Python type."""

    name: str
    kind: str
    words: str
    annotation: str
    ids: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class PyQuery:
    """A query printed as Python: `code` its value as an expression of `g` (and of the acting
    player `p`, bound by `acting`) and of the arguments."""

    name: str
    args: tuple[PyArg, ...]
    words: str
    returns: str
    acting: str | None  # the statement that binds `p`, "" when `p` is the argument itself
    code: str

    @property
    def signature(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((a.name, a.kind, a.annotation) for a in self.args)


def _acting(q: Query) -> str | None:
    arg = next((a for a in q.args if a.name == q.acting), None)
    if arg is None:
        return None
    if arg.kind == "seat":
        return f"p = g.players[{arg.name}]"
    return "" if arg.name == "p" else f"p = {arg.name}"


def python_query(q: Query, n: Names) -> PyQuery:
    """A query of a rule set printed with `n`, the names of its rule set's engine."""
    if q.acting is None and not reads_player(q.value):
        # no acting player: a measure it reads (of the game alone) is inlined, never called
        # as a function of the game and the player
        n = replace(n, measure=None, memo=None)
    code = pyprint.bare(pyprint.expr(q.value, n))
    if q.returns == TEXT:
        code = f"str({code})"  # a table's column of text may hold None in other rows
    args = tuple(PyArg(a.name, a.kind, a.words, pyprint.annotation(a.type, n), a.ids)
                 for a in q.args)
    return PyQuery(q.name, args, q.words, pyprint.annotation(q.returns, n), _acting(q), code)


def python_queries(queries: list[Query], n: Names) -> list[PyQuery]:
    return [python_query(q, n) for q in queries]


@dataclass
class QueryView:
    functions: list[str] = field(default_factory=list)  # source blocks, in emission order
    tables: list[tuple[str, str]] = field(default_factory=list)  # (name, literal)
    names: list[str] = field(default_factory=list)  # the public functions, for __all__


def _docstring(words: str) -> list[str]:
    lines = textwrap.wrap(" ".join(words.split()), 92) or [""]
    out = [f'    """{py_docstring(lines[0])}']
    out += [f"    {py_docstring(line)}" for line in lines[1:]]
    out[-1] += '"""'
    return out


def _check(a: PyArg, ids: str | None) -> list[str]:
    """The lines that check an argument (the runtime's helper raises BadArgument)."""
    n, words = a.name, py_str(a.words)
    if a.kind == "seat":
        return [f"    if type({n}) is not int or not 0 <= {n} < len(g.players):",
                f"        _seat_arg(g, {n})"]
    if a.kind == "player":
        return [f"    _player_arg({n})"]  # (typed a Player: an isinstance test is unreachable)
    if a.kind == "count":
        return [f"    if type({n}) is not int or {n} < 0:", f"        _count_arg({n}, {words})"]
    if a.kind == "int":
        return [f"    if type({n}) is not int:", f"        _int_arg({n}, {words})"]
    if ids is None:  # an open kind: any id of its type
        return [f"    if type({n}) is not {a.annotation}:", f"        _id_arg({n}, (), {words})"]
    return [f"    if type({n}) is not {a.annotation} or {n} not in {ids}:",
            f"        _id_arg({n}, {ids}, {words})"]


def query_view(per_ruleset: list[list[PyQuery]], keys: list[tuple[str, ...]]) -> QueryView:
    """The functions of every rule set's queries; `keys` are the rule sets' RULESETS keys."""
    view = QueryView()
    order: list[str] = []
    for qs in per_ruleset:
        order += [q.name for q in qs if q.name not in order]
    ids_names: dict[str, str] = {}  # kind -> the code of its ids in a check

    def ids_of(a: PyArg, present: list[tuple[tuple[str, ...], PyQuery]]) -> str | None:
        if a.ids is None:
            return None
        if a.kind in ids_names:
            return ids_names[a.kind]
        name = f"_IDS_{grammar.stem(a.kind)}"
        by_key = {key: next(x for x in q.args if x.kind == a.kind).ids for key, q in present}
        values = list(by_key.values())
        if all(v == values[0] for v in values):
            view.tables.append((f"{name}: Final", fmt(tuple(values[0] or ()), 0, "",
                                                       len(name) + 9)))
            ids_names[a.kind] = name
        else:
            ann = f"{name}: Final[dict[tuple[str, ...], tuple[{a.annotation}, ...]]]"
            table = {k: tuple(v or ()) for k, v in by_key.items()}
            view.tables.append((ann, fmt(table, 0, "", len(ann) + 3)))
            ids_names[a.kind] = f"{name}[tuple(g.variants)]"
        return ids_names[a.kind]

    for qname in order:
        found = [(key, next((q for q in qs if q.name == qname), None))
                 for key, qs in zip(keys, per_ruleset, strict=True)]
        first = next(q for _, q in found if q is not None)
        # a rule set whose query has other arguments cannot share the function's signature
        present = [(k, q) for k, q in found if q is not None and q.signature == first.signature]
        name = identifier(qname)
        params = ", ".join(f"{a.name}: {a.annotation}" for a in first.args)
        head = [f"def {name}(g: Game{', ' if params else ''}{params}) -> {first.returns}:",
                *_docstring(first.words)]
        lines: list[str] = ["    _activate(g)"]
        for a in first.args:
            lines += _check(a, ids_of(a, present))
        codes = {q.code for _, q in present}
        actings = {q.acting for _, q in present}
        helpers: list[str] = []
        if len(codes) == 1 and len(present) == len(found) and len(actings) == 1:
            if first.acting:
                lines.append(f"    {first.acting}")
            lines.append(f"    return {first.code}")
        else:
            mine = [a.name for a in first.args if a.name != "p"]
            by_code: dict[tuple[str, str | None], str] = {}
            table: dict[tuple[str, ...], str] = {}
            for key, q in present:
                fn = by_code.get((q.code, q.acting))
                if fn is None:
                    fn = by_code[(q.code, q.acting)] = f"_query_{name}_{len(by_code) + 1}"
                    sig = ["g: Game", *(["p: Player"] if q.acting is not None else []),
                           *(f"{a.name}: {a.annotation}" for a in q.args if a.name != "p")]
                    helpers.append("\n".join(w for line in (
                        f"def {fn}({', '.join(sig)}) -> {q.returns}:", f"    return {q.code}")
                        for w in wrap_line(line)))
                table[key] = fn
            dispatch = f"_QUERY_{name}"
            returns = first.returns
            helpers.append(f"{dispatch}: Final[dict[tuple[str, ...], Callable[..., {returns}]]]"
                           " = {\n" + "".join(f"    {fmt(k)}: {v},\n" for k, v in table.items())
                           + "}")
            if first.acting:
                lines.append(f"    {first.acting}")
            call_args = ", ".join(["g", *(["p"] if first.acting is not None else []), *mine])
            missing = py_str(f"{qname} is not a query of these rules")
            lines += [f"    fn = {dispatch}.get(tuple(g.variants))",
                      "    if fn is None:",
                      f"        raise BadArgument({missing})",
                      f"    return fn({call_args})"]
        # (a Game changed by hand fails somewhere inside: refused as the entry points refuse it)
        lines = [*head, "    try:", *("    " + line for line in lines), "    except _REFUSALS:",
                 "        raise", "    except _FAULTS as exc:",
                 "        raise _broken(g, exc) from None"]
        view.functions += helpers
        view.functions.append("\n".join(w for line in lines for w in wrap_line(line)))
        view.names.append(qname)
    return view


def sorted_exports(names: list[str]) -> list[str]:
    """Names in the order ruff's RUF022 keeps `__all__`: SCREAMING_CASE, CamelCase, the rest."""

    def key(n: str) -> tuple[int, Any]:
        if n.isupper() or (n.upper() == n and any(c.isalpha() for c in n)):
            group = 0
        elif n[:1].isupper():
            group = 1
        else:
            group = 2
        return group, [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]

    return sorted(set(names), key=key)
