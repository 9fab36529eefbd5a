"""A state's JSON data (`_state_data`, under `to_json`, `view`, `record`/`events` and saves) is
made by `_game_data` / `_player_data`, printed from rules/state.yaml field by field in the
declared shapes (issue 36). They make exactly what the generic walk made: each field through
`_plain` (players' fields at depth 2). Here the generic form is kept as the reference and run in
lockstep with the printed one: on every state of seeded random games of every rule set, and on
states changed by hand to values of no declared shape (objects, NaN, lists nested past
`_NESTING`, a list that holds itself, tuples, int keys...), where both make the same data or
raise the same exception with the same words."""

from __future__ import annotations

import collections
import json
import math
import random
from pathlib import Path
from typing import Any

import optional
import pytest
from conftest import ENGINES, pure_or_compiled, set_field, setups, sized


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest, engine: Any) -> Any:
    return pure_or_compiled(request, engine)


def generic_state_data(E: Any, g: Any) -> dict[str, Any]:
    """The runtime's `_state_data` before the printed form: every field through `_plain`."""
    data: dict[str, Any] = {}
    for name in E._GAME_FIELDS:
        if name == "players":
            data[name] = [
                {f: E._plain(getattr(p, f), 2) for f in E._PLAYER_FIELDS} for p in g.players
            ]
        else:
            data[name] = E._plain(getattr(g, name))
    folded = E._folded()
    if folded:
        data["variants"] = sorted([*folded, *data["variants"]])
    return data


def outcome(make: Any) -> tuple[Any, ...]:
    """What `make()` gives: the data and its sorted JSON text, or the exception's type and
    words."""
    try:
        data = make()
    except Exception as exc:  # which one, and its words, is what is compared
        return ("raised", type(exc), str(exc))
    try:
        text = json.dumps(data, sort_keys=True, allow_nan=False)
    except Exception as exc:  # not JSON after all: compared as well
        text = f"dumps raised {type(exc).__name__}: {exc}"
    return ("made", data, text)


def containers(value: Any, seen: set[int]) -> set[int]:
    """The ids of the lists, tuples and dicts inside `value` (stopping at the ones seen)."""
    if isinstance(value, list | tuple | dict) and id(value) not in seen:
        seen.add(id(value))
        for item in value.values() if isinstance(value, dict) else value:
            containers(item, seen)
    return seen


def assert_same(E: Any, g: Any, what: str) -> tuple[Any, ...]:
    want = outcome(lambda: generic_state_data(E, g))
    got = outcome(lambda: E._state_data(g))
    assert got[0] == want[0], f"{what}: {got[0]} {got[1:]!r:.300} where the generic {want[0]}"
    if want[0] == "raised":
        assert got[1:] == want[1:], what
    else:
        assert got[2] == want[2], what
        assert got[1] == want[1], what
    return got


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int) -> list[Any]:
    rng = random.Random(f"state-data:{players}:{variants}:{seed}")
    g = E.new_game(players, variants, seed)
    out = [g]
    for _ in range(sized(80, 400)):
        moves = E.legal_moves(g)
        if not moves:
            break
        g = E.apply_move(g, rng.choice(moves))
        out.append(g)
    return out


def test_every_state_of_random_games_of_every_rule_set(engine: Any) -> None:
    E = engine
    made = 0
    for players, variants in setups(E):
        for seed in range(sized(1, 3)):
            for i, g in enumerate(_states(E, players, variants, seed)):
                what = f"{players} players, {variants}, seed {seed}, state {i}"
                got = assert_same(E, g, what)
                assert got[0] == "made", what
                made += 1
                # a copy: no list or table of the data is one of the state's
                held: set[int] = set()
                for name in E._GAME_FIELDS:
                    containers(getattr(g, name), held)
                for p in g.players:
                    for f in E._PLAYER_FIELDS:
                        containers(getattr(p, f), held)
                assert not containers(got[1], set()) & held, what
                assert E.to_json(E.from_json(json.loads(got[2]))) == got[1], what
    assert made > len(setups(E))


class _Odd:
    """A value no saved game holds (not even JSON)."""


class _BadKey:
    """A table key whose words cannot be made."""

    def __str__(self) -> str:
        raise ValueError("a key with no words")


class _Text(str):
    pass


class _Number(int):
    pass


class _Items(list):  # type: ignore[type-arg]
    pass


def _nested(depth: int, inner: Any = 1) -> Any:
    out = inner
    for _ in range(depth):
        out = [out]
    return out


def _holds_itself() -> list[Any]:
    out: list[Any] = [1]
    out.append(out)
    return out


def _table_holds_itself() -> dict[str, Any]:
    out: dict[str, Any] = {"a": 1}
    out["b"] = out
    return out


# Values of no declared shape (and some of one), each made afresh for every field it is set to.
HOSTILE: list[Any] = [
    _Odd,
    lambda: math.nan,
    lambda: math.inf,
    lambda: -math.inf,
    lambda: 1.5,
    lambda: True,
    lambda: False,
    lambda: None,
    lambda: "x",
    lambda: _Text("x"),
    lambda: 7,
    lambda: [_Number(7)],  # (a compiled Game keeps an int of an int field)
    lambda: (),
    lambda: (1, "a"),
    lambda: [],
    lambda: {},
    lambda: [1, "a", None, True, 2.5],
    lambda: [_Odd()],
    lambda: [math.nan],
    lambda: ["a", [1, (2, 3)]],
    lambda: {1: 2},
    lambda: {(1, 2): "a", None: [True]},
    lambda: {"a": None},
    lambda: {"a": (1, 2)},
    lambda: {"a": [1, _Odd()]},
    lambda: {"a": {"b": [1, {2: math.inf}]}},
    lambda: {_BadKey(): 1},
    lambda: {"a": {_BadKey(): 1}},
    lambda: collections.OrderedDict(a=[1]),
    lambda: collections.defaultdict(list, a=[2]),
    lambda: _Items([1, 2]),
    lambda: {"a": _Items(["b"])},
    _holds_itself,
    _table_holds_itself,
    lambda: [_holds_itself()],
    lambda: _nested(40),
    lambda: _nested(29),
    lambda: _nested(30),
    lambda: _nested(31),
    lambda: _nested(32),
    lambda: _nested(33),
    lambda: {"a": _nested(30)},
    lambda: {"a": _nested(31, _Odd())},
    lambda: {"a": {"b": _nested(29, math.nan)}},
]


@pytest.mark.parametrize("who", ["game", "player"])
def test_a_state_changed_by_hand_makes_the_same_data_or_error(engine: Any, who: str) -> None:
    E = engine
    base = _states(E, 3, (), 5)[-1]
    names = (
        [n for n in E._GAME_FIELDS if n != "players"] if who == "game" else list(E._PLAYER_FIELDS)
    )
    kinds: set[str] = set()
    for name in names:
        for make in HOSTILE:
            g = base.clone()
            value = make()
            if not set_field(E, g if who == "game" else g.players[1], name, value):
                continue  # the compiled engine refused it at the assignment
            kinds.add(assert_same(E, g, f"{who}.{name} = {value!r:.80}")[0])
    assert kinds == {"made", "raised"}


def test_the_players_changed_by_hand(engine: Any) -> None:
    E = engine
    base = _states(E, 2, (), 9)[-1]
    for change in ("tuple", "none", "odd", "number", "no-field", "duck"):
        g = base.clone()
        if change == "tuple":
            value: Any = tuple(g.players)
        elif change == "none":
            value = None
        elif change == "odd":
            value = [g.players[0], _Odd()]
        elif change == "number":
            value = [5, g.players[0]]
        elif change == "no-field":
            value = [g.players[0], g.players[1]]
            if not hasattr(g.players[1], "__dict__"):
                try:
                    delattr(g.players[1], E._PLAYER_FIELDS[3])
                except (AttributeError, TypeError):  # the compiled engine's classes
                    continue
        else:  # an object with a player's fields, not a Player
            duck = _Odd()
            for f in E._PLAYER_FIELDS:
                setattr(duck, f, getattr(g.players[1], f))
            value = [g.players[0], duck]
        if set_field(E, g, "players", value):
            assert_same(E, g, f"players: {change}")


def test_a_field_taken_away(engine: Any) -> None:
    E = engine
    for name in E._GAME_FIELDS:
        g = _states(E, 2, (), 3)[-1].clone()
        try:
            delattr(g, name)
        except (AttributeError, TypeError):  # the compiled engine's classes
            continue
        got = assert_same(E, g, f"del g.{name}")
        assert got[:2] == ("raised", AttributeError)


# --- the printed code of shapes the rules of this game do not declare -----------------------

SHAPES = [
    "int",
    "int?",
    "bool",
    "bool?",
    "text",
    "seat?",
    "card",
    "noble?",
    "player",
    "list[int]",
    "list[bool]?",
    "list[text?]",
    "list[list[card]]",
    "map[card, int]",
    "map[noble, text]?",
    "map[noble, map[card, list[bool]]]",
    "map[noble, list[text?]]?",
]


def _shaped(t: Any, rng: random.Random, odd: float) -> Any:
    """A value of the declared type `t`, with now and then (`odd`) a value of no shape."""
    if rng.random() < odd or (t.optional and rng.random() < 0.2):
        return rng.choice(HOSTILE)()
    if t.name == "list":
        return [_shaped(t.args[0], rng, odd) for _ in range(rng.randrange(4))]
    if t.name == "map":
        return {
            _shaped(t.args[0], rng, 0): _shaped(t.args[1], rng, odd)
            for _ in range(rng.randrange(4))
        }
    if t.name in ("int", "seat", "card"):
        return rng.randrange(-3, 300)
    if t.name == "bool":
        return rng.random() < 0.5
    return rng.choice(["a", "b", "c-d", ""])


@pytest.mark.parametrize("shape", SHAPES)
def test_the_printed_code_of_any_declared_shape_is_plain(shape: str) -> None:
    """`data_code` of a type, run on values of it and of no shape at several depths, makes
    what the runtime's `_plain` makes, or raises what it raises."""
    from lisboa_rules.emit.engine.state_classes import data_code, flat
    from lisboa_rules.model.state import StateDecl, StateKind, parse_type
    from lisboa_rules.runtime import engine as runtime

    decl = StateDecl(
        (StateKind("card", "int", None, "a card"), StateKind("noble", "text", None, "a noble"))
    )
    t = parse_type(shape)
    rng = random.Random(f"shape:{shape}")
    kinds: set[str] = set()
    for depth in (0, 2, 28, 30):
        code = compile(flat(data_code(t, decl, "v", depth)), shape, "eval")
        for i in range(sized(150, 600)):
            value = _shaped(t, rng, 0.0 if i % 3 == 0 else 0.15)
            scope = {"_plain": runtime._plain, "v": value}
            want = outcome(lambda v=value, d=depth: runtime._plain(v, d))
            got = outcome(lambda s=scope, c=code: eval(c, s))
            what = f"{shape} at depth {depth}: {value!r:.200}"
            assert got[0] == want[0], what
            assert got[1:] == want[1:] if want[0] == "raised" else got[2] == want[2], (
                f"{what}: {got[1:]} where the generic {want[1:]}"
            )
            if want[0] == "made":
                assert got[1] == want[1], what
            kinds.add(want[0])
    assert kinds == {"made", "raised"}


def test_the_printed_code_of_every_shape_is_as_ruff_formats_it(tmp_path: Path) -> None:
    """The lines `lay` gives each shape's code, under names of every length (each a field of
    a house rule's state), are those `ruff format` writes: the generated engine stays
    formatted whatever the state declares."""
    import subprocess

    from lisboa_rules.emit.engine.state_classes import data_code, lay
    from lisboa_rules.model.state import StateDecl, StateKind, parse_type

    ruff = optional.tool("ruff")
    decl = StateDecl(
        (StateKind("card", "int", None, "a card"), StateKind("noble", "text", None, "a noble"))
    )
    lines = ["from typing import Any", "", "", "def f(v: Any, d: dict[str, Any]) -> None:"]
    for shape in SHAPES:
        for depth in (0, 2):
            for length in (1, 8, 16, 24, 32, 40, 48):
                name = ("f" + "x" * length)[:length] or "f"
                lines += lay(
                    data_code(parse_type(shape), decl, "v", depth), "    ", f'd["{name}"] = '
                )
    path = tmp_path / "shapes.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [ruff, "format", "--isolated", "--line-length", "100", "--diff", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[:3000]
