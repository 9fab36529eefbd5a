"""Build the declared state (rules/state.yaml) into a `StateDecl`: the kinds' values resolved
from the merged rules data, the field types parsed and checked, the bounds and defaults.

Input: the merged documents' data by kind, where things are (spans) and the variant ids.
Output: the StateDecl and the located diagnostics found (all of them, in one run).
"""

from __future__ import annotations

import keyword
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from lisboa_rules.core import names as grammar
from lisboa_rules.core.diagnostics import Diagnostic, Related, suggest
from lisboa_rules.core.source import Span
from lisboa_rules.lang.vocab import BoundError, resolve_range
from lisboa_rules.model.state import (
    BASE_TYPES,
    CONTAINERS,
    HIDING,
    NOWHERE,
    Invariant,
    StateDecl,
    StateField,
    StateKind,
    StateType,
    TypeSyntaxError,
    Zone,
    parse_type,
)
from lisboa_rules.model.state_invariants import zone_ok

KIND = "state"
# Names the generated state classes keep for themselves.
RESERVED = grammar.STATE_MEMBERS  # what the state classes have besides the fields
# The kind whose values are the variant ids (`from: variants`).
VARIANTS_PATH = "variants"

SpanFn = Callable[..., Span]
DataSpanFn = Callable[..., Span]  # (kind, *path): where a value of the rules data is
_MISSING = object()


class _StateBuilder:
    def __init__(
        self,
        data: Mapping[str, Any],
        span: SpanFn,
        char_at: Callable[[Span], str],
        variant_ids: Sequence[str],
        data_span: DataSpanFn | None = None,
    ) -> None:
        self.data = data
        self.data_span = data_span  # data_span(kind, *path): a value of another document
        self._scopes: tuple[Any, Any] | None = None  # (kinds and fields, their scope)
        self.span = span  # span(*path, key=False) inside the state document
        self.char_at = char_at
        self.variant_ids = tuple(variant_ids)
        self.diags: list[Diagnostic] = []
        self.kinds: dict[str, StateKind] = {}
        self.broken: set[str] = set()
        self.broken_fields: set[str] = set()

    def error(
        self,
        code: str,
        message: str,
        span: Span,
        suggestion: str | None = None,
        related: tuple[Related, ...] = (),
    ) -> None:
        self.diags.append(Diagnostic(code, message, span, related, suggestion=suggestion))

    # -- kinds ----------------------------------------------------------------------------

    def build(self, doc: Mapping[str, Any]) -> StateDecl:
        seen: dict[str, int] = {}
        for i, k in enumerate(doc.get("kinds", [])):
            kid = k["id"]
            if kid in seen:
                self._duplicate("kind", kid, ("kinds", i), ("kinds", seen[kid]))
                continue
            seen[kid] = i
            if kid in BASE_TYPES or kid in CONTAINERS:
                self.error(
                    "state-type",
                    f"kind '{kid}' has the name of a built-in type",
                    self.span("kinds", i, "id"),
                )
                continue
            kind = self._kind(i, k)
            if kind is not None:
                self.kinds[kid] = kind
            else:
                self.broken.add(kid)  # reported once: the fields of its type say nothing more
        player = self._fields("player", doc.get("player", []))
        game = self._fields("game", doc.get("game", []))
        players = next((f for f in game if f.id == "players"), None)
        if players is not None and str(players.type) != "list[player]":
            self.error(
                "state-type",
                f"the game's 'players' is a list[player], not {players.type}",
                players.span,
            )
        elif players is None and game:
            self.error(
                "state-type",
                "the game must hold its players: a field 'players' of type list[player]",
                self.span("game"),
            )
        decl = StateDecl(tuple(self.kinds.values()), player, game)
        decl = replace(decl, invariants=self._invariants(decl, doc.get("invariants") or []))
        self._hidden(decl, doc)
        return replace(decl, checks=self._checks(decl, doc.get("checks") or []))

    # -- visibility -------------------------------------------------------------------------

    def _hidden(self, decl: StateDecl, doc: Mapping[str, Any]) -> None:
        """Every hidden list is a zone of a kind conserved once with no count, so that a view
        can be filled in (`determinize`); a `by` names a field of the kind's rows; at most one
        zone of a kind is `none`."""
        zones = {(z.scope, z.field): inv for inv in decl.invariants if inv.kind is not None
                 for z in inv.zones}
        nowhere: dict[str, StateField] = {}
        for f in (*decl.player, *decl.game):
            inner = _lists(f.type)
            if f.see not in HIDING or inner is None:
                continue
            i = next(n for n, raw in enumerate(doc.get(f.scope) or []) if raw.get("id") == f.id)
            inv = zones.get((f.scope, f.id))
            if inv is None or inv.count is not None:
                kinds = [k.id for k in decl.kinds if k.values is not None]
                what = inner.args[0].name
                self.error(
                    "state-visibility",
                    f"'{f.id}' is hidden ({f.see}), but no conservation of kind '{what}' names "
                    f"{f.scope}.{f.id} among its zones: a bot's guess could not tell which ids "
                    "are in it",
                    self.span(f.scope, i, "see"),
                    f"add {f.scope}.{f.id} to the `in:` of the invariant that conserves "
                    f"'{what}'" if what in kinds else "see: all",
                )
                continue
            if f.see == "none":
                first = nowhere.get(str(inv.kind))
                if first is not None:
                    self.error("state-visibility", f"'{f.id}' and '{first.id}' both hide their "
                               f"{inv.kind} ids and their sizes (see: none): a bot's guess "
                               "could not tell how many go in each", self.span(f.scope, i, "see"),
                               "see: count")
                    continue
                nowhere[str(inv.kind)] = f
            if f.by is not None:
                kind = decl.kind(str(inv.kind))
                rows = self._walk(kind.source, kind.span, f"kind '{kind.id}'") if (
                    kind is not None and kind.source) else _MISSING
                keys = sorted({str(k) for r in rows if isinstance(r, Mapping) for k in r}) if (
                    isinstance(rows, list)) else []
                if f.by not in keys:
                    self.error("state-visibility", f"'{f.id}' is sorted by '{f.by}', which the "
                               f"rows of kind '{inv.kind}' do not have",
                               self.span(f.scope, i, "by"), suggest(f.by, keys))

    # -- saved-game checks ------------------------------------------------------------------

    def _checks(self, decl: StateDecl, items: Sequence[Mapping[str, Any]]
                ) -> tuple[Invariant, ...]:
        out: list[Invariant] = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(items):
            cid = str(raw["id"])
            if cid in seen:
                self._duplicate("check", cid, ("checks", i), ("checks", seen[cid]))
                continue
            seen[cid] = i
            path = ("checks", i)
            out.append(Invariant(cid, str(raw["text"]), raw.get("each"), str(raw["holds"]),
                                 at=str(raw["at"]), path=path, span=self.span(*path)))
        from lisboa_rules.model.state_invariants import compile_checks

        scope = self._scope(decl)
        _, problems = compile_checks(replace(decl, checks=tuple(out)), scope)
        if self.broken_fields or self.broken:
            problems = [pr for pr in problems if pr.code != "unknown-name"]
        for pr in problems:
            self.error(pr.code, pr.message, self._expr_span(pr.path, pr.source, pr.col),
                       pr.suggestion)
        return tuple(out)

    def _scope(self, decl: StateDecl) -> Any:
        """The scope of the invariants and the checks: made once (it reads the kinds and the
        fields of `decl`, the same for both, and the rules data)."""
        key = (decl.kinds, decl.player, decl.game)
        if self._scopes is None or self._scopes[0] != key:
            from lisboa_rules.model.procs import state_scope
            from lisboa_rules.model.state_invariants import measures_of

            self._scopes = (key, state_scope(decl, self.data, measures_of(self.data)))
        return self._scopes[1]

    # -- invariants -----------------------------------------------------------------------

    def _invariants(self, decl: StateDecl, items: Sequence[Mapping[str, Any]]
                    ) -> tuple[Invariant, ...]:
        out: list[Invariant] = []
        seen: dict[str, int] = {}
        lists: dict[str, int] = {}  # a public function's name -> the invariant naming it
        conserved: dict[str, int] = {}  # a kind conserved (each id once) -> its invariant
        for i, raw in enumerate(items):
            iid = str(raw["id"])
            if iid in seen:
                self._duplicate("invariant", iid, ("invariants", i), ("invariants", seen[iid]))
                continue
            seen[iid] = i
            path = ("invariants", i)
            if "holds" in raw:
                out.append(Invariant(iid, str(raw["text"]), raw.get("each"), str(raw["holds"]),
                                     path=path, span=self.span(*path)))
                continue
            inv = self._conserved(decl, i, raw)
            if inv is None:
                continue
            if inv.count is None and inv.kind in conserved:
                self.error("state-invariant",
                           f"kind '{inv.kind}' is conserved twice (each id once)",
                           self.span(*path, "conserved", "kind"),
                           related=(Related("the first is here", self.span(
                               "invariants", conserved[inv.kind], "conserved", "kind")),))
                continue
            if inv.count is None:
                conserved[str(inv.kind)] = i
            if inv.function is not None:
                if inv.count is not None:
                    self.error("state-invariant", "only a kind whose ids are each there once "
                               "has a function listing them: drop `function:` or `count:`",
                               self.span(*path, "function"))
                    continue
                if inv.function in lists or keyword.iskeyword(inv.function):
                    self.error("state-invariant", f"the function name '{inv.function}' is "
                               "taken", self.span(*path, "function"))
                    continue
                lists[inv.function] = i
            out.append(inv)
        from lisboa_rules.model.state_invariants import compile_invariants

        scope = self._scope(decl)
        _, problems = compile_invariants(replace(decl, invariants=tuple(out)), scope)
        if self.broken_fields or self.broken:  # a name of a broken field is reported already
            problems = [pr for pr in problems if pr.code != "unknown-name"]
        for pr in problems:
            self.error(pr.code, pr.message, self._expr_span(pr.path, pr.source, pr.col),
                       pr.suggestion)
        return tuple(out)

    def _expr_span(self, path: tuple[str | int, ...], source: str, col: int) -> Span:
        """Where an expression goes wrong: at its character when it is on one line."""
        where = self.span(*path)
        if not source or where.line != where.end_line:
            return where
        quote = 1 if self.char_at(where) in "\"'" else 0
        c = where.col + quote + col
        if path[-1] in ("text", "at"):  # a placeholder of the words: find it in the text
            raw = self.data.get(KIND, {})
            for key in path:
                raw = raw[key]
            at = str(raw).find("{" + source + "}")
            c = where.col + quote + max(at, 0) + 1 + col
        return Span(where.file, where.line, c, where.line, c + 1)

    def _conserved(self, decl: StateDecl, i: int, raw: Mapping[str, Any]) -> Invariant | None:
        c = raw.get("conserved") or {}
        path = ("invariants", i, "conserved")
        kid = str(c.get("kind"))
        kind = self.kinds.get(kid)
        if kind is None:
            if kid not in self.broken:
                self.error("unknown-reference", f"no kind '{kid}' to conserve (declare it under "
                           "kinds:)", self.span(*path, "kind"), suggest(kid, list(self.kinds)))
            return None
        if kind.values is None:
            self.error("state-invariant", f"kind '{kid}' has no list of ids (no `from` or "
                       "`values`): nothing to conserve", self.span(*path, "kind"))
            return None
        counted = "count" in c
        zones: list[Zone] = []
        ok = True
        every = [f"{f.scope}.{f.id}" for f in (*decl.player, *decl.game)]
        for j, z in enumerate(c.get("in") or []):
            scope, _, fid = str(z).partition(".")
            f = decl.field(scope, fid) if scope in ("player", "game") else None
            where = self.span(*path, "in", j)
            if f is None and str(z) in self.broken_fields:
                ok = False
                continue
            if f is None:
                self.error("unknown-reference", f"'{z}' is not a field of the state (a zone is "
                           "game.FIELD or player.FIELD)", where, suggest(str(z), every))
                ok = False
                continue
            if not zone_ok(f.type, kid, counted):
                want = (f"list[{kid}] or map[{kid}, int]" if counted
                        else f"list[{kid}] or map[K, list[{kid}]]")
                self.error("state-invariant", f"'{z}' is of type {f.type}; a zone of kind "
                           f"'{kid}' is of type {want}", where)
                ok = False
                continue
            if any(x.scope == f.scope and x.field == f.id for x in zones):
                self.error("state-invariant", f"'{z}' is listed twice", where)
                ok = False
                continue
            zones.append(Zone(f.scope, f.id, f.type))
        if not ok:
            return None
        count = c.get("count")
        return Invariant(str(raw["id"]), str(raw["text"]), kind=kid, zones=tuple(zones),
                         count=count if count is None or isinstance(count, int) else str(count),
                         function=raw.get("function"), path=("invariants", i),
                         span=self.span("invariants", i))

    def _duplicate(
        self, what: str, ident: str, path: tuple[Any, ...], first: tuple[Any, ...]
    ) -> None:
        self.error(
            "duplicate-id",
            f"{what} '{ident}' is declared twice",
            self.span(*path, "id"),
            related=(Related("the first is here", self.span(*first, "id")),),
        )

    def _kind(self, i: int, k: Mapping[str, Any]) -> StateKind | None:
        where = self.span("kinds", i)
        values: list[Any] | None = None
        if "values" in k:
            values = list(k["values"])
        elif "from" in k:
            found = self._values_from(i, k)
            if found is None:
                return None
            values = found
        if values is not None:
            values += list(k.get("also", []))
        elif "also" in k:
            values = list(k["also"])
        of = k.get("of")
        if values is not None:
            ints = all(type(v) is int for v in values)
            texts = all(isinstance(v, str) for v in values)
            if not (ints or texts) or (of == "int" and not ints) or (of == "text" and not texts):
                want = f"{of} " if of else ""
                self.error(
                    "state-data",
                    f"the values of kind '{k['id']}' are not all {want or 'ints or all '}"
                    f"{'ids' if want else 'texts'}: {_show(values)}",
                    where,
                )
                return None
            if of is None:
                of = "int" if ints and values else "text"
            if "from" in k:  # ids repeated in the data are the data's own business
                values = list(dict.fromkeys(values))
            # counted once each (values.count per value was quadratic in a kind's size)
            counts = Counter(values)
            repeated = sorted({str(v) for v, n in counts.items() if n > 1})
            if repeated:
                self.error(
                    "state-data",
                    f"kind '{k['id']}' has the value {repeated[0]!r} twice",
                    where,
                )
                return None
        return StateKind(
            k["id"],
            of or "text",
            None if values is None else tuple(values),
            str(k["text"]),
            source=k.get("from") if isinstance(k.get("from"), str) else None,
            key=k.get("key") if isinstance(k.get("key"), str) else None,
            span=where,
        )

    def _values_from(self, i: int, k: Mapping[str, Any]) -> list[Any] | None:
        raw = str(k["from"])
        where = self.span("kinds", i, "from")
        if raw == VARIANTS_PATH:
            return list(self.variant_ids)
        node = self._walk(raw, where, f"kind '{k['id']}'")
        if node is _MISSING:
            return None
        if not isinstance(node, list):
            self.error(
                "state-data",
                f"kind '{k['id']}': '{raw}' is {_what(node)}, not a list of values",
                where,
            )
            return None
        key = k.get("key")
        out: list[Any] = []
        for n, item in enumerate(node):
            if key is not None:
                if not (isinstance(item, Mapping) and key in item):
                    keys = list(item) if isinstance(item, Mapping) else []
                    self.error(
                        "state-data",
                        f"kind '{k['id']}': item {n + 1} of '{raw}' has no '{key}'",
                        self.span("kinds", i, "key"),
                        suggest(str(key), keys),
                    )
                    return None
                item = item[key]
            if isinstance(item, bool) or not isinstance(item, int | str):
                hint = " (name the key that holds each item's id: key: id)" if key is None else ""
                self.error(
                    "state-data",
                    f"kind '{k['id']}': item {n + 1} of '{raw}' is {_what(item)}, not an id{hint}",
                    where,
                )
                return None
            out.append(item)
        return out

    def _walk(self, raw: str, where: Span, what: str) -> Any:
        """The value at a dotted data path, or _MISSING (with a diagnostic)."""
        node: Any = self.data
        done: list[str] = []
        for part in raw.split("."):
            if not isinstance(node, Mapping) or part not in node:
                keys = [str(x) for x in node] if isinstance(node, Mapping) else []
                if not done:
                    keys.append(VARIANTS_PATH)
                at = ".".join(done) or "the rules data"
                self.error(
                    "state-data",
                    f"{what}: '{raw}' is not in the rules data ({at} has no '{part}')",
                    where,
                    suggest(part, keys),
                )
                return _MISSING
            node = node[part]
            done.append(part)
        return node

    # -- fields ---------------------------------------------------------------------------

    def _fields(self, scope: str, items: Sequence[Mapping[str, Any]]) -> tuple[StateField, ...]:
        out: list[StateField] = []
        seen: dict[str, int] = {}
        defaulted: str | None = None
        for i, f in enumerate(items):
            fid = f["id"]
            if fid in seen:
                self._duplicate(f"{scope} field", fid, (scope, i), (scope, seen[fid]))
                continue
            seen[fid] = i
            if grammar.problem(fid, members=RESERVED) is not None:  # refused at load first
                self.error(
                    "state-type",
                    f"'{fid}' is a name the engine keeps for itself; choose another field id",
                    self.span(scope, i, "id"),
                )
                continue
            built = self._field(scope, i, f)
            if built is None:
                self.broken_fields.add(f"{scope}.{fid}")  # reported: invariants say no more
                continue
            if built.required and defaulted is not None:
                self.error(
                    "state-type",
                    f"{scope} field '{fid}' has no default but follows '{defaulted}', which has "
                    "one: give it a `default:` or move it up",
                    self.span(scope, i, "id"),
                )
                continue
            if not built.required:
                defaulted = defaulted or fid
            out.append(built)
        return tuple(out)

    def _field(self, scope: str, i: int, f: Mapping[str, Any]) -> StateField | None:
        fid = f["id"]
        t = self._type(scope, i, str(f["type"]))
        if t is None:
            return None
        bounds: dict[str, int | None] = {}
        ok = True
        holds_int = _holds(t, "int")
        for key in ("min", "max", "max_items"):
            bounds[key] = None
            if key not in f:
                continue
            where = self.span(scope, i, key)
            if key == "max_items" and t.name != "list":
                self.error("state-type", f"'{fid}' is not a list: it has no max_items", where)
                ok = False
                continue
            if key != "max_items" and not holds_int:
                self.error("state-type", f"'{fid}' holds no int for its {key} to bound", where)
                ok = False
                continue
            value = self._bound(f[key], where, f"the {key} of '{fid}'")
            ok = ok and value is not None
            bounds[key] = value
        lo, hi = bounds["min"], bounds["max"]
        bounds_at = tuple((key, self._bound_at(f[key], self.span(scope, i, key)))
                          for key in ("min", "max", "max_items") if key in f)
        if lo is not None and hi is not None and lo > hi:
            self.error(
                "state-type", f"'{fid}': min {lo} is above max {hi}", self.span(scope, i, "min")
            )
            ok = False
        full = bool(f.get("full", False))
        if full and t.name != "map":
            self.error(
                "state-type",
                f"'{fid}' is not a map: it cannot be full",
                self.span(scope, i, "full"),
            )
            ok = False
        required = bool(f.get("required", False))
        if required and "default" in f:
            self.error(
                "state-type",
                f"'{fid}' is required and cannot have a default",
                self.span(scope, i, "default"),
            )
            ok = False
        if "default" in f:
            default = f["default"]
            problem = self._fits(default, t, lo, hi)
            if problem:
                self.error(
                    "state-type",
                    f"the default of '{fid}' is not a {t}: {problem}",
                    self.span(scope, i, "default"),
                )
                ok = False
        elif required:
            default = None
        else:
            natural = _natural_default(t, lo)
            if natural is _MISSING:
                required = True  # a kind has no value of its own: new_game must set it
                default = None
            else:
                default = natural
        if not ok:
            return None
        see = str(f.get("see", "all"))
        by = f.get("by")
        if see == "owner" and scope != "player":
            self.error("state-visibility", f"'{fid}' is the game's: it has no owner to see it "
                       "(see: all, count, top or none)", self.span(scope, i, "see"))
            ok = False
        elif see in ("count", "top") and _lists(t) is None:
            self.error("state-visibility", f"'{fid}' is not a list or a map of lists: it has no "
                       f"size or top to show (see: all, {'owner or ' if scope == 'player' else ''}"
                       "none)", self.span(scope, i, "see"))
            ok = False
        elif see in ("owner", "none") and _lists(t) is None and t.name != "int":
            self.error("state-visibility", f"'{fid}' is a {t}: a bot could not guess it when it "
                       "is hidden (hide a list of ids, a map of such lists, or a number)",
                       self.span(scope, i, "see"))
            ok = False
        if ok and by is not None and (see == "all" or t.name != "map" or _lists(t) is None):
            self.error("state-visibility", f"'{fid}': `by` says how a hidden map of lists is "
                       "sorted; this field is not one", self.span(scope, i, "by"))
            ok = False
        if not ok:
            return None
        return StateField(
            fid,
            scope,
            t,
            lo,
            hi,
            bounds["max_items"],
            full,
            default,
            str(f["text"]),
            required,
            see,
            str(by) if by is not None else None,
            span=self.span(scope, i),
            bounds_at=bounds_at,
        )

    def _type(self, scope: str, i: int, text: str) -> StateType | None:
        where = self.span(scope, i, "type")
        quote = 1 if self.char_at(where) in "\"'" else 0

        def at(col: int) -> Span:
            c = where.col + quote + col
            return Span(where.file, where.line, c, where.line, c + 1)

        try:
            t = parse_type(text)
        except TypeSyntaxError as exc:
            self.error("state-type", f"type '{text}': {exc}", at(exc.col))
            return None
        ok = True
        known = [*BASE_TYPES, *CONTAINERS, *self.kinds]
        pos = 0
        for node in _nodes(t):
            col = text.find(node.name, pos)
            pos = col + len(node.name) if col >= 0 else pos
            if node.name in CONTAINERS or node.name in self.kinds:
                pass
            elif node.name in self.broken:
                ok = False  # its kind is reported already
            elif node.name == "player" and scope == "player":
                self.error("state-type", "a player cannot hold players", at(max(col, 0)))
                ok = False
            elif node.name not in BASE_TYPES:
                self.error(
                    "unknown-reference",
                    f"type '{text}' names no kind '{node.name}' (declare it under kinds:)",
                    at(max(col, 0)),
                    suggest(node.name, known),
                )
                ok = False
            if node.name == "map" and ok:
                key = node.args[0]
                kind = self.kinds.get(key.name)
                if kind is None or key.optional or kind.of != "text":
                    self.error(
                        "state-type",
                        f"a map's keys are ids of a kind of text, not {key}",
                        at(max(col, 0)),
                    )
                    ok = False
        return t if ok else None

    def _bound_at(self, raw: Any, where: Span) -> Span:
        """Where a bound's number is written: at the rules data a dotted path names (in its
        document), else where the declaration writes it."""
        if isinstance(raw, str) and self.data_span is not None:
            kind, *path = raw.split(".")
            found = self.data_span(kind, *path)
            if found != NOWHERE:
                return found
        return where

    def _bound(self, raw: Any, where: Span, what: str) -> int | None:
        try:
            return int(resolve_range([raw, raw], self.data)[0])
        except BoundError as exc:
            hint = None
            if isinstance(raw, str) and all(p.isidentifier() for p in raw.split(".")):
                probe = _StateBuilder(self.data, self.span, self.char_at, self.variant_ids)
                probe._walk(raw, where, what)
                hint = probe.diags[0].suggestion if probe.diags else None
            self.error("state-data", f"{what}: {exc}", where, hint)
            return None

    def _fits(self, value: Any, t: StateType, lo: int | None, hi: int | None) -> str | None:
        """Why a value is not of a type (None: it is)."""
        if value is None:
            return None if t.optional else "null is not allowed (write the type with '?')"
        if t.name in ("int", "seat"):
            if type(value) is not int:
                return f"{_show(value)} is not a whole number"
            low = 0 if t.name == "seat" else lo
            if (low is not None and value < low) or (hi is not None and value > hi):
                return f"{value} is out of its bounds"
            return None
        if t.name == "bool":
            return None if isinstance(value, bool) else f"{_show(value)} is not true or false"
        if t.name == "text":
            return None if isinstance(value, str) else f"{_show(value)} is not a text"
        if t.name == "player":
            return "a player has no literal default"
        if t.name == "list":
            if not isinstance(value, list):
                return f"{_show(value)} is not a list"
            for v in value:
                problem = self._fits(v, t.args[0], lo, hi)
                if problem:
                    return problem
            return None
        if t.name == "map":
            if not isinstance(value, dict):
                return f"{_show(value)} is not a map"
            for k, v in value.items():
                problem = self._fits(k, t.args[0], lo, hi) or self._fits(v, t.args[1], lo, hi)
                if problem:
                    return problem
            return None
        kind = self.kinds[t.name]
        if kind.values is None:
            want = int if kind.of == "int" else str
            ok = isinstance(value, want) and not isinstance(value, bool)
            return None if ok else f"{_show(value)} is not a {t.name}"
        if value not in kind.values or isinstance(value, bool):
            return f"{_show(value)} is not one of {_show(list(kind.values))}"
        return None


def _lists(t: StateType) -> StateType | None:
    """The list type a field holds: itself (a list) or its values (a map of lists)."""
    if t.optional:
        return None
    if t.name == "list":
        return t
    if t.name == "map" and t.args[1].name == "list" and not t.args[1].optional:
        return t.args[1]
    return None


def _nodes(t: StateType) -> list[StateType]:
    """The type's names in the order they are written."""
    out = [t]
    for a in t.args:
        out += _nodes(a)
    return out


def _holds(t: StateType, name: str) -> bool:
    return any(n.name == name for n in _nodes(t))


def _natural_default(t: StateType, lo: int | None) -> Any:
    if t.optional:
        return None
    if t.name == "list":
        return []
    if t.name == "map":
        return {}
    if t.name == "int":
        return lo if lo is not None else 0
    if t.name == "seat":
        return 0
    if t.name == "bool":
        return False
    if t.name == "text":
        return ""
    return _MISSING


def _what(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return f"the value {_show(value)}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def build_state(
    data: Mapping[str, Any],
    span: SpanFn,
    char_at: Callable[[Span], str],
    variant_ids: Sequence[str],
    changed: Mapping[tuple[str | int, ...], str] | None = None,
    data_span: DataSpanFn | None = None,
) -> tuple[StateDecl, list[Diagnostic]]:
    """The declared state of the merged documents `data` (by kind; `data['state']` is the
    declaration), with the diagnostics found. `span(*path, key=False)` locates a value of the
    state document. `changed`: what variants that are not folded into the base game changed
    in the declaration (path -> variant id); the engine has one set of state classes, made
    from the base game's, so such a change is an error."""
    b = _StateBuilder(data, span, char_at, variant_ids, data_span)
    decl = b.build(data.get(KIND, {}))
    # the invariants and the saved-game checks are checks of each rule set, not the shape of
    # the state: a variant may change them
    changed = {p: v for p, v in (changed or {}).items()
               if p[:1] not in (("invariants",), ("checks",))}
    if changed:
        where = min((span(*p) for p in changed), key=lambda s: (s.file, s.line, s.col))
        variant = changed[min(changed, key=lambda p: tuple(map(str, p)))]
        b.error(
            "state-variant",
            f"variant '{variant}' changes what the players or the game hold, but it is not "
            "folded into the base game: the engine has one set of state classes; fold it in "
            f"with --variant {variant} (build, validate)",
            where,
        )
    return decl, b.diags
