"""The effect language: procedures written in rules/ as lists of typed steps.

A step is a mapping with one effect key and its own words (`text`), an optional `id` (so a
variant can change or insert steps) and `rule` (the rule a refusal names):

    gain: {PLACE: EXPR, ...}     add to a number in the state (clamped to its declared bounds;
                                 without a maximum, at 2**63 - 1)
    set: {PLACE: EXPR, ...}      put a value in the state
    let: {NAME: EXPR, ...}       name a value for the steps below
    move: {item|top|first: EXPR, from: PLACE, to: PLACE}
                                 move one item, or the N top (last) or first items of a list
    require: COND  reason: TEXT  refuse unless COND holds (the reason may show {EXPR}s)
    choose: {as: NAME, from: EXPR, where: COND, optional: true, min: N, max: EXPR}
                                 the player's choice, one of a list (or min..max of it)
    if: COND  then: [STEPS]  else: [STEPS]
    for_each: {as: NAME, in: EXPR}  do: [STEPS]
    repeat: EXPR  do: [STEPS]
    do: PROCEDURE  with: {PARAM: EXPR}    carry out another procedure
    drop: PLACE                  take an entry out of a table of the state
    raise: EVENT  (or {event: EVENT, with: {PARAM: EXPR}})
                                 carry out the hooks of an event (`hooks:` in rules/effects.yaml)
    shuffle: PLACE               shuffle a list of the state with the game's seeded stream of
                                 the procedure (one stream per procedure run, shared by all of
                                 its shuffles, seeded by the game's seed and the procedure's id)
    new: PLACE  with: {FIELD: EXPR}
                                 append a new player to a list of players: the fields given,
                                 the others at their declared defaults

Each kind of step is a frozen class of `tree.py` (`Gain`, `Set`, …, `New`; re-exported here
with `parse_steps`, `Procedure` and `StepProblem`), with typed fields for what its YAML holds,
read once by `parse_steps` (a value of the wrong shape is a located `step-shape` problem there).
`Step` is their union; the compiler matches on the classes, and each dispatch ends in
`assert_never`, so that a new kind no dispatch handles fails mypy.

A procedure's chooses and requires come first (its guard); its effects follow. The compiler
turns each procedure into three straight-line functions of the generated engine: the choices
that pass the guard (`_opts_…`), why a given choice does not (`_why_…`), and the effects
(`_run_…`). Expressions are checked by `typed.py` against the declared state.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, assert_never

from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.ir import const
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir.logic import negated
from lisboa_rules.lang import typed
from lisboa_rules.lang.tree import COMMON as COMMON
from lisboa_rules.lang.tree import KINDS as KINDS
from lisboa_rules.lang.tree import MAX_NESTING as MAX_NESTING
from lisboa_rules.lang.tree import STEP_CLASSES as STEP_CLASSES
from lisboa_rules.lang.tree import Apply as Apply
from lisboa_rules.lang.tree import Choose as Choose
from lisboa_rules.lang.tree import Do as Do
from lisboa_rules.lang.tree import Drop as Drop
from lisboa_rules.lang.tree import Expr as Expr
from lisboa_rules.lang.tree import ForEach as ForEach
from lisboa_rules.lang.tree import Gain as Gain
from lisboa_rules.lang.tree import If as If
from lisboa_rules.lang.tree import Leads as Leads
from lisboa_rules.lang.tree import Let as Let
from lisboa_rules.lang.tree import Move as Move
from lisboa_rules.lang.tree import New as New
from lisboa_rules.lang.tree import Param as Param
from lisboa_rules.lang.tree import Procedure as Procedure
from lisboa_rules.lang.tree import Raise as Raise
from lisboa_rules.lang.tree import Repeat as Repeat
from lisboa_rules.lang.tree import Require as Require
from lisboa_rules.lang.tree import Set as Set
from lisboa_rules.lang.tree import Shuffle as Shuffle
from lisboa_rules.lang.tree import Step as Step
from lisboa_rules.lang.tree import StepBase as StepBase
from lisboa_rules.lang.tree import StepProblem as StepProblem
from lisboa_rules.lang.tree import branches as branches
from lisboa_rules.lang.tree import parse_steps as parse_steps
from lisboa_rules.lang.typed import BOOL, INT, TEXT, ExprError, Name, Scope, Typed, VType
from lisboa_rules.lang.typed import bare as bare
from lisboa_rules.pyprint import expr as pyprint

# --- compiling --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Anchor(StepBase):
    """A place of the rules that is no step, where the step compiler checks an expression or
    reports a problem (a row of rules/flow.yaml `phases`): always with the key it is at."""


@dataclass
class Emitted:
    """The three functions of a procedure, as Python source lines."""

    opts: list[str]
    why: list[str]
    run: list[str]


@dataclass(frozen=True)
class One:
    """A choice of one item: the code of the items to go through (each once) and what they
    are (`keys`), the condition an item must meet (as a node and as code), whether None (no
    choice) is allowed, and the scope with the chosen name bound."""

    over: str
    keys: ir.Keys
    where: ir.Expr | None
    where_code: str | None
    optional: bool
    scope: Scope


_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def shows_choice(s: Choose) -> bool:
    """Whether a choose step's `reason` shows the value chosen (`card {card} is not in your
    hand`): such words cannot say what is wrong when no value was chosen at all."""
    reason = s.reason
    if reason is None:
        return False
    name = s.as_
    for m in _PLACEHOLDER.finditer(reason):
        try:
            tree = parse_expr(m.group(1).strip())
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree)):
            return True
    return False


def missing_choice(words: str) -> tuple[str, str]:
    """The refusal of a compulsory choice left empty, in two pieces: the fixed words and the
    words of what is missing (a kind's `text:` of rules/state.yaml, kept a piece of its own)."""
    return "choose ", words


class Compiler:
    """Compiles procedures against one rule set's scope. `name(proc_id)` gives the stem of a
    procedure's functions; `hooks[event]` the procedures an event runs."""

    def __init__(self, scope: Scope, procs: Mapping[str, Procedure],
                 hooks: Mapping[str, tuple[str, ...]], name: Callable[[str], str],
                 where: Callable[[tuple[str | int, ...]], str]) -> None:
        self.scope = scope
        self.procs = procs
        self.hooks = hooks
        self.name = name
        self.where = where  # "rules/x.yaml:LINE" for a step's comment
        self.problems: list[StepProblem] = []
        # names a step failed to bind (its expression was refused): their uses are not reported
        # again as unknown names, the first error says what is wrong
        self.unbound: set[str] = set()
        self.stream: str | None = None  # the procedure whose seeded stream shuffles draw from
        self.items = 0  # the items a move computes, each bound once (`_item_N`)

    # -- public -------------------------------------------------------------------------

    def signature(self, proc: Procedure, choices: bool) -> str:
        args = ["g: Game", "seat: int"]
        args += [f"{typed.local_code(p.name)}: {py_type(p.type, self.scope)}" for p in proc.params]
        if choices:
            args += [f"{typed.local_code(c.as_)}: Any" for c in proc.choices]
        return ", ".join(args)

    def choice_type(self, proc: Procedure) -> str:
        n = len(proc.choices)
        return "tuple[()]" if n == 0 else "tuple[" + ", ".join(["Any"] * n) + "]"

    def compile(self, proc: Procedure) -> Emitted:
        self.unbound = set()
        scope = self.scope.with_locals(**{p.name: Name(p.type, ir.Local(p.name))
                                          for p in proc.params})
        stem = self.name(proc.id)
        head = ["# " + py_comment(f"{self.where(proc.path)} {proc.id}")]
        # the guard, as a generator of choices
        opts = [*head, f"def _opts_{stem}({self.signature(proc, False)}) -> "
                f"list[{self.choice_type(proc)}]:", "    p = g.players[seat]",
                f"    out: list[{self.choice_type(proc)}] = []"]
        gscope = scope
        indent = 1
        chosen: list[str] = []
        for s in proc.guard:
            gscope, indent = self._guard_enum(s, proc, gscope, indent, chosen, opts)
        row = f"({chosen[0]},)" if len(chosen) == 1 else "(" + ", ".join(chosen) + ")"
        opts.append("    " * indent + f"out.append({row})")
        opts.append("    return out")
        # why a choice fails
        why = [f"def _why_{stem}({self.signature(proc, True)}) -> tuple[str, str] | None:",
               "    p = g.players[seat]"]
        wscope = scope
        for s in proc.guard:
            wscope = self._guard_why(s, proc, wscope, why)
        why.append("    return None")
        # the effects
        run = [f"def _run_{stem}({self.signature(proc, True)}) -> None:",
               "    p = g.players[seat]"]
        body: list[str] = []
        self.stream = proc.id
        if any(isinstance(x, Shuffle) for s in proc.effects for x in s.walk()):
            body.append(f"    rng = _rng(g, {py_str(proc.id)})")
        rscope = scope
        for s in proc.guard:
            match s:
                case Let():
                    rscope = self._let(s, rscope, 1, body)
                case Choose():
                    opts_ = self._options(s, rscope)
                    if opts_ is not None:
                        rscope = opts_[2]
                case Require():
                    pass
                case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                      | Raise() | Apply() | Shuffle() | New()):
                    pass  # never in a guard
                case _:
                    assert_never(s)
        for s in proc.effects:
            if isinstance(s, Require | Choose):
                self.problem(s, "step-order", f"a {s.kind} step comes before the effects of its "
                             "procedure (its guard); move it up, or split the procedure")
                self._check_misplaced(s, rscope)
                continue
            rscope = self._effect(s, rscope, 1, body)
        if all(line.strip().startswith("#") for line in body):
            body.append("    pass")
        run += body
        return Emitted(_tidy(opts), _tidy(why), _tidy(run))

    # -- problems -----------------------------------------------------------------------

    def problem(self, s: StepBase, code: str, message: str, key: str | None = None,
                suggestion: str | None = None) -> None:
        path = (*s.path, s.kind) if key is None else (*s.path, *key.split("/"))
        self.problems.append(StepProblem(code, message, path, suggestion))

    def follows_unbound(self, exc: ExprError) -> bool:
        """Whether `exc` is an unknown name that a step of this procedure failed to bind: the
        refused binding was reported, its uses are not."""
        if exc.code != "unknown-name" or not self.unbound:
            return False
        m = re.match(r"unknown name '([^']+)'", exc.message)
        return m is not None and m.group(1) in self.unbound

    def _past_unbound(self, source: Any, scope: Scope, want: VType | None) -> ExprError | None:
        """An unknown name of `source` that is none a step failed to bind (`reiss` in
        `x >= 0 and reiss >= 0`, x refused): checked again with those bound to a number, a
        truth value, a text or anything; any other error is left unsaid, it may only follow
        from the refused binding."""
        for t in (INT, BOOL, TEXT, typed.ANY):
            loose = scope.with_locals(**{n: Name(t, ir.Local(n))
                                         for n in sorted(self.unbound)})
            try:
                typed.check(source, loose, want)
            except ExprError as exc:
                m = re.match(r"unknown name '([^']+)'", exc.message)
                if exc.code == "unknown-name" and m is not None and m.group(1) not in self.unbound:
                    return exc
                continue
            return None
        return None

    def expr(self, s: StepBase, source: Any, scope: Scope, want: VType | None,
             key: str | None = None) -> Typed | None:
        try:
            return typed.check(source, scope, want)
        except ExprError as exc:
            if self.follows_unbound(exc):
                past = self._past_unbound(source, scope, want)  # another name may be unknown
                if past is None:
                    return None
                exc = past
            self.problems.append(StepProblem(exc.code, f"{exc.message} (in '{source}')",
                                             (*s.path, *(key or s.kind).split("/")),
                                             exc.suggestion))
            return None

    # -- the guard ----------------------------------------------------------------------

    def _rule(self, s: StepBase, proc: Procedure) -> str:
        return s.rule or proc.rule

    def _options(self, s: Choose, scope: Scope, parts: list[str] | None = None
                 ) -> tuple[str, VType, Scope] | None:
        """The options of a choose step as Python code, their item type, and the scope with
        the chosen name bound."""
        name = s.as_
        src = self.expr(s, s.source, scope, None, "choose/from")
        if src is None:
            self.unbound.add(name)
            return None
        if src.type.name not in ("list", "map"):
            self.problem(s, "expr-type", f"'{s.source}' is {typed.describe(src.type)}; "
                         "a choice is made from a list", "choose/from")
            return None
        item = src.type.args[0]
        code = src.code
        if s.where is not None:
            inner = scope.with_locals(it=Name(item, ir.Local("it")))
            cond = self.expr(s, s.where, inner, BOOL, "choose/where")
            if cond is None:
                return None
            code = f"[v_it for v_it in {code} if {cond.code}]"
        unique = f"list(dict.fromkeys({code}))"
        t = item
        if s.up_to is not None:  # any set of at most N items, in counting order (see _subsets)
            hi = self.expr(s, s.up_to, scope, INT, "choose/up_to")
            if hi is None:
                return None
            if parts is not None:
                parts += [unique, "0", bare(hi.code)]
            code = f"_subsets(sorted(dict.fromkeys({code})), {bare(hi.code)})"
            leads = s.leads
            if leads is not None:
                got = self._leads(s, leads, scope, item)
                if got is None:
                    return None
                code = f"[c for s_ in {code} for c in _led(s_, [{got} for v_it in s_])]"
                if parts is not None:  # the order is checked too: each set is listed once
                    parts.append(got)
            t = typed.list_of(item)
        elif s.leads is not None:
            self.problem(s, "step-shape", "leads: is a part of a choice of several "
                         "(choose: {as: NAME, from: EXPR, up_to: N, leads: {by: EXPR}})",
                         "choose/leads")
            return None
        elif s.min is not None or s.max is not None:
            lo = self.expr(s, 1 if s.min is None else s.min, scope, INT, "choose/min")
            hi = self.expr(s, s.max if s.max is not None else 1 if s.min is None else s.min,
                           scope, INT, "choose/max")
            if lo is None or hi is None:
                return None
            if parts is not None:
                parts += [unique, bare(lo.code), bare(hi.code)]
            code = (f"[c for k in range({bare(lo.code)}, {hi.code} + 1) "
                    f"for c in _combinations(sorted(dict.fromkeys({code})), k)]")
            t = typed.list_of(item)
        else:
            code = unique
        if s.optional:
            code = f"[None, *{code}]"
            t = VType(t.name, t.args, True, t.full)
        return code, t, scope.with_locals(**{name: Name(t, ir.Local(name))})

    def _leads(self, s: Choose, leads: Leads, scope: Scope, item: VType) -> str | None:
        """The code of an item's group (`it` is `v_it`) of a choice of several whose groups
        each have a leader: `leads: {by: EXPR, where: COND}`, None for an item in no group."""
        inner = scope.with_locals(it=Name(item, ir.Local("it")))
        by = self.expr(s, leads.by, inner, None, "choose/leads/by")
        if by is None:
            return None
        if leads.where is None:
            return bare(by.code)
        cond = self.expr(s, leads.where, inner, BOOL, "choose/leads/where")
        if cond is None:
            return None
        return f"({bare(by.code)} if {bare(cond.code)} else None)"

    def _single(self, s: Choose, scope: Scope) -> One | None:
        """A choice of one item (see `One`), with `it` being the chosen local; None for a
        choice of several."""
        if s.several or s.leads is not None:
            return None
        src = self.expr(s, s.source, scope, None, "choose/from")
        if src is None or src.type.name not in ("list", "map"):
            return None
        item = src.type.args[0]
        cond = None
        if s.where is not None:
            inner = scope.with_locals(it=Name(item, ir.Local(s.as_)))
            c = self.expr(s, s.where, inner, BOOL, "choose/where")
            if c is None:
                return None
            cond = c
        keys = scope.keys(src)
        over = pyprint.expr(keys, scope.names())
        if not self._distinct(keys):
            over = f"dict.fromkeys({bare(over)})"
        t = VType(item.name, item.args, s.optional, item.full)
        return One(over, keys, None if cond is None else cond.node,
                   None if cond is None else bare(cond.code), s.optional,
                   scope.with_locals(**{s.as_: Name(t, ir.Local(s.as_))}))

    def _distinct(self, keys: ir.Keys) -> bool:
        """Whether going through `keys` gives each item once (a table's keys, a constant list
        without repeats), so that a choice from it goes through it as it is."""
        if keys.is_table:
            return True
        return const.distinct(const.sequence(keys))

    def _guard_enum(self, s: Step, proc: Procedure, scope: Scope, indent: int,
                    chosen: list[str], out: list[str]) -> tuple[Scope, int]:
        pad = "    " * indent
        match s:
            case Choose():
                return self._choice_enum(s, scope, indent, chosen, out)
            case Let():
                return self._let(s, scope, indent, out), indent
            case Require():
                cond = self.expr(s, s.cond, scope, BOOL)
                if cond is not None:
                    out.append(f"{pad}if not {cond.code}:")
                    out.append(f"{pad}    {'continue' if chosen else 'return out'}")
                return scope, indent
            case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                  | Raise() | Apply() | Shuffle() | New()):
                return scope, indent  # never in a guard
            case _:
                assert_never(s)

    def _choice_enum(self, s: Choose, scope: Scope, indent: int, chosen: list[str],
                     out: list[str]) -> tuple[Scope, int]:
        pad = "    " * indent
        var = typed.local_code(s.as_)
        one = self._single(s, scope)
        if one is not None:
            over, where, optional, inner = one.over, one.where_code, one.optional, one.scope
            if optional:
                out.append(f"{pad}for {var} in (None, *{over}):")
                if where is not None:
                    out.append(f"{pad}    if {var} is not None and not ({where}):")
                    out.append(f"{pad}        continue")
            else:
                out.append(f"{pad}for {var} in {over}:")
                if where is not None:
                    out.append(f"{pad}    if not ({where}):")
                    out.append(f"{pad}        continue")
            chosen.append(var)
            return inner, indent + 1
        opts = self._options(s, scope)
        if opts is None:
            return scope, indent
        code, _t, inner = opts
        out.append(f"{pad}for {var} in {code}:")
        chosen.append(var)
        return inner, indent + 1

    def _guard_why(self, s: Step, proc: Procedure, scope: Scope, out: list[str]) -> Scope:
        rule = py_str(self._rule(s, proc))
        match s:
            case Let():
                return self._let(s, scope, 1, out)
            case Require():
                cond = self.expr(s, s.cond, scope, BOOL)
                reason = self._reason(s, scope, s.reason or f"{s.cond} does not hold")
                if cond is not None:
                    out.append(f"    if not {cond.code}:")
                    out.append(f"        return ({rule}, {reason})")
                return scope
            case Choose():
                return self._choice_why(s, proc, rule, scope, out)
            case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                  | Raise() | Apply() | Shuffle() | New()):
                return scope  # never in a guard
            case _:
                assert_never(s)

    def _choice_why(self, s: Choose, proc: Procedure, rule: str, scope: Scope,
                    out: list[str]) -> Scope:
        var = typed.local_code(s.as_)
        one = self._single(s, scope)
        if one is not None:
            over, where, optional, inner = one.over, one.where_code, one.optional, one.scope
            test = f"{var} in {over}" if where is None else f"{var} in {over} and ({where})"
            if optional:
                test = f"{var} is None or ({test})"
            reason = self._reason(s, scope, s.reason or f"that {s.as_} is not one to choose")
            if not optional and shows_choice(s):  # no value: its words would show None
                item = inner.locals[s.as_].type
                fixed, words = missing_choice(scope.kind_words.get(
                    item.name, s.as_.replace("_", " ")))
                out.append(f"    if {var} is None:")
                out.append(f"        return ({rule}, ({py_str(fixed)} + {py_str(words)}))")
            if where is None and not optional:
                out.append(f"    if {var} not in {over}:")
            else:
                out.append(f"    if not ({test}):")
            out.append(f"        return ({rule}, {reason})")
            return inner
        parts: list[str] = []
        opts = self._options(s, scope, parts)
        if opts is None:
            return scope
        code, _t, inner = opts
        reason = self._reason(s, scope, s.reason or f"that {s.as_} is not one to choose")
        if parts:  # a choice of several: items of the list, each once, and how many
            items, lo, hi, *leads = parts
            none = f"{var} is not None and (" if s.optional else "("
            out.append(f"    if {none}type({var}) is not tuple or len(set({var})) != len({var}) "
                       f"or any(x not in {items} for x in {var})):")
            out.append(f"        return ({rule}, {reason})")
            count_rule = py_str(s.count_rule or self._rule(s, proc))
            # without words of its own, the refusal shows the numbers, not their expressions
            count_reason = self._reason(s, scope, s.count_reason) if s.count_reason \
                else (f'("choose at most " + str({hi}) + " of them")' if s.up_to is not None
                      else f'("choose between " + str({lo}) + " and " + str({hi}) + " of them")')
            some = f"{var} is not None and " if s.optional else ""
            if lo != "0":
                out.append(f"    if {some}len({var}) < {lo}:")
                out.append(f"        return ({rule}, {reason})")
            out.append(f"    if {some}len({var}) > {hi}:")
            out.append(f"        return ({count_rule}, {count_reason})")
            if leads:  # in the one order the choices are listed in (_led of the sorted set)
                ordered = f"tuple(sorted({var}))"
                led = f"_led({ordered}, [{leads[0]} for v_it in {ordered}])"
                order_reason = py_str(f"that order of {s.as_} is not the one moves list")
                out.append(f"    if {some}{var} not in {led}:")
                out.append(f"        return ({rule}, {order_reason})")
            return inner
        out.append(f"    if {var} not in {code}:")
        out.append(f"        return ({rule}, {reason})")
        return inner

    def _reason(self, s: StepBase, scope: Scope, text: Any) -> str:
        """A refusal's words as a Python string (an f-string when it shows values)."""
        if not isinstance(text, str):
            return py_str(str(text))
        # the pieces of the words: the step's own words ("words"), a text of the rules data,
        # kept a piece of its own whatever it holds, so that the code's shape never depends on
        # the words of the data ("data"), and the code of a value shown ("code")
        parts: list[tuple[str, str]] = []
        pos = 0
        for m in _PLACEHOLDER.finditer(text):
            parts.append(("words", text[pos:m.start()]))
            pos = m.end()
            t = self.expr(s, m.group(1), scope, None, "reason")
            if t is None:
                parts.append(("words", m.group(0)))
                continue
            try:
                value = const.scalar(t.node)
            except const.NotConstant:
                parts.append(("code", f"str({bare(t.code)})"))
            else:
                parts.append(("data", str(value)))
        parts.append(("words", text[pos:]))
        merged: list[tuple[str, str]] = []
        for kind, x in parts:  # adjacent words become one piece
            if kind == "words" and merged and merged[-1][0] == "words":
                merged[-1] = ("words", merged[-1][1] + x)
            else:
                merged.append((kind, x))
        chunks: list[str] = []
        for kind, x in merged:
            if kind == "code":
                chunks.append(x)
            elif kind == "data":
                chunks.append(py_str(x))
            elif x and len(py_str(x)) > 60:  # long words are cut at spaces, to wrap the lines
                piece = ""
                for w in re.split(r"(?<= )", x):
                    if len(piece) + len(w) > 50 and piece:
                        chunks.append(py_str(piece))
                        piece = ""
                    piece += w
                chunks.append(py_str(piece))
            elif x:
                chunks.append(py_str(x))
        if not chunks:
            return "''"
        return chunks[0] if len(chunks) == 1 else "(" + " + ".join(chunks) + ")"

    # -- effects ------------------------------------------------------------------------

    def _let(self, s: Let, scope: Scope, indent: int, out: list[str]) -> Scope:
        for name, source in s.names:
            t = self.expr(s, source, scope, None, f"let/{name}")
            if t is None:
                self.unbound.add(str(name))
                continue
            var = typed.local_code(str(name))
            pad = "    " * indent
            code = bare(t.code)
            node = t.node
            if isinstance(node, ir.Cond) and len(pad) + len(var) + len(code) + 3 > 100:
                # a long `a if c else b` reads better as an if statement
                cond, then, other = (bare(pyprint.expr(x, scope.names()))
                                     for x in (node.test, node.then, node.orelse))
                out += [f"{pad}if {cond}:", f"{pad}    {var} = {then}", f"{pad}else:",
                        f"{pad}    {var} = {other}"]
            elif t.type.optional:
                # typed where first assigned (see _tidy): mypyc refuses a local it infers as
                # None where a test narrowed it
                out.append(f"{pad}{var}: Any = {code}")
            else:
                out.append(f"{pad}{var} = {self._plain_let(str(name), t, scope)}")
            self._bound(str(name), t, scope)
            scope = scope.with_locals(**{str(name): Name(t.type, ir.Local(str(name)))})
        return scope

    def _plain_let(self, name: str, t: Typed, scope: Scope) -> str:
        """The code of the value a let gives `name` on a line of its own (`v = code`)."""
        return bare(t.code)

    def _bound(self, name: str, t: Typed, scope: Scope) -> None:
        """A let gave `name` the value `t` (`scope`: the names before)."""

    def _place(self, s: StepBase, target: Expr, scope: Scope, key: str) -> Typed | None:
        t = self.expr(s, target, scope, None, key)
        if t is None:
            return None
        if t.place is None:
            self.problem(s, "step-target", f"'{target}' is not a field of the state (or an entry "
                         "of one) that a step can change", key)
            return None
        return t

    def _assign(self, place: Typed, value: str, scope: Scope) -> str:
        """`place = value`, writing a missing map entry too (`.get(k, 0)` reads become
        subscripts)."""
        return f"{_entry(place, scope)} = {value}"

    def _effect(self, s: Step, scope: Scope, indent: int, out: list[str]) -> Scope:
        pad = "    " * indent
        out.append(pad + "# " + py_comment(f"{self.where(s.path)} {s.id or s.kind}"))
        match s:
            case Let():
                return self._let(s, scope, indent, out)
            case Gain() | Set():
                self._change(s, scope, pad, out)
            case Move():
                self._move(s, scope, pad, out)
            case If():
                cond = self.expr(s, s.cond, scope, BOOL)
                if cond is None:
                    return scope
                out.append(f"{pad}if {bare(cond.code)}:")
                then = scope
                for name in typed.narrowed(s.cond):
                    if name in scope.locals:
                        known = scope.locals[name]
                        then = then.with_locals(**{name: replace(
                            known, type=replace(known.type, optional=False))})
                self._block(s.then, then, indent + 1, out)
                if s.orelse:
                    out.append(f"{pad}else:")
                    self._block(s.orelse, scope, indent + 1, out)
            case ForEach():
                src = self.expr(s, s.source, scope, None, "for_each/in")
                if src is None:
                    return scope
                if src.type.name not in ("list", "map"):
                    self.problem(s, "expr-type", f"'{s.source}' is not a list", "for_each/in")
                    return scope
                var = typed.local_code(s.var)
                # a list of the state is copied first: the steps may change it
                if src.type.name == "map":
                    over = scope.keys_of(src)
                else:
                    over = f"list({src.code})" if src.place is not None else bare(src.code)
                out.append(f"{pad}for {var} in {over}:")
                inner = scope.with_locals(**{s.var: Name(src.type.args[0], ir.Local(s.var))})
                self._block(s.body, inner, indent + 1, out)
            case Repeat():
                n = self.expr(s, s.count, scope, INT)
                if n is None:
                    return scope
                out.append(f"{pad}for _ in range({bare(n.code)}):")
                self._block(s.body, scope, indent + 1, out)
            case Do():
                self._do(s, scope, pad, out)
            case Raise():
                given = dict(s.with_ or ())
                hooks = self.hooks.get(s.event, ())
                for hook in hooks:
                    args = self._args(s, self.procs[hook], given, scope, "raise/with")
                    if args is not None:
                        out.append(f"{pad}_run_{self.name(hook)}(g, seat{args})")
                if not hooks:
                    for name, source in given.items():  # checked all the same
                        self.expr(s, source, scope, None, f"raise/with/{name}")
                    out.append(f"{pad}pass  # no hook listens to {py_str(s.event)}")
            case Drop():
                place = self._place(s, s.place, scope, "drop")
                if place is None:
                    return scope
                node = place.node
                if not isinstance(node, ir.Get | ir.Index):
                    self.problem(s, "step-target", f"'{s.place}' is not an entry of a table",
                                 "drop")
                    return scope
                names = scope.names()
                out.append(f"{pad}{pyprint.expr(node.base, names)}.pop("
                           f"{pyprint.expr(node.key, names)}, None)")
            case Shuffle():
                self._shuffle(s, scope, pad, out)
            case New():
                self._new(s, scope, pad, out)
            case Require() | Choose() | Apply():
                self.problem(s, "step-order", f"a {s.kind} step cannot stand among effects")
            case _:
                assert_never(s)
        return scope

    def _change(self, s: Gain | Set, scope: Scope, pad: str, out: list[str]) -> None:
        """A gain or a set: each place and its value, in the order written."""
        for target, source in s.places:
            place = self._place(s, target, scope, f"{s.kind}/{target}")
            if place is None:
                continue
            want = INT if isinstance(s, Gain) else place.type
            value = self.expr(s, source, scope, want, f"{s.kind}/{target}")
            if value is None:
                continue
            if isinstance(s, Set):
                code = bare(value.code)
                field = place.place
                t = place.type
                if (t.name == "int" and not t.optional and field is not None
                        and field.field is not None
                        and const.integer(value.node) is None):  # a number: as it is
                    # a number of the state set from a computed value stays within its
                    # declared bounds, as a gain does, and within what a save holds (the
                    # runtime's _INT_MIN and _INT_MAX, 64 bits): the engine never makes a
                    # state that its own `loads` refuses
                    top = "_INT_MAX" if field.hi is None else str(field.hi)
                    bottom = "_INT_MIN" if field.lo is None else str(field.lo)
                    code = f"min({top}, max({bottom}, {code}))"
                out.append(pad + self._assign(place, code, scope))
                continue
            if not typed.compatible(place.type, INT, scope.int_kinds):
                self.problem(s, "expr-type", f"'{target}' is {typed.describe(place.type)}; "
                             "gain adds to a number", f"gain/{target}")
                continue
            new = f"{place.code} + {value.code}"
            assert place.place is not None
            if place.place.lo is not None and not _non_negative(source):
                new = f"max({place.place.lo}, {new})"
            if not _non_positive(source):
                # a number with no declared maximum stops at the largest a save holds
                # (the runtime's _INT_MAX, 2**63 - 1): the engine never makes a state
                # that its own `loads` refuses
                hi = place.place.hi
                new = f"min({hi if hi is not None else '_INT_MAX'}, {new})"
            out.append(pad + self._assign(place, new, scope))

    def _shuffle(self, s: Shuffle, scope: Scope, pad: str, out: list[str]) -> None:
        place = self._place(s, s.place, scope, "shuffle")
        if place is None:
            return
        if place.type.name != "list":
            self.problem(s, "expr-type", f"'{s.place}' is {typed.describe(place.type)}; a shuffle "
                         "shuffles a list", "shuffle")
            return
        if self.stream is None:
            self.problem(s, "step-order", "a shuffle draws from the seeded stream of a procedure "
                         "of rules/; an action's steps cannot shuffle (do a procedure that does)")
            return
        # an entry the map does not hold is an empty list: nothing to shuffle (a subscript
        # raised KeyError inside the engine, and the move that did it broke every save)
        made = _list_entry(place.node)
        out.append(f"{pad}rng.shuffle({place.code if made else _entry(place, scope)})")

    def _new(self, s: New, scope: Scope, pad: str, out: list[str]) -> None:
        place = self._place(s, s.place, scope, "new")
        if place is None:
            return
        if place.type.name != "list" or place.type.args[0].name != "player":
            self.problem(s, "expr-type", f"'{s.place}' is {typed.describe(place.type)}; a new "
                         "player is added to a list of players", "new")
            return
        given = dict(s.with_ or ())
        args = []
        for name, source in given.items():
            f = scope.player.get(str(name))
            if f is None:
                self.problem(s, "unknown-name", f"a player has no field '{name}'", f"with/{name}",
                             typed.closest(str(name), list(scope.player)))
                continue
            v = self.expr(s, source, scope, f.type, f"with/{name}")
            if v is not None:
                args.append(f"{name}={bare(v.code)}")
        missing = sorted(scope.required - {str(k) for k in given})
        if missing:
            self.problem(s, "step-missing", "a new player needs "
                         + ", ".join(f"'{m}'" for m in missing) + " (fields with no default)",
                         "new")
            return
        into = _made(place, scope) if _list_entry(place.node) else _entry(place, scope)
        out.append(f"{pad}{into}.append(Player({', '.join(args)}))")

    def _check_misplaced(self, s: Require | Choose, scope: Scope) -> None:
        """A require or choose out of place is still checked, so that all its problems come out
        in one run."""
        if isinstance(s, Require):
            self.expr(s, s.cond, scope, BOOL)
        else:
            self._options(s, scope)

    def _block(self, steps: tuple[Step, ...], scope: Scope, indent: int, out: list[str]) -> None:
        before = len(out)
        for s in steps:
            if isinstance(s, Require | Choose):
                self.problem(s, "step-order", f"a {s.kind} step belongs to the guard at the top "
                             "of its procedure, not inside an if or a loop")
                self._check_misplaced(s, scope)
                continue
            scope = self._effect(s, scope, indent, out)
        if len(out) == before or all(line.strip().startswith("#") for line in out[before:]):
            out.append("    " * indent + "pass")

    def _move(self, s: Move, scope: Scope, pad: str, out: list[str]) -> None:
        mode = s.mode
        src = self._place(s, s.from_, scope, "move/from") if s.from_ is not None else None
        dst = self._place(s, s.to, scope, "move/to") if s.to is not None else None
        for name, t, written in (("from", src, s.from_), ("to", dst, s.to)):
            if t is not None and t.type.name != "list":
                self.problem(s, "expr-type", f"move {name} '{written}': "
                             f"{typed.describe(t.type)} is not a list", f"move/{name}")
                return
        if (src is None and s.from_ is not None) or (dst is None and s.to is not None):
            return
        if dst is not None:  # into a map entry that may be missing: made, not a default's list
            dst = replace(dst, code=_made(dst, scope))
        if src is None and dst is None:
            self.problem(s, "step-shape", "a move has a from or a to")
            return
        if mode == "item":
            item_t = (src or dst).type.args[0]  # type: ignore[union-attr]
            item = self.expr(s, s.what, scope, item_t, "move/item")
            if item is None:
                return
            code = item.code
            if src is not None and dst is not None and not isinstance(
                    item.node, ir.Local | ir.Lit | ir.Data | ir.Arg | ir.Seat):
                # a computed item (`first(hand)`) is computed once, before it leaves its list:
                # computed again after, it would be another item (one lost, one doubled)
                self.items += 1
                code = f"_item_{self.items}"
                out.append(f"{pad}{code} = {bare(item.code)}")
            if src is not None:
                out.append(f"{pad}{src.code}.remove({code})")
            if dst is not None:
                out.append(f"{pad}{dst.code}.append({code})")
            return
        if mode == "all":
            if src is None:
                self.problem(s, "step-shape", "move all needs a from", "move")
                return
            if dst is not None:
                out.append(f"{pad}{dst.code}.extend({src.code})")
            out.append(f"{pad}{src.code}.clear()")
            return
        if src is None:
            self.problem(s, "step-shape", f"move {mode} needs a from", "move")
            return
        n = self.expr(s, s.what, scope, INT, f"move/{mode}")
        if n is None:
            return
        pop = "pop()" if mode == "top" else "pop(0)"
        out.append(f"{pad}for _ in range(min({n.code}, len({src.code}))):")
        if dst is not None:
            out.append(f"{pad}    {dst.code}.append({src.code}.{pop})")
        else:
            out.append(f"{pad}    {src.code}.{pop}")

    def _do(self, s: Do, scope: Scope, pad: str, out: list[str]) -> None:
        target = s.proc
        callee = self.procs.get(target)
        if callee is None:
            self.problem(s, "unknown-reference", f"unknown procedure {target!r}", "do",
                         typed.closest(str(target), sorted(self.procs)))
            return
        if callee.choices or any(isinstance(g, Require) for g in callee.guard):
            self.problem(s, "step-order", f"'{target}' has a guard (chooses or requires): only a "
                         "procedure of effects can be done from another")
            return
        args = self._args(s, callee, dict(s.with_ or ()), scope, "with")
        if args is not None:
            out.append(f"{pad}_run_{self.name(callee.id)}(g, seat{args})")

    def _args(self, s: StepBase, callee: Procedure, given: Mapping[str, Expr], scope: Scope,
              key: str) -> str | None:
        """`, a, b` for the parameters of a procedure done or a hook run, or None."""
        values = self._given(s, callee, given, scope, key)
        return None if values is None else arg_code(values)

    def _given(self, s: StepBase, callee: Procedure, given: Mapping[str, Expr], scope: Scope,
               key: str) -> list[Typed] | None:
        """The values of the parameters of a procedure done or a hook run (None for an
        optional one not given), or None."""
        args: list[Typed] = []
        for prm in callee.params:
            if prm.name not in given:
                if prm.type.optional:
                    args.append(typed.constant(None))
                    continue
                self.problem(s, "step-missing", f"'{callee.id}' needs '{prm.name}'", key)
                return None
            v = self.expr(s, given[prm.name], scope, prm.type, f"{key}/{prm.name}")
            if v is None:
                return None
            args.append(v)
        for name in given:
            if name not in {p.name for p in callee.params}:
                self.problem(s, "step-unknown-key", f"'{callee.id}' takes no '{name}'",
                             f"{key}/{name}",
                             typed.closest(str(name), [p.name for p in callee.params]))
        return args


def arg_code(values: list[Typed]) -> str:
    """`, a, b`: the code of the values given to a procedure's parameters."""
    return "".join(", " + bare(v.code) for v in values)


def _entry(place: Typed, scope: Scope) -> str:
    """The code of a place written to in place: an entry of a table that may not hold it (read
    as `.get(k, default)`) is subscripted (so that the state's own value changes, not a
    default)."""
    node = place.node
    if isinstance(node, ir.Get):
        return pyprint.expr(ir.Index(node.base, node.key), scope.names())
    return place.code


def _list_entry(node: ir.Expr) -> bool:
    """Whether a place is an entry of a table of lists that may not hold it."""
    return isinstance(node, ir.Get) and node.default == ir.ListOf(())


def _made(place: Typed, scope: Scope) -> str:
    """The code of a list a move puts items into: an entry of a table of lists that may not
    hold it is `.setdefault(k, [])`, so an item moved to an entry the table does not hold yet
    lands in the state (with `.get`, it went into a default list thrown away, out of the
    game)."""
    node = place.node
    if isinstance(node, ir.Get) and _list_entry(node):
        names = scope.names()
        return f"{pyprint.expr(node.base, names)}.setdefault({pyprint.expr(node.key, names)}, [])"
    return place.code


def negate(cond: Typed, scope: Scope) -> str:
    """`not cond` as code, written as ruff wants it (`a not in b`, `a is not None`)."""
    return bare(pyprint.expr(negated(cond.node), scope.names()))


def _non_negative(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source >= 0


def _non_positive(source: Any) -> bool:
    return isinstance(source, int) and not isinstance(source, bool) and source <= 0


_TYPED_LOCAL = re.compile(r"^(\s*)(v_\w+): Any = ")
_NONE_LOCAL = re.compile(r"^(\s*)(v_\w+) = None$")
_OPTIONAL_LOOP = re.compile(r"^(\s*)for (v_\w+) in \(None, \*")


def _tidy(lines: list[str]) -> list[str]:
    """A generated function made tidy: the acting player is read only when used. A local that
    may be None is typed `Any` where the function first names it, and only there (mypyc, which
    `lisboa-rules compile` runs, refuses a local it infers as None: `v: Any = x` (and `= None`) and
    `v: Any` before a loop over `(None, *xs)`; mypy refuses a second annotation). A function of
    the lines alone, kept for the process: the rule sets of a build share most functions."""
    key = tuple(lines)
    found = _TIDIED.get(key)
    if found is None:
        if len(_TIDIED) >= _TIDIED_MAX:  # a long process (the fuzzer) starts again
            _TIDIED.clear()
        found = _TIDIED[key] = tuple(_tidied(lines))
    return list(found)


_TIDIED: dict[tuple[str, ...], tuple[str, ...]] = {}
_TIDIED_MAX = 20_000


def _tidied(lines: list[str]) -> list[str]:
    body = "\n".join(line for line in lines if line.strip() != "p = g.players[seat]")
    keep = re.search(r"(?<![\w.'\"])p(?![\w'\"])", body) is not None
    out: list[str] = []
    named: set[str] = set()
    for line in lines:
        if line.strip() == "p = g.players[seat]" and not keep:
            continue
        typed_local = _TYPED_LOCAL.match(line)
        if typed_local is not None and typed_local.group(2) in named:
            line = line.replace(": Any = ", " = ", 1)
        none = _NONE_LOCAL.match(line)
        if none is not None and none.group(2) not in named:
            line = f"{none.group(1)}{none.group(2)}: Any = None"
        loop = _OPTIONAL_LOOP.match(line)
        if loop is not None and loop.group(2) not in named:
            out.append(f"{loop.group(1)}{loop.group(2)}: Any")
        named.update(re.findall(r"\bv_\w+", line))
        out.append(line)
    return out


def py_type(t: VType, scope: Scope | None = None) -> str:
    """The Python annotation of a value of type t; with the scope, a kind's id is an int or a
    str (`int_kinds`, `kinds`), which mypyc compiles to typed operations."""
    if t.name in ("int", "seat") or (scope is not None and t.name in scope.int_kinds):
        base = "int"
    elif t.name == "text" or (scope is not None and t.name in scope.kinds):
        base = "str"
    elif t.name == "bool":
        base = "bool"
    elif t.name == "list":
        base = f"Sequence[{py_type(t.args[0], scope)}]"
    elif t.name == "map":
        base = f"dict[{py_type(t.args[0], scope)}, {py_type(t.args[1], scope)}]"
    elif t.name == "player":
        base = "Player"
    else:
        base = "Any"
    return f"{base} | None" if t.optional and base != "Any" else base
