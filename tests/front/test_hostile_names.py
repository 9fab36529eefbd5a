"""Every name a house rule binds or declares is checked against the names' one grammar at load
(issue 30): a house rule whose names are code, keywords, the engine's own names or look-alikes
is refused with one `bad-name` error at each name, with a name to use instead, and nothing is
written; a name of the grammar that only Python would read otherwise (`print`, `round`) is
written as the engine's own name of it and plays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, load_engine

from lisboa_rules.cli.main import main
from lisboa_rules.core import names
from lisboa_rules.pipeline import analyse
from lisboa_rules.pyprint import expr as pyprint

# Refused wherever a rule gives a name: code, look-alikes, keywords, the engine's own prefixes
# and receivers.
HOSTILE = [
    "x = open('/tmp/lisboa-pwned', 'w').write('x') #",
    "__import__('os').system('true')",
    "a b",
    "a-b",
    "a.b",
    "a\nb",
    "Reis",
    "ａｂ",  # fullwidth letters: str.isidentifier() says yes
    "é",
    "1st",
    "_",
    "__class__",
    "_private",
    "v_total",
    "self",
    "cls",
    "class",
    "lambda",
    "match",
    "x" * (names.MAX_LENGTH + 1),
    "",
]

# Each place a house rule gives a name, as a line of the house rule with @NAME@ in it, and the
# other lines it needs (a house rule that adds fields to the state is folded in).
TEMPLATE = """\
kind: variant
id: hostile
title: Hostile names
applies: chosen
text: A house rule whose names are given by a stranger.
source: [facts:§4]
changes:
  court:
    costs:
      - $add: true
        id: petition-cost
        name: Petition cost
        formula: fee
        params: {fee: 3, @COST_PARAM@: 1}
        text: A petition costs {formula} réis.
        source: [facts:§4]
    actions:
      - $add: true
        id: petition
        name: Petition a Noble
        procedure: petition
        cost: petition-cost
        steps:
          - choose: {as: @CHOOSE@, from: hand}
            reason: a petition needs a card from your hand
            text: Discard a card from your hand...
          - let: {@LET@: 1}
          - let: {petition_price: "cost(this.cost)"}
          - for_each: {as: @FOR_EACH@, in: game.players}
            do:
              - gain: {reis: 0}
          - {do: pay-reis, with: {@WITH@: 1}, text: "...pay the petition cost..."}
          - {set: {game.phase: "'refill'"}}
        text: A petition.
        source: [facts:§4]
  effects:
    procedures:
      - $add: true
        id: hostile-proc
        params: {@PARAM@: int}
        steps:
          - gain: {reis: 0}
  state:
    player:
      - $add: true
        id: @PLAYER_FIELD@
        type: int
        see: all
        text: a field of a player
    game:
      - $add: true
        id: @GAME_FIELD@
        type: int
        see: all
        text: a field of the game
  vocabulary:
    names:
      - $add: true
        name: @VOCABULARY@
        value: reis
        scope: player
        range: [0, null]
        words: your réis again
    queries:
      - $add: true
        name: @QUERY@
        args: [{name: @QUERY_ARG@, kind: seat}]
        value: "1"
        words: A query.
"""
PLACES = ["COST_PARAM", "CHOOSE", "LET", "FOR_EACH", "WITH", "PARAM", "PLAYER_FIELD",
          "GAME_FIELD", "VOCABULARY", "QUERY", "QUERY_ARG"]
LINES = {p: n for n, line in enumerate(TEMPLATE.split("\n"), start=1) for p in PLACES
         if f"@{p}@" in line}


def house(tmp_path: Path, given: dict[str, str]) -> Path:
    """The house rule with `given` names at their places (JSON strings: YAML reads them as the
    same text); every other place gets a name of its own that is right."""
    text = TEMPLATE
    for place in PLACES:
        right = "amount" if place == "WITH" else f"ok_{place.lower()}"
        text = text.replace(f"@{place}@", json.dumps(given.get(place, right)))
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_place_is_on_its_own_line() -> None:
    assert sorted(LINES) == sorted(PLACES)
    assert len(set(LINES.values())) == len(PLACES)


@pytest.mark.sampled(8)
@pytest.mark.parametrize("bad", HOSTILE, ids=[repr(h)[:24] for h in HOSTILE])
def test_a_hostile_name_is_refused_at_every_place(bad: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = house(tmp_path, dict.fromkeys(PLACES, bad))
    compiled, found = analyse(ROOT / "rules", ("hostile",), extra=[path])
    assert compiled is None
    errors = [d for d in found if d.is_error]
    assert {d.code for d in errors} == {"bad-name"}, [d.full_message for d in errors]
    at = sorted(d.span.line for d in errors if d.span is not None and d.span.file.endswith(
        "hostile.yaml"))
    assert at == sorted(LINES.values()), [d.full_message for d in errors]
    for d in errors:
        assert d.suggestion is not None and names.problem(d.suggestion) is None
        assert "lower-case letter" in d.message or "name it otherwise" in d.message \
            or "too long" in d.message or "'v_'" in d.message
    # nothing is written: the build stops before its output exists
    out = tmp_path / "out"
    assert main(["build", "--no-cache", "--rules", str(ROOT / "rules"), "--house", str(path),
                 "--variant", "hostile", "--out", str(out)]) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert err.count("error[bad-name]") == len(PLACES)
    assert not Path("/tmp/lisboa-pwned").exists()


# Names of the grammar refused only where the engine would write them as they are (a query and
# its arguments are functions and parameters of the engine's module) or as a field of a class
# that has a member of that name.
PLACED = [
    ("QUERY", "print"), ("QUERY", "len"), ("QUERY", "new_game"), ("QUERY", "ranking"),
    ("QUERY_ARG", "sorted"), ("QUERY_ARG", "dumps"), ("CHOOSE", "kind"), ("CHOOSE", "player"),
    ("CHOOSE", "to_json"),
    ("PLAYER_FIELD", "clone"), ("GAME_FIELD", "rs"),
]


@pytest.mark.sampled(4)
@pytest.mark.parametrize(("place", "bad"), PLACED)
def test_a_name_taken_there_is_refused_there(place: str, bad: str, tmp_path: Path) -> None:
    compiled, found = analyse(ROOT / "rules", ("hostile",),
                              extra=[house(tmp_path, {place: bad})])
    errors = [d for d in found if d.is_error]
    assert compiled is None
    assert [(d.code, d.span.line if d.span else None) for d in errors] == \
        [("bad-name", LINES[place])], [d.full_message for d in errors]
    assert errors[0].suggestion not in (None, bad)


def test_names_python_would_read_otherwise_are_written_as_the_engines_own(
        tmp_path: Path) -> None:
    """A local, a parameter or a field named as a Python built-in or a runtime name is no
    refusal: the engine writes it as `v_NAME` or as an attribute, and plays."""
    given = {"LET": "print", "FOR_EACH": "json", "CHOOSE": "round", "PARAM": "open",
             "PLAYER_FIELD": "type", "GAME_FIELD": "id", "COST_PARAM": "random"}
    path = house(tmp_path, given)
    out = tmp_path / "out"
    assert main(["build", "--no-cache", "--rules", str(ROOT / "rules"), "--house", str(path),
                 "--variant", "hostile", "--out", str(out)]) == 0
    source = (out / "lisboa_engine.py").read_text(encoding="utf-8")
    assert "v_print = 1" in source
    assert "def print" not in source and "print =" not in source.replace("v_print =", "")
    engine = load_engine(out / "lisboa_engine.py", "lisboa_engine_hostile_names")
    game = engine.new_game(3, seed=1)
    assert game.players[0].type == 0 and game.id == 0
    for _ in range(30):
        moves = engine.legal_moves(game)
        if not moves:
            break
        game = engine.apply_move(game, moves[0])


@pytest.mark.sampled(8)
@pytest.mark.parametrize("bad", HOSTILE)
def test_the_code_generator_refuses_a_name_that_was_not_checked(bad: str) -> None:
    with pytest.raises(ValueError, match="unchecked"):
        pyprint.local(bad)


def test_suggestions_are_names() -> None:
    for bad in [*HOSTILE, "Room Left", "ÉTÉ", "9lives", "v_", "-", "é"]:
        good = names.suggestion(bad)
        assert names.problem(good) is None, (bad, good)
    assert names.suggestion("Room Left") == "room_left"
    assert names.suggestion("ÉTÉ") == "ete"
    assert names.suggestion("class") == "class_value"
