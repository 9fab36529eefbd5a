"""Build the typed model from merged, schema-valid documents: name resolution and formulas.

Input: one `Doc` per document kind (the base, or the base with variants merged on).
Output: a `Model`, or None, and the diagnostics found while building (formula errors,
unknown references). Cross-cutting consistency checks live in `checks.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from lisboa_rules.core.diagnostics import Diagnostic, Related, suggest
from lisboa_rules.core.source import Span
from lisboa_rules.front.overlay import Doc, Path
from lisboa_rules.lang import expr
from lisboa_rules.lang.steps import StepProblem
from lisboa_rules.lang.typed import UNKNOWN_NAME
from lisboa_rules.lang.vocab import env_for
from lisboa_rules.model import types as model
from lisboa_rules.model.conservation import check_conservation, check_laws, check_new_records
from lisboa_rules.model.procs import (
    ExprProblem,
    ProcProblems,
    ProcSet,
    check_cycles,
    check_hook_events,
    check_param_kinds,
    proc_set,
    state_scope,
    unique_problems,
    vocab_nodes,
)
from lisboa_rules.model.state import StateDecl
from lisboa_rules.model.state_build import build_state

KINDS = (
    "game",
    "nobles",
    "court",
    "flow",
    "scoring",
    "components",
    "vocabulary",
    "provenance",
    "examples",
    "state",
    "effects",
)
REQUIRED_KINDS = (
    "game",
    "nobles",
    "court",
    "flow",
    "scoring",
    "components",
    "vocabulary",
    "provenance",
    "state",
    "effects",
)


class Builder:
    """Builds one Model; collects diagnostics instead of raising."""

    def __init__(
        self,
        docs: Mapping[str, Doc],
        variants: tuple[str, ...],
        variant_infos: tuple[model.VariantInfo, ...],
        texts: Mapping[str, str] | None = None,
    ) -> None:
        self.docs = docs
        self.texts = texts or {}
        self.variants = variants
        self.variant_infos = variant_infos
        self.diags: list[Diagnostic] = []
        self.rules: list[model.Rule] = []
        self.spans: dict[tuple[str | int, ...], Span] = {}
        for kind, doc in docs.items():
            for p, s in doc.spans.items():
                self.spans[(kind, *p)] = s
        self.businesses = [b["id"] for b in self._get("game", "businesses", default=[])]
        self.vocab: dict[str, tuple[str, str | None]] = {}
        self.vocab_aka: dict[str, tuple[str, ...]] = {}  # a name's other words (`aka:`)
        self.vocab_types: dict[str, str] = {}

    # -- helpers --------------------------------------------------------------------------

    def _get(self, kind: str, *path: str | int, default: Any = None) -> Any:
        return _get(self.docs, kind, *path, default=default)

    def span(self, kind: str, *path: str | int, key: bool = False) -> Span:
        if kind not in self.docs:
            return model.NOWHERE
        return self.docs[kind].span(tuple(path), key=key)

    def _char_at(self, span: Span) -> str:
        # Spans of quoted scalars start at the quote; a formula's column is inside it.
        lines = self.texts.get(span.file, "").split("\n")
        if 0 < span.line <= len(lines) and 0 < span.col <= len(lines[span.line - 1]):
            return lines[span.line - 1][span.col - 1]
        return ""

    def error(self, code: str, message: str, span: Span, suggestion: str | None = None) -> None:
        self.diags.append(Diagnostic(code, message, span, suggestion=suggestion))

    def prov(self, obj: Mapping[str, Any]) -> model.Provenance:
        return model.Provenance(tuple(obj.get("source", ())), tuple(obj.get("assumptions", ())))

    def rule(
        self,
        kind: str,
        path: Path,
        obj: Mapping[str, Any],
        rule_id: str,
        title: str,
        executable: bool = False,
    ) -> model.Rule:
        r = model.Rule(
            rule_id,
            title,
            str(obj.get("text", "")),
            kind,
            self.prov(obj),
            executable,
            tuple(path),
            span=self.span(kind, *path),
        )
        self.rules.append(r)
        return r

    def formula(
        self, kind: str, path: Path, source: str, env: Mapping[str, expr.NameInfo],
        want: tuple[expr.Type, str] | None = None,
        scope_advice: Mapping[str, str] | None = None,
    ) -> expr.Formula | None:
        """The formula `source` at `path` of `kind`, parsed and checked against `env`; None,
        with its error reported, when it does not parse or check. `want` (a type and the words
        of its place, as ("bool", "a trigger's condition")) refuses (`expr-type`) a formula of
        the other type: a yes/no where a number is wanted, or a number where a yes/no is. A
        name of the vocabulary of a scope the formula does not read is said to be one, with
        `scope_advice` for its scope (how to read it there)."""
        try:
            f = expr.parse(source, env)
        except expr.FormulaError as exc:
            if exc.code == "unknown-name" and exc.name in self.vocab and exc.name not in env:
                scope = self.vocab[exc.name][0]
                reads = sorted({self.vocab[n][0] for n in env if n in self.vocab})
                advice = (scope_advice or {}).get(scope, "")
                exc.message = (f"'{exc.name}' is a name of the {scope} scope (rules/vocabulary"
                               f".yaml), which this formula does not read: it reads the names "
                               f"of {', '.join(reads) or 'no scope'} and its params"
                               + (f"; {advice}" if advice else ""))
                exc.suggestion = None
            base = self.span(kind, *path)
            offset = len(source) - len(source.lstrip())
            quote = 1 if self._char_at(base) in "\"'" else 0
            span = Span(
                base.file,
                base.line,
                base.col + exc.col + offset + quote,
                base.end_line,
                base.end_col,
            )
            self.error(exc.code, exc.message, span, exc.suggestion)
            return None
        if want is not None and f.type != want[0]:
            must, got = (("true or false", "a number") if want[0] == "bool"
                         else ("a number", "true or false"))
            self.error("expr-type", f"{want[1]} must be {must}, not {got}: '{f.source}'",
                       self.span(kind, *path))
            return None
        return f

    def params(self, obj: Mapping[str, Any]) -> model.Params:
        return tuple((k, int(v)) for k, v in sorted(obj.get("params", {}).items()))

    def effects(self, obj: Mapping[str, Any] | None) -> model.Effects:
        return tuple((k, int(v)) for k, v in sorted((obj or {}).items()))

    def env(self, scopes: Iterable[str], params: model.Params = ()) -> dict[str, expr.NameInfo]:
        return env_for(self.vocab, tuple(scopes), self.businesses, params, self.vocab_types,
                       self.vocab_aka)

    # -- the documents ---------------------------------------------------------------------

    def _player_counts(self) -> tuple[int, ...]:
        """The player counts of a rule set with a variant that applies by player count (the
        engine plays it with those only); () when no variant narrows game.players."""
        narrowing = [set(v.applies_players) for v in self.variant_infos
                     if v.id in self.variants and v.applies_players]
        players = self._get("game", "players", default={}) or {}
        lo, hi = players.get("min"), players.get("max")
        if not narrowing or not isinstance(lo, int) or not isinstance(hi, int):
            return ()
        return tuple(sorted(set(range(lo, hi + 1)).intersection(*narrowing)))

    def build(self) -> model.Model | None:
        missing = [k for k in REQUIRED_KINDS if k not in self.docs]
        if missing:
            return None
        data = {k: d.data for k, d in self.docs.items()}
        state, found = build_state(
            data,
            lambda *path, key=False: self.span("state", *path, key=key),
            self._char_at,
            [v.id for v in self.variant_infos],
            {p: v for p, v in self.docs["state"].origin.items() if v in self.variants},
            self.span,
        )
        self.diags.extend(found)
        self._vocabulary(data, state)
        businesses = tuple(
            model.Business(b["id"], b["name"], span=self.span("game", "businesses", i))
            for i, b in enumerate(self._get("game", "businesses"))
        )
        self._game_rules()
        nobles, state_actions, noble_actions = self._nobles()
        costs, actions = self._court()
        triggers, steps = self._flow()
        scoring, tiebreakers = self._scoring(state)
        decks, cards, decrees, plans, ships = self._components()
        assumptions, differences, sources = self._provenance()
        examples = self._examples()
        procset = self._procedures(data, state)
        return model.Model(
            variants=self.variants,
            data=data,
            spans=self.spans,
            rules=tuple(self.rules),
            businesses=businesses,
            nobles=nobles,
            state_actions=state_actions,
            noble_actions=noble_actions,
            costs=costs,
            actions=actions,
            triggers=triggers,
            period_end=steps,
            scoring=scoring,
            tiebreakers=tiebreakers,
            decks=decks,
            cards=cards,
            decrees=decrees,
            plans=plans,
            ships=ships,
            assumptions=assumptions,
            differences=differences,
            vocabulary=self._vocab_nodes(),
            examples=examples,
            sources=sources,
            state=state,
            procs=procset,
            texts=self.texts,
            player_counts=self._player_counts(),
        )

    def _procedures(self, data: dict[str, Any], state: StateDecl) -> ProcSet:
        """The procedures of rules/ (effects, shared procedures, hooks, Noble actions), with
        the problems reading them found (`ProcSet.problems`): the lower pass compiles them
        (pipeline.py), and `procedure_diagnostics` reports its problems with these."""
        problems: list[StepProblem] = []
        ps = proc_set(self._get("effects", default={}) or {},
                      self._get("nobles", "noble_actions", default=[]) or [], problems,
                      self._get("vocabulary", "names", default=[]) or [],
                      self._get("flow", default={}) or {},
                      self._get("court", default={}) or {},
                      self._get("nobles", "forbidden_reason", default=None),
                      {str(f.get("id")): str(f.get("name")) for f in
                       self._get("game", "flags", default=[]) or []
                       if isinstance(f, Mapping) and isinstance(f.get("name"), str)})
        problems += check_cycles(ps)
        problems += check_hook_events(ps, [str(e.get("id")) for e in self._get(
            "effects", "events", default=[]) or [] if isinstance(e, Mapping)])
        untyped = check_param_kinds(ps, state)  # such params are typed `any` from here on
        problems += untyped
        problems += check_conservation(ps, state, data)
        problems += check_laws(ps, state)
        problems += check_new_records(ps, state, data)
        return replace(ps, problems=tuple(problems), untyped=bool(untyped))

    def _vocabulary(self, data: dict[str, Any], state: StateDecl) -> None:
        rows = self._get("vocabulary", "names") or []
        ps = proc_set({}, [], [], rows)
        problems: list[tuple[str, str, str]] = []
        scope = state_scope(state, data, ps.measures, None, problems)
        index = {str(n.get("name")): i for i, n in enumerate(rows)}
        for name, code, message in problems:
            self.error(code, f"name '{name}': {message}",
                       self.span("vocabulary", "names", index.get(name, 0), "value"))
        found: list[tuple[int, str, str]] = []
        nodes = vocab_nodes(rows, scope, found)
        for i, code, message in found:
            self.error(code, f"name '{rows[i].get('name')}': {message}",
                       self.span("vocabulary", "names", i, "value"))
        bad = {p[0] for p in problems} | {str(rows[i].get("name")) for i, _, _ in found}
        for i, n in enumerate(rows):
            name = n["name"]
            if name in bad:
                continue
            self.vocab_types[name] = nodes[name][0] if name in nodes else "int"
            if name in self.vocab:
                self.error(
                    "duplicate-id",
                    f"name '{name}' is listed twice",
                    self.span("vocabulary", "names", i, "name"),
                )
            self.vocab[name] = (n["scope"], n.get("per"))
            self.vocab_aka[name] = tuple(n.get("aka", ()))

    def _vocab_nodes(self) -> tuple[model.VocabName, ...]:
        return tuple(
            model.VocabName(
                n["name"],
                n["scope"],
                n.get("per"),
                n["words"],
                span=self.span("vocabulary", "names", i),
            )
            for i, n in enumerate(self._get("vocabulary", "names"))
        )

    def _game_rules(self) -> None:
        for i, r in enumerate(self._get("game", "rules", default=[])):
            self.rule("game", ("rules", i), r, r["id"], r["title"])

    def _nobles(
        self,
    ) -> tuple[
        tuple[model.Noble, ...], tuple[model.StateAction, ...], tuple[model.NobleAction, ...]
    ]:
        nobles = []
        for i, n in enumerate(self._get("nobles", "nobles")):
            reign = None
            if "reign" in n:
                rg = n["reign"]
                na = rg["noble_action"]
                reign = model.Reign(
                    rg["flag"],
                    rg["name"],
                    rg.get("title", ""),
                    None if na == "none" else na,
                    span=self.span("nobles", "nobles", i, "reign"),
                )
            nobles.append(
                model.Noble(
                    n["id"],
                    n["name"],
                    n["title"],
                    tuple(n["state_actions"]),
                    n["noble_action"],
                    tuple(n["trade_goods"]),
                    reign,
                    self.prov(n),
                    span=self.span("nobles", "nobles", i),
                )
            )
        sas = []
        for i, a in enumerate(self._get("nobles", "state_actions")):
            r = self.rule(
                "nobles",
                ("state_actions", i),
                a,
                f"state-action.{a['id']}",
                a["name"],
                executable=True,
            )
            sas.append(
                model.StateAction(
                    a["id"],
                    a["name"],
                    self.effects(a["effects"]),
                    r,
                    span=self.span("nobles", "state_actions", i),
                )
            )
        # a Noble's State actions type the steps that read them (`noble.state_actions`): one
        # that names none makes them text, and those steps fail to check; the name is said here
        # (the checks that also say it run only on rules whose steps check)
        known = [a.id for a in sas]
        for i, n in enumerate(nobles):
            for j, sa in enumerate(n.state_actions):
                if sa not in known:
                    self.error("unknown-reference", f"unknown State action '{sa}'",
                               self.span("nobles", "nobles", i, "state_actions", j),
                               suggest(sa, known))
        nas = []
        for i, a in enumerate(self._get("nobles", "noble_actions")):
            path: Path = ("noble_actions", i)
            r = self.rule("nobles", path, a, a["id"], a["name"], executable=True)
            params = self.params(a)
            land = None
            if "land_price" in a:
                land = self.formula(
                    "nobles",
                    (*path, "land_price"),
                    a["land_price"],
                    self.env(("game", "player"), params),
                    ("int", "a land price"),
                )
            extra = None
            if "extra_pick" in a:
                e = a["extra_pick"]
                extra = model.ExtraPick(
                    e["marker_on"],
                    e["max_markers"],
                    e["text"],
                    span=self.span("nobles", *path, "extra_pick"),
                )
                self.rules.append(
                    model.Rule(
                        f"{a['id']}.extra-pick",
                        "Extra pick",
                        e["text"],
                        "nobles",
                        r.provenance,
                        True,
                        (*path, "extra_pick"),
                        span=self.span("nobles", *path, "extra_pick"),
                    )
                )
            nas.append(
                model.NobleAction(
                    a["id"],
                    a["name"],
                    a["id"],  # its steps are the procedure
                    r,
                    land,
                    params,
                    int(a.get("rubble", 0)),
                    tuple(sorted(a.get("lots", {}).items())),
                    extra,
                    int(a.get("wigs_per_official", 0)),
                    a.get("forbidden_by_flag"),
                    span=self.span("nobles", *path),
                )
            )
        for i, r in enumerate(self._get("nobles", "rules", default=[])):
            self.rule("nobles", ("rules", i), r, r["id"], r["title"])
        return tuple(nobles), tuple(sas), tuple(nas)

    def _court(self) -> tuple[tuple[model.Cost, ...], tuple[model.Action, ...]]:
        costs = []
        # the names a cost's formula may read follow from how the actions use it: a price
        # (an action's `cost:`) reads the game, the visit and the player; what is paid for
        # lacking it (`lacking_cost:`) the payment and the player; any other, all of them
        scopes: dict[str, tuple[str, ...]] = {}
        for a in self._get("court", "actions", default=[]):
            if isinstance(a, dict):
                for key, read in (("lacking_cost", ("payment", "player")),
                                  ("cost", ("game", "visit", "player"))):
                    if isinstance(a.get(key), str):
                        scopes.setdefault(a[key], read)
        for i, c in enumerate(self._get("court", "costs")):
            path: Path = ("costs", i)
            r = self.rule("court", path, c, c["id"], c["name"], executable=True)
            params = self.params(c)
            f = self.formula(
                "court",
                (*path, "formula"),
                c["formula"],
                self.env(scopes.get(c["id"], ("game", "player", "payment", "visit")), params),
                ("int", "a cost's formula"),
            )
            if f is None:
                continue
            costs.append(
                model.Cost(
                    c["id"],
                    c["name"],
                    f,
                    params,
                    tuple(sorted(c.get("example", {}).items())),
                    r,
                    span=self.span("court", *path),
                )
            )
        actions = []
        for i, a in enumerate(self._get("court", "actions")):
            path = ("actions", i)
            r = self.rule("court", path, a, a["id"], a["name"], executable=True)
            actions.append(
                model.Action(
                    a["id"],
                    a["name"],
                    a.get("number"),
                    a.get("plays"),
                    a["procedure"],
                    a.get("cost"),
                    a.get("lacking_cost"),
                    tuple(str(x["text"]) for x in a.get("steps", ())
                          if isinstance(x, dict) and isinstance(x.get("text"), str)),
                    bool(a.get("followable", True)),
                    self.effects(a.get("reward")),
                    r,
                    span=self.span("court", *path),
                )
            )
        return tuple(costs), tuple(actions)

    def _flow(self) -> tuple[tuple[model.Trigger, ...], tuple[model.Step, ...]]:
        for i, t in enumerate(self._get("flow", "turn")):
            self.rule("flow", ("turn", i), t, t["id"], t["name"], executable=True)
        triggers = []
        for i, t in enumerate(self._get("flow", "triggers")):
            path: Path = ("triggers", i)
            r = self.rule(
                "flow",
                path,
                t,
                t["id"],
                {"period": "End of the period", "game": "End of the game"}.get(
                    t.get("ends", ""), "When " + t["id"].rsplit(".", 1)[-1].replace("-", " ")),
                executable=True,
            )
            params = self.params(t)
            scopes = ("player", "game") if t["scope"] == "any-player" else ("game",)
            f = self.formula("flow", (*path, "condition"), t["condition"], self.env(scopes, params),
                             ("bool", "a trigger's condition"), {"player": (
                                 "a trigger of `scope: any-player` reads them, of each player "
                                 "in turn")})
            if f is None:
                continue
            triggers.append(
                model.Trigger(
                    t["id"],
                    t.get("ends", ""),  # "": the trigger only does its steps (`do:`)
                    _periods(t),
                    t["scope"],
                    f,
                    params,
                    r,
                    span=self.span("flow", *path),
                )
            )
        su = self._get("flow", "setup")
        self.rule("flow", ("setup",), su, su["id"], "Setup", executable=True)
        te = self._get("flow", "turn_end", default=None)
        if isinstance(te, dict) and "id" in te:  # the reference prints its steps (render.py)
            self.rule("flow", ("turn_end",), te, te["id"], "End of the turn", executable=True)
        pe = self._get("flow", "period_end")
        self.rule("flow", ("period_end",), pe, pe["id"], "End of the period", executable=True)
        steps = []
        for i, s in enumerate(pe["steps"]):
            path = ("period_end", "steps", i)
            r = self.rule(
                "flow",
                path,
                s,
                s["id"],
                s["id"].rsplit(".", 1)[-1].replace("-", " ").capitalize(),
                executable=True,
            )
            steps.append(
                model.Step(
                    s["id"],
                    s.get("decision") or s["id"],  # a decision, or the step's own steps
                    s.get("deck"),
                    tuple(s.get("ships", ())),
                    r,
                    span=self.span("flow", *path),
                )
            )
        ge = self._get("flow", "game_end")
        self.rule("flow", ("game_end",), ge, ge["id"], "End of the game", executable=True)
        return tuple(triggers), tuple(steps)

    def _declared_fields(self) -> list[str]:
        """The ids of the player fields rules/state.yaml declares, built or not (a field
        with an error of its own is reported there, not again where it is read)."""
        fields = self._get("state", "player", default=[]) or []
        return [str(f["id"]) for f in fields if isinstance(f, Mapping) and "id" in f]

    def _group_names(self, state: StateDecl, path: Path, s: Mapping[str, Any]) -> dict[str, str]:
        """The names of a majority source's groups: when the source says its groups are the
        ids of a kind of rules/state.yaml (`of`), the `name` of each row of the table that
        kind comes from, by id; a group with no such row is named by its source."""
        of = s.get("of")
        if of is None:
            return {}
        kinds = [k.id for k in state.kinds if k.source and k.key]
        kind = state.kind(str(of))
        if kind is None or not kind.source or not kind.key:
            self.error(
                "unknown-reference",
                f"scoring source '{s['id']}': '{of}' is not a kind of rules/state.yaml whose "
                "ids come from a table",
                self.span("scoring", *path, "of"),
                suggest(str(of), kinds),
            )
            return {}
        doc, *rest = kind.source.split(".")
        rows = self._get(doc, *rest)
        ids = [str(row[kind.key]) for row in (rows if isinstance(rows, list) else ())
               if isinstance(row, Mapping) and kind.key in row]
        groups = [str(g["id"]) for g in s.get("groups", ()) if isinstance(g, Mapping)
                  and "id" in g]
        for j, g in enumerate(s.get("groups", ())):  # and only them: another is no group of it
            if isinstance(g, Mapping) and "id" in g and ids and str(g["id"]) not in ids:
                self.error(
                    "unknown-reference",
                    f"scoring source '{s['id']}' has its groups by {of} (of: {of}), and "
                    f"'{g['id']}' is no {of}",
                    self.span("scoring", *path, "groups", j, "id"), suggest(str(g["id"]), ids))
        missing = [i for i in ids if i not in groups]
        if missing and groups:  # its groups are every id of the kind: one left out scores none
            self.error(
                "schema-required",
                f"scoring source '{s['id']}' has a group for every {of} (of: {of}), but none "
                f"for {', '.join(missing)}: add {'them' if len(missing) > 1 else 'one'} to "
                f"its groups, or leave out 'of' when not every {of} is scored",
                self.span("scoring", *path, "groups"),
            )
        return {
            str(row[kind.key]): row["name"]
            for row in (rows if isinstance(rows, list) else ())
            if isinstance(row, Mapping) and kind.key in row and isinstance(row.get("name"), str)
        }

    def _held_items(
        self, state: StateDecl, path: Path, s: Mapping[str, Any]
    ) -> tuple[model.HeldItem, ...] | None:
        """The items a `held` scoring source can find in its player field: the rows of the
        table the field's kind of id comes from (rules/state.yaml `kinds`), each with its
        points (the column `points` names) and, when `condition` names a column, the
        condition under which it scores them. None (with a diagnostic) when the field, its
        table or a column is unknown."""
        where = self.span("scoring", *path)
        for key in ("held", "points"):
            if key not in s:
                self.error(
                    "schema-required",
                    f"scoring source '{s['id']}' is a held source and needs '{key}'",
                    where,
                )
                return None
        names = [f.id for f in state.player if f.type.name == "list" and f.type.args]
        f = state.field("player", s["held"])
        if f is None and s["held"] in self._declared_fields():
            return None  # declared with an error of its own (reported by rules/state.yaml)
        if f is None or f.type.name != "list" or not f.type.args:
            self.error(
                "unknown-reference",
                f"scoring source '{s['id']}': '{s['held']}' is not a list field of a player "
                "in rules/state.yaml",
                self.span("scoring", *path, "held"),
                suggest(s["held"], names),
            )
            return None
        kind = state.kind(f.type.args[0].name)
        rows: Any = None
        if kind is not None and kind.source and kind.key:
            doc, *rest = kind.source.split(".")
            rows = self._get(doc, *rest)
        if kind is None or not kind.key or not isinstance(rows, list):
            self.error(
                "unknown-reference",
                f"scoring source '{s['id']}': the items of '{s['held']}' "
                f"({f.type.args[0].name}) come from no table of the rules data",
                self.span("scoring", *path, "held"),
            )
            return None
        columns = sorted({str(c) for r in rows if isinstance(r, Mapping) for c in r})
        for key in ("points", "condition"):
            column = s.get(key)
            if column is not None and any(
                not isinstance(r, Mapping) or column not in r for r in rows
            ):
                self.error(
                    "unknown-reference",
                    f"scoring source '{s['id']}': not every row of {kind.source} has a "
                    f"'{column}'",
                    self.span("scoring", *path, key),
                    suggest(str(column), columns),
                )
                return None
        items = []
        for i, r in enumerate(rows):
            condition = None
            if "condition" in s:
                condition = self.formula(
                    doc, (*rest, i, s["condition"]), str(r[s["condition"]]),
                    self.env(("player",)), ("bool", f"the {s['condition']} of '{r[kind.key]}'"),
                )
                if condition is None:
                    continue
            points = r[s["points"]]
            if not isinstance(points, int) or isinstance(points, bool):
                self.error(
                    "schema-type",
                    f"scoring source '{s['id']}': the '{s['points']}' of {kind.source} "
                    f"row {r[kind.key]} is not a whole number",
                    self.span(doc, *rest, i, s["points"]),
                )
                continue
            items.append(
                model.HeldItem(str(r[kind.key]), points, condition, span=self.span(doc, *rest, i))
            )
        return tuple(items)

    def _scoring(
        self, state: StateDecl
    ) -> tuple[tuple[model.ScoringSource, ...], tuple[model.TieBreaker, ...]]:
        m = self._get("scoring", "majority")
        self.rule("scoring", ("majority",), m, "score.ties", "Ties in majorities", executable=True)
        track = self._get("scoring", "track")
        ints = [f.id for f in state.player if f.type.name == "int" and not f.type.optional]
        broken = track not in [f.id for f in state.player] and track in self._declared_fields()
        if track is not None and track not in ints and not broken:
            self.error(
                "unknown-reference",
                f"the score track '{track}' is not a whole-number field of a player in "
                "rules/state.yaml",
                self.span("scoring", "track"),
                suggest(str(track), ints),
            )
        sources = []
        for i, s in enumerate(self._get("scoring", "sources")):
            path: Path = ("sources", i)
            r = self.rule("scoring", path, s, s["id"], s["name"], executable=True)
            params = self.params(s)
            f = None
            if s["kind"] == "per-player":
                if "formula" not in s:
                    self.error(
                        "schema-required",
                        f"scoring source '{s['id']}' is per-player and needs a 'formula'",
                        self.span("scoring", *path),
                    )
                    continue
                f = self.formula(
                    "scoring", (*path, "formula"), s["formula"], self.env(("player",), params),
                    ("int", "a scoring source's formula"),
                )
                if f is None:
                    continue
            groups = []
            if s["kind"] == "majority":
                if "groups" not in s:
                    self.error(
                        "schema-required",
                        f"scoring source '{s['id']}' is a majority and needs 'groups'",
                        self.span("scoring", *path),
                    )
                    continue
                names = self._group_names(state, path, s)
                for j, g in enumerate(s["groups"]):
                    if names and g["id"] not in names:
                        continue  # no id of its kind (said): its measure reads what is not
                    gf = self.formula(
                        "scoring",
                        (*path, "groups", j, "measure"),
                        g["measure"],
                        self.env(("player",), params),
                        ("int", "a majority's measure"),
                    )
                    if gf is not None:
                        groups.append(
                            model.MajorityGroup(
                                g["id"],
                                names.get(g["id"], s["name"]),
                                gf,
                                tuple(g["table"]),
                                g.get("unit", ""),
                                g.get("unit_one", g.get("unit", "")),
                                span=self.span("scoring", *path, "groups", j),
                            )
                        )
            held, items = "", tuple[model.HeldItem, ...]()
            if s["kind"] == "held":
                found = self._held_items(state, path, s)
                if found is None:
                    continue
                held, items = s["held"], found
            eligible = None
            if "eligible" in s:
                eligible = self.formula(
                    "scoring",
                    (*path, "eligible"),
                    s["eligible"],
                    self.env(("player", "majority"), params),
                    ("bool", "a majority's `eligible`"),
                )
            sources.append(
                model.ScoringSource(
                    s["id"],
                    s["name"],
                    s["short"],
                    s["kind"],
                    f,
                    params,
                    tuple(groups),
                    eligible,
                    r,
                    held,
                    items,
                    span=self.span("scoring", *path),
                )
            )
        tb = self._get("scoring", "tiebreakers")
        self.rule("scoring", ("tiebreakers",), tb, tb["id"], "Tie-breakers", executable=True)
        tbs = []
        for i, t in enumerate(tb["measures"]):
            f = self.formula(
                "scoring",
                ("tiebreakers", "measures", i, "measure"),
                t["measure"],
                self.env(("player",)),
                ("int", "a tie-breaker's measure"),
            )
            if f is not None:
                tbs.append(
                    model.TieBreaker(
                        f, t["name"], span=self.span("scoring", "tiebreakers", "measures", i)
                    )
                )
        return tuple(sources), tuple(tbs)

    def _components(self) -> tuple[Any, ...]:
        c = "components"
        decks = tuple(
            model.Deck(
                d["id"],
                d["name"],
                d.get("years", ""),
                d["role"],
                d.get("period"),
                span=self.span(c, "decks", i),
            )
            for i, d in enumerate(self._get(c, "decks"))
        )
        for key in ("display", "decree_display", "shipyard", "church"):
            if key == "church" and self._get(c, key, default=None) is None:
                continue  # the Church track is optional: rules without one have no clergy
            self.rule(
                c,
                (key,),
                self._get(c, key),
                f"components.{key.replace('_', '-')}",
                self._get(c, key, "title"),
                executable=True,
            )
        self.formula(
            c, ("shipyard", "per_color"), self._get(c, "shipyard", "per_color"),
            self.env(("game",)), ("int", "the shipyard's `per_color`"),
        )
        cards = []
        for i, d in enumerate(self._get(c, "cards")):
            event = d.get("event", {})
            cards.append(
                model.Card(
                    d["number"],
                    d["deck"],
                    d["type"],
                    int(d.get("influence", 0)),
                    self.effects(d.get("reward")),
                    self.effects(d.get("penalty")),
                    event.get("noble_action"),
                    self.effects(event.get("effects")),
                    d.get("on_reveal", {}).get("set_flag"),
                    span=self.span(c, "cards", i),
                )
            )
        decrees = []
        for i, d in enumerate(self._get(c, "decrees")):
            f = self.formula(c, ("decrees", i, "condition"), d["condition"], self.env(("player",)),
                             ("bool", f"the condition of '{d['id']}'"))
            if f is not None:
                decrees.append(model.Decree(d["id"], f, d["wigs"], span=self.span(c, "decrees", i)))
        plans = tuple(
            model.Plan(p["id"], p["officials"], span=self.span(c, "plans", i))
            for i, p in enumerate(self._get(c, "plans"))
        )
        ships = tuple(
            model.Ship(s["color"], s["size"], s["cost"], span=self.span(c, "ships", i))
            for i, s in enumerate(self._get(c, "ships"))
        )
        for i, r in enumerate(self._get(c, "rules", default=[])):
            self.rule(c, ("rules", i), r, r["id"], r["title"])
        return decks, tuple(cards), tuple(decrees), plans, ships

    def _provenance(self) -> tuple[Any, ...]:
        p = "provenance"
        assumptions = tuple(
            model.Assumption(a["id"], a["value"], a["reason"], span=self.span(p, "assumptions", i))
            for i, a in enumerate(self._get(p, "assumptions"))
        )
        differences = tuple(
            model.Difference(
                d["id"], d["text"], tuple(d["source"]), span=self.span(p, "differences", i)
            )
            for i, d in enumerate(self._get(p, "differences"))
        )
        sources = tuple((s["id"], s["title"]) for s in self._get(p, "sources"))
        return assumptions, differences, sources

    def _examples(self) -> tuple[model.Example, ...]:
        out = []
        for i, e in enumerate(self._get("examples", "examples", default=[])):
            players = tuple(tuple((k, v) for k, v in pl.items()) for pl in e["players"])
            out.append(
                model.Example(
                    e["id"],
                    e["title"],
                    e["rule"],
                    e["text"],
                    players,
                    tuple(e["show"]),
                    self.prov(e),
                    span=self.span("examples", "examples", i),
                )
            )
        return tuple(out)


def build_model(
    docs: Mapping[str, Doc],
    variants: tuple[str, ...],
    variant_infos: tuple[model.VariantInfo, ...] = (),
    texts: Mapping[str, str] | None = None,
) -> tuple[model.Model | None, list[Diagnostic]]:
    """Build a Model from merged documents; return it (or None) with the diagnostics.

    The procedures' problems are not among them: the lower pass compiles the procedures
    (pipeline.py) and `procedure_diagnostics` reports what reading and compiling them found."""
    b = Builder(docs, variants, variant_infos, texts)
    m = b.build()
    return m, b.diags


def procedure_diagnostics(m: model.Model, docs: Mapping[str, Doc], compiled: ProcProblems
                          ) -> list[Diagnostic]:
    """The problems of a rule set's procedures, located in `docs` (the documents `m` was built
    from): what reading them found (`m.procs.problems`, build_model) and what compiling them
    found (`compiled`, the lower pass), each once. Every procedure is compiled, also one with
    a step that could not be read or checked (step-shape, step-order, a bad `from`): that step
    is left out, so a name only it binds is not reported unknown further down while the
    procedure has another problem."""
    ps = m.procs
    assert ps is not None  # build_model gives every model its procedures
    found = unique_problems([*(pr for pid in ps.procs for pr in compiled.procs.get(pid, ())),
                             *compiled.actions])
    found += compiled.phases
    if ps.untyped:  # their uses and the values passed them: refused for that type alone
        found = [pr for pr in found if not (pr.code == "expr-type" and _ANY.search(pr.message))]
    everything = [*ps.problems, *found]
    for proc in ps.procs.values():
        mine = [pr for pr in everything if pr.path[:len(proc.path)] == proc.path]
        bound = _bound_names(_get(docs, str(proc.path[0]), *proc.path[1:], "steps"))
        follow = [pr for pr in mine if pr.subject[:1] == (UNKNOWN_NAME,)
                  and pr.subject[1] in bound]
        if len(follow) < len(mine):
            everything = [pr for pr in everything if not any(pr is f for f in follow)]
    return [Diagnostic(pr.code, pr.message, _step_span(docs, m.texts, pr),
                       (*_bounds_noted(m, pr.bounds_of), *_notes(docs, pr)),
                       suggestion=pr.suggestion, subject=pr.subject)
            for pr in [*everything, *compiled.queries] if not pr.follows]


def proof_diagnostics(m: model.Model, docs: Mapping[str, Doc], compiled: ProcProblems
                      ) -> list[Diagnostic]:
    """What the proof that every operation of the steps is total found, located in `docs`."""
    return [Diagnostic(pr.code, pr.message, _step_span(docs, m.texts, pr),
                       _bounds_noted(m, pr.bounds_of), suggestion=pr.suggestion)
            for pr in compiled.proofs]


def _notes(docs: Mapping[str, Doc], pr: StepProblem) -> tuple[Related, ...]:
    """A problem's notes, each where the data it points at is written."""
    out = []
    for text, path in getattr(pr, "notes", ()):
        doc = docs.get(str(path[0]))
        if doc is not None:
            out.append(Related(text, doc.span(tuple(path[1:]))))
    return tuple(out)


def _bounds_noted(m: model.Model, field: str | None) -> tuple[Related, ...]:
    """Where the bounds of the declared field a problem is about are written (`player.X`)."""
    if field is None:
        return ()
    scope, _, fid = field.partition(".")
    f = m.state.field(scope, fid)
    if f is None:
        return ()
    return tuple(Related(f"the {key} of {field} ({getattr(f, key)}) is written here", at)
                 for key, at in f.bounds_at)


# the problems that are about a key of a step (its effect key, a misspelt key, a `with`
# argument, the place a gain writes to) point at the key, the others at the value
_KEY_CODES = frozenset({"step-unknown-key", "step-target", "step-order", "step-missing",
                        "unread-key"})


def _step_span(docs: Mapping[str, Doc], texts: Mapping[str, str], pr: StepProblem) -> Span:
    """Where a problem of a step is shown: at its key or value, and for an expression at
    the character where it goes wrong."""
    kind, *rest = pr.path
    doc = docs.get(str(kind))
    if doc is None:
        return model.NOWHERE
    on_key = pr.code in _KEY_CODES or (isinstance(pr, ExprProblem) and pr.on_key)
    span = doc.key_spans.get(tuple(rest)) if on_key else None
    if span is None:
        span = doc.span(tuple(rest))
    if not isinstance(pr, ExprProblem) or not pr.source or span.line != span.end_line:
        return span
    lines = texts.get(span.file, "").split("\n")
    if not 0 < span.line <= len(lines):
        return span
    at = lines[span.line - 1][span.col - 1:]
    quote = 1 if at[:1] in "\"'" else 0
    if at[quote:].startswith(pr.source):
        return Span(span.file, span.line, span.col + quote + pr.col, span.end_line,
                    span.end_col)
    inside = at.find("{" + pr.source + "}")  # a value shown in a refusal's words
    if inside < 0:
        return span
    return Span(span.file, span.line, span.col + inside + 1 + pr.col, span.end_line,
                span.end_col)


def _get(docs: Mapping[str, Doc], kind: str, *path: str | int, default: Any = None) -> Any:
    """The value at `path` of the document of a kind, else `default`."""
    node: Any = docs[kind].data if kind in docs else None
    for key in path:
        if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            continue
        if not (isinstance(node, dict) and key in node):
            return default
        node = node[key]
    return node


_ANY = re.compile(r"\ba any\b")  # the words of typed.describe(ANY)


def _bound_names(raw: Any) -> set[str]:
    """The names the steps `raw` (as written) bind: let keys, the `as` of choose and for_each."""
    out: set[str] = set()
    if isinstance(raw, list):
        for item in raw:
            out |= _bound_names(item)
    elif isinstance(raw, Mapping):
        for key, value in raw.items():
            if key == "let" and isinstance(value, Mapping):
                out |= {str(k) for k in value}
            elif key in ("choose", "for_each") and isinstance(value, Mapping):
                out.add(str(value.get("as")))
            out |= _bound_names(value)
    return out


def _periods(trigger: Mapping[str, Any]) -> tuple[int, ...]:
    """The periods a trigger can fire in (`period: N`, or `periods: [N, ...]`), () for
    `periods: any`."""
    if "period" in trigger:
        return (trigger["period"],)
    written = trigger.get("periods")
    return tuple(sorted(set(written))) if isinstance(written, list) else ()
