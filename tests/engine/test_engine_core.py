"""The generated engine's contract: setup, determinism, Influence, illegal moves, legal-move
consistency, saved games (JSON round trip, schema errors with a path) and code quality."""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import random
import subprocess
import sys
from typing import Any

import optional
import pytest
from conftest import ENGINE_PATH, ROOT, at_the_church, set_hand, sound
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def replace(move: Any, **changes: Any) -> Any:
    """The move with some fields changed (`dataclasses.replace` for the engine's plain
    classes)."""
    return type(move)(**{**{n: getattr(move, n) for n in type(move).__slots__}, **changes})


def _random_play(engine: Any, g: Any, moves: int, seed: int) -> Any:
    rng = random.Random(seed)
    for _ in range(moves):
        if g.phase == "over":
            break
        g = engine.apply_move(g, rng.choice(engine.legal_moves(g)))
    return g


# --- setup and determinism ----------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_new_game(engine: Any, players: int) -> None:
    g = sound(engine, engine.new_game(players, (), 7))
    rs = g.rs
    assert len(g.players) == players
    assert ("two-player" in g.variants) == (players == 2)
    for p in g.players:
        assert len(p.hand) == rs.hand_size
        assert (p.reis, p.influence) == (rs.start_reis, rs.start_influence)
        assert {rs.cards[c].deck for c in p.hand} == {"blue"}
    assert len(g.decree_display) == rs.decree_display
    assert g.shipyard == ["red"] * (players - 1) + ["blue"] * (players - 1)  # blue on top
    assert (g.phase, g.actor, g.current, g.round, g.period) == ("action", 0, 0, 1, 1)


def test_bad_setups_raise(engine: Any) -> None:
    for players in (1, 5):
        with pytest.raises(ValueError):
            engine.new_game(players)
    with pytest.raises(ValueError, match="unknown variant"):
        engine.new_game(3, ("nope",))
    with pytest.raises(ValueError):
        engine.new_game(3, ("two-player",))


def test_same_seed_and_moves_give_the_same_game(engine: Any) -> None:
    a = _random_play(engine, engine.new_game(3, (), 11), 120, 5)
    b = _random_play(engine, engine.new_game(3, (), 11), 120, 5)
    assert engine.dumps(a) == engine.dumps(b)
    c = engine.new_game(3, (), 12)
    assert engine.dumps(c) != engine.dumps(engine.new_game(3, (), 11))


# --- Influence ------------------------------------------------------------------------------


def _cardinal_trade(engine: Any, g: Any, influence: int) -> Any:
    """Seat 0 plays a Noble card to the portfolio and trades a good for the Cardinal, which
    reaches the Church icon (a Church Scoring: one gain of Influence, the portfolio's
    Influence values plus the Ships)."""
    card = next(
        n for n, c in sorted(g.rs.cards.items())
        if c.type == "marquis" and not {k for k, _ in (*c.reward, *c.penalty)} - {"reis"}
    )
    set_hand(g, 0, [card])
    p = g.players[0]
    p.influence = influence
    p.reis = 20
    p.ships = [1, 1, 1]
    at_the_church(g)
    move = engine.Move("trade", 0, card=card, state_action="cardinal", good="gold")
    return engine.apply_move(g, move)


def test_influence_is_capped_with_one_wig_per_gain_ending_at_the_top(
    engine: Any, fresh: Any
) -> None:
    g = fresh(3)
    top = g.rs.influence_max
    after = _cardinal_trade(engine, g, top - 1)  # a gain of more than 1 stops at the top
    assert after.players[0].influence == top
    assert after.players[0].wigs == g.players[0].wigs + g.rs.wig_at_max
    after = _cardinal_trade(engine, fresh(3), top)  # already at the top: still one wig
    assert after.players[0].influence == top
    assert after.players[0].wigs == g.players[0].wigs + g.rs.wig_at_max
    after = _cardinal_trade(engine, fresh(3), 0)  # a gain that ends below: no wig
    assert 0 < after.players[0].influence < top
    assert after.players[0].wigs == g.players[0].wigs


# --- illegal moves ----------------------------------------------------------------------------


def test_illegal_moves_name_a_rule_and_leave_the_state_unchanged(engine: Any, fresh: Any) -> None:
    g = fresh(3)
    hand = g.players[0].hand
    not_mine = g.players[1].hand[0]
    bad = [
        engine.Move("portfolio", 1, card=g.players[1].hand[0]),  # not your turn
        engine.Move("portfolio", 0, card=not_mine),  # not in your hand
        engine.Move("draw", 0, pile=g.rs.piles[0]),  # not the refill phase
        engine.Move("decline", 0),  # no visit to follow
        engine.Move("teleport", 0),  # no such move
        engine.Move("pass", 0),  # cards in hand
        engine.Move("hand-discard", 0, cards=(hand[0],)),  # not the end of a period
        engine.Move("marker", 0, noble="king"),  # no marker to place
    ]
    before = engine.dumps(g)
    for move in bad:
        with pytest.raises(engine.IllegalMove) as exc:
            engine.apply_move(g, move)
        assert exc.value.rule in engine.RULE_TEXT, move
        title, _ = engine.rule_text(exc.value.rule)
        assert str(exc.value).startswith(f"[{exc.value.rule}] {title}: ")
        assert engine.explain_move(g, move) is not None
        assert engine.dumps(g) == before


def test_legal_moves_are_exactly_the_moves_the_engine_accepts(engine: Any) -> None:
    """On states from random games: every listed move is accepted without changing the state
    it is applied to, and the variations of a listed move that are not listed are refused."""
    rng = random.Random(3)
    for players, variants in ((2, ()), (3, ()), (4, ("queen",))):
        g = engine.new_game(players, variants, players)
        for _ in range(150):
            if g.phase == "over":
                break
            moves = engine.legal_moves(g)
            assert len(set(moves)) == len(moves)
            before = engine.dumps(g)
            for m in rng.sample(moves, min(6, len(moves))):
                assert engine.explain_move(g, m) is None, m
                engine.apply_move(g, m)
                assert engine.dumps(g) == before
                listed = set(moves)
                for variant in _variations(engine, g, m):
                    if variant not in listed:
                        assert engine.explain_move(g, variant) is not None, variant
            g = engine.apply_move(g, rng.choice(moves))


def _variations(engine: Any, g: Any, m: Any) -> list[Any]:

    rs = g.rs
    out = []
    for sa in (None, *rs.state_actions):
        out.append(replace(m, state_action=sa))
    for b in rs.businesses:
        out.append(replace(m, business=b))
    for d in g.decree_display[:3]:
        out.append(replace(m, decrees=(d,)))
    for n in rs.nobles:
        out.append(replace(m, favor=n.id))
    out.append(replace(m, noble_action=not m.noble_action))
    return out


# --- saved games ------------------------------------------------------------------------------


def test_json_round_trip(engine: Any) -> None:
    import jsonschema

    schema = json.loads((ROOT / "generated" / "state.schema.json").read_text())
    assert schema == engine.STATE_SCHEMA
    validator = jsonschema.Draft202012Validator(schema)
    for players, variants in ((2, ()), (3, ("queen",)), (4, ())):
        g = engine.new_game(players, variants, 1)
        for step in range(400):
            if step % 37 == 0 or g.phase != "action":
                data = engine.to_json(g)
                validator.validate(data)
                assert engine.from_json(json.loads(json.dumps(data))) == g
                assert engine.loads(engine.dumps(g)) == g
            if g.phase == "over":
                break
            g = _random_play(engine, g, 1, step)
        assert g.phase == "over"
        assert engine.loads(engine.dumps(g)) == g


_SAVED: dict[int, str] = {}


def _saved(engine: Any) -> dict[str, Any]:
    """A saved game in the middle of play (a fresh copy each call)."""
    if not _SAVED:
        _SAVED[0] = engine.dumps(_random_play(engine, engine.new_game(3, (), 2), 40, 2))
    data: dict[str, Any] = json.loads(_SAVED[0])
    return data


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["players"][1].update(reis=-1), "$.players[1].reis"),
        (lambda d: d["players"][1].update(reis="3"), "$.players[1].reis"),
        (lambda d: d["players"][0].update(reis=True), "$.players[0].reis"),
        (lambda d: d["players"][2].pop("hand"), "$.players[2]"),
        (lambda d: d.update(extra=1), "$"),
        (lambda d: d.update(phase="lunch"), "$.phase"),
        (lambda d: d["players"][0]["stores"].pop("gold"), "$.players[0].stores"),
        (lambda d: d["offices"].pop("king"), "$.offices"),
        (lambda d: d["players"][0]["hand"].append(9999), "$.players[0].hand["),
        (lambda d: d["players"][0]["royal_favors"].append("pope"), "$.players[0].royal_favors"),
        (lambda d: d.update(actor=7), "$.actor"),
        (lambda d: d.update(variants=["two-player"]), "$.variants"),
        (lambda d: d.update(variants=["queen", "queen"]), "$.variants"),
        (lambda d: d.update(treasury=99), "$.treasury"),
        (lambda d: d["players"][0]["hand"].append(d["players"][1]["hand"][0]), "$"),
        (lambda d: d["players"][1].update(influence=11), "$"),
        (lambda d: d.update(phase="follow"), "$.phase"),
        (lambda d: d.update(players=d["players"][:1]), "$.players"),
        (lambda d: d["players"][1].update(color="Yellow"), "$.players"),
        (lambda d: d["offices"]["king"].update(Purple=1), "$.offices.king"),
    ],
)
def test_a_state_that_breaks_the_schema_raises_state_error(
    engine: Any, change: Any, path: str
) -> None:
    data = _saved(engine)
    assert engine.from_json(copy.deepcopy(data)) is not None
    change(data)
    with pytest.raises(engine.StateError) as exc:
        engine.from_json(data)
    assert exc.value.path.startswith(path), str(exc.value)
    assert str(exc.value).startswith(exc.value.path + ": ")


def test_bad_json_text_raises_state_error(engine: Any) -> None:
    with pytest.raises(engine.StateError) as exc:
        engine.loads("{not json")
    assert exc.value.path == "$"
    for data in (None, [], 3, "x", {}):
        with pytest.raises(engine.StateError):
            engine.from_json(data)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 200) | st.sampled_from(["", "gold", "king"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_saves_load_or_raise_state_error_only(engine: Any, data: Any) -> None:
    state = _saved(engine)
    for _ in range(data.draw(st.integers(1, 3))):
        node, key = _pick(state, data)
        if data.draw(st.booleans()) and isinstance(node, dict) and node:
            node.pop(key, None)
        elif isinstance(node, (dict, list)) and (isinstance(node, dict) or node):
            node[key] = data.draw(_JSON)
    try:
        g = engine.from_json(state)
    except engine.StateError:
        return
    engine.legal_moves(g)  # a state that loads can be played on
    engine.final_scores(g)


def _pick(state: Any, data: Any) -> tuple[Any, Any]:
    node: Any = state
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return node, 0
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if not isinstance(child, (dict, list)) or not child or data.draw(st.booleans()):
            return node, key
        node = child


# --- code quality of the generated module ----------------------------------------------------


def _tool(name: str) -> list[str]:
    """`python -m TOOL`, skipping (failing in CI) when the tool is not installed."""
    if importlib.util.find_spec(name) is None:
        optional.missing(f"{name} is not installed (pip install -e '.[dev]')")
    return [sys.executable, "-m", name]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "--config", "pyproject.toml"],
        ["ruff", "format", "--check", "--config", "pyproject.toml"],
        ["mypy", "--strict", "--no-incremental"],
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_generated_engine_is_lint_and_type_clean(command: list[str]) -> None:
    result = subprocess.run(
        [*_tool(command[0]), *command[1:], str(ENGINE_PATH.relative_to(ROOT))],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_generated_engine_imports_without_the_compiler(tmp_path: Any) -> None:
    """Standard library only: the module runs in a fresh interpreter with no site-packages."""
    target = tmp_path / "lisboa_engine.py"
    target.write_text(ENGINE_PATH.read_text())
    code = (
        "import sys; import lisboa_engine as E; g = E.new_game(3, (), 1); "
        "assert E.legal_moves(g); bad = [m for m in sys.modules if m.split('.')[0] in "
        "('lisboa_rules', 'yaml', 'jinja2', 'jsonschema')]; assert not bad, bad"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_rule_sets_cite_their_rules_lines() -> None:
    text = ENGINE_PATH.read_text()
    assert "    # rules/game.yaml:" in text
    assert "    # rules/variants/two-player.yaml:" in text
    assert "# rules/court.yaml:" in text  # formulas name their source line


def test_moves_round_trip_through_json(engine: Any) -> None:
    g = _random_play(engine, engine.new_game(4, ("queen",), 9), 30, 9)
    for m in engine.legal_moves(g):
        assert engine.Move.from_json(json.loads(json.dumps(m.to_json()))) == m


def test_state_schema_documents_every_field(engine: Any) -> None:
    schema = engine.STATE_SCHEMA
    player = schema["properties"]["players"]["items"]["properties"]
    for name, prop in [*schema["properties"].items(), *player.items()]:
        assert prop.get("description"), name
    assert set(schema["properties"]) == set(inspect.signature(engine.Game).parameters)
    assert set(player) == set(inspect.signature(engine.Player).parameters)
