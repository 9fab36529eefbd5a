"""The engine's public queries (`queries:` of rules/vocabulary.yaml), checked and compiled.

A query is a public function of the generated engine: its arguments are checked in order (a seat
of the game, a player of it, a count, an int, or an id of a kind of rules/state.yaml), then its
`value`, an expression of the effect language (`typed.py`), is read for the acting player (the
first seat or player argument). A compiled query holds its value as IR (`ir/expr.py`) and its
types as the IR's (`VType`). The model builder reports every problem of every query, located;
the engine emitter prints the compiled queries as functions (`emit/engine/queries.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.reads import reads_player
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import Name, Scope, VType
from lisboa_rules.model.procs import ExprProblem
from lisboa_rules.model.state import StateDecl

# the kinds of argument the engine checks itself (the others are kinds of ids of the state)
ARG_KINDS = ("seat", "player", "count", "int")
_ARG_WORDS = {"count": "a count", "int": "a number"}


@dataclass(frozen=True)
class QueryArg:
    name: str
    kind: str  # one of ARG_KINDS, or a kind of ids
    words: str  # what the argument is, for the message of a bad one
    type: VType  # its type: a seat, a player, an int, or an id of its kind
    ids: tuple[Any, ...] | None = None  # for a kind of ids: its ids in these rules (None: open)


@dataclass(frozen=True)
class Query:
    """A query compiled for one rule set: `value` is its value, read for the acting player
    (given by the argument `acting`, a seat or a player; None: the value reads no player)."""

    name: str
    args: tuple[QueryArg, ...]
    words: str
    returns: VType  # a number, a condition or a text
    acting: str | None
    value: ir.Expr


def _bad_name(name: str) -> str | None:
    """Why `name` cannot be a query's or an argument's name (the grammar of core/names.py,
    which the front end checked at load: asserted again here)."""
    return grammar.problem(name, bare=True)


def compile_queries(rows: Any, decl: StateDecl, scope: Scope
                    ) -> tuple[list[Query], list[ExprProblem]]:
    """Every query of `rows` (the `queries:` list) compiled in `scope` (the scope of a step);
    the problems of all of them, with paths into the vocabulary document."""
    out: list[Query] = []
    problems: list[ExprProblem] = []
    taken = grammar.runtime_names()
    names: set[str] = set()
    kinds = [k.id for k in decl.kinds]
    for i, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, Mapping):
            continue
        path: tuple[str | int, ...] = ("vocabulary", "queries", i)

        def problem(code: str, message: str, *where: str | int, suggestion: str | None = None,
                    source: str = "", col: int = 0, at: tuple[str | int, ...] = path) -> None:
            problems.append(ExprProblem(code, message, (*at, *where), suggestion, source, col))

        qname = str(row.get("name"))
        why = _bad_name(qname) or ("is a name the engine has already" if qname in taken
                                   else "is the name of another query" if qname in names
                                   else None)
        if why:
            problem("query-name", f"query '{qname}' {why}: name it otherwise", "name")
        names.add(qname)
        args: list[QueryArg] = []
        local_names: dict[str, Name] = {}
        acting: str | None = None  # the argument that gives the acting player
        ok, args_ok = why is None, True
        seen: set[str] = set()
        for j, a in enumerate(row.get("args") or []):
            if not isinstance(a, Mapping):
                continue
            aname, akind = str(a.get("name")), str(a.get("kind"))
            apath = (*path, "args", j)
            acting_player = akind == "player" and acting is None
            bad = _bad_name(aname) or (
                "is the game's name in the engine" if aname == "g"
                else "is the acting player's name in the engine, for an argument of kind "
                "player only" if aname == "p" and not acting_player
                else "is the name of another argument" if aname in seen else None)
            seen.add(aname)
            if bad:
                problem("query-name", f"argument '{aname}' of query '{qname}' {bad}: name it "
                        "otherwise", "name", at=apath)
                ok = args_ok = False
                continue
            words = a.get("words")
            if akind == "seat":
                seat = VType("seat")
                arg = QueryArg(aname, akind, str(words or "a seat"), seat)
                if acting is None:
                    acting = aname
                    local_names["seat"] = Name(seat, ir.Arg(aname))
                local_names[aname] = Name(seat, ir.Arg(aname))
            elif akind == "player":
                arg = QueryArg(aname, akind, str(words or "a player"), VType("player"))
                if acting_player:
                    acting = aname
                    local_names[aname] = Name(VType("player"), ir.Me())
                else:
                    local_names[aname] = Name(VType("player"), ir.Arg(aname))
            elif akind in _ARG_WORDS:
                arg = QueryArg(aname, akind, str(words or _ARG_WORDS[akind]), typed.INT)
                local_names[aname] = Name(typed.INT, ir.Arg(aname))
            elif (k := decl.kind(akind)) is not None:
                arg = QueryArg(aname, akind, str(words or k.text), VType(akind), k.values)
                local_names[aname] = Name(VType(akind), ir.Arg(aname))
            else:
                problem("query-kind", f"argument '{aname}' of query '{qname}' is of kind "
                        f"'{akind}': the engine checks {', '.join(ARG_KINDS)} or the kinds of "
                        "rules/state.yaml", "kind", at=apath,
                        suggestion=typed.closest(akind, [*ARG_KINDS, *kinds]))
                ok = args_ok = False
                continue
            args.append(arg)
        if not args_ok:
            continue  # the value would read an argument left out: its problems would follow
        qscope = replace(scope, locals=local_names)
        source = row.get("value")
        try:
            t = typed.check(source, qscope)
        except typed.ExprError as exc:
            text = source if isinstance(source, str) else ""
            shown = exc.message if f"'{text}'" in exc.message else f"{exc.message} (in '{text}')"
            problem(exc.code, f"query '{qname}': {shown}", "value", suggestion=exc.suggestion,
                    source=text, col=exc.col)
            continue
        if t.type.optional or t.type.name in ("list", "map", "player", "none", "any", "effects"):
            problem("expr-type", f"query '{qname}': '{source}' is {typed.describe(t.type)}; a "
                    "query gives a number, a condition or a text", "value")
            continue
        returns = (typed.BOOL if t.type == typed.BOOL
                   else typed.INT if typed.compatible(t.type, typed.INT, qscope.int_kinds)
                   else typed.TEXT)
        if acting is None and reads_player(t.node):
            problem("unknown-name", f"query '{qname}' reads a player's state, but it has no "
                    "seat or player argument: give it one", "value")
            continue
        if ok:
            out.append(Query(qname, tuple(args), str(row.get("words") or ""), returns, acting,
                             t.node))
    return out, problems
