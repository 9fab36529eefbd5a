"""The agents of lisboa_rules/sim/agents.py: legal, deterministic, generic, and greedy plays
better than random."""

from __future__ import annotations

import copy
import gc
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from lisboa_rules.sim import make_agent
from lisboa_rules.sim.agents import AGENTS
from lisboa_rules.sim.runner import play_game

sys.path.insert(0, str(ROOT / "tests" / "project"))
from test_runtime_generic import NOUNS, nouns_in

SIM = ROOT / "lisboa_rules" / "sim"
FAST = {"iterations": 12, "horizon": 8}  # MCTS kept small: the tests check behaviour only


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int, every: int) -> list[Any]:
    """States of a random game, every `every` moves."""
    rng = random.Random(seed)
    g = E.new_game(players, variants, seed)
    out = []
    n = 0
    while g.phase != "over":
        if n % every == 0:
            out.append(g)
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1
    return out


@pytest.mark.parametrize("path", sorted(SIM.glob("*.py")), ids=lambda p: p.name)
def test_the_sim_package_names_no_game_noun(path: Path) -> None:
    found = nouns_in(path.read_text(encoding="utf-8"), NOUNS)
    assert not found, f"{path.relative_to(ROOT)} names the game:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize(
    ("players", "variants", "seed"), [(2, (), 3), (3, ("queen",), 8), (4, (), 21)]
)
def test_agents_only_play_listed_moves_and_leave_the_state_alone(
    engine: Any, name: str, players: int, variants: tuple[str, ...], seed: int
) -> None:
    agent = make_agent(name, engine, seed, **FAST)
    for g in _states(engine, players, variants, seed, 23 if name.startswith("mcts") else 7):
        before = copy.deepcopy(engine.to_json(g))
        move = agent(g)
        assert move in engine.legal_moves(g)
        assert engine.to_json(g) == before


@pytest.mark.sampled(3)
@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize("seed", [1, 2])
def test_agents_are_deterministic_for_a_seed(engine: Any, name: str, seed: int) -> None:
    states = _states(engine, 3, (), 40 + seed, 19)
    first = [make_agent(name, engine, seed, **FAST)(g) for g in states]
    again = [make_agent(name, engine, seed, **FAST)(g) for g in states]
    assert first == again
    if name != "mcts-greedy":  # another seed plays otherwise somewhere
        other = [make_agent(name, engine, seed + 100, **FAST)(g) for g in states]
        assert other != first


def test_a_whole_game_is_the_same_for_the_same_seed(engine: Any) -> None:
    a = play_game(engine, 3, (), 5, 0, ("greedy", "random", "mcts"), _fast_options())
    b = play_game(engine, 3, (), 5, 0, ("greedy", "random", "mcts"), _fast_options())
    assert a == b


class _Watched:
    """An engine whose every call notes whether the cyclic garbage collector was on."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.seen: set[bool] = set()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._engine, name)
        if not callable(found) or isinstance(found, type):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            self.seen.add(gc.isenabled())
            return found(*args, **kwargs)

        return call


@pytest.mark.parametrize("enabled", [True, False])
def test_a_game_pauses_the_cyclic_gc_and_leaves_it_as_it_was(engine: Any, enabled: bool) -> None:
    """The engine's states make no reference cycles, so a game is played with the cyclic
    collector paused (it walked the states a greedy agent compares); the collector is left as
    the caller had it, and the game is the same."""
    watched = _Watched(engine)
    was = gc.isenabled()
    try:
        if not enabled:
            gc.disable()
        got = play_game(watched, 2, (), 11, 0, ("greedy", "random"))
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
    assert watched.seen == {False}
    assert got == play_game(engine, 2, (), 11, 0, ("greedy", "random"))


def test_a_game_makes_no_reference_cycles(engine: Any) -> None:
    """What makes pausing the collector safe: nothing a game leaves behind needs it."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds unreachable stays in gc.garbage
    try:
        play_game(engine, 3, (), 12, 0, ("greedy", "random", "mcts"), _fast_options())
        gc.collect()
        mine = (engine.Game, engine.Player, engine.Move)
        cycles = [x for x in gc.garbage if isinstance(x, mine)]  # (other threads' are theirs)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert cycles == []


def _fast_options() -> Any:
    from lisboa_rules.sim.runner import Options

    return Options(**FAST)


def test_an_unknown_agent(engine: Any) -> None:
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("clever", engine, 1)


def _greedy_wins(E: Any, games: int) -> int:
    wins = 0
    for i in range(games):
        r = play_game(E, 2, (), 7000 + i, i, ("greedy", "random"))
        greedy = r.lineup.index("greedy")
        wins += r.first == [greedy]
    return wins


def test_greedy_beats_random(engine: Any) -> None:
    """100 two-player games, greedy in each seat half the time: a fair coin wins 70 or more
    with probability below 1 in 20,000."""
    assert _greedy_wins(engine, 100) >= 70


@pytest.mark.slow
def test_greedy_beats_random_in_80_percent_of_1000_games(engine: Any) -> None:
    assert _greedy_wins(engine, 1000) >= 800


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 6), (4, 7)])
def test_greedy_picks_a_move_of_the_best_estimate(engine: Any, players: int, seed: int) -> None:
    """One ply: the move greedy plays leads to the best margin (the mover's total on the
    engine's score sheet minus the best other total) of all the legal moves."""
    agent = make_agent("greedy", engine, seed)
    for g in _states(engine, players, (), seed, 11):
        seat = g.actor

        def margin(move: Any, g: Any = g, seat: int = seat) -> int:
            totals = engine.final_scores(engine.apply_move(g, move)).totals
            return totals[seat] - max(t for i, t in enumerate(totals) if i != seat)

        best = max(margin(m) for m in engine.legal_moves(g))
        assert margin(agent(g)) == best


# The agents' loops an engine may have (lisboa_rules/runtime/engine.py): an engine without them
# (made before issue 36) is played by the agents' own loops.
INNER_LOOPS = ("random_move", "greedy_move", "mcts_move", "redeal", "playout")


class _WithTotals:
    """The engine without its inner loops (the agents run their own, which read the engine's
    scores), with a numbers-only `final_totals` that counts its calls (and a `final_scores`
    that fails: an agent must not need it then)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        if name in INNER_LOOPS:
            raise AttributeError(name)
        return getattr(self.engine, name)

    def final_totals(self, state: Any) -> tuple[int, ...]:
        self.calls += 1
        return tuple(self.engine.final_scores(state).totals)

    def final_scores(self, state: Any) -> Any:
        raise AssertionError("final_scores called although the engine has final_totals")


def test_greedy_uses_final_totals_when_the_engine_has_it(engine: Any) -> None:
    """Greedy reads the engine's numbers-only `final_totals` when there is one (and plays the
    same moves as over `final_scores`), else the totals of `final_scores`."""
    fast = _WithTotals(engine)
    states = [g for g in _states(engine, 3, (), 12, 9) if len(engine.legal_moves(g)) > 1]
    plain = [make_agent("greedy", engine, 4)(g) for g in states]
    assert [make_agent("greedy", fast, 4)(g) for g in states] == plain
    assert fast.calls >= len(states)


def _finished(E: Any) -> Any:
    g = E.new_game(2, (), 5)
    rng = random.Random(5)
    while g.phase != "over":
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    return g


@pytest.mark.parametrize("name", AGENTS)
def test_an_agent_asked_to_move_in_a_finished_game_says_so(engine: Any, name: str) -> None:
    """A bot of an app asked for a move after the end: IndexError ('Cannot choose from an
    empty sequence') or 'max() arg is an empty sequence'; now a ValueError that says why."""
    agent = make_agent(name, engine, 1, **FAST)
    with pytest.raises(ValueError, match="no move"):
        agent(_finished(engine))


@pytest.mark.parametrize(
    "options", [{"iterations": 0}, {"iterations": -5}, {"iterations": True}, {"iterations": 2.5},
                {"horizon": 0}, {"horizon": -1}, {"horizon": "8"}],
)
def test_mcts_refuses_a_budget_that_is_none(engine: Any, options: dict[str, Any]) -> None:
    """iterations 0 raised 'max() arg is an empty sequence' at the first move; a horizon of 0
    or less was read as no playout at all. Both are refused when the agent is made."""
    with pytest.raises(ValueError, match=r"iteration|horizon"):
        make_agent("mcts", engine, 1, **options)


@pytest.mark.parametrize("seed", [None, 1.5, True, [1], object()])
def test_an_agent_seed_is_an_int_or_a_str(engine: Any, seed: Any) -> None:
    """Any object was formatted into the seed: object() by its address, so the same call gave
    other moves in another process."""
    with pytest.raises(ValueError, match="seed"):
        make_agent("random", engine, seed)


@pytest.mark.sampled(5)
@pytest.mark.parametrize("name", AGENTS)
@pytest.mark.parametrize(("players", "variants"), [(2, ()), (3, ()), (4, ()), (3, ("queen",))])
def test_an_agent_decides_from_what_its_seat_sees(
    engine: Any, name: str, players: int, variants: tuple[str, ...]
) -> None:
    """Honest agents: a game that differs only where the seat to move cannot see (the
    others' hands, the decks' order, the seed: `determinize` of its view) gets the same move
    from an agent of the same seed, and so does the view itself."""
    rng = random.Random(players)
    options = FAST if name.startswith("mcts") else {}
    for g in _states(engine, players, variants, 30 + players, 13):
        if g.phase == "over" or len(engine.legal_moves(g)) < 2:
            continue
        view = engine.view(g, g.actor)
        other = engine.determinize(view, rng)
        assert other.seed != g.seed
        moves = [make_agent(name, engine, 9, **options)(s) for s in (g, other, view)]
        assert moves[0] == moves[1] == moves[2]
        assert moves[0] in engine.legal_moves(g)


def test_an_agent_reads_no_hidden_field(engine: Any) -> None:
    """The agents are handed a game whose hidden fields cannot be read (each raises on
    access); they play on, from the view alone."""
    g = _states(engine, 3, (), 8, 10)[3]

    class Sealed:
        def __init__(self, game: Any) -> None:
            self.game = game

        def __getattr__(self, name: str) -> Any:
            if name in ("seed", "reserve", "box", "decree_deck"):
                raise AssertionError(f"an agent read the hidden field {name}")
            return getattr(self.game, name)

    class Engine:
        def __getattr__(self, name: str) -> Any:
            return getattr(engine, name)

        def view(self, state: Any, seat: int) -> Any:
            return engine.view(state.game if isinstance(state, Sealed) else state, seat)

    for name in AGENTS:
        move = make_agent(name, Engine(), 3, **(FAST if name.startswith("mcts") else {}))(
            Sealed(g))
        assert move in engine.legal_moves(g)
