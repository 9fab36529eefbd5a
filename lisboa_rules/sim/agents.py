"""Agents that play any generated engine through its public API alone.

An agent is one function, state -> move: `make_agent(name, engine, seed)` returns it, ready
to be a bot in a game app (it never changes the state it is given, and it only ever returns
one of `engine.legal_moves(state)`). The same name, engine, seed and sequence of states give
the same moves.

Agents are honest: given a game, an agent reads only what its seat may see,
`engine.view(game, game.actor)` (rules/state.yaml `see:`), and given that view it chooses
the same move. Where it needs a whole game to try moves on, it deals what the view hides at
random (`engine.determinize(view, rng)`, drawn from its own seeded generator): it never sees
the others' hands, the order of a deck or the seed of the game's shuffles. (An engine
without views, made before them, is read whole.)

- `random`: a move drawn uniformly among the legal ones.
- `greedy`: one ply, on one game the view could be (`determinize`). Each legal move is played
  on it (its `successors`: each legal move with the state after it, computed once; an engine
  without it: `legal_moves`, then `apply_move` of each) and the state after it is scored
  with the engine's own `final_totals` (or the totals of its `final_scores` sheet when it has
  none): the points on the score track plus every scoring source of the data, as if the game
  ended there. The estimate is the mover's total minus the best total of the others; the best
  estimate wins, ties are broken by the agent's seeded generator.
- `mcts`: information-set UCT (determinized: each iteration deals a new game the view could
  be) with a budget of iterations; each iteration walks down the tree of moves (a move the
  dealt game does not allow is passed over), adds one node and finishes the game with
  `random` moves (or `greedy` ones: `mcts-greedy`), at most `horizon` moves deep, and scores
  the end as a win share for each seat (1 / the number of seats sharing first place, by the
  engine's `ranking` over the same estimate when the game is not over yet). The search stops
  before its budget once no other root move can be played more often than the most played
  one (the same choice, sooner).

An engine made since issue 36 has these agents' inner loops in it (`random_move`, `greedy_move`,
`mcts_move`, over `redeal`: a game the view could be, dealt from the game itself without the
view's JSON), so that a compiled engine runs them compiled: given one of the engine's games, an
agent calls them, and they draw from the agent's generator exactly as the loops here do (the same
moves for the same seed). An engine made since issue 37 also gives them to apps as its bots
(`RandomBot`, `GreedyBot`, `MctsBot`: these agents, seeded alike) and its loops take the mover's
view too: an agent hands them the view of anything that is not one of the engine's games. The
loops here play only for an engine made before them (and are the reference the engine's loops
are checked against: tests/sim/test_inner_loops.py).

Nothing here knows the game: moves are opaque values, states are read only for `phase`,
`actor` and `players` (their number), and the rest is the engine's functions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Agent = Callable[[Any], Any]
"""state -> move (one of the engine's legal moves for that state)."""

OVER = "over"  # the phase of a finished game (the engine's word)

AGENTS = ("random", "greedy", "mcts", "mcts-greedy")
DEFAULT_ITERATIONS = 200
# Moves a playout plays before it is scored by the estimate. Listing the legal moves at each
# step is most of an MCTS move's time (benchmarks/run.py, balance.mcts_move): 20 keeps a move of
# 200 iterations within about 1 s of CPU in the longest positions (40 took up to 1.4 s).
DEFAULT_HORIZON = 20
EXPLORATION = math.sqrt(2)


def make_agent(
    name: str,
    engine: Any,
    seed: int | str,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    horizon: int | None = DEFAULT_HORIZON,
) -> Agent:
    """The agent `name` (one of AGENTS) over `engine`, seeded with `seed` (an int or a str:
    what the moves depend on, in any process); ValueError for anything else, and for an MCTS
    budget of no iterations or a horizon of no moves."""
    if type(seed) not in (int, str):
        raise ValueError(f"an agent's seed is an int or a str, not {type(seed).__name__}")
    if name in ("mcts", "mcts-greedy"):
        if type(iterations) is not int or iterations < 1:
            raise ValueError(f"MCTS needs at least 1 iteration a move, not {iterations!r}")
        if horizon is not None and (type(horizon) is not int or horizon < 1):
            raise ValueError(
                f"an MCTS playout's horizon is at least 1 move (or None: to the "
                f"end), not {horizon!r}"
            )
    rng = random.Random(f"{name}:{seed}")
    if name == "random":
        return RandomAgent(engine, rng)
    if name == "greedy":
        return GreedyAgent(engine, rng)
    if name in ("mcts", "mcts-greedy"):
        rollout: RandomAgent | GreedyAgent = (
            GreedyAgent(engine, rng) if name == "mcts-greedy" else RandomAgent(engine, rng)
        )
        return MctsAgent(engine, rng, rollout, iterations, horizon)
    raise ValueError(f"unknown agent {name!r} (known: {', '.join(AGENTS)})")


def totals_of(engine: Any) -> Callable[[Any], Sequence[int]]:
    """state -> each seat's total as if the game ended now: the engine's `final_totals` when it
    has one (the totals alone, without the score sheet's lines and explanations), else the
    totals of its `final_scores` sheet (the same numbers)."""
    fast = getattr(engine, "final_totals", None)
    if callable(fast):
        return fast  # type: ignore[no-any-return]
    final_scores = engine.final_scores

    def totals(state: Any) -> Sequence[int]:
        return final_scores(state).totals  # type: ignore[no-any-return]

    return totals


def estimate(engine: Any, state: Any) -> tuple[int, ...]:
    """Each seat's total as if the game ended now (`totals_of`)."""
    return tuple(totals_of(engine)(state))


def margin(totals: Sequence[int], seat: int) -> int:
    """A seat's total minus the best total of the others."""
    best_other = max((t for i, t in enumerate(totals) if i != seat), default=0)
    return totals[seat] - best_other


def inner_loop(engine: Any, name: str, state: Any) -> tuple[Callable[..., Any], Any] | None:
    """The engine's own loop `name` (`random_move`, `greedy_move`, `mcts_move`) and what to
    give it, when it has one: `state` when it is one of the engine's games; otherwise, for an
    engine whose loops take views (one with bots), the mover's view of `state`. Else None."""
    loop = getattr(engine, name, None)
    if not callable(loop):
        return None
    game = getattr(engine, "Game", None)
    if isinstance(game, type) and isinstance(state, game):
        return loop, state
    if not callable(getattr(engine, "MctsBot", None)):
        return None  # made before its loops took views (issue 37)
    seen = seen_by_actor(engine, state)
    shown = getattr(engine, "View", None)
    if isinstance(shown, type) and isinstance(seen, shown):
        return loop, seen
    return None


@dataclass
class RandomAgent:
    """A legal move drawn uniformly."""

    engine: Any
    rng: random.Random

    def __call__(self, state: Any) -> Any:
        found = inner_loop(self.engine, "random_move", state)
        if found is not None:
            loop, given = found
            return loop(given, self.rng)
        seen = seen_by_actor(self.engine, state)
        return self.choose(seen, _listed(self.engine, seen))

    def choose(self, state: Any, moves: Sequence[Any]) -> Any:
        """The move among `moves` (the legal moves of `state`, listed by the caller)."""
        return self.rng.choice(moves)


def seen_by_actor(engine: Any, state: Any) -> Any:
    """What the seat to move may see of `state`: its view (a view is kept as it is), or the
    state itself for an engine without views."""
    view = getattr(engine, "view", None)
    if view is None or isinstance(state, engine.View):
        return state
    return view(state, state.actor)


def dealt(engine: Any, seen: Any, rng: random.Random) -> Any:
    """A whole game `seen` could be (`determinize`): `seen` itself when it is no view."""
    if hasattr(engine, "View") and isinstance(seen, engine.View):
        return engine.determinize(seen, rng)
    return seen


def _listed(engine: Any, state: Any) -> Sequence[Any]:
    """The legal moves of `state`; ValueError when there is none (the game is over)."""
    moves: Sequence[Any] = engine.legal_moves(state)
    if not moves:
        raise ValueError(f"no move to choose: the game is {state.phase}")
    return moves


@dataclass
class GreedyAgent:
    """The legal move whose resulting state has the best estimate for the mover."""

    engine: Any
    rng: random.Random
    totals: Callable[[Any], Sequence[int]] = field(init=False, repr=False)
    # the engine's `successors` (each legal move with the state after it, computed once), or
    # None: then each listed move is played with `apply_move` (the same pairs, checked again)
    successors: Callable[[Any], Sequence[tuple[Any, Any]]] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.totals = totals_of(self.engine)
        found = getattr(self.engine, "successors", None)
        self.successors = found if callable(found) else None

    def __call__(self, state: Any) -> Any:
        found = inner_loop(self.engine, "greedy_move", state)
        if found is not None:
            loop, given = found
            return loop(given, self.rng)
        seen = seen_by_actor(self.engine, state)
        if seen.phase == OVER:
            raise ValueError(f"no move to choose: the game is {seen.phase}")
        game = dealt(self.engine, seen, self.rng)
        if self.successors is None:
            return self.choose(game, _listed(self.engine, game))
        pairs = self.successors(game)
        if not pairs:
            raise ValueError(f"no move to choose: the game is {game.phase}")
        if len(pairs) == 1:
            return pairs[0][0]
        return self._best(game.actor, pairs)

    def choose(self, state: Any, moves: Sequence[Any]) -> Any:
        """The move among `moves` (the legal moves of `state`, listed by the caller)."""
        if len(moves) == 1:
            return moves[0]
        apply_move = self.engine.apply_move
        return self._best(state.actor, [(m, apply_move(state, m)) for m in moves])

    def _best(self, seat: int, pairs: Sequence[tuple[Any, Any]]) -> Any:
        """The move of the best (move, state after it) pair for `seat`; ties drawn."""
        totals = self.totals
        best: list[Any] = []
        best_value = -math.inf
        for move, after in pairs:
            t = list(totals(after))
            mine = t.pop(seat)
            value = mine - max(t, default=0)  # margin(t, seat)
            if value > best_value:
                best_value, best = value, [move]
            elif value == best_value:
                best.append(move)
        return best[0] if len(best) == 1 else self.rng.choice(best)


@dataclass
class _Node:
    """A node of the tree of moves: what the moves below it scored, over every game dealt."""

    seat: int  # who moves here (-1 when the game is over)
    children: dict[Any, _Node] = field(default_factory=dict)  # by move, in the order tried
    plays: int = 0
    shares: list[float] = field(default_factory=list)  # summed win share per seat
    seen: int = 0  # how often it could be chosen: its parent visited with its move legal


def _settled(children: list[_Node], left: int) -> bool:
    """Whether the most played child stays the most played whatever the `left` iterations do
    (they can add at most `left` plays to another one)."""
    first = second = 0
    for c in children:
        if c.plays > first:
            first, second = c.plays, first
        elif c.plays > second:
            second = c.plays
    return first - second > left


@dataclass
class MctsAgent:
    """Information-set UCT over `iterations` iterations, each on a new game the view could
    be; the most played move of the root is played."""

    engine: Any
    rng: random.Random
    rollout: RandomAgent | GreedyAgent
    iterations: int = DEFAULT_ITERATIONS
    horizon: int | None = DEFAULT_HORIZON

    def __call__(self, state: Any) -> Any:
        found = inner_loop(self.engine, "mcts_move", state)
        if found is not None and self.rollout.rng is self.rng:
            loop, given = found
            greedy = isinstance(self.rollout, GreedyAgent)
            return loop(given, self.rng, self.iterations, self.horizon, greedy, EXPLORATION)
        seen = seen_by_actor(self.engine, state)
        moves = _listed(self.engine, seen)
        if len(moves) == 1:
            return moves[0]
        seats = len(seen.players)
        root = _Node(seen.actor, shares=[0.0] * seats)
        legal_moves, apply_move = self.engine.legal_moves, self.engine.apply_move
        for done in range(self.iterations):
            if len(root.children) == len(moves) and _settled(
                list(root.children.values()), self.iterations - done
            ):
                break  # no other move can be played more often: the choice is made
            game = dealt(self.engine, seen, self.rng)
            path = [root]
            node = root
            listed: Sequence[Any] = moves
            while True:
                if game.phase == OVER:
                    break
                if node is not root:
                    listed = legal_moves(game)
                untried = [m for m in listed if m not in node.children]
                if untried:  # expansion: one untried move, drawn at random
                    move = untried[self.rng.randrange(len(untried))]
                    game = apply_move(game, move)
                    child = _Node(game.actor if game.phase != OVER else -1, shares=[0.0] * seats)
                    node.children[move] = child
                    for m in listed:
                        if m in node.children:
                            node.children[m].seen += 1
                    path.append(child)
                    break
                # selection: among the moves this game allows, by UCT
                for m in listed:
                    node.children[m].seen += 1
                move = self._select(node, listed)
                game = apply_move(game, move)
                node = node.children[move]
                path.append(node)
            shares = self._playout(game, seats)
            for n in path:
                n.plays += 1
                for i, sh in enumerate(shares):
                    n.shares[i] += sh
        # the most played move; ties by the higher share, then by the order of legal_moves
        best = max(
            moves,
            key=lambda m: (
                (root.children[m].plays, root.children[m].shares[root.seat])
                if m in root.children
                else (-1, 0.0)
            ),
        )
        return best

    def _select(self, node: _Node, listed: Sequence[Any]) -> Any:
        seat = node.seat

        def uct(m: Any) -> float:
            c = node.children[m]
            return c.shares[seat] / c.plays + EXPLORATION * math.sqrt(math.log(c.seen) / c.plays)

        return max(listed, key=uct)

    def _playout(self, state: Any, seats: int) -> list[float]:
        """Play on from a dealt game (at most `horizon` moves) and score the end as win
        shares per seat."""
        apply_move, legal_moves = self.engine.apply_move, self.engine.legal_moves
        choose = self.rollout.choose
        steps = 0
        while state.phase != OVER and (self.horizon is None or steps < self.horizon):
            state = apply_move(state, choose(state, legal_moves(state)))
            steps += 1
        first = self.engine.ranking(state).places[0]
        shares = [0.0] * seats
        for seat in first:
            shares[seat] = 1.0 / len(first)
        return shares
