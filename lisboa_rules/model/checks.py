"""Semantic checks over a built model. Each check yields diagnostics; none computes positions.

The checks are listed in ALL_CHECKS, in order; `run_checks` chains them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lisboa_rules.core.diagnostics import Diagnostic, Related, suggest
from lisboa_rules.core.pyexpr import parse_expr
from lisboa_rules.core.source import Span
from lisboa_rules.ir import bounds
from lisboa_rules.lang import expr
from lisboa_rules.lang import text as rtext
from lisboa_rules.lang.tree import Require
from lisboa_rules.lang.vocab import BoundError, env_for, resolve_range
from lisboa_rules.model.types import Model, Params, Rule, find_owner

Check = Callable[[Model], Iterator[Diagnostic]]

LEFTOVER = re.compile(r"\b(TODO|TBD|FIXME|XXX)\b|\{\{|\}\}|\?\?\?")
CROSS_REF = re.compile(r"\[\[([^\[\]]*)\]\]")
STRAY_BRACE = re.compile(r"\{[^{}]{0,40}\}?|[^{}]{0,40}\}")  # what is left of a bad placeholder


def _table_span(m: Model, sources: Any, source: str, group: str) -> Span | None:
    """Where a majority group's `table:` is written (a house rule's, when it changes it)."""
    for i, s in enumerate(sources if isinstance(sources, list) else ()):
        if isinstance(s, dict) and s.get("id") == source:
            for j, g in enumerate(s.get("groups") or ()):
                if isinstance(g, dict) and g.get("id") == group:
                    return m.span_of("scoring", "sources", i, "groups", j, "table")
    return None


# the subject of an id a rule names that the data lacks: (UNKNOWN_ID, the id)
UNKNOWN_ID = "unknown-id"


def _unknown(what: str, name: object, known: Iterable[str], span: Span) -> Diagnostic:
    known = list(known)
    return Diagnostic(
        "unknown-reference", f"unknown {what} '{name}'", span, suggestion=suggest(str(name), known),
        subject=(UNKNOWN_ID, str(name)),
    )


# the lists of the model built from the rules data's lists of items with ids: an item with an
# error of its own (a formula's unknown name) is left out of its list
_BUILT_FROM: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("nobles", ("nobles", "nobles")), ("state_actions", ("nobles", "state_actions")),
    ("noble_actions", ("nobles", "noble_actions")), ("costs", ("court", "costs")),
    ("actions", ("court", "actions")), ("businesses", ("game", "businesses")),
    ("decks", ("components", "decks")), ("decrees", ("components", "decrees")),
    ("plans", ("components", "plans")), ("scoring", ("scoring", "sources")),
    ("triggers", ("flow", "triggers")),
)


def left_out(m: Model) -> set[str]:
    """The ids of the items the rules data has that the model left out for an error of their
    own: a rule that names one names what is there (its error is the item's)."""
    out: set[str] = set()
    for attr, (doc, key) in _BUILT_FROM:
        rows = m.data.get(doc, {}).get(key) if isinstance(m.data.get(doc), dict) else None
        built = {str(getattr(x, "id", "")) for x in getattr(m, attr)}
        out.update(str(r["id"]) for r in (rows if isinstance(rows, list) else ())
                   if isinstance(r, dict) and "id" in r and str(r["id"]) not in built)
    return out


def check_duplicate_ids(m: Model) -> Iterator[Diagnostic]:
    """Rule ids, and ids within each list of things, are unique."""
    seen: dict[str, Rule] = {}
    for r in m.rules:
        if r.id in seen:
            yield Diagnostic(
                "duplicate-id",
                f"rule id '{r.id}' is used twice",
                r.span,
                (Related(f"'{r.id}' is first used here", seen[r.id].span),),
            )
        else:
            seen[r.id] = r
    groups: list[tuple[str, list[tuple[Any, Span]]]] = [
        ("noble", [(n.id, n.span) for n in m.nobles]),
        ("State action", [(a.id, a.span) for a in m.state_actions]),
        ("Noble action", [(a.id, a.span) for a in m.noble_actions]),
        ("cost", [(c.id, c.span) for c in m.costs]),
        ("action", [(a.id, a.span) for a in m.actions]),
        ("business", [(b.id, b.span) for b in m.businesses]),
        ("deck", [(d.id, d.span) for d in m.decks]),
        ("card number", [(c.number, c.span) for c in m.cards]),
        ("Decree", [(d.id, d.span) for d in m.decrees]),
        ("Plan", [(p.id, p.span) for p in m.plans]),
        ("ship colour", [(s.color, s.span) for s in m.ships]),
        ("assumption", [(a.id, a.span) for a in m.assumptions]),
    ]
    for what, items in groups:
        first: dict[Any, Span] = {}
        for ident, span in items:
            if ident in first:
                yield Diagnostic(
                    "duplicate-id",
                    f"{what} '{ident}' is defined twice",
                    span,
                    (Related("first defined here", first[ident]),),
                )
            else:
                first[ident] = span


def check_references(m: Model) -> Iterator[Diagnostic]:
    """Every id a rule names exists."""
    nobles = [n.id for n in m.nobles]
    sas = [a.id for a in m.state_actions]
    nas = [a.id for a in m.noble_actions]
    businesses = [b.id for b in m.businesses]
    decks = [d.id for d in m.decks]
    costs = [c.id for c in m.costs]
    colors = [s.color for s in m.ships]
    flags = [f["id"] for f in m.value("game", "flags")] if "flags" in m.data["game"] else []
    piles = list(m.value("components", "display", "piles"))
    effect_ids = list(m.procs.effects) if m.procs is not None else []
    effect_places: list[tuple[Any, tuple[str | int, ...]]] = []
    for i, c in enumerate(m.data["components"].get("cards", [])):
        for key in ("reward", "penalty"):
            effect_places.append((c.get(key), ("components", "cards", i, key)))
        ev = c.get("event") or {}
        effect_places.append((ev.get("effects"), ("components", "cards", i, "event", "effects")))
    for i, a in enumerate(m.data["nobles"].get("state_actions", [])):
        effect_places.append((a.get("effects"), ("nobles", "state_actions", i, "effects")))
    for i, a in enumerate(m.data["court"].get("actions", [])):
        effect_places.append((a.get("reward"), ("court", "actions", i, "reward")))
    if m.procs is not None:
        for given, where in effect_places:
            for key in given or {}:
                if key not in effect_ids:
                    yield _unknown("effect", key, effect_ids, m.span_of(str(where[0]), *where[1:],
                                                                         key))
    for i, n in enumerate(m.nobles):
        for j, sa in enumerate(n.state_actions):
            if sa not in sas:
                yield _unknown(
                    "State action", sa, sas, m.span_of("nobles", "nobles", i, "state_actions", j)
                )
        if n.noble_action not in nas:
            yield _unknown(
                "Noble action",
                n.noble_action,
                nas,
                m.span_of("nobles", "nobles", i, "noble_action"),
            )
        for j, good in enumerate(n.trade_goods):
            if good not in businesses:
                yield _unknown(
                    "good", good, businesses, m.span_of("nobles", "nobles", i, "trade_goods", j)
                )
        if n.reign is not None:
            if n.reign.flag not in flags:
                yield _unknown("flag", n.reign.flag, flags, n.reign.span)
            if n.reign.noble_action is not None and n.reign.noble_action not in nas:
                yield _unknown("Noble action", n.reign.noble_action, nas, n.reign.span)
    for a in m.noble_actions:
        for b, _ in a.lots:
            if b not in businesses:
                yield _unknown("business", b, businesses, a.span)
        if a.lots:  # a table by business covers every business
            missing = [b for b in businesses if b not in dict(a.lots)]
            if missing:
                yield Diagnostic(
                    "schema-required", f"'{a.id}' gives no lots for {', '.join(missing)}", a.span
                )
        if a.extra_pick and a.extra_pick.marker_on not in nobles:
            yield _unknown("noble", a.extra_pick.marker_on, nobles, a.extra_pick.span)
        if a.forbidden_by_flag and a.forbidden_by_flag not in flags:
            yield _unknown("flag", a.forbidden_by_flag, flags, a.span)
    written = [a.get("id") if isinstance(a, dict) else None
               for a in m.data["court"].get("actions", [])]
    for act in m.actions:
        for key, cost in (("cost", act.cost), ("lacking_cost", act.lacking_cost)):
            if cost is not None and cost not in costs:
                span = (m.span_of("court", "actions", written.index(act.id), key)
                        if act.id in written else act.span)
                yield _unknown("cost", cost, costs, span)
    rule_ids = [r.id for r in m.rules]
    for why, rule_id in m.value("flow", "refusals").items():
        if rule_id not in rule_ids:
            yield _unknown("rule", rule_id, rule_ids, m.span_of("flow", "refusals", why))
    for i, ph in enumerate(m.data.get("flow", {}).get("phases") or []):
        if isinstance(ph, dict) and ph.get("rule") is not None and ph["rule"] not in rule_ids:
            yield _unknown("rule", str(ph["rule"]), rule_ids, m.span_of("flow", "phases", i,
                                                                         "rule"))
    non_noble = [p for p in piles if p not in nobles]
    # a pile that is no Noble's but is spelt like one: the Noble's cards have no pile
    misspelt = {str(p): near for p in non_noble
                if (near := suggest(str(p), nobles)) is not None and len(non_noble) > 1}
    # a card type's display pile is optional: a Noble whose cards no deck deals into the
    # display has none (and the display's triggers count only the piles there are)
    dealt = {d.id for d in m.decks if d.role == "display"}
    for c in m.cards:
        if c.deck not in decks:
            yield _unknown("deck", c.deck, decks, c.span)
        if c.type in misspelt.values():
            pass  # said at the pile
        elif c.type not in piles and c.type not in nobles:
            yield _unknown("card type (a display pile or a Noble)", c.type, [*piles, *nobles],
                           c.span)
        elif c.type not in piles and c.deck in dealt:
            yield Diagnostic(
                "unknown-reference",
                f"card {c.number} of type '{c.type}' is in the {c.deck} deck, which is dealt "
                f"into the display, and the display has no '{c.type}' pile: add the pile to "
                "components.display.piles, or put the card in a deck that is not dealt there",
                c.span,
                (Related("the display's piles", m.span_of("components", "display", "piles")),),
            )
        if c.event_action is not None and c.event_action not in nas:
            yield _unknown("Noble action", c.event_action, nas, c.span)
        if c.set_flag is not None and c.set_flag not in flags:
            yield _unknown("flag", c.set_flag, flags, c.span)
    if len(non_noble) != 1:
        if misspelt:  # each: the cards of every Noble it names are not reported above
            others = [p for p in non_noble if p not in misspelt]
            for pile, near in misspelt.items():
                yield Diagnostic(
                    "unknown-reference",
                    f"display pile '{pile}' is no Noble's, and the Treasury cards' pile is "
                    f"another ({others or [p for p in non_noble if p != pile]}): the cards of "
                    f"'{near}' have no pile",
                    m.span_of("components", "display", "piles", piles.index(pile)),
                    suggestion=near,
                )
        else:
            yield Diagnostic(
                "value-out-of-range",
                "the display needs exactly one pile that is not a "
                f"Noble's (the Treasury cards' pile), found {non_noble}",
                m.span_of("components", "display", "piles"),
            )
    favor = m.value("game", "start", "royal_favor_of")
    if favor not in nobles:
        yield _unknown("noble", favor, nobles, m.span_of("game", "start", "royal_favor_of"))
    for s in m.period_end:
        if s.deck is not None and s.deck not in decks:
            yield _unknown("deck", s.deck, decks, s.span)
        for color in s.ships:
            if color not in colors:
                yield _unknown("ship colour", color, colors, s.span)
    for j, color in enumerate(m.value("components", "shipyard", "start")):
        if color not in colors:
            yield _unknown(
                "ship colour", color, colors, m.span_of("components", "shipyard", "start", j)
            )
    sources = m.value("scoring", "sources")
    for src in m.scoring:
        if src.kind == "majority":
            for g in src.groups:
                cols = m.value("scoring", "majority", "columns")
                if max(cols) < len(g.table):  # a prize no place is paid: the edit does nothing
                    extra = len(g.table) - max(cols)
                    yield Diagnostic(
                        "value-out-of-range",
                        f"'{g.id}' has {len(g.table)} prizes, but the majority columns {cols} "
                        f"pay places from its first {max(cols)} only: its last "
                        f"{'prize is' if extra == 1 else f'{extra} prizes are'} never paid "
                        "(add a column for it, or leave it out)",
                        _table_span(m, sources, src.id, g.id) or g.span,
                        (
                            Related(
                                "the columns are set here",
                                m.span_of("scoring", "majority", "columns"),
                            ),
                        ),
                    )
                if max(cols) > len(g.table):
                    yield Diagnostic(
                        "value-out-of-range",
                        f"majority columns {cols} need {max(cols)} prizes but "
                        f"'{g.id}' has {len(g.table)}",
                        _table_span(m, sources, src.id, g.id) or g.span,
                        (
                            Related(
                                "the columns are set here",
                                m.span_of("scoring", "majority", "columns"),
                            ),
                        ),
                    )
    decree_ids = [d.id for d in m.decrees]
    plan_ids = [p.id for p in m.plans]
    for e in m.examples:
        if m.rule(e.rule) is None:
            yield _unknown("rule", e.rule, [r.id for r in m.rules], e.span)
        for shown in e.show:
            if shown not in [x.id for x in m.scoring]:
                yield _unknown("scoring source", shown, [x.id for x in m.scoring], e.span)
        for pl in e.players:
            fields = dict(pl)
            for d in fields.get("decrees", []):
                if d not in decree_ids:
                    yield _unknown("Decree", d, decree_ids, e.span)
            for p in fields.get("completed_plans", []):
                if p not in plan_ids:
                    yield _unknown("Plan", p, plan_ids, e.span)
            for f in fields.get("royal_favors", []):
                if f not in nobles:
                    yield _unknown("noble", f, nobles, e.span)
            for b in fields.get("stores", {}):
                if b not in businesses:
                    yield _unknown("business", b, businesses, e.span)


def is_citation(source: str) -> bool:
    """Whether a `source:` entry cites the rules' sources (`seed:...`, `facts:...`), as every
    one in rules/ does (its schema says so), rather than a house rule's free text."""
    return source.startswith(("seed:", "facts:"))


def check_provenance(m: Model) -> Iterator[Diagnostic]:
    """Every source and assumption a rule names is listed in provenance.yaml."""
    sources = [s for s, _ in m.sources]
    assumptions = [a.id for a in m.assumptions]
    for kind, path, value in _walk_provenance(m):
        span = m.span_of(kind, *path)
        if path[-2] in ("source", "ships_source") or path[-2:-1] == ("source",):
            # free text (not a citation) passes the schema only in a house rule, whose
            # `source:` says where its idea comes from in the designer's words: unchecked
            if value not in sources and is_citation(value):
                yield Diagnostic(
                    "unknown-source",
                    f"unknown source '{value}'",
                    span,
                    suggestion=suggest(value, sources),
                )
        elif value not in assumptions:
            yield Diagnostic(
                "unknown-reference",
                f"unknown assumption '{value}'",
                span,
                suggestion=suggest(value, assumptions),
            )


def _walk_provenance(m: Model) -> Iterator[tuple[str, tuple[str | int, ...], str]]:
    def walk(
        kind: str, node: Any, path: tuple[str | int, ...]
    ) -> Iterator[tuple[str, tuple[str | int, ...], str]]:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("source", "ships_source") and isinstance(v, list):
                    for i, s in enumerate(v):
                        yield kind, (*path, "source" if k == "source" else k, i), str(s)
                elif k.endswith("assumptions") and isinstance(v, list):
                    for i, s in enumerate(v):
                        yield kind, (*path, k, i), str(s)
                else:
                    yield from walk(kind, v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from walk(kind, v, (*path, i))

    for kind, doc in sorted(m.data.items()):
        if kind != "provenance":
            yield from walk(kind, doc, ())


def check_text(m: Model) -> Iterator[Diagnostic]:
    """Rule text: placeholders bind, no leftovers, cross-references name real rules."""
    rule_ids = {r.id for r in m.rules}
    for r in m.rules:
        # Point at the text itself: a variant that rewrites it gets the error in its own file.
        span = m.span_of(r.section, *r.owner, "text") if r.owner else r.span
        if r.executable and not r.text.strip():
            yield Diagnostic("missing-text", f"rule '{r.id}' has no text for the reference", span)
        yield from _check_one_text(m, r.text, span, _local_for(m, r), rule_ids)
    rows = m.data.get("provenance", {}).get("assumptions") or []
    for i, a in enumerate(m.assumptions):  # a stated value prints the data it restates
        same = i < len(rows) and isinstance(rows[i], dict) and rows[i].get("id") == a.id
        span = m.span_of("provenance", "assumptions", i, "value") if same else a.span
        yield from _check_one_text(m, a.value, span, None, rule_ids)


def _local_for(m: Model, r: Rule) -> Any:
    """The object that holds a rule's text, for its local placeholders."""
    return find_owner(m, r)[0]


def _check_one_text(
    m: Model, text: str, span: Span, local: Any, rule_ids: set[str]
) -> Iterator[Diagnostic]:
    rest = _without_placeholders(text)
    leftover = LEFTOVER.search(rest)
    stray = STRAY_BRACE.search(rest)
    if leftover:
        yield Diagnostic(
            "missing-text", f"text has a leftover placeholder '{leftover.group(0)}'", span
        )
    elif stray:
        # printed as it is otherwise: `{game.businesses. 1}`, `{x`, or `{{x}}` as `{5}`
        yield Diagnostic(
            "unknown-placeholder",
            f"malformed placeholder {stray.group(0)!r}: a placeholder is {{path}} or "
            "{path|filter}, with no spaces, and a brace opens or closes one",
            span,
        )
    units = rtext.unit_filters(m.data.get("game", {}).get("terms"))
    for ph in rtext.placeholders(text):
        at = _inside(m, span, text, ph.start, len(ph.raw) + 2)
        if not ph.path:
            yield Diagnostic("unknown-placeholder", f"empty placeholder '{{{ph.raw}}}'", at)
            continue
        filters = (*rtext.FILTERS, *units)
        if ph.filter is not None and ph.filter not in filters:
            yield Diagnostic(
                "unknown-placeholder",
                f"unknown filter '{ph.filter}' (one of: {', '.join(filters)})",
                _inside(m, span, text, ph.start + 1 + ph.raw.index("|") + 1, len(ph.filter)),
                suggestion=suggest(ph.filter, filters),
            )
            continue
        value, _ = rtext.resolve(ph, local, m.data)
        if rtext.is_missing(value):
            candidates = _candidates(local, m.data, ph.path)
            yield Diagnostic(
                "unknown-placeholder",
                f"placeholder '{{{ph.raw}}}' names no value",
                at,
                suggestion=suggest(".".join(ph.path), candidates),
            )
        elif not rtext.filter_fits(value, ph.filter):
            path = ".".join(ph.path)
            counted = isinstance(value, list) and ph.filter != "count"
            yield Diagnostic(
                "unknown-placeholder",
                f"placeholder '{{{ph.raw}}}' does not name a printable value"
                + (" (its items have no names to print)" if isinstance(value, list) else ""),
                at,
                suggestion=f"{{{path}|count}}" if counted else None,
            )
        elif not rtext.format_value(value, ph.filter, str).strip():
            # an emptied list (a house rule's `reis_icons: []`) printed "The spaces show ..."
            count = (f", or print how many with '{{{'.'.join(ph.path)}|count}}'"
                     if isinstance(value, list) else "")
            yield Diagnostic(
                "unknown-placeholder",
                f"placeholder '{{{ph.raw}}}' prints no words: its value is empty; say it in "
                f"words without it (a variant gives the text anew){count}",
                at,
            )
    for ref in CROSS_REF.finditer(text):
        if ref.group(1) not in rule_ids:
            yield Diagnostic(
                "unknown-reference",
                f"text names rule '{ref.group(1)}', which does not exist",
                span,
                suggestion=suggest(ref.group(1), rule_ids),
            )


def _inside(m: Model, span: Span, text: str, start: int, length: int) -> Span:
    """The span of text[start:start + length] in the rules file, when `text` is a scalar on
    one line whose source holds it as written up to there (plain, or quoted with no escape
    before it); else the span of the whole string."""
    if span.line != span.end_line or not 0 <= start <= len(text):
        return span
    lines = m.texts.get(span.file, "").split("\n")
    if not 0 < span.line <= len(lines):
        return span
    line = lines[span.line - 1]
    first = span.col - 1
    if not 0 <= first < len(line):
        return span
    quote = line[first] if line[first] in "\"'" else ""
    head = first + len(quote)
    # in a single-quoted scalar a quote is written twice; the value reads it once
    before = text[:start].replace("'", "''") if quote == "'" else text[:start]
    if line[head : head + len(before) + length] != before + text[start : start + length]:
        return span
    col = head + len(before) + 1
    return Span(span.file, span.line, col, span.line, col + length)


def _without_placeholders(text: str) -> str:
    """The text with well-formed placeholders and cross-references removed."""
    return CROSS_REF.sub("", rtext.PLACEHOLDER.sub("", text))


def _candidates(local: Any, data: dict[str, Any], path: tuple[str, ...]) -> list[str]:
    out: list[str] = []

    def walk(node: Any, prefix: str, depth: int) -> None:
        if depth > 4:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                name = f"{prefix}.{k}" if prefix else k
                out.append(name)
                walk(v, name, depth + 1)

    walk(local, "", 0)
    walk(data, "", 0)
    return out


def check_ranges(m: Model) -> Iterator[Diagnostic]:
    """Values that are valid on their own but not together."""
    g = "game"
    pmin, pmax = m.value(g, "players", "min"), m.value(g, "players", "max")
    if pmin > pmax:
        yield Diagnostic(
            "value-out-of-range",
            f"players.min ({pmin}) is more than players.max ({pmax})",
            m.span_of(g, "players", "min"),
        )
    # a rule set of a variant that applies by player count is played with those counts only
    narrowed = bool(m.player_counts) and max(m.player_counts) < pmax
    if narrowed:
        pmax = max(m.player_counts)
    most = (Related(f"this rule set is played with {', '.join(map(str, m.player_counts))} "
                    "players", m.span_of("game", "players", "max")) if narrowed
            else Related(f"up to {pmax} players", m.span_of(g, "players", "max")))
    colors = m.value(g, "players", "colors")
    if len(colors) < pmax:
        yield Diagnostic(
            "value-out-of-range",
            f"{pmax} players need {pmax} colours, only {len(colors)} given",
            m.span_of(g, "players", "colors"),
            (Related(f"players.max is {pmax}", m.span_of(g, "players", "max")),),
        )
    years = m.value(g, "years")
    if years["last"] - years["first"] != years["count"]:
        yield Diagnostic(
            "value-out-of-range",
            f"years {years['first']}–{years['last']} span "
            f"{years['last'] - years['first']} years, not {years['count']}",
            m.span_of(g, "years", "count"),
        )
    inf = m.value(g, "tracks", "influence")
    if inf["min"] >= inf["max"]:
        yield Diagnostic(
            "value-out-of-range",
            "the Influence track's min must be below its max",
            m.span_of(g, "tracks", "influence", "min"),
        )
    for i, icon in enumerate(inf["reis_icons"]):
        if not inf["min"] < icon <= inf["max"]:
            yield Diagnostic(
                "value-out-of-range",
                f"real icon at {icon} is off the Influence track ({inf['min']}–{inf['max']})",
                m.span_of(g, "tracks", "influence", "reis_icons", i),
                (
                    Related("the track starts here", m.span_of(g, "tracks", "influence", "min")),
                    Related("the track ends here", m.span_of(g, "tracks", "influence", "max")),
                ),
            )
    if len(set(inf["reis_icons"])) != len(inf["reis_icons"]):
        yield Diagnostic(
            "duplicate-id",
            "a real icon position is listed twice",
            m.span_of(g, "tracks", "influence", "reis_icons"),
        )
    start_inf = m.value(g, "start", "influence")
    if not inf["min"] <= start_inf <= inf["max"]:
        yield Diagnostic(
            "value-out-of-range",
            f"starting Influence {start_inf} is off the track",
            m.span_of(g, "start", "influence"),
        )
    tr = m.value(g, "tracks", "treasury")
    values = [s["value"] for s in tr["spaces"]]
    if tr["start_value"] not in values:
        yield Diagnostic(
            "value-out-of-range",
            f"the Treasury marker starts on value "
            f"{tr['start_value']}, which no Treasury space shows",
            m.span_of(g, "tracks", "treasury", "start_value"),
            (Related("the Treasury spaces", m.span_of(g, "tracks", "treasury", "spaces")),),
        )
    if len(set(values)) != len(values):
        yield Diagnostic(
            "duplicate-id",
            "two Treasury spaces show the same value",
            m.span_of(g, "tracks", "treasury", "spaces"),
        )
    periods = m.value(g, "periods")
    rows = m.data.get("flow", {}).get("triggers") or []
    for i, t in enumerate(m.triggers):
        if t.periods and max(t.periods) > periods:
            yield Diagnostic(
                "value-out-of-range",
                f"trigger '{t.id}' is for period {max(t.periods)}, but the game has {periods}",
                t.span,
            )
        elif t.ends == "period" and periods in t.periods:
            # the engine ends no period after the last (rules: game-end): it would never fire;
            # said at the period, the value that makes it so
            same = i < len(rows) and isinstance(rows[i], dict) and rows[i].get("id") == t.id
            yield Diagnostic(
                "value-out-of-range",
                f"trigger '{t.id}' ends period {periods}, the last: the last period ends with "
                "the game, so it would never fire then (write `ends: game`, or give it earlier "
                "periods)",
                m.span_of("flow", "triggers", i, "period" if "period" in rows[i] else "periods")
                if same else t.span,
            )
    hand = m.value(g, "start", "hand")
    decks = {d.id: d for d in m.decks}
    cards_by_deck: dict[str, int] = {}
    for c in m.cards:
        cards_by_deck[c.deck] = cards_by_deck.get(c.deck, 0) + 1
    for d in m.decks:
        if d.role == "starting-hand" and cards_by_deck.get(d.id, 0) < hand * pmax:
            fit = cards_by_deck.get(d.id, 0) // hand if hand > 0 else pmax
            yield Diagnostic(
                "value-out-of-range",
                f"the {d.name} has {cards_by_deck.get(d.id, 0)}"
                f" cards; {pmax} players need {hand * pmax} (it deals hands of {hand} to at most "
                f"{fit} players: add cards to the deck, deal smaller hands, or play with fewer "
                "players, e.g. a variant that applies by player count)",
                d.span,
                (
                    Related(f"a hand is {hand} cards", m.span_of(g, "start", "hand")),
                    most,
                ),
            )
    for role in ("starting-hand", "period-refill"):
        if not [d for d in decks.values() if d.role == role]:
            yield Diagnostic(
                "schema-required",
                f"no deck has the role '{role}'",
                m.span_of("components", "decks"),
            )
    for p in range(1, periods + 1):
        if not [d for d in decks.values() if d.role == "display" and d.period == p]:
            yield Diagnostic(
                "schema-required",
                f"no display deck for period {p}",
                m.span_of("components", "decks"),
                (Related(f"the game has {periods} periods", m.span_of(g, "periods")),),
            )


def check_unused_params(m: Model) -> Iterator[Diagnostic]:
    """A param that neither its formula nor its rule's text reads is unused."""
    owners = [
        *((c.params, c.formula, c.rule, c.span) for c in m.costs),
        *((t.params, t.condition, t.rule, t.span) for t in m.triggers),
        *((s.params, s.formula, s.rule, s.span) for s in m.scoring if s.formula is not None),
        *(
            (a.params, a.land_price, a.rule, a.span)
            for a in m.noble_actions
            if a.land_price is not None
        ),
    ]
    for params, formula, rule, span in owners:
        for name, _ in params:
            if (
                formula is not None
                and name not in formula.names
                and f"params.{name}" not in rule.text
            ):
                yield Diagnostic(
                    "unused-value",
                    f"param '{name}' is used by neither the formula nor the text",
                    span,
                )


TEXT_FIELDS = ("short", "intro", "plays", "steps", "text", "value", "reason", "title", "name")


def check_other_text(m: Model) -> Iterator[Diagnostic]:
    """Every other printed text (labels, steps, intros, notes) binds its placeholders too."""
    rule_texts = {r.text for r in m.rules}
    rule_ids = {r.id for r in m.rules}
    for kind, doc in sorted(m.data.items()):
        for path, local, value in _texts(doc, ()):
            if value in rule_texts or ("{" not in value and "[[" not in value):
                continue
            if (kind, *path[:1]) in (("state", "invariants"), ("state", "checks")):
                continue  # their {expressions} are checked by the state builder
            if (kind, *path[:1], path[-1]) == ("provenance", "assumptions", "value"):
                continue  # an assumption's stated value: check_text (once, no local names)
            yield from _check_one_text(m, value, m.span_of(kind, *path), local, rule_ids)


def _texts(
    node: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in TEXT_FIELDS and isinstance(v, str):
                yield (*path, k), node, v
            elif k in TEXT_FIELDS and isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, str):
                        yield (*path, k, i), node, item
            else:
                yield from _texts(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _texts(v, (*path, i))


def check_free_text(m: Model, text: str, span: Span) -> Iterator[Diagnostic]:
    """Text outside the documents (a variant's description) binds against this model."""
    yield from _check_one_text(m, text, span, {}, {r.id for r in m.rules})


def check_examples(m: Model) -> Iterator[Diagnostic]:
    """A cost's worked example gives a value for every name its formula reads."""
    for i, c in enumerate(m.costs):
        if not c.example:
            continue
        given = {*dict(c.example), *dict(c.params)}
        missing = [n for n in c.formula.names if n not in given]
        if missing:
            yield Diagnostic(
                "schema-required",
                f"the example of cost '{c.id}' gives no value for {', '.join(missing)}",
                m.span_of("court", "costs", i, "example"),
            )
        for name, _ in c.example:
            if name not in c.formula.names:
                yield Diagnostic(
                    "unused-value",
                    f"the example of cost '{c.id}' gives '{name}', which the formula does not read",
                    m.span_of("court", "costs", i, "example", name),
                )


def check_callouts(
    m: Model,
    callouts: Iterable[tuple[str, str, Span]],
    variant_model: Model | None = None,
    text: str | None = None,
    text_span: Span | None = None,
) -> Iterator[Diagnostic]:
    """Every variant callout names an existing rule, and its text binds in the variant (its
    problems at `text_span`, the text's own place, when given)."""
    ids = [r.id for r in m.rules]
    for variant, rule, span in callouts:
        if rule not in ids:
            yield Diagnostic(
                "unknown-reference",
                f"variant '{variant}' has a callout for unknown rule '{rule}'",
                span,
                suggestion=suggest(rule, ids),
            )
        if text is not None and variant_model is not None:
            yield from _check_one_text(variant_model, text, text_span or span, {}, set(ids))


def check_example_players(m: Model) -> Iterator[Diagnostic]:
    """A worked example seats as many players as the game allows, each in a colour of the game
    (game.yaml players), no colour twice. The number of players picks the rule set, as in a
    game: a rule set of a variant that applies by player count shows only the examples that
    seat one of its counts."""
    g = "game"
    pmin, pmax = m.value(g, "players", "min"), m.value(g, "players", "max")
    colors = [str(c) for c in m.value(g, "players", "colors")]
    for i, e in enumerate(m.data.get("examples", {}).get("examples", [])):
        players = e.get("players", [])
        if m.player_counts and len(players) not in m.player_counts:
            continue
        if not pmin <= len(players) <= pmax:
            yield Diagnostic(
                "value-out-of-range",
                f"example '{e.get('id')}' seats {len(players)} players; the game is for "
                f"{pmin} to {pmax}",
                m.span_of("examples", "examples", i, "players"),
                (Related("the player counts are set here", m.span_of(g, "players")),),
            )
        seen: dict[str, int] = {}
        for j, pl in enumerate(players):
            color = pl.get("color")
            at = m.span_of("examples", "examples", i, "players", j, "color")
            if color not in colors:
                yield _unknown("player colour", color, colors, at)
            elif color in seen:
                yield Diagnostic(
                    "duplicate-id",
                    f"example '{e.get('id')}' seats two {color} players",
                    at,
                    (
                        Related(
                            "first seated here",
                            m.span_of("examples", "examples", i, "players", seen[color], "color"),
                        ),
                    ),
                )
            else:
                seen[str(color)] = j
        yield from _example_holdings(m, i, e.get("id"), players)


def _example_holdings(
    m: Model, i: int, example: Any, players: list[dict[str, Any]]
) -> Iterator[Diagnostic]:
    """What a worked example's players hold is what the engine's players could hold: Ships of
    the rules' hull sizes, rubble sets and stores the board has room for, Influence on the
    track, each Decree and Plan once, no more Royal Favor tiles of a Noble than players."""
    g = "game"
    hulls = sorted({s.size for s in m.ships})
    low, high = m.value(g, "tracks", "influence", "min"), m.value(g, "tracks", "influence", "max")
    max_sets, stores = m.value(g, "rubble", "max_sets"), m.value(g, "start", "stores")
    held: dict[tuple[str, str], tuple[int, int]] = {}  # (field, id) -> where first held
    favors: dict[str, int] = {}

    def at(*path: str | int) -> Span:
        return m.span_of("examples", "examples", i, "players", *path)

    def out(j: int, key: str, message: str, *more: str | int) -> Diagnostic:
        message = f"example '{example}': {message}"
        return Diagnostic("value-out-of-range", message, at(j, key, *more))

    for j, pl in enumerate(players):
        for k, size in enumerate(pl.get("ships", [])):
            if size not in hulls:
                yield out(j, "ships", f"no Ship has hull size {size} (sizes {hulls})", k)
        if "rubble_sets" in pl and pl["rubble_sets"] > max_sets:
            yield out(j, "rubble_sets", f"{pl['rubble_sets']} rubble sets; the board has room "
                      f"for {max_sets}")
        if "influence" in pl and not low <= pl["influence"] <= high:
            yield out(j, "influence", f"Influence {pl['influence']} is off the track "
                      f"({low} to {high})")
        if sum(pl.get("stores", {}).values()) > stores:
            yield out(j, "stores", f"{sum(pl['stores'].values())} stores; a player has {stores}")
        for key in ("decrees", "completed_plans"):
            for k, item in enumerate(pl.get(key, [])):
                first = held.setdefault((key, str(item)), (j, k))
                if first != (j, k):
                    yield Diagnostic(
                        "duplicate-id",
                        f"example '{example}' holds {item} twice; there is one of it",
                        at(j, key, k),
                        (Related("first held here", at(first[0], key, first[1])),),
                    )
        for k, noble in enumerate(pl.get("royal_favors", [])):
            favors[str(noble)] = favors.get(str(noble), 0) + 1
            if favors[str(noble)] == len(players) + 1:
                yield out(j, "royal_favors", f"more Royal Favor tiles of {noble} than the "
                          f"{len(players)} the game has with {len(players)} players", k)


# --- ranges of params and formulas ------------------------------------------------------------

# The lists whose items carry `params:` (and may declare their `ranges:`).
PARAM_OWNERS = (
    ("court", "costs"),
    ("flow", "triggers"),
    ("nobles", "noble_actions"),
    ("scoring", "sources"),
)


def _vocab_ranges(m: Model) -> tuple[dict[str, bounds.Interval], list[Diagnostic]]:
    """The declared range of every vocabulary name, resolved against this model's data."""
    out: dict[str, bounds.Interval] = {}
    diags: list[Diagnostic] = []
    for i, n in enumerate(m.data.get("vocabulary", {}).get("names", [])):
        if "range" not in n:
            continue
        try:
            out[n["name"]] = resolve_range(n["range"], m.data)
        except BoundError as exc:
            diags.append(
                Diagnostic(
                    "unknown-reference",
                    f"the range of '{n['name']}': {exc}",
                    m.span_of("vocabulary", "names", i, "range"),
                )
            )
    return out, diags


def _index(m: Model, kind: str, key: str, ident: str) -> int | None:
    for i, item in enumerate(m.data.get(kind, {}).get(key, [])):
        if isinstance(item, dict) and item.get("id") == ident:
            return i
    return None


def check_param_ranges(m: Model) -> Iterator[Diagnostic]:
    """Every param lies in the range its owner declares for it (`ranges:`)."""
    for kind, key in PARAM_OWNERS:
        for i, obj in enumerate(m.data.get(kind, {}).get(key, [])):
            params = obj.get("params", {})
            for name, raw in sorted(obj.get("ranges", {}).items()):
                where = m.span_of(kind, key, i, "ranges", name)
                if name not in params:
                    yield _unknown("param", name, params, where)
                    continue
                try:
                    lo, hi = resolve_range(raw, m.data)
                except BoundError as exc:
                    yield Diagnostic(
                        "unknown-reference", f"the range of param '{name}': {exc}", where
                    )
                    continue
                value = params[name]
                if not lo <= value <= hi:
                    yield Diagnostic(
                        "value-out-of-range",
                        f"param '{name}' of '{obj.get('id')}' is {value}, "
                        + _outside(value, (lo, hi)),
                        m.span_of(kind, key, i, "params", name),
                        (Related("the range is declared here", where),),
                    )


def _outside(value: int, iv: bounds.Interval) -> str:
    """Which end of its range a value is past (one end only, so that rule sets whose other
    end differs report the same problem once)."""
    lo, hi = iv
    if value < lo:
        return f"below the lowest value of its range ({int(lo)})"
    return f"above the highest value of its range ({int(hi)})"


def _formulas(
    m: Model,
) -> Iterator[tuple[expr.Formula, Params, tuple[str | int, ...], str | None]]:
    """(formula, its params, its path, what it is if its value is paid) for every formula."""
    for c in m.costs:
        i = _index(m, "court", "costs", c.id)
        if i is not None:
            yield c.formula, c.params, ("court", "costs", i, "formula"), f"cost '{c.id}'"
    for a in m.noble_actions:
        i = _index(m, "nobles", "noble_actions", a.id)
        if a.land_price is not None and i is not None:
            path: tuple[str | int, ...] = ("nobles", "noble_actions", i, "land_price")
            yield a.land_price, a.params, path, f"land price of '{a.id}'"
    for t in m.triggers:
        i = _index(m, "flow", "triggers", t.id)
        if i is not None:
            yield t.condition, t.params, ("flow", "triggers", i, "condition"), None
    for s in m.scoring:
        i = _index(m, "scoring", "sources", s.id)
        if i is None:
            continue
        if s.formula is not None:
            yield s.formula, s.params, ("scoring", "sources", i, "formula"), None
        for j, g in enumerate(s.groups):
            yield g.measure, s.params, ("scoring", "sources", i, "groups", j, "measure"), None
        if s.eligible is not None:
            yield s.eligible, s.params, ("scoring", "sources", i, "eligible"), None
    for j, tb in enumerate(m.tiebreakers):
        yield tb.measure, (), ("scoring", "tiebreakers", "measures", j, "measure"), None
    for j, d in enumerate(m.decrees):
        yield d.condition, (), ("components", "decrees", j, "condition"), None
    per_color = m.data.get("components", {}).get("shipyard", {}).get("per_color")
    if isinstance(per_color, str):
        vocab = {v.name: (v.scope, v.per) for v in m.vocabulary}
        env = env_for(vocab, ("game",), [b.id for b in m.businesses])
        try:
            f = expr.parse(per_color, env)
        except expr.FormulaError:
            pass  # reported by the builder
        else:
            yield f, (), ("components", "shipyard", "per_color"), None


def _blame(
    m: Model, formula_at: Span, params: Params, owner: tuple[str | int, ...], names: Iterable[str]
) -> tuple[Span, tuple[Related, ...]]:
    """Where a range problem is reported: at the formula, unless the formula is the base
    document's and a param it reads was set elsewhere (a variant changed it): then at that
    param, with a note at the formula. Notes give the params' values."""
    values = dict(params)
    base = m.span_of(str(owner[0])).file
    notes: list[Related] = []
    moved: Span | None = None
    for name in dict.fromkeys(names):
        if name in values:
            at = m.span_of(str(owner[0]), *owner[1:], "params", name)
            notes.append(Related(f"'{name}' is {values[name]} here", at))
            if moved is None and formula_at.file == base and at.file != base:
                moved = at
    if moved is None:
        return formula_at, tuple(notes)
    rest = tuple(n for n in notes if n.span != moved)
    return moved, (Related("in this formula", formula_at), *rest)


def check_formula_ranges(m: Model) -> Iterator[Diagnostic]:
    """Interval analysis of every formula against the declared ranges of the names it reads
    and the values of its params: every divisor is at least 1, every paid amount at least 0."""
    ranges, diags = _vocab_ranges(m)
    yield from diags
    context = _context_ranges(m, ranges)
    for formula, params, path, paid in _formulas(m):
        known = {**ranges, **context.get(path[:3], {}), **{name: (v, v) for name, v in params}}
        (lo, _), problems = expr.interval(formula, known)
        at = m.span_of(str(path[0]), *path[1:])
        owner = path[:3] if path[0] != "components" else path[:2]
        for pr in problems:
            span, notes = _blame(m, at, params, owner, pr.reads)
            yield Diagnostic(pr.code, pr.message, span, notes)
        if paid is not None and not problems and lo < 0:
            span, notes = _blame(m, at, params, owner, [n for n, _ in params if n in formula.names])
            yield Diagnostic(
                "formula-out-of-range",
                f"the {paid} can be negative; an amount paid is never below 0",
                span,
                (
                    Related(
                        "its lowest value is "
                        + ("unbounded" if lo == -bounds.INF else str(int(lo)))
                        + " (from the params and the ranges of the names it reads)",
                        at,
                    ),
                    *notes,
                ),
            )
    yield from _check_example_ranges(m, ranges)


def check_trigger_conditions(m: Model) -> Iterator[Diagnostic]:
    """A trigger whose condition the declared ranges of the names it reads (and its params'
    values) prove never true can never fire (`trigger-never-fires`); one that reads a name and
    is proven always true fires at the first chance, whatever happens (`trigger-always-fires`).
    A condition with a param outside its declared range, or a divisor that may not be
    positive, is reported as that (one error per mistake)."""
    ranges, _diags = _vocab_ranges(m)  # a range that does not resolve: check_formula_ranges
    declared = {str(n.get("name")): i
                for i, n in enumerate(m.data.get("vocabulary", {}).get("names", []))
                if isinstance(n, dict) and "range" in n}
    for t in m.triggers:
        i = _index(m, "flow", "triggers", t.id)
        if i is None or _params_outside(m.data["flow"]["triggers"][i], m.data):
            continue
        params = dict(t.params)
        known = {**ranges, **{name: (v, v) for name, v in t.params}}
        if expr.interval(t.condition, known)[1]:
            continue  # a divisor that can be 0: divisor-not-positive
        can = expr.outcomes(t.condition, known)
        reads = [n for n in t.condition.names if n not in params]
        if can != {False} and not (can == {True} and reads):
            continue
        said = "false" if can == {False} else "true"
        # a name of one item (`stores.gold`) has the range of its name (`stores`)
        base = {n: n if n in ranges else n.split(".")[0] for n in reads}
        shown = [f"{n} is {bounds.show_interval(ranges.get(base[n], bounds.ANY))}"
                 for n in reads]
        shown += [f"{n} is {params[n]}" for n in t.condition.names if n in params]
        values = f"always {said}" if not shown else \
            f"{said} for every value in the declared ranges ({', '.join(shown)})"
        cond = t.condition.source
        if can == {False}:
            code = "trigger-never-fires"
            message = (f"trigger '{t.id}' can never fire: its condition `{cond}` is {values}: "
                       "change the condition or its params, or remove the trigger")
        else:
            code = "trigger-always-fires"
            message = (f"trigger '{t.id}' fires at once, whatever happens: its condition "
                       f"`{cond}` is {values}, so it fires as soon as the triggers are "
                       "checked in its period: write a condition that can be false")
        at = m.span_of("flow", "triggers", i, "condition")
        span, notes = _blame(m, at, t.params, ("flow", "triggers", i),
                             [n for n in t.condition.names if n in params])
        ranged = tuple(
            Related(f"the range of '{n}' ({bounds.show_interval(ranges[n])}) is declared here",
                    m.span_of("vocabulary", "names", declared[n], "range"))
            for n in dict.fromkeys(base[r] for r in reads) if n in declared and n in ranges)
        yield Diagnostic(code, message, span, (*notes, *ranged))


def _params_outside(owner: Any, data: Any) -> bool:
    """Whether a param of `owner` is outside the range it declares (or that range does not
    resolve): check_param_ranges says so."""
    params = owner.get("params") or {}
    for name, raw in (owner.get("ranges") or {}).items():
        try:
            lo, hi = resolve_range(raw, data)
        except BoundError:
            return True
        value = params.get(name)
        if isinstance(value, int) and not lo <= value <= hi:
            return True
    return False


def _hull(ivs: Iterable[bounds.Interval]) -> bounds.Interval | None:
    ivs = list(ivs)
    if not ivs:
        return None
    return (min(lo for lo, _ in ivs), max(hi for _, hi in ivs))


def _context_ranges(
    m: Model, ranges: dict[str, bounds.Interval]
) -> dict[tuple[str | int, ...], dict[str, bounds.Interval]]:
    """Tighter, still sound ranges of the context names where the model says what they are:
    the `cost` a lacking cost reads is the value of the cost it makes up for (Visit: the visit
    cost), the `measure` an eligibility formula reads is one of its source's measures."""

    def value(f: expr.Formula, params: Params) -> bounds.Interval:
        return expr.interval(f, {**ranges, **{n: (v, v) for n, v in params}})[0]

    costs = {c.id: value(c.formula, c.params) for c in m.costs}
    out: dict[tuple[str | int, ...], dict[str, bounds.Interval]] = {}
    for c in m.costs:
        paid = _hull(costs[a.cost] for a in m.actions if a.lacking_cost == c.id and a.cost in costs)
        i = _index(m, "court", "costs", c.id)
        if paid is not None and i is not None:
            out[("court", "costs", i)] = {"cost": paid}
    for src in m.scoring:
        measured = _hull(value(g.measure, src.params) for g in src.groups)
        i = _index(m, "scoring", "sources", src.id)
        if measured is not None and i is not None:
            out[("scoring", "sources", i)] = {"measure": measured}
    return out


def _check_example_ranges(m: Model, ranges: dict[str, bounds.Interval]) -> Iterator[Diagnostic]:
    """A cost's worked example gives values inside the names' ranges (the engine evaluates it)."""
    for i, c in enumerate(m.data.get("court", {}).get("costs", [])):
        for name, value in sorted(c.get("example", {}).items()):
            lo, hi = ranges.get(name, bounds.ANY)
            if isinstance(value, int) and not lo <= value <= hi:
                yield Diagnostic(
                    "value-out-of-range",
                    f"the example gives '{name}' the value {value}, " + _outside(value, (lo, hi)),
                    m.span_of("court", "costs", i, "example", name),
                )


def check_glossary(m: Model) -> Iterator[Diagnostic]:
    """The glossary (rules/vocabulary.yaml): each term once (case aside), every rule it names
    and every term its `see` names exist."""
    entries = [e for e in m.data.get("vocabulary", {}).get("glossary", ()) if isinstance(e, dict)]
    first: dict[str, int] = {}
    terms = [str(e.get("term", "")) for e in entries]
    rule_ids = [r.id for r in m.rules]
    for i, e in enumerate(entries):
        key = str(e.get("term", "")).casefold()
        if key in first:
            yield Diagnostic(
                "duplicate-id",
                f"glossary term '{e.get('term')}' is defined twice",
                m.span_of("vocabulary", "glossary", i, "term"),
                (Related("first defined here",
                         m.span_of("vocabulary", "glossary", first[key], "term")),),
            )
        else:
            first[key] = i
        for j, rid in enumerate(e.get("rules", ())):
            if rid not in rule_ids:
                yield _unknown("rule", rid, rule_ids,
                               m.span_of("vocabulary", "glossary", i, "rules", j))
        for j, term in enumerate(e.get("see", ())):
            if str(term).casefold() not in {t.casefold() for t in terms}:
                yield _unknown("glossary term", term, terms,
                               m.span_of("vocabulary", "glossary", i, "see", j))


def check_players_words(m: Model) -> Iterator[Diagnostic]:
    """The players' edition says a `require` that has no `text:` by its `reason:`; a value
    of play that reason shows (`{fee}`) needs words of the vocabulary, or the page would print
    a guess: text-missing, at the reason, suggesting the `text:` to add."""
    ps = m.procs
    if ps is None:
        return
    vocab = {v.name: v.words for v in m.vocabulary}
    doc = m.data.get("effects")
    effects: dict[str, Any] = doc if isinstance(doc, dict) else {}
    rows = {str(r.get("id")): r for key in ("effects", "procedures", "hooks")
            for r in (effects.get(key) or ()) if isinstance(r, dict)}
    bodies: list[tuple[Any, Any]] = []
    for pid, proc in ps.procs.items():
        row = ps.this.get(pid) or rows.get(pid) or {}
        bodies.append((proc.steps, {**row, "this": row}))
    for act in ps.actions.values():
        row = ps.action_rows.get(act.id, {})
        bodies.append((act.steps, {**row, "this": row}))
    seen: set[tuple[str | int, ...]] = set()
    for steps, local in bodies:
        for top in steps:
            for st in top.walk():
                if not isinstance(st, Require) or (st.text and st.text.strip()) \
                        or not st.reason or not st.path or st.path in seen:
                    continue
                seen.add(st.path)
                for ph in rtext.placeholders(st.reason):
                    value, _ = rtext.resolve(ph, local, m.data)
                    said = vocab.get(ph.path[-1]) if ph.path else None
                    if not rtext.is_missing(value) or (isinstance(said, str) and "{" not in said):
                        continue
                    yield Diagnostic(
                        "text-missing",
                        f"the players' edition prints this refusal as the condition of its "
                        f"steps, and '{{{ph.raw}}}' is a value of play that no words name: add "
                        f"the key `text:` to the step, its condition in words",
                        m.span_of(str(st.path[0]), *st.path[1:], "reason"),
                        related=(Related("add `text:` to this step (the reason stays the "
                                         "engine's message)",
                                         m.span_of(str(st.path[0]), *st.path[1:])),))
                    break


def check_icons(m: Model) -> Iterator[Diagnostic]:
    """The icons (rules/vocabulary.yaml `icons:`): each id once; each thing an icon stands for
    (`of:`) a name of the vocabulary, a Noble, a business or an action, and given one icon
    only (one meaning each, one icon each); an icon without a `term` stands for a Noble or a
    business, whose name the key prints."""
    entries = [e for e in m.data.get("vocabulary", {}).get("icons", ()) if isinstance(e, dict)]
    named = {n.id for n in m.nobles} | {b.id for b in m.businesses}
    known = [v.name for v in m.vocabulary] + sorted(named) + [a.id for a in m.actions]
    ids: dict[str, int] = {}
    owner: dict[str, int] = {}
    for i, e in enumerate(entries):
        icon_id = str(e.get("id", ""))
        if icon_id in ids:
            yield Diagnostic(
                "duplicate-id", f"icon '{icon_id}' is defined twice",
                m.span_of("vocabulary", "icons", i, "id"),
                (Related("first defined here",
                         m.span_of("vocabulary", "icons", ids[icon_id], "id")),))
        else:
            ids[icon_id] = i
        refs = [str(r) for r in e.get("of", ())]
        for j, ref in enumerate(refs):
            if ref not in known:
                yield _unknown("name, Noble, business or action", ref, known,
                               m.span_of("vocabulary", "icons", i, "of", j))
            elif ref in owner and ref not in {a.id for a in m.actions}:
                yield Diagnostic(
                    "duplicate-id", f"'{ref}' has two icons: one meaning, one icon each",
                    m.span_of("vocabulary", "icons", i, "of", j),
                    (Related("its first icon",
                             m.span_of("vocabulary", "icons", owner[ref], "id")),))
            else:
                owner.setdefault(ref, i)
        if "term" not in e and not any(r in named for r in refs) \
                and all(r in known for r in refs):  # an unknown `of:` is said: it may be a
            # Noble a house rule removed, whose icon needed no term
            yield Diagnostic(
                "missing-text", f"icon '{icon_id}' has no `term`: say what it means in the key "
                "(only the icon of a Noble or a business takes his or its name)",
                m.span_of("vocabulary", "icons", i, "id"))


ALL_CHECKS: tuple[Check, ...] = (
    check_icons,
    check_other_text,
    check_players_words,
    check_examples,
    check_duplicate_ids,
    check_references,
    check_glossary,
    check_provenance,
    check_text,
    check_ranges,
    check_unused_params,
    check_param_ranges,
    check_formula_ranges,
    check_trigger_conditions,
    check_example_players,
)


def run_checks(m: Model) -> list[Diagnostic]:
    """Run every check in order; collect all diagnostics."""
    out: list[Diagnostic] = []
    for check in ALL_CHECKS:
        out.extend(check(m))
    return out


# --- text-stale: a variant changes a rule's values, not its words -------------------------------

# The prose a rule prints (the reference's text, the player aid's line, a procedure's steps).
PROSE_FIELDS = ("text", "short", "steps", "plays", "intro")
# Fields a change of which says nothing the prose could contradict: names, labels, provenance,
# worked-example inputs, the declared ranges of params (checked against the values instead).
_NOT_RULES = ("id", "number", "name", "title", "source", "assumptions", "example", "unit",
              "unit_one", "callouts", "ranges", "reason", "none_reason", "count_reason")
# A placeholder naming a formula prints it in words, params as their values.
FORMULA_FIELDS = ("formula", "condition", "land_price", "measure", "eligible")


def check_stale_texts(
    before: Any, changes: Iterable[Any], acknowledged: Iterable[str] = ()
) -> Iterator[Diagnostic]:
    """When a variant changes a rule's formula, params or structure, every prose text of that
    rule must print the changed value through a placeholder, or be changed by the same variant
    (or be addressed by one of its callouts, `acknowledged` rule ids); otherwise text-stale.

    `before` is the document (overlay.Doc) the variant was laid over and `changes` the
    overlay.Change list of one variant on it. The rule of a change is the innermost identified
    item (`id` or `number`) that holds the changed value; its texts are its PROSE_FIELDS. An
    item with steps and no words of its own that names its rule (`rule:`, a move of the flow) is
    worded by that rule: a change of its steps is a change of that rule too (when the rule is in
    the same document).
    """
    acked = set(acknowledged)
    changed: dict[tuple[str | int, ...], list[Any]] = {}  # rule path -> changes of its values
    rewritten: set[tuple[str | int, ...]] = set()  # paths of prose fields the variant changed
    rules: dict[tuple[str | int, ...], tuple[dict[str, Any], str]] = {}
    # the rule that words an item without words (`rule:`) -> (the item's id, the change)
    worded: dict[tuple[str | int, ...], list[tuple[str, Any]]] = {}
    for ch in changes:
        path = tuple(ch.path)
        if ch.before is None and path and isinstance(path[-1], int):
            continue  # a new item: nothing printed about it yet
        if isinstance(ch.before, dict) and any(_prose(ch.before)):
            continue  # a part with its own words, replaced or removed with them
        owner = _owning_rule(before.data, path)
        if owner is None and len(path) == 1 and isinstance(before.data, dict) \
                and any(_prose(before.data)):
            # a key of the file itself (`track:` of the scoring): its words are the file's own
            # (`intro:`)
            owner = ((), before.data, str(getattr(before, "kind", "")))
        if owner is None:
            continue
        rule_path, rule, ident = owner
        rel = path[len(rule_path):]
        if not rel:
            continue  # the whole rule replaced or removed: its texts go with it
        if rel[0] in PROSE_FIELDS:
            rewritten.add((*rule_path, rel[0]))
            continue
        if rel[0] in _NOT_RULES:
            continue
        if "if" in rule and rel[0] in ("then", "else"):
            continue  # an `if`'s words say its condition, not the steps of its branches
        if getattr(before, "kind", None) == "state" and rule_path[:1] == ("invariants",) \
                and rel[0] == "conserved":
            continue  # where a kind's ids live: its words ("... are not conserved") still hold
        rules[rule_path] = (rule, ident)
        changed.setdefault(rule_path, []).append((rel, ch))
        for item, words_path, words in _worded_by(before.data, path):
            rules[words_path] = (words, str(words["id"]))
            worded.setdefault(words_path, []).append((item, ch))
    for rule_path, found in changed.items():
        rule, ident = rules[rule_path]
        if ident in acked:
            continue
        # every text of the rule that no longer says what the change made it: one error for
        # the change, each text quoted (a note points at it)
        stale_fields: list[tuple[str, str, list[tuple[str, ...]]]] = []
        stale: list[tuple[tuple[str | int, ...], Any]] = []
        for field, texts in _prose(rule):
            if (*rule_path, field) in rewritten:
                continue
            phs = [ph.path for t in texts for ph in rtext.placeholders(t)]
            mine = [(rel, ch) for rel, ch in found
                    if not any(_covers(ph, rel) for ph in phs)
                    or any(_names_old(ph, ch) for ph in phs)]
            if not mine:
                continue
            stale_fields.append((field, _quote(" ".join(texts)), phs))
            stale.extend(x for x in mine if x not in stale)
        if stale_fields:
            yield _stale_diagnostic(before, rule_path, ident, stale, stale_fields)
        yield from _stale_step_texts(before, rule_path, rule, ident, found, rewritten)
    yield from _stale_worded(before, worded, rules, rewritten, acked)


def _formula_names(source: str) -> set[str] | None:
    """The names a formula's text reads (its parse tree's), or None when it does not parse (the
    formula's own error says so)."""
    try:
        tree = parse_expr(source.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _quote(text: str, limit: int = 80) -> str:
    """A text quoted in a message: on one line, cut at a word (never inside a placeholder)."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    cut = words[:limit].rsplit(" ", 1)[0]
    if cut.count("{") > cut.count("}"):
        cut = cut[: cut.rindex("{")].rstrip()
    return cut + " ..."


def _stale_diagnostic(before: Any, rule_path: tuple[str | int, ...], ident: str,
                      stale: list[tuple[tuple[str | int, ...], Any]],
                      fields: list[tuple[str, str, list[tuple[str, ...]]]]) -> Diagnostic:
    """The text-stale error of one rule's change: which of its texts (by the key the rules
    write them under) still read as before, quoted, and what to change."""
    rel, ch = stale[0]
    what = ", ".join(dict.fromkeys(
        "the place" if r[0] in ("$after", "$before") else
        "`" + ".".join(str(p) for p in r) + ":`" for r, _ in stale))
    keys = " and ".join(f"`{field}:`" for field, _, _ in fields)
    reads = "; ".join(f"its `{field}:` still reads \"{quoted}\"" for field, quoted, _ in fields)
    phs = [ph for _, _, p in fields for ph in p]
    old = next((ph for _, c in stale for ph in phs if _names_old(ph, c)), None)
    why = "" if old is None else f" ({{{'.'.join(old)}}} names the value before)"
    formula = next((str(r[0]) for r, _ in stale if r and r[0] in FORMULA_FIELDS), None)
    now = ch.after if isinstance(ch.after, str | int | float) and not isinstance(
        ch.after, bool) else None
    moved = rel[0] in ("$after", "$before")
    under = f"under `id: {ident}`" if rule_path else f"under `{ident}:`"  # () the file itself
    if moved:
        now = None
        fix = (f"say the new order in those words: give {keys} anew {under} in the "
               "same variant")
    elif formula is not None and isinstance(now, str):
        # the words print a param the new formula does not read (or print nothing of it)
        read = _formula_names(now)
        unread = sorted({ph[1] for ph in phs if len(ph) > 1 and ph[0] == "params"
                         and read is not None and ph[1] not in read})
        if unread:
            why += (f" ({', '.join('{params.' + u + '}' for u in unread)} prints a value the "
                    "new formula no longer reads)")
        fix = (f"say the new rule in those words: give {keys} anew {under} in the "
               f"same variant (or print the formula itself with {{{formula}}})")
    else:
        printed = ".".join(str(p) for p in rel if not str(p).startswith("$"))
        hint = f" (as {{{printed}}})" if printed else ""
        fix = (f"print the new value through a placeholder{hint} where the words give it, or "
               f"give {keys} anew {under} in the same variant")
    shown = f" (now `{now!s}`)" if now is not None and len(str(now)) <= 60 else ""
    return Diagnostic(
        "text-stale",
        f"variant '{ch.variant}' changes {what} of '{ident}'{shown}, but {reads}{why}: {fix}",
        ch.span,
        tuple(Related(f"the `{field}:` of '{ident}'", before.span((*rule_path, field)))
              for field, _, _ in fields),
        subject=tuple(dict.fromkeys(
            f"{ident}." + ".".join(str(p) for p in r) for r, _ in stale)),
    )


def _stale_worded(
    before: Any,
    worded: dict[tuple[str | int, ...], list[tuple[str, Any]]],
    rules: dict[tuple[str | int, ...], tuple[dict[str, Any], str]],
    rewritten: set[tuple[str | int, ...]],
    acked: set[str],
) -> Iterator[Diagnostic]:
    """The rule that words an item without words of its own (a move's `rule:`) still reads as
    before, though the variant changed the item's steps (`up_to` of the period-end hand
    discard's choice, under "discard any number of cards")."""
    kind = getattr(before, "kind", None)
    for words_path, found in worded.items():
        rule, ident = rules[words_path]
        found = [(item, ch) for item, ch in found if item not in acked and ident not in acked]
        if not found:
            continue
        item, ch = found[0]
        for field, texts in _prose(rule):
            if (*words_path, field) in rewritten:
                continue
            named = [_named(before.data, tuple(c.path)) for _, c in found]
            phs = [ph.path for t in texts for ph in rtext.placeholders(t)]
            if any(ph[:1] == (kind,) and _covers(ph[1:], n) for ph in phs for n in named):
                continue
            quoted = " ".join(" ".join(texts).split())
            quoted = quoted if len(quoted) <= 60 else quoted[:57].rstrip() + "..."
            what = ".".join(str(p) for p in _named(before.data, tuple(ch.path)))
            yield Diagnostic(
                "text-stale",
                f"variant '{ch.variant}' changes {what} of '{item}', whose words are those of "
                f"'{ident}' (its rule:), but the {field} of '{ident}' still reads \"{quoted}\": "
                f"change that {field} in the same variant, or address it with a callout",
                ch.span,
                (Related(f"the {field} of '{ident}'", before.span((*words_path, field))),),
            )


def _worded_by(
    data: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[str, tuple[str | int, ...], dict[str, Any]]]:
    """The items above `path` whose words are a rule of the same document: an identified item
    with steps and no words of its own that names its rule (`rule: period-end.hand-discard`);
    each with the rule's path and the rule."""
    node: Any = data
    for key in path[:-1]:
        in_dict = isinstance(node, dict) and isinstance(key, str) and key in node
        in_list = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (in_dict or in_list):
            return
        node = node[key]
        if not isinstance(node, dict) or not isinstance(node.get("steps"), list):
            continue
        rid, ident = node.get("rule"), node.get("id")
        if not isinstance(rid, str) or "{" in rid or ident is None or any(_prose(node)):
            continue
        found = _find_item(data, rid, ())
        if found is not None and any(_prose(found[1])) and found[1] is not node:
            yield str(ident), *found


def _find_item(node: Any, ident: str, path: tuple[str | int, ...]
               ) -> tuple[tuple[str | int, ...], dict[str, Any]] | None:
    """The item of the document whose `id` is `ident`, with its path."""
    items: Iterable[tuple[str | int, Any]]
    if isinstance(node, dict):
        if node.get("id") == ident:
            return path, node
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return None
    for key, value in items:
        found = _find_item(value, ident, (*path, key))
        if found is not None:
            return found
    return None


def _named(data: Any, path: tuple[str | int, ...]) -> tuple[str, ...]:
    """A path with its list items named as placeholders name them (`steps.hand-discard.cards`,
    not `steps.0`)."""
    out: list[str] = []
    node: Any = data
    for key in path:
        if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            ident = next((node[k] for k in rtext.IDENTITY_KEYS
                          if isinstance(node, dict) and k in node), key)
            out.append(str(ident))
        else:
            node = node.get(key) if isinstance(node, dict) else None
            out.append(str(key))
    return tuple(out)


# How a text states a whole number in words (an article only before a rate: "a point per item").
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                 "ten", "eleven", "twelve")
_MULTIPLES = {1: "once", 2: "twice"}


def _states_number(text: str, value: int) -> bool:
    """Whether `text` states `value` in digits or in words (a rough test: enough to tell the
    words that a changed number left behind from words that never said it)."""
    plain = rtext.PLACEHOLDER.sub(" ", text).lower()
    words = [str(value)]
    if 0 <= value < len(_NUMBER_WORDS):
        words.append(_NUMBER_WORDS[value])
    if value in _MULTIPLES:
        words.append(_MULTIPLES[value])
    if any(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w.])", plain) for w in words):
        return True
    return value == 1 and re.search(r"\ban?\b(?:\W+\w+){1,3}?\W+(?:per|each|every)\b",
                                    plain) is not None


def _stale_step_texts(
    before: Any,
    rule_path: tuple[str | int, ...],
    rule: dict[str, Any],
    ident: str,
    found: list[Any],
    rewritten: set[tuple[str | int, ...]],
) -> Iterator[Diagnostic]:
    """The steps of a rule that read one of its changed numbers (`this.NAME`) keep words of
    their own: one that still states the number as it was (a digit or a number word), without
    a placeholder printing it, contradicts the change (`points_per_item: 2` under "Score a
    point per item")."""
    numbers = [(rel, ch) for rel, ch in found
               if isinstance(rel[0], str) and isinstance(ch.before, int)
               and not isinstance(ch.before, bool) and ch.before != ch.after]
    if not numbers:
        return
    for rel, ch in numbers:
        name = str(rel[0])
        reads = re.compile(rf"\bthis\.{re.escape(name)}\b")
        for step_rel, step in _worded_parts(rule, ()):
            text = step.get("text")
            step_path = (*rule_path, *step_rel)
            if not isinstance(text, str) or (*step_path, "text") in rewritten:
                continue
            if not _reads(step, reads):
                continue
            phs = [ph.path[1:] if ph.path[:1] == ("this",) else ph.path
                   for ph in rtext.placeholders(text)]
            if any(_covers(ph, rel) for ph in phs):
                continue
            if not _states_number(text, ch.before):
                continue
            where = ".".join(str(p) for p in rel)
            step_id = step.get("id")
            named = f"step '{step_id}'" if step_id is not None else "a step"
            yield Diagnostic(
                "text-stale",
                f"variant '{ch.variant}' changes {where} of '{ident}' from {ch.before} to "
                f"{ch.after}, but {named}, which reads this.{name}, still says \"{text}\": "
                f"print it as {{{name}}} in the step's text, or change the text in the same "
                "variant",
                ch.span,
                (Related(f"the text of {named}", before.span((*step_path, "text"))),),
            )


def _worded_parts(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...],
                                                                           dict[str, Any]]]:
    """Every part below a rule (its steps, nested or not) that has words of its own."""
    items: Iterable[tuple[str | int, Any]]
    if isinstance(node, dict):
        items = ((k, v) for k, v in node.items() if k not in PROSE_FIELDS or k == "steps")
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        sub = (*path, key)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            yield sub, value
        yield from _worded_parts(value, sub)


def _reads(step: dict[str, Any], pattern: re.Pattern[str]) -> bool:
    """Whether the step's own code (not a nested step with words of its own) names `pattern`."""
    def walk(v: Any, top: bool) -> bool:
        if isinstance(v, str):
            return pattern.search(v) is not None
        if isinstance(v, dict):
            if not top and isinstance(v.get("text"), str):
                return False
            return any(walk(x, False) for k, x in v.items() if k not in PROSE_FIELDS)
        if isinstance(v, list):
            return any(walk(x, False) for x in v)
        return False

    return walk(step, True)


def _owning_rule(
    data: Any, path: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], dict[str, Any], str] | None:
    """Whose words print the value at `path`: the innermost identified item strictly above it
    in `data` or, below that item, the innermost part with words of its own (a Noble action's
    `extra_pick` with its `text`), with the item's id; None outside identified items."""
    node: Any = data
    found: tuple[tuple[str | int, ...], dict[str, Any], str] | None = None
    for i, key in enumerate(path[:-1]):
        in_dict = isinstance(node, dict) and isinstance(key, str) and key in node
        in_list = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (in_dict or in_list):
            break
        node = node[key]
        if not isinstance(node, dict):
            continue
        ident = next((node[k] for k in ("id", "number") if k in node), None)
        if ident is not None:
            found = (path[: i + 1], node, str(ident))
        elif found is not None and any(_prose(node)):
            found = (path[: i + 1], node, found[2])
    return found


def _prose(rule: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    for field in PROSE_FIELDS:
        value = rule.get(field)
        if isinstance(value, str):
            yield field, [value]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
            yield field, list(value)


def _names_old(placeholder: tuple[str, ...], change: Any) -> bool:
    """Whether a placeholder still addresses an item by a name the change replaced: the text
    of a step whose `deck: purple` becomes `brown` still printing
    `{components.decks.purple.years}`."""
    def names(value: Any) -> set[str]:
        if isinstance(value, str):
            return {value}
        if isinstance(value, list):
            return {v for v in value if isinstance(v, str)}
        return set()

    gone = names(change.before) - names(change.after)
    return bool(gone) and any(seg in gone for seg in placeholder[1:])


def _covers(placeholder: tuple[str, ...], rel: tuple[str | int, ...]) -> bool:
    """Whether a local placeholder prints the value changed at `rel` (relative to the rule)."""
    if not placeholder:
        return False
    if placeholder[0] in FORMULA_FIELDS and rel[0] in (placeholder[0], "params"):
        return True
    n = min(len(placeholder), len(rel))
    return tuple(placeholder[:n]) == tuple(str(p) for p in rel[:n])
