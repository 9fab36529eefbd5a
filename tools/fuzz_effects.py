"""The effect-language fuzzer (`python3 -m tools.fuzz --effects N --seed S`): house rules written
in the effect language as a designer writes them, built and played.

`tools/fuzz.py` mutates the rules files and checks that the compiler never crashes; this mode
writes new *meaning* instead: each case is one house rule (a `kind: variant` file given with
`--house`, folded in with `--variant`) that adds a new action, a new step at the end of a turn
(through a new procedure), a new step of the end of a period or a new setup step, built from the
step kinds and expression functions the docs document (set, gain, move, let, require, choose,
repeat, for_each, if, do, apply, new, shuffle, drop; `//`, `%`, first, max, min, indexes,
ranges, comprehensions, noble('id'), literals at and past declared bounds and 64 bits, a name
bound again with another type, ids that differ only by `-` and `_`, setup steps that read the
players, a choose with `up_to` over large zones, `new:` outside the setup, an item moved from a
list that does not hold it). Each fragment of steps carries a *hazard* tag, the edge it probes.

Every case runs in a forked child under a watchdog (and a memory limit), and is classified:

- `a` refused: exit 1 with located diagnostics (fine);
- `b` built (exit 0) and its engine plays seeded random games to the end at every player count
  the rules allow, with `check_invariants` after every move and the state saved and loaded
  again now and then (fine);
- `c` built with exit 0, but the engine fails: any exception out of `new_game`, `legal_moves`,
  `apply_move` (of a listed move), `check_invariants`, `dumps`/`loads`, `final_scores` or
  `ranking`; an invariant that fails; no legal move in a game that is not over; a game that does
  not end within the move limit; a listed move that, tried in place and taken back (`_tried`,
  what greedy's search plays its candidates on; every `TRY_EVERY` moves), does not give the
  state that playing it on a copy gives, or does not leave the state as it was;
- `d` the compiler crashed: exit 2, a traceback, an error line not in the documented format;
- `e` a hang: the case passed its time limit (the stage it was in is said: build or play).

A case is reproducible from `(seed, index)`; `ISSUE_33` holds the minimal house rules of the
cases issue 33 measured, which `--effects-known` runs.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lisboa_rules.core.limits import PLAY_SECONDS

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
HOUSE_ID = "fuzzed"
# seconds per case (build and play) before it counts as a hang: more than the CPU seconds the
# backstop gives one game (core/limits.py PLAY_SECONDS), which stops a step that loops for long
# and says where; a case it stops so is a located refusal, not a hang (seed 16 case 21 took
# 15-19 s, over the 30 s this was on a busy machine)
DEFAULT_TIMEOUT = float(PLAY_SECONDS + 30)
MEMORY_LIMIT = 2 << 30  # bytes of address space a case may use (a MemoryError, not a swap storm)
MOVE_LIMIT = 5000  # moves in one game before it counts as a game that does not end
GAMES_PER_COUNT = 2  # seeded games per player count
TRY_EVERY = 9  # every so many moves, each listed move is also tried in place and taken back
SOURCE = ["facts:§4"]
CATEGORIES = {
    "a": "refused with located errors",
    "b": "built and played",
    "c": "built, the engine fails",
    "d": "the compiler crashed",
    "e": "hang",
}

class _Dumper(yaml.SafeDumper):
    """YAML as a designer writes it: no anchors or aliases (the loader refuses them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# --- what a fragment may read -----------------------------------------------------------------

LITERALS = ("0", "1", "2", "3", "7", "-1", "-5", "63", "100", "9223372036854775807",
            "9223372036854775808", "18446744073709551616", "99999999999999")
PLAYER_INTS = ("reis", "wigs", "influence", "officials", "rubble_cubes", "rubble_sets",
               "len(hand)", "len(portfolio)", "sum(goods)", "len(decrees)", "len(royal_favors)")
GAME_INTS = ("game.period", "game.round", "game.turns", "game.treasury", "len(game.players)",
             "len(game.discard)", "len(game.court)", "len(game.decree_display)",
             "len(game.decree_deck)", "len(game.box)", "len(game.plan_supply)")
DIVISORS = ("len(hand)", "len(game.court)", "reis", "game.period - 1", "wigs % 2", "2",
            "len(game.players) - 2", "rubble_cubes", "len(game.decree_deck)", "1")
NOBLES = ("manuel", "marquis", "king")


@dataclass
class Ctx:
    """Where a fragment stands: `p` is how a player's field is written (`` for the acting
    player, `q.` in a loop over the players, `game.players[0].` where there is none), `site`
    the kind of place (action, turn-end, period-end, setup)."""

    p: str
    site: str
    rng: random.Random
    names: int = 0

    def fresh(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    def pl(self, expr: str) -> str:
        """A player-ctx expression written for this context (`reis` -> `q.reis`)."""
        if not self.p:
            return expr
        out = expr
        for name in ("reis", "wigs", "influence", "officials", "rubble_cubes", "rubble_sets",
                     "hand", "portfolio", "goods", "decrees", "royal_favors", "stores",
                     "markers_left", "treasury_row", "plans"):
            out = re.sub(rf"(?<![\w.]){name}\b", self.p + name, out)
        return out

    def num(self, depth: int = 2) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.35:
            pick = r.random()
            if pick < 0.25:
                return r.choice(LITERALS[:9])
            if pick < 0.65:
                return self.pl(r.choice(PLAYER_INTS))
            return r.choice(GAME_INTS)
        a, b = self.num(depth - 1), self.num(depth - 1)
        shape = r.randrange(10)
        if shape < 4:
            return f"({a} {r.choice(['+', '-', '*', '//', '%'])} {b})"
        if shape < 6:
            return f"{r.choice(['max', 'min'])}({a}, {b})"
        if shape == 6:
            return f"sum([q.{r.choice(['wigs', 'reis', 'influence'])} for q in game.players])"
        if shape == 7:
            return f"len([i for i in range({a}) if i % 2 == 0])"
        if shape == 8:
            return f"({a} if {self.cond()} else {b})"
        return f"len(range({a}))"

    def cond(self) -> str:
        r = self.rng
        shape = r.randrange(5)
        if shape == 0:
            return f"any(q.reis > {r.choice(['3', '10'])} for q in game.players)"
        if shape == 1:
            return self.pl("len(hand) > 0")
        if shape == 2:
            return f"game.period == {r.choice(['1', '2'])}"
        return f"{self.num(1)} {r.choice(['>', '>=', '<', '==', '!='])} {self.num(1)}"


Steps = list[dict[str, Any]]


def _use_int(ctx: Ctx, name: str) -> dict[str, Any]:
    """A step that uses the int `name` (so its value matters)."""
    r = ctx.rng
    field_ = r.choice(["wigs", "reis"])
    if r.random() < 0.5:
        return {"gain": {ctx.pl(field_): f"{name} % 3"}}
    return {"if": f"{name} > 2", "then": [{"gain": {ctx.pl(field_): 1}}]}


# --- the fragments: each returns steps, probing one hazard -------------------------------------


def f_divide(ctx: Ctx) -> Steps:
    """A computed divisor that can be 0 (`//`, `%`)."""
    x = ctx.fresh("d")
    op = ctx.rng.choice(["//", "%"])
    return [{"let": {x: f"{ctx.num(1)} {op} {ctx.pl(ctx.rng.choice(DIVISORS))}"}}, _use_int(ctx, x)]


def f_first_empty(ctx: Ctx) -> Steps:
    """`first`, `max` or `min` of a list that can be empty."""
    y = ctx.fresh("y")
    hand, court, deck = ctx.pl("hand"), "game.court", "game.decree_deck"
    options: list[tuple[str, Steps]] = [
        ("first([c for c in hand if c > 80])",
         [{"move": {"item": y, "from": hand, "to": "game.discard"}}]),
        ("first(game.court)", [{"move": {"item": y, "from": court, "to": "game.discard"}}]),
        ("max([q.reis for q in game.players if q.reis > 12])", [_use_int(ctx, y)]),
        ("min([len(q.hand) for q in game.players if q.wigs > 3])", [_use_int(ctx, y)]),
        ("max(game.discard)", [_use_int(ctx, y)]),
        ("first(game.decree_deck)",
         [{"move": {"item": y, "from": deck, "to": ctx.pl("decrees")}}]),
        ("min(portfolio)", [_use_int(ctx, y)]),
        ("first([c for c in hand if c > 80], 0)", [_use_int(ctx, y)]),
        ("max([q.reis for q in game.players if q.reis > 12], 0)", [_use_int(ctx, y)]),
    ]
    expr, use = ctx.rng.choice(options)
    return [{"let": {y: ctx.pl(expr)}}, *use]


def f_index(ctx: Ctx) -> Steps:
    """An index past the end of a list."""
    z = ctx.fresh("z")
    options = [("hand[4]", "card"), ("hand[len(hand)]", "card"), ("game.players[3].reis", "int"),
               ("game.decree_display[7]", "decree"), ("portfolio[-1]", "card"),
               ("rules.game.players.colors[len(game.players)]", "color"),
               ("game.players[len(game.players) - 1].wigs", "int"), ("hand[-6]", "card"),
               ("rules.game.tracks.influence.reis_icons[influence]", "int")]
    expr, kind = ctx.rng.choice(options)
    use: Steps
    if kind == "int":
        use = [_use_int(ctx, z)]
    elif kind == "card":
        use = [{"if": f"{z} > 40", "then": [{"gain": {ctx.pl("wigs"): 1}}]}]
    else:
        use = [{"if": f"{z} == {z}", "then": [{"gain": {ctx.pl("reis"): 1}}]}]
    return [{"let": {z: ctx.pl(expr)}}, *use]


def f_noble(ctx: Ctx) -> Steps:
    """`noble('id')` of an id no row has (and of one that has)."""
    n = ctx.fresh("n")
    ident = ctx.rng.choice(["x", "kingg", "", "King", *NOBLES])
    return [{"let": {n: f"noble('{ident}')"}},
            {"if": f"{n} in {ctx.pl('royal_favors')}", "then": [{"gain": {ctx.pl("wigs"): 1}}]}]


def f_remove_missing(ctx: Ctx) -> Steps:
    """Removing an item a list does not hold (and dropping an entry every state must have)."""
    r = ctx.rng
    options: list[Steps] = [
        [{"if": ctx.pl("len(hand) > 0"),
          "then": [{"move": {"item": ctx.pl("hand[0]"), "from": "game.discard",
                             "to": "game.box"}}]}],
        [{"if": "len(game.decree_deck) > 0",
          "then": [{"move": {"item": "game.decree_deck[0]", "from": ctx.pl("decrees"),
                             "to": "game.decree_display"}}]}],
        [{"move": {"item": f"'{r.choice(NOBLES)}'", "from": ctx.pl("royal_favors"),
                   "to": ctx.pl("royal_favors")}}],
        [{"move": {"first": r.choice(["1", "3", "99"]), "from": "game.court",
                   "to": "game.discard"}}],
        [{"move": {"top": r.choice(["2", "-1", "99999999999999"]), "from": "game.decree_deck",
                   "to": "game.decree_display"}}],
        [{"drop": "game.piles[first(rules.components.display.piles)]"}],
        [{"drop": f"game.favors[noble('{r.choice(NOBLES)}')]"}],
    ]
    return r.choice(options)


def f_new_player(ctx: Ctx) -> Steps:
    """`new: game.players` outside the setup."""
    return [{"new": "game.players",
             "with": {"color": ctx.rng.choice(["rules.game.players.colors[0]",
                                               "rules.game.players.colors[len(game.players)]"]),
                      "reis": "3"}}]


def f_set_bounds(ctx: Ctx) -> Steps:
    """A `set:` or `gain:` below a declared minimum, past a maximum, at and past 64 bits."""
    r = ctx.rng
    options: list[dict[str, Any]] = [
        {"set": {ctx.pl("reis"): -1}},
        {"set": {ctx.pl("reis"): ctx.pl("reis - 1000")}},
        {"set": {ctx.pl("influence"): "rules.game.tracks.influence.min - 1"}},
        {"set": {ctx.pl("influence"): 99}},
        {"set": {"game.treasury": r.choice([99, -1, "game.treasury + 50"])}},
        {"set": {ctx.pl("wigs"): r.choice([9223372036854775807, 9223372036854775808,
                                             18446744073709551616, -9223372036854775809])}},
        {"gain": {ctx.pl("wigs"): 9223372036854775807}},
        {"set": {ctx.pl("wigs"): "9223372036854775807 + 1"}},
        {"set": {"game.period": r.choice([0, 5])}},
        {"set": {ctx.pl("officials"): 99}},
        {"set": {ctx.pl("rubble_sets"): 9}},
        {"gain": {ctx.pl("reis"): "-" + ctx.num(1)}},
    ]
    return [r.choice(options)]


def f_choose_none(ctx: Ctx) -> Steps:
    """A `choose` that no move can make (a choice of no move field's type, more items than a
    hand holds, a condition nothing meets)."""
    r = ctx.rng
    c = ctx.fresh("ch")
    options: list[dict[str, Any]] = [
        {"choose": {"as": c, "from": ctx.pl("hand"), "where": "it > 90000"}},
        {"choose": {"as": c, "from": ctx.pl("hand"), "min": 6, "max": 6}},
        {"choose": {"as": c, "from": "game.box"}},
        {"choose": {"as": c, "from": "game.players"}},
        {"choose": {"as": c, "from": "range(5)"}},
        {"choose": {"as": c, "from": "rules.nobles.nobles.id"}},
        {"choose": {"as": c, "from": "game.decree_deck"}},
        {"choose": {"as": c, "from": "rules.game.players.colors"}},
    ]
    step = r.choice(options)
    step["reason"] = "no such choice"
    return [step]


def f_choose_many(ctx: Ctx) -> Steps:
    """`choose` with `up_to` over a large zone."""
    r = ctx.rng
    c = ctx.fresh("cs")
    zone = r.choice(["game.box", "rules.components.cards.number", ctx.pl("hand"),
                     "game.decree_deck", "game.discard"])
    return [{"choose": {"as": c, "from": zone, "up_to": r.choice([2, 3, 40, 82])},
             "reason": "choose some"},
            {"gain": {ctx.pl("wigs"): f"len({c})"}}]


def f_setup_players(ctx: Ctx) -> Steps:
    """Reading the players (before the setup makes them, when it stands there)."""
    r = ctx.rng
    w = ctx.fresh("w")
    options: list[Steps] = [
        [{"let": {w: "game.players[0].reis"}}, {"set": {"game.treasury": f"{w} % 3"}}],
        [{"let": {w: "100 // len(game.players)"}}, {"set": {"game.treasury": f"{w} % 3"}}],
        [{"set": {"game.current": "len(game.players) - 1"}}],
        [{"let": {w: "max([q.reis for q in game.players])"}},
         {"set": {"game.treasury": f"{w} % 3"}}],
        [{"for_each": {"as": "q", "in": "game.players"}, "do": [{"gain": {"q.wigs": 1}}]}],
    ]
    return r.choice(options)


def f_retype(ctx: Ctx) -> Steps:
    """A name bound again with another type."""
    r = ctx.rng
    x = ctx.fresh("t")
    second = r.choice(["'a'", ctx.pl("hand"), "True", "noble('king')", "game.players[0]"])
    options: list[Steps] = [
        [{"let": {x: "1"}}, {"let": {x: second}}, {"gain": {ctx.pl("wigs"): f"len({x})"}}],
        [{"let": {x: ctx.num(1)}}, {"let": {x: second}}, _use_int(ctx, x)],
        [{"if": ctx.cond(), "then": [{"let": {x: "1"}}], "else": [{"let": {x: second}}]}],
        [{"let": {x: second}}, {"for_each": {"as": x, "in": "range(2)"},
                                "do": [{"gain": {ctx.pl("wigs"): x}}]}],
    ]
    return r.choice(options)


def f_huge_cost(ctx: Ctx) -> Steps:
    """An unbounded cost: a huge `repeat`, range or nested comprehension."""
    r = ctx.rng
    v = ctx.fresh("h")
    options: list[Steps] = [
        [{"repeat": 99999999999999, "do": [{"gain": {ctx.pl("wigs"): 1}}]}],
        [{"repeat": ctx.pl("reis * 99999999999"), "do": [{"gain": {ctx.pl("wigs"): 1}}]}],
        [{"let": {v: "len(range(400000000))"}}, _use_int(ctx, v)],
        [{"let": {v: "len([a for a in range(30000) for b in range(30000)])"}}, _use_int(ctx, v)],
        [{"for_each": {"as": v, "in": "range(99999999999)"},
          "do": [{"gain": {ctx.pl("wigs"): 1}}]}],
    ]
    return r.choice(options)


def f_benign(ctx: Ctx) -> Steps:
    """Ordinary steps a designer writes: loops, branches, shuffles, calls, requires."""
    r = ctx.rng
    options: list[Steps] = [
        [{"for_each": {"as": "q", "in": "game.players"}, "do": [{"gain": {"q.wigs": 1}}]}],
        [{"if": ctx.cond(), "then": [{"gain": {ctx.pl("reis"): 1}}],
          "else": [{"gain": {ctx.pl("reis"): -1}}]}],
        [{"shuffle": r.choice(["game.discard", "game.decree_deck", ctx.pl("hand")])}],
        [{"do": "pay-reis", "with": {"amount": ctx.num(1)}}],
        [{"repeat": ctx.num(1), "do": [{"gain": {ctx.pl("wigs"): 1}}]}],
        [{"gain": {ctx.pl("wigs"): ctx.num(2)}}],
        [{"set": {ctx.pl("reis"): ctx.num(2)}}],
        [{"if": "len(game.decree_deck) > 0",
          "then": [{"move": {"item": "game.decree_deck[-1]", "from": "game.decree_deck",
                             "to": ctx.pl("decrees")}}]}],
        [{"let": {"s": "sorted([q.wigs for q in game.players])"}},
         {"gain": {ctx.pl("wigs"): "s[0] % 2"}}],
        [{"move": {"top": "1", "from": "game.plan_supply", "to": ctx.pl("plans")}}],
    ]
    return r.choice(options)


def f_require(ctx: Ctx) -> Steps:
    """A `require` (in a guard: an action's, a procedure's)."""
    return [{"require": ctx.cond(), "reason": "not now"}]


FRAGMENTS: dict[str, Callable[[Ctx], Steps]] = {
    "divide": f_divide,
    "first-empty": f_first_empty,
    "index": f_index,
    "noble-id": f_noble,
    "remove-missing": f_remove_missing,
    "new-player": f_new_player,
    "set-bounds": f_set_bounds,
    "choose-none": f_choose_none,
    "choose-many": f_choose_many,
    "setup-players": f_setup_players,
    "retype": f_retype,
    "huge-cost": f_huge_cost,
    "benign": f_benign,
    "require": f_require,
}
GUARDS = ("choose-none", "choose-many", "require")  # steps that belong before the effects
SITES = ("action", "turn-end", "period-end", "setup", "twins")


# --- a case: one house rule ---------------------------------------------------------------------


@dataclass
class EffectCase:
    seed: int
    index: int
    site: str
    hazards: tuple[str, ...]
    doc: dict[str, Any]

    @property
    def label(self) -> str:
        hazards = ", ".join(self.hazards)
        return f"effects seed {self.seed} case {self.index}: {self.site} [{hazards}]"

    @property
    def text(self) -> str:
        return dump(self.doc)


def dump(doc: Any) -> str:
    return str(yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100))


def _variant(changes: dict[str, Any], text: str) -> dict[str, Any]:
    return {"kind": "variant", "id": HOUSE_ID, "title": "A fuzzed house rule",
            "applies": "chosen", "text": text, "source": SOURCE, "changes": changes}


def _proc(pid: str, steps: Steps, params: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"$add": True, "id": pid}
    if params:
        out["params"] = params
    out["steps"] = steps
    return out


def house_rule(site: str, steps: Steps) -> dict[str, Any]:
    """The house rule that puts `steps` at `site`."""
    if site == "action":
        return _variant({"court": {"actions": [{
            "$add": True, "id": "house-act", "name": "A house act", "procedure": "house-act",
            "steps": [*steps, {"set": {"game.phase": "'refill'"}}],
            "text": "Instead of the four actions you may carry out the house act.",
            "source": SOURCE}]}}, "A new action.")
    if site == "turn-end":
        return _variant({
            "flow": {"turn_end": {"steps": [{
                "$add": True, "$after": "turn.end.refill-decrees", "id": "turn.end.house",
                "do": "house-proc", "text": "The house step."}]}},
            "effects": {"procedures": [_proc("house-proc", steps)]}},
            "A new step at the end of each turn.")
    if site == "period-end":
        return _variant({"flow": {"period_end": {"steps": [{
            "$add": True, "$after": "period-end.rubble-wigs", "id": "period-end.house",
            "steps": steps, "text": "The house step.", "source": SOURCE}]}}},
            "A new step at the end of each period.")
    if site in ("setup", "setup-early"):
        where = "setup.start-player" if site == "setup" else "setup.players"
        key = "$after" if site == "setup" else "$before"
        return _variant({"flow": {"setup": {"steps": [{
            "$add": True, key: where, "id": "setup.house",
            "if": "True", "then": steps, "text": "The house setup step."}]}}},
            "A new setup step.")
    if site == "twins":  # an effect `house_proc` beside a procedure `house-proc`, both called
        return _variant({
            "flow": {"turn_end": {"steps": [
                {"$add": True, "$after": "turn.end.refill-decrees", "id": "turn.end.house",
                 "do": "house-proc", "with": {"amount": "noble('king')"},
                 "text": "The house step."},
                {"$add": True, "$after": "turn.end.house", "id": "turn.end.house2",
                 "do": "house_proc", "with": {"amount": 1, "noble": None},
                 "text": "The other house step."}]}},
            "effects": {
                "effects": [{"$add": True, "id": "house_proc",
                             "steps": [{"gain": {"wigs": "amount % 2"}}, *steps]}],
                "procedures": [_proc("house-proc", [{"if": "amount in royal_favors",
                                                     "then": [{"gain": {"reis": 1}}]}],
                                     {"amount": "noble"})]}},
            "Two house steps at the end of each turn.")
    raise ValueError(site)


def make_effect_case(seed: int, index: int) -> EffectCase:
    """Case `index` of run `seed`: a site and one to three fragments (a hazard, maybe a guard
    and ordinary steps around it)."""
    rng = random.Random(f"effects:{seed}:{index}")
    site = rng.choice(SITES)
    if site == "setup" and rng.random() < 0.5:
        site = "setup-early"
    p = {"action": "", "turn-end": "", "twins": "", "period-end": "q.", "setup": "q.",
         "setup-early": "game.players[0]."}[site]
    ctx = Ctx(p, site, rng)
    hazards = [rng.choice([h for h in FRAGMENTS if h not in ("benign", "require")])]
    if site in ("setup", "setup-early") and rng.random() < 0.5:
        hazards = ["setup-players"]
    hazards += rng.sample(["benign", "benign", "require", rng.choice(list(FRAGMENTS))],
                          rng.randrange(3))
    if site in ("turn-end", "twins") and rng.random() < 0.8:  # a guard there is refused
        hazards = [h for h in hazards if h not in GUARDS] or ["benign"]
    # a guard stands before the loop over the players that the effects of some sites are in
    outer = Ctx("game.players[0]." if p == "q." else p, site, rng)
    guard: Steps = []
    effects: Steps = []
    for h in hazards:
        if h in GUARDS:
            guard.extend(FRAGMENTS[h](outer))
        else:
            effects.extend(FRAGMENTS[h](ctx))
    if p == "q." and effects:  # a loop over the players gives the fragments their `q`
        effects = [{"for_each": {"as": "q", "in": "game.players"}, "do": effects}]
    # now and then a guard after the effects, as a designer gets it wrong (step-order)
    steps = guard + effects if rng.random() < 0.9 else effects + guard
    if not steps:
        steps = f_benign(ctx)
    return EffectCase(seed, index, site, tuple(hazards), house_rule(site, steps))


# The one-step house rules issue 33 measured (each built with exit 0 and broke in play on
# 734f876), written as this mode writes them: `--effects-known` runs them.
ISSUE_33: dict[str, tuple[str, Steps]] = {
    "divisor-zero": ("action", [{"let": {"d": "reis // len(game.court)"}},
                                {"gain": {"wigs": "d % 3"}}]),
    "first-empty": ("action", [{"let": {"c": "first([c for c in hand if c > 80])"}},
                               {"move": {"item": "c", "from": "hand", "to": "game.discard"}}]),
    "max-empty": ("turn-end", [{"let": {"m": "max([q.reis for q in game.players if q.reis > 12])"}},
                               {"gain": {"wigs": "m % 3"}}]),
    "index-past-end": ("action", [{"let": {"z": "game.players[3].reis"}},
                                  {"gain": {"wigs": "z % 3"}}]),
    "noble-unknown": ("action", [{"let": {"n": "noble('x')"}},
                                 {"if": "n in royal_favors", "then": [{"gain": {"wigs": 1}}]}]),
    "remove-missing": ("action", [{"if": "len(hand) > 0", "then": [
        {"move": {"item": "hand[0]", "from": "game.discard", "to": "game.box"}}]}]),
    "drop-full-map": ("action", [{"drop": "game.piles[first(rules.components.display.piles)]"}]),
    "new-outside-setup": ("action", [{"new": "game.players",
                                      "with": {"color": "rules.game.players.colors[0]"}}]),
    "set-below-min": ("action", [{"set": {"influence": "rules.game.tracks.influence.min - 1"}}]),
    "set-past-64-bits": ("action", [{"set": {"wigs": 9223372036854775808}}]),
    # a choose in a step of the period end, which no move makes
    "choose-no-move": ("period-end", [
        {"choose": {"as": "n", "from": "rules.nobles.nobles.id"}, "reason": "choose a Noble"},
        {"for_each": {"as": "q", "in": "game.players"},
         "do": [{"if": "n in q.royal_favors", "then": [{"gain": {"q.wigs": 1}}]}]}]),
    "setup-reads-players": ("setup-early", [{"let": {"w": "game.players[0].reis"}},
                                            {"set": {"game.treasury": "w % 3"}}]),
    "let-retyped": ("action", [{"let": {"t": "1"}}, {"let": {"t": "'a'"}},
                               {"gain": {"wigs": "len(t)"}}]),
    "dash-beside-underscore": ("twins", []),
    "repeat-huge": ("action", [{"repeat": 99999999999999, "do": [{"gain": {"wigs": 1}}]}]),
    "len-range-huge": ("setup", [{"let": {"h": "len(range(400000000))"}},
                                 {"set": {"game.treasury": "h % 3"}}]),
    "choose-up-to-40": ("action", [{"choose": {"as": "cs", "from": "rules.components.cards.number",
                                               "up_to": 40}, "reason": "choose some"},
                                   {"gain": {"wigs": "len(cs)"}}]),
}


def known_case(name: str) -> EffectCase:
    site, steps = ISSUE_33[name]
    return EffectCase(-1, list(ISSUE_33).index(name), site, (name,), house_rule(site, steps))


# --- running a case -----------------------------------------------------------------------------


@dataclass
class EffectOutcome:
    case: EffectCase
    category: str  # a b c d e
    stage: str  # where it ended: build, new_game, play, ...
    detail: str  # what happened, one line
    seconds: float
    exit_code: int | None = None
    stderr: str = ""
    traceback: str = ""
    games: int = 0

    @property
    def ok(self) -> bool:
        return self.category in ("a", "b")

    @property
    def signature(self) -> str:
        """One finding hit by many cases: its category, stage and the exception or words."""
        detail = re.sub(r"\b\d+\b", "N", self.detail)
        detail = re.sub(r"'[^']*'", "'…'", detail)
        return f"{self.category} {self.stage}: {detail[:160]}"


_LOCATED = re.compile(r"\S.*?:\d+:\d+: (error|warning)\[(?P<code>[a-z0-9-]+)\]: \S")
_FILELESS = re.compile(r"lisboa-rules: (error|warning)\[(?P<code>[a-z0-9-]+)\]: \S")


def judge_refusal(stderr: str) -> str:
    """'' when stderr holds only located diagnostics of registered codes (and notes and the
    count line), else what is wrong."""
    from lisboa_rules.core import codes

    errors = 0
    for line in stderr.splitlines():
        if not line.strip() or re.match(r"\S.*?:\d+:\d+: note: ", line) or \
                line.startswith(("lisboa-rules: found", "lisboa-rules: note:")):
            continue
        m = _LOCATED.match(line) or _FILELESS.match(line)
        if m is None:
            return f"not a diagnostic: {line[:160]}"
        if m.group("code") not in codes.CODES:
            return f"unregistered code {m.group('code')}"
        errors += "error[" in line
    return "" if errors else "exit 1 without an error"


def _describe(exc: BaseException) -> str:
    words = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__


def _engine_frame(tb: str) -> str:
    frames = re.findall(r'File "[^"]*lisboa_engine[^"]*\.py", line \d+, in (\S+)', tb)
    return f" in {frames[-1]}" if frames else ""


def play_engine(E: Any, report: Callable[[str], None], games: int = GAMES_PER_COUNT,
                move_limit: int = MOVE_LIMIT) -> tuple[str, str, str, int]:
    """Seeded random games of the engine's base rule set at every player count it allows:
    ('', '', '', games) when all end with the invariants, else (stage, detail, traceback, n)."""
    rs = E.RULESETS[()]
    played = 0
    for players in range(rs.players_min, rs.players_max + 1):
        for seed in range(games):
            where = f"{players} players, seed {seed}"
            stage = "new_game"
            report(f"{stage} ({where})")
            moves = 0
            try:
                g = E.new_game(players, (), seed)
                rng = random.Random(f"{players}:{seed}")
                bad = E.check_invariants(g)
                if bad:
                    return "new_game", f"invariant fails ({where}): {bad[0]}", "", played
                while g.phase != "over":
                    stage = "legal_moves"
                    report(f"{stage} ({where}, move {moves})")
                    listed = E.legal_moves(g)
                    if not listed:
                        return "play", f"stuck: no legal move in phase {g.phase} ({where}, " \
                                       f"move {moves})", "", played
                    stage = "apply_move"
                    report(f"{stage} ({where}, move {moves})")
                    g = E.apply_move(g, rng.choice(listed))
                    moves += 1
                    stage = "check_invariants"
                    bad = E.check_invariants(g)
                    if bad:
                        return "play", f"invariant fails ({where}, move {moves}): {bad[0]}", "", \
                            played
                    if moves % 25 == 0:
                        stage = "dumps/loads"
                        E.loads(E.dumps(g))
                    if moves % TRY_EVERY == 0 and g.phase != "over":
                        stage = "tried in place"
                        wrong, _tried = tried_in_place(E, g)
                        if wrong:
                            return "play", f"{wrong} ({where}, move {moves})", "", played
                    if moves > move_limit:
                        return "play", f"no end after {move_limit} moves ({where})", "", played
                stage = "final_scores"
                E.ranking(g, E.final_scores(g))
                stage = "dumps/loads"
                E.loads(E.dumps(g))
            except Exception as exc:
                tb = traceback.format_exc()
                return stage, f"{_describe(exc)}{_engine_frame(tb)} ({where}, move {moves})", tb, \
                    played
            played += 1
    return "", "", "", played


def tried_in_place(E: Any, g: Any) -> tuple[str, int]:
    """What is wrong when each legal move of `g` is tried on it in place and taken back
    (`_tried`, `_taken_back`), and how many were tried: '' when each gives the state playing it
    on a copy gives, and leaves `g` as it was, field for field and in its saved JSON."""
    before, saved = g.clone(), E.to_json(g)
    codes = E._moves_now(g)
    for code in codes:
        ref = g.clone()
        E._apply(ref, E.Move(*code))
        was, undo = E._tried(g, E.Move(*code))
        differs = g != ref or E.to_json(g) != E.to_json(ref)
        E._taken_back(g, was, undo)
        if differs:
            return f"a {code[0]} move tried in place is not the move played on a copy", 0
        if g != before or E.to_json(g) != saved:
            return f"a {code[0]} move tried in place and taken back changed the state", 0
    return "", len(codes)


def _child(conn: multiprocessing.connection.Connection, text: str, games: int) -> None:
    """Build the house rule and play its engine, reporting each stage to the parent."""
    from tools import fuzz

    def report(stage: str) -> None:
        conn.send(("stage", stage))

    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on this platform
        pass
    tmp = Path(tempfile.mkdtemp(prefix="lisboa-fuzz-effects-"))
    try:
        house = tmp / f"{HOUSE_ID}.yaml"
        house.write_text(text, encoding="utf-8")
        argv = ["build", "--rules", str(RULES), "--house", str(house), "--variant", HOUSE_ID,
                "--out", str(tmp / "out")]
        report("build")
        code, _, err, tb = fuzz.run_build(argv, timeout=0)
        if code == 2 and not tb:
            _, _, _, tb = fuzz.run_build(argv, debug=True, timeout=0)
        conn.send(("built", code, err, tb))
        if code != 0:
            return
        report("load")
        from lisboa_rules.sim.engine import load_engine

        try:
            E = load_engine(tmp / "out" / "lisboa_engine.py")
        except Exception as exc:
            conn.send(("played", "load", _describe(exc), traceback.format_exc(), 0))
            return
        conn.send(("played", *play_engine(E, report, games)))
    except BaseException as exc:  # a MemoryError, a RecursionError: the parent must hear it
        with contextlib.suppress(Exception):
            conn.send(("crashed", _describe(exc), traceback.format_exc()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        conn.close()


def run_effect_case(case: EffectCase, timeout: float = DEFAULT_TIMEOUT,
                    games: int = GAMES_PER_COUNT) -> EffectOutcome:
    """Build and play `case` in a forked child under a watchdog; classify what happened."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, case.text, games), daemon=True)
    start = time.perf_counter()
    proc.start()
    child.close()
    stage, code, err, tb = "start", None, "", ""
    result: tuple[Any, ...] | None = None
    deadline = start + timeout
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not parent.poll(left):
                break
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg[0] == "stage":
                stage = msg[1]
            elif msg[0] == "built":
                _, code, err, tb = msg
                if code != 0:
                    break
            else:
                result = msg
                break
    finally:
        if proc.is_alive() and time.perf_counter() >= deadline:
            proc.kill()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()
    seconds = time.perf_counter() - start

    def out(category: str, where: str, detail: str, trace: str = "",
            games_: int = 0) -> EffectOutcome:
        return EffectOutcome(case, category, where, detail, seconds, code, err, trace or tb, games_)

    if result is not None and result[0] == "crashed":
        return out("d" if code is None else "c", stage, result[1], result[2])
    if code is None:
        if seconds >= timeout:
            return out("e", stage, f"no result after {timeout:g} s (in {stage})")
        return out("d", stage, f"the build's process died (exit {proc.exitcode})")
    if code == 2 or tb:
        last = (tb.strip().splitlines() or ["exit 2"])[-1]
        frames = re.findall(r'File "[^"]*lisboa_rules/([^"]*)", line (\d+), in (\S+)', tb)
        where = f" at {frames[-1][0]}:{frames[-1][1]} in {frames[-1][2]}" if frames else ""
        return out("d", "build", f"exit {code}: {last[:160]}{where}")
    if code == 1:
        wrong = judge_refusal(err)
        return out("d", "build", wrong) if wrong else out("a", "build", _first_error(err))
    if code != 0:
        return out("d", "build", f"exit {code}")
    if result is None:
        if seconds >= timeout:
            return out("e", stage, f"no result after {timeout:g} s (in {stage})")
        return out("c", stage, f"the engine's process died (exit {proc.exitcode})")
    _, where, detail, trace, played = result
    if not where:
        return out("b", "play", f"{played} games played to the end", games_=played)
    return out("c", where, detail, trace, played)


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        m = re.search(r"error\[([a-z0-9-]+)\]: (.*)", line)
        if m:
            return f"{m.group(1)}: {m.group(2)[:120]}"
    return ""


# --- a run --------------------------------------------------------------------------------------


@dataclass
class EffectSummary:
    outcomes: list[EffectOutcome] = field(default_factory=list)

    def add(self, outcome: EffectOutcome) -> None:
        self.outcomes.append(outcome)

    @property
    def findings(self) -> list[EffectOutcome]:
        return [o for o in self.outcomes if not o.ok]

    def by_signature(self) -> dict[str, list[EffectOutcome]]:
        groups: dict[str, list[EffectOutcome]] = {}
        for o in self.findings:
            groups.setdefault(o.signature, []).append(o)
        return groups

    def render(self) -> str:
        counts = {k: sum(o.category == k for o in self.outcomes) for k in CATEGORIES}
        seconds = sum(o.seconds for o in self.outcomes)
        lines = [f"fuzzed {len(self.outcomes)} house rules in {seconds:.0f} s: " + ", ".join(
            f"{counts[k]} {k} ({CATEGORIES[k]})" for k in CATEGORIES)]
        hazards: dict[str, dict[str, int]] = {}
        for o in self.outcomes:
            for h in dict.fromkeys(o.case.hazards):
                row = hazards.setdefault(h, dict.fromkeys(CATEGORIES, 0))
                row[o.category] += 1
        lines.append("by hazard (a/b/c/d/e): " + "; ".join(
            f"{h} {'/'.join(str(row[k]) for k in CATEGORIES)}"
            for h, row in sorted(hazards.items())))
        groups = self.by_signature()
        if groups:
            lines.append(f"{len(groups)} distinct findings:")
            for sig, group in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
                smallest = min(group, key=lambda o: len(o.case.text))
                lines.append(f"  [{len(group)}x] {sig}")
                lines.append(f"        e.g. {smallest.case.label}")
        return "\n".join(lines)


def warm_up() -> None:
    """Build the unchanged rules once in this process, so that every forked case inherits the
    imported modules and the compiled templates."""
    from tools import fuzz

    with tempfile.TemporaryDirectory(prefix="lisboa-fuzz-effects-") as tmp:
        code, _, err, tb = fuzz.run_build(["build", "--rules", str(RULES), "--out",
                                           str(Path(tmp) / "out")], timeout=0)
    if code != 0:
        raise RuntimeError(f"the unchanged rules do not build (exit {code}):\n{err}{tb}")


def effect_cases(seed: int, indexes: Sequence[int], known: bool = False) -> Iterator[EffectCase]:
    if known:
        yield from (known_case(name) for name in ISSUE_33)
    else:
        yield from (make_effect_case(seed, i) for i in indexes)


def save_case(outcome: EffectOutcome, folder: Path) -> Path:
    c = outcome.case
    name = f"{c.seed}-{c.index}" if c.seed >= 0 else f"issue33-{c.hazards[0]}"
    dest = folder / f"{name}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    head = [f"# {c.label}", f"# outcome: {outcome.category} ({CATEGORIES[outcome.category]}), "
            f"{outcome.stage}: {' '.join(outcome.detail.split())}"]
    dest.write_text("\n".join(head) + "\n" + c.text, encoding="utf-8")
    return dest


def effects_main(seed: int, indexes: Sequence[int], *, known: bool = False,
                 timeout: float = DEFAULT_TIMEOUT, save: Path | None = None,
                 verbose: bool = False, show: bool = False) -> int:
    """`python3 -m tools.fuzz --effects N`: 0 when no case is a finding (c, d or e)."""
    warm_up()
    summary = EffectSummary()
    for case in effect_cases(seed, indexes, known):
        outcome = run_effect_case(case, timeout)
        summary.add(outcome)
        if verbose or show or not outcome.ok:
            print(f"[{outcome.category}] {outcome.seconds:5.1f}s {case.label}: {outcome.stage}: "
                  f"{outcome.detail}", flush=True)
        if show:
            print(case.text + outcome.stderr + outcome.traceback, end="", flush=True)
        if save is not None and not outcome.ok:
            save_case(outcome, save)
    print(summary.render())
    return 1 if summary.findings else 0


if __name__ == "__main__":  # pragma: no cover
    print("run it as: python3 -m tools.fuzz --effects N [--seed S]", file=sys.stderr)
    sys.exit(2)


__all__ = [
    "ISSUE_33",
    "EffectCase",
    "EffectOutcome",
    "EffectSummary",
    "effects_main",
    "known_case",
    "make_effect_case",
    "run_effect_case",
]
