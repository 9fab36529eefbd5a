"""The steps keep the conserved kinds conserved: a static check of every procedure and action.

rules/state.yaml declares kinds whose ids are each in exactly one of some zones
(`invariants: - conserved: {kind: card, in: [game.discard, player.hand, ...]}`). The engine
checks that in every state it loads, and `from_json` also refuses a saved game when one of its
legal moves would break it. So a house rule whose action takes a card out of every zone built
clean, yet no game where that action can be played could be saved and loaded again. Without
playing a game, this reads each step that moves items of such a kind and refuses, at the step:

- a move from one of the kind's zones to a list of that kind that is none of them, or into a
  zone from such a list (the item leaves the zones, or comes from outside them);
- the top or first items of a zone moved without a `to:` (they are gone);
- an item taken from a zone without a `to:` (`move: {item: card, from: hand}`) that the steps
  after it do not put into a zone on every path (`move: {item: card, to: portfolio}`, here or
  in a procedure done with the item as its argument, `do: to-portfolio, with: {card: card}`,
  in a hook of an event raised with it, or through a `let` that names it, `let: {c: card}`);
- an item chosen from a zone (`choose: {as: card, from: hand}`) put into a zone while it is
  still there (a move without `from:`, or a procedure that puts it): it would be in two zones;
- a `set:` of a zone (it replaces what the zone holds).

A loop whose count is a constant (`repeat: 1`, `repeat: rules.game.start.royal_favors`,
`for_each` over a list of the rules data) runs that many times: once, its steps are read as if
they stood in its place; twice or more, a second pass is read after the first (an item taken
before the loop and put in it would be put twice). Any other loop may not run at all: what it
puts of the items taken before it may still be lost, and an item taken in it must be put in it
(each pass may name another).

Left to the engine's check of saved games (documented in codes.py): `move: {all: ..., from: Z}`
without a `to:` and `drop:` of an entry of a zone (the rules use both only where the zone is
empty or its items were moved first), kinds conserved by count (`count:`), the setup and the
procedures only it carries out (they make the state the invariants then hold in).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, assert_never

from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.lang.steps import Procedure, StepProblem
from lisboa_rules.lang.tree import (
    Apply,
    Choose,
    Do,
    Drop,
    Expr,
    ForEach,
    Gain,
    If,
    Let,
    Move,
    New,
    Raise,
    Repeat,
    Require,
    Set,
    Shuffle,
    Step,
    branches,
)
from lisboa_rules.lang.typed import MAX_LENGTH, data_lookup
from lisboa_rules.model.procs import ProcSet
from lisboa_rules.model.state import Invariant, StateDecl, StateType

CODE = "step-not-conserved"
Field = tuple[str, str]  # ("player" | "game", field id)


def check_conservation(ps: ProcSet, decl: StateDecl,
                       data: Mapping[str, Any] | None = None) -> list[StepProblem]:
    """The problems of every procedure (but the setup) and action of the rule set (`data`, the
    merged rules documents: what a loop's count reads of them, `repeat: rules.X`)."""
    kept = [inv for inv in decl.invariants if inv.kind is not None and inv.count is None]
    if not kept:
        return []
    checker = _Checker(ps, decl, kept, data or {})
    setup = _setup_only(ps)
    for pid in ps.procs:
        if pid not in setup:
            checker.must_put(pid)
    for action in ps.actions.values():
        checker.root(action.steps, (), _locals(action.steps, ()))
    seen: set[tuple[str, str, tuple[str | int, ...]]] = set()
    out = []
    for p in checker.problems:
        if (p.code, p.message, p.path) not in seen:
            seen.add((p.code, p.message, p.path))
            out.append(p)
    return out


def _setup_only(ps: ProcSet) -> frozenset[str]:
    """The setup and the procedures only it carries out (done or raised from it, or from
    another of them, and never from anything else): they make the state the invariants then
    hold in (`set: {game.reserve[d]: ...}` in a house rule's procedure that deals the decks).
    An effect is never among them: cards apply effects by name."""
    callers: dict[str, set[str]] = {}
    roots = [(pid, proc.steps) for pid, proc in ps.procs.items()]
    roots += [(f"action:{kind}", action.steps) for kind, action in ps.actions.items()]
    for pid, steps in roots:
        for top in steps:
            for sub in top.walk():
                called: Iterable[str] = ()
                match sub:
                    case Do():
                        called = (sub.proc,)
                    case Raise():
                        called = ps.hooks.get(sub.event, ())
                    case (Gain() | Set() | Let() | Move() | Drop() | Require() | Choose() | If()
                          | ForEach() | Repeat() | Apply() | Shuffle() | New()):
                        pass  # an apply carries out effects, which are never setup-only
                    case _:
                        assert_never(sub)
                for callee in called:
                    callers.setdefault(callee, set()).add(pid)
    only = {pid for pid, proc in ps.procs.items() if proc.path[:2] == ("flow", "setup")}
    grown = True
    while grown:
        grown = False
        for pid in ps.procs:
            if pid in only or pid in ps.effects or not callers.get(pid):
                continue
            if callers[pid] <= only:
                only.add(pid)
                grown = True
    return frozenset(only)


def _item_kind(t: StateType) -> str | None:
    """The kind of the items of a list field, through maps (`map[pile, list[card]]`)."""
    while t.name == "map" and len(t.args) == 2:
        t = t.args[1]
    if t.name == "list" and t.args:
        return t.args[0].name
    return None


def _locals(steps: Iterable[Step], params: Iterable[str]) -> frozenset[str]:
    """Every name the steps (and the params) bind: none of them is a field of the state."""
    names = set(params)
    for top in steps:
        for s in top.walk():
            match s:
                case Let():
                    names.update(name for name, _value in s.names)
                case Choose():
                    names.add(s.as_)
                case ForEach():
                    names.add(s.var)
                case (Gain() | Set() | Move() | Drop() | Require() | If() | Repeat() | Do()
                      | Raise() | Apply() | Shuffle() | New()):
                    pass  # they bind no name
                case _:
                    assert_never(s)
    return frozenset(names)


class _Checker:
    def __init__(self, ps: ProcSet, decl: StateDecl, invariants: list[Invariant],
                 data: Mapping[str, Any]) -> None:
        self.ps = ps
        self.decl = decl
        self.rules = data_lookup(data)
        self.zones: dict[str, frozenset[Field]] = {
            str(inv.kind): frozenset((z.scope, z.field) for z in inv.zones) for inv in invariants
        }
        self.invariant = {str(inv.kind): inv for inv in invariants}
        self.kinds: dict[Field, str] = {}
        for scope in ("player", "game"):
            for f in decl.fields(scope):
                kind = _item_kind(f.type)
                if kind is not None:
                    self.kinds[(scope, f.id)] = kind
        self.problems: list[StepProblem] = []
        self.puts: dict[str, frozenset[str]] = {}
        self.busy: set[str] = set()
        self.alias: dict[str, str] = {}  # a let's name -> the local it names (`let: {c: card}`)
        self.passes = 0  # in the second pass of a loop: how many times it runs

    # -- roots ---------------------------------------------------------------------------

    def must_put(self, pid: str) -> frozenset[str]:
        """The params of procedure `pid` that its steps put into a zone on every path (the
        procedure is checked on the way)."""
        if pid in self.puts:
            return self.puts[pid]
        if pid in self.busy or pid not in self.ps.procs:  # a cycle: reported as step-cycle
            return frozenset()
        self.busy.add(pid)
        proc: Procedure = self.ps.procs[pid]
        params = [p.name for p in proc.params]
        left = self.root(proc.steps, params, _locals(proc.steps, params))
        self.busy.discard(pid)
        self.puts[pid] = frozenset(p for p in params if p not in left)
        return self.puts[pid]

    def root(self, steps: Iterable[Step], params: Iterable[str], names: frozenset[str]
             ) -> dict[str, Move | None]:
        """Check the steps of a procedure or an action; what is still pending after them (a
        param not put is its caller's business; an item taken and not put is a problem)."""
        pending: dict[str, Move | None] = dict.fromkeys(params)
        outer, self.alias = self.alias, {}
        left, _ = self.steps(tuple(steps), pending, {}, names)
        self.alias = outer
        for item, take in left.items():
            if take is not None:
                self.taken_nowhere(take, item)
        return left

    # -- steps ---------------------------------------------------------------------------

    def steps(self, steps: tuple[Step, ...], pending: dict[str, Move | None],
              held: dict[str, Field], names: frozenset[str]
              ) -> tuple[dict[str, Move | None], dict[str, Field]]:
        """What is pending (taken, not yet put) and held (known to be in a zone: chosen from
        one, and not taken since) after the steps."""
        pending, held = dict(pending), dict(held)
        for s in steps:
            match s:
                case Move():
                    self.move(s, pending, held, names)
                case Let():
                    for name, value in s.names:
                        self.alias.pop(name, None)
                        if isinstance(value, str) and value.strip().isidentifier():
                            target = self.canon(value.strip())
                            if target in names and target != name:
                                self.alias[name] = target
                case Choose() if not s.several:
                    place = self.field(s.source, names)
                    name = s.as_.strip()
                    self.alias.pop(name, None)
                    held.pop(name, None)
                    if place is not None and any(place in z for z in self.zones.values()):
                        held[name] = place
                case Set():
                    for target, _value in s.places:
                        place = self.field(target, names)
                        kind = self.kinds.get(place) if place else None
                        if place is not None and kind in self.zones and place in self.zones[kind]:
                            self.problems.append(StepProblem(
                                CODE, f"this set replaces what {_shown(place)} holds, a zone of "
                                f"the {self.rule(kind)}: {kind}s would leave the game or come "
                                "from nowhere; move them instead",
                                (*s.path, "set", target)))
                case If():
                    then, then_held = self.steps(s.then, pending, held, names)
                    orelse, else_held = self.steps(s.orelse, pending, held, names)
                    pending = {**then, **orelse}
                    held = {k: v for k, v in then_held.items() if k in else_held}
                case ForEach() | Repeat():
                    pending, held = self.loop(s, pending, held, names)
                case Do() if s.proc in self.ps.procs:
                    self.put_by(s, [(s.proc, dict(s.with_ or ()))], ("with",), pending, held)
                case Raise() if s.with_ is not None:  # raise: {event: EVENT, with: ...}
                    given = dict(s.with_)
                    hooks = self.ps.hooks.get(s.event, ())
                    self.put_by(s, [(h, given) for h in hooks if h in self.ps.procs],
                                ("raise", "with"), pending, held)
                case (Gain() | Drop() | Require() | Choose() | Do() | Raise() | Apply()
                      | Shuffle() | New()):
                    pass  # they take no item of a conserved kind, nor put one (see the top)
                case _:
                    assert_never(s)
        return pending, held

    def loop(self, s: ForEach | Repeat, pending: dict[str, Move | None],
             held: dict[str, Field], names: frozenset[str]
             ) -> tuple[dict[str, Move | None], dict[str, Field]]:
        """What is pending and held after a loop (see the module's text)."""
        runs = self.runs(s)
        if runs is not None and runs == 1:  # once: as if its steps stood here
            return self.steps(s.body, pending, held, names)
        if runs is not None and runs >= 2:
            # at least twice: what its first pass does, and what a second pass does then
            # (an item put in the loop and taken before it would be put twice)
            after, after_held = self.steps(s.body, pending, held, names)
            self.taken_in_loop(after, pending)
            first = {(p.code, p.path) for p in self.problems}
            start, outer = len(self.problems), self.passes
            self.passes = runs
            again = {k: v for k, v in after.items() if k in pending}
            after, after_held = self.steps(s.body, again, after_held, names)
            self.taken_in_loop(after, pending)
            self.passes = outer
            self.problems[start:] = [p for p in self.problems[start:]  # new ones only
                                     if (p.code, p.path) not in first]
            return {k: v for k, v in after.items() if k in pending}, after_held
        # it may not run at all
        after, after_held = self.steps(s.body, pending, held, names)
        self.taken_in_loop(after, pending)
        return pending, {k: v for k, v in held.items() if after_held.get(k) == v}

    def taken_in_loop(self, after: dict[str, Move | None], before: dict[str, Move | None]
                      ) -> None:
        """An item taken in a loop that runs more than once, or may not run, is put in it:
        each pass may name another item (its `as:`, a choice), and only the last would be put
        after the loop."""
        for item, take in after.items():
            if item not in before and take is not None:
                self.taken_nowhere(take, item)

    def runs(self, s: ForEach | Repeat) -> int | None:
        """How many times a loop runs when that is a constant: `repeat: 1`, `repeat:
        rules.game.start.royal_favors`, `for_each` over a list of the rules data; None when
        it depends on the state (it may not run at all)."""
        source = s.source if isinstance(s, ForEach) else s.count
        if isinstance(source, bool):
            return None
        value = source if isinstance(source, int) else constant_of(source, self.rules)
        if value is None:
            return None
        if isinstance(s, ForEach):
            return len(value) if isinstance(value, list | tuple) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def put_by(self, s: Do | Raise, calls: list[tuple[str, Mapping[str, Expr]]],
               where: tuple[str, ...], pending: dict[str, Move | None],
               held: dict[str, Field]) -> None:
        """The items that procedures (a `do:`, or the hooks of a `raise:`) put into a zone, given
        as their arguments: no longer pending, or a second copy of one still in its zone."""
        for pid, given in calls:
            for param in sorted(self.must_put(pid)):
                value = given.get(param)
                if not isinstance(value, str):
                    continue
                item = self.canon(value.strip())
                if item in pending:
                    del pending[item]
                elif item in held:
                    self.twice(item, held[item], f"gives it to '{pid}', which puts it into a zone",
                               (*s.path, *where, param))

    def move(self, s: Move, pending: dict[str, Move | None], held: dict[str, Field],
             names: frozenset[str]) -> None:
        mode = s.mode
        src = self.field(s.from_, names) if s.from_ is not None else None
        dst = self.field(s.to, names) if s.to is not None else None
        item = self.canon(str(s.what).strip()) if mode == "item" else ""
        if item and src is not None and s.to is not None:
            held.pop(item, None)
            if dst is not None and any(dst in z for z in self.zones.values()):
                held[item] = dst
        for kind, zones in self.zones.items():
            src_zone, dst_zone = src in zones, dst in zones
            if src_zone and dst is not None and not dst_zone and self.kinds.get(dst) == kind:
                self.problems.append(StepProblem(
                    CODE, f"this move takes a {kind} from {_shown(src)} to {_shown(dst)}, which "
                    f"is no zone of the {self.rule(kind)}: the {kind} would leave the game; move "
                    f"it to one of {self.among(kind)}, or add {_shown(dst)} to the invariant's "
                    "`in:`",
                    (*s.path, "move", "to")))
            if dst_zone and src is not None and not src_zone and self.kinds.get(src) == kind:
                self.problems.append(StepProblem(
                    CODE, f"this move puts a {kind} from {_shown(src)}, which is no zone of the "
                    f"{self.rule(kind)}, into {_shown(dst)}: the {kind} would come from outside "
                    f"the game; take it from one of {self.among(kind)}, or add {_shown(src)} to "
                    "the invariant's `in:`", (*s.path, "move", "from")))
            if src_zone and s.to is None:
                if mode == "item":
                    pending[item] = s
                    held.pop(item, None)
                elif mode in ("top", "first"):
                    self.problems.append(StepProblem(
                        CODE, f"this move takes the {mode} {kind}s of {_shown(src)} and puts "
                        f"them nowhere: they would leave the game ({self.rule(kind)}); give it a "
                        f"`to:`, one of {self.among(kind)}", (*s.path, "move")))
            if dst_zone and s.from_ is None and mode == "item":
                if item in pending:
                    del pending[item]
                    held[item] = dst  # type: ignore[assignment]  # a zone: not None
                elif item in held:
                    self.twice(item, held[item], f"puts it into {_shown(dst)}",
                               (*s.path, "move", "item"))

    # -- words ---------------------------------------------------------------------------

    def taken_nowhere(self, take: Move, item: str) -> None:
        src = self.field(take.from_, frozenset())
        kind = self.kinds.get(src) if src is not None else None
        kind = kind if kind in self.zones else next(iter(self.zones))
        where = _shown(src) if src is not None else "its zone"
        self.problems.append(StepProblem(
            CODE, f"'{item}' is taken from {where} here and not put into a zone after it on "
            f"every path: the {kind} would leave the game ({self.rule(kind)}), and no saved "
            f"game where this can be played would load; give the move a `to:`, one of "
            f"{self.among(kind)}, or put it there after it (`move: {{item: {item}, to: ZONE}}`)",
            (*take.path, "move")))

    def twice(self, item: str, zone: Field, does: str, path: tuple[str | int, ...]) -> None:
        kind = self.kinds.get(zone) or next(iter(self.zones))
        where = f"is chosen from {_shown(zone)} and still there" if not self.passes else \
            f"is in {_shown(zone)} after the first of the {self.passes} passes of this loop"
        self.problems.append(StepProblem(
            CODE, f"'{item}' {where} when this step "
            f"{does}: the {kind} would be in two zones ({self.rule(kind)}), and no saved "
            f"game where this can be played would load; take it first (`move: {{item: {item}, "
            f"from: {zone[1] if zone[0] == 'player' else _shown(zone)}}}`), or move it with a "
            "`from:`", path))

    def canon(self, name: str) -> str:
        """The local a name stands for, through the lets that name it."""
        for _ in range(len(self.alias) + 1):
            if name not in self.alias:
                break
            name = self.alias[name]
        return name

    def rule(self, kind: str) -> str:
        inv = self.invariant[kind]
        return f"invariant '{inv.id}' of rules/state.yaml"

    def among(self, kind: str) -> str:
        return ", ".join(_shown(z) for z in sorted(self.zones[kind]))

    def field(self, source: Any, names: frozenset[str]) -> Field | None:
        return _field_of(self.decl, source, names)


def _field_of(decl: StateDecl, source: Any, names: frozenset[str]) -> Field | None:
    """The field of the state a place names (`hand`, `q.hand`, `game.piles[pile]`), or None (a
    local, or not a place)."""
    if not isinstance(source, str) or len(source) > MAX_LENGTH:
        return None
    try:
        node: ast.expr = parse_expr(source.strip()).body
    except (SyntaxError, ValueError, RecursionError):  # reported by the step compiler
        return None
    return _root_field(decl, node, names)


def _root_field(decl: StateDecl, node: ast.expr, names: frozenset[str]) -> Field | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return None
        for scope in ("player", "game"):
            if decl.field(scope, node.id) is not None:
                return (scope, node.id)
        return None
    if isinstance(node, ast.Attribute):
        base = node.value
        if isinstance(base, ast.Name) and base.id == "game" and "game" not in names:
            return ("game", node.attr) if decl.field("game", node.attr) else None
        if isinstance(base, ast.Name) and base.id in ("rules", "this"):
            return None
        if decl.field("player", node.attr) is not None:
            return ("player", node.attr)
    return None


def _fields_read(decl: StateDecl, node: ast.AST, names: frozenset[str]) -> set[Field]:
    """Every field of the state an expression reads (its names and attributes, as places)."""
    out: set[Field] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name | ast.Attribute):
            got = _root_field(decl, sub, names)
            if got is not None:
                out.add(got)
    return out


LAW_CODE = "step-breaks-law"


def check_laws(ps: ProcSet, decl: StateDecl) -> list[StepProblem]:
    """The steps that break a conservation law of the state, refused at the step.

    A law is an invariant whose `holds:` is one equation (`officials + sum(...) ==
    rules.game.start.officials`): what it reads only changes together, by amounts that cancel
    (the base rules take Officials from the supply with `gain: {officials: -n}` and put them in
    an office with `gain: {game.offices[noble][color]: n}`). Refused: a `set:` whose value does
    not read the field it writes (it puts a number there whatever the rest holds), outside the
    setup and, in the setup, of a player's own number (the `new:` gives those); and, in a law
    that is a sum, `gain:` steps of one list of steps whose amounts do not cancel. A `set:`
    relative to the field (`officials - n`), a take and a put in two procedures and a gain
    clamped at a bound are left to the engine's check of every state (and the backstop)."""
    laws = [(inv, read) for inv, _body, read in _laws(decl)]
    linear = [(inv, terms) for inv, body, _read in _laws(decl)
              if (terms := _linear_law(decl, body))]
    if not laws:
        return []
    setup = _setup_only(ps)
    # (steps, params, in the setup): in the setup a player's own numbers are given by the
    # `new:` that makes the player, so only a `set:` of them is read there
    roots = [(proc.steps, [p.name for p in proc.params], pid in setup)
             for pid, proc in ps.procs.items()]
    roots += [(action.steps, [], False) for action in ps.actions.values()]
    out: list[StepProblem] = []
    seen: set[tuple[str | int, ...]] = set()
    for steps, params, in_setup in roots:
        names = _locals(steps, params)
        for top in steps:
            for s in top.walk():
                if not isinstance(s, Set) or s.path in seen:
                    continue
                for place, value in s.places:
                    got = _field_of(decl, place, names)
                    if got is None or (in_setup and got[0] != "player"):
                        continue
                    try:
                        read = _fields_read(decl, parse_expr(str(value).strip()).body, names)
                    except (SyntaxError, ValueError, RecursionError):
                        continue
                    if got in read:
                        continue  # relative to itself: a change by an amount
                    for inv, fields in laws:
                        if got in fields:
                            seen.add(s.path)
                            out.append(StepProblem(
                                LAW_CODE,
                                f"this `set:` puts a value in {_shown(got)} whatever the rest "
                                f"holds, and the invariant '{inv.id}' (rules/state.yaml) keeps "
                                f"it in an equation ({_holds(inv)}): "
                                + (f"in the setup, give {_shown(got)} in the `with:` of the "
                                   "`new:` that makes the player" if in_setup else
                                   f"change {_shown(got)} with `gain:` by an amount the steps "
                                   "take from, or put into, what else the equation counts"),
                                (*s.path, "set", place),
                                notes=_law_note(inv)))
                            break
        for block in _blocks(steps):
            for inv, terms in linear:
                found = _unbalanced(decl, block, terms, names)
                if found is not None and found[0].path not in seen:
                    step, left = found
                    seen.add(step.path)
                    out.append(StepProblem(
                        LAW_CODE,
                        f"the gains of these steps change what the invariant '{inv.id}' "
                        "(rules/state.yaml) keeps in an equation "
                        f"({_holds(inv)}) by amounts that do not cancel "
                        f"({left}): take from one of the numbers it counts what you put into "
                        "another, in the same list of steps (as the base rules' Officials "
                        "step does: gain: {officials: -n} and gain: "
                        "{game.offices[noble][color]: n})",
                        (*step.path, "gain"),
                        notes=_law_note(inv)))
    return out


def _laws(decl: StateDecl) -> list[tuple[Invariant, ast.Compare, set[Field]]]:
    """The conservation laws of the state: each invariant whose `holds:` is one equation
    reading the state, with that equation and the fields it reads."""
    out = []
    for inv in decl.invariants:
        if inv.holds is None:
            continue
        try:
            body = parse_expr(inv.holds.strip()).body
        except (SyntaxError, ValueError, RecursionError):  # reported by the state checks
            continue
        if isinstance(body, ast.Compare) and [type(o) for o in body.ops] == [ast.Eq]:
            read = _fields_read(decl, body, frozenset())
            if read:
                out.append((inv, body, read))
    return out


def _law_note(inv: Invariant) -> tuple[tuple[str, tuple[str | int, ...]], ...]:
    """The note of a problem about a law: where its invariant is declared."""
    return ((f"the invariant '{inv.id}' is declared here", ("state", *inv.path, "holds")),)


# A term of a linear law: a number of the state read with a sign, and its indexes (None where
# the law reads every key: a comprehension's variable), e.g. (1, ("game", "offices"), (None,
# "color")) for `sum([game.offices[n][color] for n in game.offices])`.
_Term = tuple[int, Field, tuple[str | None, ...]]


def _linear_law(decl: StateDecl, node: ast.Compare) -> list[_Term] | None:
    """The terms of an equation that is a sum of numbers of the state (with signs) on one
    side and of the rules' data on the other, or None (not linear: `max(0, ...)`)."""
    left = _terms(decl, node.left, frozenset())
    right = _terms(decl, node.comparators[0], frozenset())
    if left is None or right is None:
        return None
    return left + [(-sign, f, idx) for sign, f, idx in right]


def _terms(decl: StateDecl, node: ast.expr, wild: frozenset[str]) -> list[_Term] | None:
    if not _fields_read(decl, node, wild):
        return []  # constant: the rules' data
    match node:
        case ast.BinOp(op=ast.Add() | ast.Sub() as op, left=a, right=b):
            x, y = _terms(decl, a, wild), _terms(decl, b, wild)
            if x is None or y is None:
                return None
            if isinstance(op, ast.Sub):
                y = [(-s, f, i) for s, f, i in y]
            return x + y
        case ast.UnaryOp(op=ast.USub(), operand=a):
            x = _terms(decl, a, wild)
            return None if x is None else [(-s, f, i) for s, f, i in x]
        case ast.Call(func=ast.Name(id="sum"), args=[ast.ListComp() | ast.GeneratorExp() as c]) \
                if len(c.generators) == 1 and not c.generators[0].ifs \
                and isinstance(c.generators[0].target, ast.Name):
            return _terms(decl, c.elt, wild | {c.generators[0].target.id})
        case ast.Name() | ast.Attribute() | ast.Subscript():
            return _place_term(decl, node, wild)
        case _:
            return None


def _place_term(decl: StateDecl, node: ast.expr, wild: frozenset[str]) -> list[_Term] | None:
    idx: list[str | None] = []
    root = node
    while isinstance(root, ast.Subscript):
        key = root.slice
        idx.insert(0, None if isinstance(key, ast.Name) and key.id in wild
                   else ast.unparse(key))
        root = root.value
    got = _root_field(decl, root, frozenset())
    return None if got is None else [(1, got, tuple(idx))]


def constant_of(source: Any, rules: Any) -> Any:
    """The value of an expression as written (`source`) when it reads only numbers and the
    rules' data (`rules` a `data_lookup`: `_constant`); None when it reads anything else."""
    if not isinstance(source, str) or len(source) > MAX_LENGTH:
        return None
    try:
        return _constant(parse_expr(source.strip()).body, rules, {})
    except (SyntaxError, ValueError, RecursionError, KeyError, TypeError, ArithmeticError):
        return None


def constant_condition(cond: Any, rules: Any) -> bool | None:
    """Whether an `if:` condition as written holds whatever the state (`constant_of`): True
    or False; None when it depends on the state or is not a comparison (a number is not taken
    for a truth value)."""
    value = cond if isinstance(cond, bool) else constant_of(cond, rules)
    return value if isinstance(value, bool) else None


def _constant(node: ast.expr, rules: Any, names: Mapping[str, Any]) -> Any:
    """The value of a constant expression: numbers and lists written out, data of the rules
    (`rules.X.Y`), the values `names` gives, `+ - * //`, `len`, `min`, `max` and one
    comparison; ValueError for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | str) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [_constant(e, rules, names) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_constant(node.operand, rules, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult
                                                  | ast.FloorDiv):
        a, b = _constant(node.left, rules, names), _constant(node.right, rules, names)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
            raise ValueError("not a number")
        if isinstance(node.op, ast.FloorDiv) and b == 0:
            raise ValueError("a division by 0")
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
               ast.FloorDiv: int.__floordiv__}
        return ops[type(node.op)](a, b)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 \
            and isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.Lt | ast.LtE | ast.Gt | ast.GtE):
        a = _constant(node.left, rules, names)
        b = _constant(node.comparators[0], rules, names)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
            raise ValueError("not a number")
        cmp = {ast.Eq: int.__eq__, ast.NotEq: int.__ne__, ast.Lt: int.__lt__,
               ast.LtE: int.__le__, ast.Gt: int.__gt__, ast.GtE: int.__ge__}
        return cmp[type(node.ops[0])](a, b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords \
            and node.func.id in ("len", "min", "max") and node.args:
        args = [_constant(a, rules, names) for a in node.args]
        if node.func.id == "len":
            return len(*args)
        return min(*args) if node.func.id == "min" else max(*args)
    path: list[str] = []
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "rules" and path:
        return rules(tuple(path))
    raise ValueError("not a constant")


def check_new_records(ps: ProcSet, decl: StateDecl, data: Mapping[str, Any]
                      ) -> list[StepProblem]:
    """A `new:` player whose record a conservation law of each player refuses: the law (an
    invariant `each: player` whose `holds:` is one equation over the player's own numbers and
    the rules' data, `markers_left == max(0, rules.game.start.rubble_set_markers -
    rubble_sets)`) computed with the values the `with:` gives and the declared defaults of
    the rest is false, and no other step of the setup writes what it reads. Refused at the
    step (`step-breaks-law`); a law it cannot compute (it reads the game, or a value no
    constant gives) is left to the engine's check of the setup's state (and the backstop)."""
    rules = data_lookup(data)
    players = {f.id: f for f in decl.fields("player")}
    laws = [(inv, body, {f for _, f in read}) for inv, body, read in _laws(decl)
            if inv.each == "player" and all(scope == "player" for scope, _ in read)]
    if not laws:
        return []
    setup = _setup_only(ps)
    written: set[str] = set()  # the player numbers a step of the setup writes, but `new:`
    news: list[New] = []
    for pid in setup:
        proc = ps.procs[pid]
        names = _locals(proc.steps, [p.name for p in proc.params])
        for top in proc.steps:
            for s in top.walk():
                if isinstance(s, New):
                    news.append(s)
                elif isinstance(s, Gain | Set):
                    for place, _value in s.places:
                        got = _field_of(decl, place, names)
                        if got is not None and got[0] == "player":
                            written.add(got[1])
    out: list[StepProblem] = []
    for s in news:
        given = dict(s.with_ or ())
        got = _field_of(decl, s.place, frozenset())
        field = decl.field(*got) if got is not None else None
        if field is None or field.type.name != "list" or not field.type.args \
                or field.type.args[0].name != "player":
            continue  # not a list of players: refused as such (expr-type)
        if any(f.required and f.id not in given for f in players.values()):
            continue  # refused for what it lacks (step-missing): one error for one mistake
        for inv, body, own in laws:
            if own & written:
                continue
            values: dict[str, Any] = {}
            try:
                for f in own:
                    if f in given:
                        values[f] = _constant(parse_expr(str(given[f]).strip()).body, rules,
                                              {})
                    elif f in players:
                        values[f] = players[f].default
                holds = _constant(body, rules, values)
            except (SyntaxError, ValueError, KeyError, TypeError, RecursionError):
                continue
            if holds is False:
                shown = ", ".join(f"{f} {values[f]}" for f in sorted(own))
                missing = sorted(f for f in own if f not in given)
                out.append(StepProblem(
                    LAW_CODE,
                    f"the player this step makes starts with {shown}, and the invariant "
                    f"'{inv.id}' (rules/state.yaml) does not hold for it ({_holds(inv)})"
                    + (f": give {', '.join(missing)} in `with:`" if missing else ""),
                    (*s.path, "new"),
                    notes=_law_note(inv)))
    return out


def _holds(inv: Invariant) -> str:
    return (inv.holds or "").strip()


def _blocks(steps: Iterable[Step]) -> Iterator[tuple[Step, ...]]:
    """Every list of steps: the top one and those nested in its steps."""
    top = tuple(steps)
    yield top
    for s in top:
        for nested in branches(s):
            if nested:
                yield from _blocks(nested)


def _unbalanced(decl: StateDecl, block: tuple[Step, ...], terms: list[_Term],
                names: frozenset[str]) -> tuple[Step, str] | None:
    """The first gain of a list of steps that changes a law's terms, and the amounts left
    once every change is summed with its term's sign (grouped by the amount as written: `n`
    and `-n` cancel), when they do not cancel."""
    total: dict[str, int] = {}
    first: Step | None = None
    for s in block:
        if not isinstance(s, Gain):
            continue
        for place, amount in s.places:
            sign = _law_sign(decl, place, terms, names)
            if sign is None:
                continue
            first = first or s
            try:
                value = parse_expr(str(amount).strip()).body
            except (SyntaxError, ValueError, RecursionError):
                return None
            k, text = 1, ""
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
                k, value = -1, value.operand
            if isinstance(value, ast.Constant) and isinstance(value.value, int):
                k, text = k * value.value, "1"
            else:
                text = ast.unparse(value)
            total[text] = total.get(text, 0) + sign * k
    left = {text: k for text, k in total.items() if k}
    if first is None or not left:
        return None
    shown = ", ".join(f"{k:+d}" if text == "1" else f"{k:+d} × {text}"
                      for text, k in sorted(left.items()))
    return first, shown


def _law_sign(decl: StateDecl, place: str, terms: list[_Term], names: frozenset[str]
              ) -> int | None:
    """The sign a law gives the number a gain writes to, or None (not one of its terms)."""
    try:
        node = parse_expr(place.strip()).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    idx: list[str] = []
    root = node
    while isinstance(root, ast.Subscript):
        idx.insert(0, ast.unparse(root.slice))
        root = root.value
    got = _root_field(decl, root, names)
    if got is None:
        return None
    for sign, f, want in terms:
        if f == got and len(want) == len(idx) and all(
                w is None or w == i for w, i in zip(want, idx, strict=True)):
            return sign
    return None


def _shown(place: Field | None) -> str:
    return "nowhere" if place is None else f"{place[0]}.{place[1]}"
