"""The engine's fast paths compute exactly what the plain ones do.

The move generators ask a Noble action's `opts` (the `_opts_` function compiled from its
steps) for the choices of a visit, a follow or an event instead of trying every candidate
choice with its `why` (the `_why_` function of the same steps: what `apply_move` still does to
name the rule a move breaks), and they
makes moves and score lines without the frozen dataclasses' `__init__`. These tests walk random
games of every rule set and compare both ways at every state, and at states built to hit the
edges (no store left, no free lot, the extra Decree pick, a reign that forbids the action).
A bundle of effects (a row of an apply step's table, `rs.fx`) lists each effect's choices from
that effect's own `opts` and asks only the other effects' `why` of them: the bundle's whole
`why` accepts every choice its `opts` lists. No timing is asserted.
"""

from __future__ import annotations

import inspect
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import setups
from test_differential import engine_from_text

from lisboa_rules import pipeline
from lisboa_rules.emit.engine.moves import MovePrinter


def _candidates(E: Any, g: Any, seat: int, action_id: str) -> list[Any]:
    """Every choice a player could name for a Noble action, legal or not: each business,
    every set of one to three Decrees on display (and one that is not), each Plan, each part
    of a price paid with Influence (none, and from one below the track to one above it)."""
    rs = g.rs
    names = rs.procs[action_id].choices
    shown = sorted(set(g.decree_display))
    picks = [(d,) for d in shown] + [
        (a, b) for i, a in enumerate(shown) for b in shown[i + 1 :]
    ] + [tuple(shown[:3]), ("not-a-decree",)]
    values = {"business": [*rs.businesses, None], "decrees": picks,
              "plan": [*sorted(rs.plans), None],
              "price_influence": [None, *range(-1, rs.influence_max + 2)]}
    out: list[Any] = [{}]
    for name in names:
        out = [{**c, name: v} for c in out for v in values[name]]
    return [E.Move("visit", seat, **c) for c in out]


def _problem(E: Any, g: Any, seat: int, action_id: str, move: Any) -> Any:
    proc = g.rs.procs[action_id]
    return proc.why(g, seat, *[getattr(move, c) for c in proc.choices])


def _fast_choices(E: Any, g: Any, seat: int, action_id: str) -> list[Any]:
    """The choices the move generators list, as (business, decrees, plan, price_influence)."""
    proc = g.rs.procs[action_id]
    out = []
    for values in proc.opts(g, seat):
        chosen = dict(zip(proc.choices, values, strict=True))
        out.append((chosen.get("business"), chosen.get("decrees", ()), chosen.get("plan"),
                    chosen.get("price_influence")))
    return out


def _slow_choices(E: Any, g: Any, seat: int, action_id: str) -> list[Any]:
    return sorted(
        ((c.business, c.decrees, c.plan, c.price_influence)
         for c in _candidates(E, g, seat, action_id)
         if _problem(E, g, seat, action_id, c) is None),
        key=repr,
    )


def _check_state(E: Any, g: Any) -> int:
    """Compare the fast and slow choices of every Noble action for every seat; count them."""
    compared = 0
    for seat in range(len(g.players)):
        for action_id in g.rs.noble_actions:
            fast = sorted(_fast_choices(E, g, seat, action_id), key=repr)
            slow = _slow_choices(E, g, seat, action_id)
            assert fast == slow, (action_id, seat, E.to_json(g))
            compared += len(slow)
    return compared


@pytest.mark.parametrize("seed", range(3))
def test_legal_choices_agree_with_trying_every_choice(engine: Any, seed: int) -> None:
    E = engine
    compared = 0
    for players, key in setups(E):
        g = E.new_game(players, key, seed)
        rng = random.Random(f"perf-eq:{seed}:{players}:{key}")
        step = 0
        while g.phase != "over":
            if step % 7 == 0:
                compared += _check_state(E, g)
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            step += 1
        compared += _check_state(E, g)
    assert compared > 100  # the walk reached states with choices


def test_legal_choices_at_the_edges(engine: Any) -> None:
    """Hand-made states: the cases where some choices are refused and others are not."""
    E = engine
    g = E.new_game(4, (), 1)
    p = g.players[0]
    rs = g.rs
    for na in rs.noble_actions.values():
        assert sorted(_fast_choices(E, g, 0, na.id), key=repr) == _slow_choices(E, g, 0, na.id)
    # A business with no free lot, the others open.
    first = rs.businesses[0]
    for na in rs.noble_actions.values():
        if na.procedure == "build-store":
            lots = dict(na.lots)
            g.players[1].stores[first] = lots.get(first, 0)
            p.reis = 100
            assert _check_state(E, g) > 0
            assert all(c[0] != first for c in _fast_choices(E, g, 0, na.id))
            p.stores[rs.businesses[1]] = rs.start_stores  # no store left
            assert _fast_choices(E, g, 0, na.id) == [] == _slow_choices(E, g, 0, na.id)
            p.stores[rs.businesses[1]] = 0
            p.reis = 0
            p.influence = 0  # cannot pay the land price
            assert _fast_choices(E, g, 0, na.id) == [] == _slow_choices(E, g, 0, na.id)
        if na.procedure == "take-decree" and na.extra_marker_on is not None:
            p.markers[na.extra_marker_on] = 1  # the extra pick opens
            fast = _fast_choices(E, g, 0, na.id)
            assert any(len(c[1]) == 2 for c in fast)
            assert sorted(fast, key=repr) == _slow_choices(E, g, 0, na.id)
        if na.procedure == "open-building":
            p.plans = list(g.plan_supply[:3])
            for office in g.offices.values():
                office[p.color] = 1  # some Plans need more Officials than that
            fast = sorted(_fast_choices(E, g, 0, na.id), key=repr)
            assert fast == _slow_choices(E, g, 0, na.id) and fast
    # A rule set where a flag forbids an action: no choice at all.
    for key, rs2 in E.RULESETS.items():
        for na in rs2.noble_actions.values():
            if na.forbidden_flag is not None:
                players = max(rs2.players_min, 2)
                g2 = E.new_game(players, key, 2)
                g2.flags.append(na.forbidden_flag)
                assert _fast_choices(E, g2, 0, na.id) == [] == _slow_choices(E, g2, 0, na.id)


@pytest.mark.parametrize("seed", range(2))
def test_listing_moves_leaves_the_state_alone(engine: Any, seed: int) -> None:
    """The move generator tries choices on scratch copies that share parts of the state (the
    player's stores, Decrees, completed Plans and markers among them): listing the moves of
    a state never changes it."""
    E = engine
    listed = 0
    for players, key in setups(E):
        g = E.new_game(players, key, seed)
        rng = random.Random(f"perf-list:{seed}:{players}:{key}")
        while g.phase != "over":
            before = E.to_json(g)
            moves = E.legal_moves(g)
            assert E.to_json(g) == before, E.to_json(g)
            listed += len(moves)
            g = E.apply_move(g, rng.choice(moves))
    assert listed > 1000


def _refused_listed(g: Any, fx: dict[str, dict[Any, Any]]) -> tuple[list[Any], int]:
    """The choices a bundle of `fx` lists that its `why` refuses, for every seat and every
    value of the bundle's shared parameters (a Noble or none); and how many were asked."""
    refused = []
    asked = 0
    values = [None, *(n.id for n in g.rs.nobles)]
    for table, rows in fx.items():
        for key, (opts, why, _run) in rows.items():
            shared = len(inspect.signature(opts).parameters) - 2  # after the game and the seat
            for seat in range(len(g.players)):
                for given in itertools.product(values, repeat=shared):
                    for choice in opts(g, seat, *given):
                        asked += 1
                        if why(g, seat, *given, *choice) is not None:
                            refused.append((table, key, seat, given, choice))
    return refused, asked


def test_a_bundle_refuses_none_of_the_choices_it_lists(engine: Any) -> None:
    E = engine
    asked = 0
    for players, key in setups(E):
        g = E.new_game(players, key, 3)
        rng = random.Random(f"perf-bundles:{players}:{key}")
        step = 0
        while g.phase != "over":
            if step % 11 == 0:
                refused, n = _refused_listed(g, g.rs.fx)
                assert refused == [], (refused[:3], E.to_json(g))
                asked += n
            g = E.apply_move(g, rng.choice(E.legal_moves(g)))
            step += 1
    assert asked > 10_000  # the walk reached states where the bundles list choices


def test_a_listed_choice_a_bundle_refuses_is_found(engine: Any) -> None:
    # The check must be able to fail: a bundle whose opts lists one more choice than its why
    # takes (a ship paid with more Influence than the player has).
    E = engine
    g = E.new_game(4, (), 3)
    fx = {table: dict(rows) for table, rows in g.rs.fx.items()}
    found = 0

    def more(opts: Any) -> Any:
        def listed(g: Any, seat: int, noble: Any) -> Any:
            return [*opts(g, seat, noble), (10**6,) * 2]

        return listed

    for rows in fx.values():
        for key, (opts, why, run) in rows.items():
            if len(inspect.signature(why).parameters) == 5:  # a ship's Influence, a favor
                rows[key] = (more(opts), why, run)
                found += 1
    assert found > 0
    refused, _ = _refused_listed(g, fx)
    assert refused and all(c == (10**6,) * 2 for *_, c in refused)


# The move generators' shortcuts against the same generators printed without them
# (`MovePrinter.plain`): an effect that only the options of later choices read (a card played
# before a trade's State action, a State action before a visit's Noble action) is played only
# for the options of the rows that read what it writes; options are computed once where
# their values cannot change (past an `if`, and once per listing by their values). The same
# codes in the same order, for every seat, at every state of random games.

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "tests" / "cases" / "house-more"


def _compiled(plain: bool, *house: str) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MovePrinter, "plain", plain)
        result = pipeline.compile_rules(ROOT / "rules", house,
                                        extra=[HOUSE / f"{h}.yaml" for h in house])
    assert result.ok, [d.message for d in result.diagnostics]
    name = f"lisboa_engine_{'plain' if plain else 'short'}_{'_'.join(house) or 'rules'}"
    return engine_from_text(result.files["lisboa_engine.py"], name.replace("-", "_"))


def _codes(E: Any, g: Any, seat: int) -> list[Any]:
    """The codes the move generators of the phase list for `seat`, and those each lists
    when given the value of its first choice (as `apply_move` asks it), for every value."""
    out = []
    for md in E._activate(g).moves.values():
        if md.phase != g.phase:
            continue
        listed = md.moves(g, seat)
        out.append(listed)
        if md.first is not None:
            for value in dict.fromkeys(getattr(E.Move(*c), md.first) for c in listed):
                out.append(md.moves(g, seat, value))
    return out


def _lockstep(E: Any, P: Any, seed: int, games: int = 1) -> int:
    compared = 0
    for players, key in setups(E):
        for k in range(games):
            g = E.new_game(players, key, seed + k)
            rng = random.Random(f"perf-plain:{seed + k}:{players}:{key}")
            while g.phase != "over":
                h = P.from_json(E.to_json(g))
                for seat in range(players):
                    before = E.to_json(g)
                    got = _codes(E, g, seat)
                    assert got == _codes(P, h, seat), (seat, before)
                    assert E.to_json(g) == before
                    compared += sum(map(len, got))
                g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    return compared


@pytest.fixture(scope="module")
def plain_engine() -> Any:
    return _compiled(True)


def test_the_plain_printer_prints_another_engine(engine: Any, plain_engine: Any) -> None:
    # the lockstep below compares two different printings: the switch is not ignored (only
    # the shortcuts play a deferred effect in a function of its own, `_moves_…__tN`)
    def tried(E: Any) -> list[str]:
        return [n for n in vars(E) if n.startswith("_moves_") and "__t" in n]

    assert tried(engine) and not tried(plain_engine)


@pytest.mark.parametrize("seed", range(2))
def test_the_shortcuts_list_the_same_codes(engine: Any, plain_engine: Any, seed: int) -> None:
    assert _lockstep(engine, plain_engine, 7100 + 10 * seed) > 20_000


@pytest.mark.sampled(2)
@pytest.mark.parametrize("house", ["admiral", "compulsory-state-action", "decree-fee",
                                   "event-follow-fee", "short-discard", "discard-choice"])
def test_the_shortcuts_list_the_same_codes_under_house_rules(house: str) -> None:
    assert _lockstep(_compiled(False, house), _compiled(True, house), 7200) > 2_000
