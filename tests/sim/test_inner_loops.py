"""The agents' inner loops in the engine (issue 36): `random_move`, `greedy_move`, `playout`
and `mcts_move` of lisboa_rules/runtime/engine.py, which the agents of lisboa_rules/sim/agents.py
call for an engine's own games, so that a compiled engine runs them compiled.

They play the moves the agents' own loops play (an engine without them) for the same seed,
state after state; they are honest (a game changed where the mover cannot see gets the same
move), legal, deterministic, leave the game alone, and the compiled engine plays the same moves
as the pure one. Checked on every rule set and player count.
"""

from __future__ import annotations

import random
import sys
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT, setups, sized

from lisboa_rules.sim import make_agent
from lisboa_rules.sim.agents import AGENTS

sys.path.insert(0, str(ROOT / "tests" / "engine"))
from test_redeal import hidden_change

FAST = {"iterations": 12, "horizon": 8}  # MCTS kept small: the tests check behaviour only
FAST_GREEDY = {"iterations": 6, "horizon": 3}  # greedy playouts score every candidate
LOOPS = ("random_move", "greedy_move", "mcts_move", "redeal", "playout")


class _Without:
    """The engine without its inner loops: the agents run their own (an older engine)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def __getattr__(self, name: str) -> Any:
        if name in LOOPS:
            raise AttributeError(name)
        return getattr(self.engine, name)


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int, every: int) -> list[Any]:
    """States with a choice of a seeded random game, every `every` moves."""
    rng = random.Random(seed)
    g = E.new_game(players, variants, seed)
    out = []
    n = 0
    while g.phase != "over":
        if n % every == 0 and len(E.legal_moves(g)) > 1:
            out.append(g)
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1
    return out


def _options(name: str) -> dict[str, Any]:
    if name == "mcts-greedy":
        return FAST_GREEDY
    return FAST if name.startswith("mcts") else {}


@pytest.mark.sampled(12)
@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("setup", range(6))
def test_the_engine_loops_play_the_agents_own_moves(engine: Any, name: str, setup: int) -> None:
    """One agent of each kind over the states of a game, in the engine and in its own loops
    (the generator carried from state to state): the same moves. So the agents' moves for a
    seed did not change when the loops moved into the engine."""
    players, variants = setups(engine)[setup]
    states = _states(engine, players, variants, 80 + setup, 13 if name.startswith("mcts") else 5)
    inner = make_agent(name, engine, 7, **_options(name))
    own = make_agent(name, _Without(engine), 7, **_options(name))
    assert [inner(g) for g in states] == [own(g) for g in states]
    assert len(states) > 3


@pytest.mark.sampled(8)
@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("setup", [0, 1, 4])
def test_the_engine_loops_are_honest(engine: Any, name: str, setup: int) -> None:
    """A game changed only where the mover cannot see (hands swapped, decks reversed, another
    seed) gets the same move for the same seed; so does the mover's view (the agents' own
    loop); the move is legal and the game left as it was."""
    E = engine
    players, variants = setups(E)[setup]
    for g in _states(E, players, variants, 90 + setup, sized(17, 5)):
        other = hidden_change(E, g)
        assert other != g
        before = E.to_json(g)
        moves = [
            make_agent(name, E, 3, **_options(name))(s) for s in (g, other, E.view(g, g.actor))
        ]
        assert moves[0] == moves[1] == moves[2]
        assert moves[0] in E.legal_moves(g)
        assert E.to_json(g) == before


def test_greedy_move_plays_a_move_of_the_best_margin_on_a_redealt_game(engine: Any) -> None:
    """greedy_move: on `redeal` of the mover (from the same generator state), the move whose
    state after it has the best margin (mover's total minus the best other total)."""
    E = engine
    for k, g in enumerate(_states(E, 3, (), 11, 7)):
        seat = g.actor
        dealt = E.redeal(g, seat, random.Random(k))

        def margin(move: Any, dealt: Any = dealt, seat: int = seat) -> int:
            t = list(E.final_totals(E.apply_move(dealt, move)))
            return t.pop(seat) - max(t)

        best = max(margin(m) for m in E.legal_moves(dealt))
        assert margin(E.greedy_move(g, random.Random(k))) == best


def test_playout_plays_random_moves_and_scores_the_end(engine: Any) -> None:
    """playout(g, rng): random legal moves drawn from rng to the end (or `horizon` moves),
    then 1 / the number of seats in first place by `ranking`; the game given is left alone."""
    E = engine
    for k, g in enumerate(_states(E, 3, ("queen",), 12, 25)):
        before = E.to_json(g)
        for horizon in (None, 6):
            rng = random.Random(k)
            end = g
            steps = 0
            while end.phase != "over" and (horizon is None or steps < horizon):
                end = E.apply_move(end, rng.choice(E.legal_moves(end)))
                steps += 1
            first = E.ranking(end).places[0]
            want = [1 / len(first) if i in first else 0.0 for i in range(3)]
            assert E.playout(g, random.Random(k), horizon) == want
            assert sum(want) == pytest.approx(1.0)
        assert E.to_json(g) == before


@pytest.mark.parametrize("name", AGENTS)
def test_the_engine_loops_are_deterministic(engine: Any, name: str) -> None:
    states = _states(engine, 4, (), 13, 9)
    runs = [[make_agent(name, engine, 5, **_options(name))(g) for g in states] for _ in range(2)]
    assert runs[0] == runs[1]
    other = [make_agent(name, engine, 6, **_options(name))(g) for g in states]
    if name != "greedy":  # greedy's ties are rare: another seed may choose alike everywhere
        assert other != runs[0]


@pytest.mark.parametrize("loop", ["random_move", "greedy_move", "mcts_move"])
def test_the_engine_loops_refuse_a_finished_game(engine: Any, loop: str) -> None:
    E = engine
    g = E.new_game(2, (), 5)
    rng = random.Random(5)
    while g.phase != "over":
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    args = (10, 5) if loop == "mcts_move" else ()
    with pytest.raises(ValueError, match="no move to choose"):
        getattr(E, loop)(g, random.Random(0), *args)


@pytest.mark.parametrize(("iterations", "horizon"), [(0, None), (True, 5), (5, 0), (5, -2)])
def test_mcts_move_refuses_a_budget_that_is_none(
    engine: Any, iterations: Any, horizon: Any
) -> None:
    g = engine.new_game(3, (), 2)
    with pytest.raises(ValueError, match=r"iteration|horizon"):
        engine.mcts_move(g, random.Random(0), iterations, horizon)


@pytest.mark.parametrize("loop", ["redeal", "greedy_move", "mcts_move"])
def test_the_engine_loops_refuse_a_state_changed_by_hand(engine: Any, loop: str) -> None:
    """A game with a hidden field set by hand to what no save holds: StateError naming it, as
    every entry point says (not the TypeError met inside)."""
    g = engine.new_game(3, (), 1)
    g.players[1].hand = None
    args = {"redeal": (0,), "greedy_move": (), "mcts_move": (5, 3)}[loop]
    fn = getattr(engine, loop)
    with pytest.raises(engine.StateError, match=r"players\[1\]\.hand"):
        if loop == "redeal":
            fn(g, *args, random.Random(0))
        else:
            fn(g, random.Random(0), *args)


@pytest.mark.parametrize("loop", ["greedy_move", "mcts_move", "playout"])
def test_the_engine_loops_pause_the_collector_and_leave_it_as_it_was(
    engine: Any, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    """Python's cyclic garbage collector is off while a loop searches, and back as it was
    after: on when it was on (also when the call refuses), off when the caller turned it off."""
    import gc

    E = engine
    g = _states(E, 3, (), 15, 9)[2]
    seen: list[bool] = []
    real = E._apply

    def spy(state: Any, move: Any) -> None:
        seen.append(gc.isenabled())
        real(state, move)

    monkeypatch.setattr(E, "_apply", spy)
    args = {"greedy_move": (), "mcts_move": (8, 4), "playout": (5,)}[loop]
    fn = getattr(E, loop)
    assert gc.isenabled()
    fn(g, random.Random(0), *args)
    assert seen and not any(seen) and gc.isenabled()
    with pytest.raises(E.BadArgument):
        fn("not a game", random.Random(0), *args)
    assert gc.isenabled()
    gc.disable()
    try:
        fn(g, random.Random(0), *args)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_agent_runs_the_engine_loop_for_games_and_views(engine: Any) -> None:
    """The agents call the engine's loop for one of its games and for a view (its loops take
    views since issue 37), never for an engine without the loop."""
    calls: list[tuple[str, str]] = []

    class Counting:
        def __getattr__(self, name: str) -> Any:
            found = getattr(engine, name)
            if name in LOOPS:

                def counted(*args: Any) -> Any:
                    calls.append((name, type(args[0]).__name__))
                    return found(*args)

                return counted
            return found

    g = _states(engine, 3, (), 14, 10)[2]
    for name in AGENTS:
        make_agent(name, Counting(), 1, **_options(name))(g)
        make_agent(name, Counting(), 1, **_options(name))(engine.view(g, g.actor))
    loops = ["random_move", "greedy_move", "mcts_move", "mcts_move"]
    assert calls == [(loop, kind) for loop in loops for kind in ("Game", "View")]
    calls.clear()
    make_agent("greedy", _Without(Counting()), 1)(g)
    assert calls == []


@pytest.fixture(scope="module")
def compiled(compiled_engine: ModuleType) -> ModuleType:
    return compiled_engine


@pytest.mark.parametrize("name", AGENTS)
def test_the_compiled_engine_plays_the_same_moves(
    engine: Any, compiled: ModuleType, name: str
) -> None:
    """The loops compiled with mypyc (`lisboa-rules compile`) play the pure engine's moves for
    the same seed, state after state, on every rule set."""
    assert not str(compiled.__file__).endswith(".py")
    for players, variants in setups(engine)[:: sized(3, 1)]:
        states = _states(engine, players, variants, 100 + players, 11)
        pure = make_agent(name, engine, 8, **_options(name))
        fast = make_agent(name, compiled, 8, **_options(name))
        moves = [pure(g).to_json() for g in states]
        assert [fast(compiled.from_json(engine.to_json(g))).to_json() for g in states] == moves
