"""The words a screen shows (issue 35): `move_words(game, move)` says a move in the rules' words
(the name of its kind, then each choice it makes, labelled, an id by its name), and
`component(game, kind, id)` / `card(game, id)` give a component of the rules by its id: its row
of the rules' tables as plain data, its name and its words. All of it is generated from rules/.

Checked on seeded random games of 2, 3 and 4 players and with the Queen: every listed move has
words, none of them alike in one state, with no Python value, no field name and no raw id in
them, the same from the view of the seat to move; the words name what rules/ names; every card
of a game is found with its row of rules/components.yaml; a house rule that renames a Noble and
changes a card changes the words of the games played with it, and the moves of house rules
that add a Noble, cards and a choice of their own have words too.
"""

from __future__ import annotations

import random
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import ROOT

from lisboa_rules import pipeline

SETS = [(2, ()), (3, ()), (4, ()), (3, ("queen",)), (2, ("queen",))]
CASES = [(n, v, seed) for n, v in SETS for seed in (1, 2)]
EXAMPLES = ROOT / "examples" / "house-rules"
# the house rules of examples/ the house-rule engine folds in: a Noble with cards of his own,
# and a choice of a move of its own (a second State action)
FOLDED = ("fourth-noble", "both-state-actions")

# what no words of a screen hold: a Python value, a field name, a raw id
_PYTHON = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|[\[\]{}'\"]|\(\)|\bMove\(")
_SNAKE = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b")
_KEBAB = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.load((ROOT / "rules" / f"{name}.yaml").read_text("utf-8"),
                                     Loader=yaml.CSafeLoader)
    return data


def _states(E: Any, players: int, variants: tuple[str, ...], seed: int) -> Iterator[Any]:
    """Every state of a seeded random game, the finished one last."""
    rng = random.Random(seed)
    g = E.new_game(players, variants, seed)
    while g.phase != "over":
        yield g
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    yield g


def _check_words(E: Any, g: Any, moves: list[Any]) -> list[str]:
    """The words of the moves of one state, each checked: non-empty, of the rules' words
    only, none alike."""
    said = [E.move_words(g, m) for m in moves]
    fields = [f for f in E._MOVE_FIELDS if "_" in f]
    for m, w in zip(moves, said, strict=True):
        assert w.strip() and w == w.strip(), (m, w)
        assert not _PYTHON.search(w), (m, w)
        assert not _SNAKE.search(w), (m, w)
        assert not _KEBAB.search(w), (m, w)
        assert not any(f in w for f in fields), (m, w)
    alike = {w for w in said if said.count(w) > 1}
    assert not alike, [(m, w) for m, w in zip(moves, said, strict=True) if w in alike][:4]
    return said


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("players", "variants", "seed"), CASES,
                         ids=[f"{n}p-{'-'.join(v) or 'base'}-{s}" for n, v, s in CASES])
def test_every_listed_move_has_words_of_its_own(engine: Any, players: int,
                                                variants: tuple[str, ...], seed: int) -> None:
    E = engine
    kinds: set[str] = set()
    for i, g in enumerate(_states(E, players, variants, seed)):
        moves = E.legal_moves(g)
        said = _check_words(E, g, moves)
        kinds |= {m.kind for m in moves}
        if i % 25 == 0 and moves:  # the seat to move says them from its view alike
            v = E.view(g, g.actor)
            assert [E.move_words(v, m) for m in moves] == said
    assert len(kinds) > 5, kinds  # the game went through its kinds of move


def _kind_names(E: Any) -> dict[str, str]:
    """Each kind of move of rules/ by the name the rules give it: the action's `name:`
    (rules/court.yaml), a move of the flow's `name:`, else the title of the rule it names (its
    words in the reference, `rule_text`)."""
    names = {str(a.get("procedure") or a["id"]): a["name"] for a in _load("court")["actions"]}
    for mv in _load("flow")["moves"]:
        names[mv["id"]] = mv.get("name") or E.rule_text(mv["rule"])[0]
    return names


def test_the_words_name_what_the_rules_name(engine: Any) -> None:
    """Each move's words start with its kind's name in rules/; a card is said with the name of
    the Noble of its type, a State action, a good or a Noble by their names in rules/."""
    E = engine
    names = _kind_names(E)
    nobles = {n["id"]: n["name"] for n in _load("nobles")["nobles"]}
    actions = {a["id"]: a["name"] for a in _load("nobles")["state_actions"]}
    goods = {b["id"]: b["name"] for b in _load("game")["businesses"]}
    cards = {c["number"]: c for c in _load("components")["cards"]}
    seen = 0
    for g in _states(E, 3, (), 5):
        for m in E.legal_moves(g):
            w = E.move_words(g, m)
            assert w == names[m.kind] or w.startswith(names[m.kind] + ": "), (m, w)
            if m.card is not None:
                assert f"card {m.card} " in w or w.endswith(f"card {m.card}"), (m, w)
                kind = cards[m.card]["type"]
                assert kind not in nobles or nobles[kind] in w, (m, w)
            if m.state_action is not None:
                assert actions[m.state_action] in w, (m, w)
            if m.good is not None:
                assert goods[m.good] in w, (m, w)
            if m.favor is not None:
                assert nobles[m.favor] in w, (m, w)
            seen += 1
    assert seen > 1000
    # a choice not made says nothing; a yes says its label
    assert E.move_words(g, E.Move("pass", 0)) == names["pass"]


def test_move_words_refuses_what_is_no_move(engine: Any) -> None:
    E = engine
    g = E.new_game(3)
    with pytest.raises(E.BadArgument, match="not a kind of move"):
        E.move_words(g, E.Move("juggle", 0))
    with pytest.raises(E.BadArgument, match="is not a Move"):
        E.move_words(g, {"kind": "pass", "player": 0})
    with pytest.raises(E.BadArgument):
        E.move_words(g, E.Move("visit", 0, card=True))  # True is no card
    with pytest.raises(E.BadArgument):
        E.move_words(None, E.Move("pass", 0))


def _conserved() -> dict[str, list[Any]]:
    """Each kind rules/state.yaml conserves, with its rows in rules/ (without where they come
    from)."""
    state = _load("state")
    kinds = {k["id"]: k for k in state["kinds"]}
    out: dict[str, list[Any]] = {}
    for inv in state["invariants"]:
        if "conserved" not in inv:
            continue
        kind = kinds[inv["conserved"]["kind"]]
        doc, *path = kind["from"].split(".")
        node: Any = _load(doc)
        for part in path:
            node = node[part]
        out[kind["id"]] = [{k: v for k, v in row.items() if k not in ("source", "assumptions")}
                           for row in node]
    return out


@pytest.mark.parametrize("finished", [False, True], ids=["new", "finished"])
def test_card_of_every_id_gives_its_row_and_words(engine: Any, finished: bool) -> None:
    E = engine
    g = new = E.new_game(4, (), 3)
    if finished:
        g = list(_states(E, 4, (), 3))[-1]
    rows = {c["number"]: c for c in _load("components")["cards"]}
    nobles = {n["id"]: n["name"] for n in _load("nobles")["nobles"]}
    ids = E.all_cards(g)
    assert sorted(ids) == sorted(rows)
    for i in ids:
        got = E.card(g, i)
        assert got["kind"] == "card" and got["id"] == i
        assert got["row"] == rows[i]
        assert got == E.component(g, "card", i) == E.card(E.view(g, None), i)
        assert str(i) in got["name"] and got["words"].startswith(got["name"].split(" (")[0])
        assert not _PYTHON.search(got["words"]) and not _SNAKE.search(got["name"])
        if rows[i]["type"] in nobles:
            assert nobles[rows[i]["type"]] in got["name"]
            assert nobles[rows[i]["type"]] in got["words"]
    # the row is a copy: changing it changes nothing of the engine's
    E.card(g, ids[0])["row"]["deck"] = "nowhere"
    assert E.card(new, ids[0])["row"] == rows[ids[0]]


def test_every_conserved_kind_is_a_component(engine: Any) -> None:
    E = engine
    g = E.new_game(3)
    for kind, rows in _conserved().items():
        key = next(k for k in ("number", "id") if k in rows[0])
        names = set()
        for row in rows:
            got = E.component(g, kind, row[key])
            assert got["row"] == row and got["words"] and got["name"], (kind, row)
            names.add(got["name"])
        assert len(names) == len(rows), kind  # each id a name of its own


def test_component_refuses_an_unknown_kind_or_id(engine: Any) -> None:
    E = engine
    g = E.new_game(3)
    with pytest.raises(E.BadArgument) as caught:
        E.component(g, "dragon", 1)
    for kind in _conserved():  # the message lists the kinds
        assert kind in str(caught.value)
    with pytest.raises(E.BadArgument, match="not an id"):
        E.card(g, 10_000)
    with pytest.raises(E.BadArgument, match="not an id"):
        E.card(g, True)  # True is no card 1
    with pytest.raises(E.BadArgument):
        E.component(g, ["card"], 1)
    with pytest.raises(E.BadArgument):
        E.card(None, 1)


# --- house rules -------------------------------------------------------------------------------

NEW_NAME = "Eugénio dos Santos"
HOUSE = {
    "kind": "variant",
    "id": "house-words",
    "title": "A new architect",
    "applies": "chosen",
    "text": "Eugénio dos Santos takes Manuel da Maia's seat, and card 2 weighs more.",
    "source": ["facts:§8"],
    "changes": {
        "nobles": {"nobles": [{"id": "manuel", "name": NEW_NAME}]},
        "components": {"cards": [{"number": 2, "influence": 3}]},
    },
}


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The engine of rules/ with the house rules of FOLDED folded in and `house-words` (a
    Noble renamed, a card changed) a variant chosen at setup."""
    folder = tmp_path_factory.mktemp("words")
    path = folder / "house-words.yaml"
    path.write_text(yaml.safe_dump(HOUSE, sort_keys=False, allow_unicode=True), "utf-8")
    extra = [*(EXAMPLES / f"{n}.yaml" for n in FOLDED), path]
    result = pipeline.compile_rules(ROOT / "rules", FOLDED, extra=extra)
    errors = [d.message for d in result.diagnostics if d.is_error]
    assert not errors, errors
    name = "_move_words_engine"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(compile(result.files["lisboa_engine.py"], "<house words>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    return module


def test_a_house_rule_changes_the_words(house: Any) -> None:
    E = house
    old = next(n["name"] for n in _load("nobles")["nobles"] if n["id"] == "manuel")
    base, mine = E.new_game(3, (), 1), E.new_game(3, ("house-words",), 1)
    assert E.component(base, "noble", "manuel")["name"] == old
    assert E.component(mine, "noble", "manuel")["name"] == NEW_NAME
    was, now = E.card(base, 2), E.card(mine, 2)
    assert was["row"]["influence"] != 3 and now["row"]["influence"] == 3
    assert was["words"] != now["words"] and "Influence: 3" in now["words"]
    assert old in was["name"] and NEW_NAME in now["name"]
    assert E.card(E.view(mine, 0), 2) == now  # a view's rules are its game's
    visit = E.Move("visit", 0, card=2, state_action="plan")
    assert old in E.move_words(base, visit) and NEW_NAME not in E.move_words(base, visit)
    assert NEW_NAME in E.move_words(mine, visit) and old not in E.move_words(mine, visit)
    assert E.move_words(E.view(mine, 0), visit) == E.move_words(mine, visit)
    # the other cards are the base game's
    assert E.card(mine, 3) == E.card(base, 3)


@pytest.mark.sampled(1)
@pytest.mark.parametrize(("players", "variants", "seed"),
                         [(3, (), 1), (4, ("house-words",), 2), (2, ("house-words", "queen"), 3)])
def test_the_moves_of_house_rules_have_words(house: Any, players: int,
                                             variants: tuple[str, ...], seed: int) -> None:
    """The house rules' own moves (a visit to the new Noble with his cards, a second State
    action) are said like the others; the new cards are components too."""
    E = house
    label = E._MOVE_LABELS["second_state_action"][0]
    seconds = 0
    for g in _states(E, players, variants, seed):
        moves = E.legal_moves(g)
        said = _check_words(E, g, moves)
        seconds += sum(m.second_state_action is not None for m in moves)
        for m, w in zip(moves, said, strict=True):
            if m.second_state_action is not None:
                assert label in w, w
    assert seconds > 0
    new = [c["number"] for c in yaml.safe_load((EXAMPLES / "fourth-noble.yaml").read_text(
        "utf-8"))["changes"]["components"]["cards"]]
    for i in new:
        assert E.card(g, i)["row"]["number"] == i
        assert "card" in E.card(g, i)["name"].lower()
