"""The engine's public queries (`queries:` of rules/vocabulary.yaml) as functions.

Each query becomes one public function of the generated engine with its name: its arguments
checked in order (BadArgument, through the runtime's `_seat_arg`, `_id_arg`, ...), then its value
for the acting player. A query that reads alike in every rule set is one straight-line function;
one that differs (a variant changes its value) goes to the function of the game's rule set.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.core.encode import py_docstring, py_str
from lisboa_rules.emit.engine.pyfmt import fmt, identifier, wrap_line
from lisboa_rules.model.queries import Query, QueryArg


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


def _check(a: QueryArg, ids: str | None) -> list[str]:
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
        return [f"    if type({n}) is not {a.of}:", f"        _id_arg({n}, (), {words})"]
    return [f"    if type({n}) is not {a.of} or {n} not in {ids}:",
            f"        _id_arg({n}, {ids}, {words})"]


def query_view(per_ruleset: list[list[Query]], keys: list[tuple[str, ...]]) -> QueryView:
    """The functions of every rule set's queries; `keys` are the rule sets' RULESETS keys."""
    view = QueryView()
    order: list[str] = []
    for qs in per_ruleset:
        order += [q.name for q in qs if q.name not in order]
    ids_names: dict[str, str] = {}  # kind -> the code of its ids in a check

    def ids_of(a: QueryArg, present: list[tuple[tuple[str, ...], Query]]) -> str | None:
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
            ann = f"{name}: Final[dict[tuple[str, ...], tuple[{a.of}, ...]]]"
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
        lines = [f"def {name}(g: Game{', ' if params else ''}{params}) -> {first.returns}:",
                 *_docstring(first.words)]
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
