"""The gaps met while writing house rules in the language (issue 33), each now data: a small
house rule written here is built by the CLI with rules/ (`--house FILE`, folded in) and its
engine played; a wrong one is refused at its line. The examples of examples/house-rules/ that
show each are built by tests/model/test_house_rule_examples.py.
"""

from __future__ import annotations

import random
import re
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import (
    HouseBuild,
    build_house,
    build_store_visit,
    card_of,
    drop_favors,
    finish_turn,
    give_favor,
    period_two,
    place_officials,
    set_hand,
    sound,
    treasury_index,
)

from lisboa_rules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

_BUILDS: dict[tuple[str, bool], HouseBuild] = {}
_HEAD = """\
kind: variant
id: {name}
title: {name}
applies: chosen
text: A house rule of the tests.
source: [seed:000#end-of-the-period]
changes:
"""


def _write(folder: Path, name: str, changes: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(_HEAD.format(name=name) + textwrap.indent(textwrap.dedent(changes), "  "),
                    encoding="utf-8")
    return path


def _engine(tmp_path_factory: pytest.TempPathFactory, name: str, changes: str) -> ModuleType:
    folder = tmp_path_factory.mktemp(f"gap-{name}")
    _write(folder, name, changes)
    return build_house(tmp_path_factory, folder, name, True, "gap", _BUILDS).engine


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
             changes: str) -> str:
    """The diagnostics of `validate --house` for a house rule the compiler must refuse."""
    path = _write(tmp_path, name, changes)
    capsys.readouterr()
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(path),
                 "--variant", name])
    err = capsys.readouterr().err
    assert code == 1, err
    return err


# --- 1. a trigger for any period (or a list of periods) ------------------------------------

ANY_PERIOD = """\
flow:
  triggers:
    - $add: true
      id: house.rich
      periods: any
      scope: any-player
      condition: reis >= target
      params: {target: 60}
      ranges: {target: [1, null]}
      do:
        - {gain: {wigs: 5}, text: The rich player scores 5 wigs.}
      text: At any time, the first player to hold {params.target|money} scores 5 wigs.
      source: [seed:000#end-of-the-period]
"""


def test_a_trigger_for_any_period_fires_in_the_second(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    E = _engine(tmp_path_factory, "any-period", ANY_PERIOD)
    g = period_two(E, E.new_game(3, seed=1))
    assert "house.rich" not in g.fired
    seat = g.current
    g.players[seat].reis = 70
    wigs = g.players[seat].wigs
    g = finish_turn(E, E.apply_move(g, E.legal_moves(g)[0]))
    sound(E, g)
    assert "house.rich" in g.fired
    assert g.players[seat].wigs >= wigs + 5
    # it fires once a game: the next turn scores nothing more
    wigs = g.players[seat].wigs
    g = finish_turn(E, E.apply_move(g, E.legal_moves(g)[0]))
    assert g.fired.count("house.rich") == 1 and g.players[seat].wigs <= wigs + 4


def test_a_trigger_for_a_list_of_periods(tmp_path_factory: pytest.TempPathFactory) -> None:
    E = _engine(tmp_path_factory, "listed-periods",
                ANY_PERIOD.replace("periods: any", "periods: [2]"))
    g = E.new_game(3, seed=1)
    g.players[g.current].reis = 70
    g = finish_turn(E, E.apply_move(g, E.legal_moves(g)[0]))
    assert "house.rich" not in g.fired  # not in the first period
    g = period_two(E, E.new_game(3, seed=1))
    g.players[g.current].reis = 70
    g = finish_turn(E, E.apply_move(g, E.legal_moves(g)[0]))
    assert "house.rich" in g.fired


def test_a_period_end_in_the_last_period_is_refused_at_periods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    bad = ANY_PERIOD.replace("periods: any", "periods: [1, 2]").replace(
        "scope: any-player", "ends: period\n      scope: any-player")
    err = _refused(tmp_path, capsys, "late-period-end", bad)
    assert "late-period-end.yaml:12:" in err and "value-out-of-range" in err, err


def test_period_and_periods_together_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "both-periods",
                   ANY_PERIOD.replace("periods: any", "periods: any\n      period: 1"))
    assert "both-periods.yaml:" in err and "error[schema" in err, err


# --- 2. procedure parameters with defaults --------------------------------------------------

PURSE = """\
effects:
  procedures:
    - $add: true
      id: house-purse
      params: {amount: {type: int, default: 3}}
      steps:
        - {gain: {reis: amount}, text: Take the purse.}
  hooks:
    - $add: true
      id: house-purse-on-store
      on: store-built
      params: {business: business}
      steps:
        - {do: house-purse, text: Take the purse (3 réis).}
        - {do: house-purse, with: {amount: 1}, text: And 1 real more.}
"""


def test_a_call_may_leave_a_defaulted_parameter_out(
    tmp_path_factory: pytest.TempPathFactory, engine: ModuleType,
) -> None:
    E = _engine(tmp_path_factory, "purse", PURSE)
    after = {}
    for M in (engine, E):
        g = M.new_game(3, seed=2)
        seat = g.current
        g = M.apply_move(g, build_store_visit(M, g, seat))
        after[M] = g.players[seat].reis
    assert after[E] == after[engine] + 3 + 1


def test_a_default_of_the_wrong_type_is_refused_where_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "bad-default",
                   PURSE.replace("default: 3", 'default: "reis > 0"'))
    assert "bad-default.yaml:12:" in err and "error[expr-type]" in err, err
    assert "default of parameter 'amount'" in err, err


def test_a_parameter_without_default_is_still_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "no-default",
                   PURSE.replace("{amount: {type: int, default: 3}}", "{amount: int}"))
    assert "needs 'amount'" in err, err


# --- 3. a step without an id, named by its place -------------------------------------------

CHEAP_FOLLOW = """\
court:
  actions:
    - id: follow
      lacking_cost: {$remove: true}
      text: Followers pay 1 real instead of the visit's Influence.
      steps:
        - id: follow-visit
          then:
            - {id: follow-visit.then.5, $remove: true}
            - $add: true
              $after: follow-visit.then.4
              id: follow-visit.pay
              do: pay-reis
              with: {amount: 1}
              text: Pay 1 real for the follow.
"""


def _followed(E: ModuleType) -> Any:
    """Seat 0 visits Manuel; seat 1, who holds his Royal Favor and 5 Influence, follows (the
    visit costs 2 Influence)."""
    g = E.new_game(3, seed=0)
    for seat in range(3):
        drop_favors(g, seat)
    give_favor(g, 1, "manuel")
    g.treasury = treasury_index(g, modifier=0)
    place_officials(g, 2, "manuel", 2)  # the visit costs 2 Influence
    for p in g.players:
        p.reis = 30
    g.current = g.actor = 0
    card = card_of(E, g, "manuel")
    set_hand(g, 0, [card])
    g = E.apply_move(g, E.Move("visit", 0, card=card, business=g.rs.businesses[0]))
    g.players[1].influence = 5
    return E.apply_move(g, E.Move("follow", 1, state_action="plan"))


def test_a_step_without_an_id_is_changed_by_its_place(
    tmp_path_factory: pytest.TempPathFactory, engine: ModuleType,
) -> None:
    E = _engine(tmp_path_factory, "cheap-follow", CHEAP_FOLLOW)
    base, house = _followed(engine), _followed(E)
    assert base.players[1].influence < 5  # the base follower pays Influence
    assert house.players[1].influence == 5
    assert house.players[1].reis == base.players[1].reis - 1
    sound(E, house)


def test_a_step_written_without_its_name_is_told_the_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "unnamed-step", """\
court:
  actions:
    - id: follow
      steps:
        - id: follow-visit
          then:
            - {do: pay-visit, text: Pay for the follow.}
""")
    assert "unnamed-step.yaml:14:" in err and "overlay-unknown-item" in err, err
    assert "`id: follow-visit.then.5` for `do: pay-visit`" in err, err
    assert "id: follow-visit.then.5" in err.rsplit("did you mean", 1)[-1], err


def test_a_place_past_the_end_is_refused(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(tmp_path, capsys, "far-step",
                   CHEAP_FOLLOW.replace("then.5, $remove", "then.50, $remove"))
    assert "far-step.yaml:16:" in err and "follow-visit.then.5`" in err, err


# --- 4. a card type without a display pile ---------------------------------------------------


def _hand_noble() -> str:
    """examples/house-rules/fourth-noble.yaml's Patriarch, his cards all in the purple deck
    (which refills hands, never the display) and no display pile of his."""
    doc = (ROOT / "examples" / "house-rules" / "fourth-noble.yaml").read_text(encoding="utf-8")
    changes = doc.split("changes:\n", 1)[1]
    changes = changes.replace(
        "    display:\n      piles: [treasury, manuel, marquis, king, patriarch]\n", "")
    changes = re.sub(r"deck: (red|brown)", "deck: purple", changes)
    return textwrap.dedent(changes)


def _play(E: ModuleType, seed: int, players: int = 3, limit: int = 3000) -> Any:
    rng = random.Random(seed)
    g = E.new_game(players, seed=seed)
    for _ in range(limit):
        if g.phase == "over":
            break
        g = E.apply_move(g, rng.choice(E.legal_moves(g)))
    return sound(E, g)


def test_a_noble_without_a_display_pile_plays(tmp_path_factory: pytest.TempPathFactory) -> None:
    E = _engine(tmp_path_factory, "hand-noble", _hand_noble())
    g = E.new_game(3, seed=4)
    assert sorted(g.piles) == sorted(["treasury", "manuel", "marquis", "king"])
    assert card_of(E, g, "patriarch") == 83  # his cards are in the game
    # the display's triggers count the four piles there are: three empty end the period
    for pile in ["treasury", "manuel", "marquis"]:
        g.discard.extend(g.piles[pile])
        g.piles[pile] = []
    g.phase = "refill"
    g.players[g.current].hand = g.players[g.current].hand[:4]
    g = E.apply_move(g, E.Move("draw", g.current, pile="king"))
    assert "period-end.display" in g.fired
    for seed in range(3):
        assert _play(E, seed).phase == "over"


def test_a_card_dealt_to_the_display_needs_its_pile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "no-pile",
                   _hand_noble().replace("number: 83, deck: purple", "number: 83, deck: red"))
    assert "no-pile.yaml:" in err and "error[unknown-reference]: card 83 of type 'patriarch'" \
        in err, err
    assert err.count("error[") == 1, err


# --- 5. a variant's callouts amended by another ----------------------------------------------

COLUMNS_NOTE = "only the most and 3rd-most columns are used"


def _section(md: str, anchor: str) -> str:
    """The reference's text from a rule's anchor to the next rule's."""
    start = md.index(f'<a id="{anchor}"></a>')
    end = md.find('<a id="', start + 10)
    return md[start:end]


def _callout_rule(tmp: pytest.TempPathFactory, folder: Path, name: str,
                  callout: str) -> HouseBuild:
    """A house rule with this callout (and a change of its own), built folded."""
    (folder / f"{name}.yaml").write_text(_HEAD.format(name=name).replace(
        "changes:\n", f"callouts:\n{textwrap.indent(callout, '  ')}changes:\n") + """\
  game:
    start:
      reis: 11
""", encoding="utf-8")
    return build_house(tmp, folder, name, True, "gap", _BUILDS)


def test_a_variant_drops_or_rewords_another_variants_callout(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("callouts")
    dropped = _callout_rule(tmp_path_factory, folder, "drop-note", (
        "- {of: two-player, id: two-player.stores-columns, $remove: true}\n"))
    stores = _section(dropped.md, "score.stores")
    assert COLUMNS_NOTE not in stores, stores
    assert COLUMNS_NOTE in _section(dropped.md, "score.officials")  # the other note stays
    reworded = _callout_rule(tmp_path_factory, folder, "new-note", (
        "- of: two-player\n  id: two-player.stores-columns\n"
        "  text: With 2 players, the stores score the most column only.\n"
        "  source: [seed:000#store-majorities]\n"))
    stores = _section(reworded.md, "score.stores")
    assert "the stores score the most column only" in stores and COLUMNS_NOTE not in stores


def test_a_callout_of_another_variant_is_named_by_its_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "bad-note.yaml"
    path.write_text(_HEAD.format(name="bad-note").replace("changes:\n", (
        "callouts:\n  - {of: two-player, id: two-player.store-columns, $remove: true}\n"
        "  - {of: two-players, id: two-player.stores-columns, $remove: true}\nchanges:\n"))
        + "  game:\n    start:\n      reis: 11\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["validate", "--rules", str(ROOT / "rules"), "--house", str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad-note.yaml:8:" in err and "no callout with id 'two-player.store-columns'" in err
    assert "two-player.stores-columns" in err.splitlines()[0], err
    assert "bad-note.yaml:9:" in err and "'two-players', which is no other variant" in err, err


# --- 6. turn order as data --------------------------------------------------------------------

COUNTER = """\
flow:
  turn_order:
    next: (seat - 1) % len(game.players)
    first: {$add: "len(game.players) - 1"}
"""


def _turn(E: ModuleType, g: Any) -> Any:
    """The current player's turn played (a legal move, then the follows and the refill)."""
    seat = g.current
    g = E.apply_move(g, E.legal_moves(g)[0])
    while g.current == seat and g.phase != "over":
        g = finish_turn(E, g)
    return g


def test_counter_clockwise_play_from_a_start_player_of_the_rules(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    E = _engine(tmp_path_factory, "counter-clockwise", COUNTER)
    g = E.new_game(4, seed=3)
    assert g.start_player == g.current == g.actor == 3
    seats, rounds = [g.current], [g.round]
    for _ in range(5):
        g = _turn(E, g)
        seats.append(g.current)
        rounds.append(g.round)
    assert seats == [3, 2, 1, 0, 3, 2]
    assert rounds == [1, 1, 1, 1, 2, 2]  # a round ends when the turn is back at the start
    sound(E, g)
    for seed in range(2):
        assert _play(E, seed, players=3).phase == "over"


def test_a_turn_order_of_the_wrong_type_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(tmp_path, capsys, "bad-order",
                   COUNTER.replace("(seat - 1) % len(game.players)", "seat > 0"))
    assert "bad-order.yaml:10:" in err and "error[expr-type]" in err, err


def _errors_at(err: str, name: str, line: int, code: str) -> list[str]:
    """The messages of the errors of `code` located at `line` of the house file `name`."""
    at = re.compile(rf"^(?:.*/)?{re.escape(name)}\.yaml:{line}:\d+: error\[{code}\]: (.*)$")
    return [m[1] for ln in err.splitlines() if (m := at.match(ln))]


def test_a_turn_order_that_skips_seats_is_refused_at_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Two seats on (tests/cases/invalid/turn-order): with 2 players seat 1 never plays, with
    4 players seats 1 and 3 never do; with 3 it goes round (0, 2, 1), so nothing is said."""
    err = _refused(tmp_path, capsys, "leapfrog", """\
        flow:
          turn_order:
            next: (seat + 2) % len(game.players)
        """)
    found = _errors_at(err, "leapfrog", 10, "turn-order-skips")
    assert len(found) == 2, err
    two, four = sorted(found)
    assert two.startswith("with 2 players, starting at seat 0, the turn goes 0 -> 0: seat 1 "
                          "never plays; `next` must take the turn through every seat"), two
    assert four.startswith("with 4 players, starting at seat 0, the turn goes 0 -> 2 -> 0: "
                           "seats 1 and 3 never play;"), four
    assert "with 3 players" not in err


def test_a_turn_order_that_never_comes_back_is_refused_from_the_first_player(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The last seat plays for ever: the turn never comes back to the first player (`first`,
    a constant), so no round would end; said for each player count."""
    err = _refused(tmp_path, capsys, "stuck", """\
        flow:
          turn_order:
            next: min(seat + 1, len(game.players) - 1)
            first: {$add: "1"}
        """)
    found = sorted(_errors_at(err, "stuck", 10, "turn-order-skips"))
    assert [m.split(",")[0] for m in found] == ["with 2 players", "with 3 players",
                                                "with 4 players"], err
    assert found[2].startswith(
        "with 4 players, starting at seat 1 (the first player), the turn goes 1 -> 2 -> 3 -> 3: "
        "seat 0 never plays and the turn never comes back to seat 1, the start player, so a "
        "round never ends;"), found[2]


@pytest.mark.parametrize("changes", [
    COUNTER,  # examples/house-rules/widdershins.yaml: every seat, the other way round
    "flow:\n  turn_order:\n    next: seat + 5\n",  # taken modulo the number of players: +1, +2, +1
    # it reads the state: left to the build's games, as before
    "flow:\n  turn_order:\n    next: (seat + 1 + game.round % 2) % len(game.players)\n",
])
def test_a_turn_order_through_every_seat_or_of_the_state_is_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: str,
) -> None:
    path = _write(tmp_path, "order", changes)
    capsys.readouterr()
    code = main(["validate", "--rules", str(ROOT / "rules"), "--house", str(path),
                 "--variant", "order", "--play", "0"])
    err = capsys.readouterr().err
    assert code == 0 and "turn-order-skips" not in err, err
