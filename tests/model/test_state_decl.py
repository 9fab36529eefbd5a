"""The state declared in rules/state.yaml (issue 14, first step): the engine's Player and Game,
their saved-game fields and the state schema are generated from the declaration.

- A house rule (a variant folded in with `build --variant`) and a direct edit of
  rules/state.yaml each declare new fields of several types; each field shows up in the
  generated engine's classes (with its default and a deep copy in `clone()`), in `to_json`,
  in `from_json` (which refuses a value out of its bounds) and in STATE_SCHEMA.
- Bad declarations are refused with located diagnostics (`rules/state.yaml:LINE:COL`), one
  per problem, with a did-you-mean where one helps.
- The generated schema accepts every state of a few seeded random games and refuses broken
  ones, as the engine's own `from_json` does.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from lisboa_rules.cli.main import main
from lisboa_rules.core.diagnostics import render_text
from lisboa_rules.pipeline import compile_rules

ROOT = Path(__file__).resolve().parents[2]
STATE_SCHEMA = ROOT / "generated" / "state.schema.json"

HOUSE = """\
kind: variant
id: house-coins
title: Coins and honours
applies: chosen
text: Each player starts with 3 coins and may keep reserved cards; the game counts tallies.
source: [seed:000#intro]
changes:
  state:
    player:
      - {$add: true, id: coins, type: int, see: all, min: 0, default: 3, text: coins in the purse}
      - {$add: true, id: reserved, type: "list[card]", see: all, max_items: 2,
         text: cards set aside}
    game:
      - {$add: true, id: last_mover, type: seat?, see: all, text: who moved last}
      - {$add: true, id: tallies, type: "map[noble, int]", see: all, min: 0, text: marks by Noble}
"""

# The same kinds of fields, written into rules/state.yaml itself.
DIRECT = {
    "player": '  - {id: medals, type: "list[noble]", see: all, text: "medals won, by Noble"}\n'
    "  - {id: lucky, type: bool, see: all, text: whether the player is lucky}\n",
    "game": "  - {id: mood, type: phase, see: all, default: over, text: the table's mood}\n"
    "  - {id: pot, type: int, see: all, min: 2, text: the pot}\n",
}

# field -> (scope, the default in a new game, a value in bounds, a value the schema refuses)
HOUSE_FIELDS = {
    "coins": ("player", 3, 7, -1),
    "reserved": ("player", [], [1, 2], [1, 2, 3]),
    "last_mover": ("game", None, 1, "Yellow"),
    "tallies": ("game", {}, {"king": 2}, {"queen": 1}),
}
DIRECT_FIELDS = {
    "medals": ("player", [], ["king", "manuel"], ["nobody"]),
    "lucky": ("player", False, True, 1),
    "mood": ("game", "over", "action", "grumpy"),
    "pot": ("game", 2, 9, 1),
}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def _build(project: Path, args: list[str]) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        assert main(["build", *args]) == 0, f"lisboa-rules build {' '.join(args)} failed"
    return project / "generated"


def _with_fields(text: str) -> str:
    """rules/state.yaml with DIRECT's fields added at the end of the player and game lists."""
    head, game = text.split("\ngame:\n")
    return head + "\n" + DIRECT["player"] + "game:\n" + game.rstrip("\n") + "\n" + DIRECT["game"]


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    """The house rule folded in, and rules/state.yaml edited directly: each built by the CLI."""
    out = {}
    project = tmp_path_factory.mktemp("house")
    shutil.copytree(ROOT / "rules", project / "rules")
    (project / "rules" / "variants" / "house-coins.yaml").write_text(HOUSE, encoding="utf-8")
    out["house"] = _load(
        _build(project, ["--variant", "house-coins"]) / "lisboa_engine.py", "state_engine_house"
    )
    project = tmp_path_factory.mktemp("direct")
    shutil.copytree(ROOT / "rules", project / "rules")
    state = project / "rules" / "state.yaml"
    state.write_text(_with_fields(state.read_text(encoding="utf-8")), encoding="utf-8")
    out["direct"] = _load(_build(project, []) / "lisboa_engine.py", "state_engine_direct")
    return out


CASES = [("house", f, *v) for f, v in HOUSE_FIELDS.items()] + [
    ("direct", f, *v) for f, v in DIRECT_FIELDS.items()
]


@pytest.mark.parametrize(
    ("build", "name", "scope", "default", "good", "bad"), CASES, ids=[c[1] for c in CASES]
)
def test_new_field_reaches_the_engine(
    engines: dict[str, ModuleType],
    build: str,
    name: str,
    scope: str,
    default: Any,
    good: Any,
    bad: Any,
) -> None:
    E = engines[build]
    cls = E.Player if scope == "player" else E.Game
    declared = list(inspect.signature(cls).parameters)
    assert declared[-1] == name or name in declared  # added at the end of its list, in order
    listed = E._PLAYER_FIELDS if scope == "player" else E._GAME_FIELDS
    assert tuple(declared) == tuple(listed)
    g = E.new_game(3, (), 5)
    holder = g.players[1] if scope == "player" else g
    assert getattr(holder, name) == default
    data = E.to_json(g)
    where = data["players"][1] if scope == "player" else data
    assert where[name] == default
    # a value in bounds survives the round trip, and the clone does not share it
    where[name] = copy.deepcopy(good)
    g2 = E.from_json(json.loads(json.dumps(data)))
    holder2 = g2.players[1] if scope == "player" else g2
    assert getattr(holder2, name) == good
    twin = g2.clone()
    twin_holder = twin.players[1] if scope == "player" else twin
    assert getattr(twin_holder, name) == good
    if isinstance(good, list | dict):
        assert getattr(twin_holder, name) is not getattr(holder2, name)
    # the schema has the field, with its text, and requires it
    schema = E.STATE_SCHEMA
    obj = schema["properties"]["players"]["items"] if scope == "player" else schema
    assert name in obj["required"]
    assert obj["properties"][name]["description"]
    where[name] = copy.deepcopy(bad)
    with pytest.raises(E.StateError):
        E.from_json(json.loads(json.dumps(data)))
    assert list(Draft202012Validator(schema).iter_errors(data))
    del where[name]
    with pytest.raises(E.StateError, match=f"missing '{name}'"):
        E.from_json(json.loads(json.dumps(data)))


def test_house_rule_schema_bounds(engines: dict[str, ModuleType]) -> None:
    E = engines["house"]
    player = E.STATE_SCHEMA["properties"]["players"]["items"]["properties"]
    assert player["coins"] == {"description": "coins in the purse", "type": "integer", "minimum": 0}
    assert player["reserved"]["maxItems"] == 2
    assert player["reserved"]["items"] == {"$ref": "#/$defs/card"}
    game = E.STATE_SCHEMA["properties"]
    assert game["last_mover"]["type"] == ["integer", "null"]
    assert set(game["tallies"]["properties"]) == {n.id for n in E.RULESETS[()].nobles}
    assert "required" not in game["tallies"]  # not a full map


# --- bad declarations ------------------------------------------------------------------------

# (name, text in rules/state.yaml, its replacement, code, words of the message, the line of the
# diagnostic holds this text)
BAD = [
    (
        "unknown-kind",
        'type: "list[plan]", see: all, text: Plans not yet',
        'type: "list[plna]", see: all, text: Plans not yet',
        "unknown-reference",
        "names no kind 'plna'",
        "did you mean 'plan'",
    ),
    (
        "type-syntax",
        'type: "map[noble, int]", see: all, min: 0, text: Rubble',
        'type: "map[noble int]", see: all, min: 0, text: Rubble',
        "state-type",
        "expected ']'",
        None,
    ),
    (
        "type-arity",
        'type: "list[seat]", see: all, text: "seats that still place',
        'type: "list[seat, int]", see: all, text: "seats that still place',
        "state-type",
        "list takes 1 type argument",
        None,
    ),
    (
        "from-path",
        "from: components.cards, key: number",
        "from: components.crads, key: number",
        "state-data",
        "'components.crads' is not in the rules data",
        "did you mean 'cards'",
    ),
    (
        "from-key",
        "from: components.decrees, key: id",
        "from: components.decrees, key: idd",
        "state-data",
        "has no 'idd'",
        "did you mean 'id'",
    ),
    (
        "bound-not-int",
        "max_items: game.start.hand",
        "max_items: game.title",
        "state-data",
        "is not a whole number",
        None,
    ),
    (
        "bound-missing",
        "max_items: game.start.hand",
        "max_items: game.start.hnd",
        "state-data",
        "names no value",
        "did you mean 'hand'",
    ),
    (
        "default-value",
        "type: phase, see: all, default: action, text: the phase to go back",
        "type: phase, see: all, default: acton, text: the phase to go back",
        "state-type",
        "is not one of",
        None,
    ),
    (
        "duplicate-field",
        "  - {id: rubble_sets, type: int",
        "  - {id: rubble_cubes, type: int",
        "duplicate-id",
        "player field 'rubble_cubes' is declared twice",
        None,
    ),
    (
        "duplicate-kind",
        "  - {id: plan, from: components.plans",
        "  - {id: decree, from: components.plans",
        "duplicate-id",
        "kind 'decree' is declared twice",
        None,
    ),
    (
        "min-on-list",
        'type: "list[plan]", see: all, text: Plans not yet',
        'type: "list[plan]", see: all, min: 0, text: Plans not yet',
        "state-type",
        "holds no int",
        None,
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "code", "words", "hint"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_declaration_is_located(
    tmp_path: Path, old: str, new: str, code: str, words: str, hint: str | None
) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    path = tmp_path / "rules" / "state.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    line = max(n for n, ln in enumerate(text.split("\n"), 1) if new.strip() in ln)
    result = compile_rules(tmp_path / "rules")
    errors = [d for d in result.diagnostics if d.is_error]
    shown = render_text(errors)
    found = [d for d in errors if d.code == code and words in d.full_message]
    assert found, f"no {code} '{words}' in:\n{shown}"
    d = found[0]
    assert d.span is not None and d.span.file.endswith("state.yaml"), shown
    assert d.span.line == line, shown
    assert f"state.yaml:{line}:{d.span.col}: error[{code}]" in shown
    if hint:
        assert hint in d.full_message
    assert not result.ok and not result.files  # nothing written


def test_the_type_error_points_into_the_type(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    path = tmp_path / "rules" / "state.yaml"
    text = path.read_text(encoding="utf-8")
    old = 'type: "list[decree]", see: all, text: Decrees owned'
    text = text.replace(old, 'type: "list[decre]", see: all, text: Decrees owned')
    path.write_text(text, encoding="utf-8")
    line_no, line = next((n, ln) for n, ln in enumerate(text.split("\n"), 1) if "decre]" in ln)
    result = compile_rules(tmp_path / "rules")
    d = next(d for d in result.diagnostics if d.code == "unknown-reference")
    assert d.span is not None and (d.span.line, d.span.col) == (line_no, line.index("decre]") + 1)
    assert d.suggestion == "decree"


# --- the generated schema and real games -----------------------------------------------------


def _random_states(
    E: Any, players: int, variants: tuple[str, ...], seed: int, limit: int
) -> list[dict[str, Any]]:
    g = E.new_game(players, variants, seed)
    rng = random.Random(seed)
    out = [E.to_json(g)]
    while g.phase != "over" and len(out) < limit:
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
        out.append(E.to_json(g))
    return out


GAMES = [(2, (), 1), (3, (), 2), (4, ("queen",), 3)]


@pytest.mark.parametrize(("players", "variants", "seed"), GAMES)
def test_schema_accepts_every_state_of_random_games(
    engine: ModuleType, players: int, variants: tuple[str, ...], seed: int
) -> None:
    schema = json.loads(STATE_SCHEMA.read_text(encoding="utf-8"))
    assert schema == engine.STATE_SCHEMA
    validator = Draft202012Validator(schema)
    states = _random_states(engine, players, variants, seed, 400)
    assert len(states) > 50
    for i, data in enumerate(states):
        problems = [e.message for e in validator.iter_errors(data)]
        assert not problems, f"state {i}: {problems[:3]}"


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return change


_DELETE = object()
BROKEN = {
    "negative-reis": _set(("players", 0, "reis"), -1),
    "hand-too-long": _set(("players", 0, "hand"), [1, 2, 3, 4, 5, 6]),
    "unknown-card": _set(("discard",), [999]),
    "unknown-phase": _set(("phase",), "lunch"),
    "unknown-owner": _set(("offices", "king", "Purple"), 1),
    "unknown-field": _set(("players", 1, "coins"), 3),
    "missing-field": _set(("treasury",), _DELETE),
    "missing-full-key": _set(("players", 0, "stores", "gold"), _DELETE),
    "null-seat": _set(("actor",), None),
    "bad-visit": _set(("visit",), "queen"),
    "bool-for-int": _set(("turns",), True),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_schema_refuses_broken_states(engine: ModuleType, name: str) -> None:
    schema = json.loads(STATE_SCHEMA.read_text(encoding="utf-8"))
    data = _random_states(engine, 3, (), 7, 30)[-1]
    assert not list(Draft202012Validator(schema).iter_errors(data))
    BROKEN[name](data)
    assert list(Draft202012Validator(schema).iter_errors(data)), name
    with pytest.raises(engine.StateError):
        engine.from_json(data)


@pytest.mark.parametrize("applies", ["chosen", "{players: [2]}"])
def test_an_open_variant_cannot_change_the_state(tmp_path: Path, applies: str) -> None:
    """The engine has one Player and one Game for every rule set: a variant played by choice
    or by player count that changes the declaration is refused, at its change; folded in
    (`build --variant`), the same variant builds when it is chosen (one by player count is
    not folded at all)."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    house = HOUSE.replace("applies: chosen", f"applies: {applies}")
    (tmp_path / "rules" / "variants" / "house-coins.yaml").write_text(house, encoding="utf-8")
    result = compile_rules(tmp_path / "rules")
    found = [d for d in result.diagnostics if d.code == "state-variant"]
    assert len(found) == 1 and found[0].span is not None, render_text(result.diagnostics)
    assert found[0].span.file.endswith("house-coins.yaml")
    assert house.split("\n")[found[0].span.line - 1].lstrip().startswith("- {$add: true, id: coins")
    folded = compile_rules(tmp_path / "rules", ("house-coins",))
    if applies == "chosen":
        assert folded.ok, render_text(folded.diagnostics)
    else:  # a variant by player count is not folded into every count (fold-by-players)
        assert [d.code for d in folded.diagnostics if d.is_error] == ["fold-by-players"]
