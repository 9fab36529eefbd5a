"""Every key is read or refused (issue 33): the engine runs only steps, so a key of an action
(rules/court.yaml `actions`) other than what names it, the move it makes and its words is data
its steps read as `this.KEY`, or it is refused where it is written (`unread-key`).

The schema is walked key by key (court.schema.json, an action's properties): each key is either
read by the steps (a change of it changes the checked steps of every action that carries it,
and adding it to an action whose steps do not read it is refused at the key), or the compiler
reads it itself (the move's kind, its phase, its steps, its rule), or only the reference prints
it (names, words, provenance: a change of it leaves every action's steps as they were). Then
the four cases measured in the issue: a new cost on Follow and `favor_returned: false` change
what a follower pays and keeps; `followable: true` on Trade and a `reward:` on Pass, which no
step of theirs reads, are refused (and a Pass whose steps read its reward pays it).
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import give_favor, place_officials, treasury_index

from lisboa_rules import pipeline
from lisboa_rules.core.diagnostics import Diagnostic
from lisboa_rules.ir.stmt import data_read
from lisboa_rules.model.checked import NOBLE_ACTION_KEYS, ROW_KEYS

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
SCHEMA = ROOT / "lisboa_rules" / "front" / "schema" / "court.schema.json"
FLOW_SCHEMA = SCHEMA.with_name("flow.schema.json")
ENGINE = "lisboa_engine.py"

# --- every key of an action, with what reads it ----------------------------------------------

# data of the steps: each read as `this.KEY` by the steps of the actions that carry it
READ_BY_STEPS = {
    "cost": "the action's cost: `cost(this.cost, ...)` (Visit and Follow pay it through "
            "pay-visit, Sponsor pays it in réis)",
    "lacking_cost": "what a player lacking the cost pays instead: `cost(this.lacking_cost, "
                    "cost=price)` (Visit, Follow)",
    "favor_returned": "whether a follower returns the Royal Favor: `if: this.favor_returned` "
                      "(Follow)",
    "followable": "whether the others may follow: `open: this.followable` (Visit, Sponsor)",
    "reward": "a bundle of effects: `apply: {effects: this.reward}` (Discard)",
}
# read by the compiler itself (model/checked.py ROW_KEYS): what the move is and does
BY_THE_COMPILER = {
    "id": "the rule a refusal names by default, and what a variant matches the action by",
    "procedure": "the kind of move the action makes (the engine's `Move.kind`)",
    "phase": "the phase the move is made in",
    "steps": "the steps themselves: what the engine runs",
    "rule": "(a move of the flow, rules/flow.yaml `moves`) the rule its refusals name",
}
# printed by the reference only: a change of one changes no step
REFERENCE_ONLY = {
    "name": "the action's title in the reference (and the engine's table of actions)",
    "number": "its number in the reference's table of the turn",
    "plays": "what it plays, in the reference's table of the turn and its card",
    "text": "the rule's words",
    "source": "where the rule comes from: the annotated edition prints it",
    "assumptions": "the assumptions it rests on: the annotated edition and the Notes print them",
}

HEAD = {
    "kind": "variant",
    "title": "A house rule",
    "applies": "chosen",
    "text": "A house rule.",
    "source": ["facts:§4"],
}
HOUSE_COST = {
    "$add": True,
    "id": "house-cost",
    "name": "A house cost",
    "formula": "fee",
    "params": {"fee": 2},
    "ranges": {"fee": [0, None]},
    "text": "The house cost is {formula}.",
    "source": ["facts:§4"],
}


def _court() -> dict[str, Any]:
    return dict(yaml.safe_load((RULES / "court.yaml").read_text(encoding="utf-8")))


ACTIONS = {str(a["id"]): a for a in _court()["actions"]}


def _variant(tmp: Path, vid: str, changes: dict[str, Any]) -> Path:
    path = tmp / f"{vid}.yaml"
    doc = {**HEAD, "id": vid, "changes": changes}
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _analyse(house: Path | None = None) -> tuple[Any, list[Diagnostic]]:
    extra = [house] if house is not None else []
    fold = (house.stem,) if house is not None else ()
    return pipeline.analyse(RULES, fold, extra=extra)


def _actions(compiled: Any) -> dict[str, str]:
    """The checked steps (the IR) of every action of the base rule set (the house rule
    folded), each as its full repr (the IR's constants of the data compare by identity)."""
    assert compiled is not None
    (base,) = [rs for rs in compiled.rulesets if rs.key == ()]
    return {k: repr(a) for k, a in base.steps.actions.items()}


def _checked(compiled: Any) -> dict[str, Any]:
    (base,) = [rs for rs in compiled.rulesets if rs.key == ()]
    return dict(base.steps.actions)


def _errors(diags: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diags if d.is_error]


def _line_of(path: Path, key: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, x in enumerate(lines, 1) if x.lstrip().startswith(f"{key}:"))


@pytest.fixture(scope="module")
def base_compiled() -> Any:
    compiled, diags = _analyse()
    assert not _errors(diags)
    return compiled


@pytest.fixture(scope="module")
def base_actions(base_compiled: Any) -> dict[str, str]:
    return _actions(base_compiled)


# --- the schema, key by key ------------------------------------------------------------------


def test_every_key_of_an_action_is_read_or_refused_or_printed() -> None:
    """The schema's keys of an action (and of a move of the flow) are exactly those listed
    here, each in one list, and the compiler's own keys (ROW_KEYS: the rest must be read by
    steps) are the ones it reads."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    flow = json.loads(FLOW_SCHEMA.read_text(encoding="utf-8"))
    keys = set(schema["properties"]["actions"]["items"]["properties"])
    moves = set(flow["properties"]["moves"]["items"]["properties"])  # rows of steps too
    assert moves <= ROW_KEYS, "a move of the flow has no data of its steps yet"
    keys |= moves
    lists = [set(READ_BY_STEPS), set(BY_THE_COMPILER), set(REFERENCE_ONLY)]
    assert set().union(*lists) == keys, "classify each key of an action here"
    assert sum(len(x) for x in lists) == len(keys), "a key is in one list only"
    assert set(BY_THE_COMPILER) | set(REFERENCE_ONLY) == ROW_KEYS
    # every key the steps read is read by some action of the rules as they are
    carried = {k for a in ACTIONS.values() for k in a}
    assert set(READ_BY_STEPS) <= carried


def test_the_steps_read_every_key_the_rules_carry(base_compiled: Any) -> None:
    """Each action of rules/ reads each of its keys that are data of its steps (the IR's
    reads of `this`): no key printed and ignored."""
    checked = _checked(base_compiled)
    for aid, row in ACTIONS.items():
        kind = str(row.get("procedure") or aid)
        read = {p[1] for p, _at in data_read(checked[kind].items)
                if len(p) > 1 and p[0] == "this"}
        assert {k for k in row if k in READ_BY_STEPS} <= read, aid


def _changed(key: str, value: Any) -> Any:
    """Another value of a key the steps read."""
    if key in ("cost", "lacking_cost"):
        return "house-cost"
    if isinstance(value, bool):
        return not value
    if key == "reward":
        return {k: int(v) + 1 for k, v in value.items()}
    raise AssertionError(f"no change written for '{key}'")


CARRIED = [(aid, key) for aid, a in ACTIONS.items() for key in a if key in READ_BY_STEPS]
MISSING = [(aid, key) for aid, a in ACTIONS.items() for key in READ_BY_STEPS if key not in a]


@pytest.mark.sampled(4)
@pytest.mark.parametrize(("aid", "key"), CARRIED, ids=[f"{a}-{k}" for a, k in CARRIED])
def test_a_change_of_a_key_the_steps_read_changes_them(
    tmp_path: Path, base_actions: dict[str, str], aid: str, key: str
) -> None:
    """A new value of a key the steps read builds, and the checked steps of that action (what
    the engine prints) change; those of the other actions do not."""
    row = ACTIONS[aid]
    change: dict[str, Any] = {"id": aid, key: _changed(key, row[key]),
                              "text": f"{row['text']} (House rule.)"}
    if "plays" in row:
        change["plays"] = f"{row['plays']} (house rule)"
    court: dict[str, Any] = {"actions": [change]}
    if key in ("cost", "lacking_cost"):
        court["costs"] = [HOUSE_COST]
    house = _variant(tmp_path, f"house-{key.replace('_', '-')}", {"court": court})
    compiled, diags = _analyse(house)
    assert not _errors(diags), [d.message for d in _errors(diags)]
    after = _actions(compiled)
    kind = str(row.get("procedure") or aid)
    assert after[kind] != base_actions[kind], f"changing {aid}.{key} changes no step"
    assert {k: v for k, v in after.items() if k != kind} \
        == {k: v for k, v in base_actions.items() if k != kind}


def _added(key: str) -> Any:
    return {"cost": "visit-cost", "lacking_cost": "wigs-for-influence", "favor_returned": True,
            "followable": True, "reward": {"reis": 1}}[key]


@pytest.mark.sampled(5)
@pytest.mark.parametrize(("aid", "key"), MISSING, ids=[f"{a}-{k}" for a, k in MISSING])
def test_a_key_no_step_reads_is_refused_at_the_key(tmp_path: Path, aid: str, key: str) -> None:
    """A key added to an action whose steps never read it is one located error at the key,
    naming `this.KEY` and what to do (no other error: no reworded text is demanded for it)."""
    house = _variant(tmp_path, f"house-{aid}-{key.replace('_', '-')}",
                     {"court": {"actions": [{"id": aid, key: {"$add": _added(key)}}]}})
    _compiled, diags = _analyse(house)
    errors = _errors(diags)
    assert [d.code for d in errors] == ["unread-key"], [d.message for d in errors]
    (d,) = errors
    assert d.span is not None and Path(d.span.file).name == house.name
    assert d.span.line == _line_of(house, key)
    assert f"this.{key}" in d.message and f"no step of '{aid}'" in d.message
    assert "or remove" in d.message


def test_keys_only_the_reference_prints_change_no_step(
    tmp_path: Path, base_actions: dict[str, str]
) -> None:
    """A new name, number, plays, text or source of an action changes no action's steps."""
    row = ACTIONS["visit"]
    house = _variant(tmp_path, "house-words", {"court": {"actions": [{
        "id": "visit", "name": "Call on a Noble", "number": 7,
        "plays": "a Noble card before the Court", "text": f"{row['text']} (House words.)",
        "source": ["facts:§4"],
    }]}})
    compiled, diags = _analyse(house)
    assert not _errors(diags), [d.message for d in _errors(diags)]
    assert _actions(compiled) == base_actions


# --- the Noble actions' keys (rules/nobles.yaml `noble_actions`) ------------------------------

NOBLE_READ_BY_STEPS = {
    "lots": "the lots of each business: `this.lots[it]` (Build a store)",
    "rubble": "the rubble taken: `{do: rubble, with: {amount: this.rubble}}` (Build a store, "
              "Open a building)",
    "wigs_per_official": "the wigs per Official: `this.wigs_per_official` (Open a building)",
    "extra_pick": "the extra Decree: `this.extra_pick.max_markers`, `.marker_on` (Take a "
                  "Decree)",
}
NOBLE_BY_THE_COMPILER = {
    "id": "the procedure's id, the rule a refusal names and what a Noble names",
    "steps": "the steps themselves",
    "forbidden_by_flag": "a require the compiler puts before the steps (the Queen variant)",
    "land_price": "a formula the steps read by name (`land_price`)",
    "params": "the params of that formula (a param nothing reads is `unused-value`)",
    "ranges": "the ranges of those params",
}
NOBLE_REFERENCE_ONLY = {
    "name": "its title in the reference",
    "text": "its words",
    "source": "where it comes from (the annotated edition)",
    "assumptions": "what it rests on (the annotated edition and the Notes)",
}
NOBLES_SCHEMA = SCHEMA.with_name("nobles.schema.json")
NOBLE_ACTIONS = {str(a["id"]): a for a in yaml.safe_load(
    (RULES / "nobles.yaml").read_text(encoding="utf-8"))["noble_actions"]}


def test_every_key_of_a_noble_action_is_read_or_refused_or_printed(base_compiled: Any) -> None:
    """The schema's keys of a Noble action, each in one list; the steps of every Noble action
    of rules/ read each key of theirs that is data of their steps."""
    schema = json.loads(NOBLES_SCHEMA.read_text(encoding="utf-8"))
    keys = set(schema["properties"]["noble_actions"]["items"]["properties"])
    lists = [set(NOBLE_READ_BY_STEPS), set(NOBLE_BY_THE_COMPILER), set(NOBLE_REFERENCE_ONLY)]
    assert set().union(*lists) == keys, "classify each key of a Noble action here"
    assert sum(len(x) for x in lists) == len(keys), "a key is in one list only"
    assert set(NOBLE_BY_THE_COMPILER) | set(NOBLE_REFERENCE_ONLY) == NOBLE_ACTION_KEYS & keys
    assert not set(NOBLE_READ_BY_STEPS) & NOBLE_ACTION_KEYS
    (base,) = [rs for rs in base_compiled.rulesets if rs.key == ()]
    for nid, row in NOBLE_ACTIONS.items():
        proc = base.steps.procs[nid]
        read = {p[1] for p, _at in data_read((*proc.guard, *proc.effects))
                if len(p) > 1 and p[0] == "this"}
        assert {k for k in row if k in NOBLE_READ_BY_STEPS} <= read, nid


def _noble_changed(key: str, value: Any) -> Any:
    if key == "extra_pick":
        return {**value, "max_markers": int(value["max_markers"]) + 1}
    if isinstance(value, dict):
        return {k: int(v) + 1 for k, v in value.items()}
    return int(value) + 1


NOBLE_CARRIED = [(n, k) for n, a in NOBLE_ACTIONS.items() for k in a if k in NOBLE_READ_BY_STEPS]
NOBLE_MISSING = [(n, k) for n, a in NOBLE_ACTIONS.items() for k in NOBLE_READ_BY_STEPS
                 if k not in a]


def _procs(compiled: Any) -> dict[str, str]:
    (base,) = [rs for rs in compiled.rulesets if rs.key == ()]
    return {k: repr(p) for k, p in base.steps.procs.items()}


@pytest.mark.sampled(2)
@pytest.mark.parametrize(("nid", "key"), NOBLE_CARRIED, ids=[f"{n}-{k}" for n, k in NOBLE_CARRIED])
def test_a_change_of_a_noble_action_key_changes_its_steps(
    tmp_path: Path, base_compiled: Any, nid: str, key: str
) -> None:
    row = NOBLE_ACTIONS[nid]
    change = {"id": nid, key: _noble_changed(key, row[key]),
              "text": f"{row['text']} (House rule.)"}
    house = _variant(tmp_path, f"house-{key.replace('_', '-')}",
                     {"nobles": {"noble_actions": [change]}})
    compiled, diags = _analyse(house)
    assert not _errors(diags), [d.message for d in _errors(diags)]
    before, after = _procs(base_compiled), _procs(compiled)
    assert after[nid] != before[nid], f"changing {nid}.{key} changes no step"
    assert {k: v for k, v in after.items() if k != nid} \
        == {k: v for k, v in before.items() if k != nid}


def _noble_added(key: str) -> Any:
    return {"lots": {"gold": 1, "tools": 1, "books": 1, "cloth": 1}, "rubble": 1,
            "wigs_per_official": 1,
            "extra_pick": {"marker_on": "marquis", "max_markers": 1,
                           "text": "An extra pick for a marker on {marker_on}."}}[key]


@pytest.mark.sampled(3)
@pytest.mark.parametrize(("nid", "key"), NOBLE_MISSING, ids=[f"{n}-{k}" for n, k in NOBLE_MISSING])
def test_a_noble_action_key_no_step_reads_is_refused(tmp_path: Path, nid: str, key: str) -> None:
    house = _variant(tmp_path, f"house-{nid}-{key.replace('_', '-')}",
                     {"nobles": {"noble_actions": [{"id": nid, key: {"$add": _noble_added(key)}}]}})
    _compiled, diags = _analyse(house)
    errors = _errors(diags)
    assert [d.code for d in errors] == ["unread-key"], [d.message for d in errors]
    (d,) = errors
    assert d.span is not None and Path(d.span.file).name == house.name
    assert d.span.line == _line_of(house, key)
    assert f"no step of '{nid}' reads its '{key}' (as this.{key})" in d.message


# --- the four cases of the issue -------------------------------------------------------------

FOLLOW_AND_PASS = {
    "court": {
        "costs": [{**HOUSE_COST, "id": "follow-fee", "name": "Follow fee",
                   "params": {"fee": 1}, "text": "A follow costs {formula} Influence."}],
        "actions": [
            {"id": "follow", "cost": "follow-fee", "favor_returned": False,
             "text": "After your visit, each other player who has the Royal Favor of that Noble "
                     "may follow it for the follow fee, keeping the Royal Favor."},
            {"id": "pass", "reward": {"$add": {"reis": 1}},
             "steps": [
                 {"require": "len(hand) == 0", "reason": "you still have cards to play"},
                 {"apply": {"effects": "this.reward"}},
                 {"set": {"game.phase": "'refill'"}}],
             "text": "A player with no card in hand passes and takes {reward.reis|money}."},
        ]
    }
}


@pytest.fixture(scope="module")
def house_engine(tmp_path_factory: pytest.TempPathFactory) -> types.ModuleType:
    """The engine with a house rule folded in: Follow costs 1 Influence and keeps the Royal
    Favor; Pass reads its reward."""
    house = _variant(tmp_path_factory.mktemp("keys"), "follow-and-pass", FOLLOW_AND_PASS)
    result = pipeline.compile_rules(RULES, (house.stem,), extra=[house])
    errors = _errors(result.diagnostics)
    assert not errors, [d.message for d in errors]
    name = "_keys_read_engine"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        exec(compile(result.files[ENGINE], "<keys engine>", "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)
    module.REFERENCE = result.files["reference/rules.md"]  # type: ignore[attr-defined]
    return module


def _followed(E: Any) -> tuple[Any, Any]:
    """Seat 0 visits Manuel, whose office holds 2 Officials of seat 2; seat 1, with 5
    Influence and Manuel's Royal Favor, follows with the Plan State action: the state before
    and after the follow."""
    g = E.new_game(3, (), 0)
    for s in range(3):
        for noble in list(g.players[s].royal_favors):
            g.players[s].royal_favors.remove(noble)
            g.favors[noble] += 1
    give_favor(g, 1, "manuel")
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 2, "manuel", 2)
    for p in g.players:
        p.reis = 30
    card = next(n for n, c in sorted(g.rs.cards.items()) if c.type == "manuel"
                and all(n not in p.hand for p in g.players))
    for c in list(g.players[0].hand):
        g.players[0].hand.remove(c)
        g.discard.append(c)
    for where in [*g.piles.values(), g.discard]:
        if card in where:
            where.remove(card)
    g.players[0].hand.append(card)
    g.current = g.actor = 0
    g = E.apply_move(g, E.Move("visit", 0, card=card, business=g.rs.businesses[0]))
    assert g.phase == "follow" and g.actor == 1
    g.players[1].influence = 5
    return g, E.apply_move(g, E.Move("follow", 1, state_action="plan"))


def test_a_new_cost_on_follow_is_what_followers_pay(engine: Any, house_engine: Any) -> None:
    """Follow's `cost:` is read by its steps: with the house fee a follower pays 1 Influence,
    where the visit cost (2 rival Officials) still costs 2 without it."""
    _before, after = _followed(engine)
    assert after.players[1].influence == 5 - 2
    _before, after = _followed(house_engine)
    assert after.players[1].influence == 5 - 1
    assert "**Cost:** [Follow fee](#follow-fee)" in house_engine.REFERENCE  # as it is played


def test_favor_returned_false_keeps_the_royal_favor(engine: Any, house_engine: Any) -> None:
    """`favor_returned: false` on Follow: the follower keeps the Royal Favor tile and the
    supply does not grow; with the base rules it goes back."""
    before, after = _followed(engine)
    assert "manuel" not in after.players[1].royal_favors
    assert after.favors["manuel"] == before.favors["manuel"] + 1
    before, after = _followed(house_engine)
    assert "manuel" in after.players[1].royal_favors
    assert after.favors["manuel"] == before.favors["manuel"]


def test_followable_on_trade_is_refused(tmp_path: Path) -> None:
    """`followable: true` on Trade, whose steps hand the turn to no follower: one located
    error at the key, naming the steps that read it (Visit's and Sponsor's), and no demand
    to reword Trade's text."""
    house = _variant(tmp_path, "trade-followable",
                     {"court": {"actions": [{"id": "trade", "followable": {"$add": True}}]}})
    _compiled, diags = _analyse(house)
    (d,) = _errors(diags)
    assert d.code == "unread-key" and d.span is not None
    assert (Path(d.span.file).name, d.span.line) == (house.name, _line_of(house, "followable"))
    assert "no step of 'trade' reads its 'followable' (as this.followable)" in d.message
    assert "as the steps of sponsor, visit do" in d.message
    notes = [r.message for r in d.related]
    assert any("'visit' read it here" in n for n in notes)
    assert any("'sponsor' read it here" in n for n in notes)
    assert all(Path(r.span.file).name == "court.yaml" for r in d.related)


def test_a_reward_on_pass_is_refused_unless_its_steps_read_it(
    tmp_path: Path, house_engine: Any
) -> None:
    """`reward:` on Pass alone is refused at the key (the reference would say "takes 1 real"
    and the engine would pay nothing); with a step that applies `this.reward` it is paid."""
    house = _variant(tmp_path, "pass-reward", {"court": {"actions": [{
        "id": "pass", "reward": {"$add": {"reis": 1}},
        "text": "A player with no card in hand passes and takes {reward.reis|money}."}]}})
    _compiled, diags = _analyse(house)
    (d,) = _errors(diags)
    assert d.code == "unread-key" and "this.reward" in d.message
    assert d.span is not None and d.span.line == _line_of(house, "reward")
    assert "as the steps of discard do" in d.message
    E = house_engine
    g = E.new_game(3, (), 0)
    seat = g.actor
    p = g.players[seat]
    g.discard.extend(p.hand)
    p.hand.clear()
    reis = p.reis
    (move,) = [m for m in E.legal_moves(g) if m.kind == "pass"]
    after = E.apply_move(g, move)
    assert after.players[seat].reis == reis + 1
    assert "passes and takes 1 real" in E.REFERENCE
