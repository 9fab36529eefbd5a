"""A list's declared `max_items` is a guarantee (rules/state.yaml: a hand holds at most the hand
size): every write that adds items to such a list is proven within the bound at build
(lang/total.py), refused where it goes over (`items-over-max`), or checked by the engine at the
write, which fails there naming the rule (the build's backstop games report it at the rule).
The hostile house rules are tests/cases/max-items/*.yaml."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ENGINE_PATH, ROOT, load_engine, run_cli

from lisboa_rules.cli.main import main
from lisboa_rules.pipeline import analyse
from lisboa_rules.sim.agents import make_agent

CASES = ROOT / "tests" / "cases" / "max-items"


def _house(tmp_path: Path, name: str) -> tuple[Path, str]:
    text = (CASES / f"{name}.yaml").read_text(encoding="utf-8")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text


def _line(text: str, words: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if words in ln)


def test_the_base_game_proves_every_write_but_the_draw() -> None:
    """Proven: the setup's new players (one a time, as many as the seats), its deals into
    hands and clergy never written before, the sorted hand, the period's draw back to the hand
    size (`top: N - len(q.hand)`), the clergy tile taken after the oldest are given up (a
    repeat that drains the list). Checked in play: the refill's draw, as a hand is full or not
    as the turn went."""
    compiled, diags = analyse(ROOT / "rules")
    assert compiled is not None, diags
    for rs in compiled.rulesets:
        steps = rs.steps
        assert steps is not None
        guarded = dict(steps.guarded_writes)
        assert len(guarded) == 1, guarded
        (((path, field), most),) = guarded.items()
        assert path[:2] == ("flow", "moves") and field == "player.hand" and most == 5
        proven = steps.proven_writes
        assert {f for _p, f in proven} == {"player.hand", "player.clergy", "game.players"}
        assert any(p[:2] == ("flow", "period_end") for p, _f in proven)
        assert any(p[:2] == ("effects", "procedures") and f == "player.clergy" for p, f in proven)


def test_the_engine_checks_only_the_draw() -> None:
    text = ENGINE_PATH.read_text(encoding="utf-8")
    guards = [m.start() for m in re.finditer(r"than its max_items, 5, allows", text)]
    assert guards
    for at in guards:
        fn = text.rfind("\ndef ", 0, at)
        assert text.startswith("\ndef _play_draw", fn), text[fn : fn + 60]


def test_a_setup_that_deals_more_than_a_hand_holds_is_refused_at_the_step(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    house, text = _house(tmp_path, "deal-more")
    code, _out, err = run_cli(
        ["validate", "--house", str(house), "--variant", "deal-more", "--play", "0"],
        capsys,
        monkeypatch,
    )
    assert code == 1, err
    line = _line(text, "rules.game.start.hand + 2")
    found = re.search(rf"{re.escape(str(house))}:{line}:\d+: error\[items-over-max\]: (.*)", err)
    assert found is not None, err
    assert "'q.hand'" in found[1] and "max_items (5)" in found[1], found[1]
    assert "did you mean 'first: min(rules.game.start.hand + 2, 5 - len(q.hand))'" in found[1]
    assert re.search(r"rules/game\.yaml:\d+:\d+: note: the max_items of player\.hand \(5\)", err)
    assert len(re.findall(r"error\[", err)) == 1, err


def test_a_new_record_given_more_items_than_its_list_holds_is_refused(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    house, text = _house(tmp_path, "new-hand")
    code, _out, err = run_cli(
        ["validate", "--house", str(house), "--variant", "new-hand", "--play", "0"],
        capsys,
        monkeypatch,
    )
    assert code == 1, err
    line = _line(text, "- new: game.players")
    found = re.search(rf"{re.escape(str(house))}:{line}:\d+: error\[items-over-max\]: (.*)", err)
    assert found is not None, err
    assert (
        "gives a new record's hand [1, 2, 3, 4, 5, 6], more items than its max_items (5)"
        in (found[1])
    )


def test_a_max_items_below_what_the_rules_deal_is_refused_at_each_step(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The house rule changes the bound, not the steps: the steps of rules/flow.yaml that fill
    a hand to the hand size are refused, each with a note at the house rule's max_items."""
    house, text = _house(tmp_path, "small-hand")
    code, _out, err = run_cli(
        ["validate", "--house", str(house), "--variant", "small-hand", "--play", "0"],
        capsys,
        monkeypatch,
    )
    assert code == 1, err
    flow = (ROOT / "rules" / "flow.yaml").read_text(encoding="utf-8")
    deal = _line(flow, "move: {first: rules.game.start.hand,")
    draw_back = _line(flow, 'top: "rules.game.start.hand - len(q.hand)"')
    for line in (deal, draw_back):
        assert re.search(
            rf"rules/flow\.yaml:{line}:\d+: error\[items-over-max\]: .*max_items "
            r"\(3\)",
            err,
        ), err
    at = _line(text, "max_items: 3")
    assert f"{house}:{at}:" in err and "note: the max_items of player.hand (3)" in err, err
    assert len(re.findall(r"error\[", err)) == 2, err


def test_a_write_neither_proven_nor_refused_is_an_engine_fault_at_its_step(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawing two cards may overfill a hand or not, as the turn went: the build accepts it
    and the engine checks it at the write; the backstop's games report the fault at the house
    step (before: at the step after it, as a save that does not load, when a save happened
    to be made with an overfull hand)."""
    house, text = _house(tmp_path, "draw-two")
    args = ["validate", "--house", str(house), "--variant", "draw-two"]
    code, _out, err = run_cli([*args, "--play", "0"], capsys, monkeypatch)
    assert code == 0, err
    code, _out, err = run_cli([*args, "--play", "2"], capsys, monkeypatch)
    assert code == 1, err
    line = _line(text, "{top: 2,")
    found = re.search(rf"{re.escape(str(house))}:{line}:\d+: error\[engine-failed\]: (.*)", err)
    assert found is not None, err
    assert "more items into player.hand than its max_items, 5" in found[1], found[1]


def test_a_setup_step_neither_proven_nor_refused_fails_every_game_at_it(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    house, text = _house(tmp_path, "deal-twice")
    code, _out, err = run_cli(
        ["validate", "--house", str(house), "--variant", "deal-twice", "--play", "1"],
        capsys,
        monkeypatch,
    )
    assert code == 1, err
    # the second deal, in the step added after the first
    line = [i for i, ln in enumerate(text.splitlines(), 1) if "to: q.hand}" in ln][-1]
    found = re.search(rf"{re.escape(str(house))}:{line}:\d+: error\[engine-failed\]: (.*)", err)
    assert found is not None, err
    assert "than its max_items, 5" in found[1] and "0 moves played" in found[1], found[1]


@pytest.fixture(scope="module")
def draw_two(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("draw-two")
    house, _text = _house(tmp, "draw-two")
    out = tmp / "g"
    args = [
        "build",
        "--no-cache",
        "--rules",
        str(ROOT / "rules"),
        "--house",
        str(house),
        "--variant",
        "draw-two",
        "--play",
        "0",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    return load_engine(out / "lisboa_engine.py", "max_items_draw_two")


def test_no_state_over_the_bound_is_made(draw_two: Any) -> None:
    """Random games of the house rule: every state the engine makes keeps each hand within 5
    cards; the draw that would overfill one fails, naming the house step, and leaves the state
    it was given as it was."""
    E = draw_two
    faults = 0
    for seed in range(6):
        g = E.new_game(2 + seed % 3, [], seed)
        step = make_agent("random", E, seed)
        while g.phase != "over":
            move = step(g)
            before = E.dumps(g)
            try:
                g = E.apply_move(g, move)
            except E.StateError as exc:
                assert move.kind == "draw"
                assert exc.at is not None and exc.at.endswith("draw-two.yaml:20"), exc.at
                assert "than its max_items, 5" in str(exc)
                assert E.dumps(g) == before
                faults += 1
                break
            assert all(len(q.hand) <= 5 for q in g.players)
        else:
            E.loads(E.dumps(g))  # a game that never overfilled a hand saves its end
    assert faults > 0
