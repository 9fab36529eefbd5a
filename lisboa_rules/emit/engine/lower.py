"""The Python engine's printer of checked procedures (`ir/stmt.py`'s `Proc`).

A procedure becomes three straight-line functions of the generated engine: the choices that
pass its guard (`_opts_STEM(g, seat, params) -> list[tuple]`), why a given choice does not
(`_why_STEM(g, seat, params, choices) -> (rule, words) | None`), and its effects
(`_run_STEM(g, seat, params, choices)`). What is printed was checked: nothing here reports a
problem. The statements print as their Python (`effect`), for the move generators' printer too
(emit/engine/moves.py); each step's first line is a comment naming where the rules write it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import NamedTuple, assert_never

from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.emit.engine.state_classes import copy_code
from lisboa_rules.ir import expr as ir
from lisboa_rules.ir import stmt as S
from lisboa_rules.ir.logic import negated
from lisboa_rules.ir.reads import locals_named
from lisboa_rules.ir.types import VType
from lisboa_rules.pyprint import expr as pyprint
from lisboa_rules.pyprint.expr import bare


class Emitted(NamedTuple):
    """A procedure's three functions, as Python source lines."""

    opts: list[str]
    why: list[str]
    run: list[str]


def local(name: str) -> str:
    return pyprint.local(name)


def py_type(t: VType, n: pyprint.Names) -> str:
    """The Python annotation of a value of type t (a kind's id an int or a str)."""
    return pyprint.annotation(t, n)


class Function:
    """What the function being printed has named so far: its locals (a local that may be None
    is typed `Any` where the function first names it, and only there: mypyc refuses a local it
    infers as None, mypy a second annotation), and whether its code names the acting player
    (else it does not read them: `p = g.players[seat]` is left out)."""

    def __init__(self, player_at: int | None) -> None:
        self.named: set[str] = set()
        self.player = False
        self.player_at = player_at  # where its line reading the acting player is


class Printer:
    """Prints one rule set's checked statements as Python: `names` prints its expressions,
    `stem(proc_id)` names a procedure's functions, `where(path)` says where a step is
    ("rules/x.yaml:LINE") for its comment."""

    def __init__(self, names: pyprint.Names, stem: Callable[[str], str],
                 where: Callable[[tuple[str | int, ...]], str],
                 loose: frozenset[tuple[str | int, ...]] = frozenset(),
                 guarded: Mapping[tuple[tuple[str | int, ...], str], int] | None = None
                 ) -> None:
        self.names = names
        self.stem = stem
        self.where = where
        self.loose = loose  # the moves that move nothing when the item is not in the list
        # the writes into a list not proven to keep it within its max_items, by where they are
        # written and the field, with the bound: each checks it before it writes
        self.guarded = guarded or {}
        self.items = 0  # the items a move computes, each bound once (`_item_N`)
        self.fns: list[Function] = []  # the functions being printed, innermost last
        # what a node's code names (by node): its locals, whether the acting player
        self._reads: dict[int, tuple[ir.Expr, frozenset[str], bool]] = {}

    # -- functions ----------------------------------------------------------------------

    def begin(self, player_at: int | None = None, *named: str) -> None:
        """A function starts (`player_at`: the index of its line reading the acting player;
        `named`: the locals its signature names)."""
        self.fns.append(Function(player_at))
        self.fns[-1].named.update(named)

    def end(self, lines: list[str]) -> list[str]:
        """The function's lines, finished: without the acting player when nothing reads them."""
        fn = self.fns.pop()
        if fn.player_at is not None and not fn.player:
            del lines[fn.player_at]
        return lines

    def named(self, *names: str) -> None:
        """The function names these locals (their Python names) here."""
        if self.fns:
            self.fns[-1].named.update(names)

    def first(self, name: str) -> bool:
        """Whether the function names the local `name` (its Python name) here first."""
        if not self.fns:
            return True
        fresh = name not in self.fns[-1].named
        self.fns[-1].named.add(name)
        return fresh

    def code(self, node: ir.Expr) -> str:
        self._read(node)
        return pyprint.expr(node, self.names)

    def bare(self, node: ir.Expr) -> str:
        self._read(node)
        return bare(pyprint.expr(node, self.names))

    def _read(self, node: ir.Expr) -> None:
        """The function being printed names what the node's code names."""
        if not self.fns:
            return
        found = self._reads.get(id(node))
        if found is None or found[0] is not node:
            found = self._reads[id(node)] = (
                node, frozenset(local(x) for x in locals_named(node)),
                pyprint.uses_player(node, self.names))
        fn = self.fns[-1]
        fn.named |= found[1]
        fn.player = fn.player or found[2]

    # -- a procedure --------------------------------------------------------------------

    def signature(self, proc: S.Proc, choices: bool) -> str:
        self.named(*(local(p.name) for p in proc.params),
                   *(local(c.name) for c in proc.choices if choices))
        args = ["g: Game", "seat: int"]
        args += [f"{local(p.name)}: {py_type(p.type, self.names)}" for p in proc.params]
        if choices:
            args += [f"{local(c.name)}: Any" for c in proc.choices]
        return ", ".join(args)

    @staticmethod
    def choice_type(n: int) -> str:
        return "tuple[()]" if n == 0 else "tuple[" + ", ".join(["Any"] * n) + "]"

    def procedure(self, proc: S.Proc) -> Emitted:
        stem = self.stem(proc.id)
        head = ["# " + py_comment(f"{self.where(proc.at.path)} {proc.id}")]
        ctype = self.choice_type(len(proc.choices))
        # the guard, as a generator of choices
        self.begin(2)
        opts = [*head, f"def _opts_{stem}({self.signature(proc, False)}) -> list[{ctype}]:",
                "    p = g.players[seat]", f"    out: list[{ctype}] = []"]
        indent = 1
        chosen: list[str] = []
        for s in proc.guard:
            match s:
                case S.Choose():
                    indent = self.choice_loop(s, indent, opts)
                    chosen.append(local(s.name))
                case S.Let():
                    self.let(s, indent, opts)
                case S.Require():
                    opts.append("    " * indent + f"if not {self.code(s.cond)}:")
                    opts.append("    " * indent + f"    {'continue' if chosen else 'return out'}")
                case _:
                    assert_never(s)
        row = f"({chosen[0]},)" if len(chosen) == 1 else "(" + ", ".join(chosen) + ")"
        opts.append("    " * indent + f"out.append({row})")
        opts.append("    return out")
        opts = self.end(opts)
        # why a choice fails
        self.begin(1)
        why = [f"def _why_{stem}({self.signature(proc, True)}) -> tuple[str, str] | None:",
               "    p = g.players[seat]"]
        for s in proc.guard:
            match s:
                case S.Let():
                    self.let(s, 1, why)
                case S.Require():
                    why.append(f"    if not {self.code(s.cond)}:")
                    why.append(f"        return ({self.rule(s.rule)}, {self.words(s.reason)})")
                case S.Choose():
                    self.choice_why(s, why)
                case _:
                    assert_never(s)
        why.append("    return None")
        why = self.end(why)
        # the effects
        self.begin(1)
        run = [f"def _run_{stem}({self.signature(proc, True)}) -> None:",
               "    p = g.players[seat]"]
        body: list[str] = []
        if proc.streams:
            body.append(f"    rng = _rng(g, {py_str(proc.id)})")
        for s in proc.guard:
            if isinstance(s, S.Let):
                self.let(s, 1, body)
        for e in proc.effects:
            self.effect(e, 1, body)
        if all(line.strip().startswith("#") for line in body):
            body.append("    pass")
        run = self.end(run + body)
        return Emitted(opts, why, run)

    # -- choices ------------------------------------------------------------------------

    def over(self, of: S.OneOf) -> str:
        """What a choice of one item goes through, each item once."""
        over = self.code(of.keys)
        return over if of.distinct else f"dict.fromkeys({bare(over)})"

    def options(self, of: S.Several, optional: bool) -> str:
        """The options of a choice of several, as code."""
        code = self.code(of.source)
        if of.where is not None:
            code = f"[v_it for v_it in {code} if {self.code(of.where)}]"
        if of.up_to:  # any set of at most N items, in counting order (see _subsets)
            code = f"_subsets(sorted(dict.fromkeys({code})), {self.bare(of.hi)})"
            if of.leads_by is not None:
                code = f"[c for s_ in {code} for c in _led(s_, [{self.leads(of)} for v_it in s_])]"
        else:
            code = (f"[c for k in range({self.bare(of.lo)}, {self.code(of.hi)} + 1) "
                    f"for c in _combinations(sorted(dict.fromkeys({code})), k)]")
        return f"[None, *{code}]" if optional else code

    def leads(self, of: S.Several) -> str:
        """The code of an item's group (`it` is `v_it`), None for an item in no group."""
        assert of.leads_by is not None
        if of.leads_where is None:
            return self.bare(of.leads_by)
        return f"({self.bare(of.leads_by)} if {self.bare(of.leads_where)} else None)"

    def unique(self, of: S.Several) -> str:
        code = self.code(of.source)
        if of.where is not None:
            code = f"[v_it for v_it in {code} if {self.code(of.where)}]"
        return f"list(dict.fromkeys({code}))"

    def choice_loop(self, s: S.Choose, indent: int, out: list[str]) -> int:
        """The loop over a choice's options (in a guard's generator of choices)."""
        pad = "    " * indent
        var = local(s.name)
        of = s.of
        if isinstance(of, S.OneOf):
            over = self.over(of)
            where = None if of.where is None else self.bare(of.where)
            if s.optional:
                if self.first(var):  # typed where first named (see Function)
                    out.append(f"{pad}{var}: Any")
                out.append(f"{pad}for {var} in (None, *{over}):")
                if where is not None:
                    out.append(f"{pad}    if {var} is not None and not ({where}):")
                    out.append(f"{pad}        continue")
            else:
                self.named(var)
                out.append(f"{pad}for {var} in {over}:")
                if where is not None:
                    out.append(f"{pad}    if not ({where}):")
                    out.append(f"{pad}        continue")
            return indent + 1
        options = self.options(of, s.optional)
        self.named(var)
        out.append(f"{pad}for {var} in {options}:")
        return indent + 1

    def choice_why(self, s: S.Choose, out: list[str], pad: str = "    ",
                   refuse: Callable[[str, str], str] | None = None,
                   unchosen: Callable[[str, str], str] | None = None) -> None:
        """The checks of a choice made (`refuse(rule, words)`: the statement that refuses it;
        by default, a return of the refusal; `unchosen(rule, words)`: the one that refuses a
        choice of one value not made, with the same words)."""
        give = refuse or (lambda r, w: f"return ({r}, {w})")
        rule = self.rule(s.rule)
        var = local(s.name)
        reason = self.words(s.reason)
        of = s.of
        if isinstance(of, S.OneOf):
            over = self.over(of)
            where = None if of.where is None else self.bare(of.where)
            test = f"{var} in {over}" if where is None else f"{var} in {over} and ({where})"
            if s.optional:
                test = f"{var} is None or ({test})"
            if s.missing is not None:  # no value: its words would show None
                out.append(f"{pad}if {var} is None:")
                missing = self.words(s.missing, split=False)
                out.append(f"{pad}    {(unchosen or give)(rule, missing)}")
            elif unchosen is not None and not s.optional:  # no value: refused as any other
                out.append(f"{pad}if {var} is None:")
                out.append(f"{pad}    {unchosen(rule, reason)}")
            if where is None and not s.optional:
                out.append(f"{pad}if {var} not in {over}:")
            else:
                out.append(f"{pad}if not ({test}):")
            out.append(f"{pad}    {give(rule, reason)}")
            return
        # a choice of several: items of the list, each once, and how many
        items, lo, hi = self.unique(of), self.bare(of.lo), self.bare(of.hi)
        none = f"{var} is not None and (" if s.optional else "("
        out.append(f"{pad}if {none}type({var}) is not tuple or len(set({var})) != len({var}) "
                   f"or any(x not in {items} for x in {var})):")
        out.append(f"{pad}    {give(rule, reason)}")
        count_rule = py_str(of.count_rule) if of.count_rule else rule
        # without words of its own, the refusal shows the numbers, not their expressions
        count_reason = self.words(of.count_reason) if of.count_reason is not None \
            else (f'("choose at most " + str({hi}) + " of them")' if of.up_to
                  else f'("choose between " + str({lo}) + " and " + str({hi}) + " of them")')
        some = f"{var} is not None and " if s.optional else ""
        if lo != "0":
            out.append(f"{pad}if {some}len({var}) < {lo}:")
            out.append(f"{pad}    {give(rule, reason)}")
        out.append(f"{pad}if {some}len({var}) > {hi}:")
        out.append(f"{pad}    {give(count_rule, count_reason)}")
        if of.leads_by is not None:  # in the one order the choices are listed in
            ordered = f"tuple(sorted({var}))"
            led = f"_led({ordered}, [{self.leads(of)} for v_it in {ordered}])"
            order_reason = py_str(f"that order of {s.name} is not the one moves list")
            out.append(f"{pad}if {some}{var} not in {led}:")
            out.append(f"{pad}    {give(rule, order_reason)}")

    # -- words --------------------------------------------------------------------------

    def rule(self, rule: str | S.Words) -> str:
        return py_str(rule) if isinstance(rule, str) else self.words(rule)

    def words(self, words: S.Words, split: bool = True) -> str:
        """Words as a Python string expression: the words, the texts of the rules data (a
        piece of their own), the values shown (`str(value)`)."""
        chunks: list[str] = []
        for x in words:
            if isinstance(x, S.Shown):
                if x.text and isinstance(x.value, ir.Lit) and isinstance(x.value.value, str):
                    chunks.append(py_str(x.value.value))
                else:
                    chunks.append(f"str({self.bare(x.value)})")
            elif x and split and len(py_str(x)) > 60:  # long words are cut at spaces
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

    def comment(self, a: S.At, pad: str, out: list[str]) -> None:
        out.append(pad + "# " + py_comment(f"{self.where(a.path)} {a.label}"))

    def let(self, s: S.Let, indent: int, out: list[str]) -> None:
        pad = "    " * indent
        for b in s.binds:
            var = local(b.name)
            code = self.bare(b.value)
            node = b.value
            if isinstance(node, ir.Cond) and len(pad) + len(var) + len(code) + 3 > 100:
                # a long `a if c else b` reads better as an if statement
                cond, then, other = (self.bare(x) for x in (node.test, node.then, node.orelse))
                first = self.first(var)
                typed_then = _none(node.then) and first
                typed_else = _none(node.orelse) and first and not typed_then
                out += [f"{pad}if {cond}:",
                        f"{pad}    {var}{': Any' if typed_then else ''} = {then}", f"{pad}else:",
                        f"{pad}    {var}{': Any' if typed_else else ''} = {other}"]
            elif b.type.optional or _none(node):
                # typed where first named (see Function): mypyc refuses a local it infers as
                # None where a test narrowed it
                out.append(f"{pad}{var}{': Any' if self.first(var) else ''} = {code}")
            else:
                value = self.let_value(b)
                self.named(var)
                out.append(f"{pad}{var} = {value}")

    def let_value(self, b: S.Bind) -> str:
        """The code of the value a let gives its name on a line of its own (`v = code`)."""
        return self.bare(b.value)

    def block(self, stmts: tuple[S.Stmt, ...], indent: int, out: list[str]) -> None:
        before = len(out)
        for s in stmts:
            self.effect(s, indent, out)
        if len(out) == before or all(line.strip().startswith("#") for line in out[before:]):
            out.append("    " * indent + "pass")

    def entry(self, place: S.Place) -> str:
        """The code of a place written to in place: an entry of a table that may not hold it
        (read as `.get(k, default)`) is subscripted (so that the state's own value changes,
        not a default)."""
        node = place.node
        if isinstance(node, ir.Get):
            return self.code(ir.Index(node.base, node.key))
        return self.code(node)

    def made(self, place: S.Place) -> str:
        """The code of a list a move puts items into: an entry of a table of lists that may
        not hold it is `.setdefault(k, [])`, so an item moved to an entry the table does not
        hold yet lands in the state."""
        node = place.node
        if isinstance(node, ir.Get) and _list_entry(node):
            return f"{self.code(node.base)}.setdefault({self.code(node.key)}, [])"
        return self.code(node)

    def run_call(self, r: S.Run, choices: str = "") -> str:
        args = "".join(", " + self.bare(a) for a in r.args)
        return f"_run_{self.stem(r.proc)}(g, seat{args}{choices})"

    def effect(self, s: S.Stmt, indent: int, out: list[str]) -> None:
        pad = "    " * indent
        self.comment(s.at, pad, out)
        match s:
            case S.Let():
                self.let(s, indent, out)
            case S.Change():
                for c in s.changes:
                    self.change(c, s.at, pad, out)
            case S.MoveItem():
                code = self.code(s.item)
                if s.once:
                    # a computed item is computed once, before it leaves its list
                    self.items += 1
                    code = f"_item_{self.items}"
                    out.append(f"{pad}{code} = {self.bare(s.item)}")
                inner = pad
                if s.src is not None and s.at.path in self.loose:
                    # not proven to be there: the move moves nothing when it is not
                    out.append(f"{pad}if {code} in {self.code(s.src.node)}:")
                    inner = pad + "    "
                if s.dst is not None:
                    self.guard(s.at, s.dst, "1", inner, out)
                if s.src is not None:
                    out.append(f"{inner}{self.code(s.src.node)}.remove({code})")
                if s.dst is not None:
                    out.append(f"{inner}{self.made(s.dst)}.append({code})")
            case S.MoveAll():
                src = self.code(s.src.node)
                if s.dst is not None:
                    self.guard(s.at, s.dst, f"len({src})", pad, out)
                    out.append(f"{pad}{self.made(s.dst)}.extend({src})")
                out.append(f"{pad}{src}.clear()")
            case S.MoveSome():
                src = self.code(s.src.node)
                pop = "pop()" if s.top else "pop(0)"
                if s.dst is not None:
                    self.guard(s.at, s.dst, f"min({self.bare(s.count)}, len({src}))", pad, out)
                out.append(f"{pad}for _ in range(min({self.code(s.count)}, len({src}))):")
                if s.dst is not None:
                    out.append(f"{pad}    {self.made(s.dst)}.append({src}.{pop})")
                else:
                    out.append(f"{pad}    {src}.{pop}")
            case S.If() if isinstance(s.cond, ir.Lit | ir.Data) \
                    and isinstance(s.cond.value, bool):
                # a condition of the rules data (`if: this.favor_returned`): its branch alone
                for x in s.then if s.cond.value else s.orelse:
                    self.effect(x, indent, out)
            case S.If():
                out.append(f"{pad}if {self.bare(s.cond)}:")
                self.block(s.then, indent + 1, out)
                if s.orelse:
                    out.append(f"{pad}else:")
                    self.block(s.orelse, indent + 1, out)
            case S.ForEach():
                over = self.code(s.over) if isinstance(s.over, ir.Keys) else \
                    f"list({self.code(s.over)})" if s.copy else self.bare(s.over)
                self.named(local(s.var))
                out.append(f"{pad}for {local(s.var)} in {over}:")
                self.block(s.body, indent + 1, out)
            case S.Repeat():
                out.append(f"{pad}for _ in range({self.bare(s.count)}):")
                self.block(s.body, indent + 1, out)
            case S.Do():
                out.append(pad + self.run_call(s.run))
            case S.Raise():
                for r in s.runs:
                    out.append(pad + self.run_call(r))
                if not s.runs:
                    out.append(f"{pad}pass  # no hook listens to {py_str(s.event)}")
            case S.Drop():
                out.append(f"{pad}{self.code(s.table)}.pop({self.code(s.key)}, None)")
            case S.Shuffle():
                # an entry the map does not hold is an empty list: nothing to shuffle
                shuffled = self.code(s.place.node) if _list_entry(s.place.node) else \
                    self.entry(s.place)
                out.append(f"{pad}rng.shuffle({shuffled})")
            case S.New():
                args = ", ".join(f"{name}={owned(t, v, self.bare(v))}"
                                 for (name, v), t in zip(s.fields, s.types, strict=True))
                into = self.made(s.place) if _list_entry(s.place.node) else self.entry(s.place)
                self.guard(s.at, s.place, "1", pad, out)
                for name, v in s.fields:  # a list it is given
                    given = S.Place(v, VType("list"), field=f"player.{name}")
                    self.guard(s.at, given, "", pad, out, self.bare(v))
                out.append(f"{pad}{into}.append(Player({args}))")
            case S.DoValue() | S.Apply():
                self.action_effect(s, pad, out)
            case _:
                assert_never(s)

    def action_effect(self, s: S.DoValue | S.Apply, pad: str, out: list[str]) -> None:
        """An effect only an action's steps have (printed by the move generators' printer)."""
        raise AssertionError(f"{type(s).__name__} is an action's step")

    def guard(self, at: S.At, place: S.Place, adds: str, pad: str, out: list[str],
              value: str | None = None) -> None:
        """The check before a write that adds `adds` items (code) to a list, or sets it to
        `value`, when it is not proven to keep the list within its max_items: the engine
        fails there, at the rule, rather than make a state over the bound."""
        most = self.guarded.get((at.path, place.field or ""))
        if most is None:
            return
        size = f"len({value})" if value is not None else \
            f"len({self.code(place.node)}) + {adds}"
        words = (f"the step would put more items into {place.field} than its max_items, "
                 f"{most}, allows")
        out += [f"{pad}if {size} > {most}:", f"{pad}    raise ValueError({py_str(words)})"]

    def change(self, c: S.Gain | S.Assign, at: S.At, pad: str, out: list[str]) -> None:
        place = c.place
        if isinstance(c, S.Assign) and (at.path, place.field or "") in self.guarded:
            # a list set from a value not proven to fit: computed once, checked, then set
            self.items += 1
            code = f"_item_{self.items}"
            out.append(f"{pad}{code} = {owned(place.type, c.value, self.bare(c.value))}")
            self.guard(at, place, "", pad, out, code)
            out.append(f"{pad}{self.entry(place)} = {code}")
            return
        if isinstance(c, S.Assign):
            code = owned(place.type, c.value, self.bare(c.value))
            if c.clamp:
                # a number of the state set from a computed value stays within its declared
                # bounds and what a save holds (the runtime's _INT_MIN and _INT_MAX, 64 bits)
                top = "_INT_MAX" if place.hi is None else str(place.hi)
                bottom = "_INT_MIN" if place.lo is None else str(place.lo)
                code = f"min({top}, max({bottom}, {code}))"
            out.append(f"{pad}{self.entry(place)} = {code}")
            return
        new = f"{self.code(place.node)} + {self.code(c.amount)}"
        if c.floor:
            new = f"max({place.lo}, {new})"
        if c.ceil:
            # a number with no declared maximum stops at the largest a save holds (the
            # runtime's _INT_MAX, 2**63 - 1)
            new = f"min({place.hi if place.hi is not None else '_INT_MAX'}, {new})"
        out.append(f"{pad}{self.entry(place)} = {new}")

    def negate(self, cond: ir.Expr) -> str:
        """`not cond` as code, written as ruff wants it (`a not in b`, `a is not None`)."""
        return self.bare(negated(cond))


# the functions whose code makes a new list (pyprint prints `range` and `reversed` as one)
_MAKES_A_LIST = ("range", "reversed", "sorted")


def owned(t: VType, node: ir.Expr, code: str) -> str:
    """The code of a value set into the state (`node`, of type `t`, printed as `code`) as one
    the state owns: a list or a table read from elsewhere (another field, a local, the rules'
    data) is copied, as deep as it holds lists or tables, so that no two places of the state
    share one list (a later change to one would change the other, and a save and load, which
    parts them, would play differently) and no constant of the engine is changed. A list or a
    table made by the value itself (`[...]`, a comprehension, `{}`, a sum of lists, `sorted`)
    of numbers, texts and ids is its own already."""
    made = isinstance(node, ir.ListOf | ir.Comp | ir.EmptyTable | ir.BinOp) or (
        isinstance(node, ir.Call) and node.fn in _MAKES_A_LIST)
    if made and not any(copy_code(a, "v") for a in t.args):
        return code
    return copy_code(t, code, anew=True, whole=not isinstance(node, ir.Cond)) or code


def _list_entry(node: ir.Expr) -> bool:
    """Whether a place is an entry of a table of lists that may not hold it."""
    return isinstance(node, ir.Get) and node.default == ir.ListOf(())


def _none(node: ir.Expr) -> bool:
    """Whether a value is None as written (a local let to it may be None)."""
    return isinstance(node, ir.Lit) and node.value is None
