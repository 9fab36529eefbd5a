"""A backstop that points at the rule (issue 33): `validate` and `build` play seeded games of
every rule set on the engine they built (`--play N`) and turn a failure into a located
`engine-failed` error, with the seed and the moves that reproduce it; nothing is written."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest
from conftest import ENGINE_PATH, ROOT, run_cli

from lisboa_rules import pipeline
from lisboa_rules.cli.main import main
from lisboa_rules.emit.reference import render
from lisboa_rules.sim import backstop

# a house rule the static checks accept and that breaks what rules/state.yaml declares
BREAKS = (ROOT / "tests" / "cases" / "backstop" / "markers-from-nowhere.yaml").read_text(
    encoding="utf-8")


def _house(tmp_path: Path) -> Path:
    path = tmp_path / "markers-from-nowhere.yaml"
    path.write_text(BREAKS, encoding="utf-8")
    return path


def _error_at_house_step(house: Path, text: str, step: str, err: str) -> re.Match[str]:
    """The `engine-failed` error located at the first line of `text` (the house file's) that
    holds `step`: its match, the message in group 1."""
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if step in ln)
    found = re.search(rf"{re.escape(str(house))}:{line}:\d+: error\[engine-failed\]: (.*)", err)
    assert found is not None, err
    return found


def _refused_case(name: str, step: str, tmp_path: Path, capsys: Any,
                  monkeypatch: pytest.MonkeyPatch, fold: bool = True) -> re.Match[str]:
    """tests/cases/backstop/NAME.yaml, validated as a house file (folded in unless not
    `fold`) with one game of each rule set: refused, with the `engine-failed` error at the
    first line of it holding `step` (the match: the message in group 1)."""
    text = (ROOT / "tests" / "cases" / "backstop" / f"{name}.yaml").read_text(encoding="utf-8")
    house = tmp_path / f"{name}.yaml"
    house.write_text(text, encoding="utf-8")
    code, _out, err = run_cli(["validate", "--house", str(house),
                               *(["--variant", name] if fold else []), "--play", "1"],
                              capsys, monkeypatch)
    assert code == 1, err
    return _error_at_house_step(house, text, step, err)


def test_a_rule_that_breaks_play_is_an_error_at_its_action(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    house = _house(tmp_path)
    out = tmp_path / "out"
    code, _out, err = run_cli(["build", "--house", str(house), "--variant",
                               "markers-from-nowhere", "--out", str(out), "--play", "2"],
                              capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, BREAKS, "- $add: true", err)
    # found after the move, or at a save whose legal moves include the breaking one
    assert ("an invariant fails after the move" in found[1]
            or "a save of a state the game reached does not load" in found[1]), found[1]
    assert "Rubble Set markers" in found[1] and "'kind': 'muster'" in found[1]
    assert "reproduce: new_game(" in found[1]
    assert len(re.findall(r"error\[engine-failed\]", err)) == 1  # one error for one rule
    assert not out.exists()  # nothing written


def test_a_range_past_what_a_step_may_go_through_stops_at_its_step(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _refused_case("growing-range", "len(range(wigs))", tmp_path, capsys, monkeypatch)
    assert "more than the 1,000,000 a step may go through" in found[1], found[1]


def test_a_game_whose_round_never_ends_is_an_error_at_the_turn_order(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    found = _refused_case("turn-never-back", "next:", tmp_path, capsys, monkeypatch,
                          fold=False)
    assert "fired, and the round the game ends with never ended" in found[1], found[1]


def test_without_games_the_same_rule_builds(tmp_path: Path, capsys: Any,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """What catches it is the play (the static checks prove no conservation): `--play 0`."""
    code, _out, err = run_cli(["validate", "--house", str(_house(tmp_path)), "--variant",
                               "markers-from-nowhere", "--play", "0"], capsys, monkeypatch)
    assert code == 0, err


def test_a_step_that_loops_for_long_is_stopped_at_its_rule(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeat whose least bound fits the limit of work and that runs tens of millions of
    times in play: the game's time limit (core/limits.py, here 1 s) stops it, and the error is
    at the step inside the repeat."""
    text = (ROOT / "tests" / "cases" / "backstop" / "long-loop.yaml").read_text(encoding="utf-8")
    house = tmp_path / "long-loop.yaml"
    house.write_text(text, encoding="utf-8")
    monkeypatch.setattr(backstop, "PLAY_SECONDS", 1)
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant", "long-loop",
                               "--play", "1"], capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, text, "- gain: {wigs: 1}", err)
    assert "did not finish in 1 s of CPU time" in found[1], err


def test_a_greedy_game_that_does_not_end_is_an_error_at_the_act_it_loops_on(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A house act greedy always prefers (a Wig) that brings the end no nearer: its greedy
    game never ends. It is stopped at the greedy games' own bound (lower than a random
    game's: each greedy move tries every legal move), at the act the last moves made."""
    text = (ROOT / "tests" / "cases" / "backstop" / "endless-act.yaml").read_text(
        encoding="utf-8")
    house = tmp_path / "endless-act.yaml"
    house.write_text(text, encoding="utf-8")
    assert backstop.GREEDY_MOVE_LIMIT < backstop.MOVE_LIMIT
    monkeypatch.setattr(backstop, "GREEDY_MOVE_LIMIT", 150)  # the base game's take 94-123
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant", "endless-act",
                               "--play", "2"], capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, text, "- $add: true", err)
    assert "a greedy game" in found[1] and "did not end in 150 moves" in found[1], err
    assert "'kind': 'house-act'" in found[1]


def test_a_game_no_trigger_ends_is_an_error_at_the_triggers_the_house_rule_changed(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A house rule that replaces the ends of the game by one that can hold (a player with
    every Decree: within the declared range, so the static check lets it be) but that no game
    comes to: once the cards run out the players pass for ever. The error is not unlocated: it
    stands where the house rule changes the triggers that end the game (its first change, the
    removal of a trigger the rules had), and says that none of them fired."""
    text = (ROOT / "tests" / "cases" / "backstop" / "no-end.yaml").read_text(encoding="utf-8")
    house = tmp_path / "no-end.yaml"
    house.write_text(text, encoding="utf-8")
    monkeypatch.setattr(backstop, "MOVE_LIMIT", 600)  # a random game of the rules: about 100
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant", "no-end",
                               "--play", "1"], capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, text, "- {id: game-end.rubble, $remove: true}", err)
    assert ("did not end in 600 moves: no trigger that ends the game fired "
            "(game-end.decrees)") in found[1], err
    assert "lisboa-rules: error[engine-failed]" not in err  # none unlocated
    assert len(re.findall(r"error\[engine-failed\]", err)) == 1  # one error for one rule


def test_a_period_no_trigger_ends_is_an_error_at_the_period_trigger_the_house_rule_changed(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A house rule whose first period ends at the display only at the lowest Treasury: the
    games stay in period 1, where the triggers that end the game (of period 2) cannot fire.
    The error stood at rules/flow.yaml's first trigger that ends the game, with no word of the
    house rule, and said that none of those fired; it stands at the house rule's change of the
    period's trigger and says the game stayed in period 1."""
    text = (ROOT / "tests" / "cases" / "backstop" / "period-stays.yaml").read_text(
        encoding="utf-8")
    house = tmp_path / "period-stays.yaml"
    house.write_text(text, encoding="utf-8")
    monkeypatch.setattr(backstop, "MOVE_LIMIT", 600)
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant", "period-stays",
                               "--play", "1"], capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, text, "condition:", err)
    assert ("did not end in 600 moves: it stayed in period 1: no trigger that ends it fired "
            "(period-end.rubble, period-end.display), and game-end.rubble, game-end.display "
            "end the game only in a later period") in found[1], err
    assert len(re.findall(r"error\[engine-failed\]", err)) == 1, err


def test_a_setup_whose_state_breaks_an_invariant_is_an_error_at_the_house_step(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "tests" / "cases" / "backstop" / "new-player-short.yaml").read_text(
        encoding="utf-8")
    house = tmp_path / "new-player-short.yaml"
    house.write_text(text, encoding="utf-8")
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant",
                               "new-player-short", "--play", "1"], capsys, monkeypatch)
    assert code == 1, err
    found = _error_at_house_step(house, text, "- $add: true", err)
    assert "an invariant fails after the setup" in found[1] and "0 moves played" in found[1]


def test_a_state_its_own_saves_refuse_is_an_error_at_the_house_step(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn-end step marks the end of the game without a final round (a saved-game check of
    rules/state.yaml): the backstop loads a save every few moves, finds the first move whose
    state breaks the check, and names the variant's step that move ran (traced)."""
    found = _refused_case("save-refused", "- $add: true", tmp_path, capsys, monkeypatch)
    assert "does not load" in found[1] and "final_round" in found[1], found[1]


def test_the_base_rules_play_their_games(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _out, err = run_cli(["validate", "--play", "2"], capsys, monkeypatch)
    assert code == 0 and "engine-failed" not in err, err


def test_a_fault_in_a_step_names_the_step(tmp_path: Path) -> None:
    """An engine whose discard step fails as `first([])` did: the error is at that step."""
    text = ENGINE_PATH.read_text(encoding="utf-8")
    play = text.index("def _play_discard(")
    at = re.compile(r"\n(\s+)# (rules/court\.yaml:(\d+)) move\n").search(text, play)
    assert at is not None
    broken = text[:at.end()] + f"{at[1]}next(iter([]))\n" + text[at.end():]
    found = backstop.play_check(broken, 2)
    assert found and found[0].code == "engine-failed"
    span = found[0].span
    assert span is not None and (span.file, span.line) == ("rules/court.yaml", int(at[3]))
    assert "StopIteration" in found[0].message


def test_a_state_the_engine_refuses_to_play_is_an_error_at_the_move_that_made_it() -> None:
    """An engine whose Visit leaves a phase that is none of the phases (fuzz seed 10 case 114:
    a `set` of a misspelt phase, refused at build since): the engine refuses the state it
    made (a StateError that names no step), and the error is at the action of the move that
    made it, not without a position."""
    text = ENGINE_PATH.read_text(encoding="utf-8")
    assert text.count('g.phase = "follow"') >= 2
    found = backstop.play_check(text.replace('g.phase = "follow"', 'g.phase = "FOLLOW"'), 2)
    assert found and found[0].code == "engine-failed"
    span = found[0].span
    assert span is not None and span.file == "rules/court.yaml", found[0]
    assert "- id: visit" in (ROOT / "rules" / "court.yaml").read_text(
        encoding="utf-8").splitlines()[span.line - 1]
    assert "'FOLLOW' is not one of" in found[0].message


def test_the_games_cover_every_rule_set() -> None:
    """Each chosen set of variants at each player count its rule sets allow, once."""
    E = backstop._load(ENGINE_PATH.read_text(encoding="utf-8"))
    tables = list(backstop._tables(E))
    keys = {tuple(E.variants_for(n, v)) for v, n in tables}
    assert keys == set(E.RULESETS)
    assert len(tables) == len(set(tables))


def test_no_games_is_no_check() -> None:
    assert backstop.play_check("raise SystemExit('never run')", 0) == []


def test_a_setup_that_fails_is_an_error_at_the_setup(tmp_path: Path) -> None:
    """An engine whose setup raises before any step (fuzz seed 1 case 122: a setup that
    leaves a full map empty failed inside new_game, an error with no position): the error
    is at the setup's steps in rules/flow.yaml."""
    text = ENGINE_PATH.read_text(encoding="utf-8")
    # every rule set's setup (the two-player one is its own function)
    broken = re.sub(r"(\ndef _run_setup(?:_\d+)?\(.*\n)", r"\1    [][0]\n", text)
    assert broken.count("    [][0]\n") >= 2
    found = backstop.play_check(broken, 2)
    assert found and found[0].code == "engine-failed"
    span = found[0].span
    assert span is not None and span.file == "rules/flow.yaml", found[0]
    assert "IndexError" in found[0].message and "0 moves played" in found[0].message


def _broken_engine(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The engine built with the house rule that breaks play, and the files' display names."""
    house = _house(tmp_path)
    built = pipeline.check_rules(ROOT / "rules", ("markers-from-nowhere",), extra=(house,),
                                 engine=True)
    assert built.compiled is not None
    return built.files["lisboa_engine.py"], {
        stable: shown for shown, stable in built.compiled.names.items()}


def test_games_shared_with_a_worker_find_what_they_find_one_after_the_other(
        tmp_path: Path) -> None:
    """The games played by two processes (a forked worker claiming them from the same queue)
    give the diagnostics of the same games played one after the other in one process."""
    text, names = _broken_engine(tmp_path)
    with backstop.Games(text, 2, worker=False) as alone:
        alone.start()
        assert alone.pid is None
        expected = alone.finish(names)
    assert expected and expected[0].code == "engine-failed"
    span = expected[0].span
    assert span is not None and span.file == str(tmp_path / "markers-from-nowhere.yaml")
    with backstop.Games(text, 2) as shared:
        shared.start()
        forked = shared.pid is not None
        assert forked == backstop.can_fork()
        found = shared.finish(names)
    assert found == expected
    if forked:
        assert shared.from_worker > 0, "the worker played games"
        assert shared.pid is None, "and was waited for"


def test_games_a_dead_worker_did_not_report_are_played_by_the_build(tmp_path: Path) -> None:
    text, names = _broken_engine(tmp_path)
    expected = backstop.play_check(text, 2, names)
    with backstop.Games(text, 2) as shared:
        shared.start()
        if shared.pid is not None:
            os.kill(shared.pid, signal.SIGKILL)
        found = shared.finish(names)
    assert found == expected
    assert shared.from_worker == 0


def test_a_build_begins_its_games_before_the_reference_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """The games start as soon as the engine's text exists (a worker plays them on the second
    core meanwhile), and are joined before anything is written: a game that fails writes
    nothing, under `--watch` too."""
    events: list[str] = []
    real_start, real_render = backstop.Games.start, render.render

    def start(self: backstop.Games) -> None:
        events.append("games")
        real_start(self)

    def rendered(*args: Any, **kwargs: Any) -> Any:
        events.append("reference")
        return real_render(*args, **kwargs)

    monkeypatch.setattr(backstop.Games, "start", start)
    monkeypatch.setattr(render, "render", rendered)
    monkeypatch.chdir(tmp_path)
    house = _house(tmp_path)
    out = tmp_path / "out"
    code = main(["build", "--watch", "--max-builds", "1", "--rules", str(ROOT / "rules"),
                 "--house", str(house), "--variant", "markers-from-nowhere", "--out", str(out),
                 "--play", "1"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert events[:2] == ["games", "reference"], (events, err)
    assert len(re.findall(r"error\[engine-failed\]", err)) == 1, err
    assert not out.exists()


def test_a_game_that_lacks_what_a_house_rule_removed_notes_the_removal(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    house = ROOT / "tests" / "cases" / "backstop" / "no-display-discard.yaml"
    code, _out, err = run_cli(["validate", "--house", str(house), "--variant",
                               "no-display-discard", "--play", "2"], capsys, monkeypatch)
    assert code == 1, err
    assert "error[engine-failed]" in err and "not conserved" in err, err
    line = next(i for i, ln in enumerate(house.read_text(encoding="utf-8").splitlines(), 1)
                if "$remove" in ln)
    assert re.search(rf"no-display-discard\.yaml:{line}:\d+: note: a variant of this game "
                     "removes a rule here", err), err


def test_a_move_an_agent_chose_on_its_view_that_the_game_refuses_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent chooses on a game dealt from its player's view: a move the game then refuses
    says that the action's moves depend on what the player does not see (the static check
    `hidden-read` refuses the ways known to do it; this is the backstop behind it)."""
    E = backstop._load(ENGINE_PATH.read_text(encoding="utf-8"))

    def agent(name: str, engine: Any, seed: int) -> Any:
        def step(g: Any) -> Any:
            move = engine.legal_moves(g)[0]
            return engine.Move.from_json({**move.to_json(), "player": 1 - move.player})
        return step

    monkeypatch.setattr(backstop, "make_agent", agent)
    found = backstop._play(E, (), 2, 0)
    assert found is not None and found.code == "engine-failed", found
    assert "the random agent chose" in found.message, found.message
    assert "depend on what the player does not see" in found.message, found.message
    assert found.span is not None  # at the move's action
