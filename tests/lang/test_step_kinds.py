"""The kinds of step are classes (lisboa_rules/lang/tree.py): each is what the schema calls a
step's effect key, parse_steps reads each into its class with typed fields, and a dispatch over
them that forgets one fails the type checker (every dispatch ends in `assert_never`)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import optional
import pytest

from lisboa_rules.lang import steps as st
from lisboa_rules.lang import tree

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "lisboa_rules" / "front" / "schema" / "common.schema.json"
AT = ("effects", "effects", 0, "steps")


def _parse(raw: list[Any]) -> tuple[tuple[st.Step, ...], list[st.StepProblem]]:
    problems: list[st.StepProblem] = []
    return st.parse_steps(raw, AT, problems), problems


# -- (a) a dispatch that leaves out a kind fails mypy --------------------------------------------


def _dispatch(name: str, kinds: list[str]) -> str:
    cases = " | ".join(f"st.{k}()" for k in kinds)
    return (f"def {name}(s: st.Step) -> int:\n"
            "    match s:\n"
            f"        case {cases}:\n"
            "            return 1\n"
            "        case _:\n"
            "            assert_never(s)\n")


def test_a_dispatch_that_leaves_out_a_kind_fails_mypy(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One generated module: a dispatch over every class, which checks, and for each class a
    dispatch without it, where mypy says that class reaches `assert_never`."""
    names = [c.__name__ for c in st.STEP_CLASSES]
    parts = ["from typing import assert_never\n\nfrom lisboa_rules.lang import steps as st\n",
             _dispatch("every_kind", names)]
    for left_out in names:
        parts.append(_dispatch(f"without_{left_out}", [n for n in names if n != left_out]))
    snippet = tmp_path / "dispatch.py"
    snippet.write_text("\n\n".join(parts), encoding="utf-8")
    monkeypatch.setenv("MYPYPATH", str(ROOT))  # this tree's lisboa_rules, not an installed one
    mypy_api = optional.module("mypy.api", "dev")
    out, err, status = mypy_api.run([
        "--config-file", str(ROOT / "pyproject.toml"), "--strict", "--no-incremental",
        "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent", str(snippet)])
    assert status == 1, out + err
    lines = snippet.read_text(encoding="utf-8").splitlines()
    found: dict[str, str] = {}  # the class that reached assert_never -> its function
    for m in re.finditer(r"dispatch\.py:(\d+): error: (.*)", out):
        line, message = int(m.group(1)), m.group(2)
        assert "assert_never" in lines[line - 1] and "assert_never" in message, m.group(0)
        got = re.search(r'incompatible type "(?:[\w.]+\.)?(\w+)"', message)
        assert got is not None, message
        function = next(x for x in reversed(lines[:line]) if x.startswith("def "))
        found[got.group(1)] = function
    assert found == {n: f"def without_{n}(s: st.Step) -> int:" for n in names}, out


# -- (b) the classes are the schema's effect keys ------------------------------------------------


def test_every_kind_is_an_effect_key_of_the_step_schema_and_back() -> None:
    step = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]["step"]
    keys = set(step["properties"])
    siblings = {k for c in st.STEP_CLASSES for k in c.KEYS}
    assert set(st.KINDS) <= keys
    assert siblings <= keys, "a step's sibling key the schema does not know"
    # every other key of the schema is one every step has, or the sibling key of a kind
    assert keys - set(st.KINDS) == (set(tree.COMMON) | siblings) - set(st.KINDS)
    for kind in st.KINDS:  # the step's description lists the effect keys
        assert re.search(rf"\b{kind}\b", step["description"]), kind


def test_the_kinds_are_the_classes_of_the_union() -> None:
    assert len(set(st.KINDS)) == len(st.KINDS) == len(st.STEP_CLASSES)
    assert {c.KIND: c for c in st.STEP_CLASSES} == tree.BY_KIND
    for cls in st.STEP_CLASSES:
        assert issubclass(cls, tree.StepBase)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert not fields["span"].compare and not fields["written"].compare


# -- (c) parse_steps reads each kind into its class ------------------------------------------------


def _at(*path: str | int) -> tuple[str | int, ...]:
    return (*AT, *path)


# a step of each kind as written, and the tree parse_steps makes of it (at AT, index 0)
CASES: list[tuple[dict[str, Any], st.Step]] = [
    ({"gain": {"reis": 2, "game.treasury": -1}, "id": "x.pay", "text": "Pay.", "rule": "r"},
     st.Gain(places=(("reis", 2), ("game.treasury", -1)), id="x.pay", text="Pay.", rule="r",
             path=_at(0))),
    ({"set": {"game.pending": None, "done": True}},
     st.Set(places=(("game.pending", None), ("done", True)), path=_at(0))),
    ({"let": {"n": "len(hand)", "m": "n + 1"}},
     st.Let(names=(("n", "len(hand)"), ("m", "n + 1")), path=_at(0))),
    ({"move": {"top": 2, "from": "game.deck", "to": "hand"}},
     st.Move(mode="top", what=2, from_="game.deck", to="hand", path=_at(0))),
    ({"move": {"item": "card", "to": "game.discard"}},
     st.Move(mode="item", what="card", to="game.discard", path=_at(0))),
    ({"move": {"all": True, "from": "game.court"}},
     st.Move(mode="all", what=True, from_="game.court", path=_at(0))),
    ({"drop": "game.stores[store]"}, st.Drop(place="game.stores[store]", path=_at(0))),
    ({"require": "reis >= price", "reason": "you lack {price - reis} réis"},
     st.Require(cond="reis >= price", reason="you lack {price - reis} réis", path=_at(0))),
    ({"choose": {"as": "cards", "from": "hand", "where": "it.type != 'x'", "up_to": 2,
                 "leads": {"by": "it.type", "where": "it.type in rules.nobles.nobles.id"}},
      "reason": "not yours", "count_rule": "hand.limit", "count_reason": "two at most"},
     st.Choose(as_="cards", source="hand", where="it.type != 'x'", up_to=2,
               leads=tree.Leads(by="it.type", where="it.type in rules.nobles.nobles.id"),
               reason="not yours", count_rule="hand.limit", count_reason="two at most",
               path=_at(0))),
    ({"choose": {"as": "card", "from": "hand", "optional": True}},
     st.Choose(as_="card", source="hand", optional=True, path=_at(0))),
    ({"choose": {"as": "n", "from": "game.row", "min": 1, "max": "len(game.row)"}},
     st.Choose(as_="n", source="game.row", min=1, max="len(game.row)", path=_at(0))),
    ({"if": "reis > 0", "then": [{"gain": {"reis": -1}}], "else": [{"raise": "broke"}]},
     st.If(cond="reis > 0", then=(st.Gain(places=(("reis", -1),), path=_at(0, "then", 0)),),
           orelse=(st.Raise(event="broke", path=_at(0, "else", 0)),), path=_at(0))),
    ({"for_each": {"as": "q", "in": "game.players"}, "do": [{"set": {"q.passed": False}}]},
     st.ForEach(var="q", source="game.players",
                body=(st.Set(places=(("q.passed", False),), path=_at(0, "do", 0)),),
                path=_at(0))),
    ({"repeat": 2, "do": [{"shuffle": "game.deck"}]},
     st.Repeat(count=2, body=(st.Shuffle(place="game.deck", path=_at(0, "do", 0)),),
               path=_at(0))),
    ({"do": "pay-reis", "with": {"amount": 2}, "reason": "cannot", "none_reason": "none"},
     st.Do(proc="pay-reis", with_=(("amount", 2),), reason="cannot", none_reason="none",
           path=_at(0))),
    ({"raise": "visit"}, st.Raise(event="visit", path=_at(0))),
    ({"raise": {"event": "visit", "with": {"card": "card"}}},
     st.Raise(event="visit", with_=(("card", "card"),), path=_at(0))),
    ({"apply": {"effects": "row.effects", "noble": "noble", "choices": {"favor": "second"}}},
     st.Apply(effects="row.effects", params=(("noble", "noble"),),
              choices=(("favor", "second"),), path=_at(0))),
    ({"apply": {"effects": "card.reward", "choices": False}},
     st.Apply(effects="card.reward", choices=False, path=_at(0))),
    ({"shuffle": "game.deck"}, st.Shuffle(place="game.deck", path=_at(0))),
    ({"new": "game.players", "with": {"color": "'Red'"}},
     st.New(place="game.players", with_=(("color", "'Red'"),), path=_at(0))),
]


@pytest.mark.parametrize(("raw", "want"), CASES, ids=[type(w).__name__ for _r, w in CASES])
def test_parse_steps_reads_each_kind_into_its_class(raw: dict[str, Any], want: st.Step) -> None:
    (got,), problems = _parse([raw])
    assert problems == []
    assert type(got) is type(want)
    assert got == want
    assert got.kind == want.KIND
    assert got.written == raw[want.KIND]  # as written, for the annotated reference


def test_every_kind_has_a_case() -> None:
    assert {type(w) for _r, w in CASES} == set(st.STEP_CLASSES)


def test_the_typed_fields_read_as_written() -> None:
    (choose, gain), _ = _parse([{"choose": {"as": "c", "from": "hand", "min": 2}},
                                {"gain": {"reis": 1}}])
    assert isinstance(choose, st.Choose) and isinstance(gain, st.Gain)
    assert choose.several and choose.min == 2 and choose.max is None and choose.up_to is None
    (plain,), _ = _parse([{"choose": {"as": "c"}}])
    assert isinstance(plain, st.Choose)
    assert plain.source == "[]" and not plain.several and not plain.optional
    # a key written null is the expression None, not a key left out
    (nulls,), _ = _parse([{"choose": {"as": "c", "from": "hand", "where": None}}])
    assert isinstance(nulls, st.Choose) and nulls.where == "None"
    assert [s.kind for s in gain.walk()] == ["gain"]
    (loop,), _ = _parse([{"repeat": 1, "do": [{"if": "x", "then": [{"drop": "m[k]"}]}]}])
    assert [type(s).__name__ for s in loop.walk()] == ["Repeat", "If", "Drop"]


@pytest.mark.parametrize(("raw", "code", "message", "where"), [
    ({"move": {"from": "hand"}}, "step-shape",
     "move: {item|top|first|all: EXPR, from: PLACE, to: PLACE}", ("move",)),
    ({"move": {"item": 1, "top": 2}}, "step-shape",
     "move: {item|top|first|all: EXPR, from: PLACE, to: PLACE}", ("move",)),
    ({"choose": {"from": "hand"}}, "step-shape", "choose: {as: NAME, from: EXPR, ...}",
     ("choose",)),
    ({"choose": {"as": "c", "from": "hand", "up_to": 1, "leads": {"where": "x"}}}, "step-shape",
     "leads: {by: EXPR, where: COND}", ("choose", "leads")),
    ({"for_each": "hand", "do": []}, "step-shape", "for_each: {as: NAME, in: EXPR}",
     ("for_each",)),
    ({"let": 3}, "step-shape", "let: {NAME: EXPR}", ("let",)),
    ({"gain": ["reis"]}, "step-shape", "gain: {PLACE: EXPR}", ("gain",)),
    ({"raise": {"with": {}}}, "step-shape",
     "raise: EVENT, or raise: {event: EVENT, with: {PARAM: EXPR}}", ("raise",)),
    ({"apply": {"noble": "noble"}}, "step-shape", "apply: {effects: ROW.column, PARAM: EXPR}",
     ("apply",)),
    ({"do": "pay-reis", "with": "amount"}, "step-shape", "with: {PARAM: EXPR}", ("with",)),
    ({"new": "game.players", "with": ["color"]}, "step-shape", "with: {FIELD: EXPR}",
     ("with",)),
    ({"do": [{"gain": {"reis": 1}}]}, "unknown-reference",
     "unknown procedure [{'gain': {'reis': 1}}]", ("do",)),
    ({"gain": {"reis": [1]}}, "step-shape",
     "gain/reis: an expression is a text, a number, true, false or null", ("gain", "reis")),
])
def test_a_step_of_the_wrong_shape_is_a_located_problem_and_left_out(
        raw: dict[str, Any], code: str, message: str, where: tuple[str, ...]) -> None:
    got, problems = _parse([raw, {"gain": {"reis": 1}}])
    assert [type(s) for s in got] == [st.Gain]  # the others are still read
    assert problems == [st.StepProblem(code, message, _at(0, *where))]


def test_the_problems_of_the_steps_themselves_stay_as_they_were() -> None:
    got, problems = _parse([{"gain": {"reis": 1}, "do": "pay"}, "gain",
                            {"gain": {"reis": 1}, "reason": "no"},
                            {"if": "x", "do": [{"gain": {"reis": 1}}]}])
    assert [type(s) for s in got] == [st.Gain]  # the gain with a stray reason is read
    assert [(p.code, p.path) for p in problems] == [
        ("step-shape", _at(0)), ("step-shape", _at(1)), ("step-unknown-key", _at(2, "reason")),
        ("step-shape", _at(3, "do"))]
    assert problems[0].message.endswith("found gain, do")
