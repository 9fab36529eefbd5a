"""The source trees of the effect language: one frozen class per kind of step.

`parse_steps` reads the steps of a procedure (rules/*.yaml, a list of mappings) once into these
classes, each with typed fields for what its YAML holds; a step of the wrong shape is a located
`StepProblem` (and left out). Expressions stay as written (`Expr`: a text, a number, true or
false, null); typed.py checks them against the declared state when a procedure is compiled
(steps.py).

`Step` is the union of the classes and `KINDS` their effect keys (`KIND`). A function that does
something for each kind matches on the classes and ends with `case _: assert_never(s)`; one that
handles only some lists the others in a case of their own. A new kind that one of them does not
handle then fails `mypy --strict` (tests/lang/test_step_kinds.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar, assert_never, cast, get_args

from lisboa_rules.core.source import Span
from lisboa_rules.lang import typed
from lisboa_rules.lang.typed import VType

Expr: TypeAlias = str | int | bool | None  # an expression as written (typed.check reads it)
Pairs: TypeAlias = tuple[tuple[str, Expr], ...]  # {NAME: EXPR}, in the order written
MoveMode: TypeAlias = Literal["item", "top", "first", "all"]
MOVE_MODES: tuple[MoveMode, ...] = ("item", "top", "first", "all")

COMMON = ("id", "text", "rule", "source", "assumptions")  # the keys every step may have
MAX_NESTING = 6


@dataclass(frozen=True)
class StepProblem:
    code: str
    message: str
    path: tuple[str | int, ...]
    suggestion: str | None = None
    # the declared field ("player.X") whose bounds it is about
    bounds_of: str | None = field(default=None, kw_only=True)
    # notes, each with the path of the data it points at (a step that reads what is unread)
    notes: tuple[tuple[str, tuple[str | int, ...]], ...] = field(default=(), kw_only=True)
    # what it is about (`ID.KEY`), carried to its Diagnostic (core/diagnostics.py `subject`)
    subject: tuple[str, ...] = field(default=(), kw_only=True)
    # it follows from an error said where the rules data it reads is written (typed.ExprError
    # `follows`): its step is refused, but it is not said again
    follows: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, kw_only=True)
class StepBase:
    """What every step has: its stable id (so a variant can change it), its own words, the rule
    a refusal names, where it is (its path in its document) and its effect key's value as
    written (what the annotated reference prints; no compiler reads it)."""

    KIND: ClassVar[str] = ""  # the effect key
    KEYS: ClassVar[tuple[str, ...]] = ()  # the keys it takes beside its effect key and COMMON

    id: str | None = None
    text: str | None = None
    rule: str | None = None
    path: tuple[str | int, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)
    written: Any = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> str:
        """The effect key (the words of a message, a path's part; not for dispatch)."""
        return self.KIND

    @classmethod
    def read(cls, r: _Reader) -> Step:
        """The step of this kind that a step's mapping (`r`) holds; _Shape if it has not the
        shape of the kind."""
        raise NotImplementedError(f"{cls.__name__} has no reader")

    def walk(self) -> Iterator[Step]:
        """This step, then every step nested in it, depth first."""
        me = cast("Step", self)
        yield me
        then, orelse = branches(me)
        for s in (*then, *orelse):
            yield from s.walk()


_S = TypeVar("_S", bound=StepBase)  # a step of one kind


@dataclass(frozen=True, kw_only=True)
class Gain(StepBase):
    """`gain: {PLACE: EXPR}`: add to numbers of the state (within their declared bounds)."""

    KIND: ClassVar[str] = "gain"
    places: Pairs

    @classmethod
    def read(cls, r: _Reader) -> Gain:
        return cls(places=r.pairs(r.value, "gain: {PLACE: EXPR}", ("gain",)), **r.common)


@dataclass(frozen=True, kw_only=True)
class Set(StepBase):
    """`set: {PLACE: EXPR}`: put values in the state."""

    KIND: ClassVar[str] = "set"
    places: Pairs

    @classmethod
    def read(cls, r: _Reader) -> Set:
        return cls(places=r.pairs(r.value, "set: {PLACE: EXPR}", ("set",)), **r.common)


@dataclass(frozen=True, kw_only=True)
class Let(StepBase):
    """`let: {NAME: EXPR}`: name values for the steps below."""

    KIND: ClassVar[str] = "let"
    names: Pairs

    @classmethod
    def read(cls, r: _Reader) -> Let:
        return cls(names=r.pairs(r.value, "let: {NAME: EXPR}", ("let",)), **r.common)


@dataclass(frozen=True, kw_only=True)
class Move(StepBase):
    """`move: {item|top|first|all: EXPR, from: PLACE, to: PLACE}`: one item, the N last (top)
    or first items, or all the items of a list (`from`) to another (`to`)."""

    KIND: ClassVar[str] = "move"
    mode: MoveMode
    what: Expr  # the item, or how many (top, first); true for all
    from_: str | None = None
    to: str | None = None

    @classmethod
    def read(cls, r: _Reader) -> Move:
        v = r.value
        modes = [m for m in MOVE_MODES if isinstance(v, Mapping) and m in v]
        if not isinstance(v, Mapping) or len(modes) != 1:
            raise _Shape("move: {item|top|first|all: EXPR, from: PLACE, to: PLACE}", ("move",))
        mode = modes[0]
        return cls(mode=mode, what=r.expr(v[mode], ("move", mode)),
                   from_=_place(v["from"]) if "from" in v else None,
                   to=_place(v["to"]) if "to" in v else None, **r.common)


@dataclass(frozen=True, kw_only=True)
class Drop(StepBase):
    """`drop: PLACE`: take an entry out of a table of the state."""

    KIND: ClassVar[str] = "drop"
    place: str

    @classmethod
    def read(cls, r: _Reader) -> Drop:
        return cls(place=_place(r.value), **r.common)


@dataclass(frozen=True, kw_only=True)
class Require(StepBase):
    """`require: COND` (`reason: TEXT`): refuse unless COND holds."""

    KIND: ClassVar[str] = "require"
    KEYS: ClassVar[tuple[str, ...]] = ("reason",)
    cond: Expr
    reason: str | None = None

    @classmethod
    def read(cls, r: _Reader) -> Require:
        return cls(cond=r.expr(r.value, ("require",)), reason=r.words("reason"), **r.common)


@dataclass(frozen=True, kw_only=True)
class Leads:
    """`leads: {by: EXPR, where: COND}` of a choice of several (`it`: an item)."""

    by: Expr
    where: Expr | None = None


@dataclass(frozen=True, kw_only=True)
class Choose(StepBase):
    """`choose: {as: NAME, from: EXPR, where: COND, optional: true, min: N, max: EXPR,
    up_to: N, leads: {...}}`: the player's choice, one item of a list (or min..max of them,
    or any set of up_to of them)."""

    KIND: ClassVar[str] = "choose"
    KEYS: ClassVar[tuple[str, ...]] = ("reason", "count_rule", "count_reason")
    as_: str
    source: Expr = "[]"  # `from` (a choice from nothing when not written)
    where: Expr | None = None
    optional: bool = False
    min: Expr | None = None
    max: Expr | None = None
    up_to: Expr | None = None
    leads: Leads | None = None
    reason: str | None = None
    count_rule: str | None = None
    count_reason: str | None = None

    @property
    def several(self) -> bool:
        """Whether it chooses several items (a tuple of them): min, max or up_to."""
        return self.min is not None or self.max is not None or self.up_to is not None

    @classmethod
    def read(cls, r: _Reader) -> Choose:
        v = r.value
        if not isinstance(v, Mapping) or not isinstance(v.get("as"), str):
            raise _Shape("choose: {as: NAME, from: EXPR, ...}", ("choose",))
        key = ("choose",)
        leads = None
        if "leads" in v:
            raw = v["leads"]
            if not isinstance(raw, Mapping) or "by" not in raw or any(
                    k not in ("by", "where") for k in raw):
                raise _Shape("leads: {by: EXPR, where: COND}", ("choose", "leads"))
            leads = Leads(by=r.expr(raw["by"], ("choose", "leads", "by")),
                          where=r.slot(raw, "where", ("choose", "leads")))
        return cls(as_=v["as"], source=r.expr(v.get("from", "[]"), (*key, "from")),
                   where=r.slot(v, "where", key), optional=bool(v.get("optional", False)),
                   min=r.slot(v, "min", key), max=r.slot(v, "max", key),
                   up_to=r.slot(v, "up_to", key), leads=leads, reason=r.words("reason"),
                   count_rule=r.words("count_rule"), count_reason=r.words("count_reason"),
                   **r.common)


@dataclass(frozen=True, kw_only=True)
class If(StepBase):
    """`if: COND`, `then: [STEPS]`, `else: [STEPS]`."""

    KIND: ClassVar[str] = "if"
    KEYS: ClassVar[tuple[str, ...]] = ("then", "else")
    cond: Expr
    then: tuple[Step, ...] = ()
    orelse: tuple[Step, ...] = ()

    @classmethod
    def read(cls, r: _Reader) -> If:
        step = cls(cond=r.expr(r.value, ("if",)), then=r.steps("then"),
                   orelse=r.steps("else"), **r.common)
        return r.holding(step, step.then or step.orelse, "then: [STEPS] (or else: [STEPS])")


@dataclass(frozen=True, kw_only=True)
class ForEach(StepBase):
    """`for_each: {as: NAME, in: EXPR}`, `do: [STEPS]`."""

    KIND: ClassVar[str] = "for_each"
    KEYS: ClassVar[tuple[str, ...]] = ("do",)
    var: str
    source: Expr  # `in`
    body: tuple[Step, ...] = ()

    @classmethod
    def read(cls, r: _Reader) -> ForEach:
        v = r.value
        if not isinstance(v, Mapping) or not isinstance(v.get("as"), str):
            raise _Shape("for_each: {as: NAME, in: EXPR}", ("for_each",))
        step = cls(var=v["as"], source=r.expr(v.get("in"), ("for_each", "in")),
                   body=r.steps("do"), **r.common)
        return r.holding(step, step.body, "do: [STEPS]")


@dataclass(frozen=True, kw_only=True)
class Repeat(StepBase):
    """`repeat: EXPR`, `do: [STEPS]`."""

    KIND: ClassVar[str] = "repeat"
    KEYS: ClassVar[tuple[str, ...]] = ("do",)
    count: Expr
    body: tuple[Step, ...] = ()

    @classmethod
    def read(cls, r: _Reader) -> Repeat:
        step = cls(count=r.expr(r.value, ("repeat",)), body=r.steps("do"), **r.common)
        return r.holding(step, step.body, "do: [STEPS]")


@dataclass(frozen=True, kw_only=True)
class Do(StepBase):
    """`do: PROCEDURE`, `with: {PARAM: EXPR}`: carry out another procedure (its id, or an
    expression whose value names one: `do: noble.noble_action` of an action)."""

    KIND: ClassVar[str] = "do"
    KEYS: ClassVar[tuple[str, ...]] = ("with", "reason", "none_reason")
    proc: str
    with_: Pairs | None = None
    reason: str | None = None  # an action's refusal when nothing at all can be done
    none_reason: str | None = None  # when the value names no procedure

    @classmethod
    def read(cls, r: _Reader) -> Do:
        if not isinstance(r.value, str):  # a list of steps outside a loop
            raise _Shape(f"unknown procedure {r.value!r}", ("do",), "unknown-reference")
        return cls(proc=r.value, with_=r.given("with: {PARAM: EXPR}"), reason=r.words("reason"),
                   none_reason=r.words("none_reason"), **r.common)


@dataclass(frozen=True, kw_only=True)
class Raise(StepBase):
    """`raise: EVENT`, or `raise: {event: EVENT, with: {PARAM: EXPR}}`: carry out the hooks of
    an event."""

    KIND: ClassVar[str] = "raise"
    event: str
    with_: Pairs | None = None  # None: written `raise: EVENT`

    @classmethod
    def read(cls, r: _Reader) -> Raise:
        v = r.value
        if isinstance(v, str):
            return cls(event=v, **r.common)
        given = (v.get("with") or {}) if isinstance(v, Mapping) else None
        if not isinstance(v, Mapping) or not isinstance(v.get("event"), str) \
                or not isinstance(given, Mapping):
            raise _Shape("raise: EVENT, or raise: {event: EVENT, with: {PARAM: EXPR}}",
                         ("raise",))
        return cls(event=v["event"], with_=r.pairs(given, "", ("raise", "with")), **r.common)


@dataclass(frozen=True, kw_only=True)
class Apply(StepBase):
    """`apply: {effects: ROW.column, PARAM: EXPR, choices: {CHOICE: NAME} | false}`: carry out
    a bundle of effects of a row of the rules."""

    KIND: ClassVar[str] = "apply"
    effects: Expr
    params: Pairs = ()  # the parameters the effects share after their amount
    choices: tuple[tuple[str, str], ...] | Literal[False] | None = None  # false: none is made

    @classmethod
    def read(cls, r: _Reader) -> Apply:
        v = r.value
        if not isinstance(v, Mapping) or "effects" not in v:
            raise _Shape("apply: {effects: ROW.column, PARAM: EXPR}", ("apply",))
        raw = v.get("choices")
        choices: tuple[tuple[str, str], ...] | Literal[False] | None = None
        if raw is False:
            choices = False
        elif isinstance(raw, Mapping):
            choices = tuple((str(k), str(x)) for k, x in raw.items())
        params = tuple((str(k), r.expr(x, ("apply", str(k)))) for k, x in v.items()
                       if k not in ("effects", "choices"))
        return cls(effects=r.expr(v["effects"], ("apply", "effects")), params=params,
                   choices=choices, **r.common)


@dataclass(frozen=True, kw_only=True)
class Shuffle(StepBase):
    """`shuffle: PLACE`: shuffle a list of the state with the procedure's seeded stream."""

    KIND: ClassVar[str] = "shuffle"
    place: str

    @classmethod
    def read(cls, r: _Reader) -> Shuffle:
        return cls(place=_place(r.value), **r.common)


@dataclass(frozen=True, kw_only=True)
class New(StepBase):
    """`new: PLACE`, `with: {FIELD: EXPR}`: append a new player to a list of players."""

    KIND: ClassVar[str] = "new"
    KEYS: ClassVar[tuple[str, ...]] = ("with",)
    place: str
    with_: Pairs | None = None

    @classmethod
    def read(cls, r: _Reader) -> New:
        return cls(place=_place(r.value), with_=r.given("with: {FIELD: EXPR}"), **r.common)


Step: TypeAlias = (Gain | Set | Let | Move | Drop | Require | Choose | If | ForEach | Repeat | Do
                   | Raise | Apply | Shuffle | New)
STEP_CLASSES: tuple[type[StepBase], ...] = get_args(Step)
KINDS = tuple(c.KIND for c in STEP_CLASSES)
BY_KIND: dict[str, type[StepBase]] = {c.KIND: c for c in STEP_CLASSES}


def branches(s: Step) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """The steps nested in a step: those it runs (an if's `then`, a loop's `do`), and an if's
    `else`."""
    match s:
        case If():
            return s.then, s.orelse
        case ForEach() | Repeat():
            return s.body, ()
        case (Gain() | Set() | Let() | Move() | Drop() | Require() | Choose() | Do() | Raise()
              | Apply() | Shuffle() | New()):
            return (), ()
        case _:
            assert_never(s)


@dataclass(frozen=True)
class Param:
    name: str
    type: VType
    # where it is declared (`params: {NAME: TYPE}`): a type naming no kind is reported there
    path: tuple[str | int, ...] = field(default=(), compare=False)
    # `params: {NAME: {type: TYPE, default: EXPR}}`: the value a call that leaves it out gives
    # (an expression over the state and the rules, checked where it is declared)
    default: Expr = None
    has_default: bool = False
    default_path: tuple[str | int, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Procedure:
    """A named list of steps: an effect, a Noble action, a hook, a period-end step list."""

    id: str
    params: tuple[Param, ...]
    steps: tuple[Step, ...]
    rule: str  # the rule a refusal names by default
    path: tuple[str | int, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def guard(self) -> tuple[Step, ...]:
        """The leading chooses, requires and lets, up to the last choose or require (lets
        after it belong to the effects)."""
        end = 0
        for i, s in enumerate(self.steps):
            match s:
                case Choose() | Require():
                    end = i + 1
                case Let():
                    pass
                case (Gain() | Set() | Move() | Drop() | If() | ForEach() | Repeat() | Do()
                      | Raise() | Apply() | Shuffle() | New()):
                    break
                case _:
                    assert_never(s)
        return self.steps[:end]

    @property
    def effects(self) -> tuple[Step, ...]:
        return self.steps[len(self.guard):]

    @property
    def choices(self) -> tuple[Choose, ...]:
        return tuple(s for s in self.guard if isinstance(s, Choose))


# --- parsing ----------------------------------------------------------------------------------


def parse_steps(raw: Any, path: tuple[str | int, ...], problems: list[StepProblem],
                depth: int = 0) -> tuple[Step, ...]:
    """Steps from their YAML (schema-valid in shape); problems are collected, not raised, and a
    step whose value does not have the shape of its kind is left out."""
    if not isinstance(raw, list):
        problems.append(StepProblem("step-shape", "steps are a list", path))
        return ()
    if depth > MAX_NESTING:
        problems.append(StepProblem("step-shape", f"steps nest deeper than {MAX_NESTING} levels; "
                                    "name a procedure and `do` it instead", path))
        return ()
    out = []
    for i, item in enumerate(raw):
        here = (*path, i)
        if not isinstance(item, Mapping):
            problems.append(StepProblem("step-shape", "a step is a mapping", here))
            continue
        kinds = [k for k in item if k in BY_KIND]
        if "do" in kinds and ("repeat" in item or "for_each" in item):
            kinds.remove("do")  # the body of a loop
        if kinds == ["if", "do"] or kinds == ["do", "if"]:
            problems.append(StepProblem(
                "step-shape", "an if's steps are written `then:` (and `else:`), not `do:`",
                (*here, "do"), "then"))
            continue
        if len(kinds) != 1:
            shown = ", ".join(kinds) if kinds else "none"
            problems.append(StepProblem(
                "step-shape", f"a step has exactly one effect key ({'/'.join(KINDS)}); "
                f"found {shown}", here))
            continue
        kind = kinds[0]
        allowed = {kind, *COMMON, *BY_KIND[kind].KEYS}
        for key in item:
            if key not in allowed:
                problems.append(StepProblem(
                    "step-unknown-key", f"'{key}' is not a key of a {kind} step", (*here, key),
                    typed.closest(str(key), sorted(allowed))))
        step = _Reader(item, kind, here, problems, depth).step()
        if step is not None:
            out.append(step)
    return tuple(out)


class _Shape(Exception):
    """A step's value does not have the shape of its kind: the message, the keys it is at."""

    def __init__(self, message: str, key: tuple[str, ...], code: str = "step-shape") -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.code = code


class _Reader:
    """One step's mapping, read by the class of its kind (`read`)."""

    def __init__(self, item: Mapping[str, Any], kind: str, here: tuple[str | int, ...],
                 problems: list[StepProblem], depth: int) -> None:
        self.item = item
        self.kind = kind
        self.here = here
        self.problems = problems
        self.depth = depth
        self.value = item[kind]  # the effect key's value
        self.common: dict[str, Any] = {
            "id": _opt_str(item.get("id")), "text": _opt_str(item.get("text")),
            "rule": _opt_str(item.get("rule")), "path": here, "written": self.value}

    def step(self) -> Step | None:
        try:
            return BY_KIND[self.kind].read(self)
        except _Shape as exc:
            self.problems.append(StepProblem(exc.code, exc.message, (*self.here, *exc.key)))
            return None

    def expr(self, value: Any, key: tuple[str, ...]) -> Expr:
        if value is None or isinstance(value, str | int | bool):
            return value
        raise _Shape(f"{'/'.join(key)}: an expression is a text, a number, true, false or "
                     "null", key)

    def slot(self, value: Mapping[str, Any], name: str, key: tuple[str, ...]) -> Expr | None:
        """An expression a step may leave out (None); written null, the expression `None`."""
        if name not in value:
            return None
        got = self.expr(value[name], (*key, name))
        return "None" if got is None else got

    def pairs(self, value: Any, shape: str, key: tuple[str, ...]) -> Pairs:
        if not isinstance(value, Mapping):
            raise _Shape(shape, key)
        return tuple((str(k), self.expr(x, (*key, str(k)))) for k, x in value.items())

    def words(self, key: str) -> str | None:
        return _opt_str(self.item.get(key))

    def given(self, shape: str) -> Pairs | None:
        """The step's `with: {NAME: EXPR}` (None when not written, or written null)."""
        value = self.item.get("with")
        if not value and not isinstance(value, Mapping):
            return None
        return self.pairs(value, shape, ("with",))

    def holding(self, step: _S, body: tuple[Step, ...], shape: str) -> _S:
        """A step that holds steps (an if, a loop): one whose steps are none does nothing, a
        `step-shape` problem at its effect key (when its steps were written and none was
        read, each was refused already). The step is kept: its expressions are checked."""
        written = [k for k in ("then", "else", "do") if self.item.get(k)]
        if not body and not written:
            self.problems.append(StepProblem(
                "step-shape", f"this {self.kind} has no steps: write {shape} under it, or drop "
                "the step", (*self.here, self.kind)))
        return step

    def steps(self, key: str) -> tuple[Step, ...]:
        return parse_steps(self.item.get(key, []), (*self.here, key), self.problems,
                           self.depth + 1)


def _place(value: Any) -> str:
    """A place of the state as written (a number or true/false: its text, which reads as the
    same value)."""
    return value if isinstance(value, str) else str(value)


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None
