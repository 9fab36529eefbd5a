"""The runtime knows no game: no identifier or string of `lisboa_rules/runtime/` names a concept
of the game in rules/ (issue 14).

The game's nouns are the ids and names of its tables in rules/ (its Nobles, their State and
Noble actions, the actions of a turn, the businesses, the kinds of ids of the state) and a list
of the game's own words that no table spells out. Generic words of board games (card, hand,
deck, pile, discard, player, turn, round, period, phase, score, ...) are not the game's: every
card game has them. Docstrings are strings, so they are read too; comments are not code."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from lisboa_rules.front.loader import load_file

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "lisboa_rules" / "runtime"

# The game's words that are no id of a table of rules/ (the rulebook's terms).
_LISBOA = (
    """noble nobles decree decrees rubble treasury influence wig wigs reis réis ship ships
    shipyard favor favors favour favours official officials store stores good goods warehouse
    portfolio plan plans court courtier king queen marquis manuel pombal visit visits visited
    visitor follow follows follower followers sponsor sponsored business businesses building
    buildings cardinal lisboa lisbon reign political earthquake"""
)
LISBOA_WORDS = frozenset(_LISBOA.split())
# Words of every card and board game: a table id made of one of these names no Lisboa concept.
_GENERIC = (
    """discard pass decline take open build cost blue red purple brown card cards hand deck pile
    display action actions sell trade royal end period turn round phase player score move step
    color colour seat state owner trigger variant flag kind"""
)
GENERIC = frozenset(_GENERIC.split())


def _split(text: str) -> list[str]:
    """The words of an identifier or a string: snake_case, kebab-case, CamelCase and prose.
    The project's own names (`lisboa_rules`, `lisboa_engine`) are no word of the game's."""
    text = re.sub(r"lisboa_(rules|engine)", " ", text)
    return [w.lower() for w in re.split(r"[^A-Za-zÀ-ÿ]+|(?<=[a-z])(?=[A-Z])", text) if w]


def game_nouns(rules: Path) -> frozenset[str]:
    """The game's nouns: the words of the ids and names of rules/'s tables, and LISBOA_WORDS."""

    def load(name: str) -> dict:
        doc, problems = load_file(rules / f"{name}.yaml")
        assert doc is not None, problems
        return doc.data

    nobles, court, game, state = load("nobles"), load("court"), load("game"), load("state")
    rows = [*nobles["nobles"], *nobles["state_actions"], *nobles["noble_actions"]]
    rows += court["actions"]
    words = set(LISBOA_WORDS)
    texts = [str(r.get("id", "")) for r in rows]
    texts += [str(n.get("name", "")) for n in nobles["nobles"]]
    texts += [b["id"] if isinstance(b, dict) else str(b) for b in game["businesses"]]
    texts += [str(k["id"]) for k in state["kinds"]]
    for text in texts:
        words.update(w for w in _split(text) if len(w) > 3)
    return frozenset(words - GENERIC)


def code_words(source: str) -> list[tuple[int, str, str]]:
    """(line, word, token) for every word of every identifier and string of Python source."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME:
            text = tok.string
        elif tok.type == tokenize.STRING:
            try:
                text = str(ast.literal_eval(tok.string))
            except (ValueError, SyntaxError):  # an f-string: its literal parts are words too
                text = tok.string
        elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            text = tok.string
        else:
            continue
        out += [(tok.start[0], w, text[:60]) for w in _split(text)]
    return out


def nouns_in(source: str, nouns: frozenset[str]) -> list[str]:
    return [f"{line}: {word} ({token!r})" for line, word, token in code_words(source)
            if word in nouns]


NOUNS = game_nouns(ROOT / "rules")


@pytest.mark.parametrize("path", sorted(RUNTIME.glob("*.py")), ids=lambda p: p.name)
def test_the_runtime_names_no_game_noun(path: Path) -> None:
    found = nouns_in(path.read_text(encoding="utf-8"), NOUNS)
    assert not found, f"{path.relative_to(ROOT)} names the game:\n" + "\n".join(found[:40])


@pytest.mark.parametrize(
    "snippet",
    [
        "def visit_cost(g): pass\n",  # an identifier
        "x = g.players[0].royal_favors\n",  # a field
        'raise ValueError("not enough Influence")\n',  # a string
        'def f():\n    """Pay the Treasury."""\n',  # a docstring
        "class NobleDef: pass\n",  # CamelCase
        'k = "build-store"\n',  # an id of rules/
        "x = f'{n} wigs'\n",  # an f-string's words
    ],
)
def test_the_check_finds_a_game_noun(snippet: str) -> None:
    assert nouns_in(snippet, NOUNS), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "def legal_moves(g): return [m for m in g.moves]\n",
        'raise ValueError("the hand holds at most 5 cards")\n',
        "# a comment may say Noble: comments are not code\nx = 1\n",
    ],
)
def test_generic_code_passes(snippet: str) -> None:
    assert not nouns_in(snippet, NOUNS), snippet


def test_the_nouns_come_from_the_rules(tmp_path: Path) -> None:
    """A Noble added in rules/ is a game noun: the list follows the data."""
    rules = tmp_path / "rules"
    rules.mkdir()
    for f in (ROOT / "rules").glob("*.yaml"):
        (rules / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    loaded, _ = load_file(rules / "nobles.yaml")
    assert loaded is not None
    doc = loaded.data
    doc["nobles"].append({**doc["nobles"][0], "id": "archbishop", "name": "The Archbishop"})
    (rules / "nobles.yaml").write_text(json.dumps(doc), encoding="utf-8")  # JSON is YAML
    assert "archbishop" in game_nouns(rules)
    assert "archbishop" not in NOUNS


def _class_fields(source: str, name: str) -> dict[str, str]:
    """The annotated fields of a class of Python source: name -> annotation."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {
                st.target.id: ast.unparse(st.annotation)
                for st in node.body
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
            }
    raise AssertionError(f"no class {name}")


@pytest.mark.parametrize("name", ["RuleSet", "Game", "Player"])
def test_the_runtime_declares_generated_fields_as_the_engine_has_them(name: str) -> None:
    """The runtime type-checks against placeholders of the generated classes: each field it
    declares is one the generated engine has, with the same type."""
    runtime = _class_fields((RUNTIME / "engine.py").read_text(encoding="utf-8"), name)
    engine = _class_fields((ROOT / "generated" / "lisboa_engine.py").read_text(encoding="utf-8"),
                           name)
    assert runtime
    for field, annotation in runtime.items():  # `Any` stands for a class of the game's tables
        pattern = re.escape(annotation).replace("Any", r"[\w\[\], .|]+")
        assert re.fullmatch(pattern, engine.get(field, "")), (name, field, engine.get(field))


def test_the_rule_sets_fields_are_those_the_compiler_fills() -> None:
    from lisboa_rules.emit.engine import tables

    names = [f[0] for f in tables.RULESET.fields]
    tables.check_fields(reversed(names))
    with pytest.raises(AssertionError, match="missing"):
        tables.check_fields(names[1:])
    with pytest.raises(AssertionError, match="undeclared"):
        tables.check_fields([*names, "extra"])
