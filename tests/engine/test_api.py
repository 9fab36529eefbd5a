"""The engine's module exports its API and nothing else (issue 37): `__all__` is exactly the
list of docs/how-to/ship-the-engine.md, every class and function in it has a docstring of its
own, `from lisboa_engine import *` and `dir()` give that list, the standard library modules it
imports are private, and the version is the package's. The bots for apps (`RandomBot`,
`GreedyBot`, `MctsBot`) are the agents of lisboa_rules/sim, seeded alike, honest, and refuse
to move for a seat that is not to move; the page's server loop runs."""

from __future__ import annotations

import random
import re
import tomllib
from types import ModuleType
from typing import Any

import pytest
from conftest import ROOT

from lisboa_rules.emit.package import DIGITS
from lisboa_rules.sim import make_agent
from lisboa_rules.sim.agents import DEFAULT_HORIZON, DEFAULT_ITERATIONS

PAGE = ROOT / "docs" / "how-to" / "ship-the-engine.md"
SECTION = "## What the module exports"


def documented() -> list[str]:
    """The names the page lists under SECTION, one bullet a group: `- **Group**: `a`, `b``."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :].split("\n## ", 1)[0]
    names: list[str] = []
    for line in section.splitlines():
        if line.startswith("- **"):
            names += re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", line.split("**:", 1)[1])
    return names


def test_all_is_exactly_the_documented_api(engine: ModuleType) -> None:
    names = documented()
    assert len(names) == len(set(names)), "a name listed twice"
    assert sorted(engine.__all__) == sorted(names)
    assert len(engine.__all__) == len(set(engine.__all__))


def test_every_exported_name_exists_and_says_what_it_is(engine: ModuleType) -> None:
    """Each name of `__all__` is bound; each class and function has a docstring of its own
    (not one inherited from `object` or `ValueError`); the rest are data."""
    for name in engine.__all__:
        value = getattr(engine, name)
        if isinstance(value, type):
            doc = vars(value).get("__doc__")
        elif callable(value):
            doc = value.__doc__
        else:
            assert isinstance(value, str | dict), name  # the rules' data and the version
            continue
        assert isinstance(doc, str) and len(doc.strip()) > 20, name
        assert getattr(value, "__module__", engine.__name__) == engine.__name__, name


def test_star_import_and_dir_give_the_api_only(engine: ModuleType) -> None:
    space: dict[str, Any] = {}
    exec(f"from {engine.__name__} import *", space)
    assert sorted(set(space) - {"__builtins__"}) == sorted(engine.__all__)
    listed = dir(engine)
    assert sorted(n for n in listed if not n.startswith("__")) == sorted(engine.__all__)
    assert not any(isinstance(getattr(engine, n), ModuleType) for n in listed)


@pytest.mark.parametrize(
    "name", ["json", "random", "re", "math", "sys", "gc", "dataclass", "replace", "bisect_left"]
)
def test_the_standard_library_it_uses_is_private(engine: ModuleType, name: str) -> None:
    """The module exported `json`, `random` and `dataclass` (issue 37): its imports of the
    standard library are bound to private names."""
    assert not hasattr(engine, name)
    assert name not in dir(engine)


def test_the_version_is_the_package_s(engine: ModuleType) -> None:
    """VERSION (and `__version__`) is the version generated/pyproject.toml installs: the
    compiler's, `+rules` and the first digits of the inputs' hash of the engine's header."""
    from lisboa_rules import __version__

    head = (ROOT / "generated" / "lisboa_engine.py").read_text(encoding="utf-8")[:400]
    digest = re.search(r"Inputs \(sha256\): ([0-9a-f]{64})", head)
    assert digest is not None
    want = f"{__version__}+rules{digest.group(1)[:DIGITS]}"
    assert engine.VERSION == engine.__version__ == want
    project = tomllib.loads((ROOT / "generated" / "pyproject.toml").read_text("utf-8"))
    assert project["project"]["version"] == want


# --- The bots ------------------------------------------------------------------------------------


def _states(E: Any, players: int, seed: int, every: int) -> list[Any]:
    """States of a seeded random game with a choice, every `every` moves."""
    rng = random.Random(seed)
    g = E.new_game(players, (), seed)
    out = []
    n = 0
    while g.phase != "over":
        if n % every == 0 and len(E.legal_moves(g)) > 1:
            out.append(g)
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        n += 1
    return out


BOTS = [
    ("random", lambda E, seed: E.RandomBot(seed)),
    ("greedy", lambda E, seed: E.GreedyBot(seed)),
    ("mcts", lambda E, seed: E.MctsBot(seed, 10, 6)),
    ("mcts-greedy", lambda E, seed: E.MctsBot(seed, 5, 3, True)),
]
BUDGET = {"mcts": {"iterations": 10, "horizon": 6}, "mcts-greedy": {"iterations": 5, "horizon": 3}}


@pytest.mark.parametrize(("name", "make"), BOTS, ids=[b[0] for b in BOTS])
def test_a_bot_is_the_agent_of_its_name(engine: ModuleType, name: str, make: Any) -> None:
    """A bot of a seed plays the moves of the agent of that name and seed (lisboa_rules/sim),
    state after state, given the game or the seat's view; a bot of another seed other ones."""
    E = engine
    states = _states(E, 3, 21, 9 if name.startswith("mcts") else 4)
    agent = make_agent(name, E, 5, **BUDGET.get(name, {}))
    want = [agent(g) for g in states]
    bot = make(E, 5)
    assert [bot.choose(g, g.actor) for g in states] == want
    bot = make(E, 5)
    assert [bot.choose(E.view(g, g.actor), g.actor) for g in states] == want
    assert all(m in E.legal_moves(g) for m, g in zip(want, states, strict=True))
    if name != "greedy":  # greedy's ties are rare: another seed may choose alike everywhere
        other = make(E, "another seed")
        assert [other.choose(g, g.actor) for g in states] != want


@pytest.mark.parametrize(("name", "make"), BOTS, ids=[b[0] for b in BOTS])
def test_a_bot_is_honest_and_leaves_the_game_alone(
    engine: ModuleType, name: str, make: Any
) -> None:
    """A game the seat's view could be (its hidden parts dealt again) gets the same move from
    a bot of the same seed; the game given is not changed."""
    E = engine
    for k, g in enumerate(_states(E, 4, 22, 17)[:4]):
        other = E.determinize(E.view(g, g.actor), random.Random(k))
        before = E.to_json(g)
        assert make(E, 3).choose(g, g.actor) == make(E, 3).choose(other, g.actor)
        assert E.to_json(g) == before


def test_the_compiled_engine_s_bots_play_the_same_moves(
    engine: ModuleType, compiled_engine: ModuleType
) -> None:
    """The bots compiled with mypyc (`lisboa-rules compile`) choose the pure engine's moves for
    the same seed, from the game and from the view."""
    C = compiled_engine
    assert not str(C.__file__).endswith(".py")
    assert sorted(C.__all__) == sorted(engine.__all__) and C.VERSION == engine.VERSION
    assert sorted(n for n in dir(C) if not n.startswith("__")) == sorted(C.__all__)
    for name, make in BOTS:
        states = _states(engine, 3, 23, 15)[:4]
        pure, fast = make(engine, 2), make(C, 2)
        for g in states:
            h = C.from_json(engine.to_json(g))
            want = pure.choose(g, g.actor).to_json()
            assert fast.choose(h, h.actor).to_json() == want, name
            assert make(C, 2).choose(C.view(h, h.actor), h.actor).to_json() == (
                make(engine, 2).choose(engine.view(g, g.actor), g.actor).to_json()
            ), name


def test_the_mcts_bot_has_the_agents_budget(engine: ModuleType) -> None:
    """MctsBot's default budget is the agents' (lisboa_rules/sim/agents.py)."""
    bot = engine.MctsBot(1)
    assert (bot.iterations, bot.horizon, bot.greedy) == (DEFAULT_ITERATIONS, DEFAULT_HORIZON, False)


def test_a_bot_moves_only_for_the_seat_to_move(engine: ModuleType) -> None:
    E = engine
    g = E.new_game(3, (), 4)
    seat = g.actor
    other = (seat + 1) % 3
    for bot in (E.RandomBot(1), E.GreedyBot(1), E.MctsBot(1, 5, 3)):
        with pytest.raises(E.BadArgument, match=f"seat {other} is not to move: seat {seat} is"):
            bot.choose(g, other)
        with pytest.raises(E.BadArgument, match=f"seat {other}'s view"):
            bot.choose(E.view(g, other), seat)
        with pytest.raises(E.BadArgument, match="a spectator's view"):
            bot.choose(E.view(g), seat)
        with pytest.raises(E.BadArgument, match="not str"):
            bot.choose("a save", seat)
        with pytest.raises(E.BadArgument, match="a seat is an int"):
            bot.choose(g, str(seat))


def test_a_bot_says_when_the_game_is_over(engine: ModuleType) -> None:
    E = engine
    g = E.new_game(2, (), 5)
    bot = E.RandomBot(5)
    while g.phase != "over":
        g = E.apply_move(g, bot.choose(g, g.actor))
    for other in (E.RandomBot(1), E.GreedyBot(1), E.MctsBot(1, 5, 3)):
        for state in (g, E.view(g, 0)):
            with pytest.raises(E.BadArgument, match="no move to choose: the game is over"):
                other.choose(state, 0)


@pytest.mark.parametrize(
    "args",
    [(1.5,), (None,), (True,), (1, 0), (1, True), (1, 5, 0), (1, 5, "8"), (1, 5, 3, 1)],
)
def test_a_bot_refuses_a_seed_or_budget_that_is_none(engine: ModuleType, args: Any) -> None:
    make = engine.MctsBot if len(args) > 1 else engine.GreedyBot
    with pytest.raises(engine.BadArgument, match=r"seed|iteration|horizon|greedy"):
        make(*args)


def test_the_page_s_python_runs(engine: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of the page runs against the engine of generated/ (the server
    loop plays a whole game with its bots)."""
    import sys

    monkeypatch.setitem(sys.modules, "lisboa_engine", engine)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), {"print": lambda *a: None})
