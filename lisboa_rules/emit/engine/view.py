"""The engine back end: model -> the view the engine template arranges.

Rule data becomes Python literals (through `pyfmt`, never string-building in templates);
formulas become small typed functions with a comment pointing back to their rules line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.core.encode import py_comment, py_str
from lisboa_rules.core.source import Span
from lisboa_rules.emit.engine import tables as table_shapes
from lisboa_rules.emit.engine.components import WordsView, words_view
from lisboa_rules.emit.engine.procs import Lowered, Vocab, flow_id, procedure_view
from lisboa_rules.emit.engine.pyfmt import (
    Call,
    Raw,
    Update,
    fmt,
    identical,
    identifier,
    literal,
    wrap_line,
)
from lisboa_rules.emit.engine.queries import QueryView, query_view
from lisboa_rules.emit.engine.runtime import runtime_text
from lisboa_rules.emit.engine.sees import deals, draws, sees, zones
from lisboa_rules.emit.engine.state_classes import ClassView, state_classes, value_class
from lisboa_rules.emit.reference import words
from lisboa_rules.emit.reference.words import humanize, plain_text
from lisboa_rules.ir import expr as ir
from lisboa_rules.lang import expr
from lisboa_rules.lang.expr import Formula
from lisboa_rules.model.types import HeldItem, Model
from lisboa_rules.pyprint import expr as pyprint


@dataclass
class FormulaFn:
    name: str
    returns: str
    code: str
    comments: list[str]


@dataclass
class EngineView:
    functions: list[FormulaFn] = field(default_factory=list)
    shows: list[FormulaFn] = field(default_factory=list)  # formulas with the values put in
    rulesets: list[tuple[str, str]] = field(default_factory=list)  # (name, code)
    keys: list[tuple[str, str]] = field(default_factory=list)  # (key literal, ruleset name)
    constants: list[tuple[str, str]] = field(default_factory=list)
    scorers: list[FormulaFn] = field(default_factory=list)  # code = the function's body
    scorer_keys: list[tuple[str, str]] = field(default_factory=list)  # (key literal, name)
    move_check: str = ""  # the body of _move_well_typed
    totalers: list[FormulaFn] = field(default_factory=list)  # final_totals, per rule set
    totaler_keys: list[tuple[str, str]] = field(default_factory=list)
    totaler_tables: str = ""  # the constants they read (majority shares, held items' indexes)
    rankers: list[FormulaFn] = field(default_factory=list)  # code = the function's body
    ranker_keys: list[tuple[str, str]] = field(default_factory=list)  # (key literal, name)
    rule_text: str = ""
    rule_texts: str = "{}"  # RULE_TEXTS: by rule set, the words that differ from RULE_TEXT
    title: str = ""
    game_info: str = ""
    variants: str = ""
    state_schema: str = ""
    view_schema: str = ""  # the JSON Schema of a view (VIEW_SCHEMA)
    game_sees: str = ""  # who sees the fields not everyone sees (rules/state.yaml `see:`)
    player_sees: str = ""
    zones: str = ""  # the zones of the conserved kinds, "scope.field" -> kind
    # the schemas of the rule sets whose saves are checked more strictly: (name, literal)
    # and the rule sets' keys to those names (STATE_SCHEMAS)
    own_schemas: list[tuple[str, str]] = field(default_factory=list)
    own_schema_of: str = "{}"
    procedures: list[str] = field(default_factory=list)  # the compiled procedures' functions
    tables: list[tuple[str, str]] = field(default_factory=list)  # the tables their steps read
    state: dict[str, ClassView] = field(default_factory=dict)  # Player, Game (rules/state.yaml)
    move_fields: list[MoveField] = field(default_factory=list)  # the choices of a Move
    move_types: str = ""
    move_defaults: str = ""
    move_not_null: str = ""
    move_slots: str = ""  # the Move's __slots__ (a tuple literal)
    move_names: str = ""  # the same tuple, as _MOVE_FIELDS
    move_methods: str = ""  # its __init__, _copy, __eq__, __hash__, __repr__
    ctx_slots: str = ""
    ctx_methods: str = ""
    ctx_names: str = ""  # the tuple of its fields, as _CTX_FIELDS
    queries: QueryView = field(default_factory=QueryView)  # the public queries (vocabulary)
    contexts: list[str] = field(default_factory=list)  # the fields of Ctx (vocabulary)
    # the public functions listing a conserved kind's ids (rules/state.yaml `function:`):
    # (name, kind, its literal, id type)
    listers: list[tuple[str, str, str, str]] = field(default_factory=list)
    # the rule tables' classes and the RuleSet (emit/engine/tables.py)
    table_classes: list[str] = field(default_factory=list)
    # what `component` and `move_words` read, and each conserved kind's own function
    # (emit/engine/components.py)
    words: WordsView = field(default_factory=WordsView)
    exports: list[str] = field(default_factory=list)  # the generated public names


@dataclass(frozen=True)
class MoveField:
    name: str
    annotation: str
    default: str


_MOVE_ANNOTATION = {"integer": ("int | None", None), "string": ("str | None", None),
                    "boolean": ("bool", False), "integers": ("tuple[int, ...]", ()),
                    "strings": ("tuple[str, ...]", ())}


class _Functions:
    """Formula functions, shared between rule sets when the code is the same."""

    def __init__(self, names: dict[str, str] | None = None) -> None:
        # display path -> stable name ("rules/court.yaml"), so that comments do not change with
        # the working directory or the checkout path
        self.names = dict(names or {})
        self.by_code: dict[tuple[str, str], FormulaFn] = {}
        self.ordered: list[FormulaFn] = []
        self.shows: dict[str, FormulaFn] = {}
        # what each formula name reads in the rule set being emitted (IR nodes of g, p, x)
        self.vocab = Vocab({}, pyprint.PLAIN)

    def loc(self, span: Span) -> str:
        """`FILE:LINE` of a span for comments in the engine (the one place that names files)."""
        return f"{self.names.get(span.file, span.file)}:{span.line}"

    def lower(self, f: Formula, params: tuple[tuple[str, int], ...]) -> ir.Expr:
        """The formula as an IR expression in the rule set being emitted."""
        return lower(f, params, self.vocab)

    def show(self, f: Formula, params: tuple[tuple[str, int], ...], where: Span,
             what: str) -> Raw | None:
        """A function that writes the formula with this player's values put in ("3 × 2"), or
        None when that would only repeat the result."""
        code = show_code(f, params, self.vocab)
        if code is None:
            return None
        fn = self.shows.get(code)
        if fn is None:
            fn = FormulaFn(f"_show{len(self.shows) + 1}", "str", code, [])
            self.shows[code] = fn
        for line in _wrap(f"{self.loc(where)} {what}: {f.source}", 96):
            if line not in fn.comments:
                fn.comments.append(line)
        return Raw(fn.name)

    def inline(self, node: ir.Expr, held: Mapping[ir.Expr, str] | None = None) -> str | None:
        """A formula's node as an expression of `g` and `p`, each node of `held` read from the
        local that holds it (the majority's measure `m`, a value computed once), or None when
        it reads other context values (only a formula's function is given them, as `x`)."""
        held = held or {}
        if reads_context(node, held):
            return None
        return pyprint.bare(pyprint.expr(node, pyprint.holding(self.vocab.names, held)))

    def add(self, f: Formula, params: tuple[tuple[str, int], ...], where: Span, what: str) -> Raw:
        code = pyprint.bare(pyprint.expr(self.lower(f, params), self.vocab.names))
        returns = "bool" if f.type == "bool" else "int"
        key = (code, returns)
        fn = self.by_code.get(key)
        if fn is None:
            fn = FormulaFn(f"_fx{len(self.ordered) + 1}", returns, code, [])
            self.by_code[key] = fn
            self.ordered.append(fn)
        note = f"{self.loc(where)} {what}: {f.source}"
        if params:
            note += "  [" + ", ".join(f"{k}={v}" for k, v in params) + "]"
        for line in _wrap(note, 96):
            if line not in fn.comments:
                fn.comments.append(line)
        return Raw(fn.name)


def lower(f: Formula, params: tuple[tuple[str, int], ...], vocab: Vocab,
          names: list[ir.Expr] | None = None) -> ir.Expr:
    """A formula as an IR expression: a param is its number, a name what the vocabulary says
    it reads, the item of a per-item name (`stores.gold`) put in its slot. `names`, when
    given, gets the node of each name the formula reads, in order (not the params)."""
    values = dict(params)

    def resolve(name: str, item: str | None) -> ir.Expr:
        if name in values:
            return ir.Lit(values[name])
        node = vocab.nodes[name][1]
        if item is not None:
            node = ir.substitute(node, {ir.Slot("item"): ir.Lit(item)})
        if names is not None:
            names.append(node)
        return node

    return expr.to_ir(f, resolve)


def reads_context(node: ir.Expr, given: Mapping[ir.Expr, str] | None = None) -> bool:
    """Whether a formula's node reads a context value (`ir.Context`) other than those `given`:
    only a formula's own function is handed the context."""
    return any(isinstance(x, ir.Context) and x not in (given or {}) for x in ir.walk(node))


_SHOW_OPS = {"+": "+", "-": "-", "*": "×", "//": "÷"}


def _list_sum(node: ir.Expr, n: pyprint.Names) -> ir.Expr | None:
    """The list of the player's a value is the sum of (`sum(ships)`: its terms can be shown),
    as the engine prints the value (a measure printed in place), or None."""
    if isinstance(node, ir.Measure) and not pyprint.is_function(node, n):
        node = node.body
    if (isinstance(node, ir.Call) and node.fn == "sum" and len(node.args) == 1
            and isinstance(node.args[0], ir.PlayerField) and isinstance(node.args[0].of, ir.Me)):
        return node.args[0]
    return None


def show_code(f: Formula, params: tuple[tuple[str, int], ...], vocab: Vocab,
              shown: list[str] | None = None,
              held: Mapping[ir.Expr, str] | None = None) -> str | None:
    """An f-string that writes an int formula with the values put in, e.g. `(12 + 3) ÷ 5,
    rounded down`.

    Params show as their numbers and the names as their values; a name that is the sum of a
    player's list shows its terms (`2 + 3 + 3`). Brackets follow precedence
    (`expr.needs_parens`), and a list's sum counts as a `+` there: `2 * ship_hull_total` shows
    `2 × (3 + 4)`. None when the result would be just the value. `shown`, when given, gets
    the code of each value the text writes, once each (a list whose terms are written, as
    `tuple(LIST)`): the text is a function of them (the scorer's key of an explanation
    already written). `held`: values the code reads from locals (`pyprint.holding`)."""
    if f.type != "int":
        return None
    leaves: list[ir.Expr] = []
    root = lower(f, params, vocab, leaves)
    printer = pyprint.holding(vocab.names, held or {})
    count = 0
    keys: list[str] = []

    def is_name(node: ir.Expr) -> bool:
        return any(node is leaf for leaf in leaves)

    def name(node: ir.Expr, bracket: bool) -> str:
        nonlocal count
        count += 1
        code = pyprint.bare(pyprint.expr(node, printer))
        items = _list_sum(node, printer)
        listed = None if items is None else pyprint.expr(items, printer)
        key = code if listed is None else f"tuple({listed})"
        if key not in keys:
            keys.append(key)
        if listed is not None:
            terms = f"' + '.join(map(str, {listed}))"
            if bracket:  # one term needs no brackets, two or more do
                return ("{'(' + " + terms + " + ')' if len(" + listed + ") > 1 else "
                        + terms + " or '0'}")
            return "{" + terms + " or '0'" + "}"
        return "{" + code + "}"

    def operand(child: ir.Expr, parent: ir.Expr, right: bool = False) -> str | None:
        text = walk(child, expr.needs_parens(expr.SUM_NODE, parent, right))
        if text is None or is_name(child) or not expr.needs_parens(child, parent, right):
            return text
        return f"({text})"

    def walk(node: ir.Expr, bracket_sum: bool = False) -> str | None:
        if is_name(node):
            return name(node, bracket_sum)
        if isinstance(node, ir.Lit) and isinstance(node.value, int):
            return str(node.value)  # a number of the formula, or a param's
        if isinstance(node, ir.BinOp) and node.op in _SHOW_OPS:
            left, right = operand(node.left, node), operand(node.right, node, True)
            if left is None or right is None:
                return None
            text = f"{left} {_SHOW_OPS[node.op]} {right}"
            # a whole-number division says its rounding, once, where it is made
            return f"{text}, rounded down" if node.op == "//" else text
        if isinstance(node, ir.Neg):
            inner = operand(node.operand, node)
            return None if inner is None else f"-{inner}"
        if isinstance(node, ir.Call):
            args = [walk(a) for a in node.args]
            if any(a is None for a in args):
                return None
            return f"{node.fn}(" + ", ".join(a for a in args if a is not None) + ")"
        return None  # comparisons and logic are not shown

    text = walk(root)
    if text is None or count == 0:
        return None
    if is_name(root) and not text.startswith("{'"):
        return None  # a single value: showing it would repeat the result
    if '"' in text or "\\" in text:
        return None  # pragma: no cover - never produced: items are quoted with '
    if shown is not None:
        shown += keys
    return 'f"' + text + '"'




def _wrap(text: str, width: int) -> list[str]:
    """Comment lines of at most `width`, encoded by `py_comment` (a newline inside a formula
    or a file name would end the comment and turn data into code)."""
    text = py_comment(text)
    lines: list[str] = []
    while len(text) > width:
        indent = 2 if lines else 0  # continuation lines start with two spaces
        cut = text.rfind(" ", indent + 1, width)
        cut = cut if cut > indent else width  # one long word: break it (never loop on it)
        lines.append(text[:cut].rstrip())
        text = "  " + text[cut:].lstrip()
    return [*lines, text]


def ruleset_fields(m: Model, fns: _Functions, procs: dict[str, Any] | None = None,
                   moves: dict[str, Any] | None = None, fx: dict[str, Any] | None = None,
                   phases: dict[str, Any] | None = None,
                   turn: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every field of the engine's RuleSet for this model, as Python values / code."""
    def v(name: str) -> Any:
        """The value of a RuleSet field read as it stands in the rules (FIELD_PATHS)."""
        return m.value(*FIELD_PATHS[name])

    spaces = v("treasury_values")  # the Treasury track's spaces: a value and a modifier each
    piles = tuple(v("piles"))
    noble_ids = {n.id for n in m.nobles}
    out: dict[str, Any] = {
        "key": m.variants,
        "players_min": v("players_min"),
        "players_max": v("players_max"),
        "colors": tuple(v("colors")),
        "periods": v("periods"),
        "flags": tuple(f["id"] for f in m.data["game"].get("flags", ())),
        "businesses": tuple(b.id for b in m.businesses),
        "business_names": tuple(b.name for b in m.businesses),
        "hand_size": v("hand_size"),
        "start_reis": v("start_reis"),
        "start_influence": v("start_influence"),
        "start_officials": v("start_officials"),
        "start_stores": v("start_stores"),
        "start_markers": v("start_markers"),
        "neutral_officials": v("neutral_officials"),
        "influence_min": v("influence_min"),
        "influence_max": v("influence_max"),
        "wig_at_max": v("wig_at_max"),
        "reis_icons": tuple(sorted(v("reis_icons"))),
        "treasury_values": tuple(s["value"] for s in spaces),
        "treasury_modifiers": tuple(s["modifier"] for s in spaces),
        "treasury_down": v("treasury_down"),
        "treasury_up": v("treasury_up"),
        "portfolio_base": v("portfolio_base"),
        "portfolio_per_set": v("portfolio_per_set"),
        "ship_influence": v("ship_influence"),
        "warehouse_base": v("warehouse_base"),
        "warehouse_per_set": v("warehouse_per_set"),
        "cubes_per_set": v("cubes_per_set"),
        "max_sets": v("max_sets"),
        "period_wigs_per_set": v("period_wigs_per_set"),
        "term_money": v("term_money"),
        "term_score": v("term_score"),
    }
    out["nobles"] = tuple(
        Call("NobleDef", (), (
            ("id", n.id), ("name", n.name), ("state_actions", n.state_actions),
            ("noble_action", n.noble_action), ("trade_goods", n.trade_goods),
            *((("reign_flag", n.reign.flag), ("reign_name", n.reign.name),
               ("reign_action", n.reign.noble_action)) if n.reign else ()),
        )) for n in m.nobles)
    out["state_actions"] = {a.id: Call("StateActionDef", (a.id, a.name, a.effects))
                            for a in m.state_actions}
    nas = {}
    for a in m.noble_actions:
        land = (fns.add(a.land_price, a.params, a.span, f"{a.id} land price")
                if a.land_price is not None else None)
        nas[a.id] = Call("NobleActionDef", (), (
            ("id", a.id), ("name", a.name), ("procedure", a.procedure), ("land_price", land),
            ("rubble", a.rubble), ("lots", a.lots),
            ("extra_marker_on", a.extra_pick.marker_on if a.extra_pick else None),
            ("extra_max", a.extra_pick.max_markers if a.extra_pick else 0),
            ("wigs_per_official", a.wigs_per_official),
            ("forbidden_flag", a.forbidden_by_flag)))
    out["noble_actions"] = nas
    out["actions"] = {a.id: Call("ActionDef", (a.id, a.name, a.procedure, a.cost, a.followable,
                                               a.reward, a.number)) for a in m.actions}
    out["costs"] = {c.id: fns.add(c.formula, c.params, c.span, c.id) for c in m.costs}
    out["triggers"] = tuple(
        Call("TriggerDef", (t.id, t.ends, t.periods, t.scope,
                            fns.add(t.condition, t.params, t.span, t.id)))
        for t in m.triggers)
    out["period_end"] = tuple(Call("StepDef", (s.id, s.procedure))
                              for s in m.period_end)
    out["extra_rounds"] = v("extra_rounds")
    out["follows_allowed"] = v("follows_allowed")
    sources = []
    for s in m.scoring:
        f = (fns.add(s.formula, s.params, s.span, s.id) if s.formula is not None else None)
        show = (fns.show(s.formula, s.params, s.span, s.id) if s.formula is not None else None)
        groups = tuple(Call("GroupDef", (gr.id, gr.name,
                                         fns.add(gr.measure, s.params, gr.span,
                                                 f"{s.id} {gr.id}"), gr.table,
                                         gr.unit, gr.unit_one))
                       for gr in s.groups)
        el = fns.add(s.eligible, s.params, s.span, f"{s.id} eligible") if s.eligible else None
        words = plain_formula(m, s.formula, s.params) if s.formula is not None else ""
        el_words = eligible_words(m, s) if s.eligible is not None else ""
        items = tuple(_item_def(m, fns, it) for it in s.items)
        sources.append(Call("SourceDef", (), (
            ("id", s.id), ("name", s.name), ("kind", s.kind), ("formula", f), ("words", words),
            ("groups", groups), ("eligible", el), ("show", show),
            ("eligible_words", el_words),
            *((("held", s.held), ("items", items)) if s.kind == "held" else ()))))
    out["scoring"] = tuple(sources)
    out["majority_columns"] = tuple(v("majority_columns"))
    out["column_names"] = tuple(v("column_names"))
    out["tiebreakers"] = tuple((t.name, fns.add(t.measure, (), t.span, "tie-breaker"))
                               for t in m.tiebreakers)
    out["piles"] = piles
    out["treasury_pile"] = next((p for p in piles if p not in noble_ids), "")
    out["cards"] = {c.number: Call("CardDef", (c.number, c.deck, c.type, c.influence, c.reward,
                                               c.penalty, c.event_action, c.event_effects,
                                               c.set_flag)) for c in m.cards}
    out["decrees"] = {d.id: Call("ItemDef", (d.id, fns.add(d.condition, (), d.span, d.id),
                                             d.wigs, plain_formula(m, d.condition, ()),
                                             humanize(d.id)))
                      for d in m.decrees}
    out["decree_display"] = v("decree_display")
    out["plans"] = {p.id: p.officials for p in m.plans}
    out["ships"] = {s.color: (s.size, s.cost) for s in m.ships}
    per = m.value("components", "shipyard", "per_color")
    f_per = expr.parse(per, {"players": expr.NameInfo("int")})
    out["shipyard_per_color"] = fns.add(f_per, (), m.span_of("components", "shipyard",
                                                              "per_color"), "shipyard")
    out["procs"] = procs or {}
    out["moves"] = moves or {}
    out["phases"] = phases or {}
    out["first_seat"] = (turn or {}).get("first_seat")
    out["next_seat"] = (turn or {}).get("next_seat")
    out["fx"] = fx or {}
    out["deals"] = deals(m)
    out["draws"] = draws(m)
    return out


def _item_def(m: Model, fns: _Functions, it: HeldItem) -> Call:
    """An item of a held scoring source: its id, condition (compiled), points, the
    condition in words and the item's name as the reference prints it (its id humanized: the
    score's explanation names it so)."""
    if it.condition is None:
        return Call("ItemDef", (it.id, None, it.points, "", humanize(it.id)))
    return Call("ItemDef", (it.id, fns.add(it.condition, (), it.span, it.id), it.points,
                            plain_formula(m, it.condition, ()), humanize(it.id)))


def scorer_body(m: Model, fns: _Functions) -> tuple[str, list[str]]:
    """The final scoring of one rule set as straight-line code: every source's formula inlined
    (params folded in), the fixed words read from the runtime's `_score_layout`, which walks
    the same sources in the same order (the totals alone: `totals_body`). (docstring line,
    body lines)."""
    body: list[str] = []
    add = body.append
    n_pp = n_maj = n_held = 0
    row: list[str] = []  # per source, in order: the statements of the per-player loop
    points: list[str] = []
    heads: list[str] = []
    for s in m.scoring:
        note = f"    # {py_comment(f'{fns.loc(s.span)} {s.id}')}"
        if s.kind == "per-player" and s.formula is not None:
            k = n_pp
            n_pp += 1
            heads.append(f"    h{k}, t{k} = layout.per_player[{k}].head, "
                         f"layout.per_player[{k}].tail")
            node = fns.lower(s.formula, s.params)
            code = fns.inline(node)
            helpers: list[ir.Measure] = []
            if code is None:
                code = fns.add(s.formula, s.params, s.span, s.id).code + "(g, p, _NO_CTX)"
            else:
                helpers = pyprint.calls(node, fns.vocab.names)
            shown: list[str] = []
            # A helper call both the formula and its shown values read is made once.
            held: dict[ir.Expr, str] = {call: f"c{len(points)}_{c}"
                                        for c, call in enumerate(helpers)}
            show = show_code(s.formula, s.params, fns.vocab, shown, held)
            v = f"w{len(points)}"
            row.append(f"    {note}: {_one_line(s.formula.source)}")
            if show is not None and held:
                for call, local in held.items():
                    row.append(f"        {local} = {pyprint.expr(call, fns.vocab.names)}")
                code = fns.inline(node, held)
            row.append(f"        {v} = {code}")
            # The line is kept per the values its text writes (`shown`: the text is a function
            # of them, and so are the points): an explanation already written is not written
            # again (`_shown`, a bounded memo of the layout).
            if show is not None:
                text = f'f"{{h{k}}}{show[2:-1]} = {{{v}}}{{t{k}}}"'
                key = shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ")"
            else:
                text = f'f"{{h{k}}}{{{v}}}{{t{k}}}"'
                key = v
            heads.append(f"    kept{k} = layout.per_player[{k}].lines")
            ln = f"l{len(points)}"
            row += wrap_line(f"        {ln}k = {key}")
            row.append(f"        {ln} = kept{k}.get({ln}k)")
            row.append(f"        if {ln} is None:")
            row.append(f"            text = {text}")
            row += wrap_line(f"            {ln} = _shown(kept{k}, {ln}k, "
                             f"ScoreLine({literal(s.id)}, {v}, text))")
            points.append(v)
            continue
        elif s.kind == "majority":
            k = n_maj
            n_maj += 1
            add(note + " (a majority per group)")
            ms, oks = [], []
            measure = fns.vocab.nodes.get("measure")  # the count, in the local `m`
            given: dict[ir.Expr, str] = {measure[1]: "m"} if measure is not None else {}
            for j, gr in enumerate(s.groups):
                code = fns.inline(fns.lower(gr.measure, s.params))
                if code is None:
                    code = fns.add(gr.measure, s.params, gr.span, f"{s.id} {gr.id}").code
                    code += "(g, p, _NO_CTX)"
                add(f"    ms{k}_{j} = [{code} for p in players]  # {_one_line(gr.measure.source)}")
                ms.append(f"ms{k}_{j}")
                if s.eligible is not None:
                    node = fns.lower(s.eligible, s.params)
                    el = fns.inline(node, given)
                    if el is None:  # its function, given the count: it reads g, p and m
                        el = fns.add(s.eligible, s.params, s.span, f"{s.id} eligible").code
                        el += "(g, p, _measure_ctx(m))"
                        reads_m = reads_state = True
                    else:
                        reads_m = any(x in given for x in ir.walk(node))
                        reads_state = pyprint.reads_state(
                            node, pyprint.holding(fns.vocab.names, given))
                    if not reads_m:
                        add(f"    ok{k}_{j} = [{el} for p in players]")
                    elif reads_state:
                        add(f"    ok{k}_{j} = [{el} for p, m in zip(players, ms{k}_{j}, "
                            "strict=True)]")
                    else:
                        add(f"    ok{k}_{j} = [{el} for m in ms{k}_{j}]")
                    oks.append(f"ok{k}_{j}")
            add(f"    ms{k} = [{', '.join(ms)}]")
            if oks:
                add(f"    ok{k} = [{', '.join(oks)}]")
            eligible = f"ok{k}" if oks else "None"
            add(f"    won{k}, said{k} = _score_majority(layout.majorities[{k}], colors, "
                f"ms{k}, {eligible})")
            v = f"w{len(points)}"
            row += [f"    {note}", f"        {v} = won{k}[i]", f"        text = said{k}[i]"]
        elif s.kind == "held":
            k = n_held
            n_held += 1
            v = f"w{len(points)}"
            row += [f"    {note}: each item of p.{s.held}",
                    f"        l{len(points)} = _held_line(g, p, p.{s.held}, layout.held[{k}])",
                    f"        {v} = l{len(points)}.points"]
            points.append(v)
            continue
        else:
            continue
        row += wrap_line(f"        l{len(points)} = ScoreLine({literal(s.id)}, {v}, text)")
        points.append(v)
    track = score_track(m)
    out = ["    players = g.players", "    colors = tuple([p.color for p in players])",
           *body, *heads, "    rows = []", "    totals = []", "    for i, p in enumerate(players):"]
    out += row
    lines_tuple = ", ".join(f"l{i}" for i in range(len(points)))
    out += [f"        rows.append(({lines_tuple}{',' if len(points) == 1 else ''}))",
            f"        totals.append(p.{track} + " + " + ".join(points) + ")" if points
            else f"        totals.append(p.{track})",
            f"    track = tuple([p.{track} for p in players])",
            "    return ScoreSheet(colors, track, tuple(rows), tuple(totals), layout.term)"]
    return f"the sources at {fns.loc(m.span_of('scoring', 'sources'))}", out


class ScoreTables:
    """The constants the totals' functions read (module-level, shared by the rule sets: one
    name per printed value): each majority group's shares and each held source's item
    indexes. `lines` are the statements, in the order the constants were first asked for."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # annotation and value -> name
        self.notes: dict[str, list[str]] = {}  # name -> its comment lines
        self.values: dict[str, str] = {}  # name -> annotation and value

    def name(self, prefix: str, annotation: str, value: Any, note: str, call: str = "") -> str:
        """The constant holding `value` (a tuple or a dict of ints), or made by `call(value)`
        (a function of the runtime) when given, named once."""
        key = f"{annotation} = {call}{fmt(value, 0)}"
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"{prefix}{len(self.names) + 1}"
            self.notes[name] = []
            lead = f"{name}: {annotation} = "
            if call:
                self.values[name] = "\n".join(wrap_line(f"{lead}{call}{fmt(value, 0)}"))
            else:
                self.values[name] = lead + fmt(value, 0, col=len(lead))
        if note not in self.notes[name]:
            self.notes[name].append(note)
        return name

    def lines(self) -> list[str]:
        """Each constant with its comments, as a block of module-level code."""
        out: list[str] = []
        for name, code in self.values.items():
            for note in self.notes[name]:
                out += [f"# {line}" for line in _wrap(note, 98)]
            out.append(code)
        return out


def _held_tree(items: list[tuple[str, str | None, int]], lo: int, hi: int, total: str,
               depth: int) -> list[str]:
    """The points of the item whose index `k` is in [lo, hi): a tree of comparisons of ints
    down to each item's condition, inlined, and its points (items: (id, condition code or
    None, points))."""
    pad = "    " * depth
    if hi - lo == 1:
        item, cond, points = items[lo]
        if not points:
            return [f"{pad}pass  # {py_comment(item)}: 0"]
        if cond is None:
            return [f"{pad}{total} += {points}  # {py_comment(item)}"]
        return [*wrap_line(f"{pad}if {cond}:  # {py_comment(item)}"),
                f"{pad}    {total} += {points}"]
    mid = (lo + hi) // 2
    test = f"k == {lo}" if mid == lo + 1 else f"k < {mid}"
    out = [f"{pad}if {test}:", *_held_tree(items, lo, mid, total, depth + 1)]
    rest = _held_tree(items, mid, hi, total, depth + 1)
    inner = pad + "    "
    if rest[0].startswith(f"{inner}if ") and all(
            not line.startswith(inner) or line.startswith((f"{inner} ", f"{inner}elif ",
                                                            f"{inner}else:"))
            for line in rest[1:]):  # one `if` statement: an `elif` of this one
        return [*out, f"{pad}el{rest[0][len(inner):]}", *[line[4:] for line in rest[1:]]]
    if rest[0].strip().startswith("pass"):  # the last item scores nothing
        return out
    return [*out, f"{pad}else:", *rest]


def totals_body(m: Model, fns: _Functions, tables: ScoreTables) -> tuple[str, list[str]]:
    """The final totals of one rule set as straight-line code (the body of `final_totals`: the
    sources of `scorer_body` in the same order, no explanation written), no call through a
    table: first each majority group's count per seat (and its eligibility, when that reads
    the player), then per seat each per-player formula inlined, each held item's condition
    inlined (the item found by its index: a tree of comparisons of ints) and each majority
    group's place: how many eligible seats beat this one and how many tie with it (itself
    included), whose share is read from a table of the group's prizes in the rule set's
    columns (made when the engine loads by the runtime's `_place_points`, which pays them as
    `majority_awards` does). (docstring line, body lines)."""
    columns = tuple(m.value("scoring", "majority", "columns"))
    seats = max(int(m.value("game", "players", "max")), len(m.value("game", "players", "colors")))
    measure = fns.vocab.nodes.get("measure")  # a majority's count: the local `m` or `mj`
    given = {measure[1]: "m"} if measure is not None else {}
    mine = {measure[1]: "mj"} if measure is not None else {}
    first: list[str] = []  # the lists of the counts, per group
    counts: list[str] = []  # per seat: each group's count (and eligibility)
    each: list[str] = []  # per seat: each source's points
    points: list[str] = []
    n_maj = 0
    seat_loop = False  # a group's eligibility reads the player: its seats are walked by index
    for s in m.scoring:
        note = f"{fns.loc(s.span)} {s.id}"
        v = f"w{len(points)}"
        if s.kind == "per-player" and s.formula is not None:
            code = fns.inline(fns.lower(s.formula, s.params))
            if code is None:
                code = fns.add(s.formula, s.params, s.span, s.id).code + "(g, p, _NO_CTX)"
            each.append(f"        # {py_comment(note)}")
            each += wrap_line(f"        {v} = {code}")
            points.append(v)
        elif s.kind == "held":
            conds: list[tuple[str, str | None, int]] = []
            for it in s.items:
                cond = None
                if it.condition is not None:
                    cond = fns.inline(fns.lower(it.condition, ()))
                    if cond is None:
                        cond = fns.add(it.condition, (), it.span, it.id).code + "(g, p, _NO_CTX)"
                conds.append((it.id, cond, it.points))
            each.append(f"        # {py_comment(note)}: each item of p.{s.held}")
            each.append(f"        {v} = 0")
            if conds and all(cond is None for _, cond, _ in conds):  # its points, by item
                index = tables.name("_HELD", "Final[dict[str, int]]",
                                    {it.id: it.points for it in s.items},
                                    f"{note}: each item's points")
                each.append(f"        for item in p.{s.held}:")
                each.append(f"            {v} += {index}[item]")
            elif conds:
                index = tables.name("_HELD", "Final[dict[str, int]]",
                                    {it.id: k for k, it in enumerate(s.items)},
                                    f"{note}: each item's index")
                each.append(f"        for item in p.{s.held}:")
                each.append(f"            k = {index}[item]")
                each += _held_tree(conds, 0, len(conds), v, 3)
            points.append(v)
        elif s.kind == "majority":
            k = n_maj
            n_maj += 1
            el: str | None = None  # the eligibility of this seat (of `m`) when it reads only `m`
            el_j: str | None = None  # the same of another seat (of `mj`)
            state_el: str | None = None  # the eligibility, when it reads the player
            reads_m = False
            if s.eligible is not None:
                node = fns.lower(s.eligible, s.params)
                code = fns.inline(node, given)
                if code is None:  # its function, given the count: it reads g, p and m
                    code = fns.add(s.eligible, s.params, s.span, f"{s.id} eligible").code
                    state_el = code + "(g, p, _measure_ctx(m))"
                    reads_m = True
                elif pyprint.reads_state(node, pyprint.holding(fns.vocab.names, given)):
                    state_el = code
                    reads_m = any(x in given for x in ir.walk(node))
                else:
                    el, el_j = code, fns.inline(node, mine)
            each.append(f"        # {py_comment(note)}: the place in each group")
            each.append(f"        {v} = 0")
            for j, gr in enumerate(s.groups):
                if not any(gr.table[c - 1] for c in columns):  # no place pays: nothing to count
                    continue
                code = fns.inline(fns.lower(gr.measure, s.params))
                if code is None:
                    code = fns.add(gr.measure, s.params, gr.span, f"{s.id} {gr.id}").code
                    code += "(g, p, _NO_CTX)"
                ms, ok = f"ms{k}_{j}", f"ok{k}_{j}"
                first.append(f"    {ms}: list[int] = []")
                counts.append(f"        # {py_comment(note)} {py_comment(gr.id)}: "
                              f"{py_comment(_one_line(gr.measure.source))}")
                if state_el is not None and reads_m:
                    counts += wrap_line(f"        m = {code}")
                    counts.append(f"        {ms}.append(m)")
                else:
                    counts += wrap_line(f"        {ms}.append({code})")
                if state_el is not None:
                    first.append(f"    {ok}: list[bool] = []")
                    counts += wrap_line(f"        {ok}.append({state_el})")
                # the points of a place, as the runtime awards them (`_place_points`)
                name = tables.name("_SHARES", "Final[tuple[int, ...]]",
                                   (tuple(gr.table), columns, seats),
                                   f"{note} {gr.id}: the points of a place (at seats above "
                                   f"* {seats + 1} + seats level)", call="_place_points")
                add = f"{v} += {name}[above * {seats + 1} + level]"
                if state_el is not None:
                    seat_loop = True
                    each += [f"        if {ok}[i]:",
                             f"            m = {ms}[i]",
                             "            above = level = 0",
                             "            for j in range(n):",
                             f"                if {ok}[j]:",
                             f"                    mj = {ms}[j]",
                             "                    if mj > m:",
                             "                        above += 1",
                             "                    elif mj == m:",
                             "                        level += 1",
                             f"            {add}"]
                    continue
                each.append(f"        m = {ms}[i]")
                pad = "        "
                if el is not None:
                    each += wrap_line(f"        if {el}:")
                    pad += "    "
                each += [f"{pad}above = level = 0", f"{pad}for mj in {ms}:"]
                inner = pad + "    "
                if el_j is not None:
                    each += wrap_line(f"{inner}if {el_j}:")
                    inner += "    "
                each += [f"{inner}if mj > m:",
                         f"{inner}    above += 1",
                         f"{inner}elif mj == m:",
                         f"{inner}    level += 1",
                         f"{pad}{add}"]
            points.append(v)
    track = score_track(m)
    out = ["    players = g.players"]
    if first:
        out += [*(["    n = len(players)"] if seat_loop else []), *first,
                "    for p in players:", *counts]
    out += ["    totals: list[int] = []",
            "    for i, p in enumerate(players):" if first else "    for p in players:", *each]
    out += wrap_line(f"        totals.append(p.{track} + " + " + ".join(points) + ")"
                     if points else f"        totals.append(p.{track})")
    out.append("    return tuple(totals)")
    return f"the sources at {fns.loc(m.span_of('scoring', 'sources'))}", out


def score_track(m: Model) -> str:
    """The player's field that is the score track (rules: scoring.track)."""
    return str(m.value("scoring", "track"))


def ranker_body(m: Model, fns: _Functions) -> tuple[str, list[str]]:
    """The tie-breaker keys of one rule set as straight-line code (rules: tiebreakers): per
    seat, each measure of the chain inlined, the score track read as the final total `w`. A
    measure that hands the player to a function reads a copy of the player with the final
    total on the track (what the runtime's `ranking` did for every measure). (docstring
    line, body lines)."""
    track = score_track(m)
    total: dict[ir.Expr, str] = {ir.PlayerField(track, ir.Me()): "w"}  # the track, as `w`
    codes = []
    # each measure with the score track read as the final total, or None when it hands `p`
    # itself on (to a function, which may read the track)
    read: list[str | None] = []
    for t in m.tiebreakers:
        node = fns.lower(t.measure, ())
        code = fns.inline(node)
        if code is None:
            code = fns.add(t.measure, (), t.span, "tie-breaker").code + "(g, p, _NO_CTX)"
            read.append(None)
        else:
            hands_on = pyprint.hands_on_player(node, fns.vocab.names)
            read.append(None if hands_on else fns.inline(node, total))
        codes.append(code)
    copy = None in read
    # a copy: the whole chain reads it, so that every measure sees the same player
    keys = codes if copy else [k or "" for k in read]
    key = ", ".join(keys) + ("," if len(keys) == 1 else "")
    body = ["    keys: list[tuple[int, ...]] = []"]
    if copy:
        body += ["    for q, w in zip(g.players, totals, strict=True):",
                 "        p = q._copy()  # a shallow copy: the measures only read it",
                 f"        p.{track} = w"]
    else:
        body.append("    for p, w in zip(g.players, totals, strict=True):")
    body += wrap_line(f"        keys.append(({key}))")
    body.append("    return keys")
    where = m.span_of("scoring", "tiebreakers", "measures")
    return f"the chain at {fns.loc(where)}", body


def _one_line(text: str) -> str:
    """A formula's source for a trailing comment (no control characters)."""
    return _wrap(text, 10_000)[0]


def eligible_words(m: Model, s: Any) -> str:
    """The condition a scoring source pays under, as the words of a sentence ("you have any
    completed Plans"): the reference's words of its formula; a name that stands for each group
    of a majority (its measure, "the count") is said as what the groups count, when they all
    count one unit ("your stores": "you have any stores")."""
    if s.eligible is None:
        return ""
    node = words.formula_ir(m, s.eligible.source, dict(s.params))
    if node is None:
        return plain_formula(m, s.eligible, s.params)
    sayer = words.Sayer(m, dict(s.params))
    units = {gr.unit for gr in s.groups if gr.unit}
    if len(units) == 1:
        unit = units.pop()
        for v in m.vocabulary:
            if v.scope == s.kind:  # a name only a source of this kind gives (its measure)
                sayer.vocab[v.name] = f"your {unit}"
    try:
        return sayer.say(node)
    except words.Unsayable:  # a shape the sayer does not word: the formula's plain words
        return plain_formula(m, s.eligible, s.params)


def plain_formula(m: Model, f: Formula, params: tuple[tuple[str, int], ...]) -> str:
    """A formula in words, with params shown as their values."""
    words = {v.name: v.words for v in m.vocabulary}
    values = dict(params)
    names = {b.id: b.name for b in m.businesses}

    def say(name: str, item: str | None) -> str:
        if name in values:
            return str(values[name])
        w = words.get(name, name)
        return w.replace("{item}", names.get(item or "", item or ""))

    return expr.to_words(f, say)


def constants(m: Model) -> list[tuple[str, str]]:
    """Rule ids the runtime names when it refuses a move."""
    by_proc = {a.procedure: a for a in m.actions}
    refusals = m.value("flow", "refusals")
    rows: list[tuple[str, Any]] = [
        ("_TURN_RULE", refusals["turn"]),
        ("_GAME_END", refusals["game-over"]),
        ("_TURN_END", flow_id(m, "turn_end")),
        ("_SETUP", flow_id(m, "setup")),
        ("_ACTION_RULE", {proc: a.id for proc, a in sorted(by_proc.items())}),
        ("_PHASE_RULES", {str(ph["id"]): str(ph["rule"]) for ph in (
            m.data["flow"].get("phases") or []) if isinstance(ph, dict) and ph.get("rule")}),
    ]
    return [(identifier(name), fmt(value, 0, col=len(name) + 9)) for name, value in rows]


def rule_texts(m: Model) -> dict[str, tuple[str, str]]:
    """Every rule's title and plain text with placeholders filled, for refusal messages."""
    return {r.id: (r.title, plain_text(m, r)) for r in sorted(m.rules, key=lambda r: r.id)}


# Where each RuleSet field comes from in the rules documents: (kind, path...). The generated
# rule sets carry a comment with the rules/ line of each value.
FIELD_PATHS: dict[str, tuple[str, ...]] = {
    "players_min": ("game", "players", "min"),
    "players_max": ("game", "players", "max"),
    "colors": ("game", "players", "colors"),
    "periods": ("game", "periods"),
    "flags": ("game", "flags"),
    "businesses": ("game", "businesses"),
    "business_names": ("game", "businesses"),
    "hand_size": ("game", "start", "hand"),
    "start_reis": ("game", "start", "reis"),
    "start_influence": ("game", "start", "influence"),
    "start_officials": ("game", "start", "officials"),
    "start_stores": ("game", "start", "stores"),
    "start_markers": ("game", "start", "rubble_set_markers"),
    "neutral_officials": ("game", "start", "neutral_officials_per_office"),
    "influence_min": ("game", "tracks", "influence", "min"),
    "influence_max": ("game", "tracks", "influence", "max"),
    "wig_at_max": ("game", "tracks", "influence", "wig_at_max"),
    "reis_icons": ("game", "tracks", "influence", "reis_icons"),
    "treasury_values": ("game", "tracks", "treasury", "spaces"),
    "treasury_modifiers": ("game", "tracks", "treasury", "spaces"),
    "treasury_down": ("game", "tracks", "treasury", "down_per_treasury_card"),
    "treasury_up": ("game", "tracks", "treasury", "up_per_sponsored_event"),
    "portfolio_base": ("game", "portfolio", "base_size"),
    "portfolio_per_set": ("game", "portfolio", "per_rubble_set"),
    "ship_influence": ("game", "portfolio", "ship_influence"),
    "warehouse_base": ("game", "warehouse", "base_size"),
    "warehouse_per_set": ("game", "warehouse", "per_rubble_set"),
    "cubes_per_set": ("game", "rubble", "cubes_per_set"),
    "max_sets": ("game", "rubble", "max_sets"),
    "period_wigs_per_set": ("game", "rubble", "wigs_per_set_at_period_end"),
    "term_money": ("game", "terms", "money"),
    "term_score": ("game", "terms", "score"),
    "nobles": ("nobles", "nobles"),
    "state_actions": ("nobles", "state_actions"),
    "noble_actions": ("nobles", "noble_actions"),
    "actions": ("court", "actions"),
    "costs": ("court", "costs"),
    "triggers": ("flow", "triggers"),
    "period_end": ("flow", "period_end", "steps"),
    "extra_rounds": ("flow", "game_end", "extra_rounds"),
    "follows_allowed": ("flow", "game_end", "follows_allowed"),
    "scoring": ("scoring", "sources"),
    "majority_columns": ("scoring", "majority", "columns"),
    "column_names": ("scoring", "majority", "column_names"),
    "tiebreakers": ("scoring", "tiebreakers", "measures"),
    "piles": ("components", "display", "piles"),
    "treasury_pile": ("components", "display", "piles"),
    "cards": ("components", "cards"),
    "decrees": ("components", "decrees"),
    "decree_display": ("components", "decree_display", "size"),
    "plans": ("components", "plans"),
    "ships": ("components", "ships"),
    "shipyard_per_color": ("components", "shipyard", "per_color"),
    "invariants": ("state", "invariants"),
    "state_checks": ("state", "checks"),
}


def _where(fns: _Functions, m: Model, name: str,
           moved: list[tuple[tuple[str | int, ...], Span]] | None = None) -> str:
    """`rules/FILE:LINE path` for a field; for a variant (`moved`: the spans of its model
    that differ from the base's, `_moved_spans`), the first line that changed it."""
    path = FIELD_PATHS.get(name)
    if path is None:
        return ""
    span = m.span_of(*path)
    if moved is not None:
        changed = [sp for key, sp in moved if key[:len(path)] == path]
        if changed:
            span = min(changed, key=lambda sp: (sp.file, sp.line, sp.col))
    return f"{fns.loc(span)} {'.'.join(path)}"


def _moved_spans(m: Model, base: Model) -> list[tuple[tuple[str | int, ...], Span]]:
    """The spans of `m` that are not the same in `base` (what a variant changed), in order."""
    spans = base.spans  # mostly the same objects: `is` first, then Span's __eq__
    return [(key, sp) for key, sp in m.spans.items()
            if (was := spans.get(key)) is not sp and was != sp]


def _call_with_sources(head: str, items: list[tuple[str, Any]], where: dict[str, str],
                       args: tuple[str, ...] = ()) -> str:
    """`head(arg, key=value, ...)` laid out one argument per line (as ruff formats it), each
    keyword argument under a comment naming the rules line it comes from."""
    lines = [f"{head}("]
    lines += [f"    {a}," for a in args]
    for k, v in items:
        if where.get(k):
            lines.append(f"    # {py_comment(where[k])}")
        lines.append(f"    {k}=" + fmt(v, 4, ",", 4 + len(k) + 1) + ",")
    lines.append(")")
    return "\n".join(lines)


def _move_check(types: dict[str, str], not_null: tuple[str, ...]) -> str:
    """The body of `_move_well_typed`: `_MOVE_TYPES` as one straight-line test of each field's
    exact Python type (what `_move_problem` checks, field by field, to say what is wrong).

    The items of a tuple field and a field that is an int or None are read through a local
    declared `object`: compiled code (mypyc) converts a value it reads as a declared `int`,
    `True` into 1, and `move.card is None or type(move.card) is int` reads the second
    `move.card` as an int (narrowed), so the compiled engine's test let `card=True` and
    `cards=(True,)` through; an `object` is read as it is."""
    exact = {"string": "str", "integer": "int", "boolean": "bool"}
    lines = []
    tests = []
    for name, t in types.items():
        value = f"move.{name}"
        if t in ("strings", "integers"):
            item = "str" if t == "strings" else "int"
            lines.append(f"    items_{name}: tuple[object, ...] = {value}")
            tests.append(f"type(items_{name}) is tuple")
            tests.append(f"all(type(v) is {item} for v in items_{name})")
        elif name in not_null:
            tests.append(f"type({value}) is {exact[t]}")
        else:
            if t == "integer":
                lines.append(f"    value_{name}: object = {value}")
                value = f"value_{name}"
            tests.append(f"({value} is None or type({value}) is {exact[t]})")
    return "\n".join([*lines, "    return (", *[f"        {'and ' if k else ''}{x}"
                                                  for k, x in enumerate(tests)], "    )"])


def build_view(
    rulesets: list[Model],
    lowered: Lowered,
    variants: list[Any],
    state_schema: Any,
    names: dict[str, str] | None = None,
    folded: tuple[tuple[str, str], ...] = (),
    own_schemas: dict[tuple[str, ...], Any] | None = None,
    view_schema: Any = None,
) -> EngineView:
    """Everything the engine template needs (`lowered`: the rule sets' procedures as the lower
    pass compiled them); `names` maps display paths to stable names."""
    fns = _Functions(names)
    view = EngineView()
    pv = procedure_view(rulesets, lowered)
    fns.vocab = pv.vocab[0]
    view.procedures = pv.functions
    view.listers = [(name, kind, py_str(kind), of) for name, kind, of in pv.listers]
    view.tables = pv.tables
    types = {"kind": "string", "player": "integer", **pv.move_fields}
    defaults = {name: _MOVE_ANNOTATION[t][1] for name, t in pv.move_fields.items()}
    view.move_fields = [MoveField(name, _MOVE_ANNOTATION[t][0], repr(defaults[name]))
                        for name, t in pv.move_fields.items()]
    view.move_types = fmt(types, 0, "", len("_MOVE_TYPES: Final = "))
    view.move_check = _move_check(types, ("kind", "player", *[n for n, t in
                                                             pv.move_fields.items()
                                                             if t == "boolean"]))
    view.move_defaults = fmt(defaults, 0, "", len("_MOVE_DEFAULTS: Final[dict[str, Any]] = "))
    not_null = ["kind", "player", *[n for n, t in pv.move_fields.items() if t == "boolean"]]
    view.move_not_null = "frozenset({" + ", ".join(py_str(n) for n in not_null) + "})"
    move_names = ("kind", "player", *[f.name for f in view.move_fields])
    view.move_slots = fmt(tuple(sorted(move_names)), 4, col=16)
    view.move_names = fmt(move_names, 0, col=len("_MOVE_FIELDS: Final = "))
    view.move_methods = value_class(
        "Move", [("kind", "str", None), ("player", "int", None),
                 *[(f.name, f.annotation, f.default) for f in view.move_fields]],
        "_MOVE_FIELDS", code=True)
    base = rulesets[0]
    base_fields = ruleset_fields(base, fns, pv.by_ruleset[0], pv.moves[0], pv.fx[0],
                                 pv.phases[0], pv.turn[0])
    base_fields.update(pv.invariants[0])
    table_shapes.check_fields(base_fields)
    view.table_classes = table_shapes.classes()
    view.rulesets.append(("_RS0", _call_with_sources(
        "RuleSet", list(base_fields.items()), {k: _where(fns, base, k) for k in base_fields})))
    view.keys.append((literal_key(rulesets[0].variants), "_RS0"))
    # Each combination of variants is written as the closest rule set already written (the
    # largest subset of its variants: the base at worst) plus what differs from it.
    emitted: list[tuple[str, Model, dict[str, Any]]] = [("_RS0", base, base_fields)]
    for i, m in enumerate(rulesets[1:], 1):
        fns.vocab = pv.vocab[i]
        fields = ruleset_fields(m, fns, pv.by_ruleset[i], pv.moves[i], pv.fx[i], pv.phases[i],
                                pv.turn[i])
        fields.update(pv.invariants[i])
        parent_name, parent, parent_fields = max(
            (e for e in emitted if set(e[1].variants) <= set(m.variants)),
            key=lambda e: len(e[1].variants))
        changed = []
        for k, v in fields.items():
            if identical(v, parent_fields[k]) or fmt(v) == fmt(parent_fields[k]):
                continue
            if isinstance(v, dict) and isinstance(parent_fields[k], dict):
                diff = {kk: vv for kk, vv in v.items()
                        if kk not in parent_fields[k] or not (
                            identical(vv, parent_fields[k][kk])
                            or fmt(vv) == fmt(parent_fields[k][kk]))}
                removed = [kk for kk in parent_fields[k] if kk not in v]
                if not removed:
                    changed.append((k, Update(f"{parent_name}.{k}", diff)))
                    continue
            changed.append((k, v))
        moved = _moved_spans(m, parent)
        where = {k: _where(fns, m, k, moved) for k, _ in changed}
        name = f"_RS{i}"
        view.rulesets.append((name, _call_with_sources("_replace", changed, where,
                                                       (parent_name,))))
        view.keys.append((literal_key(m.variants), name))
        emitted.append((name, m, fields))
    view.title = str(base.value("game", "title"))
    game = base.data["game"]
    info = {k: game[k] for k in ("id", "title", "designer", "publisher", "published", "years",
                                 "periods") if k in game}
    if folded:  # house rules built into the base game (build --variant): named, not anonymous
        info["folded_variants"] = [{"id": vid, "title": title} for vid, title in folded]
    view.game_info = fmt(info, 0, col=len("GAME_INFO: Final[dict[str, Any]] = "))
    by_code: dict[str, FormulaFn] = {}
    for m in rulesets:
        origin, body = scorer_body(m, fns)
        code = "\n".join(body)
        fn = by_code.get(code)
        if fn is None:
            fn = by_code[code] = FormulaFn(f"_final_scores{len(by_code) + 1}", "ScoreSheet",
                                           code, [])
            view.scorers.append(fn)
        if origin not in fn.comments:
            fn.comments.append(origin)
        view.scorer_keys.append((literal_key(m.variants), fn.name))
    by_code = {}
    score_tables = ScoreTables()
    for m in rulesets:
        origin, body = totals_body(m, fns, score_tables)
        code = "\n".join(body)
        fn = by_code.get(code)
        if fn is None:
            fn = by_code[code] = FormulaFn(f"_final_totals{len(by_code) + 1}", "", code, [])
            view.totalers.append(fn)
        if origin not in fn.comments:
            fn.comments.append(origin)
        view.totaler_keys.append((literal_key(m.variants), fn.name))
    view.totaler_tables = "\n".join(score_tables.lines())
    by_code = {}
    for m in rulesets:
        origin, body = ranker_body(m, fns)
        code = "\n".join(body)
        fn = by_code.get(code)
        if fn is None:
            fn = by_code[code] = FormulaFn(f"_rank_keys{len(by_code) + 1}", "", code, [])
            view.rankers.append(fn)
        if origin not in fn.comments:
            fn.comments.append(origin)
        view.ranker_keys.append((literal_key(m.variants), fn.name))
    view.functions = fns.ordered
    view.shows = list(fns.shows.values())
    view.constants = constants(rulesets[0])
    texts = rule_texts(rulesets[0])
    for m in rulesets[1:]:
        for k, v in rule_texts(m).items():
            texts.setdefault(k, v)
    view.rule_text = fmt(dict(sorted(texts.items())), 0)
    # the words of a rule set that differ from those (a chosen variant's text, a number it
    # changes): its refusals quote them
    own: dict[tuple[str, ...], dict[str, tuple[str, str]]] = {}
    for m in rulesets[1:]:
        diff = {k: v for k, v in rule_texts(m).items() if texts.get(k) != v}
        if diff:
            own[tuple(m.variants)] = dict(sorted(diff.items()))
    view.rule_texts = fmt(dict(sorted(own.items())), 0)
    view.variants = fmt({v.id: Call("VariantDef", (v.id, v.title, v.applies_players))
                         for v in variants}, 0)
    view.state_schema = fmt(state_schema, 0)
    named: dict[str, str] = {}  # a schema's literal -> its name (rule sets may share one)
    by_key: dict[tuple[str, ...], Raw] = {}
    for key, schema in sorted((own_schemas or {}).items()):
        literal = fmt(schema, 0)
        if literal not in named:
            named[literal] = f"_STATE_SCHEMA_{len(named) + 1}"
            view.own_schemas.append((named[literal], literal))
        by_key[key] = Raw(named[literal])
    view.own_schema_of = fmt(by_key, 0)
    view.state = state_classes(base.state)
    view.game_sees = fmt(sees(base.state, "game"), 0,
                         col=len("_GAME_SEES: Final[dict[str, str]] = "))
    view.player_sees = fmt(sees(base.state, "player"), 0,
                           col=len("_PLAYER_SEES: Final[dict[str, str]] = "))
    view.zones = fmt(zones(base.state), 0, col=len("_ZONES: Final[dict[str, str]] = "))
    view.view_schema = fmt(view_schema, 0)
    view.queries = query_view(pv.queries, [m.variants for m in rulesets])
    runtime = runtime_text()
    taken = {*runtime.exports(), *runtime.bound(), *view.queries.names,
             *(n for n, _, _ in pv.listers)}
    view.words = words_view(rulesets, pv.move_types, pv.listers, taken, fns.loc)
    view.exports = [*view.queries.names, *(f[0] for f in view.words.functions)]
    for m in rulesets:  # the context names a formula may be given, in the vocabulary's order
        for row in m.data["vocabulary"]["names"]:
            if isinstance(row, dict) and "context" in row and row["context"] not in view.contexts:
                view.contexts.append(identifier(str(row["context"])))
    ctx_names = tuple(view.contexts)
    view.ctx_slots = fmt(tuple(sorted(ctx_names)), 4, col=16)
    view.ctx_names = fmt(ctx_names, 0, col=len("_CTX_FIELDS: Final = "))
    view.ctx_methods = value_class("Ctx", [(n, "int", "0") for n in view.contexts],
                                   "_CTX_FIELDS")
    return view


def literal_key(variants: tuple[str, ...]) -> str:
    """The RULESETS key for a combination of variants."""
    return fmt(tuple(variants))
