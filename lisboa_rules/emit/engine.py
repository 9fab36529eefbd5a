"""The engine back end: model -> the view the engine template arranges.

Rule data becomes Python literals (through `pyfmt`, never string-building in templates);
formulas become small typed functions with a comment pointing back to their rules line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lisboa_rules import expr
from lisboa_rules.emit.pyfmt import Call, Raw, Update, fmt, identifier, literal
from lisboa_rules.emit.words import plain_text
from lisboa_rules.model import Formula, Model
from lisboa_rules.source import Span
from lisboa_rules.vocab import ENGINE_NAMES


@dataclass
class FormulaFn:
    name: str
    returns: str
    code: str
    comments: list[str]


@dataclass
class EngineView:
    functions: list[FormulaFn] = field(default_factory=list)
    rulesets: list[tuple[str, str]] = field(default_factory=list)  # (name, code)
    keys: list[tuple[str, str]] = field(default_factory=list)  # (key literal, ruleset name)
    constants: list[tuple[str, str]] = field(default_factory=list)
    rule_text: str = ""
    variants: str = ""
    state_schema: str = ""


class _Functions:
    """Formula functions, shared between rule sets when the code is the same."""

    def __init__(self) -> None:
        self.by_code: dict[tuple[str, str], FormulaFn] = {}
        self.ordered: list[FormulaFn] = []

    def add(self, f: Formula, params: tuple[tuple[str, int], ...], where: Span, what: str) -> Raw:
        values = dict(params)

        def resolve(name: str, item: str | None) -> str:
            if name in values:
                return repr(values[name])
            code = ENGINE_NAMES[name][1]
            return code.format(item=literal(item)) if item is not None else code

        code = _strip_parens(expr.to_python(f, resolve))
        returns = "bool" if f.type == "bool" else "int"
        key = (code, returns)
        fn = self.by_code.get(key)
        if fn is None:
            fn = FormulaFn(f"_fx{len(self.ordered) + 1}", returns, code, [])
            self.by_code[key] = fn
            self.ordered.append(fn)
        note = f"{where.file}:{where.line} {what}: {f.source}"
        if params:
            note += "  [" + ", ".join(f"{k}={v}" for k, v in params) + "]"
        for line in _wrap(note, 96):
            if line not in fn.comments:
                fn.comments.append(line)
        return Raw(fn.name)


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    while len(text) > width:
        cut = text.rfind(" ", 0, width)
        cut = cut if cut > 0 else width
        lines.append(text[:cut])
        text = "  " + text[cut:].lstrip()
        lines[-1] = lines[-1].rstrip()
    return [*lines, text]


def _strip_parens(code: str) -> str:
    if code.startswith("(") and code.endswith(")"):
        depth = 0
        for i, ch in enumerate(code):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(code) - 1:
                return code
        return code[1:-1]
    return code


def ruleset_fields(m: Model, fns: _Functions) -> dict[str, Any]:
    """Every field of the engine's RuleSet for this model, as Python values / code."""
    g = lambda *p: m.value("game", *p)  # noqa: E731 - a short local reader
    tr = g("tracks", "treasury")
    piles = tuple(m.value("components", "display", "piles"))
    noble_ids = {n.id for n in m.nobles}
    by_proc = {a.procedure: a for a in m.actions}
    costs = {c.id: c for c in m.costs}
    out: dict[str, Any] = {
        "key": m.variants,
        "players_min": g("players", "min"),
        "players_max": g("players", "max"),
        "colors": tuple(g("players", "colors")),
        "periods": g("periods"),
        "flags": tuple(f["id"] for f in g("flags")),
        "businesses": tuple(b.id for b in m.businesses),
        "business_names": tuple(b.name for b in m.businesses),
        "hand_size": g("start", "hand"),
        "start_reis": g("start", "reis"),
        "start_influence": g("start", "influence"),
        "start_officials": g("start", "officials"),
        "start_stores": g("start", "stores"),
        "start_markers": g("start", "rubble_set_markers"),
        "start_favors": g("start", "royal_favors"),
        "start_favor_of": g("start", "royal_favor_of"),
        "neutral_officials": g("start", "neutral_officials_per_office"),
        "influence_min": g("tracks", "influence", "min"),
        "influence_max": g("tracks", "influence", "max"),
        "wig_at_max": g("tracks", "influence", "wig_at_max"),
        "reis_icons": tuple(sorted(g("tracks", "influence", "reis_icons"))),
        "treasury_values": tuple(s["value"] for s in tr["spaces"]),
        "treasury_modifiers": tuple(s["modifier"] for s in tr["spaces"]),
        "treasury_start": tr["start_value"],
        "treasury_down": tr["down_per_treasury_card"],
        "treasury_up": tr["up_per_sponsored_event"],
        "portfolio_base": g("portfolio", "base_size"),
        "portfolio_per_set": g("portfolio", "per_rubble_set"),
        "ship_influence": g("portfolio", "ship_influence"),
        "cubes_per_set": g("rubble", "cubes_per_set"),
        "max_sets": g("rubble", "max_sets"),
        "period_wigs_per_set": g("rubble", "wigs_per_set_at_period_end"),
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
                                               a.reward)) for a in m.actions}
    out["costs"] = {c.id: fns.add(c.formula, c.params, c.span, c.id) for c in m.costs}
    out["triggers"] = tuple(
        Call("TriggerDef", (t.id, t.ends, t.period, t.scope,
                            fns.add(t.condition, t.params, t.span, t.id)))
        for t in m.triggers)
    out["period_end"] = tuple(Call("StepDef", (s.id, s.procedure, s.deck, s.ships))
                              for s in m.period_end)
    out["extra_rounds"] = m.value("flow", "game_end", "extra_rounds")
    out["follows_allowed"] = m.value("flow", "game_end", "follows_allowed")
    sources = []
    for s in m.scoring:
        f = (fns.add(s.formula, s.params, s.span, s.id) if s.formula is not None else None)
        groups = tuple(Call("GroupDef", (gr.id, gr.name,
                                         fns.add(gr.measure, s.params, gr.span,
                                                 f"{s.id} {gr.id}"), gr.table))
                       for gr in s.groups)
        el = fns.add(s.eligible, s.params, s.span, f"{s.id} eligible") if s.eligible else None
        words = plain_formula(m, s.formula, s.params) if s.formula is not None else ""
        sources.append(Call("SourceDef", (), (
            ("id", s.id), ("name", s.name), ("kind", s.kind), ("formula", f), ("words", words),
            ("groups", groups), ("eligible", el))))
    out["scoring"] = tuple(sources)
    out["majority_columns"] = tuple(m.value("scoring", "majority", "columns"))
    out["column_names"] = tuple(m.value("scoring", "majority", "column_names"))
    out["tiebreakers"] = tuple((t.name, fns.add(t.measure, (), t.span, "tie-breaker"))
                               for t in m.tiebreakers)
    out["decks"] = tuple((d.id, d.role, d.period or 0) for d in m.decks)
    out["piles"] = piles
    out["treasury_pile"] = next((p for p in piles if p not in noble_ids), "")
    out["cards"] = {c.number: Call("CardDef", (c.number, c.deck, c.type, c.influence, c.reward,
                                               c.penalty, c.event_action, c.event_effects,
                                               c.set_flag)) for c in m.cards}
    out["decrees"] = {d.id: Call("DecreeDef", (d.id, fns.add(d.condition, (), d.span, d.id),
                                               d.wigs)) for d in m.decrees}
    out["decree_display"] = m.value("components", "decree_display", "size")
    out["plans"] = {p.id: p.officials for p in m.plans}
    out["ships"] = {s.color: (s.size, s.cost) for s in m.ships}
    per = m.value("components", "shipyard", "per_color")
    f_per = expr.parse(per, {"players": expr.NameInfo("int")})
    out["shipyard_per_color"] = fns.add(f_per, (), m.span_of("components", "shipyard",
                                                              "per_color"), "shipyard")
    out["shipyard_start"] = tuple(m.value("components", "shipyard", "start"))
    del by_proc, costs
    return out


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
    hand_discard = next((s.id for s in m.period_end if s.procedure == "hand-discard"),
                        refusals["turn"])
    visit = by_proc.get("visit")
    sponsor = by_proc.get("sponsor")
    rows: list[tuple[str, Any]] = [
        ("_TURN_RULE", refusals["turn"]),
        ("_REFILL_RULE", refusals["refill"]),
        ("_MARKER_RULE", refusals["marker"]),
        ("_BLOCK_RULE", refusals["blocked"]),
        ("_GAME_END", refusals["game-over"]),
        ("_HAND_DISCARD", hand_discard),
        ("_VISIT_COST", visit.cost if visit and visit.cost else ""),
        ("_WIGS_COST", visit.lacking_cost if visit and visit.lacking_cost else ""),
        ("_SPONSOR_COST", sponsor.cost if sponsor and sponsor.cost else ""),
        ("_ACTION_RULE", {proc: a.id for proc, a in sorted(by_proc.items())}),
        ("_ACTION_ID", {proc: a.id for proc, a in sorted(by_proc.items())}),
        ("_PHASE_RULES", {"follow": by_proc["follow"].id if "follow" in by_proc
                          else refusals["turn"], "refill": refusals["refill"],
                          "marker": refusals["marker"], "hand-discard": hand_discard}),
    ]
    return [(identifier(name), fmt(value, 0, col=len(name) + 9)) for name, value in rows]


def rule_texts(m: Model) -> dict[str, tuple[str, str]]:
    """Every rule's title and plain text with placeholders filled, for refusal messages."""
    return {r.id: (r.title, plain_text(m, r)) for r in sorted(m.rules, key=lambda r: r.id)}


def build_view(rulesets: list[Model], variants: list[Any], state_schema: Any) -> EngineView:
    """Everything the engine template needs."""
    fns = _Functions()
    view = EngineView()
    base_fields = ruleset_fields(rulesets[0], fns)
    view.rulesets.append(("_RS0", fmt(Call("RuleSet", (), tuple(base_fields.items())), 0)))
    view.keys.append((literal_key(rulesets[0].variants), "_RS0"))
    for i, m in enumerate(rulesets[1:], 1):
        fields = ruleset_fields(m, fns)
        changed = []
        for k, v in fields.items():
            if fmt(v) == fmt(base_fields[k]):
                continue
            if isinstance(v, dict) and isinstance(base_fields[k], dict):
                diff = {kk: vv for kk, vv in v.items()
                        if kk not in base_fields[k] or fmt(vv) != fmt(base_fields[k][kk])}
                removed = [kk for kk in base_fields[k] if kk not in v]
                if not removed:
                    changed.append((k, Update(f"_RS0.{k}", diff)))
                    continue
            changed.append((k, v))
        call = Call("replace", (Raw("_RS0"),), tuple(changed))
        view.rulesets.append((f"_RS{i}", fmt(call, 0)))
        view.keys.append((literal_key(m.variants), f"_RS{i}"))
    view.functions = fns.ordered
    view.constants = constants(rulesets[0])
    texts = rule_texts(rulesets[0])
    for m in rulesets[1:]:
        for k, v in rule_texts(m).items():
            texts.setdefault(k, v)
    view.rule_text = fmt(dict(sorted(texts.items())), 0)
    view.variants = fmt({v.id: Call("VariantDef", (v.id, v.title, v.applies_players))
                         for v in variants}, 0)
    view.state_schema = fmt(state_schema, 0)
    return view


def literal_key(variants: tuple[str, ...]) -> str:
    """The RULESETS key for a combination of variants."""
    return fmt(tuple(variants))
